"""Read the question left to right: cue words wait for the phrase or literal they govern.

A cue ('how many', 'average', 'per', 'top', 'more than', 'in') is kept pending until the next
phrase or literal, which takes its role from the pending cues (core/keyword/roles.py for
phrases, `attach_literal` here for numbers and dates). Three patterns of neighbouring phrases
are settled here because only the order of words tells them apart: a compound whose last noun
is the head ('business category'), a list joined by 'and' or commas ('names and areas'), and a
generic word said of the word before it ('region name').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.keyword.abstain import check_leftover
from core.keyword.columns import NUMERIC, TEMPORAL, column_kind, counts_something
from core.keyword.date_filters import date_literal
from core.keyword.filters import compare, numeric_neighbour
from core.keyword.match import Mention
from core.keyword.plan import Filter
from core.keyword.reader import Decline, Reader
from core.keyword.roles import read_mention
from core.keyword.shapes import Cue, Literal_, is_generic, is_plural


@dataclass
class _Item:
    pos: int
    kind: Literal["cue", "literal", "mention"]
    cue: Cue | None = None
    literal: Literal_ | None = None
    mention: Mention | None = None


def walk(r: Reader) -> None:
    """Give every cue, literal and phrase its part in `r.plan`, in the question's order."""
    items = _items(r)
    pending: list[Cue] = []
    last: Mention | None = None
    list_scope = False  # right after a list cue ('what are the X')
    chained: Mention | None = None  # the last mention a list cue governed ('X and Y' follow it)
    bucket: int | None = None  # the token after a time bucket ('per month' | of the signup date)
    for n, item in enumerate(items):
        after_bucket, bucket = bucket, None
        if item.kind == "cue":
            cue = item.cue
            assert cue is not None
            if cue.start in r.skipped_cues:
                continue
            if cue.kind == "dir":
                r.order_dir = cue.arg == "desc"
            elif cue.kind == "alpha":
                r.alpha = True
                r.order_dir = False
            elif cue.kind == "distinct":
                r.plan.distinct = True
            elif cue.kind == "list":
                if _clause_start(r, cue.start):
                    list_scope = True
                    pending = [c for c in pending if c.kind not in ("list",)] + [cue]
                # else: 'the instructor who taught', a relative pronoun
            elif cue.kind in ("and", "or"):
                pass  # connectives: 'X and Y' is read by _chained and filters.merge_filters
            elif cue.kind == "bucket":
                _per_period_statistic(pending, cue)
                r.buckets.append((cue, None))  # placed by time_buckets once the fact is known
                bucket = cue.end
            else:
                pending.append(cue)
                if cue.kind not in ("date_prep",):
                    list_scope = False
        elif item.kind == "literal":
            lit = item.literal
            assert lit is not None
            nxt = next((it.mention for it in items[n + 1 :] if it.kind == "mention"), None)
            pending = attach_literal(r, lit, pending, last, nxt)
        else:
            m = item.mention
            assert m is not None
            if m.sense is None or r.role(m).kind == "absorbed":
                list_scope, pending = False, []  # the cues before it governed it
                continue
            if after_bucket is not None and _bucket_subject(r, m, after_bucket):
                r.buckets[-1] = (r.buckets[-1][0], m)  # 'per year of signup date'
                r.role(m).kind = "subject"
                continue
            if is_generic(m.words) and last is not None and last.end == m.start and m.sense.kind == "column":
                r.role(m).kind = "absorbed"  # 'region name', 'paper ID': said of the word before
                continue
            head = _compound_head(r, m, items, n)
            if head is not None:
                # 'each business category', 'highest population density': the last noun is
                # the head and takes the cues; the words before it only qualify it
                _modifier(r, m)
                continue
            governed = list_scope or any(c.kind == "list" for c in pending)
            if not governed and chained is not None and _chained(r, chained, m):
                governed = True
            read_mention(r, m, pending, governed)
            list_scope = False
            if m.names_value or (m.sense is not None and m.sense.kind == "value"):
                pass  # 'the city of Boston': the chain goes on past it
            else:
                chained = m if governed else None
            if m.sense is not None and m.sense.kind == "value":
                # 'how many active clients': the value qualifies what follows, cues carry over
                pending = [c for c in pending if c.kind not in ("text",)]
            else:
                pending = []
            last = m
    for cue in pending:
        check_leftover(r, cue)


def _items(r: Reader) -> list[_Item]:
    items = [_Item(c.start, "cue", cue=c) for c in r.shape.cues]
    items += [_Item(lit.start, "literal", literal=lit) for lit in r.shape.literals if lit.kind != "quoted"]
    items += [_Item(m.start, "mention", mention=m) for m in r.matching.mentions]
    return sorted(items, key=lambda it: (it.pos, it.kind != "cue"))


