"""Gold joins for the join benchmark: the join blocks of gold SQL, and whether a view covers them.

A gold query's SELECT scopes that join ≥ 2 tables by equalities are cases. A case records each
table *instance* (alias), its equality edges, and its literal filters (`alias.col = 'AG'`), so
role-playing is visible: two copies of agreement_party_role, one filtered to agents and one to
policy holders, are two instances.

Two ways to score a view against a case:

- `covered` (set level, comparable with earlier runs): every gold edge, as an unordered pair of
  table.column, is a view edge, and the view adds no table beyond the gold's except a bridge
  Lucy's C3 requires. Copies of one table collapse, so it cannot tell the agent from the holder.
- `covered_instances` (instance level): the gold's instances map one-to-one onto view instances
  of the same table whose role filter the gold implies (a view copy filtered to 'AG' only stands
  for a gold instance filtered to 'AG'; the writer can add filters, not remove them), and every
  gold equality holds in the view — directly or through the view's other equalities
  (r.agreement_id = a.agreement_id and a.agreement_id = p.policy_id give r.agreement_id = p.policy_id).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from core.catalog import Catalog
from core.graph import RelationshipGraph
from core.joins import View

ColumnPair = frozenset[tuple[str, str]]
InstanceColumn = tuple[str, str]  # (alias, column), lower case


def read_gold(path: Path, limit: int = 0) -> dict[str, list[str]]:
    """Spider's gold file (`SQL<TAB>db_id` per line): db_id → its queries, the first `limit` lines
    only when given; lines without a tab (blank or broken) are skipped."""
    by_db: dict[str, list[str]] = defaultdict(list)
    with path.open() as f:
        for n, line in enumerate(f):
            if limit and n >= limit:
                break
            if "\t" in line:
                sql, db = line.rstrip("\n").rsplit("\t", 1)
                by_db[db.strip()].append(sql)
    return dict(by_db)


@dataclass(frozen=True)
class Case:
    db: str
    sql: str
    tables: tuple[str, ...]  # table of each instance, in FROM order (a self-join repeats a table)
    edges: frozenset[ColumnPair]
    instances: Mapping[str, str] = field(default_factory=dict)  # alias → table
    links: frozenset[frozenset[InstanceColumn]] = frozenset()  # alias-level equalities
    filters: Mapping[str, frozenset[tuple[str, str]]] = field(default_factory=dict)  # alias → {(col, value)}
    question: str = ""
    qid: str = ""

    @property
    def self_join(self) -> bool:
        return len(set(self.tables)) < len(self.tables)


def gold_cases(sql: str, db: str, catalog: Catalog, question: str = "", qid: str = "") -> list[Case]:
    """The join blocks of one gold query: tables, equality edges and literal filters of each SELECT scope."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError:
        return []
    out: list[Case] = []
    seen: set[tuple[tuple[str, ...], frozenset[ColumnPair]]] = set()
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        instances: dict[str, str] = {}
        for name, (_, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table):
                table = catalog.table(source.name)
                instances[name.lower()] = table.name.lower() if table else source.name.lower()
        if len(instances) < 2:
            continue
        conditions = [j.args["on"] for j in select.args.get("joins") or [] if j.args.get("on")]
        if select.args.get("where"):
            conditions.append(select.args["where"].this)
        pairs: set[tuple[tuple[str, str], tuple[str, str]]] = set()
        filters: dict[str, set[tuple[str, str]]] = {}
        for cond in conditions:
            for eq in _conjuncts(cond):
                if not isinstance(eq, exp.EQ):
                    continue
                left, right = eq.this, eq.expression
                if isinstance(left, exp.Literal) and isinstance(right, exp.Column):
                    left, right = right, left
                if isinstance(left, exp.Column) and isinstance(right, exp.Literal) and right.is_string:
                    a = _resolve(left, instances, catalog)
                    if a:
                        filters.setdefault(a[0], set()).add((a[1], right.this))
                    continue
                if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                    continue
                a, b = _resolve(left, instances, catalog), _resolve(right, instances, catalog)
                if a and b and a[0] != b[0]:
                    pairs.add((a, b))
        if not pairs or not _connected(instances, pairs):
            continue
        edges = frozenset(frozenset(((instances[a], ac), (instances[b], bc))) for (a, ac), (b, bc) in pairs)
        tables = tuple(instances.values())
        if (tables, edges) in seen and not question:
            continue
        seen.add((tables, edges))
        out.append(
            Case(
                db,
                sql,
                tables,
                edges,
                instances=dict(instances),
                links=frozenset(frozenset(p) for p in pairs),
                filters={k: frozenset(v) for k, v in filters.items()},
                question=question,
                qid=qid,
            )
        )
    return out


