"""Answers from a chat's API kept until they expire: who is in which group, a user's email.

Access rules and analyst checks ask Slack or Teams who someone is on every question; asking once
per few minutes keeps a busy channel from costing an API call per message, and a change in the
chat still takes effect within the expiry. Each entry has its own expiry, so a failed lookup can
be kept briefly (try again soon) and a good one for longer. Thread-safe: listeners run on threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Expiring(Generic[K, V]):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> tuple[V] | None:
        """`(value,)` while it is fresh (the value itself may be None or empty), else None."""
        with self._lock:
            found = self._entries.get(key)
        if found is None or found[0] <= self._clock():
            return None
        return (found[1],)

    def put(self, key: K, value: V, ttl_s: float) -> V:
        with self._lock:
            self._entries[key] = (self._clock() + ttl_s, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
