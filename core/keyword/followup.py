"""Follow-ups in a thread: a change to the previous reading, or an honest 'this needs an LLM'.

'How many clients per segment?' — 'and only those in Germany?' — 'what about 2024?' — 'per
country instead'. Keyword mode reads such a message as a change to the reading it answered
last: an added or replaced filter (a stored value, a comparison), a different period, or a
different grouping, applied to the previous Query. Nothing else: a follow-up that changes what is
counted, ranks differently, negates or compares needs an LLM, and keyword mode says so rather
than answer a question nobody asked (in Slack, 'and only those in Germany?' once listed location
ids instead of clients).

The previous reading is not stored: keyword mode reads the earlier questions of the thread
again (each follow-up on top of the one before) and trusts that reading only when it gives the
very SQL the thread was answered with — an answer the LLM wrote, or one settled by a
clarification, cannot be continued without an LLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.keyword.abstain import check_words
from core.keyword.columns import NUMERIC, TEMPORAL, column_kind
from core.keyword.dates import date_filters
from core.keyword.explain import filter_text, ref_text
from core.keyword.filters import merge_filters
from core.keyword.match import Matching
from core.keyword.output import joined_tables
from core.keyword.plan import AmbiguousDate, Context, Decline, Filter, Measure, OrderKey, Plan, frozen_map
from core.keyword.shapes import Shape
from core.keyword.time_buckets import place_buckets
from core.keyword.walk import walk

# Words that say 'this continues the last answer' ('and only those in Germany?', 'what about 2024?').
MARKERS = frozenset(
    ["and", "but", "also", "now", "then", "only", "just", "same", "instead", "again", "about"]
)
REFERENCES = frozenset(["those", "these", "them", "they", "ones", "their"])
# Cues that change what is computed or ranked: a follow-up carrying one needs an LLM.
SUBJECT_CUES = frozenset(["count", "agg", "super", "top", "order", "dir", "alpha", "distinct", "text"])


@dataclass(frozen=True)
class FollowUp:
    plan: Plan  # the previous reading with the change applied
    own: Plan  # the follow-up's own words, read as a change
    change: str  # the change, in plain words


def looks_like_follow_up(shape: Shape, matching: Matching) -> bool:
    """The message refers back ('and only those…', 'what about…'), or names nothing to count,
    list or compute and no table of its own ('in Germany?', 'per country?')."""
    lows = [t.low for t in shape.tokens if t.kind == "word"]
    if not lows:
        return False
    if lows[0] in MARKERS or lows[:2] in (["what", "about"], ["how", "about"]) or REFERENCES & set(lows):
        return True
    return not self_contained(shape, matching)


def self_contained(shape: Shape, matching: Matching) -> bool:
    """The message says what it is about by itself: it names a table ('how many payments are
    there?') and points back at nothing ('those', 'them')."""
    lows = {t.low for t in shape.tokens}
    names_table = any(m.sense is not None and m.sense.kind == "table" for m in matching.mentions)
    return names_table and not REFERENCES & lows


def apply(previous: Plan, shape: Shape, matching: Matching, ctx: Context) -> FollowUp:
    """The previous reading changed as the follow-up says; raises Decline with the words it
    could not place as a change."""
    # the words that say 'this continues' are read: they are no unknown words
    quiet = tuple(i for i in matching.unmatched if shape.tokens[i].low not in MARKERS | REFERENCES)
    # 'what about France?': the question word asks for nothing new, the last answer says what
    shape = replace(shape, cues=tuple(c for c in shape.cues if c.kind != "list"))
    own = Plan(shape, replace(matching, unmatched=quiet))
    for cue in shape.cues:
        if cue.kind == "unsupported" and cue.words.lower() not in MARKERS:
            raise Decline(f"it asks for {cue.arg}", [cue.words])
        if cue.kind in SUBJECT_CUES:
            raise Decline("it changes what is counted, computed or ranked", [cue.words])
    own = check_words(own, ctx)
    own = walk(own, ctx)
    q = own.query
    if q.measures or q.having or q.order or own.explicit or own.top or own.superlative or q.ratio:
        raise Decline("it changes what is counted, computed or ranked")
    entities = {t.lower() for t in previous.query.tables}
    for m, _ in own.entities:
        if m.sense is None or m.sense.table.lower() not in entities:
            raise Decline("it names something the last answer was not about", [m.words])
    for m in own.loose_columns:
        raise Decline("it names a column without saying what to do with it", [m.words])
    changes: list[str] = []
    plan = previous
    if q.filters:
        plan, said = _filtered(plan, q.filters)
        changes.append(said)
    if q.groups or own.buckets:
        plan, said = _regrouped(plan, own, ctx)
        changes.append(said)
    if own.pending_dates:
        try:
            plan, said = _redated(plan, own, ctx)
        except AmbiguousDate as amb:
            raise Decline(f"it could not tell which date '{amb.words}' is about", [amb.words]) from amb
        changes.append(said)
    if not changes:
        raise Decline("it names no filter, period or grouping to change")
    plan = merge_filters(plan, ctx)
    plan = joined_tables(plan, ctx)
    return FollowUp(plan=plan, own=own, change="; ".join(changes))


def _filtered(plan: Plan, filters: Sequence[Filter]) -> tuple[Plan, str]:
    """New conditions replace the previous ones on the same column ('what about France?')."""
    refs = {f.ref for f in filters}
    kept = tuple(f for f in plan.query.filters if f.ref not in refs)
    replaced = len(kept) < len(plan.query.filters)
    target = plan.query.target
    said = ("changed to " if replaced else "only where ") + " and ".join(
        filter_text(f, target) for f in filters
    )
    return plan.with_query(filters=(*kept, *filters)), said


def _regrouped(plan: Plan, own: Plan, ctx: Context) -> tuple[Plan, str]:
    """'per country instead': the same measures over other groups, in the default order."""
    q = plan.query
    if not q.measures or q.count_groups:
        raise Decline("it groups a list; only counts and totals can be grouped differently")
    base = plan.with_query(groups=own.query.groups, order=(), names=own.query.names).but(
        buckets=own.buckets, time_column=None
    )
    base = place_buckets(base, ctx)
    groups = base.query.groups
    order = tuple(o for o in q.order if isinstance(o.key, Measure) and o.words)  # a ranking asked for
    if not order:
        g = groups[0]
        temporal = g.bucket or column_kind(ctx.lex, g.table, g.column) in TEMPORAL
        order = (OrderKey(g, False),) if temporal else (OrderKey(q.measures[0], True),)
    said = "per " + ", ".join(ref_text(g, None) for g in groups)
    return base.with_query(order=order, names=frozen_map({**q.names, **own.query.names})), said


def _redated(plan: Plan, own: Plan, ctx: Context) -> tuple[Plan, str]:
    """'what about 2024?': the previous period replaced, on the same date column."""
    q = plan.query
    old = [f for f in q.filters if _is_date_filter(ctx, f)]
    keep = tuple(f for f in q.filters if f not in old)
    time_column = plan.time_column or (old[0].ref.raw if old else None)
    base = plan.with_query(filters=keep).but(pending_dates=own.pending_dates, time_column=time_column)
    dated = date_filters(base, ctx).but(pending_dates=())  # no date before: the fact's own, or ask
    added = [f for f in dated.query.filters if f not in keep]
    return dated, ("where " if not old else "changed to ") + " and ".join(
        filter_text(f, q.target) for f in added
    )


def _is_date_filter(ctx: Context, f: Filter) -> bool:
    kind = column_kind(ctx.lex, f.ref.table, f.ref.column)
    return (
        f.op in ("range", "month") or kind in TEMPORAL or (kind in NUMERIC and "year" in f.ref.column.lower())
    )
