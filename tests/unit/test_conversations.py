"""Conversations and their turns in the state database, read back as frozen records.

The buttons under an answer (CSV, Show SQL, 👍, 👎, Schedule) find everything through the turn
stored with the answer's trace id; these tests store real outcomes in a real SQLite state
database and read them back the way the buttons do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from core.answer import Outcome
from core.state import conversations, open_state
from core.state.schema import turns
from core.trace import Trace

THREAD = "slack:T1:C1:1700000000.000100"


@pytest.fixture
def state(state_url) -> Iterator[sa.Engine]:
    engine = open_state(state_url)
    yield engine
    engine.dispose()


def answered(question: str = "How many clients?") -> Outcome:
    return Outcome(
        status="answer",
        question=question,
        database="demo",
        mode="keyword",
        answer="Clients: 300.",
        sql="SELECT COUNT(*) AS clients FROM client",
        columns=("clients",),
        rows=[(300,)],
        trace=Trace(question=question, database="demo"),
    )


def test_a_stored_answer_reads_back_by_its_trace_id_as_a_frozen_record(state):
    conversations.ensure_conversation(state, THREAD, "demo", channel="C1", user="U1")
    outcome = answered()
    turn_id = conversations.record_turn(state, THREAD, outcome, user="U1")
    turn = conversations.turn_by_trace(state, outcome.trace.id)
    assert turn is not None and turn.id == turn_id
    assert (turn.conversation_id, turn.database, turn.user, turn.question) == (
        THREAD,
        "demo",
        "U1",
        "How many clients?",
    )
    assert (turn.status, turn.mode, turn.sql, turn.columns, turn.row_count, turn.answer) == (
        "answer",
        "keyword",
        outcome.sql,
        ("clients",),
        1,
        "Clients: 300.",
    )
    assert turn.answered
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.sql = "DELETE FROM client"  # type: ignore[misc]
    assert conversations.load_trace(state, outcome.trace.id) == outcome.trace.to_dict()


def test_an_error_is_stored_with_its_message_and_has_nothing_to_export(state):
    conversations.ensure_conversation(state, THREAD, "demo")
    failed = Outcome(
        status="error",
        question="How many unicorns?",
        database="demo",
        error="Keyword mode did not understand 'unicorns'.",
        error_kind="keyword_abstain",
        trace=Trace(question="How many unicorns?"),
    )
    conversations.record_turn(state, THREAD, failed)
    turn = conversations.turn_by_trace(state, failed.trace.id)
    assert turn is not None and turn.status == "error" and not turn.answered
    assert turn.answer == failed.error and turn.sql == "" and turn.user is None


def test_an_unknown_stored_status_never_reads_as_an_answer(state):
    conversations.ensure_conversation(state, THREAD, "demo")
    outcome = answered()
    conversations.record_turn(state, THREAD, outcome)
    with state.begin() as conn:  # a row written by some other version of the bot
        conn.execute(turns.update().where(turns.c.trace_id == outcome.trace.id).values(status="pending"))
    turn = conversations.turn_by_trace(state, outcome.trace.id)
    assert turn is not None and turn.status == "error" and not turn.answered


def test_a_conversation_keeps_its_first_database_and_asker(state):
    assert conversations.conversation_info(state, THREAD) is None
    assert conversations.ensure_conversation(state, THREAD, "demo", channel="C1", user="U1") == "demo"
    assert conversations.ensure_conversation(state, THREAD, "sales", channel="C1", user="U2") == "demo"
    info = conversations.conversation_info(state, THREAD)
    assert info is not None and (info.database, info.channel, info.user) == ("demo", "C1", "U1")
    assert conversations.conversation_database(state, THREAD) == "demo"
    assert conversations.turn_by_trace(state, "no-such-trace") is None


def test_history_holds_the_last_answers_oldest_first_for_follow_ups(state):
    conversations.ensure_conversation(state, THREAD, "demo")
    for n in range(6):
        conversations.record_turn(state, THREAD, answered(f"question {n}"))
    history = conversations.history(state, THREAD)
    assert [t.question for t in history] == ["question 2", "question 3", "question 4", "question 5"]
    assert history[-1].sql == "SELECT COUNT(*) AS clients FROM client" and history[-1].row_count == 1
