"""Acks that never wait (issue 31): `POST /api/messages` is answered once the activity is verified
and (briefly) claimed — not after the answer, not behind slow answers, not behind a locked state
database — and nothing acknowledged is lost: every activity is answered exactly once. `/healthz`
says whether the state database can be written.

`python -m bot serve --teams` runs as deployed (anonymous local mode, the fake Bot Connector).
Acks are timed as Teams would see them: each request on a fresh connection, all sent at once by
one thread of non-blocking sockets (the benchmarks' `burst`), from connect to status line. The
target is 200 ms (`python -m core.bench teams-load` measures it); the tests allow ACK_BOUND_MS, a
margin for a machine busy with other tests — what they catch is an ack that waits on work, which
took seconds before (a burst of 120: p95 14.8 s; a locked state database: 30 s).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa
from microsoft_agents.activity import Activity

from bot.teams.app import INVOKE_ACK
from bot.teams.incoming import read
from core.bench.fakes.bot_connector import FakeConnector
from core.bench.slack_load import burst
from core.bench.teams_load import activity_request
from core.state.schema import question_claims
from tests.fakes.entra_id import FakeEntra
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.slack_harness import Plan, script_llm
from tests.teams_harness import APP_ID, TeamsServed, connector_env, identity_env, teams_env

pytestmark = pytest.mark.slow  # real processes, bursts

# alone a burst's slowest ack takes 0.3-0.4 s here; in a clean-clone CI run, four test workers on
# two cores, one took 1.51 s. What the bound catches took 14.8 s and 30 s.
ACK_BOUND_MS = 3000.0
QUESTION = "How many clients are there?"
ANON = {"ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true"}


def chat(served: TeamsServed, name: str) -> dict[str, Any]:
    return served.client.place("personal", conversation=f"a:1{name}")


def answers(connector: FakeConnector, conversation: str) -> list[Any]:
    return [m for m in connector.in_conversation(conversation) if m.is_answer]


def claims(tmp_path, activities: list[dict[str, Any]]) -> dict[str, str]:
    """The state of each activity's claim (absent: never claimed)."""
    keys = {read(Activity.model_validate(a)).dedupe_key for a in activities}
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(question_claims.c.key, question_claims.c.state)).all()
    finally:
        engine.dispose()
    return {key: state for key, state in rows if key in keys}


def audited(tmp_path) -> int:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(sa.text("SELECT count(*) FROM audit_log WHERE source = 'teams'")).scalar() or 0
            )
    finally:
        engine.dispose()


def test_a_burst_of_120_activities_is_acknowledged_at_once_and_each_answered_once(tmp_path, demo_var):
    env = {**teams_env(tmp_path, demo_var), **ANON}  # the default workers: the rest wait their turn
    with FakeConnector() as connector:
        connector._server.socket.listen(512)  # the fake must not be what refuses connections
        served = TeamsServed(env, tmp_path, connector)
        try:
            warm = served.client.activity(QUESTION, place=chat(served, "warm"))
            served.client.post(warm)
            connector.card_in(warm["conversation"]["id"], lambda m: m.is_answer, timeout=30)

            activities = [
                served.client.activity(QUESTION, place=chat(served, f"burst{n:03d}")) for n in range(120)
            ]
            deliveries = burst(
                [(served.port, activity_request(served.port, a)) for a in activities], timeout=30
            )
            assert [d.status for d in deliveries] == [202] * 120, {d.error for d in deliveries}
            slowest = max(d.ms for d in deliveries)
            print(f"120 acks: p50 {sorted(d.ms for d in deliveries)[60]:.0f} ms, max {slowest:.0f} ms")
            assert slowest < ACK_BOUND_MS, f"an ack took {slowest:.0f} ms"

            conversations = [a["conversation"]["id"] for a in activities]
            connector.wait_for(lambda c: all(answers(c, x) for x in conversations), timeout=120)
            time.sleep(1.5)  # a second answer, had one been started, lands by now
            for a, x in zip(activities, conversations, strict=True):
                (answer,) = answers(connector, x)
                assert answer.sentence() == "Number of clients: 300." and answer.reply_to == a["id"]
                assert len(connector.in_conversation(x)) == 1  # no "busy", no second reply
            assert audited(tmp_path) == 121
            assert set(claims(tmp_path, activities).values()) == {"answered"}
            assert len(claims(tmp_path, activities)) == 120
        finally:
            served.stop()


