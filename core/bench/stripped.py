"""Held-out check for key inference: databases that declare keys, with their keys taken away.

Inference exists for the many databases that declare no keys, but such databases have no answer
key to score it against. Spider's databases do declare foreign keys, so strip them — copy each
database with every table recreated from its column names and types alone (no PRIMARY KEY,
FOREIGN KEY or UNIQUE clause, no index), data intact — infer on the copy, and compare the
inferred edges with the foreign keys the original declared:

- recall: declared foreign keys inference recovers with the right direction (referencing column
  → referenced key), over all of them and over the recoverable ones (one column, two different
  tables, a referenced column unique and non-empty in the data — what value inclusion can see;
  Spider also declares keys towards non-unique columns and backwards);
- precision: inferred edges that are a declared foreign key, in its direction; `reversed` counts
  the ones on a declared pair of columns but pointing the wrong way, `undeclared` the ones on a
  pair nothing declares (a wrong join, or a true one Spider left undeclared).

Databases are split in two fixed halves by a hash of their name (`part`), so one half can guide
development and the other stay unseen until the final measure.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.catalog import Catalog, Relationship
from core.graph import Edge

PARTS = ("all", "dev", "holdout")


def in_part(db_id: str, part: str) -> bool:
    """A fixed half of the databases: `dev` for development, `holdout` for the final measure."""
    if part == "all":
        return True
    half = zlib.crc32(db_id.encode()) % 2
    return half == (0 if part == "dev" else 1)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def strip_keys(
    source: Path, target: Path, max_rows: int = 0, foreign_keys: Sequence[Relationship] = ()
) -> Path:
    """A copy of the SQLite database `source` at `target` with no keys, constraints or indexes.

    With `max_rows`, each table keeps only its first rows — a small database like the ones
    people hand-make or export as samples, where every id looks unique — plus the rows of
    referenced tables that the kept rows point at through `foreign_keys`, so the copy stays as
    consistent as the original.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    con = sqlite3.connect(f"file:{target}", uri=True)
    try:
        con.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
        tables = [
            r[0]
            for r in con.execute(
                "SELECT name FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        names: dict[str, str] = {}
        for table in tables:
            columns = [(r[1], r[2] or "") for r in con.execute(f"PRAGMA src.table_info({_quote(table)})")]
            if not columns:
                continue
            ddl = ", ".join(f"{_quote(c)} {t}".rstrip() for c, t in columns)
            names[table.lower()] = ", ".join(_quote(c) for c, _ in columns)
            con.execute(f"CREATE TABLE main.{_quote(table)} ({ddl})")
            # copied inside SQLite: every value keeps its stored type and bytes
            limit = f" LIMIT {int(max_rows)}" if max_rows > 0 else ""
            con.execute(
                f"INSERT INTO main.{_quote(table)} SELECT {names[table.lower()]} FROM src.{_quote(table)}{limit}"
            )
        if max_rows > 0:
            _close_references(con, names, foreign_keys)
        con.commit()
    finally:
        con.close()
    return target


def _close_references(con: sqlite3.Connection, names: dict[str, str], fks: Sequence[Relationship]) -> None:
    """Add the referenced rows the kept rows point at, until nothing is missing (a few rounds)."""
    single = [r for r in fks if len(r.columns) == 1 and r.table.lower() != r.ref_table.lower()]
    for _ in range(6):
        added = 0
        for r in single:
            if r.table.lower() not in names or r.ref_table.lower() not in names:
                continue
            ref, col, ref_col = _quote(r.ref_table), _quote(r.columns[0]), _quote(r.ref_columns[0])
            cur = con.execute(
                f"INSERT INTO main.{ref} SELECT {names[r.ref_table.lower()]} FROM src.{ref} "
                f"WHERE {ref_col} IN (SELECT {col} FROM main.{_quote(r.table)}) "
                f"AND {ref_col} NOT IN (SELECT {ref_col} FROM main.{ref} WHERE {ref_col} IS NOT NULL)"
            )
            added += max(cur.rowcount, 0)
        if not added:
            return


@dataclass(frozen=True)
class Declared:
    """One declared foreign key of the original database, and whether inference could see it."""

    fk: Relationship
    kind: str  # "recoverable", "multi-column", "self", "not unique", "empty"

    def pair(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (
            (self.fk.table.lower(), self.fk.columns[0].lower()),
            (self.fk.ref_table.lower(), self.fk.ref_columns[0].lower()),
        )


def declared_keys(catalog: Catalog, path: Path) -> list[Declared]:
    """The original's declared foreign keys, each classed by whether values could reveal it."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = []
    try:
        for r in catalog.relationships:
            if r.origin != "declared":
                continue
            if len(r.columns) != 1:
                kind = "multi-column"
            elif r.table.lower() == r.ref_table.lower():
                kind = "self"
            else:
                kind = _visibility(con, r)
            out.append(Declared(r, kind))
    finally:
        con.close()
    return out


def _visibility(con: sqlite3.Connection, r: Relationship) -> str:
    col, ref = _quote(r.ref_columns[0]), _quote(r.ref_table)
    total, distinct = con.execute(f"SELECT COUNT({col}), COUNT(DISTINCT {col}) FROM {ref}").fetchone()
    used = con.execute(f"SELECT COUNT({_quote(r.columns[0])}) FROM {_quote(r.table)}").fetchone()[0]
    if not total or not used:
        return "empty"
    return "recoverable" if total == distinct else "not unique"


def score_recovery(declared: Sequence[Declared], edges: Iterable[Edge], counts: Counter[str]) -> list[str]:
    """Add one database's recall and precision counts to `counts`; return its mistakes, described."""
    right: dict[tuple[tuple[str, str], tuple[str, str]], Declared] = {d.pair(): d for d in declared}
    found: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    notes: list[str] = []
    for e in edges:
        if e.origin != "inferred" or e.via or len(e.columns) != 1:
            continue
        pair = ((e.table.lower(), e.columns[0].lower()), (e.ref_table.lower(), e.ref_columns[0].lower()))
        counts["inferred"] += 1
        if pair in right:
            counts["inferred right"] += 1
            found.add(pair)
        elif (pair[1], pair[0]) in right:
            counts["inferred reversed"] += 1
            notes.append(f"reversed   {e}")
        else:
            counts["inferred undeclared"] += 1
            notes.append(f"undeclared {e}")
    for d in declared:
        counts["declared"] += 1
        counts[f"declared {d.kind}"] += 1
        if d.kind == "multi-column":
            continue
        hit = d.pair() in found
        counts["recovered"] += hit
        if d.kind == "recoverable":
            counts["recovered recoverable"] += hit
            if not hit:
                notes.append(f"missed     {d.fk}")
    return notes


def recovery_figures(counts: Counter[str]) -> dict[str, float | int]:
    """Precision and recall from the summed counts."""
    inferred = counts["inferred"] or 1
    return {
        "declared": counts["declared"],
        "recoverable": counts["declared recoverable"],
        "inferred": counts["inferred"],
        "right": counts["inferred right"],
        "reversed": counts["inferred reversed"],
        "undeclared": counts["inferred undeclared"],
        "precision": round(counts["inferred right"] / inferred, 4),
        "precision_unordered": round((counts["inferred right"] + counts["inferred reversed"]) / inferred, 4),
        "recall": round(counts["recovered"] / (counts["declared"] or 1), 4),
        "recall_recoverable": round(
            counts["recovered recoverable"] / (counts["declared recoverable"] or 1), 4
        ),
    }
