"""The audit log: every entry point leaves a row, `python -m bot audit` shows it, no secret in it."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import os
import subprocess
import sys

import pytest

from bot.cli import main
from bot.console import run_console
from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.llm import LLM
from core.settings import DatabaseSettings, load_settings
from core.state import open_state
from core.state.audit import entries_since, parse_since
from core.state.schema import audit
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply
from tests.slack_harness import RunningBot
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET

API_KEY = "sk-test-0123456789abcdefghijklmnop"
DB_PASSWORD = "pa55-w0rd-never-shown"


def scripted(fake_llm) -> None:
    fake_llm.respond(
        "understand",
        lambda body: Reply(content=mr.json_fenced(mr.understanding("Count the clients", [], ["clients"]))),
    )
    fake_llm.respond(
        "generate", mr.writing("SELECT COUNT(*) AS clients FROM client", task="Number of clients")
    )


@pytest.fixture
def env(fake_llm, demo_var, tmp_path, monkeypatch):
    """What an operator exports before running `python -m bot ...`."""
    scripted(fake_llm)
    values = {
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": fake_llm.base_url,
        "ASKBASE_VAR_DIR": str(demo_var),
        "ASKBASE_STATE_URL": f"sqlite:///{tmp_path / 'state.sqlite'}",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def rows(env) -> list[dict]:
    engine = open_state(env["ASKBASE_STATE_URL"])
    try:
        return entries_since(engine, parse_since("1h"))
    finally:
        engine.dispose()


def test_cli_and_console_questions_are_audited_and_shown(env, capsys):
    assert main(["ask", "How many clients are there?"]) == 0
    app = Askbase(load_settings())
    try:
        run_console(app, stdin=io.StringIO("How many clients are there?\n:quit\n"), stdout=io.StringIO())
    finally:
        app.close()
    assert [(r["source"], r["status"], r["rows"]) for r in rows(env)] == [
        ("cli", "answer", 1),
        ("console", "answer", 1),
    ]
    capsys.readouterr()

    assert main(["audit", "--since", "1h"]) == 0
    table = capsys.readouterr().out
    assert table.count("How many clients are there?") == 2
    assert "cli" in table and "console" in table and "2 questions in the last 1h" in table

    assert main(["audit", "--since", "1h", "--json"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["count"] == 2
    first = data["entries"][0]
    assert (
        first["sql"].upper().startswith("SELECT COUNT(*)") and first["llm_calls"] >= 1 and first["tokens"] > 0
    )
    assert dt.datetime.fromisoformat(first["at"]).tzinfo is not None


def test_the_since_window_and_bad_durations(env, capsys):
    engine = open_state(env["ASKBASE_STATE_URL"])
    with engine.begin() as conn:
        conn.execute(
            audit.insert().values(
                at=dt.datetime.now(dt.UTC) - dt.timedelta(days=2), source="cli", question="an old question"
            )
        )
    engine.dispose()
    assert main(["audit", "--since", "1d"]) == 0
    assert "No questions in the last 1d" in capsys.readouterr().out
    assert main(["audit", "--since", "3d"]) == 0
    assert "an old question" in capsys.readouterr().out
    assert main(["audit", "--since", "yesterday"]) == 2
    assert "not a duration" in capsys.readouterr().err


@pytest.mark.slow
def test_python_m_bot_audit_prints_the_table(env):
    assert main(["ask", "How many clients are there?"]) == 0
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "audit", "--since", "1d"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "How many clients are there?" in proc.stdout and "answer" in proc.stdout


def test_secrets_never_reach_the_audit_row_or_the_log_line(env, caplog):
    url = f"postgresql://askbase:{DB_PASSWORD}@127.0.0.1:9/nowhere"
    app = Askbase(load_settings(databases={"warehouse": DatabaseSettings(url=url)}))
    try:
        with caplog.at_level(logging.INFO, logger="askbase.audit"):
            # pasted by a person: the configured key, a Slack token, a configured database password
            app.ask(f"How many clients? key {API_KEY}, token xoxb-1111-2222-abcdefghij, pw {DB_PASSWORD}")
            app.ask("How many clients?", db=url)  # a URL with a password, given to --db
    finally:
        app.close()
    stored = json.dumps(rows(env), default=str)
    logged = " ".join(r.getMessage() for r in caplog.records)
    for text in (stored, logged):
        assert API_KEY not in text and DB_PASSWORD not in text and "xoxb-1111" not in text
        assert "askbase:***@127.0.0.1" in text  # who and where stay readable
    assert len(rows(env)) == 2


# ---------------------------------------------------------------- Slack


@pytest.fixture
def slack_bot(env, demo_var, tmp_path, llm_settings):
    with FakeSlack() as slack:
        settings = load_settings(
            slack={"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_base_url": slack.base_url},
            engine={"fallback_to_keyword": False},
        )
        bot = RunningBot(Askbase(settings, llm=LLM(llm_settings)), slack)
        yield bot
        bot.close()


def test_slack_questions_are_audited_with_who_and_where_even_when_answering_crashes(
    slack_bot, env, monkeypatch
):
    slack = slack_bot.slack
    _, ts = slack_bot.sender.mention("how many clients are there?", channel="C0AUDIT", user="U0AUDIT")
    slack.wait_for(lambda s: s.answer_in("C0AUDIT", ts), timeout=15)

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(slack_bot.askbase, "ask", explode)
    _, ts = slack_bot.sender.mention("and how many pools?", channel="C0AUDIT", user="U0AUDIT")
    slack.wait_for(lambda s: s.answer_in("C0AUDIT", ts), timeout=15)
    audited = [(r["source"], r["user"], r["channel"], r["status"], r["error_kind"]) for r in rows(env)]
    assert audited == [
        ("slack", "U0AUDIT", "C0AUDIT", "answer", None),
        ("slack", "U0AUDIT", "C0AUDIT", "error", "internal"),
    ]
