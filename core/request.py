"""What the pipeline is asked: a question and everything around it that is not the database.

Its own module, importing only plain data types, so the adapters (through core.askbase), the
pipeline, keyword mode and clarification can all read a `Request` without importing each other.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from core.clarify.transcript import Transcript
from core.conversation import Turn
from core.definitions.model import Definitions
from core.examples import Example

MAX_QUESTION_CHARS = 2000  # longer questions are refused, and dropped: only `preview` is kept
PREVIEW_CHARS = 200


_DROPPED = re.compile(r"… \[[\d,]+ more characters dropped\]$")


def preview(question: str, limit: int = PREVIEW_CHARS) -> str:
    """What is stored and logged of a question too long to take: its start and how much was dropped."""
    if len(question) <= limit or is_preview(question):
        return question
    return f"{question[:limit]}… [{len(question) - limit:,} more characters dropped]"


def is_preview(text: str) -> bool:
    """A preview is never a question: asking it again (a Retry button) is refused like the original."""
    return bool(_DROPPED.search(text))


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
    # the business definitions in force for this asker here (core/definitions.in_force): the
    # pipeline picks the ones the question needs
    definitions: Definitions = field(default_factory=Definitions)
