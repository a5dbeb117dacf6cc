"""Benchmark of verified-query reuse: precision, recall and match latency on a paraphrase set.

    python -m core.bench verified [--set FILE] [--details FILE] [--json]

The set (default tests/data/verified_paraphrases.json, over the bundled demo database) names the
verified queries an analyst vouched for, and questions asked against all of them: true matches
(other wording, other parameter values, with a hand-written gold SQL) and near misses that must
not be answered from any verified query (another measure, entity, grouping, an added or removed
filter, a negation, another period). Each verified query's parameters are found the way the
Verify button finds them (core/verified/params.py).

A reuse is right when it is the named verified query and its SQL, with the new values put in,
returns what the gold SQL returns. Anything else reused is a wrong reuse — the worst outcome, so
precision (right reuses / all reuses) comes first; recall is right reuses / true matches.
Latency is the matcher's time per question (reading it, looking up its values, matching it
against every verified query; the first question pays for loading the value index, so one
question is read first). The baseline, measured in the same run, reuses a verified query only
when the normalized question is exactly the verified one.

Targets (issue 19): precision ≥ 0.98, recall ≥ 0.80, p95 ≤ 20 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.database import Database, Databases
from core.execute import Limits, QueryError, execute
from core.normalize import normalize_question
from core.settings import ROOT, load_settings
from core.verified.lexicon import lexicon_for
from core.verified.match import Template, match, template
from core.verified.params import detect
from core.verified.query import VerifiedQuery
from core.verified.substitute import SubstitutionError, substitute

DEFAULT_SET = ROOT / "tests" / "data" / "verified_paraphrases.json"
TARGETS = {"precision": 0.98, "recall": 0.80, "p95_ms": 20.0}


@dataclass(frozen=True)
class Case:
    question: str
    verified: str | None  # the verified query it is about (the one it matches, or is near)
    match: bool
    kind: str
    gold_sql: str = ""


@dataclass(frozen=True)
class ParaphraseSet:
    database: str
    verified: tuple[tuple[str, str, str], ...]  # (name, question, sql)
    cases: tuple[Case, ...]


def load_set(path: Path = DEFAULT_SET) -> ParaphraseSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    return ParaphraseSet(
        database=data["database"],
        verified=tuple((v["id"], v["question"], v["sql"]) for v in data["verified"]),
        cases=tuple(
            Case(c["question"], c.get("verified"), bool(c["match"]), c.get("kind", ""), c.get("gold_sql", ""))
            for c in data["cases"]
        ),
    )


def verified_queries(db: Database, pset: ParaphraseSet) -> dict[str, VerifiedQuery]:
    """The set's verified queries, with parameters found as the Verify button finds them."""
    lexicon = lexicon_for(db)
    tables = [t.name for t in db.catalog.tables]
    out = {}
    for n, (name, question, sql) in enumerate(pset.verified, start=1):
        found = detect(question, sql, db.catalog.dialect, lexicon, tables)
        out[name] = VerifiedQuery(
            id=n,
            database=db.name,
            question=question,
            sql=sql,
            dialect=db.catalog.dialect,
            params=found.params,
            reusable=found.reusable,
            note=found.note,
        )
    return out


@dataclass
class Outcome:
    question: str
    kind: str
    expected: str | None
    match: bool
    reused: str | None = None  # the verified query answered from
    sql: str = ""
    verdict: str = ""  # right | wrong | missed | declined
    why: str = ""
    ms: float = 0.0
    near: list[str] = field(default_factory=list)


@dataclass
class Scores:
    name: str
    outcomes: list[Outcome]

    def count(self, verdict: str) -> int:
        return sum(1 for o in self.outcomes if o.verdict == verdict)

    @property
    def precision(self) -> float:
        reused = self.count("right") + self.count("wrong")
        return self.count("right") / reused if reused else 1.0

    @property
    def recall(self) -> float:
        positives = sum(1 for o in self.outcomes if o.match)
        return self.count("right") / positives if positives else 0.0

    def percentile(self, q: float) -> float:
        times = sorted(o.ms for o in self.outcomes)
        if not times:
            return 0.0
        return times[min(len(times) - 1, max(0, round(q * (len(times) - 1))))]

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cases": len(self.outcomes),
            "true_matches": sum(1 for o in self.outcomes if o.match),
            "reused_right": self.count("right"),
            "reused_wrong": self.count("wrong"),
            "missed": self.count("missed"),
            "declined": self.count("declined"),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "wrong_rate": round(self.count("wrong") / max(1, len(self.outcomes)), 4),
            "p50_ms": round(self.percentile(0.5), 3),
            "p95_ms": round(self.percentile(0.95), 3),
            "mean_ms": round(statistics.fmean(o.ms for o in self.outcomes), 3) if self.outcomes else 0.0,
        }


def _rows(db: Database, sql: str) -> list[tuple[Any, ...]] | str:
    try:
        result = execute(db, sql, Limits(row_cap=10_000, byte_cap=50_000_000, timeout_s=30))
    except QueryError as exc:
        return f"error: {exc.message}"
    return [tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in result.rows]


def _same(db: Database, sql: str, gold: str) -> bool:
    got, want = _rows(db, sql), _rows(db, gold)
    if isinstance(got, str) or isinstance(want, str):
        return False
    if "order by" in gold.lower():
        return got == want
    return sorted(map(repr, got)) == sorted(map(repr, want))


Decide = Callable[[str], tuple[VerifiedQuery | None, str, list[str]]]


