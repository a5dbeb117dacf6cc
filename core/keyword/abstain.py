"""When keyword mode declines, and what it says when it does.

The rule is simple: everything the question says must end up in the SQL. A content word that
matched nothing, a cue that governed nothing it could use, a number or date that found no
column, or wording keyword mode does not compute (ratios, medians, negations other than 'not' a
stored value and 'no rows of a table that refers to it'...) means the answer would quietly ignore
part of the question — so it declines, says what it understood, and offers a rephrasing built
from the words it did understand. Declining costs the person a
rephrasing; a wrong answer presented as sure costs far more.
"""

from __future__ import annotations

import itertools

from core.dictionary import name_words
from core.keyword.columns import NUMERIC, counts_something
from core.keyword.dates import about_dates, date_hint, date_verb
from core.keyword.match import KEY_WORDS, POSSESSIVES, Lexicon, Matching, Mention, Sense, base_word
from core.keyword.plan import Absent, Context, Decline, Measure, Plan, Ref
from core.keyword.ranking import IMPLIED
from core.keyword.shapes import (
    FILLERS,
    MEASURE_UNITS,
    RECENT_WORDS,
    RELATION_VERBS,
    ROW_NOUNS,
    SENTENCE_ENDS,
    TEMPORAL_ADJ,
    Cue,
    everything_at,
)
from core.plurals import name_phrase, plural


def check_unsupported(plan: Plan, ctx: Context) -> Plan:
    """Wording keyword mode recognises but does not compute (shapes.py lists it)."""
    cues = plan.shape.cues
    for k, cue in enumerate(cues):
        if cue.kind != "unsupported" or cue.start in plan.skipped_cues:
            continue
        prev = cues[k - 1] if k > 0 else None
        low = cue.words.lower()
        if low == "both" and prev is not None and prev.kind == "list" and prev.end == cue.start:
            continue  # 'give both X and Y' lists two columns
        if low == "either" and any(c.kind == "or" and cue.end < c.start <= cue.end + 5 for c in cues):
            plan = plan.but(skipped_cues=plan.skipped_cues | {cue.start})
            continue  # 'in either Banking or Conglomerate': the 'or' says it
        both = _both_values(plan, cue) if low == "both" else None
        if both is not None:  # 'storms that affected both Afghanistan and Albania'
            plan = plan.but(both=plan.both | {both}, skipped_cues=plan.skipped_cues | {cue.start})
            continue
        absent = _absent(plan, ctx, cue) if cue.arg == "a negation" else None
        if absent is not None:  # 'customers who do not have any policies'
            plan = absent
            continue
        negated = _negated_value(plan, cue) if cue.arg == "a negation" else None
        if negated is not None:  # 'whose status is not Village', 'not located in London'
            plan = plan.but(
                negated=plan.negated | {negated.start}, skipped_cues=plan.skipped_cues | {cue.start}
            )
            continue
        raise Decline(
            f"it asks for {cue.arg} ('{cue.words}'), which keyword mode does not compute", [cue.words]
        )
    return plan


NO_ROWS = frozenset(
    [
        "do not",
        "does not",
        "did not",
        "have no",
        "has no",
        "never",
        "no",
        "without",
        "not",
        "are not",
        "is not",
    ]
)
_BEFORE_THE_THING = frozenset(
    ["any", "a", "an", "the", "single", "have", "has", "had", "in", "to", "on", "at", "from", "by"]
)


def _lows(plan: Plan, cue: Cue) -> str:
    """The cue's words as read ("don't" is 'do not')."""
    return " ".join(t.low for t in plan.shape.tokens[cue.start : cue.end])


