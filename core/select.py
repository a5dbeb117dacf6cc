"""Select stage: which of the writer's candidates becomes the answer, decided by running them.

CHESS generates candidates and keeps the one that passes its tests; here the test that costs
nothing comes first — run every candidate and compare what they return (core/results.py, the
comparison the benchmark uses):

- both ran and returned the same rows: they agree, the primary is the answer (no LLM call);
- one ran with rows and the other failed or returned nothing: the one with rows (no call);
- both ran with different rows: `disagree` — a judge call decides (core/judge.py), or asks the
  person when the difference is a real ambiguity of the question;
- none returned rows: `failed` (errors, refusals) or `vacuous` (only empty or zero results),
  for the reviser.

A pure function of the runs, so the rules are testable without a database or a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.generate import Candidate
from core.results import same_rows
from core.run import Run

Decision = Literal["single", "agree", "one", "disagree", "vacuous", "failed"]


@dataclass(frozen=True)
class Tried:
    candidate: Candidate
    run: Run

    @property
    def ran(self) -> bool:
        return self.run.result is not None

    @property
    def answers(self) -> bool:
        """It ran and returned something other than nothing (rows, not only NULLs and zeros)."""
        return self.run.result is not None and not self.run.result.vacuous


@dataclass(frozen=True)
class Selection:
    decision: Decision
    chosen: Tried | None  # None for "disagree" (the judge picks) and "failed"
    tried: tuple[Tried, ...]

    def trace(self) -> dict[str, object]:
        return {
            "candidates": len(self.tried),
            "ran": sum(1 for t in self.tried if t.ran),
            "decision": self.decision,
            "chosen": self.chosen.candidate.label if self.chosen is not None else None,
            "sql": {t.candidate.label: t.run.sql for t in self.tried},
        }


def select(tried: Sequence[Tried]) -> Selection:
    runs = tuple(tried)
    answering = [t for t in runs if t.answers]
    ran = [t for t in runs if t.ran]
    if len(runs) == 1:
        only = runs[0]
        decision: Decision = "single" if only.answers else "vacuous" if only.ran else "failed"
        return Selection(decision, only if only.ran else None, runs)
    if len(answering) >= 2:
        first, second = answering[0], answering[1]
        assert first.run.result is not None and second.run.result is not None
        if same_rows(first.run.result.rows, second.run.result.rows):
            return Selection("agree", first, runs)
        return Selection("disagree", None, runs)
    if len(answering) == 1:
        return Selection("one", answering[0], runs)
    if ran:
        return Selection("vacuous", ran[0], runs)
    return Selection("failed", None, runs)
