"""The Slack app end to end: signed HTTP requests in, what a person sees in Slack out.

The real Bolt app runs behind its real HTTP server; Slack is the fake Web API on 127.0.0.1 and
the model is the fake OpenAI server. Every assertion is about messages, blocks, files and modals
that reached Slack, or about rows the state database keeps for later questions.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import time
import urllib.request
from urllib.parse import parse_qs, urlparse

import pytest

from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.llm import LLM
from core.settings import AccessRule, DatabaseSettings, load_settings
from core.state import feedback
from core.state.audit import entries_since
from core.state.channel_settings import channel_database
from core.state.conversations import turn_by_trace
from tests.slack_harness import RunningBot, hand, read_csv
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET

CHANNEL = "C0001"
USER = "U0001"


def answered(slack: FakeSlack, channel: str, thread_ts: str, timeout: float = 15):
    return slack.wait_for(lambda s: s.answer_in(channel, thread_ts), timeout=timeout)


def one(demo_var, sql: str) -> str:
    """A single value by hand-written SQL, as the sentence writes it."""
    return hand(demo_var, sql)[0][0]


def called_before(slack: FakeSlack, first, then) -> bool:
    """The first call matching `first` comes before the last call matching `then`."""
    calls = list(slack.calls)
    a = next(i for i, c in enumerate(calls) if first(c))
    b = max(i for i, c in enumerate(calls) if then(c))
    return a < b


def settle(bot: RunningBot) -> None:
    """Let a sentinel question through, so anything queued before it has had its chance to post."""
    _, ts = bot.sender.mention("how many clients are there?", channel="C0SENTINEL")
    answered(bot.slack, "C0SENTINEL", ts)


# ---------------------------------------------------------------- the answer


def test_a_mention_is_answered_by_a_new_message_after_a_status_that_names_each_step(
    bot, slack, plan, demo_var
):
    plan.main_task = "Count the clients per segment"
    plan.sql = "SELECT segment, COUNT(*) AS clients FROM client GROUP BY segment ORDER BY segment"
    response, ts = bot.sender.mention("how many clients per segment?")
    assert response.status == 200

    answer = answered(slack, CHANNEL, ts)
    assert answer.thread_ts == ts  # a reply in the asker's thread, not in the channel
    expected = hand(demo_var, "SELECT segment, COUNT(*) FROM client GROUP BY segment ORDER BY segment")
    assert answer.table() == [["Segment", "Clients"], *expected]  # headers people read
    assert answer.sentence().startswith(f"Number of clients per segment ({len(expected)} rows), A to Z: ")
    assert {"show_sql", "show_details", "get_csv", "schedule_open"} <= set(answer.action_ids())
    assert answer.feedback_values() == {
        "positive": f"up:{answer.button_value('show_sql')}",
        "negative": f"down:{answer.button_value('show_sql')}",
    }

    # the answer is the only message posted, and nothing was edited into it: it notifies
    posts = [c.args for c in slack.calls_to("chat.postMessage")]
    assert [(p["channel"], p.get("thread_ts")) for p in posts] == [(CHANNEL, ts)]
    assert not slack.calls_to("chat.update") and not slack.deleted

    # 👀 on the question; the assistant status named each step, then was cleared after the answer
    reaction = slack.calls_to("reactions.add")[0].args
    assert (reaction["channel"], reaction["timestamp"], reaction["name"]) == (CHANNEL, ts, "eyes")
    statuses = slack.statuses[(CHANNEL, ts)]
    for step in (
        "understanding the question",
        "searching the data",
        "writing SQL",
        "checking the SQL",
        "running it",
    ):
        assert any(step in status for status in statuses), (step, statuses)
    slack.wait_for(lambda s: s.status_of(CHANNEL, ts) == "")
    assert called_before(
        slack, lambda c: c.method == "chat.postMessage", lambda c: c.method == "assistant.threads.setStatus"
    )
    slack.wait_for(lambda s: s.calls_to("reactions.remove"))

    # a category → number breakdown comes with a chart (and its alt text), not a CSV
    files = slack.wait_for(lambda s: s.files_in(CHANNEL, ts))
    assert [f.filename.rsplit(".", 1)[-1] for f in files] == ["png"]
    assert files[0].content.startswith(b"\x89PNG")
    assert files[0].alt_txt.startswith("Bar chart: how many clients per segment? Clients by segment")


def test_a_result_larger_than_the_table_comes_with_the_whole_csv(bot, slack, plan, demo_var):
    plan.main_task = "List the clients"
    plan.sql = "SELECT name, segment FROM client ORDER BY name"
    _, ts = bot.sender.mention("list all clients with their segment")
    answer = answered(slack, CHANNEL, ts)
    expected = hand(demo_var, "SELECT name, segment FROM client ORDER BY name")
    assert len(expected) > 100
    table = answer.table()
    assert table[0] == ["Client name", "Segment"] and table[1:] == expected[:100]  # paged, 100 rows at most
    assert f"{len(expected)} rows" in answer.all_text() and "CSV" in answer.all_text()

    files = slack.wait_for(lambda s: [f for f in s.files_in(CHANNEL, ts) if f.filename.endswith(".csv")])
    assert read_csv(files[0].content) == [["name", "segment"], *expected]


def test_unsigned_forged_and_stale_requests_are_rejected(bot, slack, plan):
    sender = bot.sender
    assert sender.mention("how many clients?", signed=False)[0].status == 401
    assert sender.mention("how many clients?", secret="not-the-secret")[0].status == 401
    assert sender.mention("how many clients?", timestamp=int(time.time()) - 600)[0].status == 401
    assert sender.command("how many clients?", secret="not-the-secret").status == 401
    settle(bot)
    assert all(c.args["channel"] == "C0SENTINEL" for c in slack.calls_to("chat.postMessage"))


def test_a_redelivered_event_is_not_answered_twice(bot, slack, plan):
    body_event_id = "Ev0RETRY01"
    _, ts = bot.sender.mention("how many clients?", event_id=body_event_id)
    answered(slack, CHANNEL, ts)
    # Slack's retry of the same delivery, with and without the retry header
    again, _ = bot.sender.mention("how many clients?", event_id=body_event_id, ts=ts, retry_num=1)
    assert again.status == 200
    assert bot.sender.mention("how many clients?", event_id=body_event_id, ts=ts)[0].status == 200
    # the same event id on another message ts: the event id alone is enough to stop it
    _, other_ts = bot.sender.mention("how many clients?", event_id=body_event_id)
    # the same message arriving as a `message` event too (the user mentioned us in our thread)
    bot.sender.message(
        "<@UBOT> how many clients?", channel=CHANNEL, channel_type="channel", ts=ts, thread_ts=ts
    )
    settle(bot)
    posts = [c.args for c in slack.calls_to("chat.postMessage") if c.args["channel"] == CHANNEL]
    assert [p.get("thread_ts") for p in posts] == [ts]
    assert not slack.thread(CHANNEL, other_ts)


def test_slash_command_says_who_asked_and_answers_in_the_channel_too(bot, slack, plan, demo_var):
    response = bot.sender.command("how many clients are there?")
    assert response.status == 200 and not response.body  # acked at once, nothing ephemeral
    post = slack.wait_for(lambda s: s.calls_to("chat.postMessage"))[0].args
    assert post["channel"] == CHANNEL and "thread_ts" not in post  # in the channel itself
    root = next(m for m in slack.messages.values() if m.channel == CHANNEL and m.thread_ts is None)
    assert f"<@{USER}> asked: *how many clients are there?*" in root.all_text()
    answer = answered(slack, CHANNEL, root.ts)
    assert answer.broadcast  # shown in the channel as well as under the question
    assert answer.table() is None  # a single value is a sentence, not a 1 × 1 table
    assert answer.sentence() == f"Number of clients: {one(demo_var, 'SELECT COUNT(*) FROM client')}."
    assert answer.text.startswith(f"<@{USER}> ")  # the notification names the asker


def test_slash_command_text_is_read_as_typed(bot, slack, plan, fake_llm):
    bot.sender.command("how many clients have more than 2 pools &gt; 1 in R&amp;D &lt;test&gt;?")
    root = slack.wait_for(lambda s: next((m for m in s.messages.values() if m.thread_ts is None), None))
    answered(slack, CHANNEL, root.ts)
    asked = fake_llm.calls("generate")[-1].user
    assert "how many clients have more than 2 pools > 1 in R&D <test>?" in asked
    assert "&gt;" not in asked and "&amp;" not in asked
    assert "&amp;gt;" not in root.all_text() and "R&amp;D" in root.all_text()  # escaped once, for mrkdwn


def test_ask_help_and_choosing_a_database_per_channel(make_bot, slack, plan, demo_var):
    bot = make_bot(
        databases={"copy": DatabaseSettings(url=f"sqlite:///{demo_var / 'demo.sqlite'}")},
        access={"rules": [AccessRule(databases=["copy"], channels=["C0COPY"])]},
    )
    help_reply = bot.sender.command("help").json()
    assert help_reply["response_type"] == "ephemeral" and "/ask db" in json.dumps(help_reply)

    listing = json.dumps(bot.sender.command("db").json())
    assert "demo" in listing and "copy" not in listing  # C0001 may not use "copy"

    refused = bot.sender.command("db copy").json()
    assert refused["response_type"] == "ephemeral" and "may not use" in refused["text"]
    assert "no database named" in bot.sender.command("db nope").json()["text"]
    assert channel_database(bot.state, "T0001", CHANNEL) is None

    chosen = bot.sender.command("db copy", channel="C0COPY").json()
    assert chosen["response_type"] == "in_channel" and "copy" in chosen["text"]
    assert channel_database(bot.state, "T0001", "C0COPY") == "copy"

    _, ts = bot.sender.mention("how many clients?", channel="C0COPY")
    assert "`copy`" in answered(slack, "C0COPY", ts).all_text()
    _, ts = bot.sender.mention("how many clients?", channel=CHANNEL)
    assert "`demo`" in answered(slack, CHANNEL, ts).all_text()


def test_a_mention_in_our_thread_continues_the_conversation(bot, slack, plan, fake_llm, demo_var):
    _, ts = bot.sender.mention("how many clients are there?")
    answered(slack, CHANNEL, ts)
    plan.main_task = "Count the clients who signed up in 2024"
    plan.sql = "SELECT COUNT(*) AS clients FROM client WHERE signup_date LIKE '2024%'"
    bot.sender.message(
        "and only those who signed up in 2024?", channel=CHANNEL, channel_type="channel", thread_ts=ts
    )
    settle(bot)  # without a mention (thread_followups off): not a question
    assert len(slack.thread(CHANNEL, ts)) == 1
    bot.sender.mention("and only those who signed up in 2024?", thread_ts=ts)
    slack.wait_for(lambda s: len(s.thread(CHANNEL, ts)) == 2)
    answer = slack.thread(CHANNEL, ts)[1]  # the follow-up's own answer, in the same thread
    count = one(demo_var, "SELECT COUNT(*) FROM client WHERE signup_date LIKE '2024%'")
    assert answer.sentence() == f"Number of clients who signed up in 2024: {count}."
    follow_up_prompt = fake_llm.calls("generate")[-1].user
    assert "how many clients are there?" in follow_up_prompt  # the earlier turn is the context


def test_with_thread_followups_a_plain_reply_by_the_asker_continues(make_bot, slack, plan, demo_var):
    bot = make_bot(slack_settings={"thread_followups": True})
    _, ts = bot.sender.mention("how many clients are there?")
    answered(slack, CHANNEL, ts)
    plan.main_task = "Count the clients who signed up in 2024"
    plan.sql = "SELECT COUNT(*) AS clients FROM client WHERE signup_date LIKE '2024%'"
    bot.sender.message(
        "and only those who signed up in 2024?", channel=CHANNEL, channel_type="channel", thread_ts=ts
    )
    slack.wait_for(lambda s: len(s.thread(CHANNEL, ts)) == 2)
    count = one(demo_var, "SELECT COUNT(*) FROM client WHERE signup_date LIKE '2024%'")
    assert count in slack.thread(CHANNEL, ts)[1].sentence()


def test_someone_else_chatting_in_our_thread_is_left_alone(make_bot, slack, plan):
    bot = make_bot(slack_settings={"thread_followups": True})
    _, ts = bot.sender.mention("how many clients are there?")
    answered(slack, CHANNEL, ts)
    bot.sender.message(
        "how many pools?", channel=CHANNEL, channel_type="channel", thread_ts=ts, user="U0OTHER"
    )
    bot.sender.message("thanks!", channel=CHANNEL, channel_type="channel", thread_ts=ts)  # the asker
    bot.sender.message("lunch?", channel=CHANNEL, channel_type="channel")  # not in a thread at all
    settle(bot)
    assert len(slack.thread(CHANNEL, ts)) == 1


def test_help_in_a_dm_or_a_bare_mention_is_for_the_asker_only(bot, slack, plan):
    _, ts = bot.sender.message("help", channel="D0001")
    _, bare = bot.sender.mention("")
    notes = slack.wait_for(
        lambda s: len(s.calls_to("chat.postEphemeral")) == 2 and s.calls_to("chat.postEphemeral")
    )
    assert {(n.args["channel"], n.args["thread_ts"], n.args["user"]) for n in notes} == {
        ("D0001", ts, USER),
        (CHANNEL, bare, USER),
    }
    for note in notes:
        text = json.dumps(note.args["blocks"])
        assert "/ask db" in text and "`demo`" in text and "&lt;question&gt;" in text
    settle(bot)
    assert all(
        c.args["channel"] == "C0SENTINEL" for c in slack.calls_to("chat.postMessage")
    )  # nothing public
    assert [c.args["timestamp"] for c in slack.calls_to("reactions.add")] == [
        c.args["thread_ts"] for c in slack.calls_to("chat.postMessage")
    ]  # only the sentinel question was worked on


def test_direct_message_is_answered_in_a_thread(bot, slack, plan, demo_var):
    _, ts = bot.sender.message("how many clients are there?", channel="D0001")
    answer = answered(slack, "D0001", ts)
    assert answer.thread_ts == ts
    assert answer.sentence() == f"Number of clients: {one(demo_var, 'SELECT COUNT(*) FROM client')}."


# ---------------------------------------------------------------- errors


def test_a_transient_failure_offers_retry_and_retry_answers_in_a_new_message(
    bot, slack, plan, fake_llm, demo_var
):
    from tests.fakes.openai_server import Reply

    fake_llm.script("generate", *[Reply(status=500)] * 10)
    _, ts = bot.sender.mention("how many clients are there?")
    failed = answered(slack, CHANNEL, ts)
    text = failed.all_text()
    assert ":warning:" in text and "retry" in failed.action_ids() and "Try again in a minute" in text
    assert "Traceback" not in text and BOT_TOKEN not in text and "test-key" not in text
    assert "HTTP 500" not in text and failed.button_value("retry") not in failed.text
    slack.wait_for(lambda s: s.status_of(CHANNEL, ts) == "")  # no status left spinning

    fake_llm.queues["generate"].clear()
    bot.sender.click(
        "retry", failed.button_value("retry"), channel=CHANNEL, message_ts=failed.ts, thread_ts=ts,
        blocks=failed.blocks,
    )  # fmt: skip
    fixed = slack.wait_for(lambda s: len(s.thread(CHANNEL, ts)) == 2 and s.thread(CHANNEL, ts)[1])
    assert fixed.ts != failed.ts  # a new message: it notifies
    assert fixed.sentence() == f"Number of clients: {one(demo_var, 'SELECT COUNT(*) FROM client')}."
    closed = slack.messages[failed.ts]
    assert "retry" not in closed.action_ids() and "asked again" in closed.all_text()
    assert "Try again in a minute" in closed.all_text()  # what failed stays readable


def test_a_deterministic_error_has_no_retry_and_no_setup_advice(bot, slack, plan, fake_llm):
    from tests.fakes.openai_server import Reply

    fake_llm.script("generate", *[Reply(status=401)] * 10)  # the endpoint refuses the API key
    _, ts = bot.sender.mention("how many clients are there?")
    failed = answered(slack, CHANNEL, ts)
    text = failed.all_text()
    assert ":warning:" in text and "admins have been told" in text
    assert "retry" not in failed.action_ids()
    for advice in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "401", "config"):
        assert advice not in text


def test_an_internal_error_is_logged_under_the_trace_id_and_never_shown(
    bot, slack, plan, monkeypatch, caplog
):
    def explode(*args, **kwargs):
        raise RuntimeError("password=hunter2 leaked from deep inside")

    monkeypatch.setattr(bot.askbase, "ask", explode)
    with caplog.at_level(logging.ERROR, logger="bot.slack.answering"):
        _, ts = bot.sender.mention("how many clients are there?")
        failed = answered(slack, CHANNEL, ts)
    assert "hunter2" not in failed.all_text() and "RuntimeError" not in failed.all_text()
    assert "retry" in failed.action_ids()  # an unexpected failure may not happen twice
    trace_id = failed.button_value("retry")
    logged = [r for r in caplog.records if trace_id in r.getMessage()]
    assert logged and "hunter2" in str(logged[0].exc_info[1])


def test_rate_limited_slack_calls_are_retried(bot, slack, plan, demo_var):
    slack.fail("chat.postMessage", "ratelimited", status=429, retry_after=0)
    slack.fail("chat.update", "ratelimited", status=429, retry_after=0)
    _, ts = bot.sender.mention("how many clients are there?")
    answer = answered(slack, CHANNEL, ts)
    assert one(demo_var, "SELECT COUNT(*) FROM client") in answer.sentence()
    assert len(slack.calls_to("chat.postMessage")) == 2  # the 429, then the retry


def test_without_an_assistant_status_progress_is_a_streamed_plan(bot, slack, plan, demo_var):
    slack.fail("assistant.threads.setStatus", "not_allowed_token_type")
    _, ts = bot.sender.mention("how many clients are there?")
    answer = answered(slack, CHANNEL, ts)
    assert one(demo_var, "SELECT COUNT(*) FROM client") in answer.sentence()
    (stream,) = [m for m in slack.thread(CHANNEL, ts) if m.streamed]
    slack.wait_for(lambda s: not stream.streaming)
    assert stream.ts < answer.ts  # the plan came first; the answer is its own, new message
    start = slack.calls_to("chat.startStream")[0].args
    assert start["task_display_mode"] == "plan" and (
        start["recipient_user_id"],
        start["recipient_team_id"],
    ) == (USER, "T0001")
    assert list(stream.tasks()) == ["understand", "find", "join", "write", "check", "run"]
    assert set(stream.tasks().values()) == {"complete"}
    # the workspace refused the status once: the next question starts with the plan
    _, again = bot.sender.mention("how many clients are there?")
    answered(slack, CHANNEL, again)
    assert len(slack.calls_to("assistant.threads.setStatus")) == 1


def test_with_neither_status_nor_streaming_a_status_message_is_deleted_after_the_answer(
    bot, slack, plan, demo_var
):
    slack.fail("assistant.threads.setStatus", "not_allowed_token_type")
    slack.fail("chat.startStream", "unknown_method")
    _, ts = bot.sender.mention("how many clients are there?")
    answer = answered(slack, CHANNEL, ts)
    assert one(demo_var, "SELECT COUNT(*) FROM client") in answer.sentence()
    status = slack.wait_for(lambda s: s.deleted and s.deleted[0])
    assert status.thread_ts == ts and ":hourglass" in status.all_text()
    assert [m.ts for m in slack.thread(CHANNEL, ts)] == [answer.ts]  # nothing but the answer is left
    shown = [c.args["text"] for c in slack.calls_to("chat.update") if c.args["ts"] == status.ts]
    assert any("Writing SQL" in t for t in shown) and any("Running it" in t for t in shown)


def test_a_failed_upload_never_takes_the_answer_away(bot, slack, plan, demo_var):
    plan.sql = "SELECT name FROM client ORDER BY name"
    slack.fail("files.completeUploadExternal", "invalid_channel")
    _, ts = bot.sender.mention("list the client names")
    answer = answered(slack, CHANNEL, ts)
    note = slack.wait_for(
        lambda s: next((m for m in s.thread(CHANNEL, ts) if "CSV under it" in m.all_text()), None)
    )
    assert answer.table()[1:6] == hand(demo_var, "SELECT name FROM client ORDER BY name LIMIT 5")
    assert slack.messages[answer.ts].table() == answer.table() and note.ts != answer.ts


def test_slash_command_where_the_bot_is_not_a_member_says_how_to_fix_it(bot, slack, plan):
    slack.fail("chat.postMessage", "not_in_channel")
    assert (
        bot.sender.command(
            "how many clients?", channel="C0OUT", response_url=slack.response_url("out")
        ).status
        == 200
    )
    reply = slack.wait_for(lambda s: s.calls_to("response_url"))[0].args
    assert reply["response_type"] == "ephemeral" and "/invite" in reply["text"]


@pytest.mark.parametrize(
    ("refused", "table", "feedback", "posts"),
    [
        ({"data_table"}, "table", "context_actions", 1 + 1 + 1),  # refused once, then known
        ({"context_actions"}, "data_table", "buttons", 2 + 1 + 1),
        ({"data_table", "context_actions"}, "table", "buttons", 3 + 1 + 1),
    ],
)
def test_a_workspace_without_the_newest_blocks_gets_the_next_best(
    make_bot, demo_var, plan, refused, table, feedback, posts
):
    with FakeSlack(reject_block_types=refused) as slack:
        bot = make_bot(other_slack=slack)
        try:
            plan.sql = "SELECT name FROM client ORDER BY name LIMIT 5"
            for _ in range(2):
                _, ts = bot.sender.mention("name five clients")
                answer = answered(slack, CHANNEL, ts)
                assert table in answer.block_types() and answer.table()[1:] == hand(
                    demo_var, "SELECT name FROM client ORDER BY name LIMIT 5"
                )
                assert ("feedback_up" in answer.action_ids()) == (feedback == "buttons")
            # the first answer learned what the workspace refuses; the second was not refused again
            assert len(slack.calls_to("chat.postMessage")) == posts
        finally:
            bot.close()  # before this fake Slack stops


def test_a_workspace_without_table_blocks_gets_monospace(make_bot, demo_var, plan):
    with FakeSlack(reject_block_types={"table", "data_table"}) as slack:
        bot = make_bot(other_slack=slack)
        try:
            plan.sql = "SELECT name FROM client ORDER BY name LIMIT 5"
            _, ts = bot.sender.mention("name five clients")
            answer = answered(slack, CHANNEL, ts)
            assert "```" in answer.all_text()
            for (name,) in hand(demo_var, "SELECT name FROM client ORDER BY name LIMIT 5"):
                assert name in answer.all_text()
            assert answer.table() is None
        finally:
            bot.close()  # before this fake Slack stops


# ---------------------------------------------------------------- buttons


def _answer_for(bot: RunningBot, question: str):
    _, ts = bot.sender.mention(question)
    answer = answered(bot.slack, CHANNEL, ts)
    return answer, answer.button_value("show_sql"), ts


def test_show_sql_and_details_open_modals(bot, slack, plan):
    answer, trace_id, ts = _answer_for(bot, "how many clients are there?")
    bot.sender.click("show_sql", trace_id, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts)
    bot.sender.click("show_details", trace_id, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts)
    views = slack.wait_for(lambda s: len(s.calls_to("views.open")) == 2 and s.calls_to("views.open"))
    sql_view, details_view = (json.dumps(c.args["view"]) for c in views)
    assert "COUNT(*)" in sql_view and "FROM client" in sql_view
    for stage in ("retrieve", "scope", "generate", "execute", "select"):
        assert stage in details_view


def test_csv_button_uploads_the_result(bot, slack, plan, demo_var):
    plan.sql = "SELECT name FROM client ORDER BY name"
    answer, trace_id, ts = _answer_for(bot, "list the client names")
    slack.wait_for(lambda s: s.files_in(CHANNEL, ts))
    before = len(slack.files_in(CHANNEL, ts))
    bot.sender.click("get_csv", trace_id, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts)
    files = slack.wait_for(lambda s: len(s.files_in(CHANNEL, ts)) > before and s.files_in(CHANNEL, ts))
    assert read_csv(files[-1].content) == [["name"], *hand(demo_var, "SELECT name FROM client ORDER BY name")]
    # the export ran the SQL again, so it is in the audit log with who clicked, like the question
    exports = [e for e in entries_since(bot.state, dt.timedelta(hours=1)) if e["source"] == "csv"]
    assert [(e["user"], e["channel"], e["status"], e["trace_id"] != trace_id) for e in exports] == [
        (USER, CHANNEL, "answer", True)
    ]


def test_feedback_buttons_record_the_vote_and_show_it_on_the_answer(make_bot, slack, plan):
    bot = make_bot(verified={"analysts": {"users": [USER]}})  # an analyst's 👍 teaches
    plan.sql = "SELECT segment, COUNT(*) AS clients FROM client GROUP BY segment"
    _, ts = bot.sender.mention("clients per segment")
    answer = answered(slack, CHANNEL, ts)
    trace_id = answer.button_value("show_sql")
    positive = answer.feedback_values()["positive"]
    bot.sender.click("feedback", positive, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts,
                     blocks=answer.blocks, action_type="feedback_buttons")  # fmt: skip
    shown = slack.wait_for(
        lambda s: "confirmed this answer" in s.messages[answer.ts].all_text() and s.messages[answer.ts]
    )
    assert f"<@{USER}> (analyst) confirmed this answer" in shown.all_text()
    assert shown.table() == answer.table() and shown.feedback_values() == answer.feedback_values()
    assert [(v["verdict"], v["user"]) for v in feedback.feedback_for(bot.state, trace_id)] == [("up", USER)]
    assert [e.sql for e in feedback.examples_for(bot.state, "demo")] == [answer_sql(bot, trace_id)]

    negative = answer.feedback_values()["negative"]
    bot.sender.click("feedback", negative, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts, user="U0TWO",
                     blocks=shown.blocks, action_type="feedback_buttons")  # fmt: skip
    view = slack.wait_for(lambda s: s.calls_to("views.open"))[0].args["view"]
    assert view["callback_id"] == "feedback_down"
    bot.sender.view("view_closed", "feedback_down", private_metadata=view["private_metadata"], user="U0TWO")
    slack.wait_for(lambda s: len(feedback.feedback_for(bot.state, trace_id)) == 2)
    assert "<@U0TWO> said this answer is wrong" in slack.messages[answer.ts].all_text()
    assert "confirmed this answer" not in slack.messages[answer.ts].all_text()  # the latest vote shows


def test_thumbs_up_teaches_the_generator_a_confirmed_example(make_bot, slack, plan, fake_llm):
    bot = make_bot(verified={"analysts": {"users": [USER]}})  # an analyst's 👍 teaches
    answer, trace_id, ts = _answer_for(bot, "how many clients are there?")
    bot.sender.click("feedback_up", trace_id, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts)
    note = slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"))[0].args
    assert note["user"] == USER and "example" in note["text"]
    stored = feedback.examples_for(bot.state, "demo")
    assert [(e.question, e.sql) for e in stored] == [
        ("how many clients are there?", answer_sql(bot, trace_id))
    ]

    _answer_for(bot, "how many clients are there in total?")
    prompt = fake_llm.calls("generate")[-1]
    assert answer_sql(bot, trace_id) in prompt.system + prompt.user


def answer_sql(bot: RunningBot, trace_id: str) -> str:
    turn = turn_by_trace(bot.state, trace_id)
    assert turn is not None
    return turn.sql


def test_thumbs_down_asks_what_was_wrong_and_records_it(bot, slack, plan):
    answer, trace_id, ts = _answer_for(bot, "how many clients are there?")
    bot.sender.click("feedback_down", trace_id, channel=CHANNEL, message_ts=answer.ts, thread_ts=ts)
    view = slack.wait_for(lambda s: s.calls_to("views.open"))[0].args["view"]
    assert view["callback_id"] == "feedback_down" and view["notify_on_close"] is True
    values = {"comment": {"comment": {"type": "plain_text_input", "value": "only active clients count"}}}
    assert (
        bot.sender.view(
            "view_submission", "feedback_down", private_metadata=view["private_metadata"], values=values
        ).status
        == 200
    )
    slack.wait_for(lambda s: feedback.feedback_for(bot.state, trace_id))
    votes = feedback.feedback_for(bot.state, trace_id)
    assert [(v["verdict"], v["comment"], v["user"]) for v in votes] == [
        ("down", "only active clients count", USER)
    ]
    assert feedback.examples_for(bot.state, "demo") == []

    # closing the modal without a word still counts the vote
    bot.sender.view("view_closed", "feedback_down", private_metadata=view["private_metadata"], user="U0TWO")
    slack.wait_for(lambda s: len(feedback.feedback_for(bot.state, trace_id)) == 2)
    assert feedback.feedback_for(bot.state, trace_id)[1]["user"] == "U0TWO"


# ---------------------------------------------------------------- keyword mode (no LLM)


def test_keyword_mode_answers_a_mention_without_an_llm(make_bot, slack):
    bot = make_bot(llm=False, engine={"fallback_to_keyword": False})
    _, ts = bot.sender.mention("how many clients are there?")
    answer = answered(slack, CHANNEL, ts)
    assert "Keyword mode" in answer.all_text() and "OPENAI" not in answer.all_text()
    assert answer.sentence().endswith(": 300.") and answer.table() is None


def test_keyword_mode_large_result_comes_with_a_csv(make_bot, slack):
    bot = make_bot(llm=False, engine={"fallback_to_keyword": False})
    _, ts = bot.sender.mention("list the clients")
    answer = answered(slack, CHANNEL, ts)
    assert "Keyword mode" in answer.all_text()
    csvs = slack.wait_for(lambda s: [f for f in s.files_in(CHANNEL, ts) if f.filename.endswith(".csv")])
    assert len(read_csv(csvs[0].content)) > 101


# ---------------------------------------------------------------- many workspaces


def test_oauth_install_stores_the_workspace_and_its_token_answers(
    demo_var, state_url, slack, llm_settings, plan
):
    pytest.importorskip("greenlet")  # slack_sdk's SQLAlchemy stores import sqlalchemy.ext.asyncio
    settings = load_settings(
        var_dir=str(demo_var),
        state_url=state_url,
        slack={
            "client_id": "111.222",
            "client_secret": "oauth-client-secret",
            "signing_secret": SIGNING_SECRET,
            "api_base_url": slack.base_url,
        },
    )
    bot = RunningBot(Askbase(settings, llm=LLM(llm_settings)), slack)
    try:
        base = f"http://127.0.0.1:{bot.port}"
        with urllib.request.urlopen(f"{base}/slack/install") as page:
            html = page.read().decode()
            cookie = page.headers["Set-Cookie"].split(";")[0]
        authorize = re.search(r'<a href="([^"]+)"', html).group(1).replace("&amp;", "&")
        query = parse_qs(urlparse(authorize).query)
        assert authorize.startswith(slack.url + "oauth/v2/authorize")  # SLACK_API_BASE_URL's site
        assert query["client_id"] == ["111.222"] and "chat:write" in query["scope"][0]

        callback = f"{base}/slack/oauth_redirect?code=abc&state={query['state'][0]}"
        with urllib.request.urlopen(urllib.request.Request(callback, headers={"Cookie": cookie})) as done:
            assert done.status == 200
        assert slack.calls_to("oauth.v2.access")

        _, ts = bot.sender.mention("how many clients are there?")
        answered(slack, CHANNEL, ts)
        assert {c.token for c in slack.calls_to("chat.postMessage")} == {slack.installed_token}
    finally:
        bot.close()
