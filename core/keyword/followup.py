"""Follow-ups in a thread: a change to the last question's tree, or an honest 'this needs an LLM'.

'How many clients per segment?' — 'and only those in Germany?' — 'what about 2024?' — 'per
country instead'. The grammar reads such a message as a change (grammar.read_change): the
conditions, the period and the grouping it says, nothing else. The change is made to the tree of
the question answered last, and the binder reads the changed tree as it reads any question, so a
follow-up means what the question said again in one message would mean:

    conditions  added; one on a column the last question already restricts replaces that
                restriction ('what about France?' after '… in Germany')
    a period    replaces the last question's periods ('what about 2024?')
    a grouping  replaces its groupings ('per country instead')

A follow-up that ranks, measures or counts something else is no such change: keyword mode says
that it needs an LLM rather than answer a question nobody asked (in Slack, 'and only those in
Germany?' once listed location ids instead of clients).

The last reading is not stored: the caller reads the thread's questions again, oldest first, each
follow-up on top of the reading before it, and trusts a reading only when it gives the very SQL
the turn was answered with (core/keyword/answer.py).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from core.keyword.bind import Ambiguous, Bound, bind
from core.keyword.explain import filter_text, ref_text
from core.keyword.grammar import Lex, Reading
from core.keyword.match import Lexicon
from core.keyword.plan import AmbiguousDate, Decline, Query
from core.keyword.tree import Condition, Question, shifted

# lexeme kinds that change what is computed or ranked: a follow-up carrying one needs an LLM
_SUBJECT_KINDS = frozenset(
    ["count", "agg", "super", "top", "order", "dir", "alpha", "distinct", "share", "unsupported", "neg"]
)


@dataclass(frozen=True)
class Continued:
    """A question of the thread as keyword mode reads it: one reading over its words and those of
    the follow-ups applied to it, the bound tree, and the last change in plain words."""

    reading: Reading
    bound: Bound
    change: str = ""


def joined(first: Reading, then: Reading) -> Reading:
    """One reading over the words of both messages, `then`'s after `first`'s (no trees): the
    binder finds each phrase of a changed tree in it, whichever message said it."""
    n, offset = len(first.tokens), len(first.question) + 1
    tokens = tuple(replace(t, start=t.start + offset, end=t.end + offset) for t in then.tokens)
    lexemes = tuple(_shifted_lexeme(x, n) for x in then.lexemes)
    return Reading(f"{first.question} {then.question}", (*first.tokens, *tokens), (*first.lexemes, *lexemes))


def _shifted_lexeme(x: Lex, n: int) -> Lex:
    return replace(x, start=x.start + n, end=x.end + n, value=shifted(x.value, n))


def apply(previous: Continued, change: Reading, lex: Lexicon, today: dt.date) -> Continued:
    """The last question changed as the follow-up says, bound; raises Decline with the words it
    could not place as a change (Ambiguous and AmbiguousDate as the binder raises them)."""
    said = change.tree
    if said is None:
        raise _no_change(change)
    reading = joined(previous.reading, change)
    said = shifted(said, len(previous.reading.tokens))
    base = previous.bound.tree
    kept = _kept(reading, lex, today, base, said.conditions)
    tree = replace(
        base,
        conditions=(*kept, *said.conditions),
        windows=said.windows or base.windows,
        groups=said.groups or base.groups,
    )
    try:
        bound = bind(reading.with_tree(tree), lex, today)
    except Decline as d:
        word = next((x.text for x in change.lexemes if x.cat in _SUBJECT_KINDS), None)
        if word is not None:  # the reason is the wording keyword mode does not compute (as bind_first)
            raise Decline("it changes what is counted, computed or ranked", [word]) from d
        raise
    if bound.computable:
        raise Decline(f"it asks for {bound.computable}, which keyword mode does not compute")
    text = change_text(previous.bound.query, bound.query)
    if not text:
        raise Decline("it changes nothing in the last answer", [change.question])
    return Continued(reading.with_tree(tree), bound, text)


def _no_change(change: Reading) -> Decline:
    """Why the follow-up is no change of filters, period or grouping: the first word that asks
    for another computation, else its words."""
    for x in change.lexemes:
        if x.cat in _SUBJECT_KINDS:
            return Decline("it changes what is counted, computed or ranked", [x.text])
    words = [change.question] if change.question else []
    return Decline("it names no filter, period or grouping to change", words)


def _kept(
    reading: Reading, lex: Lexicon, today: dt.date, base: Question, said: tuple[Condition, ...]
) -> tuple[Condition, ...]:
    """The last question's conditions the new ones do not replace: a condition on a column the
    new ones restrict is replaced ('what about France?' after 'in Germany'), the binder saying
    which column each restricts."""
    if not said:
        return base.conditions
    new = _columns(reading, lex, today, base, said)
    return tuple(c for c in base.conditions if not _columns(reading, lex, today, base, (c,)) & new)


def _columns(
    reading: Reading, lex: Lexicon, today: dt.date, base: Question, conditions: tuple[Condition, ...]
) -> frozenset[tuple[str, str]]:
    """The columns these conditions restrict when the binder reads them in the base question."""
    bare = replace(base, conditions=(), windows=())

    def restricted(tree: Question) -> frozenset[tuple[str, str]]:
        query = bind(reading.with_tree(tree), lex, today).query
        return frozenset((f.ref.table.lower(), f.ref.column.lower()) for f in query.filters)

    try:
        return restricted(replace(bare, conditions=conditions)) - restricted(bare)
    except (Decline, Ambiguous, AmbiguousDate):
        return frozenset()


def change_text(before: Query, after: Query) -> str:
    """The change from one query to the next in plain words ('changed to country is France',
    'per country'); '' when they compute the same."""
    added = [f for f in after.filters if f not in before.filters]
    dropped = [f for f in before.filters if f not in after.filters]
    said: list[str] = []
    if added:
        lead = "changed to " if dropped else "only where "
        said.append(lead + " and ".join(filter_text(f, after.target) for f in added))
    elif dropped:
        said.append("without " + " and ".join(filter_text(f, before.target) for f in dropped))
    if after.groups != before.groups and after.groups:
        said.append("per " + ", ".join(ref_text(g, None) for g in after.groups))
    return "; ".join(said)
