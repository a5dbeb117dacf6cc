"""Comparisons and presence tests: the WHERE and HAVING conditions that are not dates.

'rating above 4' compares the column before; 'more than 2 papers' counts what follows (HAVING);
'orders above 50' compares the one number an order has; 'paper ID 2' and '3 stops' pin the
column next to the number; 'with a final exam' asks that a column be filled in. Stored values
('active', 'Zürich') become filters in core/keyword/roles.py; several values of one column
are merged into IN here. Whatever number or column none of these rules can place is declined.
"""

from __future__ import annotations

import re

from core.keyword.columns import TEMPORAL, column_kind, is_numeric, measure_column
from core.keyword.match import Mention
from core.keyword.plan import Filter, Having, Measure, Ref
from core.keyword.reader import Decline, Reader
from core.keyword.shapes import Literal_


def compare(r: Reader, op: str, value: float, words: str, last: Mention | None, nxt: Mention | None) -> None:
    """'rating above 4' (the column before), 'more than 2 papers' (a count of what follows)."""
    number = int(value) if float(value).is_integer() else value
    if last is not None and last.sense is not None and last.sense.kind == "column" and last.sense.column:
        ref = Ref(last.sense.table, last.sense.column)
        if is_numeric(r.lex, ref) or column_kind(r.lex, ref.table, ref.column) in TEMPORAL:
            role = r.role(last)
            if role.kind in ("", "projection", "subject") and not role.governed_by_list:
                role.kind = "subject"
            r.plan.filters.append(Filter(ref, op, number, f"{last.words} {words}"))  # type: ignore[arg-type]
            return
    counted_next = nxt is not None and nxt.sense is not None and nxt.sense.kind == "table"
    if last is not None and last.sense is not None and last.sense.kind == "table" and not counted_next:
        column = measure_column(r.lex, last.sense.table)
        if column is not None:
            # 'orders above 50': the one number an order has
            ref = Ref(last.sense.table, column)
            r.plan.filters.append(Filter(ref, op, number, f"{last.words} {words}"))  # type: ignore[arg-type]
            r.plan.notes.append(f"'{words}' read as {last.sense.table} {column}")
            return
    if nxt is not None and nxt.sense is not None:
        s = nxt.sense
        if s.kind == "table":
            # 'more than 2 papers': the number counts the thing that follows it
            r.role(nxt).kind = "having"
            r.plan.having.append(
                Having(Measure("COUNT", s.table, words=nxt.words), op, number, f"{words} {nxt.words}")
            )
            return
        if s.kind == "column" and s.column and is_numeric(r.lex, Ref(s.table, s.column)):
            r.role(nxt).kind = "subject"
            r.plan.filters.append(Filter(Ref(s.table, s.column), op, number, f"{words} {nxt.words}"))  # type: ignore[arg-type]
            return
    raise Decline(f"it could not tell what '{words}' applies to", [words])


def numeric_neighbour(
    r: Reader, lit: Literal_, last: Mention | None, nxt: Mention | None
) -> tuple[Mention, Ref] | None:
    """The column a bare number is a value of: named just before ('semester 1'), or a number
    column just after ('3 stops')."""
    if last is not None and r.adjacent(last, lit) and last.sense is not None:
        s = last.sense
        if s.kind == "column" and s.column and r.role(last).kind in ("", "projection"):
            return last, Ref(s.table, s.column)
    if lit.kind == "number" and nxt is not None and nxt.sense is not None and r.adjacent_after(lit, nxt):
        s = nxt.sense
        if s.kind == "column" and s.column and is_numeric(r.lex, Ref(s.table, s.column)):
            return nxt, Ref(s.table, s.column)
    return None


def place_loose_columns(r: Reader) -> None:
    """Columns named with no cue: the column of a neighbouring value ('city of Boston'), a
    column to show (list questions), or something keyword mode cannot place."""
    for m in r.loose_columns:
        s = m.sense
        assert s is not None
        if r.role(m).kind == "subject":
            continue  # 'in the year 2021': the date literal after it claimed it
        ref = Ref(s.table, s.column or "")
        if any(f.ref == ref for f in r.plan.filters) or ref in r.plan.all_refs():
            r.role(m).kind = "absorbed"  # 'city of Boston', or named twice ('range in miles')
            continue
        if r.date_subject(m) and _dates_it(r, m):
            r.role(m).kind = "subject"
            continue
        before = {t.low for t in r.shape.tokens[max(0, m.start - 3) : m.start]}
        if before & {"have", "has", "had", "having", "with"}:
            # 'courses with a final exam', 'students who have a minor': the thing is there
            boolean = column_kind(r.lex, ref.table, ref.column) == "boolean" or re.match(
                r"(has|is|can|was|did)_", ref.column.lower()
            )
            r.role(m).kind = "filter"
            r.plan.filters.append(Filter(ref, "true" if boolean else "present", None, m.words))
            continue
        raise Decline(f"it could not tell how '{m.words}' affects the result", [m.words])


def _dates_it(r: Reader, m: Mention) -> bool:
    """'commissioned in 2020', 'commissioned per year': a date column named by a verb is the
    date of the first date literal and of the first time bucket that have none named yet."""
    used = False
    if r.pending_dates and r.pending_dates[0][2] is None:
        lit, prep, _ = r.pending_dates[0]
        r.pending_dates[0] = (lit, prep, m)
        used = True
    if r.buckets and r.buckets[0][1] is None:
        r.buckets[0] = (r.buckets[0][0], m)
        used = True
    return used


def merge_filters(r: Reader) -> None:
    """Several values of one column: any of them ('grade A or C'), never all at once."""
    merged: list[Filter] = []
    by_ref: dict[Ref, list[Filter]] = {}
    for f in r.plan.filters:
        by_ref.setdefault(f.ref, []).append(f)
    for ref, fs in by_ref.items():
        eq = [f for f in fs if f.op == "="]
        if len(eq) > 1 and all(isinstance(f.value, str) for f in eq):
            values = tuple(dict.fromkeys(f.value for f in eq))
            merged.append(Filter(ref, "in", values, " or ".join(f.words for f in eq)))
            merged.extend(f for f in fs if f.op != "=")
        else:
            merged.extend(fs)
    r.plan.filters = merged
