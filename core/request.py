"""What the pipeline is asked: a question and everything around it that is not the database.

Its own module, importing only plain data types, so the adapters (through core.askbase), the
pipeline, keyword mode and clarification can all read a `Request` without importing each other.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from core.clarify.transcript import Transcript
from core.conversation import Turn
from core.examples import Example

# Progress for chat adapters: called with a stage name ("understand", "generate", …) as it starts.
StageCallback = Callable[[str], None]


@dataclass(frozen=True)
class Request:
    question: str
    history: Sequence[Turn] = ()  # earlier turns of the conversation, for follow-up questions
    examples: Sequence[Example] = ()  # confirmed question → SQL pairs of this database
    today: dt.date | None = None  # None: the real today (tests and benchmarks pin it)
    on_stage: StageCallback | None = None
    # Everything the person said about this question so far (core/clarify/transcript.py): the
    # clarifying questions with their answers, the SQL they rejected (👎). The SQL writer sees it
    # all; keyword mode pins the chosen readings (`transcript.choices`); nothing is asked twice.
    transcript: Transcript = field(default_factory=Transcript)
    # The person rejected the last answer (its SQL ends `transcript.rejected_sql`): ask one
    # clarifying question about it instead of answering — in keyword mode about near readings too.
    after_rejection: bool = False
