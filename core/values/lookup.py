"""ValueIndex: what the pipeline asks ("which stored values look like 'E176'?") and how it is answered.

From the index on disk when there is one (built on first use for a small database), else by
bounded LIKE queries; catalog value meanings ('OPN' → 'open') alongside either; a pasted e-mail
or URL exactly, in the columns the index leaves out.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from rapidfuzz import fuzz, process

from core.retrieval import ValueMatch
from core.values.build import build_index
from core.values.columns import EMAIL, URL, Access, looks_like_id_name
from core.values.folding import fold, fold_many, is_numeric, similarity
from core.values.lock import index_lock
from core.values.search import search
from core.values.source import Source
from core.values.store import MAX_VALUE_CHARS, LoadedIndex, index_path, load_index

log = logging.getLogger(__name__)

AUTO_BUILD_MAX_ROWS = 250_000  # below this, the first lookup builds the index itself
DIRECT_DEADLINE_S = 2.0  # bounded direct lookup when no index exists for a large database
DIRECT_MAX_COLUMNS = 40
EXACT_SCAN_MAX_ROWS = 1_000_000  # pasted e-mails/URLs are looked up exactly in tables up to this size


@dataclass(frozen=True)
class _Meaning:
    """A catalog value meaning ('OPN' → 'open'), with the meaning folded for matching."""

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

    def __init__(self, db: Source, path: Path | None = None) -> None:
        self.db = db
        self.path = path or index_path(db)
        self._lock = threading.Lock()
        self._loaded: LoadedIndex | None = None
        self._checked = 0.0
        self._meanings: list[_Meaning] | None = None
        self._warned = False
        self.mode = "unopened"  # index | direct | unopened

    # -- opening ---------------------------------------------------------------------------------

    def _index(self) -> LoadedIndex | None:
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
                stamp = self._build_on_first_use(meta_file)
            self._loaded = (
                load_index(self.path, self.db.catalog, Access.of(self.db)) if stamp is not None else None
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

    def _build_on_first_use(self, meta_file: Path) -> float | None:
        """Build the index under its lock; when another build or refresh holds it, wait for it and
        read what it wrote. Why wait: only a small database is built on first use (seconds), and
        searching it directly meanwhile finds codes only as typed ('INV2024-00123' missed
        INV-2024-00123), so the first question of a second process read less than the rest."""
        with index_lock(self.db, on_wait=self._waiting):
            if not meta_file.exists():  # else another process built it before this one took the lock
                log.info("building the value index of %s on first use", self.db.name)
                try:
                    build_index(self.db)
                except (OSError, sa.exc.SQLAlchemyError) as exc:
                    log.warning("could not build the value index of %s: %s", self.db.name, exc)
                    return None
        return meta_file.stat().st_mtime if meta_file.exists() else None

    def _waiting(self) -> None:
        log.info("the value index of %s is being built elsewhere; waiting for it", self.db.name)

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
            for vid, score in search(idx, query, k, numeric=text if is_numeric(text) else None):
                col = idx.column_of(vid)
                add(ValueMatch(text, col["table"], col["column"], idx.value(vid), score))
        else:
            for m in self._direct_lookup(text, query, k):
                add(m)
        if idx is not None and (EMAIL.match(text.strip()) or URL.match(text.strip())):
            for m in self._exact_lookup(text.strip(), idx):
                add(m)
        return sorted(found.values(), key=lambda m: -m.score)[:k]

    def _exact_lookup(self, text: str, idx: LoadedIndex) -> list[ValueMatch]:
        """An e-mail or URL the user pasted, looked up exactly in the e-mail/URL columns the index
        leaves out (private or unique per row: fuzzy suggestions there would only mislead)."""
        kind = "e-mail" if EMAIL.match(text) else "url"
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
            and not looks_like_id_name(c.name)
        ][:DIRECT_MAX_COLUMNS]
        words = sorted(query.split(), key=len, reverse=True)
        numeric = is_numeric(text)
        deadline = time.monotonic() + DIRECT_DEADLINE_S
        found: list[ValueMatch] = []
        try:
            connected = engine.connect()
        except sa.exc.DBAPIError as exc:  # gone since its schema was read: the query says so in words
            log.warning("database %s did not answer a value search: %s", self.db.name, exc)
            return []
        with connected as conn:
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


def open_index(db: Source) -> ValueIndex:
    """The value index of `db` (files are opened on the first lookup)."""
    return ValueIndex(db)
