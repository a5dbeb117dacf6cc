"""Keyword mode's join rules against Spider's gold joins: what do they decline, and is it right to?

    python -m core.bench keyword_joins --db-dir DIR --gold FILE [--limit N] [--json]

Keyword mode declines a reading whose joins are unsound or not unique (core/keyword/confidence.py:
many rows to many, two tables linked only through a third the question does not name, a table in
several roles the words cannot tell apart, another join tree as plausible). Spider's gold SQL has
no questions, but it says which joins a person meant for a set of tables. For every SELECT of a
gold query that joins ≥ 2 different tables (core.bench.joins.gold_cases), view synthesis gets the
gold's tables — as keyword mode would ask for them — and the rules judge the view, reading every
gold table as named by the question and read by the query (the most lenient reading a question
could give; relation words are not known):

- agrees:   the view's joins are the gold's (or cover them: core.bench.joins.covered);
- differs:  they are not — an answer over this view would have joined otherwise than the gold;
- unjoinable: no view joins all the gold's tables (keyword mode declined these before, too).

Before the rules every view was answered over. A decline among `agrees` is an answer given up
that the joins would have got right (the regression to watch); a decline among `differs` is a
wrong join no longer answered over.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.bench.join_gold import covered, gold_cases, read_gold
from core.catalog import reflect
from core.connect import readonly_engine
from core.graph import build_graph
from core.joins import synthesize_view
from core.keyword.confidence import JoinNeeds, join_doubt


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench keyword_joins", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--db-dir", required=True, type=Path)
    parser.add_argument("--gold", required=True, type=Path)
    parser.add_argument("--limit", type=int, default=0, help="only the first N gold lines")
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    parser.add_argument("--show", type=int, default=0, help="print N declined cases of each kind")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=sa.exc.SAWarning)  # Spider's hand-written DDL

    by_db = read_gold(args.gold, args.limit)

    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    shown: dict[str, list[str]] = defaultdict(list)
    for db in sorted(by_db):
        path = args.db_dir / db / f"{db}.sqlite"
        if not path.is_file():
            continue
        engine = readonly_engine(f"sqlite:///{path.resolve()}")
        try:
            catalog = reflect(engine, db)
            graph = build_graph(catalog, engine)
        finally:
            engine.dispose()
        seen: set[tuple[str, ...]] = set()
        for sql in by_db[db]:
            for case in gold_cases(sql, db, catalog):
                if case.self_join or any(catalog.table(t) is None for t in case.tables):
                    continue
                key = (db, *sorted(case.tables), *sorted(str(sorted(e)) for e in case.edges))
                if key in seen:
                    continue  # the same join asked again: judged once
                seen.add(key)
                view = synthesize_view(graph, list(case.tables))
                if view.dropped:
                    counts["unjoinable"] += 1  # keyword mode never answered over these
                    continue
                tables = frozenset(t.lower() for t in case.tables)
                doubt = join_doubt(view, JoinNeeds(read=tables, named=tables), graph)
                agrees = covered(case, view.join_edges(), {t.lower() for t in view.tables}, graph)
                kind = "agrees" if agrees else "differs"
                counts[f"{kind}"] += 1
                if doubt:
                    counts[f"{kind}_declined"] += 1
                    reasons[f"{kind}: {_kind_of(doubt)}"] += 1
                    if len(shown[kind]) < args.show:
                        shown[kind].append(f"{db}: {sql}\n    {doubt}")
    summary = {
        "cases": counts["agrees"] + counts["differs"],
        "agrees": counts["agrees"],
        "agrees_declined": counts["agrees_declined"],
        "differs": counts["differs"],
        "differs_declined": counts["differs_declined"],
        "unjoinable": counts["unjoinable"],
        "reasons": dict(sorted(reasons.items())),
    }
    print(report(summary), file=sys.stderr if args.json else sys.stdout)
    for kind, lines in shown.items():
        print(f"\ndeclined where the view {kind} with the gold:", *lines, sep="\n", file=sys.stderr)
    if args.json:
        print(json.dumps(summary))
    return 0


def _kind_of(doubt: str) -> str:
    for marker, kind in (
        ("many rows to many", "many to many"),
        ("roles", "several roles"),
        ("does not mention", "through an unnamed table"),
        ("can be joined through", "another join tree"),
        ("as well as through", "another key between the same parts"),
        ("two equally good ways", "a tie in view synthesis"),
        ("which role", "a role table, no role named"),
        ("which kind of", "a typed fact, no type named"),
    ):
        if marker in doubt:
            return kind
    return "other"


def report(s: dict[str, Any]) -> str:
    def share(part: int, whole: int) -> str:
        return f"{part / whole:.1%}" if whole else "-"

    lines = [
        "keyword mode's join rules on gold joins (distinct join cases, self-joins left out)",
        f"{'view vs gold':14} {'cases':>6} {'declined':>8} {'share':>7}   before these rules: all answered over",
        f"{'agrees':14} {s['agrees']:>6} {s['agrees_declined']:>8} "
        f"{share(s['agrees_declined'], s['agrees']):>7}   (right joins given up)",
        f"{'differs':14} {s['differs']:>6} {s['differs_declined']:>8} "
        f"{share(s['differs_declined'], s['differs']):>7}   (wrong joins no longer answered over)",
    ]
    lines.append(
        f"{'unjoinable':14} {s['unjoinable']:>6}   (no view joins all the gold's tables: declined before and after)"
    )
    lines += [f"  {k}: {v}" for k, v in s["reasons"].items()]
    return "\n".join(lines)
