"""`python -m bot serve --http --port P` exactly as a deployment (or the Slack harness) runs it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.bench.fakes.slack_api import FakeSlack
from tests.processes import ServedProcess
from tests.slack_harness import Plan, hand, read_csv, script_llm
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET, SlackSender


class Served(ServedProcess):
    """`serve --http`, with a signed-request sender for its /slack/events."""

    def __init__(self, env: dict[str, str], tmp_path: Path) -> None:
        super().__init__(["serve", "--http"], env, tmp_path / "serve.log")
        self.sender = SlackSender(f"{self.base}/slack/events")


def base_env(slack: FakeSlack, tmp_path: Path, var: Path) -> dict[str, str]:
    return {
        "SLACK_API_BASE_URL": slack.base_url,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "ASKBASE_VAR_DIR": str(var),
        "ASKBASE_STATE_URL": f"sqlite:///{tmp_path / 'state.sqlite'}",
    }


@pytest.mark.slow
def test_serve_http_answers_mentions_and_slash_commands(fake_llm, demo_var, tmp_path):
    plan = Plan(main_task="List the clients", sql="SELECT name FROM client ORDER BY name")
    script_llm(fake_llm, plan)
    with FakeSlack() as slack:
        env = {
            **base_env(slack, tmp_path, demo_var),
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake_llm.base_url,
        }
        served = Served(env, tmp_path)
        try:
            response, ts = served.sender.mention("list all clients", event_id="Ev0SERVE1")
            assert response.status == 200
            answer = slack.wait_for(lambda s: s.answer_in("C0001", ts), timeout=30)
            expected = hand(demo_var, "SELECT name FROM client ORDER BY name")
            assert answer.thread_ts == ts and answer.table()[1:] == expected[: len(answer.table()) - 1]
            csvs = slack.wait_for(
                lambda s: [f for f in s.files_in("C0001", ts) if f.filename.endswith(".csv")]
            )
            assert read_csv(csvs[0].content)[1:] == expected  # > 100 rows: the CSV carries them all

            assert served.sender.mention("list all clients", secret="wrong")[0].status == 401
            assert (
                served.sender.mention("list all clients", event_id="Ev0SERVE1", ts=ts, retry_num=1)[0].status
                == 200
            )

            plan.main_task, plan.sql = "Count the clients", "SELECT COUNT(*) AS clients FROM client"
            assert served.sender.command("how many clients are there?", channel="C0002").status == 200
            answer = slack.wait_for(
                lambda s: next((m for m in s.messages.values() if m.channel == "C0002" and m.result()), None),
                timeout=30,
            )
            root = slack.messages[answer.thread_ts]  # /ask: a thread saying who asked what
            assert root.thread_ts is None and "asked" in root.all_text() and answer.broadcast
            assert answer.result() == hand(demo_var, "SELECT COUNT(*) FROM client")
            assert [
                p.args.get("thread_ts")
                for p in slack.calls_to("chat.postMessage")
                if p.args["channel"] == "C0001"
            ] == [ts]
        finally:
            code = served.stop()
        output = served.output()
        assert code == 0, output
        assert BOT_TOKEN not in output and SIGNING_SECRET not in output


@pytest.mark.slow
def test_serve_without_an_llm_answers_in_keyword_mode(tmp_path):
    """The Slack harness's set-up: no LLM key, a fresh var dir (the demo is built at start)."""
    pytest.importorskip("core.keyword")
    with FakeSlack() as slack:
        served = Served(base_env(slack, tmp_path, tmp_path / "var"), tmp_path)
        try:
            started = time.monotonic()
            _, ts = served.sender.mention("how many clients are there?", event_id="Ev0KW1")
            answer = slack.wait_for(lambda s: s.answer_in("C0001", ts), timeout=30)
            assert time.monotonic() - started < 10  # the harness allows 10 s for the first answer
            assert answer.result() == [["300"]] and "Keyword mode" in answer.all_text()

            assert served.sender.mention("how many clients?", secret="wrong")[0].status == 401
            served.sender.mention("how many clients are there?", event_id="Ev0KW1", ts=ts, retry_num=1)

            _, ts2 = served.sender.mention("list all clients", event_id="Ev0KW2")
            csvs = slack.wait_for(
                lambda s: [f for f in s.files_in("C0001", ts2) if f.filename.endswith(".csv")]
            )
            assert len(read_csv(csvs[0].content)) == 301  # header + every client

            assert served.sender.command("how many clients are there?", channel="C0002").status == 200
            slack.wait_for(
                lambda s: next((m for m in s.messages.values() if m.channel == "C0002" and m.result()), None)
            )
            tables_in_first_thread = [
                m
                for m in slack.messages.values()
                if m.channel == "C0001" and m.thread_ts == ts and m.result()
            ]
            assert len(tables_in_first_thread) == 1  # the redelivery was not answered again
        finally:
            assert served.stop() == 0


@pytest.mark.parametrize(
    ("argv", "env", "says"),
    [
        (["--http"], {"SLACK_BOT_TOKEN": BOT_TOKEN}, "SLACK_SIGNING_SECRET"),
        (["--socket"], {"SLACK_BOT_TOKEN": BOT_TOKEN}, "SLACK_APP_TOKEN"),
        (["--http"], {"SLACK_SIGNING_SECRET": SIGNING_SECRET}, "SLACK_BOT_TOKEN"),
    ],
)
def test_serve_explains_missing_credentials(monkeypatch, capsys, argv, env, says):
    from bot.cli import main

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", *argv]) == 2
    assert says in capsys.readouterr().err
