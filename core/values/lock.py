"""The lock of a value index: one build or refresh of it at a time, across threads and processes.

Why: an index folder is written by swapping folders (core/values/store.py), and two writers at
once can fail half way; a scheduled refresh (core/index_refresh.py), `python -m bot index` and the
build a small database gets on its first lookup (core/values/lookup.py) may all start together.
A lock file beside the folder is held with flock — released by the system when a process dies —
plus a lock per file within the process (flock does not keep two threads of one process apart).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from core.demo_file import build_lock
from core.values.source import Source
from core.values.store import index_path

if sys.platform != "win32":
    import fcntl


def lock_path(db: Source) -> Path:
    """The lock file of `db`'s index: beside its folder, which is swapped whole on every write."""
    path = index_path(db)
    return path.with_name(f"{path.name}.lock")


@contextlib.contextmanager
def index_lock(db: Source, *, wait: bool = True, on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold the lock of `db`'s index: yields True once held. Another thread of this process or
    another process building or refreshing it: wait for it (`wait`, calling `on_wait` first), or
    yield False at once."""
    lock_file = lock_path(db)
    local = build_lock(lock_file)
    waited = False

    def waiting() -> None:
        nonlocal waited
        if on_wait is not None and not waited:
            on_wait()
        waited = True

    if not local.acquire(blocking=False):
        if not wait:
            yield False
            return
        waiting()
        local.acquire()
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_file, "a+b") as handle:
            if not _flock(handle, block=False):
                if not wait:
                    yield False
                    return
                waiting()
                _flock(handle, block=True)
            yield True  # closing the file releases the lock
    finally:
        local.release()


def _flock(handle: IO[bytes], *, block: bool) -> bool:
    """Take the exclusive lock on an open lock file; False when another holds it and not `block`."""
    if sys.platform == "win32":  # no flock: the process-wide lock is all there is
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True
