"""Whole-question benchmark: execution accuracy of keyword mode, the LLM pipeline, or the plain prompt.

    python -m core.bench ask --dataset DIR|demo|insurance [--mode MODE] [--compare MODE] [--engine duckdb]
                             [--definitions FILE] [--sample N [--seed S]] [--limit N]
                             [--db DB_ID] [--category NAME] [--details FILE] [--json] [--quiet]

DIR holds `questions.json` (a list of {"db_id", "question", "gold_sql"} and optionally
"category", "instructions", "gold_alternatives") and `database/<db_id>/<db_id>.sqlite`; or DIR is
a folder of such lists over the demo and Spider's databases (tests/data/keyword_fresh2: `shape`
is the category), laid out as a dataset under var/bench/sets/.
`--dataset demo` runs the built-in questions on the bundled demo database (DEMO_QUESTIONS);
`--dataset insurance` the business questions of tests/data/insurance_business_questions.json on
the insurance demo, with its catalog and business definitions (config/insurance_*.yaml).

Business definitions (core/definitions): a database's catalog and definitions may sit beside it,
`database/<db_id>/<db_id>.catalog.yaml` and `<db_id>.definitions.yaml`, or `--definitions FILE`
gives one file for every database. keyword and llm mode use them; `keyword-bare` and `llm-bare`
are the same modes with the definitions withheld (the catalog stays), so `--mode llm --compare
llm-bare` measures what the definitions are worth in one run. plain mode never sees them.

A question is *correct* when the rows of the engine's query equal the rows of the gold query or
of any listed alternative: compared as a multiset of rows, in order only when the gold query has
a top-level ORDER BY *and* the question asks for an order (`asks_for_order`: its category is
`order_by`, or it says order, sort, arrange, rank, ascending, descending or alphabetical — the
rule of defog's own evaluator, sql-eval's `normalize_table`: a list in an order nobody asked
for is not a wrong answer), rows that tie on the gold's ORDER BY keys in any order, with the
columns matched up whatever their order (values compared with 10 significant digits). Unlike
sql-eval, duplicate rows and extra columns still count against an answer.
Beside that strict figure the report gives a *semantic* one: an answer whose rows equal the
gold's on the columns both show is *right on other columns* — it shows fewer columns than the
gold, each one of the gold's (the gold's writer chose extra label or qualifier columns, "list all
stations" → name and city), or more, the gold's among them (the count a ranking ranked by, the
date a 'which … joined in 2017' read): which columns to show is a judgement, not a wrong answer,
and sql-eval itself accepts the extra ones.
Strict EX stays the headline; the semantic wrong rate says how often an answer is wrong in
substance.
*Answered* means the engine returned rows rather than declining, asking back or failing;
`wrong_rate` is the share of answered questions that are not correct — the number that matters
for keyword mode, whose job is to decline rather than guess.

keyword mode runs the engine with no LLM. llm mode uses the configured endpoint (OPENAI_API_KEY,
OPENAI_BASE_URL, ASKBASE_LLM_MODEL) with the keyword fallback off, so its figures are the
LLM pipeline's own; the dataset's `instructions` are appended to the question in llm and plain
mode only. plain mode is the baseline people compare Askbase with (core/bench/plain.py): the
whole schema with 3 example rows per table, one call, one retry with the error, through the same
LLM client, guard and read-only execution. `--compare MODE` runs a second mode on the same
questions in the same run (all of `--mode` first, then all of MODE) and prints both side by side
with the questions where they differ; *needless asks* are questions `--mode` asked back about
that MODE answered correctly.
Latency is wall-clock time per question; the gold queries' own execution time, measured in the
same run on the same files, is printed as the baseline.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from core.answer import json_value
from core.bench import calibration, engines
from core.bench.candidates import CandidateRecord, record_of, tally
from core.bench.candidates import text as candidates_text
from core.bench.plain import TASK as PLAIN_TASK
from core.bench.plain import answer_plain
from core.database import Database, Databases
from core.definitions import Definitions, of_database
from core.demo import CATALOG_PATH as DEMO_CATALOG
from core.demo import ensure_demo
from core.llm import LLM
from core.pipeline import answer
from core.request import Request
from core.results import same_rows
from core.schema_text import schema_text
from core.settings import ROOT, DatabaseSettings, LLMSettings, load_settings
from core.trace import Trace

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
    status: str  # answer | clarify | abstain | error
    correct: bool
    ms: float
    engine_ms: float
    llm_calls: int
    tokens: int
    sql: str = ""
    error: str = ""
    interpretation: str = ""
    gold_error: str = ""
    mode: str = ""
    columns: tuple[str, ...] = ()
    rows: list[Row] = field(default_factory=list)
    confidence: float | None = None  # keyword mode's, for its reading (core/bench/calibration.py)
    candidates: CandidateRecord | None = None  # llm mode: how its candidates were chosen
    other_columns: bool = False  # not correct, but right on the columns it shares with the gold
    reader: str = ""  # keyword mode: 'grammar', or 'first' for the first reader (no tree read)


@dataclass
class Tally:
    questions: int = 0
    answered: int = 0
    correct: int = 0
    other_columns: int = 0  # answers right on the columns they share with the gold (not in `correct`)
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
            self.other_columns += int(r.other_columns and not r.correct)
        elif r.status == "clarify":
            self.clarified += 1
        elif r.status == "abstain":
            self.abstained += 1
        else:
            self.failed += 1


# ---------------------------------------------------------------------------------------------
# the dataset and the gold


# `--dataset demo`: the bundled demo database, with questions of every shape keyword mode answers
# and a few it must decline or ask back about; gold SQL written by hand, and after it any other
# answer that is as right (the winner alone, or the winner with the figure that made it win).
DEMO = "demo"
DEMO_QUESTIONS: list[tuple[str, ...]] = [
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
        "SELECT name FROM datacenter ORDER BY opened_on DESC LIMIT 1",
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
        "SELECT strftime('%Y-%m', paid_on) AS m FROM payment GROUP BY m ORDER BY COUNT(*) DESC LIMIT 1",
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
    ("filter", "Which clients are not active?", "SELECT name FROM client WHERE status <> 'ACT'"),
    (
        "clarify",
        "How many clients are in Singapore?",
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.city = 'Singapore'",
    ),
]


def demo_questions() -> list[Question]:
    return [
        Question(db_id=DEMO, question=q, gold_sql=sql, category=cat, alternatives=tuple(alternatives))
        for cat, q, sql, *alternatives in DEMO_QUESTIONS
    ]


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


def stratified_sample(questions: Sequence[Question], n: int, seed: int) -> list[Question]:
    """`n` questions drawn at random but in proportion to each database's share of the pool.

    Each database gets at least one question while `n` allows (when `n` is smaller than the
    number of databases, `n` databases are drawn), then one more at a time to the database
    furthest below its proportional share, ties to the database that comes first in the file.
    Within a database the questions are drawn with `random.Random(seed)`, so a seed names the
    sample; the sample keeps the dataset's order.
    """
    if n >= len(questions):
        return list(questions)
    rng = random.Random(seed)
    by_db: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        by_db[q.db_id].append(i)
    dbs = list(by_db)
    if n < len(dbs):
        dbs = sorted(rng.sample(dbs, n), key=list(by_db).index)
    quota = dict.fromkeys(dbs, 1)
    total = len(questions)
    for _ in range(n - sum(quota.values())):
        open_dbs = [d for d in dbs if quota[d] < len(by_db[d])]
        best = max(open_dbs, key=lambda d: n * len(by_db[d]) / total - quota[d])
        quota[best] += 1
    chosen = sorted(i for d in dbs for i in rng.sample(by_db[d], quota[d]))
    return [questions[i] for i in chosen]


def db_path(dataset: Path, db_id: str) -> Path:
    if str(dataset) == DEMO:
        return ensure_demo(Path(load_settings().var_dir))
    return dataset / "database" / db_id / f"{db_id}.sqlite"


def insurance_dataset(var_dir: Path) -> Path:
    """`--dataset insurance` as a dataset folder: the insurance demo beside its catalog and
    definitions, and the business questions (written blind to the code: their README says how)."""
    from core.insurance_demo import CATALOG_PATH, ensure_insurance

    folder = var_dir / "bench" / INSURANCE
    home = folder / "database" / INSURANCE
    home.mkdir(parents=True, exist_ok=True)
    built = ensure_insurance(home)
    if built.name != f"{INSURANCE}.sqlite":
        (home / f"{INSURANCE}.sqlite").write_bytes(built.read_bytes())
    (home / f"{INSURANCE}.catalog.yaml").write_text(Path(str(CATALOG_PATH)).read_text())
    (home / f"{INSURANCE}.definitions.yaml").write_text(
        (ROOT / "config" / "insurance_definitions.yaml").read_text()
    )
    raw = json.loads(INSURANCE_QUESTIONS.read_text())
    questions = [
        {
            "db_id": INSURANCE,
            "question": q["question"],
            "gold_sql": q["gold_sql"],
            "category": ",".join(q.get("uses") or []) or "plain",
        }
        for q in raw
    ]
    (folder / "questions.json").write_text(json.dumps(questions, indent=1))
    return folder


SPIDER_DATABASES = ROOT.parent / "shared" / "bench" / "spider-train" / "database"


def question_set_dataset(folder: Path, var_dir: Path) -> Path:
    """A folder of question lists (tests/data/keyword_fresh: files of {"db_id", "question",
    "gold_sql", "shape"}) as a dataset folder under `var_dir`: the questions in one file, each
    database linked beside them — "demo" the bundled demo with its catalog, any other a Spider
    database (../shared/bench/spider-train/database)."""
    dataset = var_dir / "bench" / "sets" / folder.resolve().name
    questions = [
        {**q, "category": q.get("category") or q.get("shape") or ""}
        for f in sorted(folder.glob("*.json"))
        for q in json.loads(f.read_text())
    ]
    for db_id in sorted({q["db_id"] for q in questions}):
        home = dataset / "database" / db_id
        home.mkdir(parents=True, exist_ok=True)
        source = ensure_demo(var_dir) if db_id == DEMO else SPIDER_DATABASES / db_id / f"{db_id}.sqlite"
        _link(home / f"{db_id}.sqlite", source)
        if db_id == DEMO:
            _link(home / f"{DEMO}.catalog.yaml", Path(str(DEMO_CATALOG)))
    (dataset / "questions.json").write_text(json.dumps(questions, indent=1))
    return dataset


def _link(path: Path, target: Path) -> None:
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target.resolve())


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


def _output_index(e: exp.Expr, projections: Sequence[exp.Expr]) -> int | None:
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


ORDER_WORDS = re.compile(
    r"\b(order|ordered|sort|sorted|arrange|arranged|rank|ranked|ranking|ascending|descending"
    r"|alphabetical|alphabetically)\b",
    re.IGNORECASE,
)


def asks_for_order(q: Question) -> bool:
    """Does the question ask for its rows in an order? Only then must an answer follow the gold's."""
    return q.category == "order_by" or ORDER_WORDS.search(q.question) is not None


