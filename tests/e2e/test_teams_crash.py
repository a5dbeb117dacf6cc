"""A Teams question in flight when its process is killed is not lost: `python -m bot serve --teams`
gets SIGKILL while the fake LLM holds its reply, the way the Slack crash tests do it
(tests/e2e/test_slack_crash.py). Its claim is left `answering` with a lease that runs out; then Teams'
redelivery of the activity, or a process started afterwards, answers it once (core/conversation/claims.py).
"""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from microsoft_agents.activity import Activity

from bot.teams.incoming import read
from core.bench.fakes.bot_connector import FakeConnector
from core.state import events
from core.state.schema import audit, question_claims
from tests.e2e.test_slack_crash import HeldLLM
from tests.teams_harness import TeamsServed, teams_env

pytestmark = pytest.mark.slow  # real processes, one killed

LEASE_S = 1  # the shortest lease (core/conversation/claims.py): the dead process's runs out soonest
QUESTION = "how many clients are there?"


@pytest.fixture
def crash(fake_llm, demo_var, tmp_path):
    """Start `serve --teams` processes on one state database; `kill_mid_answer` asks the first one."""
    held = HeldLLM(fake_llm)
    with FakeConnector() as connector:
        state_url = f"sqlite:///{tmp_path / 'state.sqlite'}"
        env = {
            **teams_env(tmp_path, demo_var),
            "ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake_llm.base_url,
        }
        started: list[TeamsServed] = []

        def start(lease_s: float, **extra: str) -> TeamsServed:
            served = TeamsServed(
                {**env, "ASKBASE_TEAMS__CLAIM_LEASE_S": str(lease_s), **extra}, tmp_path, connector
            )
            started.append(served)
            return served

        engine = sa.create_engine(state_url)
        yield connector, held, start, engine
        held.release()
        for served in started:
            if served.proc.poll() is None:
                served.stop()
        engine.dispose()


def kill_mid_answer(connector: FakeConnector, held: HeldLLM, served: TeamsServed) -> dict:
    """Ask in a channel thread, SIGKILL the process while the model holds the SQL; the activity."""
    place = served.client.place("channel", conversation="1700000000042")
    activity = served.client.activity(QUESTION, place=place, mention=True)
    assert served.client.post(activity)[0] == 202
    assert held.held.wait(30), served.output()
    assert connector.typing_in(activity["conversation"]["id"])  # "typing…" showed
    served.proc.kill()
    served.proc.wait(10)
    held.release()  # the reply the dead process waited for goes nowhere
    return activity


def claim_of(engine: sa.Engine, activity: dict):
    key = read(Activity.model_validate(activity)).dedupe_key
    with engine.connect() as conn:
        return conn.execute(sa.select(question_claims).where(question_claims.c.key == key)).one()


def lapsed(engine: sa.Engine, activity: dict) -> None:
    """Wait until the dead process's lease has run out (it renews no more)."""
    key = claim_of(engine, activity).key
    deadline = time.monotonic() + 10 * LEASE_S
    while key not in events.expired(engine, prefixes=("teams:",)):
        assert time.monotonic() < deadline, "the dead process's lease never ran out"
        time.sleep(0.1)


def answered(engine: sa.Engine, activity: dict) -> object:
    """The claim once marked answered (just after its card is posted), within a few seconds."""
    deadline = time.monotonic() + 15
    while (claim := claim_of(engine, activity)).state != "answered":
        assert time.monotonic() < deadline, f"the claim stayed {claim.state}"
        time.sleep(0.05)
    return claim


def answers(connector: FakeConnector, activity: dict) -> list:
    return [m for m in connector.in_conversation(activity["conversation"]["id"]) if m.is_answer]


def audited(engine: sa.Engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(sa.select(audit.c.question)).scalars())


def test_a_redelivered_activity_whose_process_died_mid_answer_is_answered_once(crash):
    connector, held, start, engine = crash
    # a second web process behind the load balancer, already running (its sweep ran at start and
    # runs again only after half its lease): only the redelivery can find the question
    survivor = start(lease_s=600)
    activity = kill_mid_answer(connector, held, start(lease_s=LEASE_S))
    assert claim_of(engine, activity).state == "answering" and not answers(connector, activity)
    lapsed(engine, activity)

    assert survivor.client.post(activity)[0] == 202  # Teams retries the request it saw fail
    answer = connector.card_in(activity["conversation"]["id"], lambda m: m.is_answer, timeout=30)
    assert answer.sentence() == "Number of clients: 300." and answer.reply_to == activity["id"]
    assert survivor.client.post(activity)[0] == 202  # and once more: answered already, left alone
    settle = survivor.client.activity(QUESTION)  # a question in another chat, answered after it
    survivor.client.post(settle)
    connector.card_in(settle["conversation"]["id"], lambda m: m.is_answer, timeout=30)
    assert len(answers(connector, activity)) == 1
    assert answered(engine, activity).attempts == 2
    assert audited(engine) == [QUESTION, QUESTION]  # the question once, the other chat's once


def test_a_process_started_after_the_crash_finishes_the_question_without_a_redelivery(crash):
    connector, held, start, engine = crash
    activity = kill_mid_answer(connector, held, start(lease_s=LEASE_S))
    lapsed(engine, activity)
    start(lease_s=LEASE_S)  # its recovery sweep at start takes the question over
    answer = connector.card_in(activity["conversation"]["id"], lambda m: m.is_answer, timeout=30)
    assert answer.sentence() == "Number of clients: 300." and answer.reply_to == activity["id"]
    answered(engine, activity)
    assert len(answers(connector, activity)) == 1 and audited(engine) == [QUESTION]


def test_a_question_too_old_to_finish_is_apologised_for(crash):
    connector, held, start, engine = crash
    activity = kill_mid_answer(connector, held, start(lease_s=LEASE_S))
    lapsed(engine, activity)
    start(lease_s=LEASE_S, ASKBASE_TEAMS__RECOVER_WITHIN_S="0")
    conversation = activity["conversation"]["id"]
    apology = connector.wait_for(
        lambda c: next((m for m in c.in_conversation(conversation) if "restarted" in m.all_text()), None),
        timeout=30,
    )
    assert "ask it again" in apology.all_text() and apology.reply_to == activity["id"]
    answered(engine, activity)
    assert not answers(connector, activity)
