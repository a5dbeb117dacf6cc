"""Linking and synthesis at warehouse size: the per-question stages before the SQL writer, on the
demo schema and on the demo buried among 10,000 more tables.

    python -m core.bench linking [--tables 10000] [--columns 20] [--rounds 5] [--json]

Why: reflecting a 10,000-table catalog fast (`core.bench reflect`) is no use if every question
then walks all of it. This measures, per question of the built-in demo set (core/bench/ask.py
DEMO_QUESTIONS), the stages the LLM pipeline runs before it calls the writer (core/pipeline.py),
with no LLM (the linking call is a stub that answers at once, so only Askbase's own time counts):

- *retrieve*: the question's words against the keyword dictionary, the value index and the
  descriptions (core/retrieve.py);
- *scope*: whole schema or recall-first pruning, with the linking and join paths (core/scope.py,
  core/link.py);
- *examples*: the example rows of the scope's tables, read from the database on a table's first
  sight and remembered after (core/schema_text.py `read_examples`): the database's work, not
  Askbase's, timed apart so that synthesis is Askbase's own time; the tables read per question are
  counted (`example_reads`);
- *synthesis*: the join recipe, value hints, the schema text of the scope, and the rendered
  writer prompt (core/view.py, core/hints.py, core/schema_text.py, core/generate.py).

Baseline, in the same run: the same stages on the demo alone (the DuckDB copy of the demo, a
demo-size schema). Wide: a DuckDB file holding the demo's tables and `--tables` generated tables
of `--columns` columns (named from a business vocabulary, some named like the demo's, with
`*_id` columns the graph can join on), kept under `<var>/bench/linking/`. Each database's first
question (building its dictionary, graph and token sizes once per catalog) is reported apart;
p50/p95 are over `--rounds` rounds of every question after it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core import prompts
from core.bench.ask import DEMO_QUESTIONS
from core.database import Database
from core.demo import CATALOG_PATH, demo_duckdb_settings, ensure_demo_duckdb
from core.demo_file import build_lock
from core.generate import Context, _common
from core.hints import hints_text, value_hints
from core.link import LinkReply, forget_join_paths
from core.llm import LLM, M
from core.retrieve import guess_keywords, retrieve
from core.schema_text import ASKBASE, read_examples, schema_text
from core.scope import restricted_graph, scope
from core.settings import DatabaseSettings, EngineSettings, LLMSettings, load_settings
from core.understand import Understanding
from core.values import build_index, index_path
from core.view import recipe_text, recipe_view

STAGES = ("retrieve", "scope", "examples", "synthesis")
WORDS = [
    "client",
    "account",
    "order",
    "invoice",
    "payment",
    "customer",
    "product",
    "region",
    "store",
    "sale",
    "refund",
    "shipment",
    "campaign",
    "lead",
    "ticket",
    "session",
    "event",
    "user",
    "device",
    "plan",
    "usage",
    "host",
    "pool",
    "location",
    "datacenter",
    "contract",
    "vendor",
    "employee",
    "budget",
    "ledger",
    "balance",
    "forecast",
    "inventory",
    "warehouse",
    "channel",
    "promo",
]
SUFFIXES = ("daily", "hist", "stg", "agg", "snapshot", "raw", "dim", "fact", "v2", "archive")


class StubLLM(LLM):
    """Answers the linking call at once with no table (so linking keeps what the words found):
    the benchmark times Askbase's side, not a model's."""

    def __init__(self) -> None:
        super().__init__(LLMSettings(api_key="bench"), client=object())  # type: ignore[arg-type]

    def json(self, task: str, messages: list[dict[str, str]], model_cls: type[M]) -> M:
        assert model_cls is LinkReply, task
        return model_cls.model_validate({"tables": []})


@dataclass(frozen=True)
class Timings:
    """Milliseconds per stage of every timed question, and of the first question; the tables
    whose example rows each timed question read from the database."""

    database: str
    tables: int
    first_ms: dict[str, float]
    per_stage: dict[str, tuple[float, ...]]
    reads: tuple[int, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "tables": self.tables,
            "first_question_ms": {k: round(v, 1) for k, v in self.first_ms.items()},
            "p50_ms": {k: round(percentile(v, 50), 2) for k, v in self.per_stage.items()},
            "p95_ms": {k: round(percentile(v, 95), 2) for k, v in self.per_stage.items()},
            "questions_timed": len(next(iter(self.per_stage.values()))),
            "example_reads": {
                "tables": sum(self.reads),
                "questions": sum(1 for n in self.reads if n),
                "most": max(self.reads, default=0),
            },
        }


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile, nearest rank (p95 of 100 samples is the 95th smallest)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.499999)))
    return ordered[rank - 1]


def generate_wide(path: Path, demo: Path, tables: int, columns: int) -> float:
    """The demo's DuckDB file plus `tables` generated tables (when missing); seconds it took."""
    import duckdb

    with build_lock(path):
        if path.is_file():
            return 0.0
        start = time.perf_counter()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        shutil.copyfile(demo, partial)
        conn = duckdb.connect(str(partial))
        conn.execute("BEGIN")
        for i in range(tables):
            conn.execute(_filler_ddl(i, columns))
        conn.execute("COMMIT")
        conn.close()
        partial.replace(path)
        return time.perf_counter() - start


