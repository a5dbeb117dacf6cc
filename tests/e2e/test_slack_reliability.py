"""The Slack app under hostile requests and a failing state database, through its real HTTP server.

Unsigned, oversized and malformed requests are refused before Bolt sees them, without a
traceback and without their bodies reaching the log; a signed slash command or click replayed
byte for byte runs once; a locked state database costs the asker one clear message and never
the 3-second ack; `/healthz` says whether the state database can be written; a question too long
to take is refused and only a preview of it is kept anywhere.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import shutil
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.askbase import Askbase
from core.llm import LLM
from core.schedules import store
from core.settings import load_settings
from core.state.schema import audit, feedback, question_claims, traces, turns
from tests.servers import admin_engine
from tests.slack_harness import RunningBot
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET, signature

CHANNEL = "C0001"
USER = "U0001"
SECRET_MARKER = "hostile-body-9f8e7d"


@pytest.fixture
def make_bot(make_bot):
    """The shared make_bot (tests/conftest.py) with keyword fallback as configured by default;
    keywords are slack settings."""

    def make(**slack_overrides) -> RunningBot:
        return make_bot(engine={"fallback_to_keyword": True}, slack_settings=slack_overrides)

    return make


@pytest.fixture
def bot(make_bot) -> RunningBot:
    return make_bot()


def raw_post(bot: RunningBot, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", bot.port, timeout=10)
    try:
        conn.request("POST", "/slack/events", body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


def signed_headers(body: bytes, content_type: str, timestamp: int | None = None) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature(SIGNING_SECRET, ts, body.decode()),
    }


def health(bot: RunningBot) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{bot.port}/healthz", timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


# ---------------------------------------------------------------- request hygiene


def test_unsigned_malformed_and_oversized_requests_are_refused_quietly(make_bot, slack, plan, caplog):
    bot = make_bot(max_body_bytes=20_000)
    caplog.set_level(logging.DEBUG)
    garbage = f"{{not json at all {SECRET_MARKER}".encode() + b"\xff\xfe"
    cases = [
        (garbage, {"Content-Type": "application/json"}),  # unsigned, not even JSON or UTF-8
        (garbage, {"Content-Type": "application/x-www-form-urlencoded"}),
        (f"payload={SECRET_MARKER}%7B".encode(), {"Content-Type": "application/x-www-form-urlencoded"}),
        (
            json.dumps({"type": "event_callback", "x": SECRET_MARKER}).encode(),
            {"Content-Type": "application/json"},
        ),
        (
            garbage,
            {
                "Content-Type": "application/json",
                "X-Slack-Signature": "v0=00",
                "X-Slack-Request-Timestamp": "x",
            },
        ),
    ]
    for body, headers in cases:
        status, text = raw_post(bot, body, headers)
        assert status == 401 and "Traceback" not in text
    # over the limit: refused before the signature is even looked at, signed or not
    big = (SECRET_MARKER * 4000).encode()
    assert raw_post(bot, big, {"Content-Type": "application/json"})[0] == 413
    assert raw_post(bot, big, signed_headers(big, "application/json"))[0] == 413
    # signed but not parseable: only a holder of the secret can send one; 400, still no traceback
    bad = b'{"type": "event_callback", '
    status, text = raw_post(bot, bad, signed_headers(bad, "application/json"))
    assert status == 400 and "Traceback" not in text
    assert SECRET_MARKER not in caplog.text and "Traceback" not in caplog.text
    assert not slack.calls_to("chat.postMessage")
    # the app is unharmed: a real question is still answered
    _, ts = bot.sender.mention("how many clients are there?")
    slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=15)


def test_request_lines_are_logged_without_tokens_or_query_strings(bot, caplog):
    """A signed link (`/files/<token>`) sent to this server, a query string, a request line too
    malformed to parse: the log has the method, the path's first segment and the status."""
    caplog.set_level(logging.DEBUG)
    token = "sig-9f8e7d6c5b4a.secret-link-token"
    for path in (f"/files/{token}", f"/slack/events?token={token}", f"/healthz?{token}"):
        conn = http.client.HTTPConnection("127.0.0.1", bot.port, timeout=10)
        try:
            conn.request("GET", path)
            conn.getresponse().read()
        finally:
            conn.close()
    with socket.create_connection(("127.0.0.1", bot.port), timeout=10) as raw:
        raw.sendall(f"GET /files/{token} HTTP/9.9x\r\n\r\n".encode())  # echoed in the error it makes
        raw.recv(4096)
    deadline = time.monotonic() + 5
    while "refused a request: 400" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "GET /files/… 404" in caplog.text and "GET /healthz 200" in caplog.text
    assert "refused a request: 400" in caplog.text
    assert "secret-link-token" not in caplog.text and "sig-9f8e7d6c5b4a" not in caplog.text