def _absent(plan: Plan, ctx: Context, cue: Cue) -> Plan | None:
    """'Which customers do not have any policies?', 'students with no allergies', 'companies
    that do not operate any gas station': the thing named before the cue, with no row of the
    table named after it that refers to it — directly, or through a table that links the two.
    Only this whole shape: the thing, the cue, at most a verb and 'any', the table, and nothing
    more in the sentence ('no match held in Australia' says more than keyword mode reads)."""
    if _lows(plan, cue) not in NO_ROWS:
        return None
    tokens, mentions = plan.shape.tokens, plan.matching.mentions
    before = [m for m in mentions if m.end <= cue.start and m.sense is not None]
    after = [m for m in mentions if m.start >= cue.end and m.sense is not None]
    if not before or not after:
        return None
    owner, thing = before[-1], after[0]
    verb = None
    if len(after) > 1 and thing.end - thing.start == 1 and tokens[thing.start].low.endswith(("ed", "ing")):
        # 'hosts who haven't hosted any party', 'scientists not assigned to any project': the
        # verb matched a table (host, AssignedTo); the thing is the one after it
        verb, thing = thing, after[1]
    if (
        owner.sense is None
        or thing.sense is None
        or not _names_rows(ctx, owner)
        or not _names_rows(ctx, thing)
    ):
        return None  # 'which customer ids don't have any account': the customers, by their key
    x, y = owner.sense.table, thing.sense.table
    gap = range(cue.end, thing.start)
    if sum(1 for i in gap if tokens[i].low not in _BEFORE_THE_THING) > 1:
        return None  # one verb at most ('operate', 'received')
    _, end = _sentence_around(plan, thing.start)
    if any(plan.shape.role[i] != "stop" or tokens[i].kind == "word" for i in range(thing.end, end)):
        return None
    if x == y or any(m.sense is not None and m.sense.kind == "value" for m in before):
        return None  # 'which Berlin clients have no payments': the listed rows are filtered too
    link = _referring(ctx, x, y)
    if link is None:
        return None
    table, column, key = link
    absent = Absent(table, column, Ref(x, key), thing.words)
    plan = plan.with_role(thing, "absorbed").with_query(absent=(*plan.query.absent, absent))
    if verb is not None:
        plan = plan.with_role(verb, "absorbed")
    span = frozenset(range(cue.start, thing.end))
    return plan.but(skipped_cues=plan.skipped_cues | {cue.start}, absence=plan.absence | span)


def _names_rows(ctx: Context, m: Mention) -> bool:
    """The phrase names a table's rows: the table, its key ('policies' matched policy_id), or a
    column of the table named for the word ('injuries' matched injury_accident.Injury)."""
    s = m.sense
    if s is None or s.kind == "value":
        return False
    word = name_words(m.words)
    named_for = len(word.split()) == 1 and word in name_words(s.table).split()
    return s.kind == "table" or ctx.lex.key_of(s.table) == (s.column,) or named_for


def _referring(ctx: Context, x: str, y: str) -> tuple[str, str, str] | None:
    """The table whose rows say a row of `x` has a `y`, its column, and the key of `x` it holds:
    `y` itself when it refers to `x` (policies.customer_id), else the one table that refers to
    both (has_allergy between student and allergy_type)."""
    edges = [e for e in ctx.lex.db.graph.edges if len(e.columns) == 1 and not e.is_self]
    to_x = [e for e in edges if e.ref_table.lower() == x.lower()]
    direct = [e for e in to_x if e.table.lower() == y.lower()]
    if len(direct) == 1:
        return direct[0].table, direct[0].columns[0], direct[0].ref_columns[0]
    if direct:
        return None  # two ways to refer: which one is meant is not said
    links = [e for e in to_x if any(f.table == e.table and f.ref_table.lower() == y.lower() for f in edges)]
    if len(links) == 1:
        return links[0].table, links[0].columns[0], links[0].ref_columns[0]
    return None


NOT_VALUE = frozenset(["not", "is not", "are not", "was not", "were not", "other than"])
_ON_THE_WAY = frozenset(["in", "from", "at", "of", "a", "an", "the", "by", "to", "equal"])


