"""How LLM mode's candidates were chosen, per question and in total (issue 13: "report how often
candidates agree and how often the pick was right").

Read from the trace the pipeline leaves: the select stage says how the run went (both agreed,
one answered, they disagreed, none answered), the judge stage what the judge chose and whether
it asked the person. For a judged question the benchmark also runs the candidate that was *not*
chosen against the gold, so "the judge picked wrong" can be told from "both were wrong".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.trace import Trace


@dataclass(frozen=True)
class CandidateRecord:
    decision: str  # single | agree | one | disagree | vacuous | failed (core/select.py)
    judged: bool = False
    asked: bool = False  # the judge called it ambiguous and the person was asked
    other_right: bool | None = None  # judged: would the candidate not chosen have been right?
    revised: int = 0  # revise calls

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "judged": self.judged,
            "asked": self.asked,
            "other_right": self.other_right,
            "revised": self.revised,
        }


def record_of(trace: Trace, right: Callable[[str], bool]) -> CandidateRecord | None:
    """The record of one LLM-mode question; `right(sql)` runs a candidate against the gold."""
    select = next((s for s in trace.stages if s.name == "select"), None)
    if select is None:
        return None
    judge = next((s for s in trace.stages if s.name == "judge"), None)
    revised = sum(1 for s in trace.stages if s.name == "revise")
    decision = str(select.outputs.get("decision", ""))
    if judge is None or "choice" not in judge.outputs:
        return CandidateRecord(decision=decision, judged=judge is not None, revised=revised)
    sql: dict[str, str] = dict(select.outputs.get("sql") or {})
    labels = list(sql)
    chosen = 0 if judge.outputs["choice"] == "A" else 1
    other = labels[1 - chosen] if len(labels) == 2 else None
    asked = bool(judge.outputs.get("ambiguous")) and "not_asked" not in judge.outputs
    return CandidateRecord(
        decision=decision,
        judged=True,
        asked=asked,
        other_right=right(sql[other]) if other is not None and not asked else None,
        revised=revised,
    )


def tally(records: Sequence[tuple[CandidateRecord, bool]]) -> dict[str, Any]:
    """`records`: each question's record and whether its answer was right."""
    by = Counter(r.decision for r, _ in records)
    right = Counter(r.decision for r, ok in records if ok)
    judged = [(r, ok) for r, ok in records if r.judged and not r.asked and r.other_right is not None]
    return {
        "questions": len(records),
        "decisions": dict(by),
        "right_by_decision": dict(right),
        "judged": sum(1 for r, _ in records if r.judged),
        "asked_back": sum(1 for r, _ in records if r.asked),
        "judge_picked_right": sum(1 for _, ok in judged if ok),
        "judge_other_right": sum(1 for r, _ in judged if r.other_right),
        "judge_both_wrong": sum(1 for r, ok in judged if not ok and not r.other_right),
        "revised": sum(1 for r, _ in records if r.revised),
    }


def text(t: dict[str, Any]) -> str:
    by, right = t["decisions"], t["right_by_decision"]
    parts = [f"{d} {by[d]} (right {right.get(d, 0)})" for d in sorted(by)]
    return (
        f"candidates: {', '.join(parts)}; judged {t['judged']}: picked right {t['judge_picked_right']}, "
        f"the other was right {t['judge_other_right']}, both wrong {t['judge_both_wrong']}, "
        f"asked back {t['asked_back']}; revised {t['revised']}"
    )
