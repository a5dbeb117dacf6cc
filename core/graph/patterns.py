"""The design patterns Lucy reasons with (§3.1), from the catalog or read off the edges.

Many-to-many bridges, lookup tables and subtypes (one-to-one extensions, exclusive when their
keys never overlap). Stars and snowflakes come from the catalog only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from core.catalog import Catalog, Pattern
from core.graph.multigraph import EXCLUSIVE, Edge
from core.graph.names import words_of
from core.graph.profiling import Profiler

LOOKUP_WORDS = frozenset(
    {"ref", "lookup", "lkp", "lu", "type", "types", "code", "codes", "status", "kind", "enum"}
)


def catalog_patterns(catalog: Catalog) -> list[Pattern]:
    return [p for p in catalog.patterns if catalog.table(p.root) is not None]


def detect_patterns(
    catalog: Catalog, edges: Sequence[Edge], given: Sequence[Pattern], profiler: Profiler | None = None
) -> list[Pattern]:
    """Bridges, lookups and subtypes, read off the edges (stars and snowflakes only come from the catalog).

    Detection is conservative: a wrong "lookup" would forbid a legitimate path, a wrong "bridge"
    would force a detour. The catalog can always declare what detection misses.
    """
    trusted = [e for e in edges if not e.is_self and (e.origin != "inferred" or e.confidence >= 0.7)]
    outgoing: dict[str, list[Edge]] = defaultdict(list)
    incoming: dict[str, list[Edge]] = defaultdict(list)
    for e in trusted:
        outgoing[e.table.lower()].append(e)
        incoming[e.ref_table.lower()].append(e)
    declared_roots = {(p.kind, p.root.lower()) for p in given}
    claimed = {p.root.lower() for p in given} | {t.lower() for p in given for t in p.tables}
    out: list[Pattern] = []

    # many-to-many: a table that exists to pair rows of two others
    bridges: set[str] = set()
    for t in catalog.tables:
        low = t.name.lower()
        outs = outgoing.get(low, [])
        sides = sorted({e.ref_table for e in outs}, key=str.lower)
        if len(sides) != 2 or incoming.get(low) or low in claimed:
            continue
        if any(e.src_unique for e in outs):
            continue
        fk_cols = {c.lower() for e in outs for c in e.columns}
        surrogate = {c.lower() for c in t.primary_key} if len(t.primary_key) == 1 else set()
        payload = [c for c in t.columns if c.name.lower() not in fk_cols | surrogate]
        if len(payload) > 2:
            continue
        bridges.add(low)
        if ("many_to_many", low) not in declared_roots:
            out.append(Pattern("many_to_many", t.name, tuple(sides), "detected", "pairs rows of two tables"))

    # subtype: a table keyed by (a unique reference to) its parent's key
    subtypes: dict[str, list[Edge]] = defaultdict(list)
    for e in trusted:
        if e.src_unique and e.ref_unique and e.table.lower() not in bridges:
            parent = catalog.table(e.ref_table)
            if parent is not None and catalog.table(e.table) is not None:
                subtypes[parent.name].append(e)
    for parent, links in sorted(subtypes.items()):
        if ("subtype", parent.lower()) in declared_roots:
            continue
        children = tuple(sorted({e.table for e in links}))
        note = "one-to-one extensions"
        if len(children) > 1 and profiler is not None and _disjoint(profiler, catalog, links):
            note = f"{EXCLUSIVE}: each {parent} row is at most one of them (their keys never overlap)"
        out.append(Pattern("subtype", parent, children, "detected", note))

    # lookup: a small code table many others point at, pointing nowhere itself
    for t in catalog.tables:
        low = t.name.lower()
        if low in claimed or low in bridges or outgoing.get(low):
            continue
        referrers = {e.table.lower() for e in incoming.get(low, [])}
        if len(referrers) < 2 or len(t.columns) > 4:
            continue
        named = bool(set(words_of(t.name)) & LOOKUP_WORDS)
        # keyed by a text value (a city name, a country code) rather than a surrogate id
        natural_key = len(t.primary_key) == 1 and (t.column(t.primary_key[0]) or t.columns[0]).kind == "text"
        text_cols = [c for c in t.columns if c.kind == "text" and not c.primary_key]
        descriptive = len(text_cols) == len(t.columns) - len(t.primary_key)  # no measures of its own
        if not text_cols or not (named or (natural_key and descriptive)):
            continue
        out.append(
            Pattern(
                "lookup", t.name, (), "detected", "code table referenced by " + ", ".join(sorted(referrers))
            )
        )
    return out


def _disjoint(profiler: Profiler, catalog: Catalog, links: Sequence[Edge]) -> bool:
    """Do the children's references to the parent never share a value (an exclusive split)?"""
    seen: set[str] = set()
    for e in links:
        table = catalog.table(e.table)
        kv = profiler.key_values(table, e.columns[0]) if table is not None and len(e.columns) == 1 else None
        if kv is None or len(kv[0]) < 5:
            return False
        if seen & kv[0]:
            return False
        seen |= kv[0]
    return True
