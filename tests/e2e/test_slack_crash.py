"""A process killed mid-answer loses no question: `python -m bot serve --http` is killed with
SIGKILL (the whole process group, as a container runtime or the OOM killer does) while the fake
LLM holds its reply, then Slack's signed retry and a restarted process find the question.

Answered exactly once, in place of the stale status message; apologised for when it is too old
to finish; and a retry of an answered question does nothing.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.settings import load_settings
from core.state.schema import audit
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.processes import ServedProcess
from tests.slack_harness import Plan, RunningBot, hand, script_llm
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET, SlackSender

CHANNEL = "C0001"
LEASE_S = 1  # the shortest lease (core/conversation/claims.py): the dead process's runs out soonest

pytestmark = pytest.mark.slow  # real processes, killed and restarted (~10 s a test)


class Server(ServedProcess):
    """`python -m bot serve --http` in its own process group, so SIGKILL takes master and workers;
    a restart writes on in the same log."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        super().__init__(["serve", "--http"], env, log, append=True, own_group=True)
        self.sender = SlackSender(f"{self.base}/slack/events")


class HeldLLM:
    """The fake model, scripted as every Slack test scripts it (tests/slack_harness.py), except that
    the first SQL it is asked for is held until `release()`; later ones come at once."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.release_event = threading.Event()
        self.held = threading.Event()
        self._first = True
        self._lock = threading.Lock()
        script_llm(fake, Plan(main_task="Count the clients", sql="SELECT COUNT(*) AS clients FROM client"))
        self._generate = fake.responders["generate"]
        fake.respond("generate", self._hold_first)

    def _hold_first(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            first, self._first = self._first, False
        if first:
            self.held.set()
            self.release_event.wait(60)
        return self._generate(body)

    def release(self) -> None:
        self.release_event.set()


@pytest.fixture
def crash_env(fake_llm, demo_var, tmp_path):
    with FakeSlack() as slack:
        env = {
            "SLACK_API_BASE_URL": slack.base_url,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "ASKBASE_VAR_DIR": str(demo_var),
            "ASKBASE_STATE_URL": f"sqlite:///{tmp_path / 'state.sqlite'}",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake_llm.base_url,
            "ASKBASE_SLACK__CLAIM_LEASE_S": str(LEASE_S),
            "WEB_CONCURRENCY": "1",
        }
        held = HeldLLM(fake_llm)
        servers: list[Server] = []

        def start(**extra: str) -> Server:
            server = Server({**env, **extra}, tmp_path / "serve.log")
            servers.append(server)
            return server

        yield slack, held, start, env
        held.release()
        for server in servers:
            server.stop()


def kill_mid_answer(slack: FakeSlack, held: HeldLLM, start, progress: str = "status") -> tuple[str, str]:
    """Ask, wait until the model holds the reply, SIGKILL the process; (event id, question ts).

    `progress`: what the dead process leaves showing — "status" (the assistant status line),
    "message" (a status message: the workspace refused the other kinds) or "plan" (a streamed plan).
    """
    if progress in ("message", "plan"):
        slack.fail("assistant.threads.setStatus", "missing_scope")
    if progress == "message":
        slack.fail("chat.startStream", "missing_scope")
    first = start()
    response, ts = first.sender.mention("how many clients are there?", event_id="Ev0CRASH01")
    assert response.status == 200
    assert held.held.wait(30), first.output()
    if progress == "status":
        assert slack.wait_for(lambda s: s.status_of(CHANNEL, ts), timeout=10)  # "is thinking…"
    elif progress == "message":
        assert ":hourglass" in slack.wait_for(lambda s: ours(s, ts), timeout=10)[0].all_text()
    else:
        assert slack.wait_for(lambda s: [m for m in s.thread(CHANNEL, ts) if m.streaming], timeout=10)
    first.kill()
    held.release()  # the reply the dead process waited for goes nowhere
    return "Ev0CRASH01", ts


def ours(slack: FakeSlack, ts: str) -> list:
    """Our messages in the question's thread (the question itself is the person's, not in the fake)."""
    return [m for m in slack.thread(CHANNEL, ts) if m.ts != ts]


def answers_in(slack: FakeSlack, ts: str) -> list:
    return [m for m in ours(slack, ts) if m.result()]


def audited(state_url: str) -> list[str]:
    engine = sa.create_engine(state_url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.select(audit.c.status)).scalars())
    finally:
        engine.dispose()


def settle(sender: SlackSender, slack: FakeSlack) -> None:
    _, sentinel = sender.mention("how many clients are there?", channel="C0SENTINEL")
    slack.wait_for(lambda s: s.answer_in("C0SENTINEL", sentinel), timeout=30)


def test_a_restarted_process_finishes_the_question_and_the_retry_then_changes_nothing(crash_env, demo_var):
    slack, held, start, env = crash_env
    event_id, ts = kill_mid_answer(slack, held, start)
    second = start()
    answer = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=30)
    assert answer.result() == hand(demo_var, "SELECT COUNT(*) FROM client")
    # Slack's retry (it never got an ack from the dead process) arrives now: acknowledged only
    response, _ = second.sender.mention("how many clients are there?", event_id=event_id, ts=ts, retry_num=1)
    assert response.status == 200
    settle(second.sender, slack)
    assert ours(slack, ts) == [answer] and slack.status_of(CHANNEL, ts) == ""  # "thinking…" is gone
    assert audited(env["ASKBASE_STATE_URL"]) == ["answer", "answer"]  # this question once, the sentinel once


def test_a_slack_retry_takes_over_from_the_killed_process_and_answers_once(crash_env, demo_var):
    slack, held, start, env = crash_env
    event_id, ts = kill_mid_answer(slack, held, start, progress="message")
    stale = ours(slack, ts)[0]
    time.sleep(LEASE_S + 0.5)  # the dead process's lease runs out
    # the next process runs no recovery sweep here (an in-process app): only the retry can find it
    settings = load_settings(
        var_dir=str(demo_var),
        state_url=env["ASKBASE_STATE_URL"],
        slack={"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_base_url": slack.base_url},
        llm={"api_key": "test-key", "base_url": env["OPENAI_BASE_URL"]},
    )
    bot = RunningBot(Askbase(settings), slack)
    try:
        response, _ = bot.sender.mention("how many clients are there?", event_id=event_id, ts=ts, retry_num=1)
        assert response.status == 200
        answer = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=30)
        assert answer.result() == hand(demo_var, "SELECT COUNT(*) FROM client")
        # Slack's next retry of the same event, and the same message as a `message` event: nothing more
        bot.sender.mention("how many clients are there?", event_id=event_id, ts=ts, retry_num=2)
        bot.sender.message(
            "<@UBOT> how many clients are there?",
            channel=CHANNEL,
            channel_type="channel",
            ts=ts,
            thread_ts=ts,
        )
        settle(bot.sender, slack)
        assert ours(slack, ts) == [answer]  # the dead process's "Understanding…" was deleted
        assert stale.ts in [m.ts for m in slack.deleted]
    finally:
        bot.close()
    assert audited(env["ASKBASE_STATE_URL"]) == ["answer", "answer"]


def test_a_question_too_old_to_finish_is_apologised_for_in_its_thread(crash_env):
    slack, held, start, _ = crash_env
    event_id, ts = kill_mid_answer(slack, held, start, progress="plan")
    second = start(ASKBASE_SLACK__RECOVER_WITHIN_S="0")
    apology = slack.wait_for(
        lambda s: next((m for m in ours(s, ts) if "restarted" in m.all_text()), None), timeout=30
    )
    assert "ask it again" in apology.all_text()
    second.sender.mention("how many clients are there?", event_id=event_id, ts=ts, retry_num=1)
    settle(second.sender, slack)
    assert not answers_in(slack, ts)
    assert not [m for m in ours(slack, ts) if m.streaming]  # the dead process's plan was stopped
