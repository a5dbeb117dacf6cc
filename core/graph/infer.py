"""Edges the database does not declare, inferred from column names and checked against values.

Hygiene first: dates, flags, decimal amounts and free text are never keys (`core.graph.columns`),
on either side, and every edge has a key on its referenced side — a declared key for name
guesses, a declared key or a column unique in the data (whose name agrees) for value inclusion.
What inference proposed and why it dropped what it dropped is counted in `report`.

Name conventions, most certain first: the same name as another table's key (`paperId` →
paper.paperId), `<table>_<key>` (`restaurant_id` → restaurant.id) or the bare table name, a role
before the table (`start_station_id` → station.id, `SourceAirport` → airports.AirportCode), and
abbreviations (`kid` → keyword.id, `msid` → movie.mid). With a profiler, sampled values confirm
or reject each guess, and `core.graph.inclusion` finds the edges names do not suggest at all.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from core.catalog import Catalog, Column, Table
from core.graph.columns import non_key_class
from core.graph.inclusion import value_edges
from core.graph.keys import (
    INFERABLE_KINDS,
    MIN_CONFIDENCE,
    inferred_edge,
    is_unique,
    kinds_compatible,
    single_keys,
)
from core.graph.multigraph import Edge
from core.graph.names import KEY_WORDS, flat_name, is_generic, is_key_like, key_suffix, table_stems, words_of
from core.graph.profiling import Profiler


@dataclass(frozen=True)
class _Key:
    table: Table
    column: str


class _NameIndex:
    """Every single-column key, indexed by the spellings a referencing column may use."""

    def __init__(self, catalog: Catalog) -> None:
        self.by_flat: dict[str, list[_Key]] = defaultdict(list)  # paperid → paper.paperId
        self.table_key: dict[str, list[_Key]] = defaultdict(list)  # restaurantid → restaurant.id
        self.named_key: dict[str, list[_Key]] = defaultdict(list)  # airportcode → airports.AirportCode
        self.stem_keyword: dict[str, list[_Key]] = defaultdict(list)  # airport → airports.AirportCode
        self.generic_by_prefix: dict[str, list[_Key]] = defaultdict(list)  # k → keyword.id
        self.short_by_letter: dict[str, list[_Key]] = defaultdict(list)  # m → movie.mid
        self.table_pk: dict[str, list[_Key]] = defaultdict(list)  # airline → airlines.uid
        for t in catalog.tables:
            tname = flat_name(t.name)
            if len(t.primary_key) == 1:
                for stem in table_stems(t.name):
                    if len(stem) >= 3:
                        self.table_pk[stem].append(_Key(t, t.primary_key[0]))
            for k in single_keys(t):
                key = _Key(t, k)
                kflat = flat_name(k)
                if not kflat:
                    continue
                self.by_flat[kflat].append(key)
                generic = is_generic(k)
                for stem in table_stems(t.name):
                    if len(stem) < 3:
                        continue
                    if generic:
                        self.table_key[stem + kflat].append(key)
                    elif kflat.startswith(stem):
                        self.named_key[kflat].append(key)
                        if kflat[len(stem) :] in KEY_WORDS:
                            self.stem_keyword[stem].append(key)
                if generic:
                    for n in (1, 2, 3):
                        if len(tname) > n:
                            self.generic_by_prefix[tname[:n]].append(key)
                else:
                    suffix = key_suffix(kflat)
                    if suffix and len(kflat) - len(suffix) <= 3 and tname.startswith(kflat[: -len(suffix)]):
                        self.short_by_letter[kflat[0]].append(key)


def infer_edges(
    catalog: Catalog,
    known: Sequence[Edge],
    profiler: Profiler | None = None,
    report: Counter[str] | None = None,
) -> list[Edge]:
    """Edges the database does not declare: column-name conventions, checked or found by values.

    `report` counts what was proposed, kept, and dropped for which reason.
    """
    report = report if report is not None else Counter()
    known_keys = {e.key for e in known}
    # columns already used by a known edge on the referencing side are explained; don't re-infer them
    # (a declared key pointing at a non-key, like imdb's cast.msid → copyright.msid, explains nothing)
    explained = {
        (e.table.lower(), tuple(c.lower() for c in e.columns))
        for e in known
        if e.ref_unique and not e.is_self
    }
    index = _NameIndex(catalog)
    candidates: dict[tuple[str, str, str, str], tuple[float, str]] = {}

    def propose(src: Table, col: str, key: _Key, conf: float, why: str) -> None:
        if src.name.lower() == key.table.name.lower():
            return
        ident = (src.name.lower(), col.lower(), key.table.name.lower(), key.column.lower())
        if conf > candidates.get(ident, (0.0, ""))[0]:
            candidates[ident] = (conf, why)

    for src in catalog.tables:
        for c in src.columns:
            if c.kind not in INFERABLE_KINDS or (src.name.lower(), (c.name.lower(),)) in explained:
                continue
            flat = flat_name(c.name)
            if not flat:
                continue
            # 1. the same name as another table's single-column key (paperId → paper.paperId)
            if not is_generic(c.name):
                for key in index.by_flat.get(flat, ()):
                    if key.table.name.lower() != src.name.lower() and _same_key_parent(src, c.name, key):
                        conf = 0.85 if is_key_like(c.name) else 0.7
                        propose(src, c.name, key, conf, f"same name as key {key.table.name}.{key.column}")
            # 2. <table>_<key>: restaurant_id → restaurant.id (also a table's own key: a subtype)
            for key in index.table_key.get(flat, ()):
                propose(src, c.name, key, 0.85, f"'{c.name}' names table {key.table.name} and its key")
            # 2b. the bare table name: flights.airline → airlines.uid
            if not (c.primary_key and len(src.primary_key) == 1):
                for key in index.table_pk.get(flat, ()):
                    propose(src, c.name, key, 0.7, f"'{c.name}' names table {key.table.name}")
            if c.primary_key and len(src.primary_key) == 1:
                continue  # a table's own key is no role or abbreviation of another's
            # 3. <role>_<table>_<key>: start_station_id → station.id, citedPaperId → paper.paperId
            for i in range(1, len(flat) - 2):
                suffix = flat[i:]
                for key in index.table_key.get(suffix, ()):
                    propose(src, c.name, key, 0.75, f"'{c.name}' is a role of {key.table.name}")
                for key in index.named_key.get(suffix, ()):
                    propose(src, c.name, key, 0.75, f"'{c.name}' is a role of {key.table.name}.{key.column}")
                # SourceAirport → airports.AirportCode: role + table name, key word left out
                for key in index.stem_keyword.get(suffix, ()):
                    propose(src, c.name, key, 0.6, f"'{c.name}' is a role of {key.table.name}")
            # 4. abbreviations: kid → keyword.id, msid → movie.mid
            if is_key_like(c.name) and not is_generic(c.name):
                _propose_abbreviation(src, c.name, index, propose)

    out: list[Edge] = []
    for (s, col, r, rcol), (conf, why) in candidates.items():
        src = catalog.table(s)
        ref = catalog.table(r)
        assert src is not None and ref is not None
        src_col = src.column(col)
        ref_col = ref.column(rcol)
        if src_col is None or ref_col is None:
            continue
        report["proposed by name"] += 1
        unfit = _non_key(profiler, src, src_col) or _non_key(profiler, ref, ref_col)
        if unfit:
            report[f"dropped: {unfit} column"] += 1
            continue
        # an integer column holding a text key's digits (SQLite allows it) needs the values to agree
        typed = kinds_compatible(src_col.kind, ref_col.kind)
        if not typed and {src_col.kind, ref_col.kind} != {"integer", "text"}:
            report["dropped: incompatible types"] += 1
            continue
        evidence = f"name: {why}"
        checked = _check_values(profiler, src, src_col.name, ref, ref_col.name) if profiler else None
        if checked is not None:
            ratio, n = checked
            if ratio < 0.5 or (not typed and ratio < 0.9):
                report["dropped: values disagree"] += 1
                continue
            conf = min(0.97, conf + 0.1) if ratio >= 0.9 else conf - 0.1
            evidence += f"; values: {ratio:.0%} of {n} sampled values found"
        elif not typed:
            report["dropped: incompatible types"] += 1
            continue
        if conf < MIN_CONFIDENCE:
            report["dropped: low confidence"] += 1
            continue
        edge = inferred_edge(src, src_col.name, ref, ref_col.name, conf, evidence)
        if edge.key not in known_keys:
            known_keys.add(edge.key)
            out.append(edge)
        else:
            report["dropped: already known"] += 1
    best = _keep_best_per_column(out)
    report["dropped: a likelier guess for the column"] += len(out) - len(best)
    out = best
    report["kept by name"] += len(out)
    if profiler is not None:
        found = value_edges(catalog, known, out, profiler, known_keys, report)
        report["kept by values"] += len(found)
        out += found
    out.sort(key=lambda e: (e.table.lower(), e.columns, e.ref_table.lower()))
    return out


def _non_key(profiler: Profiler | None, table: Table, column: Column) -> str | None:
    """Why this column can never be an inferred key (a date, a flag, an amount, free text), if so."""
    sample = profiler.sample(table) if profiler is not None else None
    return non_key_class(column, (sample or {}).get(column.name))


def _same_key_parent(src: Table, column: str, key: _Key) -> bool:
    """For two tables keyed by the same column name, only the child points to the parent."""
    if not is_unique(src, (column,)):
        return True
    # Both are keyed by `column`: a one-to-one pair. The parent is the one the name stands for.
    flat = flat_name(column)
    key_named = any(flat.startswith(s) for s in table_stems(key.table.name))
    src_named = any(flat.startswith(s) for s in table_stems(src.name))
    if key_named != src_named:
        return key_named
    return (key.table.row_estimate or 0, key.table.name) > (src.row_estimate or 0, src.name)


def _propose_abbreviation(src: Table, column: str, index: _NameIndex, propose) -> None:  # type: ignore[no-untyped-def]
    words = words_of(column)
    flat = flat_name(column)
    suffix = key_suffix(flat)
    if suffix is None:
        return
    abbr = "".join(words[:-1]) if len(words) > 1 and words[-1] == suffix else flat[: -len(suffix)]
    matches: dict[tuple[str, str], tuple[_Key, float]] = {}
    if len(abbr) <= 3:
        for key in index.generic_by_prefix.get(abbr, ()):
            if flat_name(key.column) == suffix and abbr not in table_stems(key.table.name):
                matches[(key.table.name, key.column)] = (key, 0.55)  # kid → keyword.id
    for key in index.short_by_letter.get(abbr[:1], ()):
        kflat = flat_name(key.column)
        if kflat.endswith(suffix) and kflat != flat and _is_subsequence(kflat[: -len(suffix)], abbr):
            matches[(key.table.name, key.column)] = (key, 0.5)  # msid → movie.mid
    matches = {k: v for k, v in matches.items() if v[0].table.name.lower() != src.name.lower()}
    if len(matches) == 1:
        key, conf = next(iter(matches.values()))
        propose(src, column, key, conf, f"'{column}' abbreviates {key.table.name}.{key.column}")


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def _check_values(
    profiler: Profiler, src: Table, col: str, ref: Table, ref_col: str
) -> tuple[float, int] | None:
    sample = profiler.sample(src)
    if not sample or not sample.get(col):
        return None
    values = sample[col]
    ratio = profiler.contains(ref, ref_col, values)
    if ratio is None:
        return None
    return ratio, len(values)


def _keep_best_per_column(edges: list[Edge]) -> list[Edge]:
    """A column references one key: keep the most confident guess (ties: all of them)."""
    best: dict[tuple[str, str], float] = {}
    for e in edges:
        k = (e.table.lower(), e.columns[0].lower())
        best[k] = max(best.get(k, 0.0), e.confidence)
    return [e for e in edges if e.confidence >= best[(e.table.lower(), e.columns[0].lower())] - 1e-9]
