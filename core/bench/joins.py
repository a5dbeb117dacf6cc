"""Join-view benchmark: do synthesized views join the gold queries' tables the way the gold does?

    python -m core.bench joins --db-dir DIR --gold FILE [--json]          # Spider layout
    python -m core.bench joins --schema insurance [--json]                # our insurance demo
    python -m core.bench joins --db FILE --questions FILE [--catalog YAML]
    python -m core.bench joins --db-dir DIR --questions FILE              # questions with db_id (defog)
    python -m core.bench joins --db-dir DIR [--gold FILE] --strip-keys [--part dev|holdout]

DIR is in Spider layout (DIR/<db_id>/<db_id>.sqlite); FILE has lines `SQL<TAB>db_id`. Every SELECT
of a gold query that joins ≥ 2 tables by equality conditions is one case (core/bench/join_gold.py):
view synthesis gets the gold's tables (and, where the gold has one, the question) and its joins are
compared with the gold's.

- exact:   the view's edges are the gold's edges (unordered table.column pairs).
- covered: every gold edge is in the view, and the view adds no table beyond the gold's except a
           many-to-many bridge Lucy's C3 requires (extra role copies of a gold table are allowed).
- covered_instances: the same, instance by instance — the agent's copy of the role table is not
           the holder's (join_gold.covered_instances); a tie the view's recipe names counts when
           its other reading is the gold's, and is reported as such.
- self-joins (a table twice in the gold: role-playing) are counted separately, set and instance level.
- patterns: cases needing a subtype, role table (role-filtered: the gold filters the role), typed
           fact or parallel path, each with its coverage and the baseline's.
- baseline: networkx's approximate Steiner tree over declared foreign keys only, same cases.
- inference: what edge inference proposed, kept and dropped (and why); for edges between two
           columns that both look unique, what set the direction (the values, the name, the
           tables' shapes, or only their sizes) and how many were flipped against the order they
           were met in; for a column whose values fit several keys, what chose among them; and an
           independent check that no inferred edge joins on a date, flag, amount or free-text column.
- recovery (--strip-keys): every database is copied without its keys (core/bench/stripped.py),
           inference runs on the copy, and its edges are scored against the foreign keys the
           original declared: precision and recall, with the right direction, and how many came
           out reversed. `--part dev|holdout` takes one fixed half of the databases.
- p50/p95_ms: CPU time of one synthesis (the graph is built once per database and not timed
  here); CPU rather than wall-clock time so that other processes on a shared machine do not count.
  The wall clock is printed too. large_schema_p95_ms: the same on a synthetic schema of ≥ 500
  tables and ≥ 4,000 columns (CHESS's merged-schema scale), for table sets a question could need.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import sqlalchemy as sa
from networkx.algorithms.approximation import steiner_tree as nx_steiner_tree

from core.bench.join_gold import (
    Case,
    case_patterns,
    covered,
    covered_instances,
    gold_cases,
    read_gold,
    tie_readings,
)
from core.bench.stripped import (
    PARTS,
    Declared,
    declared_keys,
    in_part,
    recovery_figures,
    score_recovery,
    strip_keys,
)
from core.catalog import Catalog, Column, ColumnKind, Pattern, Relationship, Table, overlay, reflect
from core.connect import readonly_engine
from core.graph import RelationshipGraph, build_graph
from core.graph.columns import non_key_class
from core.graph.profiling import Profiler
from core.joins import View, graph_weights, synthesize_view
from core.settings import ROOT
from core.yaml_text import load_yaml

ColumnPair = frozenset[tuple[str, str]]
PATTERNS = ("subtype", "role", "role filtered", "typed fact", "parallel path", "self-join")
INSURANCE_QUESTIONS = ROOT / "tests" / "data" / "insurance_questions.json"
ATTRIBUTE_KINDS: list[ColumnKind] = ["text", "integer", "number", "date"]


def baseline_graph(catalog: Catalog) -> nx.Graph[str]:
    """Declared foreign keys only, one edge per table pair (what a plain Steiner tree sees)."""
    g: nx.Graph[str] = nx.Graph()
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


def baseline_edges(g: nx.Graph[str], tables: Sequence[str]) -> set[ColumnPair] | None:
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
            kind: ColumnKind = rng.choice(ATTRIBUTE_KINDS)
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
# scoring a database


@dataclass
class Tally:
    """Everything the run counts, over all databases."""

    counts: Counter[str] = field(default_factory=Counter)
    patterns: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    inference: Counter[str] = field(default_factory=Counter)
    times: list[float] = field(default_factory=list)  # CPU milliseconds per synthesis
    wall_times: list[float] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    unhygienic: list[str] = field(default_factory=list)
    recovery: Counter[str] = field(default_factory=Counter)
    recovery_notes: list[str] = field(default_factory=list)


def score_database(
    tally: Tally,
    catalog: Catalog,
    engine: sa.Engine | None,
    cases_of: list[tuple[str, str, str]],
    show_misses: int,
) -> RelationshipGraph:
    """Build the graph, then synthesize and score a view for every case of `cases_of` (sql, question, id)."""
    started = time.perf_counter()
    graph = build_graph(catalog, engine)
    graph_weights(graph)  # per-graph preparation, like the cached graph itself
    tally.build_ms.append((time.perf_counter() - started) * 1000)
    tally.inference.update(graph.stats.get("inference") or {})
    tally.counts["shared_key_edges"] += graph.stats.get("shared_key", 0)
    for kind in ("subtype", "role", "typed_fact", "parallel_path"):
        tally.counts[f"detected {kind}"] += sum(p.kind == kind for p in graph.patterns)
    if engine is not None:
        tally.unhygienic += unhygienic_edges(graph, engine)
    base = baseline_graph(catalog)
    for sql, question, qid in cases_of:
        for case in gold_cases(sql, catalog.database, catalog, question, qid):
            if any(catalog.table(t) is None for t in case.tables):
                tally.counts["unknown_table"] += 1
                continue
            view, elapsed, wall = _timed(graph, list(case.tables), question)
            view_edges = view.join_edges()
            view_tables = {t.lower() for t in view.tables}
            ok_cover = covered(case, view_edges, view_tables, graph)
            ok_instances = covered_instances(case, view, graph)
            by_tie = False
            if not ok_instances and view.ties:
                by_tie = any(covered_instances(case, view, graph, r) for r in tie_readings(view, graph))
            b = baseline_edges(base, case.tables)
            b_cover = b is not None and covered(case, b, {x for pair in b for x, _ in pair}, graph)
            c = tally.counts
            c["cases"] += 1
            c["cases_covered_instances"] += ok_instances or by_tie
            c["ties"] += bool(view.ties)
            c["covered_by_tie"] += by_tie
            for pattern in case_patterns(case, graph):
                t = tally.patterns[pattern]
                t["cases"] += 1
                t["covered"] += ok_instances or by_tie
                t["baseline"] += b_cover
            if case.self_join:
                c["self_join"] += 1
                c["self_join_covered"] += ok_cover
                c["self_join_covered_instances"] += ok_instances or by_tie
            else:
                tally.times.append(elapsed)
                tally.wall_times.append(wall)
                c["queries"] += 1
                c["exact"] += view_edges == set(case.edges)
                c["covered"] += ok_cover
                c["covered_instances"] += ok_instances or by_tie
                c["baseline_exact"] += b == set(case.edges)
                c["baseline_covered"] += b_cover
            if not (ok_instances or by_tie) and len(tally.misses) < show_misses:
                tally.misses.append(_describe_miss(case, view))
    return graph


def unhygienic_edges(graph: RelationshipGraph, engine: sa.Engine) -> list[str]:
    """Inferred edges on a date, flag, amount or free-text column, checked against fresh samples."""
    profiler = Profiler(graph.catalog, engine, 10.0)
    out = []
    for e in graph.edges:
        if e.origin != "inferred":
            continue
        for name, cols in ((e.table, e.columns), (e.ref_table, e.ref_columns)):
            table = graph.catalog.table(name)
            sample = (profiler.sample(table) or {}) if table is not None else {}
            for col in cols:
                column = table.column(col) if table is not None else None
                kind = non_key_class(column, sample.get(column.name)) if column is not None else None
                if kind:
                    out.append(f"[{graph.catalog.database}] {e}: {name}.{col} is a {kind} column")
    return out


class _SkippedForeignKeys(logging.Handler):
    """Counts the warnings for declared foreign keys that reference tables not in the database."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "skipped: table" in record.getMessage():
            self.count += 1


