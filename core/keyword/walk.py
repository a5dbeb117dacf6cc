"""Read the question left to right: cue words wait for the phrase or literal they govern.

A cue ('how many', 'average', 'per', 'top', 'more than', 'in') is kept pending until the next
phrase or literal, which takes its role from the pending cues. A stored value becomes a filter.
A table after 'how many' is counted, after 'per' it is a group, after 'top' it is the entity
ranked; a column after 'average' is the measure, after 'highest' the ranking key, after 'list' a
column to show. What is left — a column named with no cue — is 'loose' and placed once the whole
question is known (core/keyword/filters.py).

Three patterns of neighbouring phrases are settled here because only the order of words tells
them apart: a compound whose last noun is the head ('business category'), a list joined by 'and'
or commas ('names and areas'), and a generic word said of the word before it ('region name').
Two readings claim several words at once and run before the walk: a ratio of two numbers of one
row ('ratio of memory to cores') and a duration ('average session duration in seconds').
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from core.dictionary import name_words
from core.keyword.abstain import check_leftover
from core.keyword.columns import (
    NUMERIC,
    TEMPORAL,
    column_kind,
    counts_something,
    is_key,
    is_numeric,
    is_pointer,
    label_columns,
    measure_column,
    measure_columns,
)
from core.keyword.dates import date_literal, year_comparison
from core.keyword.filters import compare, numeric_neighbour
from core.keyword.match import NAME_WORDS, Lexicon, Mention, Sense
from core.keyword.plan import (
    Context,
    Decline,
    Filter,
    Func,
    Having,
    Measure,
    OrderKey,
    Plan,
    Ref,
    cue_func,
    cue_op,
    frozen_map,
)
from core.keyword.ranking import AGE_ADJ, IMPLIED
from core.keyword.shapes import (
    CUES,
    GLUE,
    LEAD_WORDS,
    MODE_CUES,
    NAME_SUFFIXES,
    PAY_VERBS,
    ROW_NOUNS,
    SENTENCE_ENDS,
    TEMPORAL_ADJ,
    Cue,
    Literal_,
    is_generic,
    is_plural,
    said_after,
    singular_phrase,
)
from core.plurals import name_phrase, plural
from core.values import fold


@dataclass(frozen=True)
class _Item:
    pos: int
    kind: Literal["cue", "literal", "mention"]
    cue: Cue | None = None
    literal: Literal_ | None = None
    mention: Mention | None = None


def walk(plan: Plan, ctx: Context) -> Plan:
    """Give every cue, literal and phrase its part in the plan, in the question's order."""
    items = _items(plan)
    pending: list[Cue] = []
    last: Mention | None = None
    # right after a list cue ('what are the X'); a question that starts with what it wants to
    # see ('names of members from Canada', 'leader name and location of each college') lists it
    # ('distinct product names a-z': a 'distinct' before the name does not change that)
    first = next((it for it in items if not (it.cue is not None and it.cue.kind == "distinct")), None)
    list_scope = first is not None and _starts_with_a_name(plan, first)
    chained: Mention | None = None  # the last mention a list cue governed ('X and Y' follow it)
    owned = False  # chained is the thing the listed column is said of ('the name of each protein')
    counted: Mention | None = None  # the last table counted ('how many X, Y and Z' would count all three)
    bucket: int | None = None  # the token after a time bucket ('per month' | of the signup date)
    repointed: Mention | None = None  # '…? just names': read as the name of what is listed
    grouped: Mention | None = None  # the last column grouped by ('by rank and sex' groups by both)
    ends = [i for i, t in enumerate(plan.shape.tokens) if t.text in SENTENCE_ENDS]
    for n, item in enumerate(items):
        after_bucket, bucket = bucket, None
        if n > 0 and any(items[n - 1].pos < e < item.pos for e in ends):
            # a new sentence: what the last one left pending governs nothing in this one
            for left in pending:
                plan = check_leftover(plan, ctx, left)
            # '… at least 2 events? names': a sentence that starts with what it wants lists it
            pending, list_scope, chained = [], _starts_with_a_name(plan, item), None
            repointed = _only_a_generic_word(plan, ctx, items, n, ends)
        if item.kind == "cue":
            cue = item.cue
            assert cue is not None
            if cue.start in plan.skipped_cues:
                continue
            if cue.kind == "dir":
                plan = plan.but(order_dir=cue.arg in ("desc", "old"), by_age=cue.arg in ("young", "old"))
            elif cue.kind == "alpha":  # 'in descending alphabetical order' keeps its direction
                desc = cue.arg == "desc" or bool(plan.order_dir)
                plan = plan.but(alpha=True, order_dir=desc)
            elif cue.kind == "distinct":
                plan = plan.with_query(distinct=True)
            elif cue.kind == "list":
                if _clause_start(plan, cue.start) or _imperative_after_comma(plan, cue):
                    list_scope = True
                    pending = [c for c in pending if c.kind not in ("list",)] + [cue]
                # else: 'the instructor who taught', a relative pronoun
            elif cue.kind in ("and", "or"):
                # connectives: 'X and Y' is read by _chained and filters.merge_filters; a count
                # word before one names the count already asked for ('… how many accounts …? Show
                # the count along with the customer ID'), it does not count what follows
                if any(x.func == "COUNT" for x in plan.query.measures):
                    pending = [c for c in pending if not (c.kind == "count" and c.end == cue.start)]
            elif cue.kind == "count" and _count_after_column(plan, cue):
                # 'the address and staff count of shops', 'injured counts': a column of counts or
                # a count of rows — the words do not say which
                raise Decline(f"it could not tell whether '{cue.words}' is a column or a count", [cue.words])
            elif cue.kind == "super" and _extreme_compared(plan, ctx, items, n):
                # 'stations whose highest weekly precipitation is above 50': MAX per station, compared
                pending.append(replace(cue, kind="agg", arg="MAX" if cue.arg == "desc" else "MIN"))
                list_scope = False
            elif cue.kind == "top" and _top_of_a_number(plan, ctx, items, n):
                pending.append(replace(cue, kind="super"))  # 'with the top submission score': the highest
                list_scope = False
            elif cue.kind == "bucket":
                _per_period_statistic(pending, cue)
                plan = plan.but(buckets=(*plan.buckets, (cue, None)))  # placed by time_buckets
                bucket = cue.end
            else:
                pending.append(cue)
                if cue.kind not in ("date_prep",):
                    list_scope = False
        elif item.kind == "literal":
            lit = item.literal
            assert lit is not None
            after = said_after(plan.shape, lit.end)
            if after is not None:
                # '5 or more', '2011 or later': the comparison said after its number
                pending.append(after)
                plan = plan.but(skipped_cues=plan.skipped_cues | {after.start})
            nxt = next((it.mention for it in items[n + 1 :] if it.kind == "mention"), None)
            plan, pending = _attach_literal(plan, ctx, lit, pending, last, nxt)
        else:
            m = item.mention
            assert m is not None
            if repointed is not None and repointed.start == m.start:
                # '…? just names': the names of what the question lists, whatever table the
                # word alone matched (Roles.role_name in 'employees with the Editor role')
                plan = plan.with_role(repointed, "projection").but(explicit=(*plan.explicit, repointed))
                continue
            if m.sense is None or plan.role(m).kind == "absorbed":
                plan = _unused_comparisons(plan, ctx, pending)
                list_scope, pending = False, []  # the cues before it governed it
                continue
            if after_bucket is not None and _bucket_subject(plan, ctx, m, after_bucket):
                plan = plan.but(buckets=(*plan.buckets[:-1], (plan.buckets[-1][0], m)))
                plan = plan.with_role(m, "subject")  # 'per year of signup date'
                continue
            if (
                is_generic(m.words)
                and last is not None
                and last.end == m.start
                and m.sense.kind == "column"
                and not (
                    last.sense is not None
                    and last.sense.kind in ("table", "value")  # 'Safari's id': the id of that row
                    and m.sense.table == last.sense.table
                )
            ):
                plan = plan.with_role(m, "absorbed")  # 'region name', 'paper ID': said of the word before
                continue
            if _named_again(plan, m, ends):
                plan = plan.with_role(m, "absorbed")  # '… per headquartered city? city and count'
                continue
            if _inverted_verb(plan, m):
                plan = plan.with_role(m, "absorbed")  # 'how many railways has each builder built?'
                continue
            if (
                m.sense.kind == "table"
                and _orders(plan, _Cues.of(pending))
                and _owns_next_column(plan, m, m.sense.table)
            ):
                plan = plan.with_role(m, "absorbed")  # 'by the students' last names': the column orders
                continue
            nxt = items[n + 1].mention if n + 1 < len(items) else None
            if nxt is not None and _loose_head(m, nxt):
                raise Decline(f"it could not tell how '{m.words}' and '{nxt.words}' go together", [nxt.words])
            head = _compound_head(plan, ctx, m, items, n)
            if head is not None:
                # 'each business category', 'highest population density': the last noun is
                # the head and takes the cues; the words before it only qualify it
                plan = _modifier(plan, ctx, m, head)
                continue
            if counted is not None and m.sense.kind == "table" and _chained(plan, counted, m):
                # 'how many loss payments, loss reserves and expense payments': one count each
                raise Decline(
                    f"it asks to count '{counted.words}' and '{m.words}' at once, which keyword mode "
                    "does not compute",
                    [m.words],
                )
            governed = list_scope or any(c.kind == "list" for c in pending)
            if not governed and chained is not None and _chained(plan, chained, m):
                # after 'the name of each protein', 'and the institution' is listed, and 'plus the
                # description'; not a column that points at another thing ('and the winning
                # aircraft', match.Winning_Aircraft), whose ids would stand for its names
                pointer = m.sense.kind == "column" and is_pointer(
                    ctx.lex, Ref(m.sense.table, m.sense.column or "")
                )
                governed = not (owned and pointer)
            if not governed and _ranked_own_column(plan, m, last):
                governed = True  # 'what is the most recently launched program': the program
            if governed and m.sense.kind == "value" and not _qualifies_next(m, items, n):
                # 'which repairers worked on …' matched the role name 'repairer': the question
                # lists the parties in that role, and a filter on it would list something else
                raise Decline(
                    f"it asks which '{m.words}', and keyword mode can only filter by '{m.words}', "
                    "not list them",
                    [m.words],
                )
            after = plan.shape.cue_at(m.end)
            if m.sense.kind == "value" and after is not None and after.words.lower() in NAME_SUFFIXES:
                # 'lenses that have Digital in the name': the text cue said after the words
                pending = [*pending, after]
                plan = plan.but(skipped_cues=plan.skipped_cues | {after.start})
            if (
                grouped is not None
                and not pending
                and m.sense.kind == "column"
                and not governed
                and _chained(plan, grouped, m)
            ):
                # 'count of faculty by rank and sex': the second column groups too
                plan = plan.with_role(m, "group").adding(groups=Ref(m.sense.table, m.sense.column or ""))
            else:
                plan = read_mention(plan, ctx, m, pending, governed)
            grouped = m if plan.role(m).kind == "group" and m.sense.kind == "column" else None
            if m.sense.kind == "table":
                counted = m if plan.role(m).kind == "measure" else None
            list_scope = False
            if m.sense.kind == "value":
                # 'how many active clients': the value qualifies what follows, cues carry over;
                # 'the city of Boston': the chain goes on past it
                pending = [c for c in pending if c.kind not in ("text",)]
            else:
                plan = _unused_comparisons(plan, ctx, pending)
                pending = []
                if not m.names_value:
                    owned = not governed and _owner_of(plan, chained, m)
                    chained = m if governed or owned else None
            last = m
    for cue in pending:
        moded = _mode_after(plan, ctx, cue, None) if cue.kind == "super" else None
        plan = moded if moded is not None else check_leftover(plan, ctx, cue)
    return plan


