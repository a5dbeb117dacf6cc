"""`python -m bot ask|console|index` as a person runs them.

Most tests call the CLI's entry point (`bot.cli.main`, what `python -m bot` and `askbase` run) in
this process with the environment a person would export; the ones marked `slow` start a real
`python -m bot` subprocess, so the module wiring and exit codes are checked end to end too.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from bot.console import run_console
from core.askbase import Askbase
from core.settings import load_settings
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


@pytest.fixture(autouse=True)
def own_state(monkeypatch, state_url):
    """Each test its own state database: an answer one test cached must not answer another's."""
    monkeypatch.setenv("ASKBASE_STATE_URL", state_url)


def run_process(
    args: list[str], env: dict[str, str], python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """`python [PYTHON] -m bot ARGS` in a subprocess, exactly as typed in a shell."""
    return subprocess.run(
        [sys.executable, *python, "-m", "bot", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def scripted(fake_llm) -> None:
    fake_llm.respond(
        "understand",
        lambda body: Reply(content=mr.json_fenced(mr.understanding("Count the clients", [], ["clients"]))),
    )
    fake_llm.respond(
        "generate", mr.writing("SELECT COUNT(*) AS clients FROM client", task="Number of clients")
    )


def test_ask_json_contract(cli, fake_llm, demo_var):
    scripted(fake_llm)
    env = {
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": fake_llm.base_url,
        "ASKBASE_VAR_DIR": str(demo_var),
    }
    proc = cli(["ask", "How many clients are there?", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"status", "mode", "sql", "columns", "rows", "row_count", "clarification", "trace"} <= set(data)
    assert data["status"] == "answer" and data["mode"] == "llm"
    assert data["rows"] == [[300]] and data["row_count"] == 1 and data["columns"] == ["clients"]
    assert data["trace"]["llm_calls"] <= 3
    assert "test-key" not in proc.stdout + proc.stderr


def test_ask_trace_shows_every_stage(cli, fake_llm, demo_var):
    scripted(fake_llm)
    env = {
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": fake_llm.base_url,
        "ASKBASE_VAR_DIR": str(demo_var),
    }
    proc = cli(["ask", "How many clients are there?", "--trace"], env)
    assert proc.returncode == 0, proc.stderr
    for stage in ("retrieve", "scope", "recipe", "generate", "expand", "guard", "execute", "select"):
        assert f"- {stage}:" in proc.stdout
    assert "LLM calls" in proc.stdout and "300" in proc.stdout


def test_unknown_database_is_a_usage_error(cli, demo_var):
    proc = cli(["ask", "How many clients?", "--db", "nowhere"], {"ASKBASE_VAR_DIR": str(demo_var)})
    assert proc.returncode == 2
    assert "no database named 'nowhere'" in proc.stderr


def test_database_url_that_does_not_exist(cli, demo_var, tmp_path):
    proc = cli(
        ["ask", "How many clients?", "--db", f"sqlite:///{tmp_path}/missing.db"],
        {"ASKBASE_VAR_DIR": str(demo_var)},
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr


def test_console_follow_up_uses_the_conversation(fake_llm, demo_var, monkeypatch):
    scripted(fake_llm)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(demo_var))
    typed = io.StringIO("How many clients are there?\nand how many of them in 2024?\n:sql\n:quit\n")
    shown = io.StringIO()
    app = Askbase(load_settings())
    try:
        assert run_console(app, stdin=typed, stdout=shown) == 0
    finally:
        app.close()
    assert "300" in shown.getvalue()
    second_generate = fake_llm.calls("generate")[1].user
    assert "How many clients are there?" in second_generate  # the earlier turn is context


@pytest.mark.slow
def test_without_a_key_the_quick_start_question_is_answered_in_keyword_mode(demo_var):
    """The README's `make demo`, in a real `python -m bot` process; with no key the LLM SDK is never
    loaded (half a second of every start)."""
    proc = run_process(
        ["ask", "How many clients are there?", "--json"],
        {"ASKBASE_VAR_DIR": str(demo_var)},
        ("-X", "importtime"),
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (data["status"], data["mode"], data["rows"]) == ("answer", "keyword", [[300]])
    assert data["trace"]["llm_calls"] == 0
    imported = {
        line.rpartition("|")[2].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "core.pipeline" in imported and "openai" not in imported


def test_without_a_key_an_unanswerable_question_says_how_to_configure_an_llm(cli, demo_var):
    proc = cli(["ask", "What is the meaning of life for our clients?"], {"ASKBASE_VAR_DIR": str(demo_var)})
    assert proc.returncode == 1
    assert "Keyword mode" in proc.stderr and "OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_index_build_then_refresh(tmp_path):
    env = {"ASKBASE_VAR_DIR": str(tmp_path / "var")}
    built = run_process(["index", "build", "--db", "demo"], env)
    assert built.returncode == 0, built.stderr
    stats = json.loads(built.stdout.strip().splitlines()[-1])
    assert stats["values"] > 1000 and stats["rewritten"] is True
    assert "[index]" in built.stderr  # progress is shown while building
    refreshed = run_process(["index", "refresh", "--db", "demo"], env)
    assert refreshed.returncode == 0, refreshed.stderr
    again = json.loads(refreshed.stdout.strip().splitlines()[-1])
    assert again["values"] == stats["values"] and again["rewritten"] is False
    assert "nothing changed" in refreshed.stderr