# ---------------------------------------------------------------------------------------------
# main


def _pct(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench joins", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-dir", type=Path, help="Spider layout: DIR/<db_id>/<db_id>.sqlite")
    parser.add_argument("--gold", type=Path, help="lines SQL<TAB>db_id")
    parser.add_argument("--schema", choices=["insurance"], help="a bundled schema with its own questions")
    parser.add_argument("--db", type=Path, help="one SQLite database, with --questions")
    parser.add_argument("--questions", type=Path, help='JSON list of {"question", "gold_sql"} for --db')
    parser.add_argument("--catalog", type=Path, help="catalog YAML overlay for --db")
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    parser.add_argument("--limit", type=int, default=0, help="only the first N gold lines")
    parser.add_argument("--no-profile", action="store_true", help="infer edges from names only")
    parser.add_argument("--large-tables", type=int, default=520)
    parser.add_argument("--large-queries", type=int, default=300)
    parser.add_argument("--show-misses", type=int, default=0, help="print N cases that are not covered")
    parser.add_argument(
        "--show-unhygienic", action="store_true", help="print inferred edges on non-key columns"
    )
    parser.add_argument(
        "--strip-keys",
        action="store_true",
        help="infer on copies without keys and score the edges against the declared foreign keys",
    )
    parser.add_argument(
        "--max-rows",
        type=int,
        default=0,
        help="with --strip-keys: keep the first N rows per table (and the rows they reference)",
    )
    parser.add_argument("--part", choices=PARTS, default="all", help="one fixed half of the databases")
    parser.add_argument(
        "--show-recovery", action="store_true", help="with --strip-keys: print missed and wrong edges"
    )
    args = parser.parse_args(argv)
    if (
        not args.schema
        and not (args.db_dir and (args.gold or args.questions or args.strip_keys))
        and not (args.db and args.questions)
    ):
        parser.error(
            "give --db-dir with --gold, --questions or --strip-keys, or --schema insurance, "
            "or --db and --questions"
        )
    # Spider's hand-written DDL trips SQLAlchemy's reflection warnings; they are not findings
    warnings.filterwarnings("ignore", category=sa.exc.SAWarning)
    skipped = _SkippedForeignKeys()
    logging.getLogger("core.catalog").addHandler(skipped)
    logging.getLogger("core.catalog").propagate = False

    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, catalog_yaml, cases_of in _databases(args, Path(tmp)):
            if not in_part(name, args.part):
                continue
            if not path.is_file():
                tally.counts["missing_db"] += len(cases_of)
                continue
            declared = None
            if args.strip_keys:
                declared = _declared(path, name)
                fks = [d.fk for d in declared]
                path = strip_keys(path, Path(tmp) / "stripped" / f"{name}.sqlite", args.max_rows, fks)
            engine = readonly_engine(f"sqlite:///{path.resolve()}")
            try:
                catalog = reflect(engine, name)
                if catalog_yaml is not None:
                    catalog = overlay(catalog, load_yaml(catalog_yaml.read_text()) or {})
                graph = score_database(
                    tally, catalog, None if args.no_profile else engine, cases_of, args.show_misses
                )
            finally:
                engine.dispose()
            if declared is not None:
                notes = score_recovery(declared, graph.edges, tally.recovery)
                tally.recovery_notes += [f"[{name}] {n}" for n in notes]

    large = synthetic_catalog(args.large_tables)
    large_graph = build_graph(large)
    graph_weights(large_graph)
    n_cols = sum(len(t.columns) for t in large.tables)
    large_times: list[float] = []
    large_wall: list[float] = []
    for tables in synthetic_queries(large_graph, args.large_queries):
        _, elapsed, wall = _timed(large_graph, tables, "")
        large_times.append(elapsed)
        large_wall.append(wall)

    c = tally.counts
    q = c["queries"] or 1
    result: dict[str, Any] = {
        "queries": c["queries"],
        "exact": round(c["exact"] / q, 4),
        "covered": round(c["covered"] / q, 4),
        "covered_instances": round(c["covered_instances"] / q, 4),
        "all_cases": c["cases"],
        "all_cases_covered_instances": round(c["cases_covered_instances"] / (c["cases"] or 1), 4),
        "self_join": c["self_join"],
        "self_join_covered": round(c["self_join_covered"] / (c["self_join"] or 1), 4),
        "self_join_covered_instances": round(c["self_join_covered_instances"] / (c["self_join"] or 1), 4),
        "baseline_exact": round(c["baseline_exact"] / q, 4),
        "baseline_covered": round(c["baseline_covered"] / q, 4),
        "patterns": {
            k: {
                "cases": tally.patterns[k]["cases"],
                "covered": round(tally.patterns[k]["covered"] / (tally.patterns[k]["cases"] or 1), 4),
                "baseline": round(tally.patterns[k]["baseline"] / (tally.patterns[k]["cases"] or 1), 4),
            }
            for k in PATTERNS
        },
        "ties": c["ties"],
        "covered_by_tie": c["covered_by_tie"],
        "inference": dict(sorted(tally.inference.items())),
        "inferred_on_non_key_columns": len(tally.unhygienic),
        "skipped_foreign_keys": skipped.count,
        "p50_ms": round(_pct(tally.times, 0.5), 3),
        "p95_ms": round(_pct(tally.times, 0.95), 3),
        "large_schema_p95_ms": round(_pct(large_times, 0.95), 3),
    }
    if args.strip_keys:
        result["recovery"] = recovery_figures(tally.recovery)
        result["part"] = args.part
    for m in tally.misses:
        print(m)
    if args.show_recovery:
        for line in sorted(tally.recovery_notes):
            print("RECOVERY", line)
    if args.show_unhygienic:
        for line in tally.unhygienic:
            print("UNHYGIENIC", line)
    _print_report(tally, result, large, large_graph, n_cols, large_times, large_wall)
    if args.strip_keys:
        _print_recovery(recovery_figures(tally.recovery), tally.recovery, args.part)
    if args.json:
        print(json.dumps(result))
    return 0


