"""Keyword mode in plain words: the reading it answered, or what it understood when it declined.

An answer from keyword mode is only as good as its reading of the question, so the reading is
always shown ("Counted clients whose status is 'ACT' (active) and location city is 'Zürich'")
and a person can judge it at a glance.
"""

from __future__ import annotations

import calendar
import datetime as dt

from core.keyword.match import Sense
from core.keyword.plan import Abstain, Filter, Having, Measure, OrderKey, Query, Ref
from core.plurals import name_phrase


def words(name: str) -> str:
    return name_phrase(name)


def ref_text(ref: Ref, target: str | None) -> str:
    """'segment' for the target table's own column, 'location city' for another table's; 'month of
    paid on' for a time bucket."""
    if ref.bucket:
        return f"{ref.bucket} of {ref_text(ref.raw, target)}"
    column = words(ref.column)
    if ref.table == target:
        return column
    table = words(ref.table)
    return column if column.startswith(table) else f"{table} {column}"


def measure_text(m: Measure, target: str | None) -> str:
    if m.func == "COUNT":
        if m.column is None:
            return f"number of {m.words or words(m.table)}"
        return f"number of different {ref_text(Ref(m.table, m.column), target)}"
    what = ref_text(Ref(m.table, m.column or ""), target)
    if m.since:
        start = ref_text(Ref(m.table, m.since), target)
        what = f"duration from {start} to {what} in {m.unit}s"
    return {"SUM": "total", "AVG": "average", "MIN": "lowest", "MAX": "highest"}[m.func] + f" {what}"


def _value(v: object) -> str:
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, str):
        return f"'{v}'"
    return str(v)


_TEXT_OPS = {"contains": "contains", "prefix": "starts with", "suffix": "ends with"}


def filter_text(f: Filter, target: str | None) -> str:
    what = ref_text(f.ref, target)
    meaning = f" ({f.meaning})" if f.meaning else ""
    if f.op == "=":
        return f"{what} is {_value(f.value)}{meaning}"
    if f.op == "!=":
        return f"{what} is not {_value(f.value)}"
    if f.op == "in":
        return f"{what} is one of " + ", ".join(_value(v) for v in f.value)
    if f.op in _TEXT_OPS:
        return f"{what} {_TEXT_OPS[f.op]} '{f.value}'"
    if f.op == "true":
        return f"{what} is true"
    if f.op == "present":
        return f"{what} is filled in"
    if f.op == "none":
        return f"{what} is zero or not recorded"
    if f.op == "month":
        return f"{what} is in {calendar.month_name[int(f.value)]}"
    if f.op == "range":
        lo, hi = f.value
        if lo is not None and hi is not None:
            return f"{what} is from {_value(lo)} up to (not including) {_value(hi)}"
        if lo is not None:
            return f"{what} is on or after {_value(lo)}"
        return f"{what} is before {_value(hi)}"
    names = {">": "is more than", ">=": "is at least", "<": "is less than", "<=": "is at most"}
    return f"{what} {names.get(f.op, f.op)} {_value(f.value)}"


def having_text(h: Having, target: str | None) -> str:
    names = {">": "more than", ">=": "at least", "<": "fewer than", "<=": "at most", "=": "exactly"}
    value = int(h.value) if float(h.value).is_integer() else h.value
    if h.words.startswith("both "):  # filters.require_both
        return f"having {h.words}"
    return f"with {names.get(h.op, h.op)} {value} {h.measure.words or words(h.measure.table)}"


def order_text(o: OrderKey, target: str | None) -> str:
    if isinstance(o.key, Ref) and o.key.bucket:
        return f"latest {o.key.bucket} first" if o.desc else f"{o.key.bucket} by {o.key.bucket}"
    what = measure_text(o.key, target) if isinstance(o.key, Measure) else ref_text(o.key, target)
    return f"{'highest' if o.desc else 'lowest'} {what} first"


