"""Edges found by values alone: most sampled values of A.x are values of the unique column B.y.

For the keys no naming convention reveals (`list.classroom` → teachers.classroom). Inclusion alone
is weak evidence — dense small integers are in every id column — so a target must be a declared
key, or unique in the data with names that agree, and how surprising its values are
(`_specificity`) sets the confidence. Dates, flags, amounts and free text are never sources nor
targets (`core.graph.columns`): every small table's dates are "unique", and every date appears in
another table's dates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from core.catalog import Catalog, Table
from core.graph.columns import non_key_class
from core.graph.keys import INFERABLE_KINDS, MIN_CONFIDENCE, inferred_edge, kinds_compatible, single_keys
from core.graph.multigraph import Edge
from core.graph.names import flat_name, is_generic, is_key_like, table_stems
from core.graph.profiling import Profiler


def value_edges(
    catalog: Catalog,
    known: Sequence[Edge],
    named: Sequence[Edge],
    profiler: Profiler,
    known_keys: set[frozenset[Any]],
    report: Counter[str] | None = None,
) -> list[Edge]:
    """Edges found by values alone: A.x's sampled values all appear in the (data-)unique B.y."""
    report = report if report is not None else Counter()
    used = {(e.table.lower(), e.columns[0].lower()) for e in [*known, *named] if len(e.columns) == 1}
    name_count: dict[str, int] = defaultdict(int)
    for t in catalog.tables:
        for c in t.columns:
            name_count[flat_name(c.name)] += 1
    # key candidates: declared single keys, and columns unique in the data that look like keys or
    # share their name with another table's column (list.classroom → teachers.classroom)
    targets: list[tuple[Table, str, bool, float]] = []
    unfit_targets: dict[int, str] = {}  # a date or an amount unique in a small table is still no key
    values_of: list[set[str]] = []
    for t in catalog.tables:
        declared = set(single_keys(t))
        names = set(declared)
        for c in t.columns:
            if not is_generic(c.name) and (is_key_like(c.name) or name_count[flat_name(c.name)] > 1):
                names.add(c.name)
        for name in sorted(names):
            col = t.column(name)
            if col is None or col.kind not in INFERABLE_KINDS:
                continue
            kv = profiler.key_values(t, name)
            if kv is None:
                continue
            values, complete, unique = kv
            if not unique or len(values) < 3 or (not complete and name not in declared):
                continue
            if not complete:
                continue
            unfit = non_key_class(col, (profiler.sample(t) or {}).get(col.name))
            if unfit:
                unfit_targets[len(targets)] = unfit
            targets.append((t, col.name, name in declared, _specificity(values)))
            values_of.append(values)
    index: dict[str, list[int]] = defaultdict(list)
    for i, values in enumerate(values_of):
        for v in values:
            index[v].append(i)
    out: list[Edge] = []
    for src in catalog.tables:
        sample = profiler.sample(src)
        if not sample:
            continue
        for c in src.columns:
            values = sample.get(c.name) or set()
            if len(values) < 3 or (src.name.lower(), c.name.lower()) in used:
                continue
            if c.primary_key and len(src.primary_key) == 1:
                continue  # a table's own key referencing another is found by name (subtypes) or declared
            unfit = non_key_class(c, values)
            hits: dict[int, int] = defaultdict(int)
            for v in values:
                for i in index.get(v, ()):
                    hits[i] += 1
            best: list[tuple[float, int]] = []
            for i, n in hits.items():
                t, col, declared_key, spec = targets[i]
                if t.name.lower() == src.name.lower() or n < 0.95 * len(values):
                    continue
                ref_col = t.column(col)
                if ref_col is None or not kinds_compatible(c.kind, ref_col.kind):
                    continue
                same_name = flat_name(col) == flat_name(c.name)
                names_table = any(s in flat_name(c.name) for s in table_stems(t.name) if len(s) >= 3)
                # a column merely unique in the data is a key only when the names agree too
                # (invoices.billing_postal_code's values are customers' postal codes, but no key)
                if not declared_key and not same_name and not (names_table and is_key_like(col)):
                    continue
                if spec < 0.5 and not is_key_like(c.name) and not same_name:
                    continue  # 1..N ids contain any small integer column
                best.append((0.55 + 0.3 * max(spec, 0.5 if same_name else 0.0), i))
            if len(best) > 1:
                # several tables are keyed by these values (every yelp table has a unique
                # business_id): the one the column's name names is the parent (→ business)
                flat = flat_name(c.name)
                named_ones = [
                    b
                    for b in best
                    if any(s in flat for s in table_stems(targets[b[1]][0].name) if len(s) >= 3)
                ]
                best = named_ones if len(named_ones) == 1 else best
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
            t, col, _, _ = targets[i]
            evidence = (
                f"values: {hits[i]} of {len(values)} sampled values of {src.name}.{c.name} "
                f"are in {t.name}.{col}, which is unique"
            )
            edge = inferred_edge(src, c.name, t, col, conf, evidence)
            if edge.key not in known_keys and conf >= MIN_CONFIDENCE:
                known_keys.add(edge.key)
                out.append(edge)
            else:
                report["dropped: already known" if edge.key in known_keys else "dropped: low confidence"] += 1
    return out


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