FILLER_KINDS = (("id", "BIGINT"), ("name", "VARCHAR"), ("amount", "DOUBLE"), ("status", "VARCHAR"))


def filler_table(i: int, columns: int) -> tuple[str, list[tuple[str, str]]]:
    """Table i of the generated part: a business-sounding name, and its columns (name, SQL type):
    an id, then `*_id` keys, names, amounts and statuses in turn."""
    a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
    name = f"{a}_{b}_{SUFFIXES[i % len(SUFFIXES)]}_{i:05d}"
    cols = [("id", "BIGINT")]
    for j in range(1, columns):
        kind, type_ = FILLER_KINDS[j % 4]
        cols.append((f"{WORDS[(i + j * 5) % len(WORDS)]}_{kind}_{j:02d}", type_))
    return name, cols


def _filler_ddl(i: int, columns: int) -> str:
    name, cols = filler_table(i, columns)
    body = ", ".join(f"{c} {t}{' PRIMARY KEY' if c == 'id' else ''}" for c, t in cols)
    return f"CREATE TABLE {name} ({body})"


def one_question(
    db: Database, question: str, settings: EngineSettings, llm: LLM
) -> tuple[dict[str, float], int]:
    """Milliseconds of each stage for one question, as core/pipeline.py runs them in LLM mode, and
    how many tables' example rows it read from the database."""
    out: dict[str, float] = {}
    forget_join_paths(restricted_graph(db))  # within a question only: rounds repeat the questions
    forget_join_paths(db.graph)
    start = time.perf_counter()
    understanding = Understanding(question=question, keywords=guess_keywords(question))
    retrieval = retrieve(question, understanding.keywords, db, every_object_as_value=True)
    out["retrieve"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    scoped = scope(db, retrieval, understanding, settings, llm)
    out["scope"] = (time.perf_counter() - start) * 1000
    style = replace(ASKBASE, sample_rows=settings.sample_rows)
    start = time.perf_counter()
    reads = read_examples(db, settings, style, None if scoped.whole else scoped.tables)
    out["examples"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    recipe = recipe_view(db, scoped.named, question, settings.recipe_max_tables)
    hints = value_hints(
        db,
        retrieval,
        understanding.keywords,
        settings,
        named=scoped.named,
        visible=scoped.tables,
        question=question,
    )
    described = scoped.described | {(h.table.lower(), h.column.lower()) for h in hints.hints}
    schema = schema_text(db, settings, style, None if scoped.whole else scoped.tables, described)
    catalog = db.catalog
    ctx = Context(
        schema=schema,
        recipe=recipe_text(recipe, catalog, catalog.dialect) if recipe is not None else "",
        recipe_name=recipe.name if recipe is not None else "",
        values=hints_text(hints),
        dialect=catalog.dialect,
    )
    prompts.render("generate", **_common(question, ctx), examples="", history="", standalone="")
    out["synthesis"] = (time.perf_counter() - start) * 1000
    return out, reads


def measure(db: Database, questions: Sequence[str], rounds: int, settings: EngineSettings) -> Timings:
    """Run every question once untimed-as-steady (the first one, caches cold), then `rounds` times."""
    llm = StubLLM()
    first, _ = one_question(db, questions[0], settings, llm)
    per_stage: dict[str, list[float]] = {s: [] for s in STAGES}
    reads: list[int] = []
    for _ in range(rounds):
        for q in questions:
            timed, read = one_question(db, q, settings, llm)
            for stage, ms in timed.items():
                per_stage[stage].append(ms)
            reads.append(read)
    return Timings(
        database=db.name,
        tables=len(db.catalog.tables),
        first_ms=first,
        per_stage={k: tuple(v) for k, v in per_stage.items()},
        reads=tuple(reads),
    )


def _with_index(db: Database, source: Database) -> None:
    """Give `db` the value index built on `source` (the demo's values are the wide file's values:
    its generated tables are empty), so neither falls back to searching the database directly."""
    target = index_path(db)
    if not target.exists():
        shutil.copytree(index_path(source), target)


def run(
    tables: int, columns: int, rounds: int, profile: Callable[[Callable[[], Any]], Any] | None
) -> dict[str, Any]:
    var = Path(load_settings().var_dir)
    demo_file = ensure_demo_duckdb(var)
    wide_file = var / "bench" / "linking" / f"demo-plus-{tables}x{columns}.duckdb"
    made = generate_wide(wide_file, demo_file, tables, columns)
    work = Path(tempfile.mkdtemp(prefix="askbase-linking-"))
    settings = load_settings().engine
    questions = list(dict.fromkeys(q[1] for q in DEMO_QUESTIONS))
    try:
        small = Database(name="demo", config=demo_duckdb_settings(var), var_dir=work)
        build_index(small)
        config = DatabaseSettings(url=f"duckdb:///{wide_file}", catalog=str(CATALOG_PATH))
        wide = Database(name="wide", config=config, var_dir=work)
        _with_index(wide, small)
        start = time.perf_counter()
        wide.catalog  # noqa: B018 — reflection is core.bench reflect's business, not this one's
        reflect_s = time.perf_counter() - start
        base = measure(small, questions, rounds, settings)
        big = measure(wide, questions, rounds, settings)
        if profile is not None:  # caches warm: what every question after the first costs
            profile(lambda: measure(wide, questions, 1, settings))
        small.dispose()
        wide.dispose()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "questions": len(questions),
        "rounds": rounds,
        "generated_s": round(made, 1),
        "wide_reflect_s": round(reflect_s, 2),
        "baseline": base.summary(),
        "wide": big.summary(),
    }


def _report(figures: dict[str, Any], out: Any) -> None:
    base, wide = figures["baseline"], figures["wide"]
    print(
        f"{figures['questions']} demo questions x {figures['rounds']} rounds; no LLM (the linking call is a stub)",
        file=out,
    )
    print(f"{'stage':10} {'demo p50':>9} {'demo p95':>9} {'wide p50':>9} {'wide p95':>9}  (ms)", file=out)
    for stage in STAGES:
        print(
            f"{stage:10} {base['p50_ms'][stage]:9.2f} {base['p95_ms'][stage]:9.2f} "
            f"{wide['p50_ms'][stage]:9.2f} {wide['p95_ms'][stage]:9.2f}",
            file=out,
        )
    print(
        f"first question (caches cold), ms: demo {base['first_question_ms']}, wide {wide['first_question_ms']}",
        file=out,
    )
    for name, fig in (("demo", base), ("wide", wide)):
        r = fig["example_reads"]
        print(
            f"{name}: example rows read from the database for {r['tables']} tables, in {r['questions']} of"
            f" {fig['questions_timed']} timed questions (at most {r['most']} in one)",
            file=out,
        )
    print(f"demo: {base['tables']} tables; wide: {wide['tables']:,} tables", file=out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench linking", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--tables", type=int, default=10_000, help="tables generated beside the demo's")
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds of every question")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile one more round on the wide schema (caches warm)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    if args.tables < 1 or args.columns < 4 or args.rounds < 1:
        parser.error("--tables and --rounds need at least 1, --columns at least 4")
    profile = _profiler if args.profile else None
    figures = run(args.tables, args.columns, args.rounds, profile)
    _report(figures, sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(figures))
    return 0


def _profiler(fn: Callable[[], Any]) -> None:
    """Print where one round on the wide schema spends its time (the 25 costliest functions)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.runcall(fn)
    pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
