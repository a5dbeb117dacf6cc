"""The index on disk: flat numpy arrays, memory-mapped when opened, one folder per database.

    values_bin, values_off   the values as typed (UTF-8), one after another, and their offsets
    gram_keys, gram_off      the sorted byte trigrams of the folded, space-free values (with SEP as
                             start and end marker) and where each one's postings start
    postings                 the value ids containing each trigram, sorted
    meta.json                the column entries (table, column, first value id, count, fingerprint),
                             the columns left out and why, and INDEX_VERSION

A folder is written beside the old one and swapped in, so readers never see half an index.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.catalog import Catalog
from core.values.columns import Access
from core.values.folding import SEP, fold_many
from core.values.progress import Progress, ProgressFn
from core.values.source import Source

log = logging.getLogger(__name__)

INDEX_VERSION = 1
MAX_VALUE_CHARS = 200  # longer values are prose, not something a user types
SMALL_COLUMN = 2_000  # columns this small are also searched one value at a time when the index misses
SMALL_TOTAL = 50_000
SEP_BYTE = ord(SEP)


def index_path(db: Source) -> Path:
    """Where `db`'s index lives: one folder per database name and URL."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in db.name)[:60] or "db"
    digest = hashlib.sha256(f"{db.name}|{db.config.url}".encode()).hexdigest()[:8]
    return Path(db.var_dir) / "index" / f"{safe}-{digest}"


ARRAYS = ("values_bin", "values_off", "gram_keys", "gram_off", "postings")


