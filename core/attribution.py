"""Who a query runs for, so every statement sent to a warehouse can say so.

Warehouses bill and audit per statement: a data team reading its query history must see which
statements Askbase sent, for whom and for which question (the trace id links the warehouse's
history to Askbase's audit log). The asker travels in a context variable set by `Askbase.ask` and
`rerun` (like the identity of core/identity.py), the trace id in another one set by
`Trace.stage` (core/trace.py), so no stage in between carries them.

What is sent (core/warehouse/): Snowflake `QUERY_TAG` JSON, BigQuery job labels, Redshift
`query_group`, Trino client tags, Databricks user agent. Only ids, never the question: a query
history is read by more people than the channel the question was asked in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

APP = "askbase"


@dataclass(frozen=True)
class Asker:
    user: str = ""  # Slack/Teams user id; "" for the operator's CLI and work done for nobody
    source: str = ""  # slack, teams, cli, schedule ...


_asker: ContextVar[Asker | None] = ContextVar("askbase_asker", default=None)
_trace_id: ContextVar[str] = ContextVar("askbase_trace_id", default="")


@contextmanager
def asking(asker: Asker) -> Iterator[None]:
    token = _asker.set(asker)
    try:
        yield
    finally:
        _asker.reset(token)


@contextmanager
def tracing(trace_id: str) -> Iterator[None]:
    token = _trace_id.set(trace_id)
    try:
        yield
    finally:
        _trace_id.reset(token)


@dataclass(frozen=True)
class Attribution:
    """What one statement says about itself."""

    user: str
    source: str
    trace: str

    def tag(self, database: str = "") -> str:
        """Snowflake's QUERY_TAG: compact JSON, at most 2,000 characters."""
        data = {"app": APP, "asker": self.user, "source": self.source, "trace": self.trace}
        if database:
            data["database"] = database
        return json.dumps(data, separators=(",", ":"))[:2000]

    def labels(self) -> dict[str, str]:
        """BigQuery job labels: lower-case letters, digits, `_` and `-`, at most 63 characters."""
        raw = {"app": APP, "asker": self.user or "none", "source": self.source or "none", "trace": self.trace}
        return {key: _label(value) for key, value in raw.items() if _label(value)}

    def words(self) -> list[str]:
        """Trino client tags and the like: `askbase`, `asker:U1`, `trace:abc`."""
        return [APP, *(f"{k}:{v}" for k, v in (("asker", self.user), ("trace", self.trace)) if v)]


def current() -> Attribution:
    asker = _asker.get() or Asker()
    return Attribution(user=asker.user, source=asker.source, trace=_trace_id.get())


def _label(value: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "_", value.lower())[:63]
