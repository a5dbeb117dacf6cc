"""Nothing Askbase posts in Slack lets data or words ping anyone or turn into markup.

Slack parses the top-level `text` of a message (what notifications show) and every `mrkdwn`
text object: `<!channel>`, `<!here|here>`, `<@U1>` there are live — they ping — and `&`, `<`, `>`
must be written `&amp;`, `&lt;`, `&gt;`. A database whose rows, names and description carry those
strings, and questions typed with them, go through every kind of message Askbase posts —
answers (a table, a single value, /ask with its root and broadcast), errors, clarifying questions
and their Details, the SQL and Details modals, votes, teaching, verification, schedules (made,
listed, run, failed, paused), App Home — through the real Bolt app and the fake Slack API; then
every text Slack would parse is read, and none of the strings is found live (while their escaped
forms are, so the probes did get through).
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.schedule_runs import run_and_post
from bot.slack.schedule_posts import Runner
from core.bench.fakes.slack_api import FakeSlack, Message
from core.schedules import store
from core.schedules.conditions import Condition
from core.schedules.triggers import interval_spec
from core.settings import DatabaseSettings
from tests.clock import Clock
from tests.e2e.test_slack_home import buttons, click_on_home, open_home
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply
from tests.slack_harness import RunningBot
from tests.slack_requests import BOT_TOKEN

CHANNEL = "C0001"
ASKER = "U0ASKER"
ANALYST = "U0ANA"
PROBES = ("<!channel>", "<!here|here>", "<@U1>", "<b>", "Bolt & Co")
NASTY = "<b>bold</b> & <!channel> <!here|here> <@U1> Bolt & Co"
ROWS = [
    (1, "<!channel> urgent", "<@U1>", 30.0),
    (2, "<!here|here> now", "Bolt & Co", 20.0),
    (3, "<b>bold</b> & co", "<!channel>", 10.0),
]
TABLE = '"<b> & <!channel>"'  # a table whose very name is a probe (errors quote it)


def probe_db(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, label TEXT, owner TEXT, amount REAL)")
        conn.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", ROWS)
        conn.execute(f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, label TEXT)")
        conn.execute(f"INSERT INTO {TABLE} VALUES (1, ?)", (NASTY,))
    return path


def typed(text: str) -> str:
    """What Slack sends for text a person typed: &, < and > as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def parsed_texts(slack: FakeSlack, extra: list[dict[str, Any]] = ()) -> list[tuple[str, str]]:
    """Every text Slack parses as mrkdwn in what Askbase sent: a message's (and a response's)
    top-level `text`, streamed markdown, and each `mrkdwn` text object of blocks and views."""
    found: list[tuple[str, str]] = []

    def walk(where: str, node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn" and isinstance(node.get("text"), str):
                found.append((where, node["text"]))
            for value in node.values():
                walk(where, value)
        elif isinstance(node, list):
            for item in node:
                walk(where, item)

    messages = {"chat.postMessage", "chat.update", "chat.postEphemeral", "response_url"}
    streams = {"chat.startStream", "chat.appendStream", "chat.stopStream"}
    for call in slack.calls:
        args = call.args
        if call.method in messages and isinstance(args.get("text"), str):
            found.append((call.method, args["text"]))
        if call.method in streams and isinstance(args.get("markdown_text"), str):
            found.append((call.method, args["markdown_text"]))
        walk(call.method, args.get("blocks"))
        walk(call.method, args.get("view"))
        walk(call.method, args.get("chunks"))
    for body in extra:  # slash command acks: their text and blocks are a message too
        if isinstance(body.get("text"), str):
            found.append(("ack", body["text"]))
        walk("ack", body.get("blocks"))
    return found


def assert_nothing_live(slack: FakeSlack, extra: list[dict[str, Any]] = ()) -> None:
    texts = parsed_texts(slack, extra)
    live = [(where, probe, text[:200]) for where, text in texts for probe in PROBES if probe in text]
    assert live == [], live
    everything = "\n".join(t for _, t in texts)
    for escaped in ("&lt;!channel&gt;", "&lt;!here|here&gt;", "&lt;@U1&gt;", "&lt;b&gt;", "Bolt &amp; Co"):
        assert escaped in everything, f"{escaped} never reached a message: the probe did not get through"


def answer_in(slack: FakeSlack, ts: str, channel: str = CHANNEL, **kw: Any) -> Message:
    return slack.wait_for(
        lambda s: next(
            (m for m in s.thread(channel, ts) if m.ts != ts and "show_sql" in m.action_ids()), None
        ),
        timeout=kw.get("timeout", 20),
    )


@pytest.fixture
def probe_bot(make_bot, tmp_path):
    path = probe_db(tmp_path / "probe.sqlite")
    database = DatabaseSettings(url=f"sqlite:///{path}", description=f"Notes for {NASTY}")

    def make(**overrides: Any) -> RunningBot:
        return make_bot(default_db="probe", databases={"probe": database}, **overrides)

    return make


def test_no_probe_is_live_in_answers_errors_votes_modals_teaching_or_app_home(
    probe_bot, slack, plan, fake_llm
):
    bot = probe_bot(verified={"analysts": {"users": [ANALYST]}})
    acks: list[dict[str, Any]] = []

    # an answer with a table, asked with every probe in the question
    plan.sql = "SELECT label, owner, amount FROM notes ORDER BY amount DESC"
    _, ts = bot.sender.mention(typed(f"notes of {NASTY}?"), channel=CHANNEL, user=ASKER)
    table = answer_in(slack, ts)
    assert any("<!channel> urgent" in " ".join(r) for r in table.table())  # the data, as it is

    # a single value: the sentence is the whole answer
    plan.sql = "SELECT label FROM notes WHERE id = 1"
    _, ts1 = bot.sender.mention(typed(f"first label of {NASTY}?"), channel=CHANNEL, user=ASKER)
    single = answer_in(slack, ts1)

    # /ask: the root names the question, the answer is broadcast to the channel
    plan.sql = "SELECT owner, amount FROM notes ORDER BY amount"
    acks.append(bot.sender.command(typed(f"owners of {NASTY}"), channel=CHANNEL, user=ASKER).json() or {})
    slack.wait_for(lambda s: any(m.broadcast for m in s.messages.values()), timeout=20)

    # an error that quotes what the database said (a table named with the probes)
    plan.sql = f'SELECT label FROM {TABLE[:-1]} gone"'
    _, ts2 = bot.sender.mention(typed(f"labels of the gone {NASTY}"), channel=CHANNEL, user=ANALYST)
    failed = slack.wait_for(
        lambda s: next((m for m in s.thread(CHANNEL, ts2) if "show_details" in m.action_ids()), None),
        timeout=20,
    )
    assert "no such table: &lt;b&gt; &amp; &lt;!channel&gt; gone" in failed.text  # an analyst reads it all
    _, ts4 = bot.sender.mention(typed(f"labels of the gone {NASTY}"), channel=CHANNEL, user=ASKER)
    other = slack.wait_for(
        lambda s: next((m for m in s.thread(CHANNEL, ts4) if "show_details" in m.action_ids()), None),
        timeout=20,
    )
    assert "rejected the query I wrote" in other.text and "no such table" not in other.all_text()

    # the buttons under the answer: Show SQL, Details, 👍 (not an analyst), 👎, ✅ Verify (analyst)
    trace_id = table.button_value("show_sql")
    for action in ("show_sql", "show_details"):
        bot.sender.click(action, trace_id, channel=CHANNEL, message_ts=table.ts, thread_ts=ts, user=ASKER)
    bot.sender.click("feedback", table.feedback_values()["positive"], channel=CHANNEL, message_ts=table.ts,
                     thread_ts=ts, user=ASKER, blocks=table.blocks, action_type="feedback_buttons")  # fmt: skip
    bot.sender.click(
        "verified_verify", trace_id, channel=CHANNEL, message_ts=table.ts, thread_ts=ts, user=ANALYST
    )
    slack.wait_for(
        lambda s: (
            len(s.calls_to("views.open")) >= 2 and "verified" in str(s.calls_to("chat.postMessage")[-3:])
        ),
        timeout=20,
    )

    # teaching: a definition proposed with the probes in its words
    fake_llm.respond("define", lambda body: Reply(content="No draft.\n" + mr.json_fenced({"kind": "none"})))
    _, ts3 = bot.sender.mention(typed(f"define {NASTY} as amount > 5"), channel=CHANNEL, user=ASKER)
    slack.wait_for(
        lambda s: len(s.thread(CHANNEL, ts3)) > 0 or any(e.thread_ts == ts3 for e in s.ephemerals), timeout=20
    )

    # App Home: recent questions, the database's description, the analyst's votes to review
    open_home(bot, slack, ASKER)
    view = open_home(bot, slack, ANALYST)
    assert "Votes to review" in json.dumps(view)
    again = next(b for b in buttons(view) if b["text"]["text"] == "Use as example")
    click_on_home(bot, "teach_example", again["value"], user=ANALYST)
    slack.wait_for(lambda s: "is an example now" in json.dumps(s.home_views.get(ANALYST, {})))

    # /ask db with a name that is not there
    acks.append(bot.sender.command(typed("db <b>&<!channel>"), channel=CHANNEL, user=ASKER).json() or {})
    assert_nothing_live(slack, acks)
    assert single.text.endswith(": &lt;!channel&gt; urgent.")  # the notification, escaped


def test_no_probe_is_live_in_clarifying_questions(probe_bot, slack, fake_llm):
    """The writer's two readings disagree and the judge asks back, in words the model chose."""
    bot = probe_bot()
    by_owner = "SELECT COUNT(*) AS notes FROM notes WHERE owner = 'Bolt & Co'"
    by_label = "SELECT COUNT(*) AS notes FROM notes WHERE label LIKE '%<%'"
    fake_llm.respond(
        "generate",
        lambda body: Reply(content=mr.candidates(by_owner, by_label, task="Notes", reading="by label")),
    )
    fake_llm.respond(
        "judge",
        lambda body: Reply(
            content=mr.json_fenced(
                {
                    "choice": "A",
                    "ambiguous": True,
                    "question": f"Which {NASTY} do you mean?",
                    "readings": ["the owner Bolt & Co <@U1>", "a label with <b> <!channel>"],
                    "why": "two readings",
                }
            )
        ),
    )
    _, ts = bot.sender.mention(typed(f"how many notes of {NASTY}?"), channel=CHANNEL, user=ASKER)
    question = copy.deepcopy(
        slack.wait_for(
            lambda s: next((m for m in s.thread(CHANNEL, ts) if "clarify_other" in m.action_ids()), None),
            timeout=20,
        )
    )
    bot.sender.click("clarify_details", question.button_value("clarify_details"), channel=CHANNEL,
                     message_ts=question.ts, thread_ts=ts, user=ASKER)  # fmt: skip
    option = question.button_value("clarify_option_0")
    bot.sender.click(
        "clarify_option_0", option, channel=CHANNEL, message_ts=question.ts, thread_ts=ts, user=ASKER
    )
    bot.sender.click(
        "clarify_option_1",
        question.button_value("clarify_option_1"),
        channel=CHANNEL,
        message_ts=question.ts,
        thread_ts=ts,
        user="U0OTHER",
    )  # fmt: skip — told privately
    answer_in(slack, ts)
    slack.wait_for(lambda s: s.calls_to("views.open") and s.ephemerals)
    assert_nothing_live(slack)


def test_no_probe_is_live_in_schedules_made_listed_run_failed_or_paused(probe_bot, slack, plan, tmp_path):
    bot = probe_bot()
    plan.sql = "SELECT label, amount FROM notes ORDER BY amount DESC"
    acks: list[dict[str, Any]] = []
    acks.append(
        bot.sender.command(
            typed(f"schedule every 2 hours notes of {NASTY}"), channel=CHANNEL, user=ASKER
        ).json()
        or {}
    )
    slack.wait_for(lambda s: any("scheduled" in m.all_text() for m in s.messages.values()), timeout=20)
    acks.append(bot.sender.command("schedules", channel=CHANNEL, user=ASKER).json() or {})

    # the worker's side: a run posted, then failures until it pauses (the owner is told by DM)
    clock = Clock()
    client = WebClient(token=BOT_TOKEN, base_url=slack.base_url)
    runner = Runner(bot.askbase, lambda _team: client, worker_id="test", clock=clock)
    made = store.for_channel(bot.state, "T0001", CHANNEL)[0]
    clock.advance(7200)
    assert run_and_post(runner, made.id).status == "posted"
    broken = store.create(
        bot.state, team="T0001", channel=CHANNEL, owner=ASKER, question=f"gone {NASTY}",
        sql=f"SELECT label FROM {TABLE}", database="probe", trigger=interval_spec(60),
        condition=Condition(), now=clock(),
    )  # fmt: skip
    with sqlite3.connect(tmp_path / "probe.sqlite") as conn:
        conn.execute(f"DROP TABLE {TABLE}")
    for _ in range(6):
        clock.advance(120)
        run_and_post(runner, broken.id)
    assert store.get(bot.state, broken.id).paused
    open_home(bot, slack, ASKER)  # the person's schedules on App Home
    assert_nothing_live(slack, acks)