def _conjuncts(cond: exp.Expr) -> Iterable[exp.Expr]:
    """Top-level AND terms: an equality under OR or NOT is no join condition."""
    if isinstance(cond, exp.And):
        yield from _conjuncts(cond.this)
        yield from _conjuncts(cond.expression)
    elif isinstance(cond, exp.Paren):
        yield from _conjuncts(cond.this)
    else:
        yield cond


def _resolve(col: exp.Column, instances: dict[str, str], catalog: Catalog) -> tuple[str, str] | None:
    name = col.name.lower()
    if col.table:
        alias = col.table.lower()
        return (alias, name) if alias in instances else None
    owners = [a for a, t in instances.items() if (tb := catalog.table(t)) is not None and tb.column(name)]
    return (owners[0], name) if len(owners) == 1 else None


def _connected(instances: dict[str, str], pairs: set[tuple[tuple[str, str], tuple[str, str]]]) -> bool:
    g: nx.Graph[str] = nx.Graph()
    g.add_nodes_from(instances)
    g.add_edges_from((a, b) for (a, _), (b, _) in pairs)
    return nx.is_connected(g)


# ---------------------------------------------------------------------------------------------
# scoring


def covered(case: Case, view_edges: set[ColumnPair], view_tables: set[str], graph: RelationshipGraph) -> bool:
    """Set level: every gold edge is a view edge and the view adds only C3 bridges."""
    if not case.edges <= view_edges:
        return False
    return no_extra_tables(case, view_tables, graph)


def no_extra_tables(case: Case, view_tables: set[str], graph: RelationshipGraph) -> bool:
    gold_tables = set(case.tables)
    extra = view_tables - gold_tables
    required = {b for sides, bs in graph.bridges.items() if sides <= gold_tables for b in bs}
    return extra <= required


def view_instances(
    view: View,
) -> tuple[dict[str, str], list[tuple[InstanceColumn, InstanceColumn]], dict[str, set[tuple[str, str]]]]:
    """alias → table, alias-level equalities and role filters of a view, lower case."""
    aliases = {a.lower(): t.lower() for a, t in view.aliases.items()}
    links: list[tuple[InstanceColumn, InstanceColumn]] = []
    filters: dict[str, set[tuple[str, str]]] = {}
    for s in view.steps:
        for left, right in s.on:
            la, lc = left.split(".", 1)
            ra, rc = right.split(".", 1)
            links.append(((la.lower(), lc.lower()), (ra.lower(), rc.lower())))
        for left, value in s.where:
            a, c = left.split(".", 1)
            filters.setdefault(a.lower(), set()).add((c.lower(), value))
    return aliases, links, filters


def covered_instances(
    case: Case,
    view: View,
    graph: RelationshipGraph,
    links: Iterable[tuple[InstanceColumn, InstanceColumn]] = (),
) -> bool:
    """Instance level: a one-to-one map of gold instances onto view instances under which every
    gold equality holds in the view's equalities (`links` replaces the view's own, for ties)."""
    aliases, view_links, filters = view_instances(view)
    if not no_extra_tables(case, set(aliases.values()), graph):
        return False
    classes = _Classes()
    for a, b in list(links) or view_links:
        classes.union(a, b)
    gold = sorted(case.instances, key=lambda g: sum(g in pair_aliases(p) for p in case.links), reverse=True)
    candidates = {
        g: [
            v
            for v, t in aliases.items()
            if t == case.instances[g] and filters.get(v, set()) <= set(case.filters.get(g, frozenset()))
        ]
        for g in gold
    }
    links_of = {g: [p for p in case.links if g in pair_aliases(p)] for g in gold}

    def holds(pair: frozenset[InstanceColumn], mapping: dict[str, str]) -> bool | None:
        (ga, gc), (gb, gcol) = sorted(pair)
        if ga not in mapping or gb not in mapping:
            return None
        return classes.same((mapping[ga], gc), (mapping[gb], gcol))

    def search(i: int, mapping: dict[str, str], used: set[str]) -> bool:
        if i == len(gold):
            return True
        g = gold[i]
        for v in candidates[g]:
            if v in used:
                continue
            mapping[g] = v
            if all(holds(p, mapping) is not False for p in links_of[g]) and search(
                i + 1, mapping, used | {v}
            ):
                return True
            del mapping[g]
        return False

    return search(0, {}, set())


