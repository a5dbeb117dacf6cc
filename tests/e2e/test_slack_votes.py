"""Who teaches: only an analyst's 👍 (`verified.analysts`) makes an answer's question and SQL an
example; anyone else's is recorded as feedback and listed for the analysts on their App Home,
where **Use as example** makes it one. The real Bolt app, the fake Slack API, the fake model."""

from __future__ import annotations

import json

from core.state import feedback
from core.state.conversations import turn_by_trace
from tests.e2e.test_slack_home import buttons, click_on_home, open_home
from tests.slack_harness import RunningBot

CHANNEL = "C0001"
ASKER = "U0001"
ANALYST = "U0ANA"


def answered(bot: RunningBot, slack, question: str = "how many clients are there?"):
    _, ts = bot.sender.mention(question, channel=CHANNEL, user=ASKER)
    answer = slack.wait_for(
        lambda s: (a := s.answer_in(CHANNEL, ts)) is not None and a.result() and a, timeout=15
    )
    return answer, answer.button_value("show_sql"), ts


def thumbs_up(bot: RunningBot, answer, ts: str, user: str) -> None:
    bot.sender.click(
        "feedback", answer.feedback_values()["positive"], channel=CHANNEL, message_ts=answer.ts, thread_ts=ts,
        user=user, blocks=answer.blocks, action_type="feedback_buttons",
    )  # fmt: skip


def test_a_non_analysts_thumbs_up_adds_no_example_and_waits_for_an_analyst(make_bot, slack, plan):
    bot = make_bot(verified={"analysts": {"users": [ANALYST]}})
    answer, trace_id, ts = answered(bot, slack)
    thumbs_up(bot, answer, ts, ASKER)
    shown = slack.wait_for(
        lambda s: "found this answer right" in s.messages[answer.ts].all_text() and s.messages[answer.ts]
    )
    assert "confirmed" not in shown.all_text()
    note = slack.wait_for(lambda s: [e for e in s.ephemerals if e.to == ASKER])[0]
    assert "An analyst decides" in note.text
    assert [(v["verdict"], v["user"]) for v in feedback.feedback_for(bot.state, trace_id)] == [("up", ASKER)]
    assert feedback.examples_for(bot.state, "demo") == []  # nothing learned from it

    # the asker's App Home has no review list; the analyst's does, with Use as example
    assert "Votes to review" not in json.dumps(open_home(bot, slack, ASKER))
    view = open_home(bot, slack, ANALYST)
    assert "Votes to review" in json.dumps(view) and "how many clients are there?" in json.dumps(view)
    use = next(b for b in buttons(view) if b["text"]["text"] == "Use as example")
    assert use["value"] == trace_id
    click_on_home(bot, "teach_example", use["value"], user=ANALYST)
    slack.wait_for(lambda s: "is an example now" in json.dumps(s.home_views.get(ANALYST, {})))
    ran = turn_by_trace(bot.state, trace_id)
    assert ran is not None
    assert [(e.question, e.sql) for e in feedback.examples_for(bot.state, "demo")] == [
        ("how many clients are there?", ran.sql)
    ]
    assert "Votes to review" not in json.dumps(open_home(bot, slack, ANALYST))  # reviewed


def test_only_an_analyst_may_make_an_example_from_app_home(make_bot, slack, plan):
    bot = make_bot(verified={"analysts": {"users": [ANALYST]}})
    answer, trace_id, ts = answered(bot, slack)
    thumbs_up(bot, answer, ts, ASKER)
    slack.wait_for(lambda s: feedback.feedback_for(bot.state, trace_id))
    click_on_home(bot, "teach_example", trace_id, user=ASKER)
    slack.wait_for(lambda s: "Only analysts" in json.dumps(s.home_views.get(ASKER, {})))
    assert feedback.examples_for(bot.state, "demo") == []


def test_without_analysts_no_thumbs_up_teaches(make_bot, slack, plan):
    bot = make_bot()
    answer, _, ts = answered(bot, slack)
    thumbs_up(bot, answer, ts, ASKER)
    slack.wait_for(lambda s: "found this answer right" in s.messages[answer.ts].all_text())
    assert feedback.examples_for(bot.state, "demo") == []
