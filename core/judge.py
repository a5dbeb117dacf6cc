"""The judge: one cheap LLM call that picks between two candidates whose results differ.

CHESS's unit tester (papers/chess.txt §3.2, UT) asks the model to compare candidates against
tests that tell them apart; within Askbase's budget that is one call that sees the question,
the two queries, the tables they read (no example rows) and a preview of both results (the
first rows and the row count): differences in rows are what the model is shown, not asked to
imagine. The model first writes the unit tests (facts from the question's words the right result
must show) and picks the query that passes more. It returns which query answers the question — or that the question itself has two
readings, each with a plain label, so the person can be asked (core/clarify/choice.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.execute import ResultSet
from core.llm import LLM
from core.schema_text import cell

PREVIEW_ROWS = 5
PREVIEW_CELL = 40
LETTERS = ("A", "B")


class JudgeReply(BaseModel):
    # CHESS UT: facts the right result must show; any shape (a test may come back as an object)
    tests: list[Any] = Field(default_factory=list)
    choice: str | int = "A"
    ambiguous: bool = False
    question: str = ""
    readings: list[str] = Field(default_factory=list)
    why: str = ""


@dataclass(frozen=True)
class Shown:
    """One candidate as the judge sees it."""

    sql: str
    result: ResultSet
    note: str = ""  # what the writer said it is ("other reading: ...")


@dataclass(frozen=True)
class Verdict:
    choice: int  # index into the candidates shown
    ambiguous: bool = False
    question: str = ""
    readings: tuple[str, ...] = ()
    why: str = ""
    tests: tuple[str, ...] = ()

    def trace(self) -> dict[str, object]:
        return {
            "tests": list(self.tests),
            "choice": LETTERS[self.choice] if self.choice < len(LETTERS) else self.choice,
            "ambiguous": self.ambiguous,
            "question": self.question,
            "readings": list(self.readings),
            "why": self.why,
        }


def judge(question: str, shown: Sequence[Shown], tables: str, llm: LLM) -> Verdict:
    """Which of two candidates answers `question`. Raises LLMError when the call fails."""
    messages = prompts.render(
        "judge",
        tables=tables or "(not shown)",
        question=question,
        candidates="\n\n".join(_candidate(LETTERS[i], s) for i, s in enumerate(shown)),
    )
    reply = llm.json("judge", messages, JudgeReply)
    choice = _index(reply.choice, len(shown))
    readings = tuple(" ".join(r.split()) for r in reply.readings[: len(shown)] if r and r.strip())
    ambiguous = reply.ambiguous and len(readings) == len(shown) and len(set(readings)) == len(readings)
    return Verdict(
        choice=choice,
        ambiguous=ambiguous,
        question=" ".join(reply.question.split()),
        readings=readings,
        why=" ".join(reply.why.split())[:500],
        tests=tuple(" ".join(str(t).split())[:200] for t in reply.tests[:5] if str(t).strip()),
    )


def _index(choice: str | int, n: int) -> int:
    """'A', 'b', 'Query B', 2, '1' → an index; anything unreadable picks the first (the primary)."""
    if isinstance(choice, int):
        return choice - 1 if 1 <= choice <= n else 0
    text = choice.strip().upper()
    for i, letter in enumerate(LETTERS[:n]):
        if text in (letter, f"QUERY {letter}", f"CANDIDATE {letter}", str(i + 1)):
            return i
    return 0


def _candidate(letter: str, s: Shown) -> str:
    r = s.result
    more = f" (first {PREVIEW_ROWS} shown)" if len(r.rows) > PREVIEW_ROWS else ""
    lines = [
        f"Query {letter}" + (f" ({s.note})" if s.note else "") + ":",
        f"```sql\n{s.sql}\n```",
        f"Result: {len(r.rows)}{'+' if r.truncated else ''} row{'' if len(r.rows) == 1 else 's'}{more}",
        " | ".join(r.columns),
        *(" | ".join(cell(v, PREVIEW_CELL) for v in row) for row in r.rows[:PREVIEW_ROWS]),
    ]
    return "\n".join(lines)
