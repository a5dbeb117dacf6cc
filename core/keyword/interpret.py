"""From a matched question to a query plan — or to a reasoned refusal, or to a question back.

The passes, in order; each is `(Plan, Context) -> Plan` and raises `Decline` (→ Abstain) or
`AmbiguousDate` (→ Ambiguity) when reading cannot go on without guessing:

    walk.read_ratio           'the ratio of X to Y' claims two phrases before anything else
    walk.read_duration        'average session duration in seconds': end minus start
    abstain.check_unsupported wording keyword mode does not compute
    abstain.check_words       words that matched nothing
    walk.walk                 left to right, each phrase and literal takes its role from its cues
    ranking.implied_…         'the longest river' → the column the adjective implies
    output.choose_target      the table the question is about
    abstain.check_shared_o…   'everyone in Clara's department' (declined)
    filters.place_loose_…     columns named with no cue ('with a final exam')
    filters.require_both      'both Afghanistan and Albania': each value, a HAVING on how many
    time_buckets.place_…      'per month' → a group by the month of the fact's date
    dates.date_filters        'in 2025', 'last 30 days' → ranges on the right date column
    ranking.superlative       first row, first N, or MAX
    output.shape_output       groups or projection, and the default order
    output.fold_constant_…    'the count and position' per position: show it, do not count it
    output.show_what_was_…    a figure that only picks the rows (a HAVING, a ranking) is not shown
    output.answer_where       'where …?' shows the place, or is declined
    time_buckets.calendar_…   month and weekday names in calendar order
    abstain.check_understood  every number and date was used
    abstain.check_cues        every 'how many', 'average' or 'maximum' has its aggregate
    abstain.check_echo        an answer that would only repeat the question's own value
    filters.merge_filters     several values of one column → IN
    output.joined_tables      the tables the view must join
    abstain.check_stored_f…   a filler word that is also a stored value ('done' documents)

A question is only asked back (Ambiguity) when its plan is otherwise complete: asking which
'Frankfurt' is meant, then declining the question anyway, would waste the person's time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from core.keyword.abstain import (
    check_cues,
    check_echo,
    check_shared_owner,
    check_stored_fillers,
    check_understood,
    check_unsupported,
    check_words,
    suggest,
    understood_words,
)
from core.keyword.confidence import fits_role
from core.keyword.dates import date_filters
from core.keyword.explain import sense_label
from core.keyword.filters import merge_filters, place_loose_columns, require_both
from core.keyword.match import Lexicon, Matching, Mention, Sense
from core.keyword.output import (
    answer_where,
    choose_target,
    fold_constant_counts,
    joined_tables,
    shape_output,
    show_what_was_asked,
)
from core.keyword.plan import Abstain, Ambiguity, AmbiguousDate, Context, Decline, Plan
from core.keyword.ranking import implied_superlative, superlative
from core.keyword.readings import Reading
from core.keyword.shapes import Shape
from core.keyword.time_buckets import calendar_order, place_buckets
from core.keyword.walk import read_duration, read_ratio, walk

Pass = Callable[[Plan, Context], Plan]

PASSES: tuple[Pass, ...] = (
    read_ratio,
    read_duration,
    check_unsupported,
    check_words,
    walk,
    implied_superlative,
    choose_target,
    check_shared_owner,
    place_loose_columns,
    require_both,
    place_buckets,
    date_filters,
    superlative,
    shape_output,
    fold_constant_counts,
    show_what_was_asked,
    answer_where,
    calendar_order,
    check_understood,
    check_cues,
    check_echo,
    merge_filters,
    joined_tables,
    check_stored_fillers,
)


def make_plan(
    shape: Shape, matching: Matching, ctx: Context, near: bool = False
) -> Plan | Abstain | Ambiguity:
    """The plan of the question, or why not (Abstain), or the readings to choose from.

    `near` (after the person rejected an answer) also asks about readings that matched less well
    than the chosen one, not only about ties (core/clarify)."""
    lex = ctx.lex
    plan = Plan(shape, matching)
    try:
        for step in PASSES:
            plan = step(plan, ctx)
    except AmbiguousDate as amb:
        options = amb.refs[:4]
        return Ambiguity(
            words=amb.words,
            kind="AmbTableColumn",
            readings=tuple(Reading(words=amb.words, table=o.table, column=o.column) for o in options),
            labels=tuple(f"{o.table} {o.column.replace('_', ' ')}" for o in options),
        )
    except Decline as d:
        return Abstain(
            reason=d.reason,
            understood=tuple(understood_words(matching)),
            not_understood=d.words,
            suggestion=suggest(lex, plan.query.target, matching),
        )
    return _ambiguity(plan, lex, near) or plan


def _ambiguity(plan: Plan, lex: Lexicon, near: bool) -> Ambiguity | None:
    """The first phrase with another reading as good as the chosen one, that could play its part."""
    for m in plan.matching.mentions:
        role = plan.role(m)
        if m.sense is None or role.kind in ("", "absorbed"):
            continue
        pool = m.alternatives or (_near_senses(m) if near else [])
        alternatives = [
            a for a in pool if not lex.same_thing(a, m.sense) and fits_role(lex, a, m.sense, role.kind)
        ]
        if alternatives:
            options = [m.sense, *alternatives][:4]
            kind: Literal["AmbValue", "AmbTableColumn"] = (
                "AmbValue" if m.sense.kind == "value" else "AmbTableColumn"
            )
            return Ambiguity(
                words=m.words,
                kind=kind,
                readings=tuple(s.reading(m.words) for s in options),
                labels=tuple(sense_label(s) for s in options),
            )
    return None


def _near_senses(m: Mention) -> list[Sense]:
    """Other readings of a mention of the same kind, one per table/column, best first."""
    if m.pinned or m.sense is None:
        return []
    seen = {(m.sense.table, m.sense.column)}
    out = []
    for s in m.senses:
        if s.kind == m.sense.kind and (s.table, s.column) not in seen:
            seen.add((s.table, s.column))
            out.append(s)
    return out[:3]