def _databases(
    args: argparse.Namespace, tmp: Path
) -> list[tuple[str, Path, Path | None, list[tuple[str, str, str]]]]:
    """(name, sqlite file, catalog YAML or None, [(gold sql, question, id)]) per database."""
    if args.schema == "insurance":
        from core.insurance_demo import CATALOG_PATH, build_insurance

        path = build_insurance(tmp / "insurance.sqlite")
        return [("insurance", path, CATALOG_PATH, _questions(INSURANCE_QUESTIONS))]
    if args.db and args.questions:
        return [(args.db.stem, args.db, args.catalog, _questions(args.questions))]
    if args.db_dir and args.questions:  # questions.json with a db_id each, as in ../shared/bench/defog
        grouped: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for i, q in enumerate(json.loads(args.questions.read_text())):
            grouped[q["db_id"]].append((q["gold_sql"], q.get("question", ""), q.get("id", str(i))))
        return [(db, args.db_dir / db / f"{db}.sqlite", None, grouped[db]) for db in sorted(grouped)]
    if args.gold is None:  # --strip-keys alone: every database of the folder, no gold queries
        return [
            (d.name, d / f"{d.name}.sqlite", None, []) for d in sorted(args.db_dir.iterdir()) if d.is_dir()
        ]
    by_db = read_gold(args.gold, args.limit)
    return [
        (db, args.db_dir / db / f"{db}.sqlite", None, [(sql, "", "") for sql in by_db[db]])
        for db in sorted(by_db)
    ]


