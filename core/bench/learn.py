"""Learning bench: definitions proposed from corrections on one half of a question set, measured
on the other half.

    python -m core.bench learn --dataset DIR|insurance [--seed S] [--workers N] [--out FILE] [--json]

What it does, in one run:
1. split the questions in two halves at random (seeded): *learn* and *measure*;
2. answer the learn half in LLM mode with no definitions (`llm-bare`); every question answered
   wrong (or not at all) is "corrected" with its gold SQL, and core/definitions/learn.py proposes
   the definitions the wrong answer missed — checked against the schema, deduplicated;
3. answer the measure half twice: with no definitions, and with the learned ones (as if an
   analyst had approved every proposal), and print both, with the wrong rate.

The measure half never feeds the learning, so the figure says what corrections teach about
*other* questions. The learned definitions are written to `--out` (YAML, the format of
core/definitions/load.py) to be read. Uses the configured LLM endpoint (the relay, for a real
model: ../shared/tools/README.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from core.bench.ask import (
    DEMO,
    INSURANCE,
    Harness,
    Question,
    Result,
    gold_baseline_ms,
    insurance_dataset,
    load_questions,
    report,
    run_modes,
    summarize,
)
from core.data_rules import rules_policy
from core.definitions.learn import from_correction
from core.definitions.load import dump_yaml
from core.definitions.model import Definition, Definitions
from core.schema_text import ASKBASE, ddl_text
from core.settings import load_settings


def split(questions: list[Question], seed: int) -> tuple[list[Question], list[Question]]:
    """Two halves at random (seeded), each in the dataset's order."""
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    learn = set(order[: len(order) // 2])
    return [q for i, q in enumerate(questions) if i in learn], [
        q for i, q in enumerate(questions) if i not in learn
    ]


def learned_from(results: list[Result], dataset: Path) -> tuple[list[Definition], list[str]]:
    """Definitions proposed from every wrong or unanswered question of the learn half."""
    harness = Harness(dataset, ["llm"])
    learned: dict[str, Definition] = {}
    notes: list[str] = []
    try:
        assert harness.llm is not None
        for r in results:
            if r.correct:
                continue
            db = harness.database(r.q)
            base = Definitions(tuple(learned.values()))
            policy = rules_policy(db)
            got = from_correction(
                r.q.question,
                r.sql or "-- no SQL: the question was not answered",
                r.q.gold_sql,
                db.catalog,
                base,
                harness.llm,
                schema_text=ddl_text(db, ASKBASE),
                policy=policy,
                origin=f"correction of: {r.q.question[:80]}",
            )
            for d in got.proposed:
                learned.setdefault(d.ref, d)
            notes.extend(got.dropped)
    finally:
        harness.close()
    return list(learned.values()), notes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench learn", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", type=Path, required=True, help="folder with questions.json, or 'insurance'"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the learned definitions here (YAML)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    dataset: Path = args.dataset
    if str(dataset) == INSURANCE:
        dataset = insurance_dataset(Path(load_settings().var_dir))
    if str(dataset) == DEMO or not (dataset / "questions.json").is_file():
        print(f"no questions.json in {dataset}", file=sys.stderr)
        return 2
    learn, measure = split(load_questions(dataset), args.seed)
    progress = not args.quiet
    first = run_modes(learn, dataset, ["llm-bare"], progress=progress, workers=args.workers)["llm-bare"]
    learned, dropped = learned_from(first, dataset)
    out = args.out or Path(load_settings().var_dir) / "bench" / f"learned-{dataset.name}-{args.seed}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_yaml(learned))
    bare = run_modes(measure, dataset, ["llm-bare"], progress=progress, workers=args.workers)["llm-bare"]
    taught = run_modes(measure, dataset, ["llm"], progress=progress, workers=args.workers, definitions=out)[
        "llm"
    ]
    gold_ms = gold_baseline_ms(measure, dataset)
    summary: dict[str, Any] = {
        "seed": args.seed,
        "learn_questions": len(learn),
        "learn_correct_without": sum(r.correct for r in first),
        "learned": [f"{d.kind} '{d.name}'" for d in learned],
        "dropped": dropped,
        "definitions_file": str(out),
        "measure_questions": len(measure),
        "without": summarize(bare, gold_ms, "llm-bare", dataset),
        "with_learned": summarize(taught, gold_ms, "llm", dataset),
    }
    text = sys.stderr if args.json else sys.stdout
    print(
        f"learn half: {len(learn)} questions, {summary['learn_correct_without']} right without definitions;",
        file=text,
    )
    print(
        f"learned {len(learned)} definitions ({len(dropped)} proposals dropped), written to {out}:", file=text
    )
    for name in summary["learned"]:
        print(f"  {name}", file=text)
    print(f"\n== measure half ({len(measure)} questions), no definitions ==", file=text)
    print(report(summary["without"]), file=text)
    print("\n== measure half, with the learned definitions ==", file=text)
    print(report(summary["with_learned"]), file=text)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, default=str))
    return 0
