"""The transcript of a clarification: the questions asked back, the answers, the rejected SQL.

Sphinteract (papers/sphinteract.txt §6.2, Algorithm 1) keeps two lists per question — the SQL
the person rejected and the (clarifying question, answer) pairs — and feeds both to the SQL
writer and to the next Summarize–Review–Ask round. This module is those lists as plain data:
JSON for the state database, text for prompts, and the keys that stop a question being asked
twice (the same words, a near paraphrase, or the same set of candidates).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rapidfuzz import fuzz

from core.redact import scrub_question

FEEDBACK = "feedback"  # kind of an exchange that carries what the person said after 👎
SIMILAR = 90  # rapidfuzz ratio from which two clarifying questions count as the same question
PARAPHRASE = 80  # ... and the token-set ratio from which they do, when they offer the same options


def normalize(text: str) -> str:
    """Lower case, accents and punctuation gone, single spaces: how questions are compared."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", folded).split())


def options_key(values: Iterable[str]) -> str:
    """The set of candidates a question offers, whatever its wording or order."""
    return "|".join(sorted({normalize(v) if not v.startswith("reading:") else v for v in values if v}))


@dataclass(frozen=True)
class Exchange:
    """One clarifying question and the person's answer (Sphinteract's (MCQ, feedback) pair)."""

    question: str
    answer: str  # the chosen option's label, or the person's own words ("Other…")
    kind: str = "AmbQuestion"  # AmbQuestion | AmbTableColumn | AmbOutput | AmbValue | feedback
    options: tuple[str, ...] = ()  # the labels that were offered
    value: str = ""  # the chosen option's value; "" when the person answered in their own words
    key: str = ""  # options_key of what was offered

    @property
    def own_words(self) -> bool:
        return not self.value

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "kind": self.kind,
            "options": list(self.options),
            "value": self.value,
            "key": self.key,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Exchange:
        return cls(
            question=str(data.get("question", "")),
            answer=str(data.get("answer", "")),
            kind=str(data.get("kind", "AmbQuestion")),
            options=tuple(str(o) for o in data.get("options") or ()),
            value=str(data.get("value") or ""),
            key=str(data.get("key") or ""),
        )


@dataclass(frozen=True)
class Transcript:
    """Everything the person has told us about one question so far."""

    exchanges: tuple[Exchange, ...] = ()
    rejected_sql: tuple[str, ...] = ()
    # Option values the engine took without asking (keyword mode settles a tied reading when the
    # rules say not to ask): pinned like a chosen option, never counted or shown as an answer.
    assumed: tuple[str, ...] = ()

    @classmethod
    def of(cls, exchanges: Sequence[Exchange] = (), rejected_sql: Sequence[str] = ()) -> Transcript:
        return cls(tuple(exchanges), tuple(s for s in rejected_sql if s))

    def plus(self, exchange: Exchange) -> Transcript:
        return replace(self, exchanges=(*self.exchanges, exchange))

    def assuming(self, value: str) -> Transcript:
        return replace(self, assumed=(*self.assumed, value))

    def without_secrets(self) -> tuple[Transcript, bool]:
        """This transcript with secrets removed from what the person wrote in their own words (an
        "Other…" answer, a comment after 👎: core/redact.py), and whether any was there."""
        scrubbed = [scrub_question(e.answer) for e in self.exchanges]
        exchanges = tuple(
            replace(e, answer=answer) for e, (answer, _) in zip(self.exchanges, scrubbed, strict=True)
        )
        return replace(self, exchanges=exchanges), any(removed for _, removed in scrubbed)

    def rejecting(self, sql: str) -> Transcript:
        if not sql or sql in self.rejected_sql:
            return self
        return replace(self, rejected_sql=(*self.rejected_sql, sql))

    @property
    def rounds(self) -> int:
        """Clarifying questions answered (what `clarify_max_rounds` bounds)."""
        return sum(1 for e in self.exchanges if e.kind != FEEDBACK)

    @property
    def choices(self) -> tuple[str, ...]:
        """The values of the chosen (or assumed) options: the readings the engine pins."""
        return (*(e.value for e in self.exchanges if e.value), *self.assumed)

    def already_asked(self, question: str, key: str = "", options: Iterable[str] = ()) -> bool:
        """True when the same set of options, the same question, or a paraphrase of it offering
        some of the same options was asked before (Sphinteract §7.5: repeated questions loop)."""
        text = normalize(question)
        offered = {normalize(o) for o in options}
        for e in self.exchanges:
            if e.kind == FEEDBACK:
                continue
            if key and e.key == key:
                return True
            before = normalize(e.question)
            if text and fuzz.ratio(text, before) >= SIMILAR:
                return True
            shared = offered & {normalize(o) for o in e.options}
            if text and shared and fuzz.token_set_ratio(text, before) >= PARAPHRASE:
                return True
        return False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "exchanges": [e.to_json() for e in self.exchanges],
            "rejected_sql": list(self.rejected_sql),
        }
        if self.assumed:
            data["assumed"] = list(self.assumed)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Transcript:
        data = data or {}
        read = cls.of(
            [Exchange.from_json(e) for e in data.get("exchanges") or ()],
            [str(s) for s in data.get("rejected_sql") or ()],
        )
        return replace(read, assumed=tuple(str(v) for v in data.get("assumed") or ()))


def describe(exchanges: Sequence[Exchange], rejected_sql: Sequence[str]) -> str:
    """The transcript as prompt text: what the SQL writer and the next SRA round must respect."""
    lines: list[str] = []
    if rejected_sql:
        lines.append("Queries the user rejected as wrong answers to this question (do not repeat them):")
        for i, sql in enumerate(rejected_sql, 1):
            lines.append(f"{i}. {' '.join(sql.split())}")
    said = [e for e in exchanges if e.kind == FEEDBACK]
    asked = [e for e in exchanges if e.kind != FEEDBACK]
    for e in said:
        lines.append(f"The user said what was wrong: {e.answer}")
    if asked:
        lines.append("Clarifying questions already asked, and the user's answers:")
        for i, e in enumerate(asked, 1):
            offered = f" (options: {'; '.join(e.options)})" if e.options else ""
            how = " (in their own words)" if e.own_words else ""
            lines.append(f"{i}. Question: {e.question}{offered}")
            lines.append(f"   The user answered{how}: {e.answer}")
    return "\n".join(lines)


def with_answers(question: str, exchanges: Sequence[Exchange]) -> str:
    """The question with the person's answers attached, for the understanding step."""
    answers = [f"{e.question} → {e.answer}" for e in exchanges if e.kind != FEEDBACK]
    said = [e.answer for e in exchanges if e.kind == FEEDBACK and e.answer]
    notes = [*answers, *(f"the previous answer was wrong: {s}" for s in said)]
    if not notes:
        return question
    return f"{question} (The user clarified: {'; '.join(notes)})"
