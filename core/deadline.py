"""One deadline per question, shared by every LLM call and retry made while answering it.

Each LLM call has its own timeout and bounded retries (core/llm.py), but a question makes several
calls, each retried: with default settings a hanging endpoint held a worker for minutes before
keyword mode answered. `Askbase.ask` opens `within(engine.question_deadline_s)` around the
pipeline; the LLM client cuts each attempt's timeout and each backoff to what is left, and fails
at once when nothing is — the pipeline then answers in keyword mode, or says what failed.

A context variable, like the trace's current stage: the pipeline runs a question on one thread,
and no stage has to pass the deadline along.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Deadline:
    at: float  # time.monotonic()
    seconds: float  # the whole allowance, for messages

    @property
    def remaining(self) -> float:
        return self.at - time.monotonic()


_current: ContextVar[Deadline | None] = ContextVar("askbase_deadline", default=None)


@contextmanager
def within(seconds: float | None) -> Iterator[Deadline | None]:
    """Everything inside shares one deadline `seconds` from now (None or 0: no deadline)."""
    deadline = Deadline(time.monotonic() + seconds, seconds) if seconds and seconds > 0 else None
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


def current() -> Deadline | None:
    return _current.get()