def _both_values(plan: Plan, cue: Cue) -> Ref | None:
    """'both Afghanistan and Albania', 'both a mortgage loan and an auto loan', 'both male and
    female players': two stored values of one column, the first within a few words after 'both'
    and the second within a few words after the 'and' that follows it. The rows kept must have
    every one of them (filters.require_both: a HAVING on the number of different values)."""
    tokens = plan.shape.tokens
    values = [m for m in plan.matching.mentions if m.sense is not None and m.sense.kind == "value"]
    first = next((m for m in values if cue.end <= m.start <= cue.end + 2), None)
    if first is None or first.sense is None:
        return None
    joint = next(
        (k for k in range(first.end, min(first.end + 3, len(tokens))) if tokens[k].low == "and"), None
    )
    if joint is None:
        return None
    second = next((m for m in values if joint < m.start <= joint + 3), None)
    if second is None or second.sense is None:
        return None
    a, b = first.sense, second.sense
    if (a.table, a.column) != (b.table, b.column) or a.column is None or a.value == b.value:
        return None
    return Ref(a.table, a.column)


def _negated_value(plan: Plan, cue: Cue) -> Mention | None:
    """The stored value a 'not' is said of ('status is not Village', 'stations that are not
    located in London', 'managers not from Australia'): the next phrase, with only a preposition,
    an article or a verb form ('located') between. Any other negation ('do not have any', 'never',
    'no') says something is absent, which keyword mode does not compute."""
    if _lows(plan, cue) not in NOT_VALUE:
        return None
    tokens = plan.shape.tokens
    after = [m for m in plan.matching.mentions if m.start >= cue.end and m.sense is not None]
    nxt = after[0] if after else None
    if nxt is not None and nxt.sense is not None and nxt.sense.kind == "column" and len(after) > 1:
        value = after[1].sense
        if value is not None and (value.table, value.column) == (nxt.sense.table, nxt.sense.column):
            nxt = after[1]  # 'not headquartered in the USA': the column, then its value
    if nxt is None or nxt.sense is None or nxt.sense.kind != "value" or nxt.sense.op != "=":
        return None
    _, end = _sentence_around(plan, nxt.start)
    if any(tokens[i].low in ("any", "anything", "anyone", "ever") for i in range(cue.end, end)):
        return None  # 'not accepted to any workshop': none of its rows, not a row that differs
    named = {k for m in after if m.start < nxt.start for k in range(m.start, m.end)}
    between = [tokens[i].low for i in range(cue.end, nxt.start) if i not in named]
    if any(w not in _ON_THE_WAY and not w.endswith(("ed", "ing")) for w in between):
        return None
    if any(
        c.kind == "unsupported" and c.start != cue.start and c.start < nxt.end
        for c in plan.shape.cues
        if c.start >= cue.start
    ):
        return None
    return nxt


