"""Edges the database does not declare, inferred from column names and checked against values.

Hygiene first: dates, flags, decimal amounts and free text are never keys (`core.graph.columns`),
on either side, and every edge has a key on its referenced side — a declared key for name
guesses, a declared key or a column unique in the data (whose name agrees) for value inclusion.
What inference proposed and why it dropped what it dropped is counted in `report`.

Name conventions, most certain first: the same name as another table's key (`paperId` →
paper.paperId), `<table>_<key>` (`restaurant_id` → restaurant.id) or the bare table name, a role
before the table (`start_station_id` → station.id, `SourceAirport` → airports.AirportCode), and
abbreviations (`kid` → keyword.id, `msid` → movie.mid), numbered roles (`Club_ID_1` → club.Club_ID)
and roles before another table's key name (`supplier_company_id` → companies.company_id). With a
profiler, sampled values confirm or reject each guess, and `core.graph.inclusion` finds the edges
names do not suggest at all.

Keys are the declared ones and, in tables that declare none, the columns named like keys whose
values are distinct in the data (`core.graph.owners.Keys`) — most undeclared databases have no
declared primary key either. In a small sample a bridge's columns are distinct too, so when a
name is a key of several tables, or both sides of a pair are keys, the values decide where one
side's values are a part of the other's, and otherwise the owner does: the table the name names,
an entity rather than a bridge (`core.graph.owners.Owners`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from core.catalog import Catalog, Column, Table
from core.graph.columns import non_key_class
from core.graph.inclusion import value_edges
from core.graph.keys import (
    INFERABLE_KINDS,
    MIN_CONFIDENCE,
    inferred_edge,
    kinds_compatible,
)
from core.graph.multigraph import Edge
from core.graph.names import (
    KEY_WORDS,
    flat_name,
    is_generic,
    is_key_like,
    key_suffix,
    mentions,
    table_stems,
    words_of,
)
from core.graph.owners import Keys, Owners, decide
from core.graph.profiling import Profiler


@dataclass(frozen=True)
class _Key:
    table: Table
    column: str


class _Propose(Protocol):
    """Record that `src.col` references `key`, unless a likelier reason for it is known already."""

    def __call__(self, src: Table, col: str, key: _Key, conf: float, why: str, how: str = "") -> None: ...


class _NameIndex:
    """Every single-column key, indexed by the spellings a referencing column may use."""

    def __init__(self, catalog: Catalog, keys: Keys) -> None:
        self.by_flat: dict[str, list[_Key]] = defaultdict(list)  # paperid → paper.paperId
        self.table_key: dict[str, list[_Key]] = defaultdict(list)  # restaurantid → restaurant.id
        self.named_key: dict[str, list[_Key]] = defaultdict(list)  # airportcode → airports.AirportCode
        self.stem_keyword: dict[str, list[_Key]] = defaultdict(list)  # airport → airports.AirportCode
        self.generic_by_prefix: dict[str, list[_Key]] = defaultdict(list)  # k → keyword.id
        self.short_by_letter: dict[str, list[_Key]] = defaultdict(list)  # m → movie.mid
        self.table_pk: dict[str, list[_Key]] = defaultdict(list)  # airline → airlines.uid
        for t in catalog.tables:
            tname = flat_name(t.name)
            own = keys.own(t)
            if own is not None:
                for stem in table_stems(t.name):
                    if len(stem) >= 3:
                        self.table_pk[stem].append(_Key(t, own))
            for k in keys.of(t):
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
    owners = Owners(catalog)
    keys = Keys(catalog, owners, profiler)
    index = _NameIndex(catalog, keys)
    candidates: dict[tuple[str, str, str, str], tuple[float, str, str]] = {}
    included = _Inclusion(profiler)

    def same_name(src: Table, column: str, found: Sequence[_Key], conf: float, why: str) -> None:
        _propose_same_name(src, column, found, keys, included, conf, why, propose)

    def propose(src: Table, col: str, key: _Key, conf: float, why: str, how: str = "") -> None:
        if src.name.lower() == key.table.name.lower():
            return
        ident = (src.name.lower(), col.lower(), key.table.name.lower(), key.column.lower())
        if conf > candidates.get(ident, (0.0, "", ""))[0]:
            candidates[ident] = (conf, why, how)

    for src in catalog.tables:
        for c in src.columns:
            if c.kind not in INFERABLE_KINDS or (src.name.lower(), (c.name.lower(),)) in explained:
                continue
            flat = flat_name(c.name)
            if not flat:
                continue
            own_key = keys.is_own(src, c.name)
            # 1. the same name as another table's single-column key (paperId → paper.paperId)
            if not is_generic(c.name):
                conf = 0.85 if is_key_like(c.name) else 0.7
                same_name(src, c.name, index.by_flat.get(flat, ()), conf, "same name as key")
            # 1b. a numbered role of a key: Club_ID_1 → club.Club_ID, team2_id → team.id
            plain = re.sub(r"\d+", "", flat)
            if plain != flat and is_key_like(plain) and not is_generic(plain):
                same_name(src, c.name, index.by_flat.get(plain, ()), 0.75, "a numbered role of key")
                for key in index.table_key.get(plain, ()):
                    propose(src, c.name, key, 0.75, f"'{c.name}' is a numbered role of {key.table.name}")
            # 2. <table>_<key>: restaurant_id → restaurant.id (also a table's own key: a subtype)
            for key in index.table_key.get(flat, ()):
                propose(src, c.name, key, 0.85, f"'{c.name}' names table {key.table.name} and its key")
            # 2b. the bare table name: flights.airline → airlines.uid
            if not own_key:
                for key in index.table_pk.get(flat, ()):
                    propose(src, c.name, key, 0.7, f"'{c.name}' names table {key.table.name}")
            if own_key:
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
            # 3b. <role>_<key name>: supplier_company_id → third_party_companies.company_id
            words = words_of(c.name)
            for j in range(1, len(words) - 1):
                suffix = "".join(words[j:])
                if len(suffix) >= 5 and not is_generic(suffix) and is_key_like(suffix):
                    same_name(src, c.name, index.by_flat.get(suffix, ()), 0.7, "a role of key")
            # 4. abbreviations: kid → keyword.id, msid → movie.mid
            if is_key_like(c.name) and not is_generic(c.name):
                _propose_abbreviation(src, c.name, index, propose)

    out: list[Edge] = []
    decided: dict[frozenset[Any], str] = {}
    for (s, col, r, rcol), (conf, why, how) in candidates.items():
        found_src, found_ref = catalog.table(s), catalog.table(r)
        assert found_src is not None and found_ref is not None
        src, ref = found_src, found_ref
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
        evidence = f"name: {why}" + (f"; {how}" if how else "")
        checked = _check_values(profiler, src, src_col.name, ref, ref_col.name) if profiler else None
        if checked is not None:
            ratio, n = checked
            # a key only the data says is a key has all its values read: a reference to it that
            # finds a tenth of its values missing is no reference (nor is one across types)
            found_key = not keys.declared(ref, ref_col.name)
            if ratio < 0.5 or ((not typed or found_key) and ratio < 0.9):
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
            if how:
                decided[edge.key] = how
        else:
            report["dropped: already known"] += 1
    best = _keep_best_per_column(out, lambda e: _choice(catalog, keys, e))
    report["dropped: a likelier guess for the column"] += len(out) - len(best)
    out = best
    report["kept by name"] += len(out)
    for e in out:
        if e.key in decided:
            report[decided[e.key]] += 1
        if (
            (e.table.lower(), e.columns[0].lower()),
            (e.ref_table.lower(), e.ref_columns[0].lower()),
        ) in included.flipped:
            report["direction flipped"] += 1
    if profiler is not None:
        found = value_edges(catalog, known, out, profiler, known_keys, keys, report)
        report["kept by values"] += len(found)
        out += found
    out.sort(key=lambda e: (e.table.lower(), e.columns, e.ref_table.lower()))
    return out


def _non_key(profiler: Profiler | None, table: Table, column: Column) -> str | None:
    """Why this column can never be an inferred key (a date, a flag, an amount, free text), if so."""
    sample = profiler.sample(table) if profiler is not None else None
    return non_key_class(column, (sample or {}).get(column.name))


def _propose_same_name(
    src: Table,
    column: str,
    found: Sequence[_Key],
    keys: Keys,
    included: _Inclusion,
    conf: float,
    why: str,
    propose: _Propose,
) -> None:
    """`column` has the name of other tables' keys: point it at the one that owns the key.

    Several tables may hold the key under the same name (conference.cid, domain_conference.cid,
    both unique in a small sample): the owner is the best-ranked (`Owners`). When `column` is a
    key of `src` too, the values decide the direction where they can (the referencing side's
    values are a part of the referenced side's); where both hold the same values, the owner is
    referenced — and when that is `src`, the others point here instead.
    """
    others = [k for k in found if k.table.name.lower() != src.name.lower()]
    if not others:
        return
    mine = keys.rank(src, column) if keys.is_key(src, column) else None
    fits: list[tuple[_Key, str]] = []
    for k in others:
        rank = keys.rank(k.table, k.column)
        if mine is None:
            fits.append((k, ""))
            continue
        direction = included.direction(src, column, k.table, k.column)
        if direction == "forward":
            fits.append((k, "direction by values"))
        elif direction == "backward":
            continue
        elif rank > mine:
            fits.append((k, f"direction by {decide(rank, mine)}"))
        elif rank == mine and _larger(k.table, src):
            fits.append((k, "direction by size (tie)"))
        elif rank < mine:  # src owns the key: k's turn points k here, whatever came first
            included.flipped.add(
                ((k.table.name.lower(), k.column.lower()), (src.name.lower(), column.lower()))
            )
    if not fits:
        return
    ranks = [keys.rank(k.table, k.column) for k, _ in fits]
    best = max(ranks)
    top = [(k, how) for (k, how), r in zip(fits, ranks, strict=True) if r == best]
    if len(top) < len(fits):
        chosen = f"key chosen by {decide(best, max(r for r in ranks if r != best))}"
        top = [(k, how or chosen) for k, how in top]
    for key, how in top:
        propose(src, column, key, conf, f"{why} {key.table.name}.{key.column}", how)


class _Inclusion:
    """Which way sampled values are included, between two key columns (memoized)."""

    def __init__(self, profiler: Profiler | None) -> None:
        self.profiler = profiler
        # (referencing, referenced) pairs the owner evidence turned around from how they were met
        self.flipped: set[tuple[tuple[str, str], tuple[str, str]]] = set()
        self._ratios: dict[tuple[str, str, str, str], float | None] = {}

    def ratio(self, a: Table, a_col: str, b: Table, b_col: str) -> float | None:
        k = (a.name.lower(), a_col.lower(), b.name.lower(), b_col.lower())
        if k not in self._ratios:
            checked = _check_values(self.profiler, a, a_col, b, b_col) if self.profiler else None
            self._ratios[k] = checked[0] if checked else None
        return self._ratios[k]

    def direction(self, a: Table, a_col: str, b: Table, b_col: str) -> str | None:
        """'forward' when a's values are in b's and not the reverse, 'backward' for the opposite,
        None when both (or neither, or no data) — then the values cannot tell."""
        fwd, back = self.ratio(a, a_col, b, b_col), self.ratio(b, b_col, a, a_col)
        if fwd is None or back is None:
            return None
        if fwd >= 0.9 > back:
            return "forward"
        if back >= 0.9 > fwd:
            return "backward"
        return None


def _choice(catalog: Catalog, keys: Keys, e: Edge) -> tuple[int, ...]:
    """Between equally confident guesses for one column: the table it names, then the owner."""
    ref = catalog.table(e.ref_table)
    if ref is None:
        return (0,)
    return (mentions(e.columns[0], ref.name), *keys.rank(ref, e.ref_columns[0]))


def _larger(a: Table, b: Table) -> bool:
    """With nothing else to go on, the bigger table of a one-to-one pair is the referenced one."""
    return (a.row_estimate or 0, a.name) > (b.row_estimate or 0, b.name)


def _propose_abbreviation(src: Table, column: str, index: _NameIndex, propose: _Propose) -> None:
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


def _keep_best_per_column(edges: list[Edge], choice: Callable[[Edge], tuple[int, ...]]) -> list[Edge]:
    """A column references one key: keep the most confident guess, and among equally confident
    ones the best `choice` (ties: all of them)."""
    best: dict[tuple[str, str], tuple[float, tuple[int, ...]]] = {}
    scored = [(e, (round(e.confidence, 6), choice(e))) for e in edges]
    for e, score in scored:
        k = (e.table.lower(), e.columns[0].lower())
        if k not in best or score > best[k]:
            best[k] = score
    return [e for e, score in scored if score == best[(e.table.lower(), e.columns[0].lower())]]
