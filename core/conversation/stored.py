"""An answer read back from the state database by the trace id its buttons carry, for every chat.

A button under an answer (👍, 👎, Verify, Schedule) may be pressed long after the answer was
written, on another process: what it needs is read from the stored turn and its trace, never from
the message. Reading the trace is the same whether the button sat in Slack or in Teams, so it is
written once here; the chat adapters only say what came of it.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from core.clarify.transcript import Transcript
from core.state import conversations
from core.state.conversations import StoredTurn


def standalone_question(state: sa.Engine, turn: StoredTurn) -> str:
    """The question as understood on its own ("…in 2024?" after "How many clients?" becomes whole):
    what an example, a verified query or a schedule must be stored under, since it is reused
    outside the thread that gave it its meaning."""
    trace = conversations.load_trace(state, turn.trace_id) or {}
    for stage in trace.get("stages", []):
        if stage.get("name") == "understand":
            text = (stage.get("outputs") or {}).get("question")
            if text:
                return str(text)
    return turn.question


def transcript_of_trace(trace: dict[str, Any] | None) -> Transcript:
    """The transcript an answer was written with (the pipeline's "clarified" stage)."""
    for stage in (trace or {}).get("stages", []):
        if stage.get("name") == "clarified":
            return Transcript.from_json((stage.get("outputs") or {}).get("transcript"))
    return Transcript()


def asker_of(state: sa.Engine, turn: StoredTurn) -> str | None:
    """Who started the conversation the turn belongs to (else who asked the turn): the person a
    follow-up clarifying question is for."""
    info = conversations.conversation_info(state, turn.conversation_id)
    return (info.user if info else None) or turn.user
