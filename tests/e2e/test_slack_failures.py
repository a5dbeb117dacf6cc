"""Errors for people (bot/failures.py), through the real Bolt app and the fake Slack API.

A decline says, in the asker's own words, what was understood and one question that would
work — table and column names only for analysts. A missing or rejected LLM key tells people
that answers are limited right now, and the admins — `slack.admins`, else (a single bot token,
nobody named) the workspace's owners — get one DM a day with what to fix.
"""

from __future__ import annotations

import re

from tests.fakes.openai_server import Reply

CHANNEL = "C0001"
ASKER = "U0001"
ANALYST = "U0ANA"
QUESTION = "how many clients paid in the blue moon?"  # keyword mode places 'clients' and 'paid'


def reply_to(bot, slack, question: str, user: str = ASKER, channel: str = CHANNEL):
    _, ts = bot.sender.mention(question, channel=channel, user=user)
    return slack.wait_for(lambda s: s.answer_in(channel, ts), timeout=20)


def test_a_decline_is_worded_for_people_and_names_the_schema_only_to_analysts(make_bot, slack):
    bot = make_bot(llm=False, verified={"analysts": {"users": [ANALYST]}})
    said = reply_to(bot, slack, QUESTION).all_text()
    assert "couldn't answer this without guessing" in said
    assert "“clients”" in said and "“blue”" in said  # what it understood and not, in their words
    assert "A question that would work: “How many clients are there?”" in said
    assert not re.search(r"\b\w+\.\w+_\w+\b|\(tables:", said)  # no payment.paid_on, no table list
    assert "Answers are limited right now" in said and "OPENAI" not in said

    analyst = reply_to(bot, slack, QUESTION, user=ANALYST).all_text()
    assert "payment.paid_on" in analyst  # an analyst can act on the schema's names


def test_a_rejected_key_limits_answers_and_tells_the_named_admins_once(make_bot, slack, plan, fake_llm):
    bot = make_bot(engine={"fallback_to_keyword": True}, slack_settings={"admins": ["U0ADMIN"]})
    fake_llm.script("generate", *[Reply(status=401)] * 20)
    fake_llm.script("understand", *[Reply(status=401)] * 20)
    first = reply_to(bot, slack, "how many clients are there?")
    assert "answers are limited right now" in first.all_text() and "OPENAI" not in first.all_text()
    reply_to(bot, slack, "how many clients are there per segment?", channel="C0002")
    bot.close()  # every note that was going to be sent is sent
    dms = [c.args for c in slack.calls_to("chat.postMessage") if c.args["channel"] == "U0ADMIN"]
    assert len(dms) == 1
    assert "limited right now" in dms[0]["text"] and "OPENAI_API_KEY" in dms[0]["text"]


def test_with_a_single_token_and_nobody_named_the_owners_are_told(make_bot, slack, fake_llm):
    slack.users["U0OWNER"] = {"is_owner": True, "is_primary_owner": True}
    slack.users["U0MEMBER"] = {}
    bot = make_bot(engine={"fallback_to_keyword": False})
    fake_llm.script("generate", *[Reply(status=401)] * 20)
    fake_llm.script("understand", *[Reply(status=401)] * 20)
    failed = reply_to(bot, slack, "how many clients are there?")
    assert "Answers are limited right now" in failed.all_text()
    bot.close()
    told = {
        c.args["channel"] for c in slack.calls_to("chat.postMessage") if c.args["channel"].startswith("U")
    }
    assert told == {"U0OWNER"}
