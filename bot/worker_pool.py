"""Bounded background work: questions are answered off the request thread, a few at a time.

Slack wants every request acknowledged within 3 seconds, and one process must not run more
questions at once than its databases and LLM quota can take. `workers` questions run in
parallel; up to `max_pending` more wait their turn; beyond that `submit` says no, so the caller
can tell the person to try again instead of queueing without bound.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)


class WorkerPool:
    def __init__(self, workers: int, max_pending: int | None = None, name: str = "askbase-worker") -> None:
        self.workers = max(1, workers)
        self.max_pending = max_pending if max_pending is not None else self.workers * 8
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=name)
        self._slots = threading.BoundedSemaphore(self.workers + self.max_pending)
        self._lock = threading.Lock()
        self._running = 0

    @property
    def idle(self) -> bool:
        """A job submitted now starts at once."""
        with self._lock:
            return self._running < self.workers

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> bool:
        """Run `fn` in the background; False when the pool is full (nothing was queued)."""
        if not self._slots.acquire(blocking=False):
            return False

        with self._lock:
            self._running += 1  # counted from submission, so `idle` is right before the job starts

        def run() -> None:
            try:
                fn(*args, **kwargs)
            except Exception:  # a job's own handler failed: keep the worker alive, keep the log
                log.exception("background job %s failed", getattr(fn, "__name__", fn))
            finally:
                with self._lock:
                    self._running -= 1
                self._slots.release()

        try:
            self._executor.submit(run)
        except RuntimeError:  # shutting down
            with self._lock:
                self._running -= 1
            self._slots.release()
            return False
        return True

    def shutdown(self, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