def _named_again(plan: Plan, m: Mention, ends: list[int]) -> bool:
    """'how many stores per headquartered city? city and count': a later sentence names, by the
    last word of its name, a column the question already groups by or shows — that column, not
    another one the word alone resembles (City_Area)."""
    if m.sense is None or m.sense.kind != "column" or not any(e < m.start for e in ends):
        return False
    said = name_words(m.words)  # folded, singular: compared with a column's name_words
    used = [*plan.query.groups, *plan.query.projection]
    if any(
        r != Ref(m.sense.table, m.sense.column or "") and name_words(r.column).endswith(f" {said}")
        for r in used
    ):
        return True
    # '… the lowest salary in each department? show min salary and dept id': the figure already
    # asked for, not the column jobs.MIN_SALARY that its words also spell
    head, _, rest = said.partition(" ")
    kind, arg = CUES.get((head,), ("", ""))
    func = {"agg": arg, "super": "MAX" if arg == "desc" else "MIN"}.get(kind)
    figures = [(x.func, x.column) for x in plan.query.measures]
    # ('the lowest salary' is still a ranking here; ranking.superlative makes it MIN later)
    figures += [
        ("MAX" if o.desc else "MIN", o.key.column) for o in plan.query.order if isinstance(o.key, Ref)
    ]
    return func is not None and any(f == func and c is not None and name_words(c) == rest for f, c in figures)


def _only_a_generic_word(
    plan: Plan, ctx: Context, items: list[_Item], n: int, ends: list[int]
) -> Mention | None:
    """The sentence starting at items[n] says only 'just names', 'the name please': one name
    word, no cue but a list word, after a sentence that lists something — read as the name of
    the first thing listed."""
    end = next((e for e in ends if e > items[n].pos), len(plan.shape.tokens))
    here = [it for it in items[n:] if it.pos < end]
    mentions = [it.mention for it in here if it.kind == "mention" and it.mention is not None]
    if len(mentions) != 1 or any(it.kind == "literal" for it in here):
        return None
    if any(it.cue is not None and it.cue.kind != "list" for it in here):
        return None
    m, listed = mentions[0], plan.listed()
    if m.words.lower() not in NAME_WORDS or not listed or listed[0].sense is None:
        return None
    table = listed[0].sense.table
    if m.sense is not None and m.sense.table == table:
        return None  # already the listed thing's name
    labels = label_columns(ctx.lex, table)
    if len(labels) != 1:  # none, or a first and a last name: read the word as matched
        return None
    if column_kind(ctx.lex, table, labels[0]) != "text":
        return None  # gymnast's only label is its id: 'names' are the people.Name it matched
    return replace(m, sense=Sense("column", table, labels[0], None, 1.0, "name"))


def _count_after_column(plan: Plan, cue: Cue) -> bool:
    """'count' right after a column's words ('staff count')."""
    if cue.words.lower() not in ("count", "counts", "count of", "counts of"):
        return False
    before = next((m for m in plan.matching.mentions if m.end == cue.start), None)
    return before is not None and before.sense is not None and before.sense.kind == "column"


def _starts_with_a_name(plan: Plan, item: _Item) -> bool:
    """The sentence starts with a column or a table ('names of …', 'the leader name and …'):
    what it asks to see. Not after other words ('for manufacturers that …, what's …')."""
    m = item.mention
    if m is None or m.sense is None or m.sense.kind not in ("column", "table"):
        return False
    k = m.start - 1
    while k >= 0 and plan.shape.tokens[k].low in LEAD_WORDS:
        k -= 1  # '…? just the department names'
    return k < 0 or plan.shape.tokens[k].text in SENTENCE_ENDS


