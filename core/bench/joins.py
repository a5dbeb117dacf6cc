"""Join-view benchmark: do synthesized views join the gold queries' tables the way the gold does?

    python -m core.bench joins --db-dir DIR --gold FILE [--json]

DIR is in Spider layout (DIR/<db_id>/<db_id>.sqlite); FILE has lines `SQL<TAB>db_id`. Every SELECT
of a gold query that joins ≥ 2 tables by equality conditions is one case: view synthesis gets the
gold's tables (no question) and its join edges are compared with the gold's, as unordered column
pairs, case-insensitively.

- exact:   the view's edges are the gold's edges.
- covered: every gold edge is in the view, and the view adds no table beyond the gold's except a
           many-to-many bridge Lucy's C3 requires (extra role copies of a gold table are allowed).
- self-joins (a table twice in the gold) are counted separately, not in `queries`.
- baseline_exact: networkx's approximate Steiner tree over declared foreign keys only, same cases.
- p50/p95_ms: CPU time of one synthesis (the graph is built once per database and not timed
  here); CPU rather than wall-clock time so that other processes on a shared machine do not count.
  The wall clock is printed too. large_schema_p95_ms: the same on a synthetic schema of ≥ 500
  tables and ≥ 4,000 columns (CHESS's merged-schema scale), for table sets a question could need.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import sqlalchemy as sa
import sqlglot
from networkx.algorithms.approximation import steiner_tree as nx_steiner_tree
from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from core.catalog import Catalog, Column, Pattern, Relationship, Table, reflect
from core.connect import readonly_engine
from core.graph import RelationshipGraph, build_graph
from core.joins import graph_weights, synthesize_view

ColumnPair = frozenset[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    db: str
    sql: str
    tables: tuple[str, ...]  # table of each instance, in FROM order (a self-join repeats a table)
    edges: frozenset[ColumnPair]

    @property
    def self_join(self) -> bool:
        return len(set(self.tables)) < len(self.tables)


# ---------------------------------------------------------------------------------------------
# gold queries → cases


def gold_cases(sql: str, db: str, catalog: Catalog) -> list[Case]:
    """The join blocks of one gold query: tables and equality edges of each SELECT scope."""
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
            conditions.append(select.args["where"])
        pairs: set[tuple[tuple[str, str], tuple[str, str]]] = set()
        for cond in conditions:
            for eq in cond.find_all(exp.EQ):
                left, right = eq.this, eq.expression
                if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
                    continue
                a, b = _resolve(left, instances, catalog), _resolve(right, instances, catalog)
                if a and b and a[0] != b[0]:
                    pairs.add((a, b))
        if not pairs or not _connected(instances, pairs):
            continue
        edges = frozenset(frozenset(((instances[a], ac), (instances[b], bc))) for (a, ac), (b, bc) in pairs)
        tables = tuple(instances.values())
        if (tables, edges) in seen:
            continue
        seen.add((tables, edges))
        out.append(Case(db, sql, tables, edges))
    return out


def _resolve(col: exp.Column, instances: dict[str, str], catalog: Catalog) -> tuple[str, str] | None:
    name = col.name.lower()
    if col.table:
        alias = col.table.lower()
        return (alias, name) if alias in instances else None
    owners = [a for a, t in instances.items() if (tb := catalog.table(t)) is not None and tb.column(name)]
    return (owners[0], name) if len(owners) == 1 else None


def _connected(instances: dict[str, str], pairs: set[tuple[tuple[str, str], tuple[str, str]]]) -> bool:
    g = nx.Graph()
    g.add_nodes_from(instances)
    g.add_edges_from((a, b) for (a, _), (b, _) in pairs)
    return nx.is_connected(g)


# ---------------------------------------------------------------------------------------------
# scoring


def covered(case: Case, view_edges: set[ColumnPair], view_tables: set[str], graph: RelationshipGraph) -> bool:
    gold_tables = set(case.tables)
    if not case.edges <= view_edges:
        return False
    extra = view_tables - gold_tables
    required = {b for sides, bs in graph.bridges.items() if sides <= gold_tables for b in bs}
    return extra <= required


def baseline_graph(catalog: Catalog) -> nx.Graph:
    """Declared foreign keys only, one edge per table pair (what a plain Steiner tree sees)."""
    g = nx.Graph()
    g.add_nodes_from(t.name.lower() for t in catalog.tables)
    for r in catalog.relationships:
        if r.origin != "declared" or r.table.lower() == r.ref_table.lower():
            continue
        a, b = r.table.lower(), r.ref_table.lower()
        if g.has_edge(a, b):
            continue
        pairs = frozenset(
            frozenset(((a, c.lower()), (b, rc.lower())))
            for c, rc in zip(r.columns, r.ref_columns, strict=True)
        )
        g.add_edge(a, b, pairs=pairs)
    return g


def baseline_edges(g: nx.Graph, tables: Sequence[str]) -> set[ColumnPair] | None:
    terminals = sorted(set(tables))
    if any(t not in g for t in terminals):
        return None
    component = nx.node_connected_component(g, terminals[0])
    if any(t not in component for t in terminals):
        return None
    tree = nx_steiner_tree(g.subgraph(component), terminals)
    return {p for u, v in tree.edges for p in g.edges[u, v]["pairs"]}


# ---------------------------------------------------------------------------------------------
# synthetic large schema


def synthetic_catalog(n_tables: int = 520, seed: int = 7) -> Catalog:
    """A CHESS-scale schema: entities with lookups, bridges, role pairs, stars and undeclared keys."""
    rng = random.Random(seed)
    tables: list[Table] = []
    rels: list[Relationship] = []
    patterns: list[Pattern] = []
    names: list[str] = []

    def add(name: str, extra: int, fks: Sequence[tuple[str, str]] = (), declare: bool = True) -> None:
        cols = [Column("id", "INTEGER", "integer", False, True)]
        for col, ref in fks:
            cols.append(Column(col, "INTEGER", "integer"))
            if declare:
                rels.append(Relationship(name, (col,), ref, ("id",)))
        for i in range(extra):
            kind = rng.choice(["text", "integer", "number", "date"])
            cols.append(Column(f"attr_{i}_{kind}", kind.upper(), kind))
        tables.append(Table(name, tuple(cols), ("id",)))
        names.append(name)

    for i in range(20):
        add(f"ref_type_{i}", 2)
        patterns.append(Pattern("lookup", f"ref_type_{i}"))
    i = 0
    while len(tables) < n_tables:
        i += 1
        name = f"entity_{i}"
        parents = [n for n in names if n.startswith("entity_")]
        fks: list[tuple[str, str]] = []
        if parents:
            for p in rng.sample(parents, k=min(len(parents), rng.choice([1, 1, 2]))):
                fks.append((f"{p}_id", p))
        fks.append((f"type_{i}_id", f"ref_type_{rng.randrange(20)}"))
        if parents and rng.random() < 0.1:  # a second role towards the same parent
            p = fks[0][1]
            fks.append((f"backup_{p}_id", p))
        add(name, rng.randrange(5, 10), fks, declare=rng.random() < 0.8)
        if len(parents) > 2 and rng.random() < 0.15:
            a, b = rng.sample(parents, 2)
            add(f"{a}_{b}_link", 1, [(f"{a}_id", a), (f"{b}_id", b)])
        if rng.random() < 0.05:
            inner = [f"{name}_detail_{j}" for j in range(3)]
            for d in inner:
                add(d, 3, [(f"{name}_id", name)])
            patterns.append(Pattern("star", name, tuple(inner)))
    return Catalog(
        database="synthetic",
        dialect="sqlite",
        tables=tuple(tables),
        relationships=tuple(rels),
        patterns=tuple(patterns),
        signature="synthetic",
    )


def synthetic_queries(graph: RelationshipGraph, n: int, seed: int = 11) -> list[list[str]]:
    """Table sets a question could need: connected neighbourhoods of 2–8 tables, some far apart."""
    rng = random.Random(seed)
    names = [t.name.lower() for t in graph.catalog.tables]
    out = []
    for _ in range(n):
        size = rng.choice([2, 2, 3, 3, 4, 5, 6, 8])
        start = rng.choice(names)
        chosen = [start]
        frontier = [start]
        while len(chosen) < size and frontier:
            node = rng.choice(frontier)
            nbrs = [x for x in graph.neighbors(node) if x not in chosen]
            if not nbrs:
                frontier.remove(node)
                continue
            # walk a few hops so the tables are related but not adjacent
            nxt = rng.choice(nbrs)
            for _ in range(rng.randrange(0, 2)):
                more = [x for x in graph.neighbors(nxt) if x not in chosen]
                if more:
                    nxt = rng.choice(more)
            chosen.append(nxt)
            frontier.append(nxt)
        if rng.random() < 0.2:
            chosen[-1] = rng.choice(names)  # a far-away table
        out.append(chosen)
    return out


# ---------------------------------------------------------------------------------------------
# main


def _pct(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench joins", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-dir", required=True, type=Path)
    parser.add_argument("--gold", required=True, type=Path)
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    parser.add_argument("--limit", type=int, default=0, help="only the first N gold lines")
    parser.add_argument("--no-profile", action="store_true", help="infer edges from names only")
    parser.add_argument("--large-tables", type=int, default=520)
    parser.add_argument("--large-queries", type=int, default=300)
    parser.add_argument("--show-misses", type=int, default=0, help="print N cases that are not covered")
    args = parser.parse_args(argv)
    # Spider's hand-written DDL trips SQLAlchemy's reflection warnings; they are not findings
    warnings.filterwarnings("ignore", category=sa.exc.SAWarning)

    by_db: dict[str, list[str]] = defaultdict(list)
    with args.gold.open() as f:
        for n, line in enumerate(f):
            if args.limit and n >= args.limit:
                break
            if "\t" in line:
                sql, db = line.rstrip("\n").rsplit("\t", 1)
                by_db[db.strip()].append(sql)

    counts: Counter[str] = Counter()
    times: list[float] = []  # CPU milliseconds per synthesis
    wall_times: list[float] = []
    build_ms: list[float] = []
    misses: list[str] = []
    for db in sorted(by_db):
        path = args.db_dir / db / f"{db}.sqlite"
        if not path.is_file():
            counts["missing_db"] += len(by_db[db])
            continue
        engine = readonly_engine(f"sqlite:///{path.resolve()}")
        try:
            catalog = reflect(engine, db)
            started = time.perf_counter()
            graph = build_graph(catalog, None if args.no_profile else engine)
            graph_weights(graph)  # per-graph preparation, like the cached graph itself
            build_ms.append((time.perf_counter() - started) * 1000)
        finally:
            engine.dispose()
        base = baseline_graph(catalog)
        for sql in by_db[db]:
            for case in gold_cases(sql, db, catalog):
                if any(catalog.table(t) is None for t in case.tables):
                    counts["unknown_table"] += 1
                    continue
                view, elapsed, wall = _timed(synthesize_view, graph, list(case.tables))
                view_edges = view.join_edges()
                view_tables = {t.lower() for t in view.tables}
                ok_cover = covered(case, view_edges, view_tables, graph)
                if case.self_join:
                    counts["self_join"] += 1
                    counts["self_join_covered"] += ok_cover
                    continue
                times.append(elapsed)
                wall_times.append(wall)
                counts["queries"] += 1
                counts["exact"] += view_edges == set(case.edges)
                counts["covered"] += ok_cover
                b = baseline_edges(base, case.tables)
                counts["baseline_exact"] += b == set(case.edges)
                counts["baseline_covered"] += b is not None and covered(
                    case, b, {x for p in b for x, _ in p}, graph
                )
                if not ok_cover and len(misses) < args.show_misses:
                    misses.append(_describe_miss(case, view))

    large = synthetic_catalog(args.large_tables)
    large_graph = build_graph(large)
    graph_weights(large_graph)
    n_cols = sum(len(t.columns) for t in large.tables)
    large_times: list[float] = []
    large_wall: list[float] = []
    for tables in synthetic_queries(large_graph, args.large_queries):
        _, elapsed, wall = _timed(synthesize_view, large_graph, tables)
        large_times.append(elapsed)
        large_wall.append(wall)

    q = counts["queries"] or 1
    result = {
        "queries": counts["queries"],
        "exact": round(counts["exact"] / q, 4),
        "covered": round(counts["covered"] / q, 4),
        "self_join": counts["self_join"],
        "baseline_exact": round(counts["baseline_exact"] / q, 4),
        "p50_ms": round(_pct(times, 0.5), 3),
        "p95_ms": round(_pct(times, 0.95), 3),
        "large_schema_p95_ms": round(_pct(large_times, 0.95), 3),
    }
    for m in misses:
        print(m)
    print(
        f"databases: {len(build_ms)}; graph build p50 {_pct(build_ms, 0.5):.1f} ms, max {max(build_ms or [0]):.1f} ms"
    )
    print(
        f"cases: {counts['queries']} multi-table joins (+{counts['self_join']} self-joins, "
        f"{counts['self_join_covered']} of them covered; {counts['unknown_table']} naming unknown tables)"
    )
    print(f"views:    exact {result['exact']:.3f}  covered {result['covered']:.3f}")
    print(
        f"baseline: exact {result['baseline_exact']:.3f}  covered {counts['baseline_covered'] / q:.3f}"
        "  (networkx approximate Steiner tree, declared foreign keys only)"
    )
    print(
        f"synthesis CPU time: p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, max {max(times or [0]):.2f} ms"
        f" (wall clock p50 {_pct(wall_times, 0.5):.3f} ms, p95 {_pct(wall_times, 0.95):.3f} ms)"
    )
    print(
        f"large schema: {len(large.tables)} tables, {n_cols} columns, {len(large_graph.edges)} edges; "
        f"graph {large_graph.stats.get('build_ms')} ms; synthesis CPU p50 {_pct(large_times, 0.5):.2f} ms, "
        f"p95 {result['large_schema_p95_ms']} ms (wall p95 {_pct(large_wall, 0.95):.2f} ms) "
        f"over {len(large_times)} table sets"
    )
    if args.json:
        print(json.dumps(result))
    return 0


def _timed(fn, *args):  # type: ignore[no-untyped-def]
    """(result, CPU ms, wall ms): CPU time is what the synthesis costs; on a shared machine the wall
    clock also counts the time other processes held the CPU."""
    cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
    result = fn(*args)
    return result, (time.thread_time_ns() - cpu) / 1e6, (time.perf_counter_ns() - wall) / 1e6


def _describe_miss(case: Case, view) -> str:  # type: ignore[no-untyped-def]
    gold = sorted(" = ".join(f"{t}.{c}" for t, c in sorted(p)) for p in case.edges)
    got = sorted(" = ".join(f"{t}.{c}" for t, c in sorted(p)) for p in view.join_edges())
    return f"MISS [{case.db}] {case.sql}\n  gold: {gold}\n  view: {got}\n  tables: {view.tables}\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
