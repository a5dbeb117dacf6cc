"""Row-level security decides: the asker's identity reaches real PostgreSQL (core/identity.py).

Two people ask the same question of the same database through the same least-privileged account
and get different counts, because the database's own policies filter the rows: once keyed on the
`askbase.user` setting, once on the role each person is mapped to. Nothing outlives the query on
the pooled connection, a person no role is mapped to is refused, and stored SQL (CSV, schedules)
is filtered like a fresh question.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from core.access import Principal
from core.askbase import Askbase
from core.execute import Limits, execute
from core.settings import DatabaseSettings, load_settings
from tests.servers import admin_engine, server_url
from tests.slack_harness import RunningBot
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET

pytestmark = pytest.mark.postgres

ALICE, BOB, CAROL = "U0ALICE", "U0BOB", "U0CAROL"
US_TEAM = "S0USTEAM"


@dataclass
class Shop:
    url: str  # the login account's URL
    schema: str
    login: str
    eu: str
    us: str


@pytest.fixture
def shop() -> Iterator[Shop]:
    """A `deals` table with RLS: 3 deals owned by Alice in the EU, 5 by Bob in the US."""
    tag = uuid.uuid4().hex[:8]
    schema, login, eu, us = f"rls_{tag}", f"askbase_rls_{tag}", f"eu_reader_{tag}", f"us_reader_{tag}"
    password = secrets.token_hex(12)
    url = make_url(server_url("ASKBASE_TEST_POSTGRES_URL"))
    admin = admin_engine("ASKBASE_TEST_POSTGRES_URL")
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
        conn.execute(
            sa.text(
                f"CREATE TABLE {schema}.deals "
                "(id INTEGER PRIMARY KEY, owner TEXT, owner_email TEXT, region TEXT, amount INTEGER)"
            )
        )
        rows = (
            [(i, ALICE, "alice@example.com", "eu", 100 * i) for i in range(1, 4)]
            + [(i, BOB, "bob@example.com", "us", 10 * i) for i in range(4, 9)]
            + [(i, None, "dana@example.com", "apac", i) for i in range(9, 11)]  # known by email only
        )
        conn.execute(
            sa.text(f"INSERT INTO {schema}.deals VALUES (:i, :o, :e, :r, :a)"),
            [{"i": i, "o": o, "e": e, "r": r, "a": a} for i, o, e, r, a in rows],
        )
        conn.execute(
            sa.text(
                f"CREATE ROLE {login} LOGIN PASSWORD '{password}' NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS NOINHERIT"
            )
        )
        conn.execute(sa.text(f"CREATE ROLE {eu} NOLOGIN"))
        conn.execute(sa.text(f"CREATE ROLE {us} NOLOGIN"))
        # NOINHERIT: the login may SET ROLE to these, but their policies apply only once it has
        conn.execute(sa.text(f"GRANT {eu}, {us} TO {login}"))
        for role in (login, eu, us):
            conn.execute(sa.text(f"GRANT USAGE ON SCHEMA {schema} TO {role}"))
            conn.execute(sa.text(f"GRANT SELECT ON {schema}.deals TO {role}"))
        conn.execute(sa.text(f"ALTER TABLE {schema}.deals ENABLE ROW LEVEL SECURITY"))
        # the docs/security.md example: the asker's id in a setting, or the role they are mapped to
        conn.execute(
            sa.text(
                f"CREATE POLICY own_deals ON {schema}.deals FOR SELECT TO {login} "
                "USING (owner = current_setting('askbase.user', true))"
            )
        )
        conn.execute(
            sa.text(
                f"CREATE POLICY own_deals_by_email ON {schema}.deals FOR SELECT TO {login} "
                "USING (owner_email = current_setting('askbase.user_email', true))"
            )
        )
        conn.execute(
            sa.text(f"CREATE POLICY eu_deals ON {schema}.deals FOR SELECT TO {eu} USING (region = 'eu')")
        )
        conn.execute(
            sa.text(f"CREATE POLICY us_deals ON {schema}.deals FOR SELECT TO {us} USING (region = 'us')")
        )
    try:
        yield Shop(
            url.set(username=login, password=password).render_as_string(hide_password=False),
            schema,
            login,
            eu,
            us,
        )
    finally:
        with admin.begin() as conn:
            conn.execute(
                sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = :n"),
                {"n": login},
            )
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
            for role in (login, eu, us):
                conn.execute(sa.text(f"DROP OWNED BY {role}"))
                conn.execute(sa.text(f"DROP ROLE {role}"))
        admin.dispose()


def app(shop: Shop, tmp_path, **identity) -> Askbase:
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=f"sqlite:///{tmp_path / 'state.sqlite'}",
        default_db="deals",
        databases={"deals": DatabaseSettings(url=shop.url, schema=shop.schema, identity=identity)},
    )
    return Askbase(settings)


def count(askbase: Askbase, who: Principal) -> object:
    outcome = askbase.ask("How many deals are there?", principal=who, source="slack")
    if outcome.status != "answer":
        return outcome.error_kind
    return outcome.rows[0][0]


def test_two_people_get_their_own_counts_through_a_policy_on_askbase_user(shop, tmp_path):
    askbase = app(shop, tmp_path, variables=True)
    try:
        assert count(askbase, Principal.of(ALICE, "C0001")) == 3
        # the same question at once by someone the access rules treat alike: the answer cache
        # must not hand them Alice's answer
        assert count(askbase, Principal.of(BOB, "C0001")) == 5
        assert count(askbase, Principal.of(CAROL, "C0001")) == 0  # owns nothing
        assert count(askbase, Principal.of(ALICE, "C0001")) == 3
        # the setting was transaction-local: the same pooled connections, no identity, see nothing
        db = askbase.database("deals")
        assert execute(db, f"SELECT COUNT(*) FROM {shop.schema}.deals", Limits(timeout_s=5)).rows == [(0,)]
        # stored SQL (a CSV export, a scheduled run) is filtered for whoever it runs for
        rerun = askbase.rerun(
            f"SELECT COUNT(*) AS n FROM {shop.schema}.deals",
            database="deals",
            principal=Principal.of(BOB, "C0001"),
            purpose="csv",
        )
        assert rerun.status == "answer" and [tuple(r) for r in rerun.rows] == [(5,)]
    finally:
        askbase.close()


def test_people_mapped_to_database_roles_see_their_roles_rows_and_the_unmapped_are_refused(shop, tmp_path):
    askbase = app(shop, tmp_path, variables=False, roles={ALICE: shop.eu, US_TEAM: shop.us})
    try:
        assert count(askbase, Principal.of(ALICE, "C0001")) == 3
        assert count(askbase, Principal.of(BOB, "C0001", usergroups=[US_TEAM])) == 5  # through the group
        assert count(askbase, Principal.of(CAROL, "C0001")) == "access"  # no role, no default: refused
        refused = askbase.rerun(
            f"SELECT COUNT(*) FROM {shop.schema}.deals",
            database="deals",
            principal=Principal.of(CAROL, "C0001"),
            purpose="schedule_run",
        )
        assert refused.status == "error" and refused.error_kind == "access"
        db = askbase.database("deals")
        with db.engine.connect() as conn:  # the role did not stay on the pooled connection
            assert conn.execute(sa.text("SELECT current_user")).scalar() == shop.login
    finally:
        askbase.close()
    with_default = app(shop, tmp_path, variables=False, roles={ALICE: shop.eu}, default_role=shop.us)
    try:
        assert count(with_default, Principal.of(CAROL, "C0001")) == 5
    finally:
        with_default.close()


def test_identity_is_refused_for_databases_without_row_level_security_support(tmp_path):
    with pytest.raises(ValidationError, match="PostgreSQL"):
        DatabaseSettings(url=f"sqlite:///{tmp_path / 'x.sqlite'}", identity={"variables": True})


def test_in_slack_each_person_sees_their_own_deals_by_slack_id_or_email(shop, tmp_path, slack):
    """End to end: mentions from four people; the Slack side looks their emails up (users.info)."""
    slack.users.update(
        {
            ALICE: {"profile": {"email": "Alice@Example.com"}},
            BOB: {"profile": {"email": "bob@example.com"}},
            "U0DANA": {"profile": {"email": "dana@example.com"}},
        }
    )
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=f"sqlite:///{tmp_path / 'state.sqlite'}",
        default_db="deals",
        databases={"deals": DatabaseSettings(url=shop.url, schema=shop.schema, identity={"variables": True})},
        slack={"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_base_url": slack.base_url},
    )
    bot = RunningBot(Askbase(settings), slack)
    try:
        seen = {}
        for user in (ALICE, BOB, "U0DANA", CAROL):
            _, ts = bot.sender.mention("How many deals are there?", user=user)
            seen[user] = slack.wait_for(lambda s, ts=ts: s.answer_in("C0001", ts), timeout=30).result()
        assert seen == {ALICE: [["3"]], BOB: [["5"]], "U0DANA": [["2"]], CAROL: [["0"]]}
    finally:
        bot.close()
