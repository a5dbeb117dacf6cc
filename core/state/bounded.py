"""State-database calls with a time limit, for paths that must answer a person quickly.

Slack wants an ack within 3 seconds and a person wants to hear something, but a state database
can hang in ways no driver timeout covers: a SQLite file locked by another process waits out its
busy timeout (30 s), an unreachable PostgreSQL host waits out TCP. `call_within` runs the call on
a small pool of its own threads and gives up waiting after `seconds`; the call itself goes on
and finishes (or fails) in the background, so callers that write must make a late success
harmless (core/state/events.py `claim` does).
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREADS = 16  # calls stuck on a hung database hold one each; beyond that new calls queue (and time out)


class StateUnavailable(Exception):
    """The state database did not answer in time, or failed; the message names which, without secrets."""


_pool: cf.ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> cf.ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = cf.ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="askbase-state")
        return _pool


def call_within(seconds: float, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)`, or StateUnavailable when it takes longer than `seconds` or raises."""
    future = _executor().submit(fn, *args, **kwargs)
    try:
        return future.result(timeout=seconds)
    except cf.TimeoutError as exc:
        raise StateUnavailable(f"the state database did not answer within {seconds:g} s") from exc
    except Exception as exc:  # OperationalError (locked, read-only, down), IntegrityError surprises
        raise StateUnavailable(f"the state database failed: {type(exc).__name__}") from exc
