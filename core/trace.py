"""What each stage of a question did: inputs it used, outputs, milliseconds, LLM calls and tokens.

A `Trace` is filled by the pipeline with `with trace.stage("name") as stage:`. While a stage is
open it is the *current* stage of this thread (a context variable), so the LLM client can attach
its calls without every stage threading a recorder through its signature.

`to_dict` is what leaves the process — stored for Slack's Details button, printed by `--json` —
so it is scrubbed there like the audit log (core/redact.py): a credential typed into a question
reaches the question, the model's keywords and error texts, and must reach none of them shown.
"""

from __future__ import annotations

import contextvars
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from core.attribution import tracing
from core.redact import redact_all


@dataclass
class LLMCall:
    task: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: float = 0.0
    attempts: int = 1
    ok: bool = True
    error: str | None = None


@dataclass
class StageRecord:
    name: str
    ms: float = 0.0
    llm_calls: list[LLMCall] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def tokens(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for c in self.llm_calls)


_current: contextvars.ContextVar[StageRecord | None] = contextvars.ContextVar("askbase_stage", default=None)


def record_llm_call(call: LLMCall) -> None:
    """Attach an LLM call to the stage that is running in this context (if any)."""
    stage = _current.get()
    if stage is not None:
        stage.llm_calls.append(call)


@dataclass
class Trace:
    question: str = ""
    database: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    stages: list[StageRecord] = field(default_factory=list)

    @contextmanager
    def stage(self, name: str) -> Iterator[StageRecord]:
        record = StageRecord(name)
        self.stages.append(record)
        token = _current.set(record)
        start = time.perf_counter()
        try:
            with tracing(self.id):  # statements sent to a warehouse name the trace (core/attribution.py)
                yield record
        except BaseException as exc:
            record.error = f"{type(exc).__name__}: {exc}"[:500]
            raise
        finally:
            record.ms = round((time.perf_counter() - start) * 1000, 3)
            _current.reset(token)

    @property
    def llm_calls(self) -> int:
        return sum(len(s.llm_calls) for s in self.stages)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.stages)

    @property
    def ms(self) -> float:
        return round(sum(s.ms for s in self.stages), 3)

    @property
    def llm_ms(self) -> float:
        return round(sum(c.ms for s in self.stages for c in s.llm_calls), 3)

    def to_dict(self) -> dict[str, Any]:
        """Every stage with its outputs, credentials and configured secrets replaced by `***`."""
        redacted: dict[str, Any] = redact_all(
            {
                "id": self.id,
                "question": self.question,
                "database": self.database,
                "ms": self.ms,
                "engine_ms": round(self.ms - self.llm_ms, 3),
                "llm_calls": self.llm_calls,
                "tokens": self.tokens,
                "stages": [asdict(s) for s in self.stages],
            }
        )
        return redacted