def _ranked_own_column(plan: Plan, m: Mention, last: Mention | None) -> bool:
    """`m` is a table right after its own column, which a superlative ranks and a list word asks
    for ('what is the most recently launched program'): the list word asks for the table's rows."""
    return (
        last is not None
        and last.end == m.start
        and m.sense is not None
        and m.sense.kind == "table"
        and last.sense is not None
        and last.sense.kind == "column"
        and last.sense.table == m.sense.table
        and plan.superlative is not None
        and plan.superlative[1] is last
        and plan.role(last).governed_by_list
    )


AUXILIARIES = frozenset(["has", "have", "had", "did", "does", "do"])
SUBJECT_WORDS = frozenset(["each", "every", "the", "a", "an", "their", "its", "this", "that"])


def _inverted_verb(plan: Plan, m: Mention) -> bool:
    """'how many railways has each builder built?': after an auxiliary and its subject, the one
    word that ends the clause is the verb, even when a column is spelled so (railway.Built)."""
    tokens = plan.shape.tokens
    last = next((x for x in plan.matching.mentions if x.end == m.start and x.sense is not None), None)
    if last is None or m.end - m.start != 1 or m.quoted or m.sense is None or m.sense.kind == "value":
        return False  # 'have the characteristic "slow"': a value, the thing had
    if m.end < len(tokens) and tokens[m.end].text not in (*SENTENCE_ENDS, ","):
        return False
    k = last.start - 1
    while k >= 0 and tokens[k].low in SUBJECT_WORDS:
        k -= 1
    return (
        k > 0
        and tokens[k].low in AUXILIARIES
        and any(c.kind == "count" and c.end <= k for c in plan.shape.cues)
    )


def _unused_comparisons(plan: Plan, ctx: Context, pending: list[Cue]) -> Plan:
    """A comparison ('more than', 'at least') is only ever used by the number after it; one still
    pending when a phrase takes the cues ('more than one captain' with the number unread) would
    vanish from the answer, so it declines as a comparison left over at the end does."""
    for cue in pending:
        if cue.kind == "cmp":
            plan = check_leftover(plan, ctx, cue)
    return plan


def _items(plan: Plan) -> list[_Item]:
    # 'gymnast count per hometown': a 'count' said after a table counts it, as 'count of gymnasts'
    # does, so it is read first
    tables = {
        m.end: m.start for m in plan.matching.mentions if m.sense is not None and m.sense.kind == "table"
    }

    def position(c: Cue) -> int:
        postfix = c.kind == "count" and c.words.lower() in ("count", "counts")
        return tables.get(c.start, c.start) if postfix else c.start

    items = [_Item(position(c), "cue", cue=c) for c in plan.shape.cues]
    items += [_Item(lit.start, "literal", literal=lit) for lit in plan.shape.literals if lit.kind != "quoted"]
    items += [_Item(m.start, "mention", mention=m) for m in plan.matching.mentions]
    return sorted(items, key=lambda it: (it.pos, it.kind != "cue"))


# ---------------------------------------------------------------------------------------------
# literals


def _attach_literal(
    plan: Plan, ctx: Context, lit: Literal_, pending: list[Cue], last: Mention | None, nxt: Mention | None
) -> tuple[Plan, list[Cue]]:
    """Attach a number or date to what governs it; returns the plan and the cues still pending."""
    kinds = [c.kind for c in pending]
    table_next = nxt is not None and nxt.sense is not None and nxt.sense.kind == "table"
    used = plan.used_literals | {lit.start}
    if (
        lit.kind == "number"
        and "list" in kinds
        and table_next
        and nxt is not None
        and plan.adjacent_after(lit, nxt)
    ):
        # 'which 3 clients …': the first three
        cue = next(c for c in pending if c.kind == "list")
        top = Cue("top", "desc", cue.start, cue.end, f"{cue.words} {lit.words}")
        return plan.but(top=(top, int(lit.value)), used_literals=used), [*pending, top]
    if lit.kind == "number" and _superlative_next(plan, lit):
        # 'the 3 most recent payments': the first three of a ranking
        top = Cue("top", "desc", lit.start, lit.end, lit.words)
        return plan.but(top=(top, int(lit.value)), used_literals=used), pending
    if lit.kind == "number" and "top" in kinds:
        cue = next(c for c in pending if c.kind == "top")
        plan = plan.but(top=(cue, int(lit.value)), used_literals=used)
        return plan, [c for c in pending if c.kind != "top"] + [cue]
    if lit.kind in ("number", "year") and "cmp" in kinds:
        cue = next(c for c in reversed(pending) if c.kind == "cmp")
        tokens = plan.shape.tokens
        said = max(lit.end, cue.end)  # after the number, or after '2 or more'
        if said < len(tokens) and tokens[said].low in ROW_NOUNS:
            # 'parties with at least two records': rows of which table, grouped how, is not said
            raise Decline(
                f"it could not tell what '{cue.words} {lit.words} {tokens[said].text}' counts",
                [f"{cue.words} {lit.words} {tokens[said].text}"],
            )
        agg = next((c for c in pending if c.kind == "agg" and c.arg in ("AVG", "SUM", "MIN", "MAX")), None)
        if agg is not None and lit.kind == "number" and _numeric_next(plan, ctx, lit, nxt):
            # 'stations that have an average of more than 10 bikes available': the average is
            # compared, not each row's number
            assert nxt is not None and nxt.sense is not None and nxt.sense.column is not None
            measure = Measure(
                cue_func(agg), nxt.sense.table, nxt.sense.column, words=f"{agg.words} {nxt.words}"
            )
            having = Having(
                measure, cue_op(cue), lit.value, f"{agg.words} {cue.words} {lit.words} {nxt.words}"
            )
            plan = plan.but(used_literals=used).with_role(nxt, "having").adding(having=having)
            return plan, [c for c in pending if c not in (cue, agg)]
        if lit.kind == "number" and _counts_qualified(plan, lit, nxt):
            # 'festivals that have at least two nominated artworks': a count of the rows a value
            # qualifies, which keyword mode does not compute
            raise Decline(
                f"it could not tell what '{cue.words} {lit.words} {nxt.words if nxt else ''}' counts"
            )
        # 'project ids with at least 2 documents': a number right before a table counts it, so
        # the numeric column named before is not what it compares
        right_before = nxt is not None and all(plan.shape.role[i] == "stop" for i in range(said, nxt.start))
        # 'swimmers with more than one win': a stored value right after the number counts the rows
        # that hold it, not the one number a swimmer has
        value_next = nxt is not None and nxt.sense is not None and nxt.sense.kind == "value"
        nxt_adjacent = nxt is not None and nxt.start == said  # not 'wines under 50 from Monterey'
        counts_next = lit.kind == "number" and (table_next or (value_next and nxt_adjacent)) and right_before
        if value_next and not nxt_adjacent:
            nxt = None  # 'wines under 50 from Monterey': the value is not what the number counts
        if nxt is not None and (
            any(
                c.kind in ("list", "order", "group", "and", "or") and said <= c.start < nxt.start
                for c in plan.shape.cues
            )
            or any(t.kind == "punct" for t in plan.shape.tokens[said : nxt.start])
        ):
            # 'students under 20 who participate …', 'wines over 100, ordered by year': what the
            # next clause names is not what the number compares
            nxt = None
        if lit.kind == "number" and right_before and nxt is not None and _table_then_column(ctx, nxt):
            # 'at least two institutions founded after 1880' matched Institution.Founded: it
            # counts institutions, and no founding year is 'at least two'
            raise Decline(f"it could not tell what '{cue.words} {lit.words} {nxt.words}' counts", [nxt.words])
        plan = compare(
            plan.but(used_literals=used),
            ctx,
            cue_op(cue),
            float(lit.value),
            f"{cue.words} {lit.words}",
            None if counts_next else last,
            nxt,
            paid=cue.start > 0 and tokens[cue.start - 1].low in PAY_VERBS,
        )
        return plan, [c for c in pending if c.kind != "cmp"]
    if lit.kind in ("year", "month", "quarter", "date", "period"):
        return date_literal(plan, ctx, lit, pending, last)
    if lit.kind in ("number", "year"):
        # 'paper ID 2', 'semester 1': the column named just before; '3 stops': just after
        named = numeric_neighbour(plan, ctx, lit, last, nxt)
        if named is not None:
            m, ref = named
            # 'universities founded before 1850': a year too early to be read as a date
            prep = next((c for c in pending if c.kind == "date_prep" and c.end == lit.start), None)
            op = year_comparison(plan, lit, prep.arg) if prep is not None else "="
            words = f"{m.words} {prep.words} {lit.words}" if prep is not None else f"{m.words} {lit.words}"
            loose = tuple(x for x in plan.loose_columns if x.start != m.start)
            plan = plan.but(used_literals=used, loose_columns=loose).with_role(m, "subject")
            plan = plan.adding(filters=Filter(ref, op, lit.value, words))
            pending = [c for c in pending if c is not prep]
    return plan, pending  # an unattached literal is reported by abstain.check_understood


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