def _declared(path: Path, name: str) -> list[Declared]:
    """The foreign keys the original database declares (the answer key for --strip-keys)."""
    engine = readonly_engine(f"sqlite:///{path.resolve()}")
    try:
        return declared_keys(reflect(engine, name), path)
    finally:
        engine.dispose()


def _print_recovery(figures: dict[str, float | int], counts: Counter[str], part: str) -> None:
    kinds = ", ".join(
        f"{k.removeprefix('declared ')} {v}" for k, v in sorted(counts.items()) if k.startswith("declared ")
    )
    print(
        f"stripped keys ({part}): {figures['declared']} declared foreign keys ({kinds}); "
        f"inferred {figures['inferred']}: right {figures['right']}, reversed {figures['reversed']}, "
        f"undeclared {figures['undeclared']}"
    )
    print(
        f"  precision {figures['precision']:.3f} (unordered {figures['precision_unordered']:.3f}); "
        f"recall {figures['recall']:.3f}, recoverable {figures['recall_recoverable']:.3f}"
    )


def _questions(path: Path) -> list[tuple[str, str, str]]:
    items = json.loads(path.read_text())
    return [(q["gold_sql"], q.get("question", ""), q.get("id", str(i))) for i, q in enumerate(items)]


def _print_report(
    tally: Tally,
    result: Mapping[str, Any],
    large: Catalog,
    large_graph: RelationshipGraph,
    n_cols: int,
    large_times: list[float],
    large_wall: list[float],
) -> None:
    c = tally.counts
    q = c["queries"] or 1
    build = tally.build_ms
    print(
        f"databases: {len(build)}; graph build p50 {_pct(build, 0.5):.1f} ms, max {max(build or [0]):.1f} ms"
    )
    print(
        f"cases: {c['queries']} multi-table joins (+{c['self_join']} self-joins; "
        f"{c['unknown_table']} naming unknown tables)"
    )
    print(
        f"views:    exact {result['exact']:.3f}  covered {result['covered']:.3f}  "
        f"covered (instance level) {result['covered_instances']:.3f}"
    )
    print(
        f"baseline: exact {result['baseline_exact']:.3f}  covered {c['baseline_covered'] / q:.3f}"
        "  (networkx approximate Steiner tree, declared foreign keys only)"
    )
    print(
        f"self-joins (role-playing): {c['self_join']} cases, covered {c['self_join_covered']} "
        f"(set level), {c['self_join_covered_instances']} (instance level)"
    )
    print(
        f"all cases, instance level: {c['cases_covered_instances']} of {c['cases']} covered "
        f"({result['all_cases_covered_instances']:.3f}); {c['ties']} views name a tie, "
        f"{c['covered_by_tie']} covered by the tie's other reading"
    )
    for k in PATTERNS:
        t = tally.patterns[k]
        if t["cases"]:
            print(
                f"  pattern {k:<14} {t['cases']:>5} cases, covered {t['covered'] / t['cases']:.3f}, "
                f"baseline {t['baseline'] / t['cases']:.3f}"
            )
    detected = ", ".join(
        f"{k.removeprefix('detected ')} {c[k]}" for k in sorted(c) if k.startswith("detected ")
    )
    print(f"patterns detected: {detected}; shared-key edges {c['shared_key_edges']}")
    inf = tally.inference
    proposed = inf["proposed by name"] + inf["proposed by values"]
    kept = inf["kept by name"] + inf["kept by values"]
    dropped = ", ".join(
        f"{k.removeprefix('dropped: ')} {v}" for k, v in sorted(inf.items()) if k.startswith("dropped") and v
    )
    print(f"inference: proposed {proposed}, kept {kept}; dropped: {dropped or 'none'}")
    directions = ", ".join(
        f"{k.removeprefix('direction ')} {v}" for k, v in sorted(inf.items()) if k.startswith("direction by")
    )
    chosen = ", ".join(
        f"{k.removeprefix('key chosen ')} {v}" for k, v in sorted(inf.items()) if k.startswith("key chosen")
    )
    print(
        f"  directions of key-to-key edges: {directions or 'none'}; flipped against the order met "
        f"{inf['direction flipped']}; key chosen among several: {chosen or 'none'}"
    )
    print(
        f"inferred edges on date/flag/amount/free-text columns: {len(tally.unhygienic)}; "
        f"declared foreign keys to missing tables skipped: {result['skipped_foreign_keys']}"
    )
    print(
        f"synthesis CPU time: p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, max {max(tally.times or [0]):.2f} ms"
        f" (wall clock p50 {_pct(tally.wall_times, 0.5):.3f} ms, p95 {_pct(tally.wall_times, 0.95):.3f} ms)"
    )
    print(
        f"large schema: {len(large.tables)} tables, {n_cols} columns, {len(large_graph.edges)} edges; "
        f"graph {large_graph.stats.get('build_ms')} ms; synthesis CPU p50 {_pct(large_times, 0.5):.2f} ms, "
        f"p95 {result['large_schema_p95_ms']} ms (wall p95 {_pct(large_wall, 0.95):.2f} ms) "
        f"over {len(large_times)} table sets"
    )


def _timed(graph: RelationshipGraph, tables: list[str], question: str) -> tuple[View, float, float]:
    """(view, CPU ms, wall ms): CPU time is what the synthesis costs; on a shared machine the wall
    clock also counts the time other processes held the CPU."""
    cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
    view = synthesize_view(graph, tables, question=question)
    return view, (time.thread_time_ns() - cpu) / 1e6, (time.perf_counter_ns() - wall) / 1e6


def _describe_miss(case: Case, view: View) -> str:
    gold = sorted(" = ".join(f"{t}.{c}" for t, c in sorted(p)) for p in case.edges)
    got = sorted(" = ".join(f"{t}.{c}" for t, c in sorted(p)) for p in view.join_edges())
    where = sorted(f"{a}.{c} = '{v}'" for a, fs in case.filters.items() for c, v in fs)
    head = f"MISS [{case.db}]" + (f" {case.qid}: {case.question}" if case.question else "")
    return (
        f"{head} {case.sql}\n  gold: {gold}\n  gold filters: {where}\n  view: {got}\n"
        f"  view filters: {sorted(view.join_filters())}\n  tables: {view.tables}\n"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
