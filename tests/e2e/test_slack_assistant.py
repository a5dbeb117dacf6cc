"""Slack's assistant panel (`assistant_view`, apps installed with it) through the real Bolt app (its
`Assistant` middleware) and the fake Slack API. The agent view, the default, is in
tests/e2e/test_slack_agent.py.

Opening the panel greets the person and suggests questions from the catalog of a database they
may query — the one of the channel they are looking at when they may — and a question asked there
is answered like a DM: progress as the assistant status, the thread titled with the question, the
answer as a new message, clarifying questions with buttons.
"""

from __future__ import annotations

import copy
import itertools

import pytest
import yaml

from core.demo import CATALOG_PATH
from core.settings import AccessRule, DatabaseSettings
from core.state.channel_settings import set_channel_database
from tests.slack_harness import RunningBot, hand

USER = "U0001"
DM = "D0001"
VIEWED = "C0SALES"
COPY_EXAMPLES = [
    "How many datacenters are there per tier?",
    "Which datacenters opened after 2020?",
    "How many hosts are in maintenance?",
]
_threads = itertools.count(1)


def copy_catalog(tmp_path) -> str:
    """The demo's catalog with other example questions: the prompts must come from this one."""
    text = CATALOG_PATH.read_text()
    start, end = text.index("\nexamples:\n"), text.index("\ntables:")
    listed = "\n".join(f"  - {q}" for q in COPY_EXAMPLES)
    path = tmp_path / "copy_catalog.yaml"
    path.write_text(text[:start] + "\nexamples:\n" + listed + "\n" + text[end:])
    return str(path)


@pytest.fixture
def make_bot(make_bot, demo_var, tmp_path):
    """The shared make_bot (tests/conftest.py) as an app installed with the assistant panel
    (`slack.experience: assistant_view`), with the demo database also configured as "copy"
    under its own catalog: a second database for the panel's per-channel prompts."""

    def make(**overrides) -> RunningBot:
        copy = DatabaseSettings(url=f"sqlite:///{demo_var / 'demo.sqlite'}", catalog=copy_catalog(tmp_path))
        panel = {"experience": "assistant_view", **overrides.pop("slack_settings", {})}
        return make_bot(databases={"copy": copy}, slack_settings=panel, **overrides)

    return make


def open_panel(bot: RunningBot, looking_at: str | None = VIEWED, user: str = USER) -> str:
    thread_ts = f"1729999{next(_threads):03d}.000100"
    context = {"channel_id": looking_at, "team_id": "T0001"} if looking_at else {}
    event = {
        "type": "assistant_thread_started",
        "assistant_thread": {"user_id": user, "context": context, "channel_id": DM, "thread_ts": thread_ts},
        "event_ts": thread_ts,
    }
    assert bot.sender.event(event).status == 200
    return thread_ts


def ask_in_panel(bot: RunningBot, text: str, thread_ts: str) -> str:
    _, ts = bot.sender.message(text, channel=DM, channel_type="im", thread_ts=thread_ts)
    return ts


def demo_examples() -> list[str]:
    """The demo catalog's own example questions (config/demo_catalog.yaml), the first four."""
    return list(yaml.safe_load(CATALOG_PATH.read_text())["examples"][:4])


def test_opening_the_panel_greets_and_suggests_questions_from_the_viewed_channels_database(make_bot, slack):
    bot = make_bot()
    set_channel_database(bot.state, "T0001", VIEWED, "copy", USER)
    thread_ts = open_panel(bot)
    prompts = slack.wait_for(lambda s: s.prompts.get((DM, thread_ts)))
    assert [p["message"] for p in prompts] == COPY_EXAMPLES  # real questions from that catalog
    assert all(p["title"] for p in prompts) and len(prompts) <= 4
    greeting = slack.wait_for(lambda s: s.answer_in(DM, thread_ts))
    assert "`copy`" in greeting.all_text() and f"<#{VIEWED}>" in greeting.all_text()


def test_the_panel_offers_only_a_database_the_person_may_query(make_bot, slack):
    bot = make_bot(access={"rules": [AccessRule(databases=["copy"], users=["U0OTHER"])]})
    set_channel_database(bot.state, "T0001", VIEWED, "copy", "U0OTHER")
    thread_ts = open_panel(bot)
    prompts = slack.wait_for(lambda s: s.prompts.get((DM, thread_ts)))
    assert [p["message"] for p in prompts] == demo_examples()  # the default, not the channel's "copy"
    assert "`demo`" in slack.wait_for(lambda s: s.answer_in(DM, thread_ts)).all_text()


