"""Edges found by values alone: most sampled values of A.x are values of the unique column B.y.

For the keys no naming convention reveals (`list.classroom` → teachers.classroom). Inclusion alone
is weak evidence — dense small integers are in every id column — so a target must be a declared
key, or unique in the data with names that agree, and how surprising its values are
(`_specificity`) sets the confidence. When the values fit several unique columns, the one the
column names, then the likeliest owner (`core.graph.owners`), is kept, and a real tie is dropped;
when the source is unique too and holds the same values as its target, the owner is referenced,
and a table's own key never references another by values alone. Dates, flags, amounts and free text are never sources nor
targets (`core.graph.columns`): every small table's dates are "unique", and every date appears in
another table's dates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.catalog import Catalog, Table
from core.graph.columns import NonKey, non_key_class
from core.graph.keys import INFERABLE_KINDS, MIN_CONFIDENCE, inferred_edge, kinds_compatible, single_keys
from core.graph.multigraph import Edge
from core.graph.names import INITIAL, flat_name, is_generic, is_key_like, mentions
from core.graph.owners import Keys, Owners, Rank, decide
from core.graph.profiling import Profiler


def value_edges(
    catalog: Catalog,
    known: Sequence[Edge],
    named: Sequence[Edge],
    profiler: Profiler,
    known_keys: set[frozenset[Any]],
    keys: Keys | None = None,
    report: Counter[str] | None = None,
) -> list[Edge]:
    """Edges found by values alone: A.x's sampled values all appear in the (data-)unique B.y."""
    report = report if report is not None else Counter()
    keys = keys if keys is not None else Keys(catalog, Owners(catalog), profiler)
    used = {(e.table.lower(), e.columns[0].lower()) for e in [*known, *named] if len(e.columns) == 1}
    name_count: dict[str, int] = defaultdict(int)
    for t in catalog.tables:
        for c in t.columns:
            name_count[flat_name(c.name)] += 1
    # key candidates: declared single keys, keys found in the data of tables that declare none,
    # and columns unique in the data that look like keys or share their name with another
    # table's column (list.classroom → teachers.classroom)
    targets: list[_Target] = []
    unfit_targets: dict[int, NonKey] = {}  # a date or an amount unique in a small table is still no key
    for t in catalog.tables:
        declared = set(single_keys(t))
        names = set(declared) | set(keys.of(t))
        for c in t.columns:
            if not is_generic(c.name) and (is_key_like(c.name) or name_count[flat_name(c.name)] > 1):
                names.add(c.name)
        for name in sorted(names):
            column = t.column(name)
            if column is None or column.kind not in INFERABLE_KINDS:
                continue
            kv = profiler.key_values(t, name)
            if kv is None:
                continue
            values, complete, unique = kv
            if not unique or len(values) < 3 or not complete:
                continue
            unfit = non_key_class(column, (profiler.sample(t) or {}).get(column.name))
            if unfit:
                unfit_targets[len(targets)] = unfit
            targets.append(
                _Target(
                    t,
                    column.name,
                    name in declared,
                    _specificity(values),
                    values,
                    keys.rank(t, column.name),
                    keys.is_own(t, column.name),
                )
            )
    index: dict[str, list[int]] = defaultdict(list)
    for i, target in enumerate(targets):
        for v in target.values:
            index[v].append(i)
    by_column = {(x.table.name.lower(), x.column.lower()): i for i, x in enumerate(targets)}
    out: list[Edge] = []
    flipped: set[tuple[tuple[str, str], tuple[str, str]]] = set()  # (referencing, referenced) pairs
    for src in catalog.tables:
        sample = profiler.sample(src)
        if not sample:
            continue
        for c in src.columns:
            values = sample.get(c.name) or set()
            if len(values) < 3 or (src.name.lower(), c.name.lower()) in used:
                continue
            unfit = non_key_class(c, values)
            hits: dict[int, int] = defaultdict(int)
            for v in values:
                for i in index.get(v, ()):
                    hits[i] += 1
            # when src.c is a key itself and a target holds the same values, either could be the
            # referencing side: the one that owns the key is referenced (a table's own key never
            # references another by values alone: subtypes are found by name, or declared)
            me = by_column.get((src.name.lower(), c.name.lower()))
            own = keys.is_own(src, c.name)
            best: list[tuple[float, int]] = []
            for i, n in hits.items():
                target = targets[i]
                t, col = target.table, target.column
                if t.name.lower() == src.name.lower() or n < 0.95 * len(values):
                    continue
                mutual = me is not None and _included(target.values, targets[me].values)
                if own or (mutual and me is not None and _outranks(targets[me], target)):
                    if mutual:
                        flipped.add(((t.name.lower(), col.lower()), (src.name.lower(), c.name.lower())))
                    continue
                ref_col = t.column(col)
                if ref_col is None or not kinds_compatible(c.kind, ref_col.kind):
                    continue
                same_name = flat_name(col) == flat_name(c.name)
                names_table = mentions(c.name, t.name) >= INITIAL
                # a column merely unique in the data is a key only when the names agree too
                # (invoices.billing_postal_code's values are customers' postal codes, but no key),
                # or when it is its table's own key, named for it (sbcustomer.sbcustid)
                # (when chance could not put the values there: 1..N ids fit any other own key)
                keyed = target.declared or (
                    target.own and is_key_like(c.name) and _chance(target.values, n) < MAX_CHANCE
                )
                if not keyed and not same_name and not (names_table and is_key_like(col)):
                    continue
                if target.specificity < 0.5 and not is_key_like(c.name) and not same_name:
                    continue  # 1..N ids contain any small integer column
                best.append((0.55 + 0.3 * max(target.specificity, 0.5 if same_name else 0.0), i))
            how = ""
            if len(best) > 1:
                # several tables are keyed by these values (every yelp table has a unique
                # business_id; domain_conference.cid is as unique as conference.cid in a small
                # sample): the one the column names, then the likeliest owner, is the parent
                scored = [
                    ((mentions(c.name, targets[i].table.name), *targets[i].rank), b)
                    for b in best
                    for i in [b[1]]
                ]
                top_score = max(score for score, _ in scored)
                top = [b for score, b in scored if score == top_score]
                if len(top) < len(best):
                    runner = max(score for score, _ in scored if score != top_score)
                    how = f"key chosen by {_evidence(top_score, runner)}"
                best = top
            if best:
                report["proposed by values"] += 1
                unfit = unfit or next((unfit_targets[i] for _, i in best if i in unfit_targets), None)
                if unfit:
                    report[f"dropped: {unfit} column"] += 1
                    continue
            if len(best) != 1:
                if best:
                    report["dropped: several equally likely keys"] += 1
                continue  # no target, or several equally plausible ones
            conf, i = best[0]
            target = targets[i]
            t, col = target.table, target.column
            if me is not None and _included(target.values, targets[me].values):
                evidence = decide(target.rank, targets[me].rank)
                how = "direction by size (tie)" if evidence == "tie" else f"direction by {evidence}"
            evidence_text = (
                f"values: {hits[i]} of {len(values)} sampled values of {src.name}.{c.name} "
                f"are in {t.name}.{col}, which is unique" + (f"; {how}" if how else "")
            )
            edge = inferred_edge(src, c.name, t, col, conf, evidence_text)
            if edge.key not in known_keys and conf >= MIN_CONFIDENCE:
                known_keys.add(edge.key)
                out.append(edge)
                if how:
                    report[how] += 1
                if ((src.name.lower(), c.name.lower()), (t.name.lower(), col.lower())) in flipped:
                    report["direction flipped"] += 1
            else:
                report["dropped: already known" if edge.key in known_keys else "dropped: low confidence"] += 1
    return out