def same_result(pred: Sequence[Row], gold: Gold, *, order_asked: bool = True) -> bool:
    """Rows equal as a multiset (or in order when the gold orders and the question asks for an
    order), columns in any order (core/results.py: the comparison the engine uses for its own
    candidates)."""
    ordered = gold.ordered and order_asked
    return same_rows(pred, gold.rows, ordered=ordered, tie_keys=gold.tie_keys)


def same_on_other_columns(pred: Sequence[Row], gold: Gold, *, order_asked: bool = True) -> bool:
    """Do `pred` and the gold agree on the columns both show, one showing fewer than the other?

    The semantic figure: an answer that is the gold cut down to some of its columns, or the gold
    with columns added, is right in substance. Rows still compare as a multiset, one to one (in
    order when the strict rule says so; when the gold's order keys are not among the shared
    columns, in exactly the gold's order).
    """
    if not pred or not gold.rows or len(pred) != len(gold.rows):
        return False
    width, gold_width = len(pred[0]), len(gold.rows[0])
    if width == gold_width or not width or not gold_width:
        return False
    ordered = gold.ordered and order_asked
    if width > gold_width:  # the gold's columns among more: compare the answer cut down to them
        return any(
            same_rows(
                [tuple(r[i] for i in kept) for r in pred], gold.rows, ordered=ordered, tie_keys=gold.tie_keys
            )
            for kept in itertools.combinations(range(width), gold_width)
        )
    for kept in itertools.combinations(range(gold_width), width):
        rows = [tuple(r[i] for i in kept) for r in gold.rows]
        keys = gold.tie_keys
        kept_keys = [kept.index(k) for k in keys] if keys and all(k in kept for k in keys) else None
        if same_rows(pred, rows, ordered=ordered, tie_keys=kept_keys):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# running

