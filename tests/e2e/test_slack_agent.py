"""Slack's agent messaging experience (`features.agent_view`, the default `slack.experience`)
through the real Bolt app and the fake Slack API.

Opening the DM with Askbase (`app_home_opened`, `tab == "messages"`) sets suggested prompts for
the DM — real questions from the catalog of the database it asks about — and greets a person who
has asked nothing yet; each DM message is the root of its own thread, answered there and titled
with the question; `app_context_changed` (what the person is looking at) points the DM at the
database of the channel in view when they may query it there.
"""

from __future__ import annotations

import itertools

import pytest

from core.settings import AccessRule, DatabaseSettings
from core.state.channel_settings import set_channel_database
from tests.e2e.test_slack_assistant import COPY_EXAMPLES, copy_catalog, demo_examples
from tests.slack_harness import RunningBot, hand

USER = "U0001"
DM = "D0001"
SALES = "C0SALES"
_events = itertools.count(1)


@pytest.fixture
def make_bot(make_bot, demo_var, tmp_path):
    """The shared make_bot (the agent view is the default), with the demo database also
    configured as "copy" under a catalog of its own: a second database a channel can point at."""

    def make(**overrides) -> RunningBot:
        copy = DatabaseSettings(url=f"sqlite:///{demo_var / 'demo.sqlite'}", catalog=copy_catalog(tmp_path))
        return make_bot(databases={"copy": copy}, **overrides)

    return make


def open_dm(bot: RunningBot, user: str = USER, context: dict | None = None) -> None:
    event = {"type": "app_home_opened", "user": user, "channel": DM, "tab": "messages", "event_ts": "1.1"}
    if context is not None:
        event["app_context"] = context
    assert bot.sender.event(event).status == 200


def looking_at(bot: RunningBot, channel: str | None, user: str = USER) -> None:
    entities = [{"type": "slack#/types/channel_id", "value": channel, "team_id": "T0001"}] if channel else []
    event = {
        "type": "app_context_changed",
        "user": user,
        "channel": DM,
        "context": {"entities": entities} if entities else {},
        "event_ts": f"2.{next(_events)}",
    }
    assert bot.sender.event(event).status == 200


def dm_prompts(slack) -> list[str]:
    return [p["message"] for p in slack.prompts.get((DM, ""), [])]


def test_a_dm_opened_gets_a_greeting_and_suggested_prompts_once(make_bot, slack):
    bot = make_bot()
    open_dm(bot)
    slack.wait_for(lambda s: dm_prompts(s) == demo_examples())
    (call,) = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in call.args  # Slack ignores prompts sent with one in the agent view
    greeting = slack.wait_for(
        lambda s: next((m for m in s.messages.values() if m.channel == DM and m.thread_ts is None), None)
    )
    assert "`demo`" in greeting.all_text() and "own thread" in greeting.all_text()

    open_dm(bot)  # again: the prompts are set again, the greeting is not repeated
    slack.wait_for(lambda s: len(s.calls_to("assistant.threads.setSuggestedPrompts")) == 2)
    assert len([m for m in slack.messages.values() if m.channel == DM]) == 1
    assert not slack.calls_to("views.publish")  # the Messages tab is not the Home tab