@dataclass(frozen=True)
class _Target:
    """A column whose values, all read, are distinct: what other columns' values may point at."""

    table: Table
    column: str
    declared: bool
    specificity: float
    values: set[str]
    rank: Rank
    own: bool  # the table's own key (declared, or found in the data and named for the table)


def _included(small: set[str], big: set[str]) -> bool:
    return bool(small) and sum(v in big for v in small) >= 0.95 * len(small)


def _outranks(a: _Target, b: _Target) -> bool:
    """Does `a` own the key rather than `b`? (On a tie, the bigger table is the referenced one.)"""
    if a.rank != b.rank:
        return a.rank > b.rank
    return (a.table.row_estimate or 0, a.table.name) > (b.table.row_estimate or 0, b.table.name)


def _evidence(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> str:
    """What tells two candidate scores apart: the column's name, or the owner evidence."""
    if a[0] != b[0]:
        return "name"
    return decide(a[1:], b[1:])


MAX_CHANCE = 0.001


def _chance(values: set[str], n: int) -> float:
    """How likely `n` distinct values picked at random within the range of the integer key
    `values` all land on one of them (its density to the n-th power); text keys of two or more
    characters ('C001', 'T001') are taken as never matching by chance."""
    ints = []
    for v in values:
        try:
            ints.append(int(v))
        except ValueError:
            return 0.0 if sum(len(x) >= 2 for x in values) >= 0.8 * len(values) else 1.0
    if not ints:
        return 1.0
    density = len(ints) / (max(ints) - min(ints) + 1)
    return float(density**n)


def _specificity(values: set[str]) -> float:
    """How surprising inclusion in this key is: dense small integers are in every id column."""
    ints = []
    for v in values:
        try:
            ints.append(int(v))
        except ValueError:
            text = [x for x in values if len(x) >= 2]
            return 1.0 if len(text) >= 0.8 * len(values) else 0.5
    if not ints:
        return 0.0
    span = max(ints) - min(ints) + 1
    density = len(ints) / span if span > 0 else 1.0
    return max(0.0, min(1.0, 1.0 - density))
