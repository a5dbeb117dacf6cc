"""A conversation: earlier questions and what was answered, so follow-ups can refer back to them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_TURNS = 4  # earlier turns shown to the LLM; older ones rarely matter and cost tokens


@dataclass(frozen=True)
class Turn:
    question: str
    sql: str = ""
    columns: tuple[str, ...] = ()
    row_count: int = 0
    answer: str = ""


def describe_history(history: Sequence[Turn]) -> str:
    lines = []
    for i, turn in enumerate(history[-MAX_TURNS:], 1):
        lines.append(f"{i}. Question: {turn.question}")
        if turn.sql:
            lines.append(f"   SQL: {' '.join(turn.sql.split())}")
        if turn.columns:
            lines.append(f"   Result columns: {', '.join(turn.columns)} ({turn.row_count} rows)")
    return "\n".join(lines)
