"""What the processes of one test run share: a folder, a lock on it, and the run's lifetime.

`make test` runs the tests in several pytest-xdist workers. Each used to build the demo database,
its DuckDB copy, the catalogs, relationship graphs and value indexes of the demo on every engine,
start its own Snowflake emulation and load the demo into it: the same work once per worker, a
tenth of the suite's CPU. Built once in the run's folder instead, the workers read the same files
(every cache Askbase writes there is written under a temporary name and renamed, so a reader never
sees half of one). Run without xdist, the folder is the session's own.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def run_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """`name` in the folder of this run: the parent of the workers' own temporary folders under
    xdist (pytest-N, numbered per run), the session's temporary folder without it."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_owner() -> int:
    """The process whose end is the end of the run: the xdist controller (each worker's parent),
    or this process when there are no workers. A server shared by the workers ends with it."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


@contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """Held by one process of the run at a time (an advisory lock on `folder`/.lock): whoever holds
    it first builds what the folder is for, the others then find it built."""
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
