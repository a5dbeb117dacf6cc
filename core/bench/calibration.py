"""Is keyword mode's confidence worth trusting? A reliability table for `core.bench ask --mode keyword`.

Keyword mode computes a confidence for every reading it could answer (core/keyword/confidence.py)
and answers only those at or above `engine.keyword_min_confidence`. To show what that threshold
buys, the benchmark runs keyword mode with no threshold, so every complete reading is executed
and checked against the gold, then applies the configured threshold itself: answers below it
count as abstentions, exactly as keyword mode would have declined them. The table buckets the
answers by confidence (how many, how many right, how many wrong), and the trade-off lists what
other thresholds would have given — answered, wrong, wrong rate, execution accuracy — so the
threshold in config is a measured choice, not a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import Field, dataclass, replace
from typing import Any, ClassVar, Protocol, TypeVar

from core.trace import Trace

EDGES = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)
THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


class Scored(Protocol):
    """What the table needs of one benchmark result: a dataclass (`thresholded` replaces fields)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def status(self) -> str: ...
    @property
    def correct(self) -> bool: ...
    @property
    def confidence(self) -> float | None: ...


R = TypeVar("R", bound=Scored)


def confidence_of(trace: Trace) -> float | None:
    """The confidence keyword mode computed for its reading (its 'confidence' stage), if any."""
    for stage in trace.stages:
        if stage.name == "confidence" and isinstance(stage.outputs, dict) and "score" in stage.outputs:
            return float(stage.outputs["score"])
    return None


def thresholded(results: Sequence[R], threshold: float) -> list[R]:
    """The results as keyword mode answers at `threshold`: answers below it become abstentions."""
    out = []
    for r in results:
        if r.status == "answer" and r.confidence is not None and r.confidence < threshold:
            r = replace(r, status="abstain", correct=False, error="below the confidence threshold")
        out.append(r)
    return out


@dataclass(frozen=True)
class Bucket:
    low: float
    high: float
    answered: int
    correct: int

    @property
    def wrong(self) -> int:
        return self.answered - self.correct


def reliability(results: Sequence[Scored]) -> list[Bucket]:
    """Answers bucketed by confidence, [low, high)."""
    buckets = []
    for low, high in itertools.pairwise(EDGES):
        inside = [
            r
            for r in results
            if r.status == "answer" and r.confidence is not None and low <= r.confidence < high
        ]
        buckets.append(Bucket(low, min(high, 1.0), len(inside), sum(r.correct for r in inside)))
    return buckets


def tradeoff(results: Sequence[Scored], thresholds: Sequence[float] = THRESHOLDS) -> list[dict[str, Any]]:
    """What each threshold would give: answered, correct, wrong, wrong rate and EX."""
    n = max(len(results), 1)
    rows = []
    for t in thresholds:
        kept = [r for r in thresholded(results, t) if r.status == "answer"]
        right = sum(r.correct for r in kept)
        rows.append(
            {
                "threshold": t,
                "answered": len(kept),
                "correct": right,
                "wrong": len(kept) - right,
                "wrong_rate": round((len(kept) - right) / len(kept), 4) if kept else 0.0,
                "ex": round(right / n, 4),
            }
        )
    return rows


def summary(results: Sequence[Scored], threshold: float) -> dict[str, Any]:
    """The reliability table and the trade-off as JSON (for --json)."""
    return {
        "threshold": threshold,
        "reliability": [
            {"low": b.low, "high": b.high, "answered": b.answered, "correct": b.correct, "wrong": b.wrong}
            for b in reliability(results)
        ],
        "tradeoff": tradeoff(results, sorted({*THRESHOLDS, threshold})),
    }


def report(results: Sequence[Scored], threshold: float) -> str:
    """The reliability table over every complete reading, and the threshold in use."""
    lines = [
        f"keyword-mode confidence (threshold in use: {threshold:.2f}, engine.keyword_min_confidence)",
        f"{'confidence':>12} {'answers':>7} {'correct':>7} {'wrong':>5} {'wrong %':>7}",
    ]
    for b in reliability(results):
        rate = f"{b.wrong / b.answered:.0%}" if b.answered else "-"
        mark = "  (declined)" if b.high <= threshold else ""
        lines.append(
            f"{b.low:>5.2f}–{b.high:<5.2f} {b.answered:>7} {b.correct:>7} {b.wrong:>5} {rate:>7}{mark}"
        )
    lines.append(f"{'threshold':>12} {'answered':>8} {'correct':>7} {'wrong':>5} {'wrong %':>7} {'ex':>6}")
    for row in tradeoff(results, sorted({*THRESHOLDS, threshold})):
        mark = "  ← in use" if row["threshold"] == threshold else ""
        lines.append(
            f"{row['threshold']:>12.2f} {row['answered']:>8} {row['correct']:>7} {row['wrong']:>5} "
            f"{row['wrong_rate']:>7.1%} {row['ex']:>6.1%}{mark}"
        )
    return "\n".join(lines)