MODES = ("keyword", "llm", "plain", "keyword-bare", "llm-bare")
LLM_MODES = ("llm", "plain", "llm-bare")
BARE = "-bare"  # a mode without the business definitions
INSURANCE = "insurance"
INSURANCE_QUESTIONS = ROOT / "tests" / "data" / "insurance_business_questions.json"
MARKS = {"abstain": "·", "clarify": "?"}
BENCH_LIMIT = 1_000_000  # rows: the guard's LIMIT and the row cap, so no result is cut short


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return round(ordered[k], 1)


def bench_llm(settings: LLMSettings) -> LLM:
    """One client for every mode of a run. The baseline writes its SQL with the model that writes
    Askbase's SQL (`llm.models.generate`) unless `llm.models.plain` names another."""
    models = {PLAIN_TASK: settings.model_for("generate"), **settings.models}
    return LLM(settings.model_copy(update={"models": models}))


@dataclass(frozen=True)
class Got:
    """What one mode made of one question, before it is judged."""

    status: str  # answer | clarify | abstain | error
    sql: str
    error: str
    interpretation: str
    columns: Sequence[str]
    rows: Sequence[Row]
    trace: Trace


class Harness:
    """What a run shares across its questions and modes: settings, open databases, the LLM
    client, the gold results and the plain prompt's schema text (both made once per database)."""

    def __init__(
        self, dataset: Path, modes: Sequence[str], definitions: Path | None = None, engine: str = "sqlite"
    ) -> None:
        settings = load_settings()
        self.dataset = dataset
        self.engine_name = engine  # where Askbase answers (core/bench/engines.py); gold runs on SQLite
        self.definitions_file = definitions
        self._opened: dict[str, Database] = {}
        # no keyword-mode confidence threshold here: calibration.thresholded applies it afterwards,
        # so the readings below it are still checked for the reliability table
        self.engine = settings.engine.model_copy(
            update={
                "default_limit": BENCH_LIMIT,
                "row_cap": BENCH_LIMIT,
                "fallback_to_keyword": False,
                "keyword_min_confidence": 0.0,
            }
        )
        self.llm: LLM | None = None
        if any(m in LLM_MODES for m in modes):
            if not settings.llm.configured:
                raise SystemExit(
                    f"{'/'.join(m for m in modes if m in LLM_MODES)} mode needs OPENAI_API_KEY "
                    "(and OPENAI_BASE_URL for another endpoint)"
                )
            self.llm = bench_llm(settings.llm)
        self.databases = Databases(settings)
        self._gold: dict[tuple[str, str], Gold | str] = {}
        self._schemas: dict[str, str] = {}

    def database(self, q: Question) -> Database:
        var_dir = Path(load_settings().var_dir)
        if str(self.dataset) == DEMO and self.engine_name == "duckdb":
            if DEMO not in self._opened:
                self._opened[DEMO] = Database(
                    name=DEMO, config=engines.demo_for("duckdb", var_dir), var_dir=var_dir
                )
            return self._opened[DEMO]
        if str(self.dataset) == DEMO:
            return self.databases.get(DEMO)  # the demo with its catalog
        path = db_path(self.dataset, q.db_id)
        beside = {kind: path.with_name(f"{q.db_id}.{kind}.yaml") for kind in ("catalog", "definitions")}
        url = engines.url_for(self.engine_name, path, var_dir)
        if not (beside["catalog"].is_file() or beside["definitions"].is_file() or self.definitions_file):
            return self.databases.get(url if self.engine_name != "sqlite" else str(path))
        if q.db_id not in self._opened:
            files = [self.definitions_file] if self.definitions_file else [beside["definitions"]]
            config = DatabaseSettings(
                url=url,
                catalog=str(beside["catalog"]) if beside["catalog"].is_file() else None,
                definitions=[str(f) for f in files if f.is_file()],
            )
            self._opened[q.db_id] = Database(
                name=q.db_id, config=config, var_dir=Path(load_settings().var_dir)
            )
        return self._opened[q.db_id]

    def ask(self, q: Question, mode: str) -> Result:
        db = self.database(q)
        text = (
            q.question
            if mode.startswith("keyword") or not q.instructions
            else f"{q.question}\n{q.instructions}"
        )
        schema = self.plain_schema(q.db_id, db) if mode == "plain" else ""  # once per database, untimed
        start = time.perf_counter()
        got = self._plain(db, text, schema) if mode == "plain" else self._engine(db, text, mode)
        ms = (time.perf_counter() - start) * 1000
        correct, gold_error = self.judge(q, got.rows) if got.status == "answer" else (False, "")
        other = got.status == "answer" and not correct and self.judge_other_columns(q, got.rows)
        return Result(
            q=q,
            status=got.status,
            correct=correct,
            ms=ms,
            engine_ms=max(0.0, ms - got.trace.llm_ms),
            llm_calls=got.trace.llm_calls,
            tokens=got.trace.tokens,
            sql=got.sql,
            error=got.error,
            interpretation=got.interpretation,
            gold_error=gold_error,
            mode=mode,
            other_columns=other,
            columns=tuple(got.columns),
            rows=list(got.rows),
            confidence=calibration.confidence_of(got.trace) if mode.startswith("keyword") else None,
            reader=keyword_reader(got.trace) if mode.startswith("keyword") else "",
            candidates=record_of(got.trace, lambda sql: self.right(q, sql))
            if mode.startswith("llm")
            else None,
        )

    def right(self, q: Question, sql: str) -> bool:
        """Would `sql` (a candidate LLM mode did not choose) have answered `q` correctly?"""
        try:
            rows = run_gold(db_path(self.dataset, q.db_id), sql).rows
        except sqlite3.Error:
            return False
        return self.judge(q, rows)[0]

    def _engine(self, db: Database, text: str, mode: str) -> Got:
        """Askbase itself, in keyword mode (no LLM) or LLM mode (no keyword fallback); with the
        database's business definitions unless the mode is a bare one."""
        definitions = Definitions() if mode.endswith(BARE) else of_database(db, None)
        llm = self.llm if mode.removesuffix(BARE) == "llm" else None
        outcome = answer(db, Request(text, definitions=definitions), self.engine, llm)
        status: str = outcome.status
        if status == "error" and outcome.error_kind == "keyword_abstain":
            status = "abstain"
        return Got(
            status,
            outcome.sql,
            outcome.error,
            outcome.interpretation,
            outcome.columns,
            outcome.rows,
            outcome.trace,
        )

    def _plain(self, db: Database, text: str, schema: str) -> Got:
        assert self.llm is not None  # made in __init__ for the LLM modes
        plain = answer_plain(db, text, self.engine, self.llm, schema=schema)
        return Got(plain.status, plain.sql, plain.error, "", plain.columns, plain.rows, plain.trace)

    def plain_schema(self, db_id: str, db: Database) -> str:
        if db_id not in self._schemas:
            self._schemas[db_id] = schema_text(db, self.engine)
        return self._schemas[db_id]

    def judge(self, q: Question, rows: Sequence[Row]) -> tuple[bool, str]:
        """(rows equal the gold's or an alternative's, the last gold query's error if one failed)."""
        path = db_path(self.dataset, q.db_id)
        gold_error = ""
        for sql in (q.gold_sql, *q.alternatives):
            key = (q.db_id, sql)
            if key not in self._gold:
                try:
                    self._gold[key] = run_gold(path, sql)
                except sqlite3.Error as exc:
                    self._gold[key] = str(exc)
            gold = self._gold[key]
            if isinstance(gold, str):
                gold_error = gold
                continue
            if same_result(rows, gold, order_asked=asks_for_order(q)):
                return True, gold_error
        return False, gold_error

    def judge_other_columns(self, q: Question, rows: Sequence[Row]) -> bool:
        """Are the rows the gold's (or an alternative's) on the columns both show?"""
        for sql in (q.gold_sql, *q.alternatives):
            gold = self._gold.get((q.db_id, sql))  # judge() ran first and filled the cache
            if isinstance(gold, Gold) and same_on_other_columns(rows, gold, order_asked=asks_for_order(q)):
                return True
        return False

    def close(self) -> None:
        self.databases.close()
        for db in self._opened.values():
            db.dispose()