def check_words(plan: Plan, ctx: Context) -> Plan:
    """Every content word must be placed. A word that matched nothing is only let through when it
    carries no restriction: a filler ('kind', 'overall', but not 'its type', which asks for a
    column), a unit ('miles'), a known relating verb
    in a sentence that names what it relates ('authors who wrote papers', 'how many courses does
    each department offer'), or another verb form standing between two named things ('credits
    earned by each student'). A verb said of one thing ('flights that were delayed') or an
    adjective before a table ('cancelled orders') restricts the rows in a way keyword mode cannot
    read: it declines."""
    unknown: list[str] = []
    hints: list[str] = []
    tokens = plan.shape.tokens
    mention_at = {i: m for m in plan.matching.mentions for i in range(m.start, m.end)}
    named = {m.start for m in plan.matching.mentions if m.senses}
    things = named | {lit.start for lit in plan.shape.literals}
    things |= {c.start for c in plan.shape.cues if c.kind == "bucket"}
    things |= {i for i, t in enumerate(tokens) if t.low in PRONOUNS}
    everything = everything_at(plan.shape)
    for i in plan.matching.unmatched:
        low = tokens[i].low
        if i in everything or i in plan.absence:
            continue  # 'all the details of the bookings': every column; 'do not operate any …'
        owned = i > 0 and tokens[i - 1].low in POSSESSIVES  # 'its type' asks for something
        before_it = mention_at.get(i - 1)
        if low in ("type", "types") and before_it is not None and before_it.sense is not None:
            owned = owned or before_it.sense.kind == "table"  # 'each apartment type': a column
        # 'how many different types of incidents' asks for the types, not the incidents
        kinds_of = low in KINDS and i + 1 < len(tokens) and tokens[i + 1].low == "of"
        # a unit says how a number is measured ('height in feet', '5 miles'), not 'on foot'
        unit = (
            low in MEASURE_UNITS
            and i > 0
            and (tokens[i - 1].low in ("in", "per", *MEASURE_UNITS) or tokens[i - 1].kind == "number")
        )  # 'in square kilometers': a unit after a unit
        if (low in FILLERS and not owned and not kinds_of) or unit or low.isdigit():
            continue
        if len(low) <= 2 and low not in KEY_WORDS and not tokens[i].text.isupper():
            continue  # 'a grade of B' is a value, typed as one
        nxt = next((j for j in range(i + 1, len(tokens)) if plan.shape.role[j] != "stop"), None)
        following = mention_at.get(nxt) if nxt is not None else None
        # 'cancelled orders', 'the opening year' (purchase.year): said of the thing right after
        # it — unless it is a word of that column's own name ('opening year' is open_year)
        adjectival = (
            following is not None
            and following.sense is not None
            and (
                following.sense.kind == "table"
                or (
                    following.sense.kind == "column"
                    and nxt == i + 1
                    and base_word(low) not in name_words(following.sense.column or "").split()
                )
            )
        )
        before, after = _sentence_around(plan, i)
        # 'the working document status': after an article, an adjective of what follows
        attributive = (
            adjectival
            and i > 0
            and tokens[i - 1].low in ("the", "a", "an", "each", "every")
            and following is not None
            and following.sense is not None
            and not any(  # 'an operating company' (operate_company) is its name
                w.startswith(base_word(low)) for w in name_words(following.sense.table).split()
            )
        )
        if low in RELATION_VERBS and not attributive and len([t for t in things if before <= t < after]) >= 2:
            continue  # 'published in', 'serving': a relation between the things named
        if (
            low.endswith(("ed", "ing"))
            and not adjectival
            and any(before <= t < i for t in named)
            and any(i < t < after for t in named)
        ):
            continue  # 'credits earned by each student'
        if low.endswith(("ed", "ing")) and not adjectival and date_verb(plan, ctx, i):
            continue  # 'clients signed up in 2024'
        if low in RECENT_WORDS and about_dates(plan):
            continue  # 'new clients per month': the months say when they were new
        if date_hint(plan, ctx, low):
            hints.append(low)  # 'predicted to graduate in the last 10 years'
            continue
        unknown.append(tokens[i].text)
    for m in plan.matching.mentions:
        if m.quoted and not m.senses:
            unknown.append(f'"{m.words}"')
    if unknown:
        raise Decline("some words matched nothing in this database", unknown)
    return plan.but(date_hints=(*plan.date_hints, *hints))


KINDS = frozenset(["type", "types", "kinds", "sorts"])
PRONOUNS = frozenset(["them", "they", "their", "it", "its", "those", "these", "he", "she", "him", "her"])


def _sentence_around(plan: Plan, i: int) -> tuple[int, int]:
    """The token span [start, end) of the sentence holding token i."""
    tokens = plan.shape.tokens
    start = max((j + 1 for j in range(i) if tokens[j].text in SENTENCE_ENDS), default=0)
    end = min((j for j in range(i + 1, len(tokens)) if tokens[j].text in SENTENCE_ENDS), default=len(tokens))
    return start, end


def check_leftover(plan: Plan, ctx: Context, cue: Cue) -> Plan:
    """A cue still pending at the end of the question: harmless, implied, or not understood."""
    if cue.kind == "cmp":
        raise Decline(f"it could not tell what '{cue.words}' compares with", [cue.words])
    if cue.kind in ("date_prep", "by", "list", "and", "or", "between"):
        return plan  # prepositions and connectives that governed nothing change nothing
    if cue.kind in ("agg", "count") and any(m.func == "COUNT" for m in plan.query.measures):
        return plan  # 'how many papers were published in total', '… show the status and the count'
    if cue.kind == "agg" and any(m.func == cue.arg for m in plan.query.measures):
        return plan  # 'average points for each position - show the position and the average'
    if cue.kind == "order" and (plan.order_dir is not None or plan.query.order):
        return plan  # 'in descending order'
    if cue.kind == "super" and (cue.words.lower() in IMPLIED or cue.words.lower() in TEMPORAL_ADJ):
        return plan.but(superlative=(cue, None))
    if cue.kind == "group" and plan.query.groups:
        return plan
    if cue.kind in ("top",) and plan.top is not None:
        return plan
    raise Decline(f"it could not tell what '{cue.words}' refers to", [cue.words])