def _bucket_subject(plan: Plan, ctx: Context, m: Mention, start: int) -> bool:
    """'per month of the signup date': a date column right after a time bucket is what it groups;
    'each month of the year 2021' is not (the year is the subject of 2021)."""
    s = m.sense
    if s is None or s.kind != "column" or not s.column:
        return False
    if not all(plan.shape.tokens[i].low in ("of", "the") for i in range(start, m.start)):
        return False
    kind = column_kind(ctx.lex, s.table, s.column)
    unit = plan.buckets[-1][0].arg
    followed_by_date = any(lit.start == m.end for lit in plan.shape.literals)
    return kind in TEMPORAL or (kind in NUMERIC and unit == "year" and not followed_by_date)


def _superlative_next(plan: Plan, lit: Literal_) -> bool:
    cue = plan.shape.cue_at(lit.end)
    return cue is not None and cue.start == lit.end and cue.kind == "super" and float(lit.value).is_integer()


# ---------------------------------------------------------------------------------------------
# neighbouring phrases


def _qualifies_next(m: Mention, items: list[_Item], n: int) -> bool:
    """A stored value right before a table or column qualifies it ('which active clients');
    a value followed by anything else is what the question is about ('which repairers worked')."""
    nxt = items[n + 1] if n + 1 < len(items) else None
    return (
        nxt is not None
        and nxt.kind == "mention"
        and nxt.mention is not None
        and nxt.mention.start == m.end
        and nxt.mention.sense is not None
        and nxt.mention.sense.kind in ("table", "column", "value")
    )


def _clause_start(plan: Plan, i: int) -> bool:
    """Nothing but punctuation or 'and' before position i in its sentence."""
    j = i - 1
    while j >= 0:
        t = plan.shape.tokens[j]
        if t.text in (".", "?", "!", ";", ":"):
            return True
        if t.kind == "punct" or t.low in ("and", "please", "also", "then", "now", "so"):
            j -= 1
            continue
        return False
    return True


IMPERATIVES = frozenset(["show", "list", "give", "display", "return", "get", "find"])


def _imperative_after_comma(plan: Plan, cue: Cue) -> bool:
    """'For customers with two orders, show the name …': a command after a comma starts the
    clause that says what to show ('…, which …' there is a relative pronoun)."""
    i = cue.start
    return i > 0 and plan.shape.tokens[i].low in IMPERATIVES and plan.shape.tokens[i - 1].text in (",", ";")


def _compound_head(plan: Plan, ctx: Context, m: Mention, items: list[_Item], n: int) -> Mention | None:
    tokens = plan.shape.tokens
    nxt = items[n + 1] if n + 1 < len(items) else None
    if nxt is None or nxt.kind != "mention" or nxt.mention is None or nxt.mention.sense is None:
        return None
    other = nxt.mention
    if other.start != m.end or m.sense is None or other.sense is None:
        return None
    if m.sense.kind == "value" or other.sense.kind == "value" or m.names_value or other.names_value:
        return None
    if m.sense.kind == "table" and other.sense.kind == "column" and counts_something(ctx.lex, other.sense):
        return other  # 'number of students enrolled' is the num_enrolled column
    if other.words.lower().endswith(("ed", "ing")):
        return None  # 'which datacenter opened …': a verb, not the head of a compound
    if other.end < len(tokens) and tokens[other.end].low in ("the", "a", "an"):
        return None  # 'which builder built the most railways': 'built' takes an object, a verb
    if _inverted_verb(plan, other):
        return None  # 'how many railways has each builder built?'
    if is_plural(m.words) or min(m.sense.score, other.sense.score) < 0.9:
        return None  # 'authors wrote papers' is a clause, 'business category' a compound
    if m.sense.kind == "column" and other.sense.kind == "column" and is_generic(other.words):
        return None  # 'region name' means the region column itself
    if m.sense.kind == "column" and other.sense.kind == "column" and m.sense.table == other.sense.table:
        return None  # 'which minister left office most recently': two columns of one row, a clause
    return other


def _loose_head(m: Mention, other: Mention) -> bool:
    """A column or table right before a word that only resembles a table's name ('which
    headquarters locations …', Office_locations; 'faculty members', Member_of): a compound whose
    head keyword mode cannot read — as a related table it would join and restrict the rows with
    nothing in the reading saying so."""
    return (
        other.start == m.end
        and m.sense is not None
        and other.sense is not None
        and other.sense.kind == "table"
        and other.sense.table != m.sense.table
        and (
            (m.sense.kind == "column" and other.sense.score < 0.9)
            # a plural noun after a table ('faculty members'), not a verb ('storms affected')
            or (m.sense.kind == "table" and other.sense.score < 0.95 and is_plural(other.words))
        )
        and not (m.names_value or other.names_value)
    )


def _modifier(plan: Plan, ctx: Context, m: Mention, head: Mention) -> Plan:
    """The words before a compound's head: a table there is a related entity, a column of the
    head's own table nothing more ('population density'), and so are words that also name the
    head's table ('mailshot outcome code': mailshot_customers.outcome_code). A column of another
    table ('students who declared a minor program', student.minor before program; 'the budgeted
    amount', budget.budgeted before endowment.amount) says something the query would drop:
    keyword mode declines."""
    assert m.sense is not None and head.sense is not None
    if m.sense.kind == "table" and head.sense.kind == "table":
        # 'race tracks', 'dept heads': a kind of the head's rows, not the rows that have one (a
        # join to race would drop the tracks no race was held on)
        return plan.with_role(m, "absorbed")
    if m.sense.kind == "table":
        return plan.with_role(m, "entity").but(entities=(*plan.entities, (m, False)))
    table = head.sense.table
    if m.sense.table != table and not any(
        x.table == table and x.score >= 0.8 for x in ctx.lex.schema(m.words)
    ):
        raise Decline(f"it could not tell how '{m.words}' affects the result", [m.words])
    if head.sense.kind == "table" and m.sense.kind == "column" and m.sense.table == table:
        # 'active customers': the column says which rows — a yes/no column is true, any other
        # column restricts them in a way the words do not say
        ref = Ref(table, m.sense.column or "")
        if column_kind(ctx.lex, table, ref.column) != "boolean" and not FLAG_NAME.match(ref.column.lower()):
            raise Decline(f"it could not tell which '{head.words}' are '{m.words}'", [m.words])
        return plan.with_role(m, "filter").adding(filters=Filter(ref, "true", None, m.words))
    return plan.with_role(m, "absorbed")