def keyword_reader(trace: Trace) -> str:
    """Which of keyword mode's readers read the question: 'first' when the grammar read no tree and
    the first reader did (its 'retrieve' stage lists cues), else 'grammar'. Why: the first reader is
    being retired (issue 33), and how much it still answers is the measure of what is left."""
    first = any(
        s.name == "retrieve" and isinstance(s.outputs, dict) and "cues" in s.outputs for s in trace.stages
    )
    return "first" if first else "grammar"


def run_modes(
    questions: Sequence[Question],
    dataset: Path,
    modes: Sequence[str],
    progress: bool = True,
    workers: int = 1,
    definitions: Path | None = None,
    engine: str = "sqlite",
) -> dict[str, list[Result]]:
    """Every question in each mode, one mode after the other, sharing databases and the LLM client.

    One mode at a time (not question by question), so when people or agents stand in for the
    model (the relay) one mode's prompt for a question is not fresh in mind for the other's.
    `workers` questions of a mode are in flight at once: with several agents behind the relay a
    run takes 1/workers of the time; results keep the questions' order whatever finishes first.
    """
    harness = Harness(dataset, modes, definitions, engine)
    out: dict[str, list[Result]] = {}
    try:
        for mode in modes:
            done = 0

            def one(q: Question, mode: str = mode) -> Result:
                nonlocal done
                r = harness.ask(q, mode)
                done += 1
                if progress:
                    mark = "✓" if r.correct else "✗" if r.status == "answer" else MARKS.get(r.status, "!")
                    print(
                        f"[{mode} {done}/{len(questions)}] {mark} {q.db_id}: {q.question[:80]}",
                        file=sys.stderr,
                    )
                return r

            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                out[mode] = list(pool.map(one, questions))
    finally:
        harness.close()
    return out


