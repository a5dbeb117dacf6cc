"""Clarification benchmark: accuracy after 0–4 rounds of questions, against a scripted user.

    python -m core.bench clarify [--mode keyword|llm] [--rounds 4] [--limit N] [--json] [--details FILE]

Ambiguous questions on the bundled demo database, each with the SQL its asker *intends*
(INTENDED: the same words may intend different queries), plus plain questions that must not be
asked back. The user is Sphinteract's feedback oracle (papers/sphinteract.txt §7.2.3), scripted
instead of prompted: shown a clarifying question, it picks the option consistent with the
intended SQL (the option's reading names a column and value the intended query uses, or its
words name them), and otherwise answers "Other…" in its own words with a hint taken from the
intended SQL; shown a wrong answer it rejects it (👎), which starts one more round (CQs, §6.2.2).

A session ends with a correct answer, when the engine has nothing left to ask, or after
`--rounds` questions. *Accuracy after k rounds* is the share of questions whose answer after k
answered questions is right — the answer that was shown, or, when the engine was still asking,
the answer it gives when not allowed to ask again (its best reading). Also reported: the average
number of rounds (the paper's efficiency measure, Table 3: accuracy gained per round), and how
many clarifying questions were asked twice in one session — which must be none.

keyword mode (the default) needs no LLM; llm mode uses the configured endpoint (OPENAI_API_KEY,
OPENAI_BASE_URL, ASKBASE_LLM_MODEL) with the keyword fallback off.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from rapidfuzz import fuzz
from sqlglot import exp

from core.answer import Clarification, Option, Outcome
from core.bench.ask import Gold, run_gold, same_result
from core.catalog import Catalog
from core.clarify.policy import exchange_for
from core.clarify.transcript import Exchange, Transcript, normalize, options_key
from core.keyword.readings import Reading

DEMO = "demo"
SIGNUPS_2024 = "signup_date >= '2024-01-01' AND signup_date < '2025-01-01'"
CLIENT_LOCATION = "client JOIN location ON client.loc_id = location.id"


@dataclass(frozen=True)
class Item:
    question: str
    intended: str  # the SQL the person has in mind
    kind: str = "ambiguous"  # ambiguous | plain (must be answered without asking)


INTENDED: tuple[Item, ...] = (
    # a year and two date columns (AmbTableColumn)
    Item("How many clients in 2024?", f"SELECT COUNT(*) FROM client WHERE {SIGNUPS_2024}"),
    Item(
        "How many clients in 1985?",
        "SELECT COUNT(*) FROM client WHERE birth_date >= '1985-01-01' AND birth_date < '1986-01-01'",
    ),
    Item(
        "How many clients per segment in 2024?",
        f"SELECT segment, COUNT(*) FROM client WHERE {SIGNUPS_2024} GROUP BY segment",
    ),
    Item(
        "How many enterprise clients in 2024?",
        f"SELECT COUNT(*) FROM client WHERE segment = 'enterprise' AND {SIGNUPS_2024}",
    ),
    Item(
        "How many clients in Germany in 2024?",
        f"SELECT COUNT(*) FROM {CLIENT_LOCATION} WHERE location.country = 'Germany' AND {SIGNUPS_2024}",
    ),
    Item(
        "How many clients per country in 2024?",
        f"SELECT location.country, COUNT(*) FROM {CLIENT_LOCATION} WHERE {SIGNUPS_2024} GROUP BY 1",
    ),
    # the year belongs to none of the offered columns: the user answers in their own words
    Item(
        "How many clients with payments in 2025?",
        "SELECT COUNT(DISTINCT client.id) FROM client JOIN payment ON payment.client_id = client.id "
        "WHERE payment.paid_on >= '2025-01-01' AND payment.paid_on < '2026-01-01'",
    ),
    # a value stored as a city and as a country (AmbValue), then a year (two rounds)
    Item(
        "How many clients in Singapore in 2024?",
        f"SELECT COUNT(*) FROM {CLIENT_LOCATION} WHERE location.city = 'Singapore' AND {SIGNUPS_2024}",
    ),
    Item(
        "How many clients are in Hong Kong?",
        f"SELECT COUNT(*) FROM {CLIENT_LOCATION} WHERE location.country = 'Hong Kong'",
    ),
    # plain questions: never asked back
    Item(
        "How many payments in 2025?",
        "SELECT COUNT(*) FROM payment WHERE paid_on >= '2025-01-01' AND paid_on < '2026-01-01'",
        "plain",
    ),
    Item(
        "How many datacenters are in Germany?",
        "SELECT COUNT(*) FROM datacenter JOIN location ON datacenter.loc_id = location.id "
        "WHERE location.country = 'Germany'",
        "plain",
    ),
    Item("How many active hosts?", "SELECT COUNT(*) FROM compute WHERE status = 'active'", "plain"),
    Item("How many payments are pending?", "SELECT COUNT(*) FROM payment WHERE status = 'pending'", "plain"),
)


# ---------------------------------------------------------------------------------------------
# the oracle user


class Oracle:
    """A user who knows the intended SQL and answers clarifying questions truthfully by it."""

    def __init__(self, intended: str, catalog: Catalog) -> None:
        tree = sqlglot.parse_one(intended, dialect="sqlite")
        tables = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
        columns_of = {t.name.lower(): {c.name.lower() for c in t.columns} for t in catalog.tables}
        self.columns: set[tuple[str, str]] = set()
        for col in tree.find_all(exp.Column):
            name = col.name.lower()
            if col.table:
                self.columns.add((tables.get(col.table.lower(), col.table.lower()), name))
            else:
                self.columns.update((t, name) for t in tables.values() if name in columns_of.get(t, ()))
        self.tables = set(tables.values())
        self.literals = {str(lit.this).lower() for lit in tree.find_all(exp.Literal) if lit.is_string}
        where = tree.find(exp.Where)
        self.filtered = [c for c in (where.find_all(exp.Column) if where else ()) if c.name]
        self.words = {w for t, c in self.columns for w in normalize(f"{t} {c}").split()} | {
            w for lit in self.literals for w in normalize(lit).split()
        }

    def consistent(self, option: Option) -> float:
        """How well an option agrees with the intended SQL: 1 for a reading it uses exactly."""
        reading = Reading.decode(option.value)
        if reading is not None:
            column = (reading.table.lower(), (reading.column or "").lower())
            uses = column in self.columns if reading.column else reading.table.lower() in self.tables
            value_ok = reading.value is None or reading.value.lower() in self.literals
            return 1.0 if uses and value_ok else 0.0
        words = [w for w in normalize(option.label).split() if len(w) > 2]
        if not words:
            return 0.0
        hits = sum(1 for w in words if any(fuzz.ratio(w, g) >= 85 for g in self.words))
        return hits / len(words)

    def reply(self, clarification: Clarification, keyword_mode: bool) -> Exchange:
        scores = [self.consistent(o) for o in clarification.options]
        best = max(scores, default=0.0)
        if best >= 0.5 and scores.count(best) == 1:
            return exchange_for(clarification, option=scores.index(best))
        return exchange_for(clarification, own_words=self.hint(), match_options=keyword_mode)

    def hint(self) -> str:
        """ "Other…": the intended query's filter columns, in words."""
        names = list(dict.fromkeys(c.name.replace("_", " ") for c in self.filtered))
        return ", ".join(names) or "none of these"