FLAG_NAME = re.compile(r"(is|has|can|was|did)_")  # is_active, has_children: yes or no


def _owner_of(plan: Plan, prev: Mention | None, m: Mention) -> bool:
    """'the name of each protein': the table the listed column is said of, which a list chained
    on after it ('… along with the institution') does not end."""
    return (
        prev is not None
        and m.sense is not None
        and m.sense.kind == "table"
        and prev.end < m.start
        and all(t.low in OF_WORDS for t in plan.shape.tokens[prev.end : m.start])
    )


OF_WORDS = frozenset(["of", "each", "every", "all", "the", "a", "an"])


def _chained(plan: Plan, prev: Mention, m: Mention) -> bool:
    """'names and areas', 'name, rating and city': joined by 'and' or commas only."""
    joined = False
    for i in range(prev.end, m.start):
        t = plan.shape.tokens[i]
        cue = plan.shape.cue_at(i)
        if t.text == "," or (cue is not None and cue.kind == "and"):
            joined = True
        elif not (
            plan.shape.role[i] == "stop" and t.low in ("the", "their", "its", "a", "an", "both", "also")
        ):
            return False
    return joined


# ---------------------------------------------------------------------------------------------
# the role of one phrase


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


def read_mention(plan: Plan, ctx: Context, m: Mention, pending: list[Cue], governed: bool) -> Plan:
    """Give `m` its role from the `pending` cues; `governed`: a list cue ('which', 'show') asks for it."""
    s = m.sense
    assert s is not None
    plan = plan.with_role(m, governed=governed)
    if m.names_value:
        return plan.with_role(m, "absorbed")
    if s.kind == "value":
        text = next((c for c in pending if c.kind == "text"), None)
        op = cue_op(text) if text is not None else s.op
        value = s.value if text is None else m.words
        ref = Ref(s.table, s.column or "")
        said = next((x for x in plan.matching.mentions if text is not None and x.end == text.start), None)
        if said is not None and said.words.lower() in NAME_WORDS:
            # 'airlines with names starting with Orbit': the names, wherever else 'Orbit' is stored
            loose = tuple(x for x in plan.loose_columns if x.start != said.start)
            plan = plan.but(loose_columns=loose).with_role(said, "absorbed")
            assert text is not None
            ref = _named_by(plan, ctx, text, s.table)
        elif text is not None and (
            {"name", "names"} & set(text.words.lower().split())
            or (said is not None and said.sense is not None and said.sense.kind == "table")
        ):
            ref = _named_by(plan, ctx, text, s.table)  # 'airlines starting with Orbit': their names
        if m.start in plan.negated:
            if text is not None:
                raise Decline(f"it could not tell how to match text that is not '{m.words}'", [m.words])
            op = "!="
        f = Filter(ref, op, value, m.words, s.meaning)
        return plan.with_role(m, "filter").adding(filters=f)
    cues = _Cues.of(pending)
    if "text" in cues.kinds:
        raise Decline(f"it could not tell which text '{m.words}' should match", [m.words])
    if s.kind == "table":
        return _table_mention(plan, ctx, m, s, cues, governed)
    return _column_mention(plan, ctx, m, s, cues, governed)


def _named_by(plan: Plan, ctx: Context, cue: Cue, table: str) -> Ref:
    """'airlines whose names start with "Orbit"': the text is matched against the name of the
    thing named before the cue, wherever else the words happen to be stored (a call sign ORBIT)."""
    before = [x for x in plan.matching.mentions if x.end <= cue.start and x.sense and x.sense.kind == "table"]
    owner = before[-1].sense.table if before and before[-1].sense else table
    names = [c for c in label_columns(ctx.lex, owner) if "name" in c.lower() or "title" in c.lower()]
    if len(names) != 1:
        raise Decline(f"it could not tell which name '{cue.words}' means", [cue.words])
    return Ref(owner, names[0])


def _owns_next_column(plan: Plan, m: Mention, table: str) -> bool:
    """The next phrase, with only stop words between, is a column of `table` ('the students'
    last names'): the table names whose column it is."""
    nxt = next((x for x in plan.matching.mentions if x.start >= m.end), None)
    return (
        nxt is not None
        and nxt.sense is not None
        and nxt.sense.kind == "column"
        and nxt.sense.table == table
        and all(plan.shape.role[i] == "stop" for i in range(m.end, nxt.start))
    )


def _table_mention(plan: Plan, ctx: Context, m: Mention, s: Sense, cues: _Cues, governed: bool) -> Plan:
    kinds, agg, count, sup = cues.kinds, cues.agg, cues.count, cues.sup
    # 'the number of hosts' read as one phrase (it spells party.number_of_hosts) that matched the
    # table host: still a count of hosts
    if m.words.lower().startswith(("number of ", "count of ", "# of ")):
        count, m = True, replace(m, words=m.words.split(" ", 2)[2])
    if sup is not None and (count or sup.words.lower() in ("most", "least", "fewest")):
        return _ranked(plan, m, Measure("COUNT", s.table, words=m.words), sup)
    if count and _orders(plan, cues):
        # 'top 3 datacenters by number of hosts', 'sorted by the number of papers'
        # 'sorted by the number of papers' says no direction: ascending, as SQL and a sort
        # button read it; 'top 3 … by number of hosts' ranks, largest first; a direction said
        # anywhere ('… in descending order', often after the count) is the one
        said = next((c.arg == "desc" for c in plan.shape.cues if c.kind == "dir"), None)
        desc = said if said is not None else bool(plan.top and plan.top[0].arg == "desc")
        key = OrderKey(Measure("COUNT", s.table, words=m.words), desc, f"number of {m.words}")
        return plan.with_role(m, "order").adding(order=key)
    if count and agg is not None and agg.arg != "SUM":
        # 'the average number of payments per client': an average of counts
        raise Decline(
            f"it asks for the {agg.words} of counts, which keyword mode does not compute", [agg.words]
        )
    spelled = _spelled_column(ctx, m, s.table) if count and _said_different(plan, m) else None
    if spelled is not None:
        # 'how many different allergy types' in Allergy_Type (Allergy, AllergyType): the types
        measure = Measure("COUNT", s.table, spelled, True, m.words)
        return plan.with_role(m, "measure").adding(measures=measure)
    if count or (agg is not None and agg.arg == "SUM" and "count" in kinds):
        plan = plan.with_role(m, "measure").adding(measures=Measure("COUNT", s.table, words=m.words))
        if "group" in kinds or "by" in kinds:
            raise Decline(f"it could not tell how '{m.words}' is counted per group", [m.words])
        return plan
    if agg is not None:
        column = measure_column(ctx.lex, s.table) or _named_measure(ctx.lex, m, s.table)
        if column is None:
            raise Decline(
                f"'{agg.words}' needs a numeric column and '{m.words}' has none or several", [m.words]
            )
        measure = Measure(cue_func(agg), s.table, column, words=f"{agg.words} {m.words}")
        return _measured(plan, m, measure, sup)
    if _orders(plan, cues):
        plan = plan.with_role(m, "order")
        counted = _counted(plan, s.table)
        if counted is not None:  # 'how many stations … sort from fewest to most stations'
            return plan.adding(order=OrderKey(counted, bool(plan.order_dir), f"number of {m.words}"))
        keys = tuple(OrderKey(Ref(s.table, c), False, m.words) for c in label_columns(ctx.lex, s.table))
        return plan.with_query(order=(*plan.query.order, *keys))
    if _groups(plan, cues):
        refs = [Ref(s.table, c) for c in label_columns(ctx.lex, s.table)]
        names = {**plan.query.names, **{ref: singular_phrase(m.words) for ref in refs}}
        plan = plan.with_role(m, "group")
        return plan.with_query(groups=(*plan.query.groups, *refs), names=frozen_map(names))
    if sup is not None and sup.words.lower() in (IMPLIED.keys() | TEMPORAL_ADJ):
        # 'the latest payment', 'the longest river': ranked by the column the adjective implies,
        # found once the whole question is read (ranking.implied_superlative)
        plan = plan.with_role(m, "entity")
        return plan.but(entities=(*plan.entities, (m, governed)), superlative=(sup, None))
    if sup is not None:
        moded = _mode_after(plan, ctx, sup, s.table)
        if moded is None:
            raise Decline(f"it could not tell what '{sup.words}' ranks '{m.words}' by", [sup.words])
        return moded.with_role(m, "entity").but(entities=(*moded.entities, (m, False)))
    if "top" in kinds:
        plan = plan.with_role(m, "entity").but(entities=(*plan.entities, (m, True)))
        if plan.top is None:
            cue = next(c for c in cues.pending if c.kind == "top")
            plan = plan.but(top=(cue, None))
        return plan
    return plan.with_role(m, "entity").but(entities=(*plan.entities, (m, governed)))