def value_grams(compact_joined: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Byte trigrams (24-bit codes) and value ids of SEP-separated folded values, SEP as start/end marker."""
    b = np.frombuffer(compact_joined, dtype=np.uint8)
    sep = b == SEP_BYTE
    ok = ~sep[1:-1]  # a gram whose middle byte is a separator straddles two values
    vid = np.cumsum(sep[:-2], dtype=np.int32 if len(b) < 2**31 else np.int64) - 1
    gram = b[:-2].astype(np.uint32)
    gram <<= 16
    gram |= b[1:-1].astype(np.uint32) << 8
    gram |= b[2:]
    return gram[ok], vid[ok]


def write_index(
    path: Path,
    columns: list[dict[str, Any]],
    values: list[str],
    meta_extra: dict[str, Any],
    progress: ProgressFn,
) -> int:
    """Write the arrays and meta.json into a fresh folder, then swap it in. Returns bytes written."""
    progress(Progress("index", 0, len(values), "folding values"))
    folded = fold_many(values)
    compact = (SEP + SEP.join(folded).replace(" ", "") + SEP).encode()
    progress(Progress("index", len(values) // 3, len(values), "computing trigrams"))
    gram, vid = value_grams(compact)
    key = gram.astype(np.uint64)
    del gram
    key <<= np.uint64(32)
    key |= vid.astype(np.uint64)
    del vid
    progress(Progress("index", 2 * len(values) // 3, len(values), f"sorting {len(key):,} postings"))
    key.sort()
    if len(key):
        keep = np.empty(len(key), dtype=bool)
        keep[0] = True
        np.not_equal(key[1:], key[:-1], out=keep[1:])
        key = key[keep]
    grams = (key >> np.uint64(32)).astype(np.uint32)
    postings = (key & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    del key
    starts = np.flatnonzero(np.r_[True, grams[1:] != grams[:-1]]) if len(grams) else np.zeros(0, np.int64)
    gram_keys = grams[starts]
    gram_off = np.r_[starts, len(grams)].astype(np.uint32 if len(grams) < 2**32 else np.uint64)
    del grams
    encoded = [v.encode() for v in values]
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded))
    total = int(lengths.sum())
    values_off = np.zeros(len(values) + 1, dtype=np.uint32 if total < 2**32 else np.uint64)
    np.cumsum(lengths, out=values_off[1:], dtype=values_off.dtype)
    values_bin = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    progress(Progress("write", 0, None, str(path)))

    tmp = path.parent / f".{path.name}.tmp-{threading.get_ident()}-{time.time_ns()}"
    tmp.mkdir(parents=True, exist_ok=True)
    arrays = dict(
        values_bin=values_bin,
        values_off=values_off,
        gram_keys=gram_keys,
        gram_off=gram_off,
        postings=postings,
    )
    for name, arr in arrays.items():
        np.save(tmp / f"{name}.npy", arr)
    meta = {"version": INDEX_VERSION, "values": len(values), "columns": columns, **meta_extra}
    (tmp / "meta.json").write_text(json.dumps(meta))
    old = path.parent / f".{path.name}.old-{time.time_ns()}"
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return folder_bytes(path)


@dataclass
class LoadedIndex:
    """An index opened from disk: memory-mapped arrays plus what lookups need in memory."""

    path: Path
    stamp: float
    meta: dict[str, Any]
    values_bin: np.ndarray
    values_off: np.ndarray
    gram_keys: np.ndarray
    gram_off: np.ndarray
    postings: np.ndarray
    col_starts: np.ndarray  # first value id of each column entry
    col_allowed: np.ndarray  # bool per column entry: still in the catalog and not denied
    _small: tuple[list[int], list[str], list[str]] | None = None

    @property
    def n(self) -> int:
        return int(self.meta["values"])

    def value(self, vid: int) -> str:
        return self.values([vid])[0]

    def values(self, vids: Sequence[int] | np.ndarray) -> list[str]:
        ids = np.asarray(vids, dtype=np.int64)
        starts, ends = self.values_off[ids].tolist(), self.values_off[ids + 1].tolist()
        blob = self.values_bin.data
        return [bytes(blob[a:b]).decode() for a, b in zip(starts, ends, strict=True)]

    def column_of(self, vid: int) -> dict[str, Any]:
        column: dict[str, Any] = self.meta["columns"][
            int(np.searchsorted(self.col_starts, vid, side="right")) - 1
        ]
        return column

    def small_columns(self) -> tuple[list[int], list[str], list[str]]:
        """Value ids, folded and compact forms of the smallest columns (states, statuses, semesters).

        A short word with two typos ('Pnara' for 'Panama') shares no trigram with the value, so
        these few values are also compared one by one when the index finds nothing close.
        """
        if self._small is None:
            vids: list[int] = []
            entries = [
                (c["count"], c["start"])
                for c, ok in zip(self.meta["columns"], self.col_allowed.tolist(), strict=True)
                if ok and c["count"] <= SMALL_COLUMN
            ]
            for count, start in sorted(entries):
                if len(vids) + count > SMALL_TOTAL:
                    break
                vids.extend(range(start, start + count))
            folded = fold_many(self.values(vids))
            self._small = (vids, folded, [f.replace(" ", "") for f in folded])
        return self._small


def load_index(path: Path, catalog: Catalog, access: Access) -> LoadedIndex | None:
    meta_file = path / "meta.json"
    try:
        stamp = meta_file.stat().st_mtime
        meta = json.loads(meta_file.read_text())
        if meta.get("version") != INDEX_VERSION:
            log.warning("value index %s has an old format; rebuild it", path)
            return None
        # Plain ndarray views of the maps: the same pages, without np.memmap's per-slice overhead.
        arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r").view(np.ndarray) for name in ARRAYS}
    except (OSError, ValueError) as exc:
        log.warning("cannot open value index %s: %s", path, exc)
        return None
    columns = meta["columns"]
    allowed = []
    for c in columns:
        table = catalog.table(c["table"])
        allowed.append(bool(table and table.column(c["column"]) and access.allows(c["table"], c["column"])))
    return LoadedIndex(
        path=path,
        stamp=stamp,
        meta=meta,
        col_starts=np.array([c["start"] for c in columns], dtype=np.int64),
        col_allowed=np.array(allowed, dtype=bool),
        **arrays,
    )


def folder_bytes(path: Path) -> int:
    """Size of an index folder on disk."""
    return sum(f.stat().st_size for f in path.iterdir())


def stored_columns(path: Path) -> tuple[dict[str, dict[str, Any]], Callable[[dict[str, Any]], list[str]]]:
    """Column entries of the index on disk, and a reader of one entry's values."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        if meta.get("version") != INDEX_VERSION:
            return {}, lambda _: []
        blob = np.load(path / "values_bin.npy", mmap_mode="r")
        off = np.load(path / "values_off.npy", mmap_mode="r")
    except (OSError, ValueError):
        return {}, lambda _: []

    def read(entry: dict[str, Any]) -> list[str]:
        s, n = entry["start"], entry["count"]
        o = off[s : s + n + 1].astype(np.int64)
        data = bytes(blob[o[0] : o[-1]])
        o -= o[0]
        return [data[a:b].decode() for a, b in zip(o[:-1].tolist(), o[1:].tolist(), strict=True)]

    return {f"{c['table']}.{c['column']}": c for c in meta["columns"]}, read


def iter_index_values(db: Source) -> Iterable[tuple[str, str, str]]:
    """Every (table, column, value) in the index on disk, e.g. for benchmarks and exports."""
    entries, read = stored_columns(index_path(db))
    for entry in entries.values():
        for v in read(entry):
            yield entry["table"], entry["column"], v
