"""The answering queue: questions are answered a few at a time, in the order they arrived, and a
burst waits its turn instead of being turned away.

A chat wants every request acknowledged within seconds, and one process must not run more
questions at once than its databases and LLM quota can take: `workers` questions run in parallel.
Every other question waits here, in arrival order, for as long as it takes. It may wait safely:
it was claimed in the state database before it was queued (claims.py), with what is needed to
answer it again, and its lease is renewed while it waits — if the process stops, another one takes
the question over. So nothing here says "busy"; the only question refused is one the state
database itself cannot take (the claim fails, and the adapter says so).

`position` says where a question submitted now would stand, so the adapter can show it: a
question that has a full round of answers ahead of it (`long`) shows "queued — N ahead of you",
one that waits less shows only that it waits for a free worker.

It is a `concurrent.futures.Executor`, so an asyncio adapter can `run_in_executor` on it (Teams),
and a thread-based one can `put` work it does not wait for (Slack).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Position:
    """Where a question submitted now stands in line."""

    ahead: int  # questions waiting that start before it
    starts_now: bool  # a worker is free: it starts at once
    long: bool  # at least a full round of answers (one per worker) waits ahead of it


class AnswerQueue(Executor):
    def __init__(self, workers: int, name: str = "askbase-worker") -> None:
        self.workers = max(1, workers)
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._submitted = 0
        self._started = 0
        self._finished = 0

    @property
    def waiting(self) -> int:
        """Questions submitted that no worker has started yet."""
        with self._lock:
            return self._submitted - self._started

    @property
    def idle(self) -> bool:
        """A job submitted now starts at once (counted from submission, so it is right before the
        jobs just submitted have started)."""
        with self._lock:
            return self._submitted - self._finished < self.workers

    def position(self) -> Position:
        with self._lock:
            ahead = self._submitted - self._started
            in_flight = self._submitted - self._finished
        return Position(ahead=ahead, starts_now=in_flight < self.workers, long=ahead >= self.workers)

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Queue `fn`; its future. RuntimeError once the queue is shut down (nothing queued)."""

        def run() -> T:
            with self._lock:
                self._started += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self._finished += 1

        with self._lock:
            self._submitted += 1
        try:
            return self._executor.submit(run)
        except RuntimeError:
            with self._lock:
                self._submitted -= 1
            raise

    def put(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> bool:
        """Run `fn` in its turn without waiting for it; its failure is logged (a job's own handler
        failed: the worker lives on). False only when the queue is shut down (process stopping)."""

        def job() -> None:
            try:
                fn(*args, **kwargs)
            except Exception:
                log.exception("background job %s failed", getattr(fn, "__name__", fn))

        try:
            self.submit(job)
        except RuntimeError:
            return False
        return True

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=cancel_futures)
