"""Private results (bot/slack/private_results.py) through the real Bolt app and the fake Slack Web API.

In a channel an admin made private (`/ask private on`), or that the configuration lists, only the
asker sees what their question brought: the answer comes as an ephemeral message to them, the
CSV and chart in their direct messages with the bot, and nothing with data is posted in the
channel — not for a mention, `/ask`, the CSV button or a schedule. Other channels are unchanged.
"""

from __future__ import annotations

import pytest

from core.bench.fakes.slack_api import FakeSlack, Message
from core.schedules import store
from tests.slack_harness import hand, read_csv

SHARED = "C0001"
PRIVATE = "C0SECRET"
ASKER = "U0001"
ADMIN = "U0ADMIN"
LIST = "SELECT name, segment FROM client ORDER BY name"


@pytest.fixture
def slack():
    """The fake Slack API with a workspace admin among its users."""
    with FakeSlack(users={ADMIN: {"is_admin": True}}) as fake:
        yield fake


def ephemeral_answer(slack: FakeSlack, channel: str, since: int = 0) -> Message:
    return slack.wait_for(
        lambda s: next((m for m in s.ephemerals[since:] if m.channel == channel and m.result()), None),
        timeout=20,
    )


def public_in(slack: FakeSlack, channel: str) -> list[str]:
    """Everything the bot made visible to the channel: messages and files (with their contents)."""
    posted = [m.all_text() for m in slack.messages.values() if m.channel == channel]
    files = [
        f.filename + f.content.decode(errors="replace") for f in slack.files.values() if f.channel == channel
    ]
    return posted + files


def settle(bot, slack: FakeSlack) -> None:
    """A question in another channel answered after everything asked before it."""
    _, ts = bot.sender.mention("how many clients are there?", channel="C0SENTINEL")
    slack.wait_for(lambda s: s.answer_in("C0SENTINEL", ts), timeout=20)


def test_in_a_private_channel_only_the_asker_sees_the_answer_and_its_files(make_bot, slack, plan, demo_var):
    bot = make_bot()
    plan.main_task, plan.sql = "List the clients", LIST
    expected = hand(demo_var, LIST)

    # only a workspace admin may make a channel private; anyone may ask whether it is
    refused = bot.sender.command("private on", channel=PRIVATE, user=ASKER).json()
    assert refused["response_type"] == "ephemeral" and "admins" in refused["text"]
    assert "shared" in bot.sender.command("private", channel=PRIVATE, user=ASKER).json()["text"]
    made = bot.sender.command("private on", channel=PRIVATE, user=ADMIN).json()
    assert made["response_type"] == "in_channel" and "private" in made["text"]

    # a mention: the answer is ephemeral to the asker, in their thread; files go to their DM
    _, ts = bot.sender.mention("list all clients with their segment", channel=PRIVATE, user=ASKER)
    answer = ephemeral_answer(slack, PRIVATE)
    assert answer.to == ASKER and answer.thread_ts == ts
    assert answer.table()[1:] == expected[:100]
    csv = slack.wait_for(
        lambda s: [f for f in s.files.values() if f.completed and f.filename.endswith(".csv")]
    )
    assert csv[0].channel == ASKER and read_csv(csv[0].content) == [["name", "segment"], *expected]
    dm_note = slack.messages[csv[0].thread_ts]
    assert dm_note.channel == ASKER and f"<#{PRIVATE}>" in dm_note.all_text()

    # /ask: no "X asked" root in the channel, the answer to the asker alone
    before = len(slack.ephemerals)
    plan.main_task, plan.sql = "Count the clients", "SELECT COUNT(*) AS clients FROM client"
    bot.sender.command("how many clients are there?", channel=PRIVATE, user=ASKER)
    counted = ephemeral_answer(slack, PRIVATE, before)
    assert counted.to == ASKER and counted.thread_ts is None and counted.result() == [["300"]]

    # the CSV button under the ephemeral answer: the file goes to whoever pressed it, by DM
    uploads = len(slack.files)
    bot.sender.click(
        "get_csv", answer.button_value("show_sql"), channel=PRIVATE, message_ts=answer.ts, thread_ts=ts
    )
    again = slack.wait_for(lambda s: [f for f in list(s.files.values())[uploads:] if f.completed])
    assert again[0].channel == ASKER and read_csv(again[0].content)[1:] == [list(r) for r in expected]

    # a schedule posts for everyone: refused here, before anything is posted
    refusal = bot.sender.command("schedule every day at 9:00 how many clients are there?", channel=PRIVATE)
    assert "private" in refusal.json()["text"] and not store.for_channel(bot.state, "T0001", PRIVATE)

    settle(bot, slack)
    shown = public_in(slack, PRIVATE)
    assert not [t for t in shown if "300" in t or expected[0][0] in t], shown  # no data in the channel

    # a shared channel is unchanged: the answer is a message in the thread, the CSV beside it
    plan.main_task, plan.sql = "List the clients", LIST
    _, shared_ts = bot.sender.mention("list all clients with their segment", channel=SHARED, user=ASKER)
    public = slack.wait_for(lambda s: s.answer_in(SHARED, shared_ts), timeout=20)
    assert public.table()[1:] == expected[:100]
    assert slack.wait_for(lambda s: s.files_in(SHARED, shared_ts))
    assert not [m for m in slack.ephemerals if m.channel == SHARED and m.result()]

    # and private off (an admin) shares the channel's answers again
    assert "shared" in bot.sender.command("private off", channel=PRIVATE, user=ADMIN).json()["text"]
    _, later = bot.sender.mention("list all clients with their segment", channel=PRIVATE, user=ASKER)
    assert slack.wait_for(lambda s: s.answer_in(PRIVATE, later), timeout=20).table()[1:] == expected[:100]


def test_a_channel_the_configuration_lists_stays_private(make_bot, slack, plan):
    bot = make_bot(slack_settings={"private_channels": [PRIVATE]})
    assert "private" in bot.sender.command("private", channel=PRIVATE).json()["text"]
    kept = bot.sender.command("private off", channel=PRIVATE, user=ADMIN).json()
    assert "configuration" in kept["text"]
    _, ts = bot.sender.mention("how many clients are there?", channel=PRIVATE)
    answer = ephemeral_answer(slack, PRIVATE)
    assert answer.to == ASKER and answer.thread_ts == ts and answer.result() == [["300"]]
    settle(bot, slack)
    assert not [t for t in public_in(slack, PRIVATE) if "300" in t]