def attach_literal(
    r: Reader, lit: Literal_, pending: list[Cue], last: Mention | None, nxt: Mention | None
) -> list[Cue]:
    """Attach a number or date to what governs it; returns the cues still pending."""
    kinds = [c.kind for c in pending]
    table_next = nxt is not None and nxt.sense is not None and nxt.sense.kind == "table"
    if lit.kind == "number" and "list" in kinds and table_next and r.adjacent_after(lit, nxt):  # type: ignore[arg-type]
        # 'which 3 clients …': the first three
        cue = next(c for c in pending if c.kind == "list")
        r.top = (Cue("top", "desc", cue.start, cue.end, f"{cue.words} {lit.words}"), int(lit.value))
        r.used_literals.add(lit.start)
        return [*pending, r.top[0]]
    if lit.kind == "number" and _superlative_next(r, lit):
        # 'the 3 most recent payments': the first three of a ranking
        r.top = (Cue("top", "desc", lit.start, lit.end, lit.words), int(lit.value))
        r.used_literals.add(lit.start)
        return pending
    if lit.kind == "number" and "top" in kinds:
        cue = next(c for c in pending if c.kind == "top")
        r.top = (cue, int(lit.value))
        r.used_literals.add(lit.start)
        return [c for c in pending if c.kind != "top"] + [cue]
    if lit.kind in ("number", "year") and "cmp" in kinds:
        cue = next(c for c in reversed(pending) if c.kind == "cmp")
        r.used_literals.add(lit.start)
        compare(r, cue.arg, float(lit.value), f"{cue.words} {lit.words}", last, nxt)
        return [c for c in pending if c.kind != "cmp"]
    if lit.kind in ("year", "month", "quarter", "date", "period"):
        return date_literal(r, lit, pending, last)
    if lit.kind in ("number", "year"):
        # 'paper ID 2', 'semester 1': the column named just before; '3 stops': just after
        named = numeric_neighbour(r, lit, last, nxt)
        if named is not None:
            m, ref = named
            r.used_literals.add(lit.start)
            r.role(m).kind = "subject"
            r.plan.filters.append(Filter(ref, "=", lit.value, f"{m.words} {lit.words}"))
    return pending  # an unattached literal is reported by abstain.check_understood


PERIODIC = {"year": "yearly", "quarter": "quarterly", "month": "monthly", "week": "weekly", "day": "daily"}


def _per_period_statistic(pending: list[Cue], bucket: Cue) -> None:
    """'the average monthly cost' is an average over months of each month's total — an aggregate
    of aggregates keyword mode does not compute (a list of monthly averages would be wrong)."""
    for cue in pending:
        if cue.kind == "agg" and cue.arg in ("AVG", "MIN", "MAX") and cue.end == bucket.start:
            raise Decline(
                f"it asks for the {cue.words} of {PERIODIC[bucket.arg]} totals, which keyword mode does not compute",
                [f"{cue.words} {bucket.words}"],
            )


def _bucket_subject(r: Reader, m: Mention, start: int) -> bool:
    """'per month of the signup date': a date column right after a time bucket is what it groups;
    'each month of the year 2021' is not (the year is the subject of 2021)."""
    s = m.sense
    if s is None or s.kind != "column" or not s.column:
        return False
    if not all(r.shape.tokens[i].low in ("of", "the") for i in range(start, m.start)):
        return False
    kind = column_kind(r.lex, s.table, s.column)
    unit = r.buckets[-1][0].arg
    followed_by_date = any(lit.start == m.end for lit in r.shape.literals)
    return kind in TEMPORAL or (kind in NUMERIC and unit == "year" and not followed_by_date)


def _superlative_next(r: Reader, lit: Literal_) -> bool:
    cue = r.shape.cue_at(lit.end)
    return cue is not None and cue.start == lit.end and cue.kind == "super" and float(lit.value).is_integer()


def _clause_start(r: Reader, i: int) -> bool:
    """Nothing but punctuation or 'and' before position i in its sentence."""
    j = i - 1
    while j >= 0:
        t = r.shape.tokens[j]
        if t.text in (".", "?", "!", ";", ":"):
            return True
        if t.kind == "punct" or t.low in ("and", "please", "also", "then", "now", "so"):
            j -= 1
            continue
        return False
    return True


def _compound_head(r: Reader, m: Mention, items: list[_Item], n: int) -> Mention | None:
    nxt = items[n + 1] if n + 1 < len(items) else None
    if nxt is None or nxt.kind != "mention" or nxt.mention is None or nxt.mention.sense is None:
        return None
    other = nxt.mention
    if other.start != m.end or m.sense is None or other.sense is None:
        return None
    if m.sense.kind == "value" or other.sense.kind == "value" or m.names_value or other.names_value:
        return None
    if m.sense.kind == "table" and other.sense.kind == "column" and counts_something(r.lex, other.sense):
        return other  # 'number of students enrolled' is the num_enrolled column
    if other.words.lower().endswith(("ed", "ing")):
        return None  # 'which datacenter opened …': a verb, not the head of a compound
    if is_plural(m.words) or min(m.sense.score, other.sense.score) < 0.9:
        return None  # 'authors wrote papers' is a clause, 'business category' a compound
    if m.sense.kind == "column" and other.sense.kind == "column" and is_generic(other.words):
        return None  # 'region name' means the region column itself
    return other


def _modifier(r: Reader, m: Mention) -> None:
    """The words before a compound's head: a table there is a related entity, a column nothing."""
    s = m.sense
    assert s is not None
    if s.kind == "table":
        r.role(m).kind = "entity"
        r.entities.append((m, False))
    else:
        r.role(m).kind = "absorbed"


def _chained(r: Reader, prev: Mention, m: Mention) -> bool:
    """'names and areas', 'name, rating and city': joined by 'and' or commas only."""
    joined = False
    for i in range(prev.end, m.start):
        t = r.shape.tokens[i]
        cue = r.shape.cue_at(i)
        if t.text == "," or (cue is not None and cue.kind == "and"):
            joined = True
        elif not (r.shape.role[i] == "stop" and t.low in ("the", "their", "its", "a", "an", "both", "also")):
            return False
    return joined
