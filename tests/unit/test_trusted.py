"""Trusted answers through the engine's one entry (`Askbase.ask`): verified reuse keeps every rule the
pipeline keeps (guard, deny lists, masking, access), goes stale instead of answering wrongly, and
the answer cache stays inside its window, its size, its schema and its access rules.

No LLM is configured: keyword mode writes the first answers, so each test is about what the
trusted path does with them. Everything runs on the real demo database and a real state database.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3

import pytest

from bot.terminal import render
from core.access import Principal
from core.answer import Outcome
from core.askbase import Askbase
from core.conversation import Turn
from core.demo import CATALOG_PATH
from core.settings import AccessRule, DatabaseSettings, load_settings
from core.state import answer_cache as cache_store
from core.state import verified as verified_store
from core.state.audit import entries_since
from core.trusted import Trusted
from tests.clock import Clock

LYON = "SELECT COUNT(*) AS clients FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = 'Lyon'"
ALICE = Principal.of(user="U1", channel="C1")
BOB = Principal.of(user="U2", channel="C1")


@pytest.fixture
def make(demo_var, state_url):
    made: list[Askbase] = []

    def build(clock: Clock | None = None, **overrides) -> Askbase:
        overrides.setdefault("verified", {"schema_check_s": 0})
        settings = load_settings(var_dir=str(demo_var), state_url=state_url, **overrides)
        askbase = Askbase(settings)
        if clock is not None:
            askbase.__dict__["trusted"] = Trusted(settings, lambda: askbase.state, askbase.rerun, clock=clock)
        made.append(askbase)
        return askbase

    yield build
    for askbase in made:
        askbase.close()


def verify(askbase: Askbase, question: str, sql: str, db: str = "demo") -> int:
    return askbase.trusted.verify(askbase.database(db), question, sql, "U0ANALYST").query.id


def count(outcome: Outcome) -> int:
    assert outcome.status == "answer", outcome.error
    return int(outcome.rows[0][0])


def by_hand(path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


# ---------------------------------------------------------------- verified reuse


def test_reuse_runs_the_verified_sql_with_the_new_value(make, demo_var):
    askbase = make(cache={"window_s": 0})
    n = verify(askbase, "How many clients are in Lyon?", LYON)
    out = askbase.ask("How many customers are located in Toulouse?", principal=ALICE)
    assert out.reuse is not None and out.reuse.verified_id == n and out.reuse.verified_by == "U0ANALYST"
    assert "'Toulouse'" in out.sql
    assert out.rows == by_hand(demo_var / "demo.sqlite", LYON.replace("Lyon", "Toulouse"))
    assert [s.name for s in out.trace.stages] == ["verified", "guard", "execute"]  # access → guard → execute
    (row,) = [e for e in entries_since(askbase.state, dt.timedelta(hours=1)) if e["trace_id"] == out.trace.id]
    assert row["reused_from"] == f"verified #{n}" and row["user"] == "U1"
    assert f"✅ verified query #{n} (verified by U0ANALYST" in render(out)  # the CLI and console say so too


def test_follow_ups_and_clarified_questions_never_take_a_shortcut(make):
    askbase = make()
    verify(askbase, "How many clients are in Lyon?", LYON)
    history = [
        Turn(
            question="How many datacenters are there?", sql="SELECT COUNT(*) FROM datacenter", columns=("n",)
        )
    ]
    out = askbase.ask("How many clients are in Lyon?", principal=ALICE, history=history)
    assert out.reuse is None


def test_reuse_keeps_masking(make):
    askbase = make(cache={"window_s": 0})
    # the demo database with client.email masked, under another name
    settings = askbase.settings.model_copy(
        update={
            "databases": {
                "masked": DatabaseSettings(
                    url=askbase.database("demo").config.url,
                    catalog=str(CATALOG_PATH),
                    mask_columns=["client.email"],
                )
            }
        }
    )
    masked = Askbase(settings)
    try:
        sql = "SELECT name, email FROM client WHERE segment = 'enterprise' ORDER BY name"
        verify(masked, "Which enterprise clients are there, with their email?", sql, db="masked")
        out = masked.ask("Which startup clients are there, with their email?", db="masked", principal=ALICE)
        assert out.reuse is not None and "'startup'" in out.sql
        emails = [row[1] for row in out.rows if row[1]]
        assert emails and all("***" in e for e in emails), emails[:3]
    finally:
        masked.close()


def test_a_new_deny_rule_makes_the_verified_query_stale_instead_of_answering(make, demo_var):
    askbase = make(cache={"window_s": 0})
    n = verify(askbase, "How many clients are in Lyon?", LYON)
    strict = make(
        cache={"window_s": 0},
        databases={
            "demo": DatabaseSettings(
                url=askbase.database("demo").config.url,
                catalog=str(CATALOG_PATH),
                deny_columns=["location.city"],
            )
        },
    )
    out = strict.ask("How many clients are in Paris?", principal=ALICE)
    assert out.reuse is None  # answered (or refused) as if it had never been verified
    q = verified_store.get(strict.state, n)
    assert q is not None and q.stale and "not allowed" in q.stale_reason
    assert [s.id for s in verified_store.untold_stale(strict.state)] == [n]  # its verifier is to be told


def test_verifying_the_same_question_again_fixes_a_stale_query(make, demo_var, tmp_path):
    copy = tmp_path / "copy.sqlite"
    shutil.copy(demo_var / "demo.sqlite", copy)
    askbase = make(
        cache={"window_s": 0},
        databases={"copy": DatabaseSettings(url=f"sqlite:///{copy}", catalog=str(CATALOG_PATH))},
    )
    n = verify(askbase, "How many clients are in Lyon?", LYON, db="copy")
    with sqlite3.connect(copy) as conn:
        conn.execute("ALTER TABLE location RENAME COLUMN city TO town")
    assert askbase.ask("How many clients are in Paris?", db="copy", principal=ALICE).reuse is None
    assert verified_store.get(askbase.state, n).stale
    probes = [
        e for e in entries_since(askbase.state, dt.timedelta(hours=1)) if e["source"] == "verified_check"
    ]
    assert probes and probes[-1]["status"] == "error"  # the check itself is in the audit log

    fixed = LYON.replace("l.city", "l.town")
    again = askbase.trusted.verify(
        askbase.database("copy"), "How many clients are in Lyon?", fixed, "U0ANALYST"
    )
    assert again.status == "replaced" and again.query.id == n and not again.query.stale
    # (the value index still knows the old column until it is rebuilt, so only the same city is
    # recognised; what matters is that the fixed query answers again)
    out = askbase.ask("How many clients are in Lyon?", db="copy", principal=ALICE)
    assert out.reuse is not None and out.reuse.verified_id == n and out.rows == by_hand(copy, fixed)


def test_verifying_an_answer_given_from_a_verified_query_changes_nothing(make):
    askbase = make(cache={"window_s": 0})
    n = verify(askbase, "How many clients are in Lyon?", LYON)
    reused = askbase.ask("How many clients are in Paris?", principal=ALICE)
    again = askbase.trusted.verify(askbase.database("demo"), reused.question, reused.sql, "U0OTHER")
    assert again.status == "already" and again.query.id == n
    assert len(verified_store.active(askbase.state)) == 1


def test_unverified_queries_are_not_reused(make):
    askbase = make(cache={"window_s": 0})
    n = verify(askbase, "How many clients are in Lyon?", LYON)
    askbase.trusted.unverify(n, "U0ANALYST")
    assert askbase.ask("How many clients are in Paris?", principal=ALICE).reuse is None
    assert verified_store.get(askbase.state, n).active is False  # kept, so audit rows still find it


# ---------------------------------------------------------------- the answer cache


def test_the_cache_answers_within_its_window_only(make):
    clock = Clock(dt.datetime(2025, 6, 2, 10, 42, tzinfo=dt.UTC))
    askbase = make(clock)
    first = askbase.ask("How many clients are there?", principal=ALICE)
    assert first.reuse is None
    clock.now += dt.timedelta(minutes=9)
    hit = askbase.ask("how many clients are there", principal=BOB)
    assert hit.reuse is not None and hit.reuse.cached_at == dt.datetime(2025, 6, 2, 10, 42, tzinfo=dt.UTC)
    assert (
        hit.rows == first.rows and hit.trace.id != first.trace.id and hit.reuse.cached_from == first.trace.id
    )
    clock.now += dt.timedelta(minutes=2)  # 11 minutes after the answer: past the default 10
    assert askbase.ask("How many clients are there?", principal=BOB).reuse is None
    assert askbase.ask("How many clients are there?", principal=BOB, refresh=True).reuse is None


def test_the_cache_is_keyed_by_access_rules_and_data_rules(make):
    askbase = make(
        access={
            "rules": [
                AccessRule(databases=["demo"], channels=["C1", "C2"]),
                AccessRule(databases=["demo"], usergroups=["finance"]),
            ]
        }
    )
    askbase.ask("How many clients are there?", principal=ALICE)
    same_rules = Principal.of(user="U9", channel="C2")
    assert askbase.ask("How many clients are there?", principal=same_rules).reuse is not None
    more_rules = Principal.of(user="U8", channel="C1", usergroups=["finance"])
    assert askbase.ask("How many clients are there?", principal=more_rules).reuse is None
    outsider = Principal.of(user="U7", channel="C9")
    refused = askbase.ask("How many clients are there?", principal=outsider)
    assert refused.status == "error" and refused.error_kind == "access" and not refused.rows
    assert (
        askbase.ask("How many clients are there?", principal=Principal.local()).reuse is None
    )  # the operator


def test_the_cache_is_bounded_and_off_where_configured(make):
    askbase = make(cache={"max_entries": 2})
    for q in ("How many clients are there?", "How many datacenters are there?", "How many hosts are there?"):
        askbase.ask(q, principal=ALICE)
    assert cache_store.count(askbase.state) == 2
    assert askbase.ask("How many hosts are there?", principal=BOB).reuse is not None
    assert askbase.ask("How many clients are there?", principal=BOB).reuse is None  # the oldest went

    small = make(cache={"max_rows": 5})
    small.ask("List the clients", principal=ALICE)
    assert small.ask("List the clients", principal=BOB).reuse is None

    off = make(cache={"off": ["demo"]})
    off.ask("How many datacenters are there?", principal=ALICE)
    assert off.ask("How many datacenters are there?", principal=BOB).reuse is None


def test_a_schema_change_is_a_cache_miss(make, demo_var, tmp_path):
    copy = tmp_path / "copy.sqlite"
    shutil.copy(demo_var / "demo.sqlite", copy)
    askbase = make(databases={"copy": DatabaseSettings(url=f"sqlite:///{copy}", catalog=str(CATALOG_PATH))})
    askbase.ask("How many clients are there?", db="copy", principal=ALICE)
    assert askbase.ask("How many clients are there?", db="copy", principal=BOB).reuse is not None
    with sqlite3.connect(copy) as conn:
        conn.execute("CREATE TABLE audit_note (id INTEGER PRIMARY KEY, note TEXT)")
    assert askbase.ask("How many clients are there?", db="copy", principal=BOB).reuse is None