def test_a_question_in_the_panel_sets_status_and_title_then_answers_in_a_new_message(
    make_bot, slack, plan, demo_var
):
    bot = make_bot()
    set_channel_database(bot.state, "T0001", VIEWED, "copy", USER)
    thread_ts = open_panel(bot)
    greeting = slack.wait_for(lambda s: s.answer_in(DM, thread_ts))
    plan.main_task = "Count the clients per segment"
    plan.sql = "SELECT segment, COUNT(*) AS clients FROM client GROUP BY segment ORDER BY clients DESC"
    ask_in_panel(bot, "How many clients are there per segment?", thread_ts)

    answer = slack.wait_for(
        lambda s: next((m for m in s.thread(DM, thread_ts) if m.ts != greeting.ts and m.table()), None),
        timeout=15,
    )
    expected = hand(demo_var, "SELECT segment, COUNT(*) AS n FROM client GROUP BY segment ORDER BY n DESC")
    assert answer.table()[1:] == expected and "`copy`" in answer.all_text()  # the viewed channel's data
    assert ", highest clients first: " in answer.sentence()
    assert slack.titles[(DM, thread_ts)] == "How many clients are there per segment?"
    statuses = slack.statuses[(DM, thread_ts)]
    assert any("writing SQL" in s for s in statuses) and any("running it" in s for s in statuses)
    slack.wait_for(lambda s: s.status_of(DM, thread_ts) == "")
    assert not slack.calls_to("chat.update")  # nothing edited: the answer is a new message

    # a second question keeps the title and the thread's database
    plan.main_task, plan.sql = "Count the clients", "SELECT COUNT(*) AS clients FROM client"
    ask_in_panel(bot, "and in total?", thread_ts)
    slack.wait_for(lambda s: sum(1 for m in s.thread(DM, thread_ts) if m.result()) == 2, timeout=15)
    assert slack.titles[(DM, thread_ts)] == "How many clients are there per segment?"
    assert len(slack.calls_to("assistant.threads.setTitle")) == 1


def test_moving_to_another_channel_before_asking_follows_its_database(make_bot, slack):
    bot = make_bot()
    set_channel_database(bot.state, "T0001", "C0OPS", "copy", USER)
    thread_ts = open_panel(bot, looking_at=None)
    first = slack.wait_for(lambda s: s.prompts.get((DM, thread_ts)))
    assert [p["message"] for p in first] == demo_examples()
    event = {
        "type": "assistant_thread_context_changed",
        "assistant_thread": {
            "user_id": USER,
            "context": {"channel_id": "C0OPS", "team_id": "T0001"},
            "channel_id": DM,
            "thread_ts": thread_ts,
        },
        "event_ts": "1.2",
    }
    bot.sender.event(event)
    slack.wait_for(lambda s: [p["message"] for p in s.prompts.get((DM, thread_ts), [])] == COPY_EXAMPLES)


def test_a_clarifying_question_in_the_panel_is_answered_with_its_buttons(make_bot, slack, demo_var):
    bot = make_bot(llm=False)  # keyword mode asks back about 'Singapore' (a city and a country)
    thread_ts = open_panel(bot, looking_at=None)
    slack.wait_for(lambda s: s.answer_in(DM, thread_ts))
    ask_in_panel(bot, "How many clients are in Singapore?", thread_ts)
    question = copy.deepcopy(
        slack.wait_for(
            lambda s: next((m for m in s.thread(DM, thread_ts) if "clarify_other" in m.action_ids()), None),
            timeout=20,
        )
    )
    option = next(
        e
        for b in question.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if "city" in e["text"]["text"]
    )
    bot.sender.click(
        option["action_id"], option["value"], channel=DM, message_ts=question.ts, thread_ts=thread_ts
    )
    answer = slack.wait_for(
        lambda s: next((m for m in s.thread(DM, thread_ts) if m.result()), None), timeout=20
    )
    want = hand(
        demo_var,
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.city = 'Singapore'",
    )
    assert answer.result() == want
