"""What a 👍 or 👎 on an answer does, the same in every chat.

👍 makes the answer's question and SQL a confirmed example the generator learns from. 👎 is
recorded, and — for the asker, when clarifying is on — starts one more clarifying round about the
rejected answer (Sphinteract's reject → ask → answer again): the engine asks again with the
transcript the answer was written with, the rejection, and what was wrong. The adapters
(bot/listeners/actions.py and clarify.py for Slack, bot/teams/actions.py for Teams) only show it.
"""

from __future__ import annotations

import sqlalchemy as sa

from bot.stored_answers import standalone_question, transcript_of_trace
from core.clarify.transcript import FEEDBACK, Exchange, Transcript
from core.state import conversations, feedback
from core.state.conversations import StoredTurn

WRONG = "What was wrong with the answer?"  # the question a 👎's comment answers in the transcript
NOTHING_TO_CONFIRM = "There is no query to confirm on this message."
CONFIRMED = "Thanks! I'll use this question and its SQL as an example for similar questions."


def thumbs_up(state: sa.Engine, trace_id: str, user: str | None) -> str:
    """Store the question → SQL pair as a confirmed example; returns the note for the person."""
    turn = conversations.turn_by_trace(state, trace_id)
    if turn is None or not turn.answered:
        return NOTHING_TO_CONFIRM
    feedback.record_feedback(state, trace_id, user, "up")
    feedback.confirm_example(state, turn.database, standalone_question(state, turn), turn.sql, user)
    return CONFIRMED


def rejection_transcript(state: sa.Engine, turn: StoredTurn, comment: str) -> Transcript:
    """What the engine asks back with after a 👎: the answer's own transcript, its SQL rejected,
    and what was wrong (when the person said)."""
    trace = conversations.load_trace(state, turn.trace_id)
    transcript = transcript_of_trace(trace).rejecting(turn.sql)
    if comment:
        transcript = transcript.plus(Exchange(question=WRONG, answer=comment, kind=FEEDBACK))
    return transcript
