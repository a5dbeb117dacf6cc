"""Trusted answers end to end in Slack: Verify, reuse with a ✅ and no LLM call, near misses,
staleness after a schema change, and the answer cache across access rules.

The real Bolt app runs behind its HTTP server; Slack is the fake Web API, the model the fake
OpenAI server (its request log proves when no LLM call was made), the data the demo database.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
import time
from typing import Any

import pytest

from core.bench.fakes.slack_api import FakeSlack, Message
from core.demo import CATALOG_PATH
from core.settings import AccessRule, DatabaseSettings
from core.state import verified as verified_store
from core.state.audit import entries_since
from core.state.conversations import load_trace
from tests.slack_harness import Plan, RunningBot, hand

CHANNEL = "C0001"
ASKER = "U0001"
ANALYST = "U0ANALYST"
COUNT_IN_CITY = "SELECT COUNT(*) AS clients FROM client JOIN location ON location.id = client.loc_id WHERE location.city = '%s'"
COUNT_IN = "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = '%s'"  # by hand


@pytest.fixture
def make_bot(make_bot):
    """The shared make_bot (tests/conftest.py), with ANALYST allowed to verify and no schema check delay."""

    def make(*, slack_api: FakeSlack | None = None, **overrides: Any) -> RunningBot:
        overrides.setdefault("verified", {"analysts": {"users": [ANALYST]}, "schema_check_s": 0})
        return make_bot(other_slack=slack_api, **overrides)

    return make


def ask(bot: RunningBot, question: str, *, user: str = ASKER, channel: str = CHANNEL) -> Message:
    """Mention the bot in a new thread; the answer, a new message in that thread."""
    _, ts = bot.sender.mention(question, user=user, channel=channel)
    return bot.slack.wait_for(lambda s: s.answer_in(channel, ts), timeout=20)


def city_plan(plan: Plan, city: str) -> None:
    plan.main_task = f"Count the clients in {city}"
    plan.objects = ["clients", "city"]
    plan.sql = COUNT_IN_CITY % city


def llm_calls(fake_llm) -> int:
    return len(fake_llm.requests)


def click(bot: RunningBot, action_id: str, value: str, message: Message, *, user: str) -> None:
    response = bot.sender.click(
        action_id,
        value,
        channel=message.channel,
        message_ts=message.ts,
        thread_ts=message.thread_ts,
        user=user,
    )
    assert response.status == 200


def verify(bot: RunningBot, answer: Message, *, user: str = ANALYST) -> Message:
    """Press ✅ Verify under `answer`; the note the bot posts in the thread."""
    trace_id = answer.button_value("verified_verify")
    assert trace_id, f"no Verify button under the answer: {answer.action_ids()}"
    click(bot, "verified_verify", trace_id, answer, user=user)
    return bot.slack.wait_for(
        lambda s: next(
            (
                m
                for m in s.thread(answer.channel, answer.thread_ts or answer.ts)
                if "verified this answer" in m.text
            ),
            None,
        )
    )


def verified_label(message: Message) -> bool:
    return f"✅ Verified by <@{ANALYST}>" in message.all_text()


def wait(predicate, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
    return value


# ---------------------------------------------------------------- verify, then reuse


def test_a_verified_answer_answers_the_same_question_and_another_city_with_no_llm_call(
    make_bot, slack, plan, fake_llm, demo_var
):
    bot = make_bot()
    city_plan(plan, "Lyon")
    first = ask(bot, "How many clients are in Lyon?")
    assert first.result() == hand(demo_var, COUNT_IN % "Lyon")  # one value: said in a sentence
    assert not verified_label(first)
    assert llm_calls(fake_llm) >= 1  # the SQL writer wrote that SQL

    note = verify(bot, first)
    assert "#1" in note.text and "city (Lyon)" in note.text  # the parameter it found, shown to everyone

    before = llm_calls(fake_llm)
    city_plan(plan, "Nowhere")  # were the model asked, its SQL would give another answer
    again = ask(bot, "How many clients are in Lyon?", user="U0002")
    paraphrase = ask(bot, "How many customers are based in Paris?", user="U0003")
    assert llm_calls(fake_llm) == before, [r.task for r in fake_llm.requests[before:]]

    assert again.result() == hand(demo_var, COUNT_IN % "Lyon")
    assert paraphrase.result() == hand(demo_var, COUNT_IN % "Paris")
    for message in (again, paraphrase):
        assert verified_label(message)
        assert "verified_verify" not in message.action_ids()  # nothing left to verify

    # Details shows how the question matched the verified one
    trace = load_trace(bot.state, paraphrase.button_value("show_details"))
    stage = next(s for s in trace["stages"] if s["name"] == "verified")
    assert "city: Lyon → Paris" in stage["outputs"]["match"] and trace["llm_calls"] == 0
    click(bot, "show_details", paraphrase.button_value("show_details"), paraphrase, user="U0003")
    modal = slack.wait_for(lambda s: s.calls_to("views.open"))[-1].args["view"]
    assert "Lyon → Paris" in str(modal)

    # the audit log says where each answer came from
    rows = {e["trace_id"]: e for e in entries_since(bot.state, dt.timedelta(hours=1))}
    reused = rows[paraphrase.button_value("show_details")]
    assert reused["reused_from"] == "verified #1" and reused["llm_calls"] == 0 and reused["rows"] == 1
    assert rows[first.button_value("show_details")]["reused_from"] is None


def test_only_analysts_may_verify(make_bot, slack, plan, fake_llm):
    bot = make_bot()
    city_plan(plan, "Lyon")
    answer = ask(bot, "How many clients are in Lyon?")
    click(bot, "verified_verify", answer.button_value("verified_verify"), answer, user=ASKER)
    note = slack.wait_for(lambda s: [c for c in s.calls_to("chat.postEphemeral") if c.args["user"] == ASKER])
    assert "Only analysts" in note[0].args["text"]
    assert verified_store.active(bot.state) == []


def test_no_verify_button_without_analysts(make_bot, plan):
    bot = make_bot(verified={"analysts": {"users": []}})
    city_plan(plan, "Lyon")
    assert "verified_verify" not in ask(bot, "How many clients are in Lyon?").action_ids()


def test_a_near_miss_is_not_reused_but_shown_to_the_sql_writer(make_bot, slack, plan, fake_llm, demo_var):
    bot = make_bot()
    city_plan(plan, "Lyon")
    verify(bot, ask(bot, "How many clients are in Lyon?"))

    before = llm_calls(fake_llm)
    plan.main_task = "Count the enterprise clients in Lyon"
    plan.sql = (
        "SELECT COUNT(*) AS clients FROM client JOIN location ON location.id = client.loc_id "
        "WHERE location.city = 'Lyon' AND client.segment = 'enterprise'"
    )
    near = ask(bot, "How many enterprise clients are in Lyon?", user="U0002")
    assert not verified_label(near)
    want = hand(
        demo_var,
        "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id "
        "WHERE l.city = 'Lyon' AND c.segment = 'enterprise'",
    )
    assert near.result() == want
    generated = [r for r in fake_llm.requests[before:] if r.task.startswith("generate")]
    assert generated, "the near miss was answered without writing SQL"
    assert "How many clients are in Lyon?" in generated[0].user + generated[0].system  # a pinned example


def test_unverify_from_the_list_stops_the_reuse(make_bot, slack, plan, fake_llm):
    bot = make_bot()
    city_plan(plan, "Lyon")
    verify(bot, ask(bot, "How many clients are in Lyon?"))

    listing = bot.sender.command("verified", user=ANALYST).json()
    assert listing["response_type"] == "ephemeral" and "How many clients are in Lyon?" in str(listing)
    assert "verified_unverify" in str(listing)
    assert "verified_unverify" not in str(bot.sender.command("verified", user=ASKER).json())  # not an analyst

    payload_message = Message(CHANNEL, "1700000000.000001")
    click(bot, "verified_unverify", "1", payload_message, user=ASKER)  # refused
    assert verified_store.active(bot.state)
    click(bot, "verified_unverify", "1", payload_message, user=ANALYST)
    wait(lambda: not verified_store.active(bot.state))

    before = llm_calls(fake_llm)
    city_plan(plan, "Paris")
    answer = ask(bot, "How many customers are based in Paris?", user="U0002")
    assert not verified_label(answer) and llm_calls(fake_llm) > before


def test_the_home_tab_lists_verified_queries_and_analysts_can_unverify_there(make_bot, slack, plan):
    bot = make_bot()
    city_plan(plan, "Lyon")
    verify(bot, ask(bot, "How many clients are in Lyon?"))

    for user in (ANALYST, ASKER):
        event = {
            "type": "app_home_opened",
            "user": user,
            "channel": "D0001",
            "tab": "home",
            "event_ts": "1.1",
        }
        assert bot.sender.event(event).status == 200
    home = wait(lambda: slack.home_views.get(ANALYST))
    assert "Verified queries" in str(home) and "How many clients are in Lyon?" in str(home)
    assert "verified_unverify" in str(home)
    viewer = wait(lambda: slack.home_views.get(ASKER))
    assert "How many clients are in Lyon?" in str(viewer) and "verified_unverify" not in str(viewer)

    payload = {
        "type": "block_actions",
        "user": {"id": ANALYST, "username": "analyst", "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "trigger_id": "trigger.home",
        "team": {"id": "T0001", "domain": "askbase-test"},
        "container": {"type": "view", "view_id": "V0HOME"},
        "view": {"id": "V0HOME", "type": "home", "blocks": []},
        "actions": [
            {
                "type": "button",
                "action_id": "verified_unverify",
                "block_id": "b",
                "value": "1",
                "action_ts": "1",
            }
        ],
    }
    assert bot.sender.interaction(payload).status == 200
    wait(lambda: "Unverified #1" in str(slack.home_views[ANALYST]))
    assert verified_store.active(bot.state) == []


@pytest.fixture
def refusing_slack(request):
    """A fake Slack that refuses some block types (a workspace without them); it outlives the bot."""
    with FakeSlack(reject_block_types=request.param) as fake:
        yield fake


@pytest.mark.parametrize(
    ("refusing_slack", "kind"),
    [(set(), "data_table"), ({"data_table"}, "table"), ({"data_table", "table"}, "text")],
    indirect=["refusing_slack"],
)
def test_the_label_and_buttons_survive_every_fallback_style(
    refusing_slack, make_bot, plan, fake_llm, demo_var, kind
):
    """A workspace without `data_table` (or without any table block) still sees ✅, Verify, As of and
    Refresh: they belong to the answer, not to one way of laying out its rows."""
    names_in = (
        "SELECT c.name FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = '%s' ORDER BY c.name"
    )

    def shows(message: Message, city: str) -> None:
        want = hand(demo_var, names_in % city)
        assert len(want) > 1  # a list, so the rows are laid out in the style under test
        if kind == "text":
            assert message.table() is None and "```" in message.all_text()
            assert all(name in message.all_text() for (name,) in want)
        else:
            assert kind in message.block_types() and message.result() == want

    bot = make_bot(slack_api=refusing_slack)
    plan.main_task = "List the clients in Lyon"
    plan.objects = ["clients", "city"]
    plan.sql = "SELECT client.name AS name FROM client JOIN location ON location.id = client.loc_id WHERE location.city = 'Lyon' ORDER BY client.name"
    first = ask(bot, "Which clients are in Lyon?")
    shows(first, "Lyon")
    assert "verified_verify" in first.action_ids() and not verified_label(first)
    verify(bot, first)

    before = llm_calls(fake_llm)
    plan.sql = "SELECT client.name AS name FROM client JOIN location ON location.id = client.loc_id WHERE location.city = 'Nowhere'"
    reused = ask(bot, "Which clients are in Paris?", user="U0002")
    shows(reused, "Paris")
    assert verified_label(reused) and "verified_verify" not in reused.action_ids()

    cached = ask(bot, "Which clients are in Paris?", user="U0003")
    shows(cached, "Paris")
    assert "As of" in cached.all_text() and "answer_refresh" in cached.action_ids()
    assert llm_calls(fake_llm) == before


# ---------------------------------------------------------------- staleness


def test_a_schema_change_flags_the_verified_query_and_tells_its_verifier(
    make_bot, slack, plan, fake_llm, demo_var, tmp_path
):
    copy = tmp_path / "copy.sqlite"
    shutil.copy(demo_var / "demo.sqlite", copy)
    bot = make_bot(
        default_db="copy",
        databases={"copy": DatabaseSettings(url=f"sqlite:///{copy}", catalog=str(CATALOG_PATH))},
    )
    city_plan(plan, "Lyon")
    verify(bot, ask(bot, "How many clients are in Lyon?"))
    assert ask(bot, "How many clients are in Paris?", user="U0002").all_text().count("✅ Verified") == 1

    with sqlite3.connect(copy) as conn:  # a migration renames the column the verified SQL filters on
        conn.execute("ALTER TABLE location RENAME COLUMN city TO city_name")

    before = llm_calls(fake_llm)
    plan.sql = "SELECT COUNT(*) AS clients FROM client JOIN location ON location.id = client.loc_id WHERE location.city_name = 'Berlin'"
    answer = ask(bot, "How many clients are in Berlin?", user="U0003")
    assert not verified_label(answer) and llm_calls(fake_llm) > before  # answered as if never verified

    (stale,) = verified_store.active(bot.state, include_stale=True)
    assert stale.stale and "city" in stale.stale_reason
    assert verified_store.active(bot.state) == []  # never reused until fixed
    dm = slack.wait_for(lambda s: [c for c in s.calls_to("chat.postMessage") if c.args["channel"] == ANALYST])
    assert (
        len(dm) == 1
        and "stopped working" in dm[0].args["text"]
        and "How many clients are in Lyon?" in dm[0].args["text"]
    )
    assert "Stale" in str(bot.sender.command("verified", user=ANALYST).json())

    # a later question does not tell the verifier twice
    ask(bot, "How many clients are in Berlin?", user="U0004")
    assert len([c for c in slack.calls_to("chat.postMessage") if c.args["channel"] == ANALYST]) == 1


# ---------------------------------------------------------------- the answer cache


def test_a_repeated_question_gets_the_cached_answer_but_never_across_access_rules(
    make_bot, slack, plan, fake_llm, demo_var
):
    bot = make_bot(
        access={
            "rules": [
                AccessRule(databases=["demo"], channels=["C0001"]),
                AccessRule(databases=["demo"], channels=["C0002"]),
            ]
        }
    )
    plan.sql = "SELECT COUNT(*) AS clients FROM client"
    want = hand(demo_var, "SELECT COUNT(*) FROM client")

    first = ask(bot, "How many clients are there?", channel="C0001")
    assert first.result() == want and "As of" not in first.all_text()

    before = llm_calls(fake_llm)
    hit = ask(bot, "how many clients are there", user="U0002", channel="C0001")
    assert llm_calls(fake_llm) == before
    assert hit.result() == want and "As of" in hit.all_text() and "answer_refresh" in hit.action_ids()

    other_rules = ask(bot, "How many clients are there?", user="U0003", channel="C0002")
    assert llm_calls(fake_llm) > before and "As of" not in other_rules.all_text()

    refused = ask(bot, "How many clients are there?", user="U0004", channel="C0009")
    assert "may not query" in refused.all_text() and refused.result() is None

    rows = {e["trace_id"]: e for e in entries_since(bot.state, dt.timedelta(hours=1))}
    assert (
        rows[hit.button_value("show_details")]["reused_from"] == f"cache {first.button_value('show_details')}"
    )

    # Refresh asks again past the cache; the fresh answer is a new message below the cached one,
    # which stays as it was (answers are never edits: edits do not notify)
    before, seen = llm_calls(fake_llm), slack.messages[hit.ts].updates
    click(bot, "answer_refresh", hit.button_value("answer_refresh"), hit, user="U0002")
    fresh = slack.wait_for(
        lambda s: next(
            (
                m
                for m in s.thread(CHANNEL, hit.thread_ts or hit.ts)
                if float(m.ts) > float(hit.ts) and not m.streamed and m.result() is not None
            ),
            None,
        ),
        timeout=20,
    )
    assert fresh.result() == want and "As of" not in fresh.all_text() and llm_calls(fake_llm) > before
    assert "answer_refresh" not in fresh.action_ids()
    assert slack.messages[hit.ts].updates == seen and "As of" in slack.messages[hit.ts].all_text()


def test_the_cache_can_be_off_for_a_database(make_bot, plan, fake_llm):
    bot = make_bot(cache={"off": ["demo"]})
    plan.sql = "SELECT COUNT(*) AS clients FROM client"
    ask(bot, "How many clients are there?")
    before = llm_calls(fake_llm)
    again = ask(bot, "How many clients are there?", user="U0002")
    assert llm_calls(fake_llm) > before and "As of" not in again.all_text()
