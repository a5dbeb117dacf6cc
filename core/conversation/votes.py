"""What a 👍 or 👎 on an answer does, the same in every chat.

👍 by an analyst (`verified.analysts`) makes the answer's question and SQL a confirmed example the
generator learns from; anyone else's is recorded as feedback, listed for the analysts, who make it
an example with one click (core/teaching.py `Teacher.vote`): a wrong answer confirmed by mistake
must not spread into prompts and suggested questions. 👎 is recorded, and — for the asker, when
clarifying is on — starts one more clarifying round about the rejected answer (Sphinteract's reject → ask → answer again): the engine asks again with the
transcript the answer was written with, the rejection, and what was wrong. The adapters
(bot/slack/listeners/actions.py and clarify.py for Slack, bot/teams/actions.py for Teams) only show it.
"""

from __future__ import annotations

import sqlalchemy as sa

from core.access import Principal
from core.clarify.transcript import FEEDBACK, Exchange, Transcript
from core.conversation.stored import transcript_of_trace
from core.state import conversations
from core.state.conversations import StoredTurn
from core.teaching import Teacher, Vote

WRONG = "What was wrong with the answer?"  # the question a 👎's comment answers in the transcript
NOTHING_TO_CONFIRM = "There is no query to confirm on this message."
CONFIRMED = "Thanks! I'll use this question and its SQL as an example for similar questions."
NOTED = (
    "Thanks — noted that this answer is right. An analyst decides whether I learn from it; "
    "until then it is not used as an example."
)
NOTES = {"example": CONFIRMED, "noted": NOTED, "nothing": NOTHING_TO_CONFIRM}


def thumbs_up(teacher: Teacher, trace_id: str, who: Principal) -> tuple[Vote, str]:
    """Record a 👍; an analyst's makes the question → SQL pair an example. (what it did, the note
    for the person who voted)."""
    vote = teacher.vote(trace_id, who, "up")
    return vote, NOTES[vote.status]


def vote_note(vote: Vote, who: str) -> str:
    """What the answer shows about a 👍, in plain words (`who` as the chat names the voter)."""
    if vote.status == "example":
        return f"👍 {who} (analyst) confirmed this answer: I learn from its SQL."
    return f"👍 {who} found this answer right."


def rejection_transcript(state: sa.Engine, turn: StoredTurn, comment: str) -> Transcript:
    """What the engine asks back with after a 👎: the answer's own transcript, its SQL rejected,
    and what was wrong (when the person said)."""
    trace = conversations.load_trace(state, turn.trace_id)
    transcript = transcript_of_trace(trace).rejecting(turn.sql)
    if comment:
        transcript = transcript.plus(Exchange(question=WRONG, answer=comment, kind=FEEDBACK))
    return transcript