def run(questions: Sequence[Question], dataset: Path, mode: str, progress: bool = True) -> list[Result]:
    return run_modes(questions, dataset, [mode], progress)[mode]


def gold_baseline_ms(questions: Sequence[Question], dataset: Path) -> list[float]:
    out = []
    for q in questions:
        try:
            out.append(run_gold(db_path(dataset, q.db_id), q.gold_sql).ms)
        except sqlite3.Error:
            continue
    return out


# ---------------------------------------------------------------------------------------------
# figures


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
            "other_columns": t.other_columns,
            "ex_semantic": round((t.correct + t.other_columns) / max(t.questions, 1), 4),
            "wrong_rate_semantic": round((t.answered - t.correct - t.other_columns) / t.answered, 4)
            if t.answered
            else 0.0,
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
    first = [r for r in results if r.reader == "first" and r.status == "answer"]
    if any(r.reader for r in results):
        right = sum(r.correct or r.other_columns for r in first)
        out["first_reader"] = {"answered": len(first), "right": right, "wrong": len(first) - right}
    records = [(r.candidates, r.correct) for r in results if r.candidates is not None]
    if records:
        out["candidates"] = tally(records)
    return out


def report(summary: dict[str, Any]) -> str:
    lines = [
        f"{'category':16} {'questions':>9} {'answered':>8} {'correct':>7} {'abstain':>7} {'clarify':>7} "
        f"{'failed':>6} {'ex':>6} {'wrong':>6}   {'other':>5} {'ex-sem':>6} {'wr-sem':>6}"
    ]

    def line(name: str, f: dict[str, Any]) -> str:
        return (
            f"{name:16} {f['questions']:>9} {f['answered']:>8} {f['correct']:>7} {f['abstained']:>7} "
            f"{f['clarified']:>7} {f['failed']:>6} {f['ex']:>6.1%} {f['wrong_rate']:>6.1%}   "
            f"{f['other_columns']:>5} {f['ex_semantic']:>6.1%} {f['wrong_rate_semantic']:>6.1%}"
        )

    for name, f in summary["per_category"].items():
        lines.append(line(name, f))
    lines.append(line("all", summary))
    lines.append(
        f"strict: EX {summary['ex']:.1%}, wrong {summary['wrong_rate']:.1%} of answered; semantic "
        f"(an answer right on the columns it shares with the gold counts as right — {summary['other_columns']} "
        f"of them): EX {summary['ex_semantic']:.1%}, wrong {summary['wrong_rate_semantic']:.1%} of answered"
    )
    lines.append(
        f"latency per question: p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms "
        f"(engine without LLM time: p50 {summary['engine_p50_ms']} ms, p95 {summary['engine_p95_ms']} ms; "
        f"baseline — the gold query alone: p50 {summary['gold_p50_ms']} ms, p95 {summary['gold_p95_ms']} ms)"
    )
    lines.append(
        f"LLM calls per question: {summary['llm_calls_per_question']}, tokens per question: "
        f"{summary['tokens_per_question']} ({summary['mode']} mode)"
    )
    if "first_reader" in summary:
        f = summary["first_reader"]
        lines.append(
            f"answered by the first reader (the grammar read no tree): {f['answered']}, "
            f"right {f['right']} (semantic), wrong {f['wrong']}"
        )
    if "candidates" in summary:
        lines.append(candidates_text(summary["candidates"]))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# two modes on the same questions