def _judge(db: Database, case: Case, by_id: dict[int, str], decide: Decide) -> Outcome:
    start = time.perf_counter()
    chosen, sql_or_why, near = decide(case.question)
    ms = (time.perf_counter() - start) * 1000
    out = Outcome(case.question, case.kind, case.verified, case.match, ms=ms, near=near)
    if chosen is None:
        out.verdict = "missed" if case.match else "declined"
        out.why = sql_or_why
        return out
    out.reused = by_id[chosen.id]
    out.sql = sql_or_why
    if not case.match:
        out.verdict, out.why = "wrong", "a near miss was answered from a verified query"
    elif out.reused != case.verified:
        out.verdict, out.why = "wrong", f"answered from {out.reused}, not {case.verified}"
    elif not _same(db, sql_or_why, case.gold_sql):
        out.verdict, out.why = "wrong", "the substituted SQL does not return what the gold SQL returns"
    else:
        out.verdict = "right"
    return out


def evaluate(db: Database, pset: ParaphraseSet) -> tuple[Scores, Scores, dict[str, VerifiedQuery]]:
    """(matcher, exact-match baseline, the verified queries), each case timed."""
    queries = verified_queries(db, pset)
    by_id = {q.id: name for name, q in queries.items()}
    pool = list(queries.values())
    lexicon = lexicon_for(db)

    def templates(q: VerifiedQuery) -> Template:
        return lexicon.memo(("template", q), lambda: template(q, lexicon))

    for q in pool:  # as in a running process: the verified questions are read once, when loaded
        templates(q)
    match("How many rows are there?", pool, lexicon, templates)  # opens the value index

    def matcher(question: str) -> tuple[VerifiedQuery | None, str, list[str]]:
        m = match(question, pool, lexicon, templates)
        near = [by_id[q.id] for q in m.near]
        if m.reuse is None:
            return None, m.why, near
        try:
            return m.reuse.query, substitute(m.reuse.query.sql, m.reuse.query.dialect, m.reuse.bindings), near
        except SubstitutionError as exc:
            return None, str(exc), near

    exact = {normalize_question(q.question): q for q in pool}

    def baseline(question: str) -> tuple[VerifiedQuery | None, str, list[str]]:
        q = exact.get(normalize_question(question))
        return (q, q.sql, []) if q is not None else (None, "not the same words", [])

    ours = Scores("matcher", [_judge(db, c, by_id, matcher) for c in pset.cases])
    base = Scores("exact normalized match", [_judge(db, c, by_id, baseline) for c in pset.cases])
    return ours, base, queries


def _print(ours: Scores, base: Scores, queries: dict[str, VerifiedQuery], pset: ParaphraseSet) -> None:
    n_match = sum(1 for c in pset.cases if c.match)
    print(
        f"Paraphrase set: {len(pset.cases)} questions over '{pset.database}' — {n_match} true matches, "
        f"{len(pset.cases) - n_match} near misses — against {len(queries)} verified queries."
    )
    for name, q in queries.items():
        flag = "" if q.reusable else f"  (not reusable: {q.note})"
        print(f"  #{q.id} {name}: parameters {q.describe_params()}{flag}")
    print()
    head = f"{'':24} {'precision':>9} {'recall':>7} {'right':>6} {'wrong':>6} {'missed':>7} {'p50 ms':>8} {'p95 ms':>8}"
    print(head)
    for s in (ours, base):
        d = s.summary()
        print(
            f"{s.name:24} {d['precision']:>9.3f} {d['recall']:>7.3f} {d['reused_right']:>6} "
            f"{d['reused_wrong']:>6} {d['missed']:>7} {d['p50_ms']:>8.2f} {d['p95_ms']:>8.2f}"
        )
    d = ours.summary()
    checks = [
        ("precision", d["precision"] >= TARGETS["precision"], f"≥ {TARGETS['precision']}"),
        ("recall", d["recall"] >= TARGETS["recall"], f"≥ {TARGETS['recall']}"),
        ("p95 latency", d["p95_ms"] <= TARGETS["p95_ms"], f"≤ {TARGETS['p95_ms']:.0f} ms"),
    ]
    print("\nTargets: " + ", ".join(f"{n} {t} {'ok' if ok else 'MISSED'}" for n, ok, t in checks))
    wrong = [o for o in ours.outcomes if o.verdict == "wrong"]
    missed = [o for o in ours.outcomes if o.verdict == "missed"]
    if wrong:
        print("\nWrong reuses:")
        for o in wrong:
            print(f"  {o.question!r} ({o.kind}) → {o.reused}: {o.why}")
    if missed:
        print("\nTrue matches not reused:")
        for o in missed:
            print(f"  {o.question!r} ({o.kind}): {o.why[:160]}")
    kinds: dict[str, list[Outcome]] = {}
    for o in ours.outcomes:
        if not o.match:
            kinds.setdefault(o.kind, []).append(o)
    near_ok = sum(1 for o in ours.outcomes if not o.match and o.verdict == "declined")
    print(f"\nNear misses declined: {near_ok} of {sum(1 for o in ours.outcomes if not o.match)}")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench verified", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the paraphrase set (JSON)")
    parser.add_argument("--details", type=Path, help="write every case's outcome here (JSON)")
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    args = parser.parse_args(list(argv))
    pset = load_set(args.set)
    settings = load_settings()
    databases = Databases(settings)
    try:
        db = databases.get(pset.database)
        ours, base, queries = evaluate(db, pset)
    finally:
        databases.close()
    _print(ours, base, queries, pset)
    if args.details:
        args.details.write_text(
            json.dumps([o.__dict__ for o in [*ours.outcomes]], indent=1, ensure_ascii=False), encoding="utf-8"
        )
    if args.json:
        print(json.dumps({"matcher": ours.summary(), "baseline": base.summary(), "targets": TARGETS}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