def command_body(text: str, trigger: str = "trigger.replayed") -> bytes:
    return urlencode(
        {
            "token": "legacy-verification-token",
            "team_id": "T0001",
            "team_domain": "askbase-test",
            "channel_id": CHANNEL,
            "channel_name": "general",
            "user_id": USER,
            "user_name": "u0001",
            "command": "/ask",
            "text": text,
            "api_app_id": "A0001",
            "response_url": "http://127.0.0.1:9/respond",
            "trigger_id": trigger,
        }
    ).encode()


def test_a_replayed_signed_ask_schedule_makes_one_schedule(bot, slack, plan):
    body = command_body("schedule every weekday at 9:00 how many clients are there?")
    headers = signed_headers(body, "application/x-www-form-urlencoded")
    for _ in range(3):  # the same signed bytes, as an attacker who captured them would resend them
        status, text = raw_post(bot, body, headers)
        assert status == 200 and not text
    slack.wait_for(lambda s: any("scheduled" in m.all_text() for m in s.messages.values()), timeout=15)
    time.sleep(1.0)  # a second schedule, had one been started, would be well on its way by now
    assert len(store.for_channel(bot.state, "T0001", CHANNEL)) == 1
    assert sum("scheduled" in m.all_text() for m in slack.messages.values()) == 1
    # the same command sent again by the person (a new request) is a new schedule, as it should be
    again = command_body("schedule every weekday at 9:00 how many clients are there?", "trigger.new")
    assert raw_post(bot, again, signed_headers(again, "application/x-www-form-urlencoded"))[0] == 200
    slack.wait_for(lambda s: sum("scheduled" in m.all_text() for m in s.messages.values()) == 2, timeout=15)


def test_a_replayed_signed_question_and_click_count_once(bot, slack, plan):
    body = command_body("how many clients are there?")
    headers = signed_headers(body, "application/x-www-form-urlencoded")
    assert raw_post(bot, body, headers)[0] == 200
    answer = slack.wait_for(
        lambda s: next((m for m in s.messages.values() if m.channel == CHANNEL and m.result()), None),
        timeout=15,
    )
    assert raw_post(bot, body, headers)[0] == 200
    with bot.state.connect() as conn:
        trace_id = conn.execute(sa.select(turns.c.trace_id)).scalar_one()
    click = urlencode(
        {
            "payload": json.dumps(
                {
                    "type": "block_actions",
                    "user": {"id": USER, "username": "u0001", "team_id": "T0001"},
                    "api_app_id": "A0001",
                    "token": "legacy-verification-token",
                    "container": {"type": "message", "message_ts": answer.ts, "channel_id": CHANNEL},
                    "trigger_id": "trigger.click",
                    "team": {"id": "T0001", "domain": "askbase-test"},
                    "channel": {"id": CHANNEL, "name": "general"},
                    "message": {"type": "message", "ts": answer.ts, "user": "UBOT", "text": ""},
                    "response_url": "http://127.0.0.1:9/respond",
                    "actions": [
                        {"type": "button", "action_id": "feedback_up", "block_id": "b", "value": trace_id}
                    ],
                }
            )
        }
    ).encode()
    click_headers = signed_headers(click, "application/x-www-form-urlencoded")
    for _ in range(3):
        assert raw_post(bot, click, click_headers)[0] == 200
    time.sleep(1.0)
    with bot.state.connect() as conn:
        votes = conn.execute(
            sa.select(sa.func.count()).select_from(feedback).where(feedback.c.trace_id == trace_id)
        ).scalar()
    assert votes == 1
    assert sum(1 for m in slack.messages.values() if m.channel == CHANNEL and m.result()) == 1