@dataclass(frozen=True)
class Difference:
    """A question one mode got right and the other did not."""

    q: Question
    right: Result
    other: Result


@dataclass(frozen=True)
class Comparison:
    mode: str
    baseline: str
    wins: tuple[Difference, ...]  # `mode` right, `baseline` not
    losses: tuple[Difference, ...]  # `baseline` right, `mode` not
    both_right: int
    both_wrong: int
    needless_asks: tuple[Difference, ...]  # `mode` asked back, `baseline` answered correctly

    def to_json(self, questions: int) -> dict[str, Any]:
        def rows(ds: Sequence[Difference]) -> list[dict[str, Any]]:
            return [
                {
                    "db_id": d.q.db_id,
                    "category": d.q.category,
                    "question": d.q.question,
                    "right": d.right.mode,
                    **{r.mode: {"outcome": outcome_word(r), "sql": r.sql} for r in (d.right, d.other)},
                }
                for d in ds
            ]

        return {
            "mode": self.mode,
            "baseline": self.baseline,
            "wins": rows(self.wins),
            "losses": rows(self.losses),
            "both_right": self.both_right,
            "both_wrong": self.both_wrong,
            "needless_asks": len(self.needless_asks),
            "needless_ask_rate": round(len(self.needless_asks) / max(questions, 1), 4),
        }


def compare(mode: Sequence[Result], baseline: Sequence[Result]) -> Comparison:
    """Question by question: `mode` and `baseline` ran the same questions in the same order."""
    wins, losses, needless = [], [], []
    both_right = both_wrong = 0
    for a, b in zip(mode, baseline, strict=True):
        assert a.q == b.q, "both modes must run the same questions in the same order"
        if a.correct and b.correct:
            both_right += 1
        elif a.correct:
            wins.append(Difference(a.q, a, b))
        elif b.correct:
            losses.append(Difference(a.q, b, a))
            if a.status == "clarify":
                needless.append(Difference(a.q, b, a))
        else:
            both_wrong += 1
    return Comparison(
        mode=mode[0].mode if mode else "",
        baseline=baseline[0].mode if baseline else "",
        wins=tuple(wins),
        losses=tuple(losses),
        both_right=both_right,
        both_wrong=both_wrong,
        needless_asks=tuple(needless),
    )


