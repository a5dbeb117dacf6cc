"""From a matched question to a query plan — or to a reasoned refusal, or to a question back.

The steps, in order (each in its own module, sharing one `Reader`):

    roles.read_ratio         'the ratio of X to Y' claims two phrases before anything else
    durations                'average session duration in seconds': end minus start
    abstain.check_*          wording keyword mode does not compute; words that matched nothing
    walk.walk                left to right, each phrase and literal takes its role from its cues
    ranking.implied_…        'the longest river' → the column the adjective implies
    target.choose_target     the table the question is about
    filters.place_loose_…    columns named with no cue ('with a final exam')
    time_buckets             'per month' → a group by the month of the fact's date
    date_filters             'in 2025', 'last 30 days' → ranges on the right date column
    ranking.superlative      first row, first N, or MAX
    output.shape_output      groups or projection, and the default order
    time_buckets.calendar_…  month and weekday names in calendar order
    abstain.check_understood every number and date was used
    target.joined_tables     the tables the view must join

A question is only asked back (Ambiguity) when its plan is otherwise complete: asking which
'Frankfurt' is meant, then declining the question anyway, would waste the person's time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Literal

from core.keyword import (
    abstain,
    date_filters,
    durations,
    filters,
    output,
    ranking,
    roles,
    target,
    time_buckets,
)
from core.keyword.columns import NUMERIC, TEMPORAL, column_kind
from core.keyword.match import Lexicon, Matching, Mention, Sense
from core.keyword.plan import Abstain, Ambiguity, Plan
from core.keyword.reader import AmbiguousDate, Decline, Reader
from core.keyword.readings import Reading
from core.keyword.shapes import Shape
from core.keyword.walk import walk


def make_plan(
    shape: Shape,
    matching: Matching,
    lex: Lexicon,
    today: dt.date,
    readings: Sequence[Reading] = (),
    near: bool = False,
) -> Plan | Abstain | Ambiguity:
    """The plan of the question, or why not (Abstain), or the readings to choose from.

    `near` (after the person rejected an answer) also asks about readings that matched less well
    than the chosen one, not only about ties (core/clarify)."""
    r = Reader(shape, matching, lex, today, list(readings))
    try:
        plan = read(r)
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
            understood=tuple(abstain.understood_words(matching)),
            not_understood=d.words,
            suggestion=abstain.suggest(lex, r.plan, matching),
        )
    return _ambiguity(r, near) or plan


def read(r: Reader) -> Plan:
    """Run the steps listed in the module's docstring; raises Decline or AmbiguousDate."""
    roles.read_ratio(r)
    durations.read_duration(r)
    abstain.check_unsupported(r)
    abstain.check_words(r)
    walk(r)
    plan = r.plan
    ranking.implied_superlative(r)
    listed = [m for m, is_listed in r.entities if is_listed]
    plan.target = target.choose_target(r, listed)
    filters.place_loose_columns(r)
    time_buckets.place_buckets(r)
    date_filters.date_filters(r)
    ranking.superlative(r, listed)
    output.shape_output(r, listed)
    time_buckets.calendar_order(r)
    abstain.check_understood(r)
    filters.merge_filters(r)
    plan.measures = list(dict.fromkeys(plan.measures))
    plan.tables = target.joined_tables(r)
    return plan


def _ambiguity(r: Reader, near: bool) -> Ambiguity | None:
    """The first phrase with another reading as good as the chosen one, that could play its part."""
    for m in r.matching.mentions:
        role = r.roles.get(id(m))
        if m.sense is None or role is None or role.kind in ("", "absorbed"):
            continue
        pool = m.alternatives or (_near_senses(m) if near else [])
        alternatives = [
            a for a in pool if not r.lex.same_thing(a, m.sense) and _fits_role(r.lex, a, m.sense, role.kind)
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
                labels=tuple(_sense_label(s) for s in options),
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


def _fits_role(lex: Lexicon, alt: Sense, chosen: Sense, role: str) -> bool:
    """Only readings that could play the same part are worth asking about: the date a year is
    compared with must be a date, what is summed must be a number."""
    if alt.kind != "column" or not alt.column or not chosen.column:
        return True
    a = column_kind(lex, alt.table, alt.column)
    c = column_kind(lex, chosen.table, chosen.column)
    if role in ("subject", "measure", "order") and (c in TEMPORAL or c in NUMERIC):
        return a in TEMPORAL if c in TEMPORAL else a in NUMERIC
    return True


def _sense_label(s: Sense) -> str:
    where = f"{s.table} {(s.column or '').replace('_', ' ')}".strip()
    if s.kind != "value":
        return where
    if s.op == "contains":
        sample = ", ".join(repr(v) for v in s.examples[:2])
        return f"{where} containing '{s.value}'" + (f" ({sample}…)" if sample else "")
    return f"{where} = '{s.value}'" + (f" ({s.meaning})" if s.meaning else "")