def _column_mention(plan: Plan, ctx: Context, m: Mention, s: Sense, cues: _Cues, governed: bool) -> Plan:
    lex = ctx.lex
    agg, count, sup = cues.agg, cues.count, cues.sup
    ref = Ref(s.table, s.column or "")
    kind = column_kind(lex, ref.table, ref.column)
    identifies = is_key(lex, ref) or is_pointer(lex, ref) or ref.column.lower().endswith("_id")
    if count and (agg is None or agg.arg == "SUM") and identifies:
        # 'number of publications' matched publication.pid, 'number of restaurants' matched
        # location.restaurant_id: count the things it identifies (a transaction_id no key
        # declares is still no number to add up)
        measure = (
            Measure("COUNT", ref.table, words=m.words)
            if is_key(lex, ref)
            else Measure("COUNT", ref.table, ref.column, True, m.words)
        )
        if sup is not None:
            return _ranked(plan, m, measure, sup)
        return plan.with_role(m, "measure").adding(measures=measure)
    if count and agg is None and sup is None and kind in NUMERIC:
        total = any(c.kind == "count" and "total" in c.words.lower() for c in cues.pending)
        if total or (any(c.kind == "group" for c in plan.shape.cues) and counts_something(lex, s)):
            # 'total number of citations (per author)': the column already counts something —
            # not 'for each sex, how many people weigh more than 85' (weight counts nothing)
            measure = Measure("SUM", ref.table, ref.column, words=m.words)
            return plan.with_role(m, "measure").adding(measures=measure)
    if agg is not None:
        func = cue_func(agg)
        if func in ("AVG", "SUM") and kind not in NUMERIC:
            if count and func == "SUM":  # 'total number of cities' → count distinct
                measure = Measure("COUNT", ref.table, ref.column, True, m.words)
                return plan.with_role(m, "measure").adding(measures=measure)
            raise Decline(
                f"'{agg.words}' needs a number and '{m.words}' is not numeric", [agg.words, m.words]
            )
        measure = Measure(func, ref.table, ref.column, words=f"{agg.words} {m.words}")
        plan = _measured(plan, m, measure, sup)
        for other in _listed_aggregates(plan, cues.pending, agg):
            # 'the average and total student capacity': one figure each
            extra = Measure(cue_func(other), ref.table, ref.column, words=f"{other.words} {m.words}")
            plan = plan.adding(measures=extra)
        return plan
    if sup is not None and sup.words.lower() in MODE_CUES and not is_key(lex, ref):
        # 'the most common status of roller coasters': the status the most rows have
        beside = [x for x in (*plan.explicit, *plan.listed()) if x.start < m.start and x.sense != m.sense]
        if beside:
            # 'catalog entry names with the most common attribute value': the rows that have the
            # value most rows have, which one ranking of (name, value) pairs does not give
            raise Decline(
                f"it asks for the {beside[0].words} that have the {sup.words} {m.words}, which keyword "
                "mode does not compute",
                [sup.words],
            )
        plan = plan.with_role(m, "projection").but(explicit=(*plan.explicit, m))
        return _mode(plan, m, ref, sup)
    counts_with = sup is not None and sup.words.lower() in ("most", "least", "fewest")
    if sup is not None and (is_key(lex, ref) or is_pointer(lex, ref) or (identifies and counts_with)):
        if counts_with:
            # 'the customer with the most policies' matched Customer_Policies.Policy_ID: count them;
            # 'the account with the most transactions' matched a transaction_id no key declares,
            # the table's own id all the same: its rows
            measure = (
                Measure("COUNT", ref.table, ref.column, True, m.words)
                if is_pointer(lex, ref) and not is_key(lex, ref)
                else Measure("COUNT", ref.table, words=m.words)
            )
            return _ranked(plan, m, measure, sup)
        raise Decline(
            f"'{sup.words}' cannot rank by '{m.words}', which identifies rows", [sup.words, m.words]
        )
    if sup is not None and sup.words.lower() in ("most", "least", "fewest") and kind not in NUMERIC:
        # 'the party with the most delegates' matched election.Delegate, a name: count the rows
        return _ranked(plan, m, Measure("COUNT", ref.table, words=m.words), sup)
    if (
        sup is not None
        and kind not in (*NUMERIC, *TEMPORAL)
        and sup.words.lower() in (IMPLIED.keys() | AGE_ADJ.keys() | TEMPORAL_ADJ)
        and ref.column in label_columns(lex, ref.table)
    ):
        # 'tallest building name?': the name is listed, the building ranked by the height 'tallest'
        # implies (ranking.implied_superlative) — never the greatest name; 'the most recent race
        # name': the race ranked by its date
        plan = plan.with_role(m, "projection").but(explicit=(*plan.explicit, m))
        return plan.but(entities=(*plan.entities, (m, governed)), superlative=(sup, None))
    if sup is not None:
        return _ranked(plan, m, ref, sup)
    if count and _count_then_group(cues):
        # 'how many per affiliation': the rows counted, one figure per affiliation — not the
        # number of different affiliations
        plan = plan.with_role(m, "group").adding(groups=ref)
        return plan.adding(
            measures=Measure("COUNT", ref.table, words=plural(ref.table.replace("_", " ").lower()))
        )
    if count and (kind not in NUMERIC or _said_different(plan, m)):
        # 'how many different majors': the different values, numbers or not
        measure = Measure("COUNT", ref.table, ref.column, True, m.words)
        return plan.with_role(m, "measure").adding(measures=measure)
    if _orders(plan, cues):
        counted = _counted(plan, ref.table)
        if counted is not None and is_key(lex, ref):
            # 'how many stations … sort from fewest to most stations': the count, not the ids
            key = OrderKey(counted, bool(plan.order_dir), f"number of {m.words}")
            return plan.with_role(m, "order").adding(order=key)
        key = OrderKey(ref, bool(plan.top and plan.top[0].arg == "desc"), m.words)
        return plan.with_role(m, "order").adding(order=key)
    if _groups(plan, cues):
        return plan.with_role(m, "group").adding(groups=ref)
    if governed or count:
        return plan.with_role(m, "projection").but(explicit=(*plan.explicit, m))
    return plan.with_role(m, "loose").but(loose_columns=(*plan.loose_columns, m))


