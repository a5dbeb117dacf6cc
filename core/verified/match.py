"""Does a new question ask what a verified question asked, with other values? (no LLM, no SQL run)

Both questions are read the same way (core/verified/reading.py). The verified question's
parameters are its slots; every way of filling them with spans of the new question is tried, and
a fill counts when the two shapes are equal: the same concepts, the same slots in the same roles,
the same head. Equality, not similarity: a missing or extra word that means something ("active",
"per city", "not", "average") makes another question. Similar questions are still useful to the
SQL writer, so they come back as near matches (few-shot examples), never as reuse.

A match is confident only when every value it fills names a stored value surely
(core/verified/params.py `surely`) and the question fits exactly one way, on exactly one verified
SQL. Anything less is a near match.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from core.normalize import normalize_question
from core.verified.params import surely
from core.verified.query import VerifiedQuery
from core.verified.reading import Lexicon, Reading, Shape, SlotKind, Span, read, shape
from core.verified.substitute import Binding, SubstitutionError, substitute

MAX_FILLS = 256  # ways of filling one verified query's slots that are tried
NEAR_TEXT = 70.0  # token-set similarity of the normalized questions that makes a near match
MAX_NEAR = 2


@dataclass(frozen=True)
class Template:
    """A verified question read with its parameters as slots."""

    query: VerifiedQuery
    shape: Shape | None  # None: its parameters no longer fit its own question (e.g. a changed catalog)


@dataclass(frozen=True)
class Match:
    query: VerifiedQuery
    bindings: tuple[Binding, ...]
    confident: bool
    shape: Shape

    def describe(self) -> str:
        changes = "; ".join(
            f"{b.param.name}: {b.param.shown} → {b.shown}" + ("" if b.score >= 1 else f" ({b.score:.2f})")
            for b in self.bindings
        )
        return (
            f"verified #{self.query.id} ({self.query.question!r}) reads the same: {self.shape.describe()}"
            + (f"; {changes}" if changes else "")
        )


@dataclass(frozen=True)
class Matching:
    """The matcher's answer: a verified query to answer from (or none), and near ones."""

    reuse: Match | None
    near: tuple[VerifiedQuery, ...]
    considered: int
    why: str  # in words, for the trace


def template(query: VerifiedQuery, lexicon: Lexicon) -> Template:
    reading = read(query.question, lexicon)
    chosen = []
    for p in query.params:
        span = _span_at(reading, p.start, p.end, p.kind)
        if span is None:
            return Template(query, None)
        chosen.append((span, p.label))
    return Template(query, shape(reading, chosen))


def _span_at(reading: Reading, start: int, end: int, kind: SlotKind) -> Span | None:
    inside = [i for i, t in enumerate(reading.tokens) if t.start >= start and t.end <= end]
    if not inside:
        return None
    first, last = inside[0], inside[-1]
    return Span(first, last, kind, reading.question[start:end], start, end)


def match(
    question: str,
    queries: Sequence[VerifiedQuery],
    lexicon: Lexicon,
    templates: Callable[[VerifiedQuery], Template] | None = None,
) -> Matching:
    """Match `question` against `queries` (the active, fresh verified queries of one database)."""
    reading = read(question, lexicon)
    found: list[Match] = []
    for q in queries:
        t = templates(q) if templates is not None else template(q, lexicon)
        if t.shape is not None:
            found.extend(_fills(reading, t, t.shape))
    sure = [m for m in found if m.confident and m.query.reusable]
    reuse, why = _one(sure)
    near_ids = {m.query.id for m in found if reuse is None or m.query.id != reuse.query.id}
    normalized = normalize_question(question)
    for q in queries:
        if (reuse is None or q.id != reuse.query.id) and fuzz.token_set_ratio(
            normalized, normalize_question(q.question)
        ) >= NEAR_TEXT:
            near_ids.add(q.id)
    near = tuple(q for q in queries if q.id in near_ids)[:MAX_NEAR]
    if reuse is None and not why:
        unsure = [m for m in found if not (m.confident and m.query.reusable)]
        why = (
            f"near: {unsure[0].describe()} — not sure enough to answer from it"
            if unsure
            else "no verified question reads the same"
        )
    return Matching(reuse=reuse, near=near, considered=len(queries), why=why)


def _one(sure: list[Match]) -> tuple[Match | None, str]:
    """The one reuse the confident matches agree on; none when they disagree."""
    if not sure:
        return None, ""
    try:
        answers = {substitute(m.query.sql, m.query.dialect, m.bindings) for m in sure}
    except SubstitutionError as exc:
        return None, f"the verified SQL could not take the new values: {exc}"
    if len(answers) > 1:
        ids = sorted({m.query.id for m in sure})
        return None, f"the question fits verified queries {ids} in different ways; not answering from either"
    return sure[0], sure[0].describe()


def _fills(reading: Reading, t: Template, target: Shape) -> list[Match]:
    params = t.query.params
    options: list[list[tuple[Span, Binding, bool]]] = []
    for p in params:
        candidates: list[tuple[Span, Binding, bool]] = []
        for s in reading.spans:
            if p.kind == "value":
                if s.kind != "value":
                    continue
                best = s.best_in(p.table, p.column)
                if best is None:
                    continue
                sure = surely(s, p.table, p.column)
                binding = Binding(p, s.text, value=(sure or best).value, score=best.score)
                candidates.append((s, binding, sure is not None))
            elif s.kind == p.kind:
                candidates.append((s, Binding(p, s.text, when=s.when), True))
        if not candidates:
            return []
        options.append(candidates)
    matches = []
    for fill in itertools.islice(itertools.product(*options), MAX_FILLS):
        spans = [f[0] for f in fill]
        if any(a.overlaps(b) for a, b in itertools.combinations(spans, 2)):
            continue
        got = shape(reading, [(s, p.label) for s, p in zip(spans, params, strict=True)])
        if got is not None and got == target:
            matches.append(Match(t.query, tuple(f[1] for f in fill), all(f[2] for f in fill), got))
    return matches