def check_understood(plan: Plan, ctx: Context) -> Plan:
    """Every number and date of the question found its place."""
    unknown = [
        lit.words
        for lit in plan.shape.literals
        if lit.kind != "quoted" and lit.start not in plan.used_literals
    ]
    if unknown:
        raise Decline("some numbers or dates could not be placed", unknown)
    return plan


def check_cues(plan: Plan, ctx: Context) -> Plan:
    """Every cue that asks for a computation has one in the query: 'how many' a count (or a sum
    of a column that counts), 'average', 'minimum' and 'maximum' their aggregate. A cue whose
    phrase was read some other way ('how many car policies' with 'policies' read as the column
    of 'car') would otherwise be dropped in silence. A question with two superlatives is declined:
    keyword mode ranks by one, and the other would be dropped or read as a second sort key."""
    q = plan.query
    measures = [*q.measures, *(h.measure for h in q.having)]
    measures += [o.key for o in q.order if isinstance(o.key, Measure)]
    funcs = {m.func for m in measures}
    counting = any(
        counts_something(ctx.lex, Sense("column", r.table, r.column)) for r in q.all_refs()
    )  # 'the highest number of citations' ranked by citation_num
    ranked = [c for c in plan.shape.cues if c.kind == "super" and c.start not in plan.skipped_cues]
    if ranked and plan.superlative is None and not q.order and not funcs & {"MIN", "MAX"}:
        # 'the enzyme in the most activitor interactions': the words after 'most' were read
        # some other way, and the ranking would vanish
        raise Decline(f"it could not tell what '{ranked[0].words}' ranks", [ranked[0].words])
    if len(ranked) > 1:  # 'the highest, average and lowest GPA per department': one ranks, one is lost
        words = " and ".join(f"'{c.words}'" for c in ranked)
        raise Decline(
            f"it reads one superlative per question, and this one has {words}", [c.words for c in ranked]
        )
    for cue in plan.shape.cues:
        if cue.start in plan.skipped_cues:
            continue
        if cue.kind == "count" and not (funcs & {"COUNT", "SUM"} or q.count_groups or counting):
            raise Decline(f"it asks '{cue.words}' but keyword mode found nothing to count", [cue.words])
        if cue.kind == "agg" and cue.arg in ("AVG", "MIN", "MAX") and cue.arg not in funcs:
            raise Decline(f"it could not tell what '{cue.words}' is of", [cue.words])
    return plan


def check_echo(plan: Plan, ctx: Context) -> Plan:
    """A list whose every column is one the question fixed to a single value would only repeat
    the question ('What type of document is "How to read a book"?' answered with the name), and
    a count of the different values of a column fixed to one value is one: the words asking for
    something else were not understood, so keyword mode declines."""
    q = plan.query
    fixed = {f.ref: f for f in q.filters if f.op == "=" or (f.op == "in" and len(f.value) == 1)}
    for m in q.measures:
        if m.func == "COUNT" and m.distinct and m.ref in fixed:
            # 'how many friends does Dan have' matched Dan among the friends: the count of
            # different friends called Dan is one, whatever the data
            raise Decline(
                f"it counts the different '{fixed[m.ref].words}', which is one", [fixed[m.ref].words]
            )
    if q.measures or q.ratio is not None or q.count_groups or not q.projection:
        return plan
    if all(r in fixed for r in q.projection):
        words = ", ".join(f"'{fixed[r].words}'" for r in q.projection)
        raise Decline(
            f"its answer would only repeat {words} from the question", [fixed[r].words for r in q.projection]
        )
    return plan


