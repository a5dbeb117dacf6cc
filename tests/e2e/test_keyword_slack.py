"""Keyword mode in a Slack thread: the real Bolt app behind its HTTP server, no LLM, the fake Slack
Web API. A follow-up ('and only those in Germany?') answers about the same things as the answer
it follows — clients per segment — not about whatever its own words happen to name."""

from __future__ import annotations

import pytest

from core.bench.fakes.slack_api import FakeSlack
from tests.slack_harness import RunningBot, hand

CHANNEL = "C0001"


@pytest.fixture
def bot(make_bot) -> RunningBot:
    """No OPENAI_API_KEY in the isolated environment: keyword mode."""
    running = make_bot(llm=False)
    assert running.askbase.llm is None
    return running


def reply(slack: FakeSlack, ts: str, n: int):
    """The n-th answer in the thread (1-based), once it is no longer a status message."""

    def ready(s: FakeSlack):
        answers = [m for m in s.thread(CHANNEL, ts) if m.ts != ts and ":hourglass" not in m.all_text()]
        return answers[n - 1] if len(answers) >= n else None

    return slack.wait_for(ready, timeout=15)


def test_a_keyword_follow_up_in_a_thread_answers_about_the_same_entity(bot, slack, demo_var):
    _, ts = bot.sender.mention("How many clients per segment?", channel=CHANNEL)
    first = reply(slack, ts, 1)
    assert first.table()[1:] and "Keyword mode" in first.all_text()

    bot.sender.mention("and only those in Germany?", channel=CHANNEL, thread_ts=ts)  # a follow-up mentions
    second = reply(slack, ts, 2)
    table = second.table()
    assert table is not None, second.all_text()
    want = hand(
        demo_var,
        "SELECT client.segment, COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
        "WHERE location.country = 'Germany' GROUP BY client.segment",
    )
    assert sorted(table[1:]) == sorted(want)  # clients per segment, in Germany — not locations
    assert "Follow-up to 'How many clients per segment?'" in second.all_text()


def test_a_keyword_follow_up_it_cannot_place_says_so_in_the_thread(bot, slack):
    _, ts = bot.sender.mention("How many clients per segment?", channel=CHANNEL)
    reply(slack, ts, 1)
    bot.sender.mention("and the top 5 by cost?", channel=CHANNEL, thread_ts=ts)
    second = reply(slack, ts, 2)
    assert second.table() is None
    said = second.all_text()
    assert "took this as a follow-up to “How many clients per segment?”" in said
    assert "Ask the whole question again in one message" in said