def outcome_word(r: Result) -> str:
    if r.status == "answer":
        return "right" if r.correct else "wrong"
    return {"clarify": "asked back", "abstain": "declined"}.get(r.status, "error")


def short_sql(sql: str, width: int = 110) -> str:
    """The query on one line as a person skims it: the main SELECT without the CTE bodies (the
    view Askbase inlines) and without the LIMIT the benchmark's guard adds."""
    text = sql
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        tree = None
    if tree is not None:
        limit = tree.args.get("limit")
        if isinstance(limit, exp.Limit) and limit.expression.sql() == str(BENCH_LIMIT):
            tree = tree.copy()
            tree.set("limit", None)
        with_ = tree.args.get("with_")
        if with_ is not None:
            names = ", ".join(cte.alias for cte in with_.expressions)
            tree = tree.copy()
            tree.set("with_", None)
            text = f"WITH {names} … {tree.sql(dialect='sqlite')}"
        else:
            text = tree.sql(dialect="sqlite")
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def side_by_side(summaries: Sequence[dict[str, Any]]) -> str:
    """The figures of several modes in columns, for reading across."""

    def pct(x: float) -> str:
        return f"{x:.1%}"

    rows: list[tuple[str, Any]] = [
        ("questions", lambda s: s["questions"]),
        ("correct", lambda s: s["correct"]),
        ("EX (correct / questions)", lambda s: pct(s["ex"])),
        ("answered", lambda s: s["answered"]),
        ("wrong rate (of answered)", lambda s: pct(s["wrong_rate"]) if s["answered"] else "-"),
        ("right, other columns", lambda s: s["other_columns"]),
        ("wrong rate, semantic", lambda s: pct(s["wrong_rate_semantic"]) if s["answered"] else "-"),
        ("asked back", lambda s: s["clarified"]),
        ("declined (keyword)", lambda s: s["abstained"]),
        ("errors", lambda s: s["failed"]),
        ("LLM calls / question", lambda s: s["llm_calls_per_question"]),
        ("tokens / question", lambda s: s["tokens_per_question"]),
        ("p50 / p95 ms", lambda s: f"{s['p50_ms']:.0f} / {s['p95_ms']:.0f}"),
    ]
    lines = [f"{'':26}" + "".join(f"{s['mode']:>14}" for s in summaries)]
    for label, value in rows:
        lines.append(f"{label:26}" + "".join(f"{value(s)!s:>14}" for s in summaries))
    return "\n".join(lines)


def comparison_report(main_summary: dict[str, Any], other: dict[str, Any], c: Comparison) -> str:
    questions = main_summary["questions"]
    lines = [
        side_by_side([main_summary, other]),
        f"both right {c.both_right}, both wrong {c.both_wrong}, {c.mode} right and {c.baseline} not "
        f"{len(c.wins)}, {c.baseline} right and {c.mode} not {len(c.losses)}",
        f"needless asks ({c.mode} asked back, {c.baseline} answered correctly): {len(c.needless_asks)} "
        f"of {questions} ({len(c.needless_asks) / max(questions, 1):.1%})",
    ]
    for title, diffs in (
        (f"{c.mode} right, {c.baseline} not", c.wins),
        (f"{c.baseline} right, {c.mode} not", c.losses),
    ):
        lines.append(f"\n{title} ({len(diffs)}):")
        for d in diffs:
            lines.append(f"  [{d.q.db_id}] {d.q.question[:100]}")
            for r in (d.right, d.other) if d.right.mode == c.mode else (d.other, d.right):
                lines.append(
                    f"    {r.mode:8} {outcome_word(r):10} {short_sql(r.sql) or '(no SQL) ' + r.error[:90]}"
                )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the command


def detail_line(r: Result) -> dict[str, Any]:
    """One question in one mode, for reading failures afterwards (`--details`)."""
    return {
        "mode": r.mode,
        "db_id": r.q.db_id,
        "category": r.q.category,
        "question": r.q.question,
        "status": r.status,
        "correct": r.correct,
        "other_columns": r.other_columns,
        "sql": r.sql,
        "gold_sql": r.q.gold_sql,
        "result": {
            "columns": list(r.columns),
            "row_count": len(r.rows),
            "first_rows": [[json_value(v) for v in row] for row in r.rows[:DETAIL_ROWS]],
        },
        "llm_calls": r.llm_calls,
        "tokens": r.tokens,
        "ms": round(r.ms, 1),
        "interpretation": r.interpretation,
        "error": r.error,
        "gold_error": r.gold_error,
        "confidence": r.confidence,
        "reader": r.reader,
        "candidates": r.candidates.to_json() if r.candidates is not None else None,
    }


DETAIL_ROWS = 5

