"""Whole-question benchmark: execution accuracy of keyword mode or of the LLM pipeline.

    python -m core.bench ask --dataset DIR|demo [--mode keyword|llm] [--limit N] [--json]
                             [--db DB_ID] [--category NAME] [--details FILE]

DIR holds `questions.json` (a list of {"db_id", "question", "gold_sql"} and optionally
"category", "instructions", "gold_alternatives") and `database/<db_id>/<db_id>.sqlite`.
`--dataset demo` runs the built-in questions on the bundled demo database (DEMO_QUESTIONS).

A question is *correct* when the rows of the engine's query equal the rows of the gold query or
of any listed alternative: compared as a multiset of rows, in order only when the gold query has
a top-level ORDER BY (rows that tie on the gold's ORDER BY keys may come in any order), with
the columns matched up whatever their order (values compared with 10 significant digits).
*Answered* means the engine returned rows rather than declining, asking back or failing;
`wrong_rate` is the share of answered questions that are not correct — the number that matters
for keyword mode, whose job is to decline rather than guess.

keyword mode runs the engine with no LLM. llm mode uses the configured endpoint (OPENAI_API_KEY,
OPENAI_BASE_URL, ASKBASE_LLM_MODEL) with the keyword fallback off, so its figures are the
LLM pipeline's own; the dataset's `instructions` are appended to the question in llm mode only.
Latency is wall-clock time per question through `core.pipeline.answer`; the gold queries' own
execution time, measured in the same run on the same files, is printed as the baseline.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from core.bench import calibration
from core.settings import load_settings

Row = tuple[Any, ...]


@dataclass(frozen=True)
class Question:
    db_id: str
    question: str
    gold_sql: str
    category: str = ""
    instructions: str = ""
    alternatives: tuple[str, ...] = ()


@dataclass
class Gold:
    rows: list[Row]
    ordered: bool
    tie_keys: list[int] | None  # output columns of the ORDER BY, when all are known
    ms: float = 0.0


@dataclass
class Result:
    q: Question
    status: str
    correct: bool
    ms: float
    engine_ms: float
    llm_calls: int
    tokens: int
    sql: str = ""
    error: str = ""
    interpretation: str = ""
    gold_error: str = ""
    confidence: float | None = None  # keyword mode's, for its reading (core/bench/calibration.py)


@dataclass
class Tally:
    questions: int = 0
    answered: int = 0
    correct: int = 0
    abstained: int = 0
    clarified: int = 0
    failed: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, r: Result) -> None:
        self.questions += 1
        self.ms.append(r.ms)
        if r.status == "answer":
            self.answered += 1
            self.correct += int(r.correct)
        elif r.status == "clarify":
            self.clarified += 1
        elif r.status == "abstain":
            self.abstained += 1
        else:
            self.failed += 1


# ---------------------------------------------------------------------------------------------
# the dataset and the gold


# `--dataset demo`: the bundled demo database, with questions of every shape keyword mode answers
# and a few it must decline or ask back about; gold SQL written by hand.
DEMO = "demo"
DEMO_QUESTIONS: list[tuple[str, str, str]] = [
    ("count", "How many clients are there?", "SELECT COUNT(*) FROM client"),
    (
        "filter",
        "How many active clients are in zurich?",
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
        "WHERE client.status = 'ACT' AND location.city = 'Zürich'",
    ),
    ("filter", "How many churned clients?", "SELECT COUNT(*) FROM client WHERE status = 'CHN'"),
    (
        "filter",
        "list the clients in munchen",
        "SELECT client.name FROM client JOIN location ON client.loc_id = location.id WHERE location.city = 'München'",
    ),
    (
        "filter",
        "list the resource pools in DC-07",
        "SELECT resource_pool.name FROM resource_pool JOIN datacenter ON resource_pool.dc_id = datacenter.id "
        "WHERE datacenter.code = 'DC-07'",
    ),
    (
        "filter",
        "How many hosts have more than 64 cpu cores?",
        "SELECT COUNT(*) FROM compute WHERE cpu_cores > 64",
    ),
    (
        "group_by",
        "How many clients per country?",
        "SELECT location.country, COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
        "GROUP BY location.country",
    ),
    (
        "group_by",
        "total cost per segment",
        "SELECT client.segment, SUM(usage.cost) FROM usage JOIN client ON usage.client_id = client.id "
        "GROUP BY client.segment",
    ),
    (
        "group_by",
        "average amount by currency",
        "SELECT currency, AVG(amount) FROM payment_amount GROUP BY currency",
    ),
    (
        "group_by",
        "number of hosts per datacenter",
        "SELECT datacenter.name, COUNT(*) FROM compute JOIN datacenter ON compute.dc_id = datacenter.id "
        "GROUP BY datacenter.id",
    ),
    (
        "top_n",
        "top 5 clients by cpu hours",
        "SELECT client.name, SUM(usage.cpu_hours) AS h FROM usage JOIN client ON usage.client_id = client.id "
        "GROUP BY client.id ORDER BY h DESC LIMIT 5",
    ),
    (
        "top_n",
        "Which 3 clients have the highest total usage cost?",
        "SELECT client.name, SUM(usage.cost) AS c FROM usage JOIN client ON usage.client_id = client.id "
        "GROUP BY client.id ORDER BY c DESC LIMIT 3",
    ),
    (
        "top_n",
        "Which datacenter opened most recently?",
        "SELECT name, opened_on FROM datacenter ORDER BY opened_on DESC LIMIT 1",
    ),
    (
        "date",
        "How many payments failed in 2025?",
        "SELECT COUNT(*) FROM payment WHERE status = 'failed' AND paid_on >= '2025-01-01' AND paid_on < '2026-01-01'",
    ),
    (
        "date",
        "How many enterprise clients signed up in 2024?",
        "SELECT COUNT(*) FROM client WHERE segment = 'enterprise' "
        "AND signup_date >= '2024-01-01' AND signup_date < '2025-01-01'",
    ),
    (
        "date",
        "Total payment amount per month in 2025",
        "SELECT strftime('%Y-%m', p.paid_on), SUM(a.amount) FROM payment p JOIN payment_amount a "
        "ON a.payment_id = p.id WHERE p.paid_on >= '2025-01-01' AND p.paid_on < '2026-01-01' "
        "GROUP BY 1 ORDER BY 1",
    ),
    (
        "date",
        "How many clients signed up per month in 2024?",
        "SELECT strftime('%Y-%m', signup_date), COUNT(*) FROM client "
        "WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01' GROUP BY 1 ORDER BY 1",
    ),
    (
        "date",
        "number of payments per quarter",
        "SELECT strftime('%Y', paid_on) || '-Q' || ((CAST(strftime('%m', paid_on) AS INTEGER) + 2) / 3), "
        "COUNT(*) FROM payment GROUP BY 1 ORDER BY 1",
    ),
    (
        "date",
        "total amount per currency in 2025",
        "SELECT a.currency, SUM(a.amount) FROM payment_amount a JOIN payment p ON a.payment_id = p.id "
        "WHERE p.paid_on >= '2025-01-01' AND p.paid_on < '2026-01-01' GROUP BY a.currency",
    ),
    (
        "date",
        "How many payments in Q1 2025?",
        "SELECT COUNT(*) FROM payment WHERE paid_on >= '2025-01-01' AND paid_on < '2025-04-01'",
    ),
    (
        "date",
        "Which month had the most payments?",
        "SELECT strftime('%Y-%m', paid_on) AS m, COUNT(*) AS n FROM payment GROUP BY m ORDER BY n DESC LIMIT 1",
    ),
    (
        "group_by",
        "total payment amount per client segment",
        "SELECT c.segment, SUM(a.amount) FROM payment_amount a JOIN payment p ON a.payment_id = p.id "
        "JOIN client c ON p.client_id = c.id GROUP BY c.segment",
    ),
    (
        "clarify",
        "number of clients per year",
        "SELECT strftime('%Y', signup_date), COUNT(*) FROM client GROUP BY 1 ORDER BY 1",
    ),
    (
        "decline",
        "What is the ratio of active to churned clients?",
        "SELECT CAST(SUM(status = 'ACT') AS REAL) / SUM(status = 'CHN') FROM client",
    ),
    ("decline", "Which clients are not active?", "SELECT name FROM client WHERE status <> 'ACT'"),
    (
        "clarify",
        "How many clients are in Singapore?",
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.city = 'Singapore'",
    ),
]


def demo_questions() -> list[Question]:
    return [Question(db_id=DEMO, question=q, gold_sql=sql, category=cat) for cat, q, sql in DEMO_QUESTIONS]


def load_questions(dataset: Path) -> list[Question]:
    raw = json.loads((dataset / "questions.json").read_text())
    out = []
    for item in raw:
        alts = tuple(a for a in item.get("gold_alternatives") or () if a and a != item["gold_sql"])
        out.append(
            Question(
                db_id=item["db_id"],
                question=item["question"],
                gold_sql=item["gold_sql"],
                category=item.get("category") or "",
                instructions=(item.get("instructions") or "").strip(),
                alternatives=alts,
            )
        )
    return out


def db_path(dataset: Path, db_id: str) -> Path:
    if str(dataset) == DEMO:
        from core.demo import ensure_demo
        from core.settings import load_settings

        return ensure_demo(Path(load_settings().var_dir))
    return dataset / "database" / db_id / f"{db_id}.sqlite"


def run_gold(path: Path, sql: str) -> Gold:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        start = time.perf_counter()
        rows = [tuple(r) for r in conn.execute(sql).fetchall()]
        ms = (time.perf_counter() - start) * 1000
    finally:
        conn.close()
    ordered, keys = order_keys(sql)
    return Gold(rows=rows, ordered=ordered, tie_keys=keys, ms=ms)


def order_keys(sql: str) -> tuple[bool, list[int] | None]:
    """Does the query order its result, and by which output columns (None when not all known)?"""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return "order by" in sql.lower(), None
    order = tree.args.get("order")
    if order is None:
        return False, None
    select = tree if isinstance(tree, exp.Select) else None
    projections = select.expressions if select is not None else []
    keys: list[int] = []
    for o in order.expressions:
        e = o.this
        idx = _output_index(e, projections)
        if idx is None:
            return True, None
        keys.append(idx)
    return True, keys


def _output_index(e: exp.Expression, projections: Sequence[exp.Expression]) -> int | None:
    if isinstance(e, exp.Literal) and e.is_int:
        i = int(e.this) - 1
        return i if 0 <= i < len(projections) else None
    text = e.sql(dialect="sqlite").lower()
    for i, p in enumerate(projections):
        inner = p.this if isinstance(p, exp.Alias) else p
        if inner.sql(dialect="sqlite").lower() == text:
            return i
        if isinstance(e, exp.Column) and not e.table and p.alias_or_name.lower() == e.name.lower():
            return i
        if (
            isinstance(e, exp.Column)
            and isinstance(inner, exp.Column)
            and inner.name.lower() == e.name.lower()
        ):
            return i
    return None


# ---------------------------------------------------------------------------------------------
# comparing results


def norm(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float | Decimal):
        f = float(v)
        return float(f"{f:.10g}")
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def same_result(pred: Sequence[Row], gold: Gold) -> bool:
    """Rows equal as a multiset (or in order when the gold orders), columns in any order."""
    g = [tuple(norm(v) for v in r) for r in gold.rows]
    p = [tuple(norm(v) for v in r) for r in pred]
    if len(g) != len(p):
        return False
    if not g:
        return True
    width = len(g[0])
    if any(len(r) != width for r in p):
        return False
    sig_g = [Counter(r[i] for r in g) for i in range(width)]
    sig_p = [Counter(r[i] for r in p) for i in range(width)]
    options = [[j for j in range(width) if sig_p[j] == sig_g[i]] for i in range(width)]
    if any(not o for o in options):
        return False

    def assignments(i: int, used: set[int]) -> Any:
        if i == width:
            yield []
            return
        for j in options[i]:
            if j not in used:
                for rest in assignments(i + 1, used | {j}):
                    yield [j, *rest]

    for perm in assignments(0, set()):
        rows = [tuple(r[j] for j in perm) for r in p]
        if _rows_equal(rows, g, gold):
            return True
    return False


def _rows_equal(p: list[Row], g: list[Row], gold: Gold) -> bool:
    if not gold.ordered:
        return Counter(p) == Counter(g)
    if gold.tie_keys is None:
        return p == g
    keys = gold.tie_keys
    start = 0
    for end in range(1, len(g) + 1):
        if end == len(g) or tuple(g[end][k] for k in keys) != tuple(g[start][k] for k in keys):
            if Counter(p[start:end]) != Counter(g[start:end]):
                return False
            start = end
    return True


# ---------------------------------------------------------------------------------------------
# running


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return round(ordered[k], 1)


def run(questions: Sequence[Question], dataset: Path, mode: str, progress: bool = True) -> list[Result]:
    from core.database import Databases
    from core.llm import LLM
    from core.pipeline import Request, answer
    from core.settings import load_settings

    settings = load_settings()
    # no confidence threshold here: calibration.thresholded applies it afterwards, so the
    # readings below it are still checked for the reliability table
    engine = settings.engine.model_copy(
        update={
            "default_limit": 1_000_000,
            "row_cap": 1_000_000,
            "fallback_to_keyword": False,
            "keyword_min_confidence": 0.0,
        }
    )
    llm = None
    if mode == "llm":
        if not settings.llm.configured:
            raise SystemExit("llm mode needs OPENAI_API_KEY (and OPENAI_BASE_URL for another endpoint)")
        llm = LLM(settings.llm)
    databases = Databases(settings)
    gold_cache: dict[tuple[str, str], Gold | str] = {}
    results: list[Result] = []
    try:
        for n, q in enumerate(questions, 1):
            path = db_path(dataset, q.db_id)
            db = databases.get(DEMO if str(dataset) == DEMO else str(path))  # the demo with its catalog
            text = (
                q.question if mode == "keyword" or not q.instructions else f"{q.question}\n{q.instructions}"
            )
            start = time.perf_counter()
            outcome = answer(db, Request(text), engine, llm)
            ms = (time.perf_counter() - start) * 1000
            status = outcome.status
            if status == "error" and outcome.error_kind == "keyword_abstain":
                status = "abstain"
            correct, gold_error = False, ""
            if status == "answer":
                for sql in (q.gold_sql, *q.alternatives):
                    key = (q.db_id, sql)
                    if key not in gold_cache:
                        try:
                            gold_cache[key] = run_gold(path, sql)
                        except sqlite3.Error as exc:
                            gold_cache[key] = str(exc)
                    gold = gold_cache[key]
                    if isinstance(gold, str):
                        gold_error = gold
                        continue
                    if same_result(outcome.rows, gold):
                        correct = True
                        break
            trace = outcome.trace
            results.append(
                Result(
                    q=q,
                    status=status,
                    correct=correct,
                    ms=ms,
                    engine_ms=max(0.0, ms - trace.llm_ms),
                    llm_calls=trace.llm_calls,
                    tokens=trace.tokens,
                    sql=outcome.sql,
                    error=outcome.error,
                    interpretation=outcome.interpretation,
                    gold_error=gold_error,
                    confidence=calibration.confidence_of(trace),
                )
            )
            if progress:
                mark = {"answer": "✓" if correct else "✗", "abstain": "·", "clarify": "?"}.get(status, "!")
                print(f"[{n}/{len(questions)}] {mark} {q.db_id}: {q.question[:80]}", file=sys.stderr)
    finally:
        databases.close()
    return results


def gold_baseline_ms(questions: Sequence[Question], dataset: Path) -> list[float]:
    out = []
    for q in questions:
        try:
            out.append(run_gold(db_path(dataset, q.db_id), q.gold_sql).ms)
        except sqlite3.Error:
            continue
    return out


def summarize(
    results: Sequence[Result], gold_ms: Sequence[float], mode: str, dataset: Path
) -> dict[str, Any]:
    total = Tally()
    by_cat: dict[str, Tally] = defaultdict(Tally)
    for r in results:
        total.add(r)
        by_cat[r.q.category or "-"].add(r)
    n = max(total.questions, 1)

    def figures(t: Tally) -> dict[str, Any]:
        return {
            "questions": t.questions,
            "answered": t.answered,
            "correct": t.correct,
            "abstained": t.abstained,
            "clarified": t.clarified,
            "failed": t.failed,
            "ex": round(t.correct / max(t.questions, 1), 4),
            "wrong_rate": round((t.answered - t.correct) / t.answered, 4) if t.answered else 0.0,
        }

    out = figures(total)
    out.update(
        {
            "p50_ms": percentile(total.ms, 0.5),
            "p95_ms": percentile(total.ms, 0.95),
            "engine_p50_ms": percentile([r.engine_ms for r in results], 0.5),
            "engine_p95_ms": percentile([r.engine_ms for r in results], 0.95),
            "gold_p50_ms": percentile(gold_ms, 0.5),
            "gold_p95_ms": percentile(gold_ms, 0.95),
            "llm_calls_per_question": round(sum(r.llm_calls for r in results) / n, 3),
            "tokens_per_question": round(sum(r.tokens for r in results) / n, 1),
            "mode": mode,
            "dataset": str(dataset),
            "per_category": {c: figures(t) for c, t in sorted(by_cat.items())},
        }
    )
    return out


def report(summary: dict[str, Any]) -> str:
    lines = [
        f"{'category':16} {'questions':>9} {'answered':>8} {'correct':>7} {'abstain':>7} {'clarify':>7} "
        f"{'failed':>6} {'ex':>6} {'wrong':>6}"
    ]

    def line(name: str, f: dict[str, Any]) -> str:
        return (
            f"{name:16} {f['questions']:>9} {f['answered']:>8} {f['correct']:>7} {f['abstained']:>7} "
            f"{f['clarified']:>7} {f['failed']:>6} {f['ex']:>6.1%} {f['wrong_rate']:>6.1%}"
        )

    for name, f in summary["per_category"].items():
        lines.append(line(name, f))
    lines.append(line("all", summary))
    lines.append(
        f"latency per question: p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms "
        f"(engine without LLM time: p50 {summary['engine_p50_ms']} ms, p95 {summary['engine_p95_ms']} ms; "
        f"baseline — the gold query alone: p50 {summary['gold_p50_ms']} ms, p95 {summary['gold_p95_ms']} ms)"
    )
    lines.append(
        f"LLM calls per question: {summary['llm_calls_per_question']}, tokens per question: "
        f"{summary['tokens_per_question']} ({summary['mode']} mode)"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench ask", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", type=Path, required=True, help="folder with questions.json and database/"
    )
    parser.add_argument("--mode", choices=["keyword", "llm"], default="keyword")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--db", help="only questions about this db_id")
    parser.add_argument("--category", help="only questions of this category")
    parser.add_argument("--details", type=Path, help="write one JSON line per question to this file")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quiet", action="store_true", help="no per-question progress on stderr")
    parser.add_argument(
        "--min-confidence", type=float, help="keyword mode: this threshold instead of the configured one"
    )
    args = parser.parse_args(argv)
    if str(args.dataset) == DEMO:
        questions = demo_questions()
    elif (args.dataset / "questions.json").is_file():
        questions = load_questions(args.dataset)
    else:
        print(f"no questions.json in {args.dataset} (or use --dataset demo)", file=sys.stderr)
        return 2
    if args.db:
        questions = [q for q in questions if q.db_id == args.db]
    if args.category:
        questions = [q for q in questions if q.category == args.category]
    if args.limit:
        questions = questions[: args.limit]
    results = run(questions, args.dataset, args.mode, progress=not args.quiet)
    threshold = load_settings().engine.keyword_min_confidence
    if args.min_confidence is not None:
        threshold = args.min_confidence
    readings = results
    if args.mode == "keyword":
        results = calibration.thresholded(results, threshold)
    summary = summarize(results, gold_baseline_ms(questions, args.dataset), args.mode, args.dataset)
    if args.details:
        with args.details.open("w") as fh:
            for r in results:
                fh.write(
                    json.dumps(
                        {
                            "db_id": r.q.db_id,
                            "category": r.q.category,
                            "question": r.q.question,
                            "status": r.status,
                            "correct": r.correct,
                            "ms": round(r.ms, 1),
                            "sql": r.sql,
                            "gold_sql": r.q.gold_sql,
                            "interpretation": r.interpretation,
                            "error": r.error,
                            "gold_error": r.gold_error,
                            "confidence": r.confidence,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
    if args.mode == "keyword":
        summary["calibration"] = calibration.summary(readings, threshold)
    print(report(summary), file=sys.stderr if args.json else sys.stdout)
    if args.mode == "keyword":
        print(calibration.report(readings, threshold), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    return 0