# ---------------------------------------------------------------------------------------------
# sessions


@dataclass
class Session:
    item: Item
    correct_after: list[bool] = field(default_factory=list)  # index k: right after k answered questions
    rounds: int = 0
    repeated: int = 0  # clarifying questions asked a second time (must stay 0)
    asked: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    final_sql: str = ""
    asked_before_answering: int = 0
    engine_calls: int = 0


class Runner:
    def __init__(self, db: Any, settings: Any, llm: Any, max_rounds: int, gold_path: Path) -> None:
        self.db, self.llm, self.max_rounds, self.gold_path = db, llm, max_rounds, gold_path
        self.settings = settings.model_copy(update={"clarify_max_rounds": max_rounds})
        self.forced_settings = settings.model_copy(update={"clarify": "off"})
        self.gold: dict[str, Gold] = {}

    def ask(
        self, question: str, transcript: Transcript, forced: bool = False, after_rejection: bool = False
    ) -> Outcome:
        from core.pipeline import answer
        from core.request import Request

        request = Request(question, transcript=transcript, after_rejection=after_rejection)
        return answer(self.db, request, self.forced_settings if forced else self.settings, self.llm)

    def right(self, item: Item, outcome: Outcome) -> bool:
        if outcome.status != "answer":
            return False
        if item.intended not in self.gold:
            self.gold[item.intended] = run_gold(self.gold_path, item.intended)
        return same_result(outcome.rows, self.gold[item.intended])

    def run(self, item: Item) -> Session:
        s = Session(item)
        oracle = Oracle(item.intended, self.db.catalog)
        keyword_mode = self.llm is None
        transcript = Transcript()
        at_round = {0: transcript}  # the transcript when k questions had been answered
        shown: dict[int, bool] = {}  # k → was the answer shown after k questions right
        while True:
            outcome = self.ask(item.question, transcript)
            s.engine_calls += 1
            if outcome.status != "clarify":  # an answer (or a failure) is shown
                shown[transcript.rounds] = self.right(item, outcome)
                s.final_sql = outcome.sql
                if shown[transcript.rounds] or transcript.rounds >= self.max_rounds:
                    break
                transcript = transcript.rejecting(outcome.sql)  # 👎: one more round
                outcome = self.ask(item.question, transcript, after_rejection=True)
                s.engine_calls += 1
            elif transcript.rounds == 0 and outcome.status == "clarify":
                s.asked_before_answering += 1
            if outcome.status != "clarify" or outcome.clarification is None:
                break
            c = outcome.clarification
            labels = [o.label for o in c.options]
            if transcript.already_asked(c.question, options_key(o.value for o in c.options), labels):
                s.repeated += 1
            s.asked.append(f"{c.question} [{' | '.join(labels)}]")
            exchange = oracle.reply(c, keyword_mode)
            s.answers.append(exchange.answer)
            transcript = transcript.plus(exchange)
            at_round[transcript.rounds] = transcript
            if transcript.rounds > self.max_rounds:
                break
        s.rounds = transcript.rounds
        for k in range(self.max_rounds + 1):
            if k > s.rounds:
                s.correct_after.append(s.correct_after[-1])
            elif k in shown:
                s.correct_after.append(shown[k])
            else:  # the engine was still asking: its answer had it not been allowed to ask again
                s.engine_calls += 1
                s.correct_after.append(self.right(item, self.ask(item.question, at_round[k], forced=True)))
        return s


