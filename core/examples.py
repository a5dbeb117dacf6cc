"""Confirmed question → SQL examples, chosen per question as few-shot examples (DANKE §3).

Examples come from 👍 feedback (stored in the state database); the generator sees the few
whose questions are most like the new one. A verified query the question nearly matches (but not
surely enough to answer from it) comes pinned, and is always among them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils

MIN_SIMILARITY = 40.0  # below this an example teaches the model nothing about the question


@dataclass(frozen=True)
class Example:
    question: str
    sql: str
    database: str = ""
    # Chosen for this question before ranking (a verified query the question nearly matches,
    # core/trusted.py): always shown, first.
    pinned: bool = False


def most_similar(question: str, examples: Iterable[Example], k: int = 3) -> list[Example]:
    pool = list(examples)
    if not pool or k <= 0:
        return []
    pinned = [e for e in pool if e.pinned][:k]
    if pinned:
        rest = [e for e in pool if not e.pinned and all(e.question != p.question for p in pinned)]
        return [*pinned, *most_similar(question, rest, k - len(pinned))]
    ranked = process.extract(
        question,
        [e.question for e in pool],
        scorer=fuzz.token_set_ratio,
        processor=utils.default_process,
        limit=k,
        score_cutoff=MIN_SIMILARITY,
    )
    return [pool[index] for _, _, index in ranked]