EPILOG = """\
sampling: --sample N draws N questions (after --db/--category) stratified over databases: each
database's share of the sample follows its share of the questions, at least one question per
database while N allows; questions are drawn at random within a database with --seed S (default
0), so the same N, seed and dataset always give the same questions, listed in the dataset's order.
--limit then keeps the first questions of that.

comparing: --mode llm --compare plain runs every question in llm mode, then every question in
plain mode, and prints both tables, the two side by side, and the questions one got right and the
other did not (with the SQL of each). --details FILE gets one JSON line per question per mode.
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench ask",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dataset", type=Path, required=True, help="folder with questions.json and database/, or 'demo'"
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="keyword",
        help="keyword: no LLM; llm: Askbase's pipeline; plain: the one-call whole-schema baseline",
    )
    parser.add_argument(
        "--compare",
        choices=MODES,
        action="append",
        default=[],
        help="also run this mode on the same questions (may be given twice, e.g. llm-bare and plain)",
    )
    parser.add_argument(
        "--definitions", type=Path, help="business definitions (YAML or OSI) for every database of the run"
    )
    parser.add_argument(
        "--engine",
        choices=engines.ENGINES,
        default="sqlite",
        help="where Askbase answers: the SQLite files, or DuckDB copies of them (gold always runs on SQLite)",
    )
    parser.add_argument(
        "--sample", type=int, metavar="N", help="N questions stratified over databases (see below)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the seed that names a sample (default 0)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--db", help="only questions about this db_id")
    parser.add_argument("--category", help="only questions of this category")
    parser.add_argument(
        "--details", type=Path, help="write one JSON line per question (per mode) to this file"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quiet", action="store_true", help="no per-question progress on stderr")
    parser.add_argument(
        "--min-confidence", type=float, help="keyword mode: this threshold instead of the configured one"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="questions in flight at once (for an endpoint served by several agents, e.g. the relay)",
    )
    args = parser.parse_args(argv)
    if args.mode in args.compare or len(set(args.compare)) != len(args.compare):
        parser.error("--compare needs modes other than --mode, each once")
    if args.sample is not None and args.sample < 1:
        parser.error("--sample needs a positive number")
    if str(args.dataset) == INSURANCE:
        args.dataset = insurance_dataset(Path(load_settings().var_dir))
    listed = str(args.dataset) != DEMO and not (args.dataset / "questions.json").is_file()
    if listed and any(args.dataset.glob("*.json")):  # a folder of question lists (keyword_fresh)
        args.dataset = question_set_dataset(args.dataset, Path(load_settings().var_dir))
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
    if args.sample:
        questions = stratified_sample(questions, args.sample, args.seed)
    if args.limit:
        questions = questions[: args.limit]
    modes = [args.mode, *args.compare]
    results = run_modes(
        questions,
        args.dataset,
        modes,
        progress=not args.quiet,
        workers=args.workers,
        definitions=args.definitions,
        engine=args.engine,
    )
    threshold = load_settings().engine.keyword_min_confidence
    if args.min_confidence is not None:
        threshold = args.min_confidence
    readings = results.get("keyword", [])
    for m in modes:  # keyword mode as it answers at the threshold
        if m.startswith("keyword"):
            results[m] = calibration.thresholded(results[m], threshold)
    gold_ms = gold_baseline_ms(questions, args.dataset)
    summaries = {m: summarize(results[m], gold_ms, m, args.dataset) for m in modes}
    summary = summaries[args.mode]
    summary["engine"] = args.engine
    if args.mode == "keyword":
        summary["calibration"] = calibration.summary(readings, threshold)
    if args.sample:
        summary["sample"] = {"n": len(questions), "seed": args.seed}
    if args.details:
        with args.details.open("w") as fh:
            for m in modes:
                for r in results[m]:
                    fh.write(json.dumps(detail_line(r), ensure_ascii=False) + "\n")
    out = sys.stderr if args.json else sys.stdout
    if args.sample:
        print(
            f"sample: {len(questions)} questions stratified over databases, seed {args.seed}: "
            + ", ".join(f"{db} {n}" for db, n in Counter(q.db_id for q in questions).items()),
            file=out,
        )
    for m in modes:
        if args.compare:
            print(f"== {m} mode ==", file=out)
        print(report(summaries[m]), file=out)
        if m == "keyword":
            print(calibration.report(readings, threshold), file=out)
    for i, other in enumerate(args.compare):
        comparison = compare(results[args.mode], results[other])
        print("\n" + comparison_report(summary, summaries[other], comparison), file=out)
        if i == 0:
            summary["compare"] = summaries[other]
            summary["comparison"] = comparison.to_json(len(questions))
        else:
            summary.setdefault("also", {})[other] = {
                "summary": summaries[other],
                "comparison": comparison.to_json(len(questions)),
            }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    return 0
