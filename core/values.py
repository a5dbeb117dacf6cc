"""The value index: find the stored spelling of what the user typed ("E176" → 'E-176') among millions of values.

Why not CHESS's MinHash LSH (papers/chess.txt, appendix A.1): a MinHash object per value costs
kilobytes and the better part of a millisecond to build (`python -m core.bench values` measures it),
so a million values take many minutes and gigabytes, and its loose 0.01 threshold returns
thousands of candidates per query. Instead:

- every value is *folded* (case-folded, accents stripped, punctuation and spaces removed), so
  'E-176', 'e 176' and 'E176' are the same string to the index;
- an inverted index maps each byte trigram of the folded value (with start/end markers) to the
  sorted ids of the values containing it. It is built with numpy in a few seconds per million
  values and stored as flat arrays (~100 bytes per value) that are memory-mapped, so memory stays
  bounded and opening an index costs nothing;
- a lookup scores values by the IDF weight of the trigrams they share with the query (rarest
  trigrams first, within a postings budget, so common trigrams never dominate the time), keeps
  the best ~150 and re-ranks them with `similarity()`, an edit-distance and word-alignment score
  that tolerates typos, word order and a missing word;
- purely numeric keywords match exactly (LAIA-SQL §4.2): '2024' never suggests '2042'.

Catalog value meanings (`Column.values`: 'OPN' → 'open') are matched in memory alongside the index,
so "open" finds Status = 'OPN'.

On disk: one folder per database under `var/index/`, rebuilt atomically. `refresh_index` re-reads
only the columns whose table changed (by cheap statistics) or that are small enough to re-read,
and rewrites the index only when a value set actually changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
import sqlalchemy as sa
from rapidfuzz import fuzz, process

from core.catalog import Catalog, Column, Table
from core.retrieve import ValueMatch

if TYPE_CHECKING:
    from core.database import Database

log = logging.getLogger(__name__)

INDEX_VERSION = 1
MAX_VALUE_CHARS = 200  # longer values are prose, not something a user types
PLAN_SAMPLE = 500  # rows sampled per column to decide whether to index it
FULL_READ_MAX_ROWS = 5_000_000  # bigger tables are indexed from a sample of their rows
SAMPLE_READ_ROWS = 2_000_000
MAX_VALUES_PER_COLUMN = 2_000_000
AUTO_BUILD_MAX_ROWS = 250_000  # below this, the first lookup builds the index itself
REREAD_MAX_ROWS = 100_000  # refresh re-reads tables this small instead of trusting statistics
CANDIDATES = 150  # values taken from the trigram index per lookup
RERANKED = 60  # of which this many are scored word by word by `similarity`
SMALL_COLUMN = 2_000  # columns this small are also searched one value at a time when the index misses
SMALL_TOTAL = 50_000
CLOSE = 0.8  # a match this good needs no second pass
POSTINGS_BUDGET = 400_000  # posting entries scored per lookup, rarest trigrams first
DIRECT_DEADLINE_S = 2.0  # bounded direct lookup when no index exists for a large database
DIRECT_MAX_COLUMNS = 40
EXACT_SCAN_MAX_ROWS = 1_000_000  # pasted e-mails/URLs are looked up exactly in tables up to this size
SEP = "\x00"  # separates values in bulk strings; never part of a folded value
SEP_BYTE = 0


# ---------------------------------------------------------------------------------------------
# folding: the form in which values and keywords are compared

_ASCII_TABLE: dict[int, str | None] = {i: " " for i in range(128) if not chr(i).isalnum()}
_ASCII_TABLE[0] = SEP


def fold_many(texts: Sequence[str]) -> list[str]:
    """`fold` for many texts at once: a few passes over one joined string instead of a loop."""
    if not texts:
        return []
    joined = SEP.join(texts)
    if joined.count(SEP) != len(texts) - 1:  # a text holds NUL itself: fold one by one
        return [fold_many([t.replace(SEP, " ")])[0] for t in texts]
    joined = joined.casefold()
    if not joined.isascii():
        joined = unicodedata.normalize("NFKD", joined)
        table: dict[int, str | None] = {}
        for ch in set(joined):
            if ch.isascii():
                continue
            if unicodedata.combining(ch):
                table[ord(ch)] = None  # accents, once NFKD separated them
            elif not ch.isalnum():
                table[ord(ch)] = " "
        joined = joined.translate(table)
    joined = joined.translate(_ASCII_TABLE)
    joined = re.sub("  +", " ", joined)
    joined = joined.replace(" " + SEP, SEP).replace(SEP + " ", SEP).strip(" ")
    return joined.split(SEP)


def fold(text: str) -> str:
    """Lower-case, accent-free words separated by single spaces: 'Zürich-Süd' → 'zurich sud'."""
    return fold_many([text])[0]


_NUMERIC = re.compile(r"[+-]?\d+(?:[.,]\d+)?")


def is_numeric(text: str) -> bool:
    """A purely numeric keyword, matched exactly (LAIA-SQL §4.2)."""
    return bool(_NUMERIC.fullmatch(text.strip()))


def similarity(query: str, value: str) -> float:
    """How well a folded keyword matches a folded stored value, 0..1 (1 only for the same string).

    The better of two views: the whole strings without spaces (typos, punctuation, spacing), and
    word-by-word alignment (word order, a missing or extra word), where each query word takes its
    best value word and the share of the value left unmatched costs a little.
    """
    qc, vc = query.replace(" ", ""), value.replace(" ", "")
    if not qc or not vc:
        return 0.0
    if qc == vc:
        return 1.0
    best = fuzz.ratio(qc, vc) / 100
    qt, vt = query.split(), value.split()
    if len(qt) > 1 or len(vt) > 1:
        v_best = [0.0] * len(vt)
        q_cover = 0.0
        for a in qt:
            top, at = 0.0, -1
            for j, b in enumerate(vt):
                r = fuzz.ratio(a, b) / 100
                if r >= 0.5 and r > top:
                    top, at = r, j
            if at >= 0:
                q_cover += len(a) * top
                v_best[at] = max(v_best[at], top)
        q_cover /= len(qc)
        v_cover = sum(len(b) * r for b, r in zip(vt, v_best, strict=True)) / len(vc)
        best = max(best, q_cover * (0.65 + 0.35 * v_cover))
    return round(min(best, 0.99), 4)


# ---------------------------------------------------------------------------------------------
# progress and statistics


@dataclass(frozen=True)
class Progress:
    """One step of a build: phase is 'plan', 'read', 'index', 'write' or 'done'."""

    phase: str
    done: int = 0
    total: int | None = None
    detail: str = ""


ProgressFn = Callable[[Progress], None]


def text_progress(stream: TextIO | None = None, every_s: float = 1.0) -> ProgressFn:
    """A progress callback that prints a line per phase change and at most one per `every_s` seconds."""
    out = stream or sys.stderr
    last = {"t": 0.0, "phase": ""}

    def report(p: Progress) -> None:
        now = time.monotonic()
        if p.phase == last["phase"] and now - last["t"] < every_s and p.phase != "done":
            return
        last.update(t=now, phase=p.phase)
        amount = f"{p.done:,}" + (f"/{p.total:,}" if p.total else "")
        print(f"[index] {p.phase:<5} {amount:>21}  {p.detail}", file=out, flush=True)

    return report


def _no_progress(_: Progress) -> None:
    pass


@dataclass
class IndexStats:
    database: str
    path: str
    values: int = 0
    columns: int = 0
    bytes: int = 0
    seconds: float = 0.0
    rewritten: bool = False  # False: refresh found nothing changed
    read_columns: list[str] = field(default_factory=list)  # read from the database this time
    kept_columns: list[str] = field(default_factory=list)  # carried over from the previous index
    sampled_columns: list[str] = field(default_factory=list)  # indexed from a sample of rows
    skipped: dict[str, str] = field(default_factory=dict)  # "table.column" → why not indexed

    @property
    def bytes_per_value(self) -> float:
        return self.bytes / self.values if self.values else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "bytes_per_value": round(self.bytes_per_value, 1)}


# ---------------------------------------------------------------------------------------------
# which columns to index


@dataclass(frozen=True)
class ColumnChoice:
    table: str
    column: str
    index: bool
    reason: str  # text | enum-like | id | e-mail | url | long text | date | empty | denied
    sample_rows: bool = False  # table too large: read a sample of rows

    @property
    def key(self) -> str:
        return f"{self.table}.{self.column}"


@dataclass(frozen=True)
class Access:
    """What may never enter the index or a match: denied tables and denied or masked columns."""

    tables: frozenset[str] = frozenset()
    columns: frozenset[str] = frozenset()

    @classmethod
    def of(cls, db: Database) -> Access:
        cfg = db.config
        return cls(
            tables=frozenset(t.lower() for t in cfg.deny_tables),
            columns=frozenset(c.lower() for c in [*cfg.deny_columns, *cfg.mask_columns]),
        )

    def allows(self, table: str, column: str | None = None) -> bool:
        if table.lower() in self.tables:
            return False
        return column is None or f"{table}.{column}".lower() not in self.columns


NO_RULES = Access()


_ID_NAME = re.compile(r"(^|_)(id|uuid|guid|pk|fk|key|hash|token|secret|password|passwd|salt)$", re.I)
_CAMEL_ID = re.compile(r"[a-z](Id|ID|Uuid|UUID|Key)$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)
_URL = re.compile(r"^(https?|ftp)://|^www\.", re.I)
_MACHINE_ID = re.compile(
    r"^(\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?|[0-9a-f]{16,})$", re.I
)
_DIGITS = re.compile(r"^\d+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?)?")


def _quoted(engine: sa.Engine, name: str) -> str:
    return engine.dialect.identifier_preparer.quote(name)


def _select_column(engine: sa.Engine, table: Table, column: str, sample_rows: int | None) -> sa.Select:
    """SELECT DISTINCT column FROM table [sampled], NULLs left out."""
    t = sa.table(table.name, sa.column(column), schema=table.schema)
    col = t.c[column]
    if sample_rows:
        estimate = max(table.row_estimate or sample_rows, 1)
        if engine.dialect.name == "postgresql" and estimate > sample_rows:
            percent = max(0.01, min(100.0, 100.0 * sample_rows / estimate))
            sampled = sa.tablesample(t, sa.func.system(percent))
            col = sampled.c[column]
        else:
            sub = sa.select(col).limit(sample_rows).subquery()
            col = sub.c[column]
    return sa.select(col).where(col.is_not(None)).distinct()


def _looks_like(sample: list[str], pattern: re.Pattern[str]) -> float:
    return sum(1 for s in sample if pattern.search(s)) / len(sample)


def plan_columns(db: Database, progress: ProgressFn | None = None) -> list[ColumnChoice]:
    """Decide per text column whether to index it, from its name, keys and a small sample of values.

    Ids, e-mails, URLs, dates kept as text and long free text are left out; enum-like columns and
    names, codes, places and titles are kept, foreign keys included when they hold such values
    (questions filter on instructor.dept_name as often as on department.dept_name). Tables larger
    than FULL_READ_MAX_ROWS (by the engine's statistics) are read from a sample of rows.
    """
    progress = progress or _no_progress
    catalog = db.catalog
    access = Access.of(db)
    texts = [(t, c) for t in catalog.tables for c in t.columns if c.kind == "text"]
    choices: list[ColumnChoice] = []
    with db.engine.connect() as conn:
        for i, (table, col) in enumerate(texts):
            progress(Progress("plan", i, len(texts), f"{table.name}.{col.name}"))
            choices.append(_choose(conn, table, col, access))
    progress(Progress("plan", len(texts), len(texts), f"{sum(c.index for c in choices)} columns to index"))
    return choices


def _choose(conn: sa.Connection, table: Table, col: Column, access: Access) -> ColumnChoice:
    def choice(index: bool, reason: str) -> ColumnChoice:
        big = (table.row_estimate or 0) > FULL_READ_MAX_ROWS
        return ColumnChoice(table.name, col.name, index, reason, sample_rows=big and index)

    if not access.allows(table.name, col.name):
        return choice(False, "denied")
    id_named = bool(_ID_NAME.search(col.name) or _CAMEL_ID.search(col.name))
    query = sa.select(sa.column(col.name)).select_from(sa.table(table.name, schema=table.schema))
    query = query.where(sa.column(col.name).is_not(None)).limit(PLAN_SAMPLE)
    try:
        sample = [str(v) for v in conn.execute(query).scalars() if not isinstance(v, bytes | memoryview)]
    except sa.exc.DBAPIError as exc:
        conn.rollback()
        log.warning("cannot sample %s.%s: %s", table.name, col.name, exc)
        return choice(False, "unreadable")
    sample = [s for s in sample if s.strip()]
    if not sample:
        return choice(False, "empty")
    if _looks_like(sample, _EMAIL) > 0.5:
        return choice(False, "e-mail")
    if _looks_like(sample, _URL) > 0.5:
        return choice(False, "url")
    if _looks_like(sample, _DATE) > 0.8:
        return choice(False, "date")
    if _looks_like(sample, _MACHINE_ID) > 0.8:
        return choice(False, "id")  # UUIDs, hashes
    if _looks_like(sample, _DIGITS) > 0.8 and (id_named or col.primary_key):
        return choice(False, "id")  # numbers kept as text in a key; zip codes and phone numbers stay
    distinct = len(set(sample))
    enum_like = distinct <= 50 and distinct <= 0.2 * len(sample) + 2
    avg_len = sum(len(s) for s in sample) / len(sample)
    avg_words = sum(len(s.split()) for s in sample) / len(sample)
    if (avg_len > 60 or avg_words > 8) and not enum_like:
        return choice(False, "long text")
    if id_named and not enum_like and avg_len > 24:
        return choice(False, "id")
    return choice(True, "enum-like" if enum_like else "text")


# ---------------------------------------------------------------------------------------------
# reading values and table fingerprints


def _read_values(
    conn: sa.Connection,
    engine: sa.Engine,
    table: Table,
    choice: ColumnChoice,
    progress: ProgressFn,
    total: int,
) -> list[str]:
    query = _select_column(engine, table, choice.column, SAMPLE_READ_ROWS if choice.sample_rows else None)
    out: list[str] = []
    result = conn.execution_options(stream_results=True, yield_per=20_000).execute(query)
    for part in result.scalars().partitions(20_000):
        out.extend(
            v if isinstance(v, str) else str(v)
            for v in part
            if not isinstance(v, bytes | memoryview) and len(str(v)) <= MAX_VALUE_CHARS
        )
        progress(Progress("read", len(out), total or None, choice.key))
        if len(out) >= MAX_VALUES_PER_COLUMN:
            log.warning("%s has over %d distinct values; indexing the first ones", choice.key, len(out))
            break
    result.close()
    return out


def table_fingerprint(conn: sa.Connection, engine: sa.Engine, table: Table) -> str | None:
    """A cheap sign that a table's rows changed, from the engine's statistics; None when unknown."""
    name = engine.dialect.name
    try:
        if name == "postgresql":
            row = conn.execute(
                sa.text(
                    "SELECT n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
                    "WHERE relname = :t AND schemaname = COALESCE(:s, current_schema())"
                ),
                {"t": table.name, "s": table.schema},
            ).first()
        elif name in ("mysql", "mariadb"):
            row = conn.execute(
                sa.text(
                    "SELECT table_rows, data_length, update_time, auto_increment FROM information_schema.tables "
                    "WHERE table_name = :t AND table_schema = COALESCE(:s, DATABASE())"
                ),
                {"t": table.name, "s": table.schema},
            ).first()
        elif name == "sqlite":
            quoted = _quoted(engine, table.name)
            row = conn.execute(sa.text(f"SELECT COUNT(*), MAX(rowid) FROM {quoted}")).first()
        else:
            return None
    except sa.exc.DBAPIError:
        conn.rollback()
        return None
    return None if row is None else repr(tuple(row))


# ---------------------------------------------------------------------------------------------
# the on-disk index


def index_path(db: Database) -> Path:
    """Where `db`'s index lives: one folder per database name and URL."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in db.name)[:60] or "db"
    digest = hashlib.sha256(f"{db.name}|{db.config.url}".encode()).hexdigest()[:8]
    return Path(db.var_dir) / "index" / f"{safe}-{digest}"


_ARRAYS = ("values_bin", "values_off", "gram_keys", "gram_off", "postings")


def _grams(compact_joined: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Byte trigrams (24-bit codes) and value ids of SEP-separated folded values, SEP as start/end marker."""
    b = np.frombuffer(compact_joined, dtype=np.uint8)
    sep = b == SEP_BYTE
    ok = ~sep[1:-1]  # a gram whose middle byte is a separator straddles two values
    vid = np.cumsum(sep[:-2], dtype=np.int32 if len(b) < 2**31 else np.int64)
    vid -= 1
    gram = b[:-2].astype(np.uint32)
    gram <<= 16
    gram |= b[1:-1].astype(np.uint32) << 8
    gram |= b[2:]
    return gram[ok], vid[ok]


def _trigrams(b: bytes) -> set[int]:
    return {(b[i] << 16) | (b[i + 1] << 8) | b[i + 2] for i in range(len(b) - 2)}


def _query_grams(query: str) -> np.ndarray:
    """Trigrams of the folded query as typed, plus those of its words in any order.

    The index holds values without spaces, so 'thomas wei' and 'wei thomas' differ in their start,
    end and word-junction trigrams; adding those of every order keeps a swapped pair of words
    from losing its candidates.
    """
    ws = query.split()
    codes = _trigrams((SEP + "".join(ws) + SEP).encode())
    if 1 < len(ws) <= 6:
        parts = [w.encode() for w in ws]
        for a in parts:
            codes |= _trigrams(SEP.encode() + a[:2]) | _trigrams(a[-2:] + SEP.encode())
            for b in parts:
                if a is not b:
                    codes |= _trigrams(a[-2:] + b[:1]) | _trigrams(a[-1:] + b[:2])
    return np.fromiter(codes, dtype=np.uint32, count=len(codes))


def _write_index(
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
    gram, vid = _grams(compact)
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
    return sum(f.stat().st_size for f in path.iterdir())


@dataclass
class _Loaded:
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
        blob = memoryview(self.values_bin)
        return [bytes(blob[a:b]).decode() for a, b in zip(starts, ends, strict=True)]

    def column_of(self, vid: int) -> dict[str, Any]:
        return self.meta["columns"][int(np.searchsorted(self.col_starts, vid, side="right")) - 1]

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


def _open(path: Path, catalog: Catalog, access: Access) -> _Loaded | None:
    meta_file = path / "meta.json"
    try:
        stamp = meta_file.stat().st_mtime
        meta = json.loads(meta_file.read_text())
        if meta.get("version") != INDEX_VERSION:
            log.warning("value index %s has an old format; rebuild it", path)
            return None
        # Plain ndarray views of the maps: the same pages, without np.memmap's per-slice overhead.
        arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r").view(np.ndarray) for name in _ARRAYS}
    except (OSError, ValueError) as exc:
        log.warning("cannot open value index %s: %s", path, exc)
        return None
    columns = meta["columns"]
    allowed = []
    for c in columns:
        table = catalog.table(c["table"])
        allowed.append(bool(table and table.column(c["column"]) and access.allows(c["table"], c["column"])))
    return _Loaded(
        path=path,
        stamp=stamp,
        meta=meta,
        col_starts=np.array([c["start"] for c in columns], dtype=np.int64),
        col_allowed=np.array(allowed, dtype=bool),
        **arrays,
    )


def _same_number(typed: str, stored: str) -> bool:
    typed, stored = typed.strip(), stored.strip()
    if typed == stored:
        return True
    try:
        return Decimal(typed.replace(",", ".")) == Decimal(stored)
    except InvalidOperation:
        return False


def _search(
    idx: _Loaded, query: str, k: int, numeric: str | None = None, candidates: int = CANDIDATES
) -> list[tuple[int, float]]:
    """Best value ids for a folded query: trigram IDF overlap picks candidates, `similarity` ranks them.

    `numeric`: the keyword as typed when it is a number; then only equal values count.
    """
    scored = _search_index(idx, query, numeric, candidates)
    if not numeric and (not scored or scored[0][0] < CLOSE):
        seen = {vid for _, _, vid in scored}
        vids, folded, compact = idx.small_columns()
        near = process.extract(
            query.replace(" ", ""), compact, scorer=fuzz.ratio, limit=3 * k, score_cutoff=50
        )
        for _, _, i in near:
            if vids[i] not in seen:
                scored.append((similarity(query, folded[i]), 0.0, vids[i]))
        scored.sort(key=lambda x: (-x[0], -x[1]))
    return [(vid, s) for s, _, vid in scored[:k]]


def _search_index(
    idx: _Loaded, query: str, numeric: str | None, candidates: int
) -> list[tuple[float, float, int]]:
    qc = query.replace(" ", "")
    if not qc or idx.n == 0 or len(idx.gram_keys) == 0:
        return []
    qgrams = np.sort(_query_grams(query))
    pos = np.searchsorted(idx.gram_keys, qgrams)
    inside = pos < len(idx.gram_keys)
    pos, qgrams = pos[inside], qgrams[inside]
    pos = pos[idx.gram_keys[pos] == qgrams]
    if not len(pos):
        return []
    starts = idx.gram_off[pos].astype(np.int64)
    ends = idx.gram_off[pos + 1].astype(np.int64)
    df = ends - starts
    order = np.argsort(df, kind="stable")
    budget = np.cumsum(df[order])
    take = order[: max(1, int(np.searchsorted(budget, POSTINGS_BUDGET, side="right")))]
    idf = np.log1p(idx.n / df[take])
    ids = np.concatenate([idx.postings[s:e] for s, e in zip(starts[take], ends[take], strict=True)])
    weights = np.repeat(idf, df[take])
    if len(ids) * 16 < idx.n:  # few postings: score only the ids present
        uniq, inverse = np.unique(ids, return_inverse=True)
        scores = np.bincount(inverse, weights=weights)
    else:
        scores_all = np.bincount(ids, weights=weights, minlength=idx.n)
        for c, ok in enumerate(idx.col_allowed):
            if not ok:
                end = idx.col_starts[c + 1] if c + 1 < len(idx.col_starts) else idx.n
                scores_all[idx.col_starts[c] : end] = 0
        floor = scores_all.max() * 0.25
        uniq = np.flatnonzero(scores_all > floor)
        scores = scores_all[uniq]
    if not idx.col_allowed.all():
        cols = np.searchsorted(idx.col_starts, uniq, side="right") - 1
        mask = idx.col_allowed[cols]
        uniq, scores = uniq[mask], scores[mask]
    if not len(uniq):
        return []
    # Among equal trigram overlap, shorter values are closer to the keyword.
    lengths = (idx.values_off[uniq + 1].astype(np.int64) - idx.values_off[uniq].astype(np.int64)).astype(
        float
    )
    rank = scores - 1e-3 * lengths
    if len(uniq) > candidates:
        top = np.argpartition(-rank, candidates)[:candidates]
        uniq, rank = uniq[top], rank[top]
    vids = uniq.tolist()
    texts = idx.values(uniq)
    if numeric is not None:
        return [
            (1.0, r, v)
            for v, t, r in zip(vids, texts, rank.tolist(), strict=True)
            if _same_number(numeric, t)
        ]
    folded = fold_many(texts)
    if len(vids) > RERANKED:
        # C++ proxies first (whole-string and word-set ratios), the word alignment only for the best.
        whole = process.cdist([qc], [f.replace(" ", "") for f in folded], scorer=fuzz.ratio)[0]
        words = process.cdist([query], folded, scorer=fuzz.token_set_ratio)[0]
        keep = np.argpartition(-np.maximum(whole, words), RERANKED)[:RERANKED].tolist()
        vids, folded, ranks = [vids[i] for i in keep], [folded[i] for i in keep], rank[keep].tolist()
    else:
        ranks = rank.tolist()
    scored = [(similarity(query, f), r, v) for v, f, r in zip(vids, folded, ranks, strict=True)]
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return scored


# ---------------------------------------------------------------------------------------------
# the ValueIndex used by the pipeline


@dataclass(frozen=True)
class _Meaning:
    table: str
    column: str
    code: str
    meaning: str
    folded: str


class ValueIndex:
    """Lookups of keywords among a database's stored values; opened lazily, shared across threads.

    With no index on disk, a small database is indexed on the first lookup; a large one is
    searched directly with bounded LIKE queries, and the log says to run `python -m bot index build`.
    """

    def __init__(self, db: Database, path: Path | None = None) -> None:
        self.db = db
        self.path = path or index_path(db)
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._checked = 0.0
        self._meanings: list[_Meaning] | None = None
        self._warned = False
        self.mode = "unopened"  # index | direct | unopened

    # -- opening ---------------------------------------------------------------------------------

    def _index(self) -> _Loaded | None:
        now = time.monotonic()
        if self._loaded is not None and now - self._checked < 2.0:
            return self._loaded
        with self._lock:
            self._checked = now
            meta_file = self.path / "meta.json"
            stamp = meta_file.stat().st_mtime if meta_file.exists() else None
            if self._loaded is not None and stamp == self._loaded.stamp:
                return self._loaded
            if stamp is None and self._should_autobuild():
                log.info("building the value index of %s on first use", self.db.name)
                try:
                    build_index(self.db)
                    stamp = meta_file.stat().st_mtime
                except (OSError, sa.exc.SQLAlchemyError) as exc:
                    log.warning("could not build the value index of %s: %s", self.db.name, exc)
            self._loaded = (
                _open(self.path, self.db.catalog, Access.of(self.db)) if stamp is not None else None
            )
            self.mode = "index" if self._loaded is not None else "direct"
            if self._loaded is None and not self._warned:
                self._warned = True
                log.warning(
                    "no value index for database %s; searching it directly (slow, partial). "
                    "Run: python -m bot index build --db %s",
                    self.db.name,
                    self.db.name,
                )
            return self._loaded

    def _should_autobuild(self) -> bool:
        rows = sum(
            t.row_estimate or 0 for t in self.db.catalog.tables if any(c.kind == "text" for c in t.columns)
        )
        return rows <= AUTO_BUILD_MAX_ROWS

    def meanings(self) -> list[_Meaning]:
        """Catalog value meanings ('OPN' → 'open') of columns the user may see."""
        if self._meanings is None:
            access = Access.of(self.db)
            self._meanings = [
                _Meaning(t.name, c.name, code, meaning, fold(meaning))
                for t in self.db.catalog.tables
                for c in t.columns
                if c.values and access.allows(t.name, c.name)
                for code, meaning in c.values.items()
            ]
        return self._meanings

    # -- lookups ---------------------------------------------------------------------------------

    def lookup(self, text: str, k: int = 5, min_score: float = 0.5) -> list[ValueMatch]:
        """The k stored values most like `text`, best first, each with its table and column."""
        query = fold(text[:MAX_VALUE_CHARS])
        if not query:
            return []
        found: dict[tuple[str, str, str], ValueMatch] = {}

        def add(m: ValueMatch) -> None:
            key = (m.table, m.column, m.value)
            if m.score >= min_score and (key not in found or found[key].score < m.score):
                found[key] = m

        for m in self._lookup_meanings(text, query, k):
            add(m)
        idx = self._index()
        if idx is not None:
            for vid, score in _search(idx, query, k, numeric=text if is_numeric(text) else None):
                col = idx.column_of(vid)
                add(ValueMatch(text, col["table"], col["column"], idx.value(vid), score))
        else:
            for m in self._direct_lookup(text, query, k):
                add(m)
        if idx is not None and (_EMAIL.match(text.strip()) or _URL.match(text.strip())):
            for m in self._exact_lookup(text.strip(), idx):
                add(m)
        return sorted(found.values(), key=lambda m: -m.score)[:k]

    def _exact_lookup(self, text: str, idx: _Loaded) -> list[ValueMatch]:
        """An e-mail or URL the user pasted, looked up exactly in the e-mail/URL columns the index
        leaves out (private or unique per row: fuzzy suggestions there would only mislead)."""
        kind = "e-mail" if _EMAIL.match(text) else "url"
        access = Access.of(self.db)
        found: list[ValueMatch] = []
        with self.db.engine.connect() as conn:
            for key, reason in idx.meta.get("skipped", {}).items():
                table = self.db.catalog.table(key.partition(".")[0])
                column = key.partition(".")[2]
                if reason != kind or table is None or not access.allows(table.name, column):
                    continue
                if (table.row_estimate or 0) > EXACT_SCAN_MAX_ROWS or table.column(column) is None:
                    continue
                t = sa.table(table.name, sa.column(column), schema=table.schema)
                q = sa.select(t.c[column]).where(sa.func.lower(t.c[column]) == text.lower()).limit(1)
                try:
                    stored = conn.execute(q).scalar()
                except sa.exc.DBAPIError:
                    conn.rollback()
                    continue
                if stored is not None:
                    found.append(ValueMatch(text, table.name, column, str(stored), 1.0))
        return found

    def _lookup_meanings(self, text: str, query: str, k: int) -> Iterator[ValueMatch]:
        meanings = self.meanings()
        if not meanings:
            return
        if is_numeric(text):
            hits = [(m, 1.0) for m in meanings if m.folded.replace(" ", "") == query.replace(" ", "")]
        else:
            near = process.extract(
                query, [m.folded for m in meanings], scorer=fuzz.WRatio, limit=max(k * 3, 10), score_cutoff=60
            )
            hits = [(meanings[i], similarity(query, meanings[i].folded)) for _, _, i in near]
        for m, score in hits:
            yield ValueMatch(text, m.table, m.column, m.code, score, via="meaning", meaning=m.meaning)

    def _direct_lookup(self, text: str, query: str, k: int) -> list[ValueMatch]:
        """No index: bounded LIKE queries on the likeliest columns, smallest tables first."""
        catalog = self.db.catalog
        access = Access.of(self.db)
        engine = self.db.engine
        fk = {(r.table.lower(), c.lower()) for r in catalog.relationships for c in r.columns}
        columns = [
            (t, c)
            for t in sorted(catalog.tables, key=lambda t: t.row_estimate or 0)
            for c in t.columns
            if c.kind == "text"
            and access.allows(t.name, c.name)
            and (t.name.lower(), c.name.lower()) not in fk
            and not (_ID_NAME.search(c.name) or _CAMEL_ID.search(c.name))
        ][:DIRECT_MAX_COLUMNS]
        words = sorted(query.split(), key=len, reverse=True)
        numeric = is_numeric(text)
        deadline = time.monotonic() + DIRECT_DEADLINE_S
        found: list[ValueMatch] = []
        with engine.connect() as conn:
            for table, col in columns:
                if time.monotonic() > deadline:
                    break
                t = sa.table(table.name, sa.column(col.name), schema=table.schema)
                c = t.c[col.name]
                cond = c == text.strip() if numeric else sa.func.lower(c).like(f"%{words[0][:30]}%")
                q = sa.select(c).where(cond).distinct().limit(50)
                try:
                    stored = [str(v) for v in conn.execute(q).scalars() if v is not None]
                except sa.exc.DBAPIError:
                    conn.rollback()
                    continue
                for v, f in zip(stored, fold_many(stored), strict=True):
                    s = 1.0 if numeric else similarity(query, f)
                    found.append(ValueMatch(text, table.name, col.name, v, s))
        return sorted(found, key=lambda m: -m.score)[:k]

    def stats(self) -> dict[str, Any]:
        idx = self._index()
        if idx is None:
            return {"mode": "direct", "path": str(self.path)}
        return {"mode": "index", "path": str(self.path), "values": idx.n, "columns": len(idx.meta["columns"])}


def open_index(db: Database) -> ValueIndex:
    """The value index of `db` (files are opened on the first lookup)."""
    return ValueIndex(db)


# ---------------------------------------------------------------------------------------------
# building and refreshing


def build_index(db: Database, progress: ProgressFn | None = None) -> IndexStats:
    """Index every chosen column of `db` from scratch."""
    return _update(db, progress, reuse=False)


def refresh_index(db: Database, progress: ProgressFn | None = None) -> IndexStats:
    """Bring the index up to date, re-reading only tables that changed (or that are cheap to re-read)."""
    return _update(db, progress, reuse=True)


def _old_values(path: Path) -> tuple[dict[str, dict[str, Any]], Callable[[dict[str, Any]], list[str]]]:
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


def _update(db: Database, progress: ProgressFn | None, *, reuse: bool) -> IndexStats:
    start = time.perf_counter()
    progress = progress or _no_progress
    path = index_path(db)
    stats = IndexStats(database=db.name, path=str(path))
    old, read_old = _old_values(path) if reuse else ({}, lambda _: [])
    choices = plan_columns(db, progress)
    stats.skipped = {c.key: c.reason for c in choices if not c.index}
    chosen = [c for c in choices if c.index]
    catalog = db.catalog
    total_rows = sum(min(catalog.table(c.table).row_estimate or 0, SAMPLE_READ_ROWS) for c in chosen)  # type: ignore[union-attr]
    columns: list[dict[str, Any]] = []
    values: list[str] = []
    changed = set(old) - {c.key for c in chosen}  # columns no longer indexed
    fingerprints: dict[str, str | None] = {}
    with db.engine.connect() as conn:
        for choice in chosen:
            table = catalog.table(choice.table)
            assert table is not None
            if table.name not in fingerprints:
                fingerprints[table.name] = table_fingerprint(conn, db.engine, table)
            fp = fingerprints[table.name]
            prev = old.get(choice.key)
            small = (table.row_estimate or 0) <= REREAD_MAX_ROWS
            if prev is not None and fp is not None and prev.get("fingerprint") == fp and not small:
                column_values = read_old(prev)
                stats.kept_columns.append(choice.key)
            else:
                offset = len(values)

                def column_progress(p: Progress, offset: int = offset) -> None:
                    progress(Progress(p.phase, offset + p.done, total_rows or None, p.detail))

                column_values = _read_values(conn, db.engine, table, choice, column_progress, total_rows)
                stats.read_columns.append(choice.key)
                if prev is None or set(read_old(prev)) != set(column_values):
                    changed.add(choice.key)
            if choice.sample_rows:
                stats.sampled_columns.append(choice.key)
            columns.append(
                {
                    "table": choice.table,
                    "column": choice.column,
                    "start": len(values),
                    "count": len(column_values),
                    "fingerprint": fp,
                    "reason": choice.reason,
                    "sampled": choice.sample_rows,
                }
            )
            values.extend(column_values)
    stats.values, stats.columns = len(values), len(columns)
    if reuse and not changed and (path / "meta.json").exists():
        stats.bytes = sum(f.stat().st_size for f in path.iterdir())
        # Same values: keep the arrays, record the latest fingerprints for the next refresh.
        meta = json.loads((path / "meta.json").read_text())
        latest = {f"{c['table']}.{c['column']}": c["fingerprint"] for c in columns}
        for entry in meta["columns"]:
            entry["fingerprint"] = latest.get(f"{entry['table']}.{entry['column']}")
        meta["refreshed_at"] = time.time()
        meta["skipped"] = stats.skipped
        (path / "meta.json.tmp").write_text(json.dumps(meta))
        (path / "meta.json.tmp").replace(path / "meta.json")
    else:
        stats.bytes = _write_index(
            path,
            columns,
            values,
            {
                "database": db.name,
                "catalog_signature": catalog.signature,
                "built_at": time.time(),
                "skipped": stats.skipped,
            },
            progress,
        )
        stats.rewritten = True
    stats.seconds = round(time.perf_counter() - start, 3)
    progress(Progress("done", stats.values, stats.values, f"{stats.columns} columns, {stats.bytes:,} bytes"))
    return stats


def iter_index_values(db: Database) -> Iterable[tuple[str, str, str]]:
    """Every (table, column, value) in the index on disk, e.g. for benchmarks and exports."""
    entries, read = _old_values(index_path(db))
    for entry in entries.values():
        for v in read(entry):
            yield entry["table"], entry["column"], v
