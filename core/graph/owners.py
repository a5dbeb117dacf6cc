"""Which columns are keys, and which table owns each: the entity a key names, not the bridge
that repeats it.

`Keys`: the keys inference may point at — declared ones and, in a table that declares none,
columns named like keys whose values are distinct in the data; and each table's own key (the
one named for the table, never a reference to another).

`Owners`, for the rest of this note:

Value inclusion says two columns hold the same keys; it cannot say which one is *the* key when
both look unique — and in a small sample every id column does (three rows of domain_conference
have three distinct cids, like conference's three rows). Then direction, and the choice among
several unique candidates, falls to chance unless something else decides. What decides here,
strongest first, is evidence that holds on any schema:

1. declared: the catalog declares the column a key of this table;
2. name: the column names this table (`conference_id`, `conf_id`, `cid` → conference; a bare
   `id` its own table), `core.graph.names.names_table`;
3. shape: the table is an *entity* — named for a thing, with descriptive columns of its own (a
   name, a title) — rather than a *bridge*, whose name joins two other tables' names
   (`domain_conference`, `paperfield`) or whose columns are nothing but other tables' keys
   (`writes(aid, pid)`). Entities are referenced; bridges reference.

`Owners.rank` orders the tables holding one key by this evidence; equal ranks are a real tie,
which the callers resolve by size or leave undecided, never by the order tables were listed in.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from core.catalog import Catalog, Column, Table
from core.graph.columns import non_key_class
from core.graph.keys import INFERABLE_KINDS, single_keys
from core.graph.names import (
    INITIAL,
    KEY_WORDS,
    SPELLED,
    flat_name,
    is_key_like,
    names_table,
    table_stems,
)
from core.graph.profiling import Profiler

ENTITY, OTHER, BRIDGE = 1, 0, -1
Rank = tuple[int, int, int]  # (declared key, how plainly the name names the table, shape)
Evidence = Literal["declared", "name", "shape", "tie"]
# words that join two table names in a bridge's name: assets_in_events, student_to_course
CONNECTORS = ("in", "of", "to", "and", "x", "has", "per", "for", "by", "on", "with")
MIN_STEM = 3


class Owners:
    """Evidence, over one catalog, for which of the tables holding a key column owns it."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._stem_tables: dict[str, set[str]] = defaultdict(set)  # stem → tables it names
        for t in catalog.tables:
            for s in table_stems(t.name):
                if len(s) >= MIN_STEM:
                    self._stem_tables[s].add(t.name.lower())
        self._holders: dict[str, set[str]] = defaultdict(set)  # flat column name → tables holding it
        for t in catalog.tables:
            for c in t.columns:
                self._holders[flat_name(c.name)].add(t.name.lower())
        self._shape = {t.name.lower(): self._shape_of(t) for t in catalog.tables}

    def shape(self, table: Table) -> int:
        """ENTITY, BRIDGE or OTHER."""
        return self._shape.get(table.name.lower(), OTHER)

    def naming(self, table: Table, column: str) -> int:
        """How plainly `column` names `table`; a bare key word (id, code) names the table it is in."""
        if flat_name(column) in KEY_WORDS:
            return SPELLED
        return names_table(column, table.name)

    def rank(self, table: Table, column: str, declared: bool) -> Rank:
        """How strongly `table` owns the key `column` (higher owns; compare with `decide`)."""
        return (int(declared), self.naming(table, column), self.shape(table))

    # -- shapes ---------------------------------------------------------------------------

    def _shape_of(self, table: Table) -> int:
        if self._bridge_name(table) or self._bridge_columns(table):
            return BRIDGE
        if any(_descriptive(c) for c in table.columns):
            return ENTITY
        return OTHER

    def _bridge_name(self, table: Table) -> bool:
        """Is the name two other tables' names joined (domain_conference, paperfield, assets_in_events)?"""
        own = table.name.lower()

        def other(stem: str) -> bool:
            return bool(self._stem_tables.get(stem, set()) - {own})

        flat = flat_name(table.name)
        for i in range(MIN_STEM, len(flat) - MIN_STEM + 1):
            left, right = flat[:i], flat[i:]
            if not other(left):
                continue
            if other(right):
                return True
            if any(right.startswith(w) and other(right[len(w) :]) for w in CONNECTORS):
                return True
        return False

    def _bridge_columns(self, table: Table) -> bool:
        """Nothing of its own: every column (but one) is a key other tables hold too (writes(aid, pid))."""
        if len(table.columns) < 2 or any(_descriptive(c) for c in table.columns):
            return False
        own = table.name.lower()
        shared = [
            c
            for c in table.columns
            if is_key_like(c.name)
            and flat_name(c.name) not in KEY_WORDS
            and self._holders[flat_name(c.name)] - {own}
        ]
        return len(shared) >= 2 and len(shared) >= len(table.columns) - 1