class HeldModel:
    """The fake model, scripted as the Slack tests script it, holding every SQL it is asked for
    until `release()`: questions that keep every answering worker busy."""

    def __init__(self, fake: FakeOpenAI) -> None:
        script_llm(fake, Plan())
        self._generate = fake.responders["generate"]
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.held = 0
        fake.respond("generate", self._hold)

    def _hold(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.held += 1
        self._released.wait(60)
        return self._generate(body)

    def release(self) -> None:
        self._released.set()


def test_a_help_is_acknowledged_and_answered_while_slow_questions_hold_every_worker(
    tmp_path, demo_var, fake_llm
):
    """The red team's first finding: with 4 slow questions in flight, a `help` waited 8.6 s for
    its 202 — its claim queued on the answering pool behind them."""
    model = HeldModel(fake_llm)
    env = {
        **teams_env(tmp_path, demo_var),
        **ANON,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": fake_llm.base_url,
        "ASKBASE_TEAMS__WORKERS": "4",
    }
    with FakeConnector() as connector:
        served = TeamsServed(env, tmp_path, connector)
        try:
            slow = [served.client.activity(QUESTION, place=chat(served, f"slow{n}")) for n in range(4)]
            for a in slow:
                assert served.client.post(a)[0] == 202
            deadline = time.monotonic() + 30
            while model.held < 4:
                assert time.monotonic() < deadline, f"only {model.held} questions reached the model"
                time.sleep(0.05)

            help_ = served.client.activity("help", place=chat(served, "help"))
            (delivery,) = burst([(served.port, activity_request(served.port, help_))], timeout=10)
            assert delivery.status == 202 and delivery.ms < ACK_BOUND_MS, delivery
            card = connector.card_in(
                help_["conversation"]["id"], lambda m: "Ask me about" in m.all_text(), timeout=5
            )
            assert card is not None and model.held == 4  # answered while every worker is still busy

            model.release()
            for a in slow:
                connector.card_in(a["conversation"]["id"], lambda m: m.is_answer, timeout=30)
            time.sleep(1.0)
            assert all(len(answers(connector, a["conversation"]["id"])) == 1 for a in slow)
        finally:
            model.release()
            served.stop()


def healthz_until(served: TeamsServed, status: int, within_s: float = 5.0) -> dict[str, Any]:
    """`/healthz`'s body once it answers `status` (the probe's result is kept a second)."""
    deadline = time.monotonic() + within_s
    while True:
        got, _, body = served.get(f"{served.base}/healthz")
        if got == status:
            return dict(json.loads(body))
        assert time.monotonic() < deadline, f"/healthz still says {got}: {body!r}"
        time.sleep(0.2)


def test_a_locked_state_database_delays_no_ack_loses_no_activity_and_fails_healthz(tmp_path, demo_var):
    """Another connection holds the state database under an exclusive lock (a backup, a stuck
    process). Acks still come at once; `/healthz` says 503; a `help` is answered anyway (handled
    unclaimed after `teams.claim_wait_s`); a question is answered once the lock is gone — once,
    the claims landing late marked answered so that no sweep answers them again."""
    env = {
        **teams_env(tmp_path, demo_var),
        **ANON,
        "ASKBASE_TEAMS__CLAIM_WAIT_S": "1",
        "ASKBASE_TEAMS__CLAIM_LEASE_S": "2",  # the recovery sweep runs every second
    }
    with FakeConnector() as connector:
        served = TeamsServed(env, tmp_path, connector)
        try:
            warm = served.client.activity(QUESTION, place=chat(served, "warm"))
            served.client.post(warm)
            connector.card_in(warm["conversation"]["id"], lambda m: m.is_answer, timeout=30)

            lock = sqlite3.connect(tmp_path / "state.sqlite", timeout=10, isolation_level=None)
            lock.execute("BEGIN EXCLUSIVE")
            try:
                help_ = served.client.activity("help", place=chat(served, "help"))
                question = served.client.activity(QUESTION, place=chat(served, "question"))
                sent = [(served.port, activity_request(served.port, a)) for a in (help_, question)]
                for delivery in burst(sent, timeout=10):
                    assert delivery.status == 202 and delivery.ms < ACK_BOUND_MS, delivery

                health = healthz_until(served, 503)  # its last probe is kept a second
                assert health["status"] == "unhealthy" and not health["state_db"]["ok"]

                connector.card_in(
                    help_["conversation"]["id"], lambda m: "Ask me about" in m.all_text(), timeout=10
                )
                assert not answers(connector, question["conversation"]["id"])  # its answer needs the database
            finally:
                lock.execute("ROLLBACK")
                lock.close()

            connector.card_in(question["conversation"]["id"], lambda m: m.is_answer, timeout=60)
            assert healthz_until(served, 200)["state_db"]["ok"]

            deadline = time.monotonic() + 40  # the late claims land (busy timeout), then are answered
            while set(claims(tmp_path, [help_, question]).values()) != {"answered"}:
                assert time.monotonic() < deadline, claims(tmp_path, [help_, question])
                time.sleep(0.2)
            time.sleep(3.0)  # lease and sweep: nothing is answered a second time
            assert len(connector.in_conversation(help_["conversation"]["id"])) == 1
            assert len(answers(connector, question["conversation"]["id"])) == 1
            assert "handled unclaimed" in served.output()
        finally:
            served.stop()


def test_an_action_execute_press_gets_its_invoke_response_at_once_and_is_handled_after(tmp_path, demo_var):
    """An invoke must carry its response in the HTTP answer: it gets the fixed "Working on it…"
    at once (not after the press is handled), and the press is handled — once — after."""
    with FakeConnector() as connector:
        served = TeamsServed({**teams_env(tmp_path, demo_var), **ANON}, tmp_path, connector)
        try:
            press = served.client.activity(None, place=chat(served, "invoke"), kind="invoke")
            press["name"] = "adaptiveCard/action"
            press["value"] = {
                "action": {"type": "Action.Execute", "data": {"askbase": "retry", "trace": "0" * 32}}
            }  # (Details, CSV, 👍 and 👎 are answered in the request instead: test_teams_answers.py)
            status, body = served.client.post(press)
            assert status == 200 and json.loads(body) == INVOKE_ACK
            said = connector.card_in(press["conversation"]["id"], lambda m: True, timeout=10)
            assert "I no longer have this question" in said.all_text()
            time.sleep(1.0)
            assert len(connector.in_conversation(press["conversation"]["id"])) == 1
            assert set(claims(tmp_path, [press]).values()) == {"answered"}
        finally:
            served.stop()


def test_an_acknowledged_question_whose_turn_fails_before_it_starts_is_taken_over_not_lost(
    tmp_path, demo_var
):
    """A 202 is a promise: the question was claimed before it. When its turn then fails before
    the agent runs — here MSAL cannot get the bot's outbound token — its claim is let go (not
    renewed, not marked answered), and once the lease runs out the recovery sweep answers it."""
    with FakeConnector() as connector, FakeEntra() as entra:
        env = {
            **teams_env(tmp_path, demo_var),
            **identity_env(entra),
            **connector_env(connector),
            "ASKBASE_TEAMS__CLAIM_LEASE_S": "2",  # the recovery sweep runs every second
        }
        served = TeamsServed(env, tmp_path, connector)
        try:
            header, entra.identity_header = entra.identity_header, "rotated"  # the MSI refuses us
            question = served.client.activity(QUESTION, place=chat(served, "tokenless"))
            assert (
                served.client.post(question, token=entra.mint(APP_ID, service_url=connector.service_url))[0]
                == 202
            )
            deadline = time.monotonic() + 20
            while "left to the recovery sweep" not in served.output():
                assert time.monotonic() < deadline, served.output()[-3000:]
                time.sleep(0.1)
            assert connector.calls == []
            entra.identity_header = header  # the token service is back

            answer = connector.card_in(question["conversation"]["id"], lambda m: m.is_answer, timeout=30)
            assert answer.sentence() == "Number of clients: 300." and answer.reply_to == question["id"]
            time.sleep(3.0)  # another lease and sweep: answered once
            assert len(answers(connector, question["conversation"]["id"])) == 1
            assert set(claims(tmp_path, [question]).values()) == {"answered"}
        finally:
            served.stop()