def pair_aliases(pair: frozenset[InstanceColumn]) -> set[str]:
    return {a for a, _ in pair}


class _Classes:
    """Union–find over (alias, column): which columns the view's equalities make equal."""

    def __init__(self) -> None:
        self.parent: dict[InstanceColumn, InstanceColumn] = {}

    def find(self, x: InstanceColumn) -> InstanceColumn:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: InstanceColumn, b: InstanceColumn) -> None:
        self.parent[self.find(a)] = self.find(b)

    def same(self, a: InstanceColumn, b: InstanceColumn) -> bool:
        return a == b or self.find(a) == self.find(b)


# ---------------------------------------------------------------------------------------------
# which patterns a gold case exercises


def case_patterns(case: Case, graph: RelationshipGraph) -> set[str]:
    """The enterprise patterns a gold join block needs, read from the graph's patterns."""
    tables = set(case.tables)
    out: set[str] = set()
    subtype_pairs = {
        frozenset((p.root.lower(), c.lower()))
        for p in graph.patterns
        if p.kind == "subtype"
        for c in p.tables
    }
    shared = {pair for e in graph.edges if e.via for pair in e.key}
    for edge in case.edges:
        if edge in shared or frozenset(t for t, _ in edge) in subtype_pairs:
            out.add("subtype")
    if tables & set(graph.roles):
        out.add("role")
        role_columns = {(t, graph.roles[t].column.lower()) for t in graph.roles}
        if any((case.instances[a], c) in role_columns for a, fs in case.filters.items() for c, _ in fs):
            out.add("role filtered")
    for p in graph.patterns:
        if p.kind == "typed_fact" and p.root.lower() in tables and tables & {t.lower() for t in p.tables}:
            out.add("typed fact")
        if p.kind == "parallel_path" and {p.root.lower(), p.tables[0].lower()} <= tables:
            out.add("parallel path")
    if case.self_join:
        out.add("self-join")
    return out


def tie_readings(view: View, graph: RelationshipGraph) -> list[list[tuple[InstanceColumn, InstanceColumn]]]:
    """The view's equalities with each tied parallel path read the other way (the recipe names it)."""
    if not view.ties:
        return []
    aliases, links, _ = view_instances(view)
    by_table: dict[str, list[str]] = {}
    for a, t in aliases.items():
        by_table.setdefault(t, []).append(a)
    out = []
    for p in graph.parallel:
        a, b, c = (x.lower() for x in (p.root, *p.tables))
        if not all(by_table.get(x) for x in (a, b, c)):
            continue
        pairs = {"ab": (a, b), "ac": (a, c), "cb": (c, b)}
        present = {
            k: [link for link in links if {aliases[link[0][0]], aliases[link[1][0]]} == {x, y}]
            for k, (x, y) in pairs.items()
        }
        missing = [k for k, v in present.items() if not v]
        if len(missing) != 1:
            continue
        x, y = pairs[missing[0]]
        for e in graph.edges_between(x, y)[:1]:
            src, ref = by_table[e.table.lower()][0], by_table[e.ref_table.lower()][0]
            new = [
                ((src, col.lower()), (ref, rcol.lower()))
                for col, rcol in zip(e.columns, e.ref_columns, strict=True)
            ]
            for drop in (k for k in pairs if k != missing[0]):
                kept = [link for link in links if link not in present[drop]]
                out.append(kept + new)
    return out
