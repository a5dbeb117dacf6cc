"""A generated demo database as one SQLite file, written the same way for every demo.

core/demo.py (cloud operations) and core/insurance_demo.py generate their rows; this module writes
them. A file is written under a temporary name with no journal and no syncs (it is private until
renamed), fsynced once and renamed over the old one, so a reader sees the old file or the new one,
never half of one, and a failed build leaves no temporary file behind. Its SQLite header carries
our application id and the demo's version, so a missing, foreign, truncated or outdated file is
told apart from a good one by reading 100 bytes (`ensure` runs for every question). Threads of
one process build a file once (a lock per path); separate processes may both build it, and the
last rename wins with an identical file, which needs no lock file.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

APPLICATION_ID = 0x41534B42  # "ASKB" in the SQLite header: tells our file from any other

Rows = dict[str, list[tuple[Any, ...]]]


def stored_version(path: Path) -> int | None:
    """The version of a complete demo file at `path`, or None when missing, foreign or truncated.

    Reads the 100-byte SQLite header instead of opening a connection: a header read costs
    microseconds.
    """
    try:
        with open(path, "rb") as f:
            header = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return None
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return None
    if int.from_bytes(header[68:72], "big") != APPLICATION_ID:
        return None
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] == header[92:96] and page_size * pages != size:
        return None  # truncated copy
    return int.from_bytes(header[60:64], "big")


def write_rows(
    conn: sqlite3.Connection, schema: str, rows: Mapping[str, Sequence[tuple[Any, ...]]], version: int
) -> None:
    """Create the schema, insert the rows table by table, and stamp the file as ours at `version`."""
    # No journal and no syncs while writing: the file is private until renamed, and is fsynced once.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.executescript(schema)
    with conn:
        for table, table_rows in rows.items():
            if table_rows:
                marks = ", ".join("?" * len(table_rows[0]))
                conn.executemany(f"INSERT INTO {table} VALUES ({marks})", table_rows)
    conn.execute("ANALYZE")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()


def build(path: Path, write: Callable[[sqlite3.Connection], None]) -> Path:
    """Write a file at `path` with `write`, atomically replacing whatever is there."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o644)
        conn = sqlite3.connect(tmp)
        try:
            write(conn)
        finally:
            conn.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (POSIX); platforms without directory fds skip it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_build_locks: dict[Path, threading.Lock] = {}
_build_locks_guard = threading.Lock()


def build_lock(path: Path) -> threading.Lock:
    """One lock per file built in this process: two threads never build the same file at once."""
    with _build_locks_guard:
        return _build_locks.setdefault(Path(path).resolve(), threading.Lock())


def ensure(path: Path, version: int, build_file: Callable[[Path], object]) -> Path:
    """The file at `path`, built first with `build_file` if it is missing, damaged or from
    another version."""
    path = Path(path).resolve()
    if stored_version(path) == version:
        return path
    with _build_locks_guard:
        lock = _build_locks.setdefault(path, threading.Lock())
    with lock:
        found = stored_version(path)
        if found != version:
            log.info("building demo database %s (found version %s, want %s)", path, found, version)
            build_file(path)
    return path


def row_counts(path: Path) -> dict[str, int]:
    """Rows per table, in the order the tables were created."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY rowid"
            )
        ]
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


def print_counts(path: Path) -> None:
    """The rows per table of a built file, and their total, as the build commands print them."""
    counts = row_counts(path)
    width = max(map(len, counts))
    for table, count in counts.items():
        print(f"{table:<{width}}  {count:>6}")
    print(f"{'total':<{width}}  {sum(counts.values()):>6}")