def summarize(sessions: Sequence[Session], mode: str, max_rounds: int, seconds: float) -> dict[str, Any]:
    n = len(sessions)
    accuracy = [round(100 * sum(s.correct_after[k] for s in sessions) / n, 1) for k in range(max_rounds + 1)]
    rounds = sum(s.rounds for s in sessions) / n
    plain = [s for s in sessions if s.item.kind == "plain"]
    return {
        "mode": mode,
        "questions": n,
        "ambiguous": n - len(plain),
        "accuracy_after_rounds": accuracy,
        "average_rounds": round(rounds, 2),
        "efficiency": round((accuracy[-1] - accuracy[0]) / rounds, 1) if rounds else 0.0,
        "asked_twice": sum(s.repeated for s in sessions),
        "plain_asked_back": sum(1 for s in plain if s.rounds),
        "asked_before_answering": sum(s.asked_before_answering for s in sessions),
        "engine_calls": sum(s.engine_calls for s in sessions),
        "seconds": round(seconds, 2),
    }


def report(summary: dict[str, Any], max_rounds: int) -> str:
    lines = [
        f"Clarification benchmark: {summary['questions']} questions on the demo database "
        f"({summary['ambiguous']} ambiguous), {summary['mode']} mode, scripted oracle user, "
        f"at most {max_rounds} rounds",
        "rounds  accuracy",
    ]
    for k, acc in enumerate(summary["accuracy_after_rounds"]):
        note = "  (baseline: the engine's best reading, nothing asked)" if k == 0 else ""
        lines.append(f"{k:>6}  {acc:5.1f}%{note}")
    lines += [
        f"average rounds: {summary['average_rounds']}  (efficiency: "
        f"{summary['efficiency']} accuracy points per round)",
        f"questions asked twice: {summary['asked_twice']}; plain questions asked back: "
        f"{summary['plain_asked_back']}",
        f"{summary['engine_calls']} engine runs in {summary['seconds']} s",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from core.database import Databases
    from core.demo import ensure_demo
    from core.llm import LLM
    from core.settings import load_settings

    parser = argparse.ArgumentParser(
        prog="python -m core.bench clarify", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--mode", choices=["keyword", "llm"], default="keyword")
    parser.add_argument("--rounds", type=int, default=4, help="at most this many questions per question")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--details", type=Path, help="write one JSON line per question to this file")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)

    settings = load_settings()
    engine = settings.engine.model_copy(
        update={
            "default_limit": 1_000_000,
            "row_cap": 1_000_000,
            "fallback_to_keyword": False,
            "clarify": "auto",
        }
    )
    llm = None
    if args.mode == "llm":
        if not settings.llm.configured:
            print("llm mode needs OPENAI_API_KEY (and OPENAI_BASE_URL for another endpoint)", file=sys.stderr)
            return 2
        llm = LLM(settings.llm)
    items = INTENDED[: args.limit] if args.limit else INTENDED
    path = ensure_demo(Path(settings.var_dir))
    databases = Databases(settings)
    start = time.perf_counter()
    try:
        runner = Runner(databases.get(DEMO), engine, llm, args.rounds, path)
        sessions = [runner.run(item) for item in items]
    finally:
        databases.close()
    summary = summarize(sessions, args.mode, args.rounds, time.perf_counter() - start)
    if args.details:
        with args.details.open("w") as fh:
            for s in sessions:
                record = {
                    "question": s.item.question,
                    "intended": s.item.intended,
                    "kind": s.item.kind,
                    "rounds": s.rounds,
                    "asked": s.asked,
                    "answers": s.answers,
                    "correct_after": s.correct_after,
                    "asked_twice": s.repeated,
                    "final_sql": s.final_sql,
                }
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(report(summary, args.rounds), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(summary))
    return 1 if summary["asked_twice"] else 0