# ---------------------------------------------------------------- a state database in trouble


def test_a_locked_state_database_gets_the_asker_one_message_within_the_ack(make_bot, slack, plan, tmp_path):
    bot = make_bot(state_wait_s=1.0, claim_wait_s=1.0)
    status, report = health(bot)
    assert status == 200 and report["state_db"]["ok"]
    lock = sqlite3.connect(tmp_path / "state.sqlite", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # a backup tool, a stuck process, a migration holding the file
    try:
        started = time.monotonic()
        response, ts = bot.sender.mention("how many clients are there?")
        assert response.status == 200 and time.monotonic() - started < 3
        started = time.monotonic()
        command = bot.sender.command("how many clients are there?", channel="C0002")
        assert command.status == 200 and time.monotonic() - started < 3
        assert "not responding" in command.json()["text"] and command.json()["response_type"] == "ephemeral"
        note = slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"), timeout=10)
        assert len(note) == 1 and note[0].args["user"] == USER and note[0].args["thread_ts"] == ts
        assert "not responding" in note[0].args["text"]
        status, report = health(bot)
        assert status == 503 and not report["state_db"]["ok"]
        time.sleep(1.5)
        assert len(slack.calls_to("chat.postEphemeral")) == 1
        assert not slack.calls_to("chat.postMessage")  # no status message, no answer, no second word
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    # the claim that was still waiting lands now; the asker was told to ask again, so nothing follows
    time.sleep(2.0)
    assert not slack.calls_to("chat.postMessage")
    with bot.state.connect() as conn:
        assert conn.execute(sa.select(question_claims.c.state)).scalars().all() in ([], ["answered"])
    assert health(bot)[0] == 200
    _, ts2 = bot.sender.mention("how many clients are there?")
    assert slack.wait_for(lambda s: s.answer_in(CHANNEL, ts2), timeout=15).result() == [["300"]]


def read_only(path: Path) -> Callable[[], None]:
    """Make `path` read-only for this process as the operating system sees it — chmod, or, for
    root (whom a mode does not stop), the immutable flag — and return what undoes it; skip the
    test where neither can be done."""
    path.chmod(0o444)
    if not os.access(path, os.W_OK):
        return lambda: path.chmod(0o644)
    path.chmod(0o644)
    if (
        shutil.which("chattr")
        and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    ):
        if not os.access(path, os.W_OK):
            return lambda: subprocess.run(["chattr", "-i", str(path)], check=True)
        subprocess.run(["chattr", "-i", str(path)], check=True)
    pytest.skip("this process may write any file here (root without chattr): nothing is read-only")


def healthy_after_cache(bot: RunningBot) -> tuple[int, dict]:
    time.sleep(1.1)  # the probe's result is shared for a second
    return health(bot)


def test_healthz_is_503_once_the_sqlite_state_file_is_made_read_only_under_the_running_bot(bot, tmp_path):
    """Issue 31: the pool's connections keep writing through file descriptors opened before the
    file became read-only (and SQLite hands them to new connections), so /healthz said 200; the
    next process to open the file cannot write a thing."""
    assert health(bot)[0] == 200
    undo = read_only(tmp_path / "state.sqlite")
    try:
        status, report = healthy_after_cache(bot)
        assert status == 503 and report["status"] == "unhealthy"
        assert report["state_db"]["ok"] is False and "read-only" in report["state_db"]["detail"]
        assert str(tmp_path) not in json.dumps(report)  # what failed, never where
    finally:
        undo()
    assert healthy_after_cache(bot)[0] == 200


def test_healthz_is_503_on_a_sqlite_state_database_opened_read_only(
    slack, llm_settings, demo_var, tmp_path, state_url
):
    path = make_url(state_url).database
    bot = RunningBot(
        Askbase(
            load_settings(
                var_dir=str(demo_var),
                state_url=f"sqlite:///file:{path}?mode=ro&uri=true",
                slack={
                    "bot_token": BOT_TOKEN,
                    "signing_secret": SIGNING_SECRET,
                    "api_base_url": slack.base_url,
                },
            ),
            llm=LLM(llm_settings),
        ),
        slack,
    )
    try:
        status, report = health(bot)
        assert status == 503 and "readonly" in report["state_db"]["detail"]
    finally:
        bot.close()


@pytest.mark.postgres
def test_healthz_is_503_when_the_postgresql_state_database_turns_read_only(
    slack, llm_settings, demo_var, postgres_state
):
    """`ALTER DATABASE … SET default_transaction_read_only = on` (or a failover to a standby):
    sessions the pool opened before keep writing, every new one is read-only."""
    name = make_url(postgres_state).database
    bot = RunningBot(
        Askbase(
            load_settings(
                var_dir=str(demo_var),
                state_url=postgres_state,
                slack={
                    "bot_token": BOT_TOKEN,
                    "signing_secret": SIGNING_SECRET,
                    "api_base_url": slack.base_url,
                },
            ),
            llm=LLM(llm_settings),
        ),
        slack,
    )
    admin = admin_engine("ASKBASE_TEST_POSTGRES_URL").execution_options(isolation_level="AUTOCOMMIT")
    try:
        assert health(bot)[0] == 200
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on'))
        status, report = healthy_after_cache(bot)
        assert status == 503 and "read-only transaction" in report["state_db"]["detail"]
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" RESET default_transaction_read_only'))
        assert healthy_after_cache(bot)[0] == 200
    finally:
        bot.close()
        admin.dispose()


# ---------------------------------------------------------------- oversize questions


def test_an_oversize_question_is_refused_and_only_a_preview_is_kept(bot, slack, plan, fake_llm, caplog):
    caplog.set_level(logging.DEBUG)
    tail = "X" * 6000 + " end-of-the-long-question"
    _, ts = bot.sender.mention(f"how many clients are there? {tail}")
    reply = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=15)
    assert "keep it under 2,000" in reply.all_text()
    assert not fake_llm.calls()  # refused at the door
    with bot.state.connect() as conn:
        stored = [
            *conn.execute(sa.select(audit.c.question)).scalars(),
            *conn.execute(sa.select(turns.c.question)).scalars(),
            *(json.dumps(d) for d in conn.execute(sa.select(traces.c.data)).scalars()),
            *(json.dumps(p) for p in conn.execute(sa.select(question_claims.c.payload)).scalars()),
        ]
    assert len(stored) == 4
    assert all("end-of-the-long-question" not in s and len(s) < 1500 for s in stored)
    assert all("more characters dropped" in s for s in stored)
    assert "end-of-the-long-question" not in caplog.text
    # nothing offers to retry it, and whatever re-asks what was stored ("Ask again" on the Home tab)
    # gets the preview refused again, never answered as a question of its own
    assert "retry" not in reply.action_ids()
    with bot.state.connect() as conn:
        kept = conn.execute(sa.select(turns.c.question)).scalar_one()
    again = bot.askbase.ask(kept, source="slack", user="U0001", channel=CHANNEL)
    assert again.status == "error" and "too long to keep" in (again.error or "") and not fake_llm.calls()