def check_stored_fillers(plan: Plan, ctx: Context) -> Plan:
    """'ids of done Paper docs', 'the description of the database course': a word read as a filler
    ('done', 'database') that is also a value stored in a table the answer reads. Dropped in
    silence, the answer would ignore a condition the person set."""
    tables = {t.lower() for t in plan.query.tables}
    roles = plan.shape.role
    for i, t in enumerate(plan.shape.tokens):
        if roles[i] != "stop" or t.low not in FILLERS | ROW_NOUNS:
            continue
        if i + 1 >= len(roles) or roles[i + 1] not in ("content", "cue"):
            continue  # said before a noun ('done Paper docs'), not 'the courses in the database'
        stored = [
            x
            for x in ctx.lex.values(t.low)
            if x.via == "value" and x.score >= 1.0 and x.table.lower() in tables
        ]
        if stored:
            raise Decline(
                f"'{t.text}' is also a stored {stored[0].column} value, and keyword mode could not tell "
                "whether it is a condition",
                [t.text],
            )
    return plan


def check_shared_owner(plan: Plan, ctx: Context) -> Plan:
    """'everyone in Clara's department': the rows that share what one row has, which a filter on
    Clara would answer with Clara alone. A stored value with a possessive, followed by another
    table, while the rows listed are the value's own table's, is declined."""
    tokens = plan.shape.tokens
    shown = {m.sense.table for m in plan.explicit if m.sense is not None}
    listed = shown if shown else {plan.query.target}
    mentions = [m for m in plan.matching.mentions if m.sense is not None]
    for v, nxt in itertools.pairwise(mentions):
        said = tokens[v.end - 1].text.lower().replace("’", "'")
        if (
            v.sense is not None
            and nxt.sense is not None
            and v.sense.kind == "value"
            and said.endswith("'s")
            and nxt.start == v.end
            and nxt.sense.table != v.sense.table
            and listed == {v.sense.table}
        ):
            raise Decline(
                f"it asks for the rows that share {v.words} {nxt.words}, which keyword mode does not compute",
                [f"{v.words} {nxt.words}"],
            )
    return plan


def understood_words(matching: Matching) -> list[str]:
    """What each phrase was read as, for the trace and the refusal."""
    out = []
    for m in matching.mentions:
        s = m.sense
        if s is None:
            continue
        if s.kind == "value":
            shown = f"{s.value!r}" + (f" ({s.meaning})" if s.meaning else "")
            out.append(f"'{m.words}' → {s.table}.{s.column} = {shown}")
        else:
            out.append(f"'{m.words}' → {s.where}")
    return out


def suggest(lex: Lexicon, target: str | None, matching: Matching) -> str:
    """A rephrasing keyword mode can answer, built from what it did understand."""
    tables = [m.sense.table for m in matching.mentions if m.sense]
    table = target or (tables[0] if tables else None)
    if table is None:
        graph = lex.db.graph
        central = sorted(lex.catalog.tables, key=lambda t: (-len(graph.neighbors(t.name)), t.name))
        names = ", ".join(t.name for t in central[:6])
        return (
            f"Try naming what to count or list, e.g. 'How many {_plural_of(central[0].name)} are there?' "
            f"(tables: {names})."
        )
    t = lex.table(table)
    cols = [c for c in (t.columns if t else ()) if c.kind in ("text",) and not c.name.lower().endswith("id")]
    nums = [c for c in (t.columns if t else ()) if c.kind in NUMERIC and not c.name.lower().endswith("id")]
    many = _plural_of(table)
    examples = [f"'How many {many} are there?'"]
    if cols:
        examples.append(f"'Number of {many} per {name_phrase(cols[-1].name)}'")
    if nums:
        examples.append(f"'Top 5 {many} by {name_phrase(nums[0].name)}'")
    return "Try a simpler question in the data's words, e.g. " + ", ".join(examples) + "."


def _plural_of(table: str) -> str:
    return plural(name_phrase(table))