def test_a_dm_message_is_answered_in_its_own_thread_titled_with_the_question(make_bot, slack, plan, demo_var):
    bot = make_bot()
    plan.sql = "SELECT segment, COUNT(*) AS clients FROM client GROUP BY segment ORDER BY clients DESC"
    _, ts = bot.sender.message("How many clients are there per segment?", channel=DM, channel_type="im")
    answer = slack.wait_for(lambda s: (a := s.answer_in(DM, ts)) is not None and a.table() and a, timeout=15)
    assert answer.thread_ts == ts  # a thread under the person's own message
    want = hand(demo_var, "SELECT segment, COUNT(*) AS n FROM client GROUP BY segment ORDER BY n DESC")
    assert answer.table()[1:] == want
    assert slack.titles[(DM, ts)] == "How many clients are there per segment?"
    assert any("writing SQL" in s for s in slack.statuses[(DM, ts)])  # progress under that thread

    # a second top-level message is a thread of its own, with its own context
    plan.sql = "SELECT COUNT(*) AS clients FROM client"
    _, second = bot.sender.message("How many clients are there?", channel=DM, channel_type="im")
    other = slack.wait_for(
        lambda s: (a := s.answer_in(DM, second)) is not None and a.result() and a, timeout=15
    )
    assert other.thread_ts == second and other.result() == hand(demo_var, "SELECT COUNT(*) FROM client")


def test_app_context_changed_points_the_dm_at_the_viewed_channels_database(make_bot, slack, plan):
    bot = make_bot()
    set_channel_database(bot.state, "T0001", SALES, "copy", "U0ADMIN")
    open_dm(bot)
    slack.wait_for(lambda s: dm_prompts(s) == demo_examples())

    looking_at(bot, SALES)
    slack.wait_for(lambda s: dm_prompts(s) == COPY_EXAMPLES)  # the prompts follow the channel in view
    _, ts = bot.sender.message("How many clients are there?", channel=DM, channel_type="im")
    answer = slack.wait_for(lambda s: (a := s.answer_in(DM, ts)) is not None and a.result() and a, timeout=15)
    assert "`copy`" in answer.all_text()

    looking_at(bot, "C0RANDOM")  # a channel with no database of its own: back to the DM's
    slack.wait_for(lambda s: dm_prompts(s) == demo_examples())
    _, ts = bot.sender.message("How many clients are there?", channel=DM, channel_type="im")
    answer = slack.wait_for(lambda s: (a := s.answer_in(DM, ts)) is not None and a.result() and a, timeout=15)
    assert "`demo`" in answer.all_text()


def test_the_context_a_message_carries_picks_its_database_too(make_bot, slack, plan):
    bot = make_bot()
    set_channel_database(bot.state, "T0001", SALES, "copy", "U0ADMIN")
    ts = bot.sender.next_ts()
    event = {
        "type": "message",
        "user": USER,
        "text": "How many clients are there?",
        "ts": ts,
        "channel": DM,
        "channel_type": "im",
        "event_ts": ts,
        "app_context": {"entities": [{"type": "slack#/types/channel_id", "value": SALES}]},
    }
    bot.sender.event(event)
    answer = slack.wait_for(lambda s: (a := s.answer_in(DM, ts)) is not None and a.result() and a, timeout=15)
    assert "`copy`" in answer.all_text()


def test_a_viewed_channels_database_the_person_may_not_query_is_not_followed(make_bot, slack, plan):
    bot = make_bot(access={"rules": [AccessRule(databases=["copy"], users=["U0OTHER"])]})
    set_channel_database(bot.state, "T0001", SALES, "copy", "U0OTHER")
    looking_at(bot, SALES)
    _, ts = bot.sender.message("How many clients are there?", channel=DM, channel_type="im")
    answer = slack.wait_for(lambda s: (a := s.answer_in(DM, ts)) is not None and a.result() and a, timeout=15)
    assert "`demo`" in answer.all_text()


def test_apps_installed_with_the_assistant_panel_keep_it(make_bot, slack):
    """`slack.experience: assistant_view`: the panel's events are answered, a DM opened is not greeted."""
    bot = make_bot(slack_settings={"experience": "assistant_view"})
    open_dm(bot)
    event = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": USER,
            "context": {},
            "channel_id": DM,
            "thread_ts": "1729999001.000100",
        },
        "event_ts": "1729999001.000100",
    }
    bot.sender.event(event)
    slack.wait_for(lambda s: s.prompts.get((DM, "1729999001.000100")))
    assert (DM, "") not in slack.prompts  # nothing for the DM itself