def _mode(plan: Plan, m: Mention, ref: Ref, sup: Cue) -> Plan:
    """Rank `ref`'s values by how many rows have each: the value 'most common' names."""
    measure = Measure("COUNT", ref.table, words=name_phrase(ref.table))
    plan = plan.adding(order=OrderKey(measure, sup.arg == "desc", f"{sup.words} {m.words}"))
    return plan.but(superlative=(sup, None))


def _mode_after(plan: Plan, ctx: Context, sup: Cue, table: str | None) -> Plan | None:
    """'which tryout position is the most common (among tryouts)?': a mode cue said after the
    one column the question lists ranks that column's values, as it does said before it. Only
    when nothing else is ranked or computed and the table named after it, if any, is the
    column's own; otherwise None, and the cue is left to decline."""
    if sup.words.lower() not in MODE_CUES or plan.query.order or plan.query.measures or plan.superlative:
        return None
    if len(plan.explicit) != 1 or plan.explicit[0].end > sup.start:
        return None
    m = plan.explicit[0]
    s = m.sense
    if s is None or s.kind != "column" or (table is not None and table != s.table):
        return None
    ref = Ref(s.table, s.column or "")
    if is_key(ctx.lex, ref) or is_pointer(ctx.lex, ref):
        return None
    return _mode(plan, m, ref, sup)


def _spelled_column(ctx: Context, m: Mention, table: str) -> str | None:
    """The table's one column, not its key, whose name the phrase spells word for word."""
    said = singular_phrase(m.words).replace(" ", "").lower()
    t = ctx.lex.table(table)
    keys = set(ctx.lex.key_of(table))
    hits = [
        c.name
        for c in (t.columns if t else ())
        if c.name.replace("_", "").lower() == said and c.name not in keys
    ]
    return hits[0] if len(hits) == 1 else None


def _table_then_column(ctx: Context, m: Mention) -> bool:
    """A column phrase whose first word names the column's own table ('institutions founded')."""
    s = m.sense
    words = m.words.lower().split()
    if s is None or s.kind != "column" or len(words) < 2:
        return False
    return any(x.kind == "table" and x.table == s.table and x.score >= 0.95 for x in ctx.lex.schema(words[0]))


def _listed_aggregates(plan: Plan, pending: list[Cue], first: Cue) -> list[Cue]:
    """The aggregates listed after the first with 'and' or a comma between ('average and total',
    'average, min and max'), each another figure of the same column."""
    tokens = plan.shape.tokens
    aggs = [c for c in pending if c.kind == "agg" and c.start >= first.start]
    out: list[Cue] = []
    for a, b in itertools.pairwise(aggs):
        between = {tokens[k].low for k in range(a.end, b.start)}
        if not between or not between <= {"and", ",", "the"} or cue_func(b) == cue_func(first):
            break
        out.append(b)
    return out


def _named_measure(lex: Lexicon, m: Mention, table: str) -> str | None:
    """'total payment amount' matched the table payment_amount: of its several numbers, the one
    a word of the phrase names (amount), if exactly one does."""
    candidates = {c.lower(): c for c in measure_columns(lex, table)}
    named = {
        candidates[(x.column or "").lower()]
        for word in m.words.split()
        for x in lex.schema(word.lower())
        if x.kind == "column"
        and x.table.lower() == table.lower()
        and x.score >= 0.95
        and (x.column or "").lower() in candidates
    }
    return named.pop() if len(named) == 1 else None


def _measured(plan: Plan, m: Mention, measure: Measure, sup: Cue | None) -> Plan:
    """'the total cost', and with a superlative before it ('the highest total cost') the rows are
    ranked by it too: 'which month had the highest total amount' keeps the first month."""
    plan = plan.with_role(m, "measure").adding(measures=measure)
    if sup is not None and measure.ref is not None and _listed_cues(plan, sup):
        # 'the average and highest review ratings': two figures of one column, not a ranking
        extreme = Measure(
            "MAX" if _descending(sup, measure.ref.column) else "MIN",
            measure.ref.table,
            measure.ref.column,
            words=f"{sup.words} {m.words}",
        )
        return plan.adding(measures=extreme)
    if sup is not None and sup.words.lower() not in TEMPORAL_ADJ:
        plan = plan.adding(order=OrderKey(measure, sup.arg == "desc", f"{sup.words} {m.words}"))
        plan = plan.but(superlative=(sup, None))
    return plan


def _listed_cues(plan: Plan, sup: Cue) -> bool:
    """'average and highest', 'the total and the longest': an aggregate word, 'and' (or a comma),
    then the superlative."""
    cues = {c.end: c for c in plan.shape.cues}
    start = sup.start - 1 if sup.start > 0 and plan.shape.tokens[sup.start - 1].low == "the" else sup.start
    joint = cues.get(start)
    return (
        joint is not None
        and joint.kind == "and"
        and (before := cues.get(joint.start)) is not None
        and before.kind == "agg"
    )


def _numeric_next(plan: Plan, ctx: Context, lit: Literal_, nxt: Mention | None) -> bool:
    """A number column named right after the number ('more than 10 bikes available')."""
    return nxt is not None and plan.adjacent_after(lit, nxt) and _numeric_column(ctx, nxt)


def _counts_qualified(plan: Plan, lit: Literal_, nxt: Mention | None) -> bool:
    """A value right after the number, and a table right after the value ('two nominated
    artworks')."""
    if nxt is None or nxt.sense is None or nxt.sense.kind != "value" or not plan.adjacent_after(lit, nxt):
        return False
    after = next((m for m in plan.matching.mentions if m.start >= nxt.end), None)
    return (
        after is not None
        and after.sense is not None
        and after.sense.kind == "table"
        and after.start == nxt.end
    )


# superlatives that, compared with a number, are each one's maximum or minimum
COMPARED_EXTREMES = frozenset(["highest", "lowest", "largest", "smallest", "maximum", "minimum"])


def _extreme_compared(plan: Plan, ctx: Context, items: Sequence[_Item], n: int) -> bool:
    """'highest' or 'lowest' right before a numeric column that is then compared with a number
    ('whose highest weekly precipitation is above 50'): each one's maximum is compared, not the
    one row ranked first."""
    cue, m = items[n].cue, _right_after(items, n)
    after = items[n + 2].cue if n + 2 < len(items) else None
    if cue is None or cue.words.lower() not in COMPARED_EXTREMES or m is None or after is None:
        return False
    between = plan.shape.tokens[m.end : after.start]
    return (
        _numeric_column(ctx, m)
        and after.kind == "cmp"
        and all(t.low in ("is", "was", "are", "were") for t in between)
    )


def _top_of_a_number(plan: Plan, ctx: Context, items: Sequence[_Item], n: int) -> bool:
    """'top' (no count after it) right before a numeric column, said of one: 'the top score' is
    the highest score, not the first ten rows that have one ('top scores' may be the first ten)."""
    m = _right_after(items, n)
    return m is not None and not is_plural(m.words) and _numeric_column(ctx, m)


def _right_after(items: Sequence[_Item], n: int) -> Mention | None:
    """The phrase that starts where the cue at items[n] ends."""
    cue = items[n].cue
    m = items[n + 1].mention if n + 1 < len(items) else None
    return m if cue is not None and m is not None and m.start == cue.end else None


def _numeric_column(ctx: Context, m: Mention | None) -> bool:
    s = m.sense if m is not None else None
    return (
        s is not None
        and s.kind == "column"
        and s.column is not None
        and is_numeric(ctx.lex, Ref(s.table, s.column))
    )


def _counted(plan: Plan, table: str) -> Measure | None:
    """The count of `table`'s rows the question already asks for."""
    return next(
        (x for x in plan.query.measures if x.func == "COUNT" and x.column is None and x.table == table), None
    )


def _said_different(plan: Plan, m: Mention) -> bool:
    """'different' or 'distinct' right before the phrase."""
    return any(c.kind == "distinct" and c.end == m.start for c in plan.shape.cues)