MIN_DATA_KEY_VALUES = 2


class Keys:
    """The single-column keys inference may point at: declared ones, and — in tables that
    declare none — columns named like keys whose values are unique in the data.

    Many databases declare no keys at all; without the second kind, no name convention could
    ever match (`publication.cid` has no declared `conference.cid` to point at). A key found in
    the data is only a candidate: the values of every edge to it are still checked, and in a
    small sample a bridge's columns look unique too, which `Owners` sorts out.
    """

    def __init__(self, catalog: Catalog, owners: Owners, profiler: Profiler | None = None) -> None:
        self.owners = owners
        self._declared: dict[str, list[str]] = {t.name.lower(): single_keys(t) for t in catalog.tables}
        self._found: dict[str, list[str]] = {}
        self._own: dict[str, str | None] = {}
        if profiler is not None:
            for t in catalog.tables:
                if not t.primary_key and not t.unique:
                    self._found[t.name.lower()] = _data_keys(t, profiler)

    def of(self, table: Table) -> list[str]:
        low = table.name.lower()
        return [*self._declared.get(low, []), *self._found.get(low, [])]

    def declared(self, table: Table, column: str) -> bool:
        return column.lower() in (k.lower() for k in self._declared.get(table.name.lower(), []))

    def is_key(self, table: Table, column: str) -> bool:
        return column.lower() in (k.lower() for k in self.of(table))

    def own(self, table: Table) -> str | None:
        """The table's own key: its one-column primary key, or the key found in the data that
        names the table (`id`, `cid` in conference) — never a reference to another table."""
        low = table.name.lower()
        if low not in self._own:
            self._own[low] = self._own_key(table)
        return self._own[low]

    def _own_key(self, table: Table) -> str | None:
        if len(table.primary_key) == 1:
            return table.primary_key[0]
        if table.primary_key or table.unique:
            return None
        # a bridge's columns name the tables it pairs (card_id in customers_cards, when it is a
        # bridge): only a key that spells out the bridge's own name is its own
        least = SPELLED if self.owners.shape(table) == BRIDGE else INITIAL
        named = [(self.owners.naming(table, k), k) for k in self._found.get(table.name.lower(), [])]
        named = [(n, k) for n, k in named if n >= least]
        best = max((n for n, _ in named), default=0)
        top = [k for n, k in named if n == best]
        return top[0] if len(top) == 1 else None

    def is_own(self, table: Table, column: str) -> bool:
        own = self.own(table)
        return own is not None and own.lower() == column.lower()

    def rank(self, table: Table, column: str) -> Rank:
        return self.owners.rank(table, column, self.declared(table, column))


def _data_keys(table: Table, profiler: Profiler) -> list[str]:
    """Columns of `table` named like keys whose values, all read, are distinct."""
    sample = profiler.sample(table) or {}
    out = []
    for c in table.columns:
        if c.kind not in INFERABLE_KINDS or not is_key_like(c.name):
            continue
        if non_key_class(c, sample.get(c.name)) is not None:
            continue
        kv = profiler.key_values(table, c.name)
        if kv is None:
            continue
        values, complete, unique = kv
        if complete and unique and len(values) >= MIN_DATA_KEY_VALUES:
            out.append(c.name)
    return out


def decide(a: Rank, b: Rank) -> Evidence:
    """What tells two ranks apart: the first evidence on which they differ, or a tie."""
    order: tuple[Evidence, ...] = ("declared", "name", "shape")
    for evidence, x, y in zip(order, a, b, strict=True):
        if x != y:
            return evidence
    return "tie"


def _descriptive(column: Column) -> bool:
    """A column that describes the row itself (a name, a title, a homepage), not a key or a date."""
    if column.kind not in ("text", "other") or is_key_like(column.name):
        return False
    return non_key_class(column) not in ("datetime", "flag")