def describe(plan: Query) -> str:
    """One or two sentences: what was computed, over which rows, in which order."""
    target = plan.target
    parts: list[str] = []
    if plan.count_groups:
        parts.append(
            f"Counted {plan.count_groups} " + " and ".join(having_text(h, target) for h in plan.having)
        )
    elif plan.measures:
        counted = [m for m in plan.measures if m.func == "COUNT" and m.column is None]
        others = [m for m in plan.measures if m not in counted]
        verbs = []
        if counted:
            verbs.append("Counted " + " and ".join(m.words or words(m.table) for m in counted))
        if others:
            verbs.append(
                ("Computed " if not verbs else "computed ")
                + " and ".join(measure_text(m, target) for m in others)
            )
        parts.append(" and ".join(verbs))
        if plan.groups:
            groups = dict.fromkeys(plan.names.get(g) or ref_text(g, None) for g in plan.groups)
            parts.append("per " + ", ".join(groups))
    elif plan.groups:  # 'which clients have more than 20 payments'
        parts.append(
            "Listed " + ", ".join(dict.fromkeys(plan.names.get(g) or ref_text(g, None) for g in plan.groups))
        )
    else:
        shown = [ref_text(r, target) for r in plan.projection]
        if plan.ratio is not None:
            a, b = plan.ratio
            shown.append(f"the ratio of {ref_text(a, target)} to {ref_text(b, target)}")
        parts.append(f"Listed {', '.join(shown)}" + (f" of {words(target)}" if target else ""))
    conds = [filter_text(f, target) for f in plan.filters]
    conds += [f"it has no {a.words}" for a in plan.absent]
    if conds:
        parts.append("where " + " and ".join(conds))
    if plan.having and not plan.count_groups:
        parts.append(" and ".join(having_text(h, target) for h in plan.having))
    text = " ".join(parts)
    if plan.order:
        text += ", " + ", ".join(order_text(o, target) for o in plan.order)
    if plan.limit:
        text += f", first {plan.limit}" if plan.limit > 1 else ", the first one"
    text += "."
    if plan.notes:
        text += " (" + "; ".join(dict.fromkeys(plan.notes)) + ".)"
    return text


def abstain_text(a: Abstain) -> str:
    """One sentence: what was understood and which words could not be placed; then what to try."""
    understood = "; ".join(a.understood)
    words = ", ".join(f"'{w}'" if not w.startswith(("'", '"')) else w for w in a.not_understood)
    if understood and words:
        text = f"Keyword mode (no LLM) understood {understood} but could not place {words} ({a.reason})"
    elif understood:
        text = f"Keyword mode (no LLM) understood {understood} but did not answer: {a.reason}"
    elif words:
        text = f"Keyword mode (no LLM) could not place {words} ({a.reason})"
    else:
        text = f"Keyword mode (no LLM) did not answer: {a.reason}"
    return f"{text}, so it did not answer." + (f" {a.suggestion}" if a.suggestion else "")


def follow_up_text(a: Abstain, previous: str) -> str:
    """A follow-up keyword mode could not apply to its last reading: say so, and that it needs an LLM."""
    words = ", ".join(f"'{w}'" for w in a.not_understood)
    placed = f" but could not place {words} as a change to it ({a.reason})" if words else f" but {a.reason}"
    return (
        f"Keyword mode (no LLM) took this as a follow-up to '{previous}'{placed}; "
        "follow-ups of this kind need an LLM. Ask the whole question again in one message to get a "
        "keyword-mode answer."
    )


def doubt_text(query: Query, reason: str) -> str:
    """A reading that was complete but not sure enough: what it was, and the doubt."""
    reading = describe(query).rstrip(".")
    return f"Keyword mode (no LLM) read this as: {reading} — but did not answer, because {reason}."


def sense_label(s: Sense) -> str:
    """A reading of a phrase as a clarification option shows it."""
    where = f"{s.table} {(s.column or '').replace('_', ' ')}".strip()
    if s.kind != "value":
        return where
    if s.op == "contains":
        sample = ", ".join(repr(v) for v in s.examples[:2])
        return f"{where} containing '{s.value}'" + (f" ({sample}…)" if sample else "")
    return f"{where} = '{s.value}'" + (f" ({s.meaning})" if s.meaning else "")
