"""The part a phrase plays, from the cue words just before it.

A stored value becomes a filter. A table after 'how many' is counted, after 'per' it is a
group, after 'top' it is the entity ranked; a column after 'average' is the measure, after
'highest' the ranking key, after 'list' a column to show. What is left — a column named with no
cue — is 'loose' and placed at the end (core/keyword/filters.py), when the whole question is
known. A ratio of two numbers of one row ('ratio of memory to cores') is recognised here too,
before the walk, because it claims both phrases at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.keyword.columns import (
    NUMERIC,
    column_kind,
    is_key,
    is_numeric,
    is_pointer,
    label_columns,
    measure_column,
    measure_columns,
)
from core.keyword.match import Mention, Sense
from core.keyword.plan import Filter, Measure, OrderKey, Ref
from core.keyword.ranking import IMPLIED, TEMPORAL_ADJ
from core.keyword.reader import Decline, Reader
from core.keyword.shapes import GLUE, Cue, singular_phrase


@dataclass(frozen=True)
class _Cues:
    """The cues pending before a phrase, looked up by what they ask for."""

    pending: list[Cue]
    kinds: list[str]
    agg: Cue | None  # average, total, minimum, maximum
    count: bool  # how many, number of
    sup: Cue | None  # highest, most, earliest

    @classmethod
    def of(cls, pending: list[Cue]) -> _Cues:
        return cls(
            pending=pending,
            kinds=[c.kind for c in pending],
            agg=next((c for c in pending if c.kind == "agg"), None),
            count=any(c.kind == "count" for c in pending),
            sup=next((c for c in pending if c.kind == "super"), None),
        )


def read_mention(r: Reader, m: Mention, pending: list[Cue], governed: bool) -> None:
    """Give `m` its role from the `pending` cues; `governed`: a list cue ('which', 'show') asks for it."""
    s = m.sense
    assert s is not None
    role = r.role(m)
    role.governed_by_list = governed
    if m.names_value:
        role.kind = "absorbed"
        return
    if s.kind == "value":
        role.kind = "filter"
        text = next((c for c in pending if c.kind == "text"), None)
        op = text.arg if text is not None else s.op
        value = s.value if text is None else m.words
        r.plan.filters.append(Filter(Ref(s.table, s.column or ""), op, value, m.words, s.meaning))  # type: ignore[arg-type]
        return
    cues = _Cues.of(pending)
    if "text" in cues.kinds:
        raise Decline(f"it could not tell which text '{m.words}' should match", [m.words])
    if s.kind == "table":
        _table_mention(r, m, s, cues, governed)
    else:
        _column_mention(r, m, s, cues, governed)


def _table_mention(r: Reader, m: Mention, s: Sense, cues: _Cues, governed: bool) -> None:
    role = r.role(m)
    kinds, agg, count, sup = cues.kinds, cues.agg, cues.count, cues.sup
    if sup is not None and (count or sup.words.lower() in ("most", "least", "fewest")):
        _ranked(r, m, Measure("COUNT", s.table, words=m.words), sup)
        return
    if count and _orders(r, cues):
        # 'top 3 datacenters by number of hosts', 'sorted by the number of papers'
        role.kind = "order"
        desc = r.order_dir if r.order_dir is not None else not (r.top and r.top[0].arg == "asc")
        r.plan.order.append(OrderKey(Measure("COUNT", s.table, words=m.words), desc, f"number of {m.words}"))
        return
    if count and agg is not None and agg.arg != "SUM":
        # 'the average number of payments per client': an average of counts
        raise Decline(
            f"it asks for the {agg.words} of counts, which keyword mode does not compute", [agg.words]
        )
    if count or (agg is not None and agg.arg == "SUM" and "count" in kinds):
        role.kind = "measure"
        r.plan.measures.append(Measure("COUNT", s.table, words=m.words))
        if "group" in kinds or "by" in kinds:
            raise Decline(f"it could not tell how '{m.words}' is counted per group", [m.words])
        return
    if agg is not None:
        column = measure_column(r.lex, s.table) or _named_measure(r, m, s.table)
        if column is None:
            raise Decline(
                f"'{agg.words}' needs a numeric column and '{m.words}' has none or several", [m.words]
            )
        _measured(r, m, Measure(agg.arg, s.table, column, words=f"{agg.words} {m.words}"), sup)  # type: ignore[arg-type]
        return
    if _orders(r, cues):
        role.kind = "order"
        for c in label_columns(r.lex, s.table):
            r.plan.order.append(OrderKey(Ref(s.table, c), False, m.words))
        return
    if _groups(r, cues):
        role.kind = "group"
        for c in label_columns(r.lex, s.table):
            r.plan.groups.append(Ref(s.table, c))
            r.plan.names[Ref(s.table, c)] = singular_phrase(m.words)
        return
    if sup is not None and sup.words.lower() in (IMPLIED.keys() | TEMPORAL_ADJ):
        # 'the latest payment', 'the longest river': ranked by the column the adjective implies,
        # found once the whole question is read (ranking.implied_superlative)
        role.kind = "entity"
        r.entities.append((m, governed))
        r.superlative = (sup, None)
        return
    if sup is not None:
        raise Decline(f"it could not tell what '{sup.words}' ranks '{m.words}' by", [sup.words])
    if "top" in kinds:
        role.kind = "entity"
        r.entities.append((m, True))
        if r.top is None:
            cue = next(c for c in cues.pending if c.kind == "top")
            r.top = (cue, None)
        return
    role.kind = "entity"
    r.entities.append((m, governed))


def _column_mention(r: Reader, m: Mention, s: Sense, cues: _Cues, governed: bool) -> None:
    role = r.role(m)
    agg, count, sup = cues.agg, cues.count, cues.sup
    ref = Ref(s.table, s.column or "")
    kind = column_kind(r.lex, ref.table, ref.column)
    if count and (agg is None or agg.arg == "SUM") and (is_key(r.lex, ref) or is_pointer(r.lex, ref)):
        # 'number of publications' matched publication.pid, 'number of restaurants' matched
        # location.restaurant_id: count the things it identifies
        measure = (
            Measure("COUNT", ref.table, words=m.words)
            if is_key(r.lex, ref)
            else Measure("COUNT", ref.table, ref.column, True, m.words)
        )
        if sup is not None:
            _ranked(r, m, measure, sup)
        else:
            role.kind = "measure"
            r.plan.measures.append(measure)
        return
    if count and agg is None and sup is None and kind in NUMERIC:
        total = any(c.kind == "count" and "total" in c.words.lower() for c in cues.pending)
        if total or any(c.kind == "group" for c in r.shape.cues):
            # 'total number of citations (per author)': the column already counts something
            role.kind = "measure"
            r.plan.measures.append(Measure("SUM", ref.table, ref.column, words=m.words))
            return
    if agg is not None:
        func = agg.arg
        if func in ("AVG", "SUM") and kind not in NUMERIC:
            if count and func == "SUM":  # 'total number of cities' → count distinct
                role.kind = "measure"
                r.plan.measures.append(Measure("COUNT", ref.table, ref.column, True, m.words))
                return
            raise Decline(
                f"'{agg.words}' needs a number and '{m.words}' is not numeric", [agg.words, m.words]
            )
        _measured(r, m, Measure(func, ref.table, ref.column, words=f"{agg.words} {m.words}"), sup)  # type: ignore[arg-type]
        return
    if sup is not None:
        _ranked(r, m, ref, sup)
        return
    if count and kind not in NUMERIC:
        role.kind = "measure"
        r.plan.measures.append(Measure("COUNT", ref.table, ref.column, True, m.words))
        return
    if _orders(r, cues):
        role.kind = "order"
        r.plan.order.append(OrderKey(ref, bool(r.top and r.top[0].arg == "desc"), m.words))
        return
    if _groups(r, cues):
        role.kind = "group"
        r.plan.groups.append(ref)
        return
    if governed or count:
        role.kind = "projection"
        r.explicit.append(m)
        return
    role.kind = "loose"
    r.loose_columns.append(m)


def _named_measure(r: Reader, m: Mention, table: str) -> str | None:
    """'total payment amount' matched the table payment_amount: of its several numbers, the one
    a word of the phrase names (amount), if exactly one does."""
    candidates = {c.lower(): c for c in measure_columns(r.lex, table)}
    named = {
        candidates[x.column.lower()]
        for word in m.words.split()
        for x in r.lex.schema(word.lower())
        if x.kind == "column"
        and x.table.lower() == table.lower()
        and x.score >= 0.95
        and (x.column or "").lower() in candidates
    }
    return named.pop() if len(named) == 1 else None


def _measured(r: Reader, m: Mention, measure: Measure, sup: Cue | None) -> None:
    """'the total cost', and with a superlative before it ('the highest total cost') the rows are
    ranked by it too: 'which month had the highest total amount' keeps the first month."""
    r.role(m).kind = "measure"
    r.plan.measures.append(measure)
    if sup is not None and sup.words.lower() not in TEMPORAL_ADJ:
        r.plan.order.append(OrderKey(measure, sup.arg == "desc", f"{sup.words} {m.words}"))
        r.superlative = (sup, None)


def _ranked(r: Reader, m: Mention, key: Ref | Measure, sup: Cue) -> None:
    """'the highest rating', 'the most papers': rank by `key`; ranking.superlative decides
    later whether that means the first row or MAX."""
    r.role(m).kind = "order"
    r.plan.order.append(OrderKey(key, sup.arg == "desc", f"{sup.words} {m.words}"))
    r.superlative = (sup, m if isinstance(key, Ref) else None)


def _orders(r: Reader, cues: _Cues) -> bool:
    """'ordered by X', or 'by X' after 'top N'."""
    return "order" in cues.kinds or ("by" in cues.kinds and _by_orders(r))


def _groups(r: Reader, cues: _Cues) -> bool:
    """'per X', 'for each X', or 'by X' after a measure."""
    return "group" in cues.kinds or ("by" in cues.kinds and _by_groups(r, cues.pending))


def _by_groups(r: Reader, pending: list[Cue]) -> bool:
    """'by X' groups after a measure ('clients by country'), but ranks after 'top'."""
    if _by_orders(r):
        return False
    by = next(c for c in pending if c.kind == "by")
    prev = r.shape.tokens[by.start - 1].low if by.start > 0 else ""
    if prev in GLUE or prev.endswith(("ed", "en")):
        return False  # 'written by', 'paid by': a relation, not a grouping
    return bool(r.plan.measures)


def _by_orders(r: Reader) -> bool:
    return r.top is not None and not any(isinstance(o.key, Measure) or o.words for o in r.plan.order)


def read_ratio(r: Reader) -> None:
    """'the ratio of helpfulness score to clarity score (for each course)': two numbers of the
    same row, divided. Any other ratio (of counts, across tables) is declined."""
    cue = next((c for c in r.shape.cues if c.kind == "unsupported" and c.words.lower() == "ratio"), None)
    if cue is None:
        return
    after = [m for m in r.matching.mentions if m.start >= cue.end and m.sense is not None]
    if len(after) < 2:
        return
    a, b = after[0], after[1]
    toks = r.shape.tokens
    lead = {t.low for t in toks[cue.end : a.start]}
    link = [t.low for t in toks[a.end : b.start] if t.low not in ("the", "a", "an", "its", "their")]
    if not lead <= {"of", "the", "between"} or link not in (
        ["to"],
        ["over"],
        ["per"],
        ["and"],
        ["divided", "by"],
    ):
        return
    refs = []
    for m in (a, b):
        s = m.sense
        if s is None or s.kind != "column" or not s.column or not is_numeric(r.lex, Ref(s.table, s.column)):
            return
        refs.append(Ref(s.table, s.column))
    if refs[0].table != refs[1].table:
        return
    r.plan.ratio = (refs[0], refs[1])
    for m in (a, b):
        r.role(m).kind = "absorbed"
    r.skipped_cues |= {c.start for c in r.shape.cues if cue.start <= c.start < b.start}