def _descending(sup: Cue, column: str | None) -> bool:
    """The superlative's direction: 'the youngest age' (and 'the average and youngest age') is
    the lowest age, not the latest."""
    if column is not None and column.lower() == "age" and sup.words.lower() in AGE_ADJ:
        return AGE_ADJ[sup.words.lower()]
    return sup.arg == "desc"


def _ranked(plan: Plan, m: Mention, key: Ref | Measure, sup: Cue) -> Plan:
    """'the highest rating', 'the most papers': rank by `key`; ranking.superlative decides
    later whether that means the first row or MAX."""
    desc = _descending(sup, key.column if isinstance(key, Ref) else None)
    plan = plan.with_role(m, "order").adding(order=OrderKey(key, desc, f"{sup.words} {m.words}"))
    return plan.but(superlative=(sup, m if isinstance(key, Ref) else None))


def _orders(plan: Plan, cues: _Cues) -> bool:
    """'ordered by X', or 'by X' after 'top N'."""
    return "order" in cues.kinds or ("by" in cues.kinds and _by_orders(plan))


def _count_then_group(cues: _Cues) -> bool:
    """'how many per X', 'count for each X': the count names nothing before the grouping cue."""
    count = next((c for c in cues.pending if c.kind == "count"), None)
    return count is not None and any(c.kind == "group" and c.start >= count.end for c in cues.pending)


def _groups(plan: Plan, cues: _Cues) -> bool:
    """'per X', 'for each X', or 'by X' after a measure."""
    return "group" in cues.kinds or ("by" in cues.kinds and _by_groups(plan, cues.pending))


def _by_groups(plan: Plan, pending: list[Cue]) -> bool:
    """'by X' groups after a measure ('clients by country'), but ranks after 'top'."""
    if _by_orders(plan):
        return False
    by = next(c for c in pending if c.kind == "by")
    prev = plan.shape.tokens[by.start - 1].low if by.start > 0 else ""
    if prev in GLUE or prev.endswith(("ed", "en")):
        return False  # 'written by', 'paid by': a relation, not a grouping
    after = next((m for m in plan.matching.mentions if m.start >= by.end), None)
    if after is not None and after.sense is not None and after.sense.kind == "value":
        return False  # 'the average rating of songs by female artists': whose songs, not per artist
    return bool(plan.query.measures)


def _by_orders(plan: Plan) -> bool:
    """'top 3 by X', and 'names by market share, highest first' (a direction said, nothing
    computed): 'by' ranks."""
    if not plan.query.measures and any(c.kind == "dir" for c in plan.shape.cues):
        return not plan.query.order
    return plan.top is not None and not any(isinstance(o.key, Measure) or o.words for o in plan.query.order)


# ---------------------------------------------------------------------------------------------
# readings that claim several words at once, before the walk


def read_ratio(plan: Plan, ctx: Context) -> Plan:
    """'the ratio of helpfulness score to clarity score (for each course)': two numbers of the
    same row, divided. Any other ratio (of counts, across tables) is declined."""
    shape = plan.shape
    cue = next((c for c in shape.cues if c.kind == "unsupported" and c.words.lower() == "ratio"), None)
    if cue is None:
        return plan
    after = [m for m in plan.matching.mentions if m.start >= cue.end and m.sense is not None]
    if len(after) < 2:
        return plan
    a, b = after[0], after[1]
    toks = shape.tokens
    lead = {t.low for t in toks[cue.end : a.start]}
    link = [t.low for t in toks[a.end : b.start] if t.low not in ("the", "a", "an", "its", "their")]
    if not lead <= {"of", "the", "between"} or link not in (
        ["to"],
        ["over"],
        ["per"],
        ["and"],
        ["divided", "by"],
    ):
        return plan
    refs = []
    for m in (a, b):
        s = m.sense
        if s is None or s.kind != "column" or not s.column or not is_numeric(ctx.lex, Ref(s.table, s.column)):
            return plan
        refs.append(Ref(s.table, s.column))
    if refs[0].table != refs[1].table:
        return plan
    plan = plan.with_query(ratio=(refs[0], refs[1])).with_role(a, "absorbed").with_role(b, "absorbed")
    return plan.but(
        skipped_cues=plan.skipped_cues | {c.start for c in shape.cues if cue.start <= c.start < b.start}
    )


START = frozenset(["start", "started", "begin", "begins", "from", "checkin", "departure", "pickup", "open"])
END = frozenset(["end", "ended", "finish", "to", "checkout", "arrival", "dropoff", "close", "return"])
UNITS = {"second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week"}
EXTREMES: dict[str, Func] = {"longest": "MAX", "shortest": "MIN"}


def read_duration(plan: Plan, ctx: Context) -> Plan:
    """'The average session duration in seconds': a row's end date minus its start date,
    aggregated. Read only when nothing has to be guessed: an aggregate is asked for ('average',
    'total', 'longest'), the unit is stated ('in seconds', 'in days'), and the table has exactly
    one start date and one end date (session_start_ts / session_end_ts). Otherwise the word stays
    unsupported and keyword mode declines, as it does for any duration it cannot pin down."""
    shape = plan.shape
    cue = next((c for c in shape.cues if c.kind == "unsupported" and c.words.lower() == "duration"), None)
    if cue is None:
        return plan
    unit_at = next(
        (
            i
            for i in range(cue.end, len(shape.tokens) - 1)
            if shape.tokens[i].low == "in" and shape.tokens[i + 1].low.rstrip("s") in UNITS
        ),
        None,
    )
    how = next(
        (
            c
            for c in reversed(shape.cues)
            if c.end <= cue.start and (c.kind == "agg" or c.words.lower() in EXTREMES)
        ),
        None,
    )
    if unit_at is None or how is None:
        return plan
    between = [m for m in plan.matching.mentions if how.end <= m.start and m.end <= cue.start]
    tables = [m for m in between if m.sense is not None and m.sense.kind == "table"]
    if len(tables) != 1 or len(between) != 1:
        return plan
    sense = tables[0].sense
    assert sense is not None
    table = sense.table
    pair = start_and_end(ctx.lex, table)
    if pair is None:
        return plan
    unit = UNITS[shape.tokens[unit_at + 1].low.rstrip("s")]
    func = cue_func(how) if how.kind == "agg" else EXTREMES[how.words.lower()]
    words = f"{tables[0].words} duration in {unit}s"
    measure = Measure(func, table, pair[1], words=words, since=pair[0], unit=unit)
    plan = plan.adding(measures=measure).with_role(tables[0], "absorbed")
    unit_words = {unit_at, unit_at + 1}
    for m in plan.matching.mentions:
        if m.start in unit_words:
            plan = plan.with_role(m, "absorbed")
    # the unit's words are read: stop words from here on, and no longer unknown
    return plan.but(
        skipped_cues=plan.skipped_cues | {how.start, cue.start},
        shape=replace(shape, role=tuple("stop" if i in unit_words else r for i, r in enumerate(shape.role))),
        matching=replace(
            plan.matching, unmatched=tuple(i for i in plan.matching.unmatched if i not in unit_words)
        ),
    )


def start_and_end(lex: Lexicon, table: str) -> tuple[str, str] | None:
    """The one start date and the one end date of `table`, by their names."""
    t = lex.table(table)
    if t is None:
        return None
    dates = [c.name for c in t.columns if column_kind(lex, t.name, c.name) in TEMPORAL]
    starts = [d for d in dates if set(fold(d.replace("_", " ")).split()) & START]
    ends = [d for d in dates if set(fold(d.replace("_", " ")).split()) & END]
    if len(starts) == 1 and len(ends) == 1 and starts != ends:
        return starts[0], ends[0]
    return None
