"""What one row of the answer is: the target, grouping or projection, the order, the tables.

The target decides what a row of the answer stands for and whose dates 'in 2025' restricts: the
entity the question lists or ranks ('which clients …'), else the table it counts, else any
entity it names, a column it asks to see, what it measures, orders or filters — in that order,
because the earlier ones say more directly what the person wants back.

Then two shapes. An *aggregate* (a count, a sum, a HAVING, or an entity ranked by a measure)
groups by the listed entity's name and by what the question grouped by, and orders by time for
time groups, else by the measure, largest first. A *list* shows the columns asked for, with the
listed entity's name in front so each row can be told apart. Grouping by something while naming
nothing to compute per group is declined: it has no honest reading.
"""

from __future__ import annotations

from dataclasses import replace

from core.dictionary import split_identifier
from core.keyword.columns import (
    TEMPORAL,
    age_column,
    column_kind,
    foreign_keys,
    is_key,
    is_numeric,
    is_pointer,
    label_columns,
    pointed_at,
    ranking_measure,
)
from core.keyword.match import ID_WORDS, KEY_WORDS, Lexicon, Mention
from core.keyword.plan import Context, Decline, Filter, Measure, OrderKey, Plan, Query, Ref, frozen_map
from core.keyword.shapes import CUES, MODE_CUES, ROW_NOUNS, everything_at, singular_phrase

# ---------------------------------------------------------------------------------------------
# the target


def choose_target(plan: Plan, ctx: Context) -> Plan:
    q = plan.query
    listed = plan.listed()
    entity_tables = [m.sense.table for m, _ in plan.entities if m.sense]
    target: str | None = None
    if listed:
        target = listed[0].sense.table if listed[0].sense else None
    elif any(m.func == "COUNT" and m.column is None for m in q.measures):
        target = next(m.table for m in q.measures if m.func == "COUNT" and m.column is None)
    elif entity_tables:
        target = entity_tables[0]
    elif plan.explicit:
        target = plan.explicit[0].sense.table if plan.explicit[0].sense else None
    elif q.measures:
        target = q.measures[0].table
    elif q.order and isinstance(q.order[0].key, Ref):
        target = q.order[0].key.table
    elif q.order and isinstance(q.order[0].key, Measure):
        target = q.order[0].key.table  # 'which month had the most payments'
    elif q.ratio is not None:
        target = q.ratio[0].table
    elif q.filters:
        target = q.filters[0].ref.table
    if target is None:
        raise Decline("none of its words named a table or a column")
    return plan.with_query(target=target)


# ---------------------------------------------------------------------------------------------
# groups or projection, and order


def shape_output(plan: Plan, ctx: Context) -> Plan:
    """Fill in the groups or the projection, and the order, of the query."""
    q = plan.query
    listed = plan.listed()
    explicit = list(dict.fromkeys(Ref(m.sense.table, m.sense.column or "") for m in plan.explicit if m.sense))
    explicit += _things_listed_after(plan, ctx)
    ranked_entity = any(isinstance(o.key, Measure) for o in q.order) or _ranked_by_child(plan)
    if q.ratio is not None and (q.measures or q.having or ranked_entity):
        raise Decline("it asks for a ratio of totals or averages, which keyword mode does not compute")
    if q.measures or q.having or ranked_entity:
        return _aggregate_rows(plan, ctx, listed, explicit, ranked_entity)
    return _list_rows(plan, ctx, listed, explicit)


def _things_listed_after(plan: Plan, ctx: Context) -> list[Ref]:
    """'show the product id and its color', 'show the school and the driver name': a thing listed
    beside the columns asked for is shown by its name (Ref_Colors.color_description), as a
    column would be — unless it is the thing whose rows are listed ('which products … show the
    product id')."""
    if not plan.explicit:
        return []
    first = min(m.start for m in plan.explicit)
    subject = plan.query.target
    things = [
        m
        for m, listed in plan.entities
        if listed
        and m.sense is not None
        and m.sense.kind == "table"
        and (m.start > first or (m.sense.table != subject and _listed_beside_columns(plan, m)))
    ]
    return _by_name(ctx.lex, things)


def _by_name(lex: Lexicon, things: list[Mention]) -> list[Ref]:
    """Each thing (a table phrase) shown by its name — its first label column — as a column
    asked for would be."""
    out: list[Ref] = []
    for m in things:
        assert m.sense is not None
        labels = label_columns(lex, m.sense.table)
        if not labels:
            raise Decline(f"it could not tell what to show of '{m.words}'", [m.words])
        out.append(Ref(m.sense.table, labels[0]))
    return out


def _listed_beside_columns(plan: Plan, m: Mention) -> bool:
    """`m` is joined to the next column asked for by 'and' or a comma ('the school and the
    driver name')."""
    tokens = plan.shape.tokens
    nxt = next((x for x in plan.explicit if x.start >= m.end), None)
    return nxt is not None and any(tokens[k].low in ("and", ",") for k in range(m.end, nxt.start))


def _aggregate_rows(
    plan: Plan, ctx: Context, listed: list[Mention], explicit: list[Ref], ranked_entity: bool
) -> Plan:
    """Group by the listed entity and the columns asked for."""
    lex = ctx.lex
    q = plan.query
    target = q.target
    assert target is not None
    groups, measures, hidden = list(q.groups), list(q.measures), list(q.hidden)
    names, count_groups = dict(q.names), q.count_groups
    if (listed or (ranked_entity and not measures and not plan.buckets)) and not explicit:
        # ('which month had the most payments' ranks the months, not the payments)
        entity = listed[0].sense.table if listed and listed[0].sense else target
        if not any(m.func == "COUNT" and m.column is None and m.table == entity for m in measures):
            labels = [Ref(entity, c) for c in label_columns(lex, entity)]
            if not labels and listed:
                # 'which game has the most hours played' matched plays_games, whose rows pair a
                # student and a game and name neither alone
                raise Decline(
                    f"it could not tell which column names a '{listed[0].words}'", [listed[0].words]
                )
            groups = list(dict.fromkeys([*labels, *groups]))
            noun = singular_phrase(listed[0].words) if listed else entity
            names.update({ref: noun for ref in labels})
    groups = list(dict.fromkeys([*explicit, *groups]))
    things = {m.sense.table for m, _ in plan.entities if m.sense and m.sense.kind == "table"}
    things -= {h.measure.table for h in q.having} | {m.table for m in measures if m.func == "COUNT"}

    def ranked_by_others(table: str) -> bool:
        """'the color of the grape with the highest average wine price', '… whose wines have the
        highest average price': a figure of other rows ranks each grape on its own."""
        return q.limit == 1 and any(isinstance(o.key, Measure) and o.key.table != table for o in q.order)

    for r in explicit:  # 'the names of courses with at least 5 enrollments': two courses may share one
        if (
            r.table in things
            and not is_key(lex, r)
            and (r.column in label_columns(lex, r.table) or ranked_by_others(r.table))
        ):
            # 'the location of the party with the most hosts': the parties are ranked, each on its own
            names.setdefault(r, singular_phrase(r.table))
    # 'show the airport id' matched flight.airport_id: the airport's key all the same
    keyed = {r.table for r in explicit if is_key(lex, r)} | {t for r in explicit if (t := pointed_at(lex, r))}
    # 'for each customer, show their customer ID and first name': the columns asked for stand for
    # the customer, its key among them; its other name columns are not added
    groups = [g for g in groups if g in explicit or g.table not in keyed]
    for o in q.order:
        if isinstance(o.key, Measure) and o.key not in measures:
            measures.append(o.key)
            if explicit and not _count_asked(plan, o.key):
                hidden.append(o.key)  # 'the latitude of the business with the highest rating'
    if q.having and not groups:
        if measures and all(m.func == "COUNT" and m.column is None for m in measures):
            # 'how many authors have more than 2 papers': count the qualifying groups
            counted = measures[0].table
            groups = [Ref(counted, c) for c in (lex.key_of(counted) or label_columns(lex, counted))]
            count_groups = measures[0].words or counted
            measures = []
        else:
            groups = [Ref(target, c) for c in label_columns(lex, target)]
    plan = plan.with_query(
        groups=tuple(groups),
        measures=tuple(measures),
        hidden=tuple(hidden),
        names=frozen_map(names),
        count_groups=count_groups,
    )
    plan = _ranked_child_measure(plan, ctx)
    q = plan.query
    groups, order = list(q.groups), list(q.order)
    for o in order:
        if isinstance(o.key, Ref) and o.key not in groups and not groups and q.limit == 1 and q.measures:
            # 'the average age of students living in the dorm with the largest capacity': a figure
            # over the rows of the one thing ranked first, which one query of groups cannot say
            raise Decline(
                f"it computes a figure for the one thing with the {o.words or o.key.column}, which keyword "
                "mode does not compute",
                [o.words] if o.words else [],
            )
        if isinstance(o.key, Ref) and o.key not in groups:
            same = [g for g in groups if g.table == o.key.table]
            if same and (is_key(lex, o.key) or o.key.column.lower().endswith("id")):
                # 'each paper, ordered by the paper ID': show and group by the id
                groups = [o.key if g == same[0] else g for g in groups if g not in same[1:]]
            else:
                groups.append(o.key)
    if groups and not order and q.measures:
        g = groups[0]
        temporal = _in_time(lex, g)
        if plan.order_dir is not None or plan.alpha:
            order.append(OrderKey(g if plan.alpha else q.measures[0], bool(plan.order_dir)))
        elif temporal:
            order.append(OrderKey(g, False))
        else:
            order.append(OrderKey(q.measures[0], True))
    elif groups and not order and plan.alpha:
        # 'product names that are in 2+ events, alphabetical': groups kept by a HAVING, no figure shown
        order.append(OrderKey(groups[0], bool(plan.order_dir)))
    elif plan.order_dir is not None and order:
        order = [replace(o, desc=_said_direction(plan, ctx, o)) if not o.words else o for o in order]
    if not groups and order and not q.count_groups:
        order = []  # one row: nothing to order
    return plan.with_query(groups=tuple(groups), order=tuple(order))


def _list_rows(plan: Plan, ctx: Context, listed: list[Mention], explicit: list[Ref]) -> Plan:
    """The asked-for columns, else the entity's name ('the cities ... and their population': the
    listed entity's name comes first)."""
    lex = ctx.lex
    q = plan.query
    target = q.target
    assert target is not None
    groups = q.groups
    if q.ratio is not None:
        # 'for each course id' names the rows of the ratio, one per row of its table
        if any(g.table != q.ratio[0].table for g in groups):
            raise Decline("it asks for a ratio per group, which keyword mode does not compute")
        explicit = list(dict.fromkeys([*explicit, *groups]))
        groups = ()
    # 'which bank branches …? Show the branch name and city': 'branches' matched the key, which the
    # columns asked for already stand for
    bare_keys = {
        Ref(m.sense.table, m.sense.column)
        for m in plan.explicit
        if m.sense
        and m.sense.column
        and m.sense.column.lower().endswith("id")
        and not set(m.words.lower().split()) & KEY_WORDS
    }
    explicit = [
        r
        for r in explicit
        if not (r in bare_keys and is_key(lex, r) and any(o.table == r.table and o != r for o in explicit))
    ]
    each = [m for m in plan.matching.mentions if m.sense and plan.role(m).kind == "group"]
    if groups and all(g.table == target for g in groups):
        # 'the phone of each customer': each is every one, a list of its rows; 'each company and
        # its investor' names a column, which is shown
        named = [Ref(m.sense.table, m.sense.column) for m in each if m.sense and m.sense.column]
        explicit = list(dict.fromkeys([*named, *explicit]))
        groups = ()
    if groups and explicit and len(each) == 1 and each[0].sense and each[0].sense.kind == "table":
        # 'show the pilot name and aircraft model for each pilot record': a row per pilot record,
        # with the columns of the things it refers to
        target = each[0].sense.table
        mentioned = {
            Ref(m.sense.table, m.sense.column) for m in plan.matching.mentions if m.sense and m.sense.column
        }
        # 'show the school and the driver name for each school bus': the school by its name
        things = [m for m in listed if m.sense and m.sense.kind == "table" and m.sense.table != target]
        # ('the name of each protein along with the institution': in the order asked for)
        named = _by_name(lex, things)
        asked_first = plan.explicit and things and min(m.start for m in plan.explicit) < things[0].start
        explicit = [*explicit, *named] if asked_first else [*named, *explicit]
        # '… along with the tax ID'
        explicit = list(
            dict.fromkeys([*explicit, *(g for g in groups if g in mentioned and g not in explicit)])
        )
        plan, groups = plan.with_query(target=target), ()
    if groups:
        raise Decline("it groups by something but names nothing to count or compute per group")
    labels = [Ref(target, c) for c in label_columns(lex, target)]
    identifying = {c.lower() for c in label_columns(lex, target)} | {k.lower() for k in lex.key_of(target)}
    named = [r for r in labels if r.column not in lex.key_of(target)]  # a name, not just a key
    if (
        explicit
        and listed
        and named
        and not any(
            ref.table == target and (ref.column.lower() in identifying or ref.column.lower().endswith("id"))
            for ref in explicit
        )
    ):
        explicit = [*named, *explicit]  # 'which cities … and their population': the city first
    projection = [_named_thing(lex, plan, r) for r in explicit] if explicit else list(labels)
    if not explicit:
        # 'what is the chip model and screen mode of the phone …': each thing listed, by its name
        for m in listed[1:]:
            if m.sense and m.sense.kind == "table" and m.sense.table != target:
                projection += [Ref(m.sense.table, c) for c in label_columns(lex, m.sense.table)]
        projection = list(dict.fromkeys(projection))
    said = everything_at(plan.shape)  # 'all the details of …' is every column, not other_details
    if said and all(set(range(m.start, m.end)) <= said for m in plan.explicit):
        explicit = []
    # 'all the body builder records' of a table with no name column: its records, not their ids
    unnamed = all(column_kind(lex, r.table, r.column) != "text" for r in labels)  # only a number key
    records = listed and unnamed and any(t.low in ROW_NOUNS for t in plan.shape.tokens)
    if not explicit and (said or records):  # 'all information about every election'
        table = lex.table(target)
        assert table is not None
        projection = [Ref(target, c.name) for c in table.columns]
    if q.ratio is not None and not explicit:
        projection = []  # 'the ratio of X to Y': the ratio is the answer
    order = list(q.order)
    shown = not _one_winner(plan) or _asks_the_figure(plan)  # '… and what is it': the figure too
    if order and not explicit and (listed or plan.top) and shown:  # 'which county …'
        for o in order:
            if isinstance(o.key, Ref) and o.key not in projection:
                projection.append(o.key)
    if plan.shape.tokens and plan.shape.tokens[0].low == "when":
        # 'when did the latest payment happen': the answer is the date
        so_far = replace(q, groups=groups, projection=tuple(projection))
        dates = [ref for ref in so_far.all_refs() if column_kind(lex, ref.table, ref.column) in TEMPORAL]
        if not dates:
            raise Decline("it could not tell which date 'when' asks for", ["when"])
        projection += [d for d in dict.fromkeys(dates) if d not in projection]
    if plan.alpha and not order:  # 'in descending alphabetical order': Z to A
        order = [OrderKey(projection[0], bool(plan.order_dir))]
    elif plan.order_dir is not None and order:
        order = [replace(o, desc=_said_direction(plan, ctx, o)) for o in order]
    elif plan.order_dir is not None and not order and plan.by_age and (age := age_column(lex, target)):
        order = [OrderKey(age, bool(plan.order_dir))]  # 'everyone's names from oldest to youngest'
    elif plan.order_dir is not None and not order:
        raise Decline("it could not tell what to order by", [])
    if not listed and _what_there_is(plan) and all(not is_key(lex, r) for r in projection):
        # 'what product sizes do we have?': the sizes there are, each once
        plan = plan.with_query(distinct=True)
    return plan.with_query(groups=groups, projection=tuple(projection), order=tuple(order))


def _named_thing(lex: Lexicon, plan: Plan, ref: Ref) -> Ref:
    """'location and winning aircraft for each match': match.Winning_Aircraft holds aircraft ids,
    and the aircraft asked for is shown by its name — unless the words ask for the id or code,
    or the thing has no name, or two keys of the table point at it (which one is for the view)."""
    target = pointed_at(lex, ref)
    said = [
        m for m in plan.explicit if m.sense and (m.sense.table, m.sense.column) == (ref.table, ref.column)
    ]
    if target is None or not said or set(said[0].words.lower().split()) & ID_WORDS:
        return ref
    labels = label_columns(lex, target)
    if len(labels) != 1 or column_kind(lex, target, labels[0]) != "text" or labels[0] in lex.key_of(target):
        return ref
    return Ref(target, labels[0]) if len(foreign_keys(lex, ref.table, target)) == 1 else ref


def _what_there_is(plan: Plan) -> bool:
    """'what … do we have': the kinds there are, not every row."""
    return " do we have" in " ".join(t.low for t in plan.shape.tokens)


def _said_direction(plan: Plan, ctx: Context, o: OrderKey) -> bool:
    """The direction the question says, for this key: 'youngest first' sorts ages up and birth
    dates down."""
    desc = bool(plan.order_dir)
    if plan.by_age and isinstance(o.key, Ref) and _in_time(ctx.lex, o.key):
        return not desc
    return desc


def _in_time(lex: Lexicon, ref: Ref) -> bool:
    """A date, or a number named for a point in time (a year column)."""
    return column_kind(lex, ref.table, ref.column) in TEMPORAL or any(
        w in ref.column.lower() for w in ("year", "month", "date", "day", "week", "quarter")
    )


def show_what_was_asked(plan: Plan, ctx: Context) -> Plan:
    """A figure that only picks the rows is not shown: 'which artists have an average attendance
    above 200' lists the artists, 'which customer has the highest total loan amount' names the
    customer — the reading says what picked them (and _list_rows shows no ranking column for one
    winner: 'which county has the largest population' is the county). A figure the question
    lists ('show the names and total amounts', 'and how many') is shown, and so are the figures
    of a top-N list."""
    q = plan.query
    if not (q.groups or q.projection):
        return plan  # the figure is the answer ('what is the average attendance')
    picking = {h.measure for h in q.having}
    if _one_winner(plan):  # a top-N list keeps its figures
        picking |= {o.key for o in q.order if isinstance(o.key, Measure)}
    hidden = list(q.hidden)
    figure_asked = _asks_the_figure(plan)  # '… and what is it'
    for m in q.measures:
        asked = (
            figure_asked or _listed(plan, m.words) or _count_asked(plan, m) or _figure_asked_again(plan, m)
        )
        if m in picking and m not in hidden and not asked:
            hidden.append(m)
    plan = plan.with_query(hidden=tuple(hidden))
    if _counted_in_mode(plan):
        # 'how many customers are in the most common customer type?': the count, not the type
        plan = plan.with_query(unshown=q.groups)
    return plan


PRONOUNS = frozenset(["it", "that", "this", "they", "its", "the", "value", "amount", "figure", "number"])


def _asks_the_figure(plan: Plan) -> bool:
    """'which city has the lowest gdp and what is it': a last clause that asks 'what is' of a
    pronoun only asks for the figure the ranking used."""
    tokens, cues = plan.shape.tokens, plan.shape.cues
    last = next((c for c in reversed(cues) if c.kind == "list"), None)
    if last is None or last.start == 0 or tokens[last.start - 1].low not in ("and", ","):
        return False
    rest = [t for t in tokens[last.end :] if t.kind == "word"]
    return bool(rest) and all(t.low in PRONOUNS for t in rest)


def _counted_in_mode(plan: Plan) -> bool:
    """The question only asks how many rows the most common value has: no list word asks for
    the value itself ('which type is the most common, and how many …' does)."""
    q = plan.query
    cue = plan.superlative[0] if plan.superlative else None
    return (
        cue is not None
        and cue.words.lower() in MODE_CUES
        and q.limit == 1
        and len({(m.func, m.table, m.column) for m in q.measures}) == 1  # the count, ranking too
        and _count_asked(plan, q.measures[0])
        and not any(c.kind == "list" for c in plan.shape.cues)
    )


def _figure_asked_again(plan: Plan, m: Measure) -> bool:
    """'which department has the highest average gpa? give me the name and that average', '…
    show the count and the product name': the figure that ranks is asked for again, by its kind
    — after a list word, 'and' or a comma, and at most a determiner."""
    lows = [t.low for t in plan.shape.tokens]
    for i, low in enumerate(lows):
        kind, arg = CUES.get((low,), ("", ""))  # 'average', 'avg', 'max', 'count' …
        if (arg if kind == "agg" else "COUNT" if kind == "count" else None) != m.func:
            continue
        j = i - 1
        if j >= 0 and lows[j] in ("the", "that", "its", "their"):
            j -= 1
        said = plan.shape.cue_at(j) if j >= 0 else None
        if j >= 0 and (lows[j] in ("and", ",") or (said is not None and said.kind == "list")):
            return True
    return False


def _one_winner(plan: Plan) -> bool:
    """The question asks for the one row a superlative picks ('which county has the largest
    population'): the answer is that row, not the figure that picked it."""
    return plan.query.limit == 1 and plan.superlative is not None


LISTING = frozenset(
    ["and", ",", "show", "list", "give", "display", "return", "what", "also", "their", "its", "with"]
)


def _listed(plan: Plan, words: str) -> bool:
    """The phrase is one of the things the question asks to see: right after a list word or an
    'and' ('show the name and total amount'), not after a ranking or comparing word, and not
    compared itself ('films with an average gross of at least 4,500,000')."""
    want = words.lower().split()
    lows = [t.low for t in plan.shape.tokens]
    counting = {k for c in plan.shape.cues if c.kind in ("count", "agg") for k in range(c.start, c.end)}
    compared = {c.start for c in plan.shape.cues if c.kind == "cmp"}
    for i in range(len(lows) - len(want) + 1 if want else 0):
        end = i + len(want)
        if lows[i:end] == want and not compared & {end, end + 1}:  # 'with an average of at least 3'
            j = i - 1
            while j >= 0 and (lows[j] in ("the", "a", "an") or j in counting):
                j -= 1  # 'and the number of orders', 'and the total amount'
            if j >= 0 and lows[j] in LISTING:
                return True
    return False


def _count_asked(plan: Plan, measure: Measure) -> bool:
    """'which type is the most common, and how many companies have that type': the count that
    ranks is asked for too."""
    if measure.func != "COUNT" or measure.column is not None:
        return False
    for cue in plan.shape.cues:
        if cue.kind == "count" and cue.words.lower().startswith("how many"):  # not 'the most number of'
            counted = next((m for m in plan.matching.mentions if m.start >= cue.end), None)
            if counted is not None and counted.sense is not None and counted.sense.table == measure.table:
                return True
    return False


def _ranked_by_child(plan: Plan) -> bool:
    """Ranking an entity by a column of another table ('clients by cpu hours') aggregates it."""
    q = plan.query
    if not q.order or q.target is None:
        return False
    key = q.order[0].key
    if not isinstance(key, Ref) or key.table == q.target or not (plan.top or plan.superlative):
        return False
    # 'the customer who made the claim with the largest amount claimed' ranks claims, one by one
    return not any(m.sense and m.sense.table == key.table for m, _ in plan.entities)


def _ranked_child_measure(plan: Plan, ctx: Context) -> Plan:
    """'top clients by cpu hours': each client's usage rows added up (averaged for rates)."""
    q = plan.query
    order, measures, hidden = list(q.order), list(q.measures), list(q.hidden)
    notes = list(q.notes)
    for k, o in enumerate(q.order):
        if (
            isinstance(o.key, Ref)
            and o.key.table != q.target
            and q.groups
            and not any(g.table == o.key.table for g in q.groups)
        ):
            if not is_numeric(ctx.lex, o.key):  # text: no sum or average ranks the groups by it
                raise Decline(
                    f"it ranks {q.target} by '{o.words or o.key.column}' of its {o.key.table} rows, "
                    "which are not numbers it can add up",
                    [o.words or o.key.column],
                )
            measure = ranking_measure(o.key, o.words)
            order[k] = OrderKey(measure, o.desc, o.words)
            if measure not in measures:
                measures.append(measure)
                if plan.explicit:
                    hidden.append(measure)
            how = "averaged" if measure.func == "AVG" else "added up"
            notes.append(f"each {q.target}'s {o.key.table} rows {how}")
    return plan.with_query(
        order=tuple(order), measures=tuple(measures), hidden=tuple(hidden), notes=tuple(notes)
    )


def fold_constant_counts(plan: Plan, ctx: Context) -> Plan:
    """'How many players … in each position? Show the count and position' reads 'count …
    position' as COUNT(DISTINCT position), which is 1 in every group of positions (and so is a
    count of a grouped entity's own column, or of its own rows beside another count): the column
    was asked to be shown, not counted."""
    q = plan.query
    # a thing grouped by its key or by its name ('for each product … show the product id')
    keyed = {g.table for g in q.groups if g.column in ctx.lex.key_of(g.table) or g in q.names}
    keep: list[Measure] = []
    shown: list[Ref] = []
    for m in q.measures:
        ref = m.ref
        key = ctx.lex.key_of(m.table)
        if m.func == "COUNT" and m.distinct and ref is not None and (ref in q.groups or ref.table in keyed):
            if ref not in q.groups:
                shown.append(ref)
        elif m.func == "COUNT" and ref is None and m.table in keyed and len(key) == 1 and len(q.measures) > 1:
            # '… show the count and the product id': the rows of the product grouped by, one each
            if Ref(m.table, key[0]) not in q.groups:
                shown.append(Ref(m.table, key[0]))
        else:
            keep.append(m)
    if len(keep) == len(q.measures):
        return plan
    if not keep:
        raise Decline("it counts something that is one in every group", [m.words for m in q.measures])
    order = tuple(o for o in q.order if not isinstance(o.key, Measure) or o.key in keep)
    # the key asked to be shown stands for the thing: its name is not added beside it
    keys = {r.table for r in shown if r.column in ctx.lex.key_of(r.table)}
    groups = [g for g in q.groups if not (g.table in keys and g in q.names)]
    return plan.with_query(measures=tuple(keep), groups=(*groups, *shown), order=order)


# ---------------------------------------------------------------------------------------------
# the tables the view must join


def joined_tables(plan: Plan, ctx: Context) -> Plan:
    """Every table the query touches, the target first (the view joins them, core/view.py)."""
    # 'the average product price … show the average price' names one average twice
    same: dict[tuple[object, ...], Measure] = {}
    kept: dict[Measure, Measure] = {}
    for m in plan.query.measures:
        kept[m] = same.setdefault((m.func, m.table, m.column, m.distinct, m.since, m.unit), m)
    order = tuple(
        replace(o, key=kept[o.key]) if isinstance(o.key, Measure) and o.key in kept else o
        for o in plan.query.order
    )
    plan = plan.with_query(measures=tuple(same.values()), order=order)
    entity_tables = [m.sense.table for m, _ in plan.entities if m.sense and plan.role(m).kind == "entity"]
    q = local_keys(plan.query, ctx.lex, entity_tables)
    tables = [q.target or "", *entity_tables]
    tables += [ref.table for ref in q.all_refs()]
    tables += [h.measure.table for h in q.having] + [m.table for m in q.measures]
    tables += [o.key.table for o in q.order if isinstance(o.key, Measure)]
    return plan.but(query=replace(q, tables=tuple(dict.fromkeys(tables))))


def local_keys(q: Query, lex: Lexicon, entity_tables: list[str]) -> Query:
    """Read a column where another needed table already holds it: 'lakes per state' groups by
    lake.state_name rather than joining state for state.state_name (the join's own key)."""
    needed = {t.lower() for t in entity_tables}
    needed |= {m.table.lower() for m in q.measures} | {h.measure.table.lower() for h in q.having}
    needed |= {o.key.table.lower() for o in q.order if isinstance(o.key, Measure)}
    if q.target:
        needed.add(q.target.lower())  # the view always holds it
    edges = [e for e in lex.db.graph.edges if len(e.columns) == 1 and not e.is_self]

    def held(f: Filter) -> Filter:
        """'how many inventory items does store 1 have': inventory.store_id = 1, not a join to
        store (whose row may be missing) — when one foreign key alone links the two tables."""
        if f.ref.table.lower() in needed:
            return f
        links = [
            (e.table, e.columns[0])
            for e in edges
            if e.ref_table.lower() == f.ref.table.lower()
            and e.ref_columns[0].lower() == f.ref.column.lower()
            and e.table.lower() in needed
        ]
        if len(links) != 1:
            return f
        if len(foreign_keys(lex, links[0][0], f.ref.table)) != 1:
            return f  # flights from or to airport 5: which foreign key is for the view to say
        return replace(f, ref=Ref(*links[0]))

    filters = tuple(held(f) for f in q.filters)
    needed |= {f.ref.table.lower() for f in filters}

    def local(ref: Ref) -> Ref:
        if ref.table.lower() in needed:
            return ref
        for e in edges:
            ends = [
                ((e.table, e.columns[0]), (e.ref_table, e.ref_columns[0])),
                ((e.ref_table, e.ref_columns[0]), (e.table, e.columns[0])),
            ]
            for (ta, ca), (tb, cb) in ends:
                if (
                    ta.lower() == ref.table.lower()
                    and ca.lower() == ref.column.lower()
                    and tb.lower() in needed
                ):
                    return Ref(tb, cb)
        return ref

    return replace(
        q,
        filters=filters,
        groups=tuple(dict.fromkeys(local(ref) for ref in q.groups)),
        projection=tuple(dict.fromkeys(local(ref) for ref in q.projection)),
        order=tuple(
            OrderKey(local(o.key), o.desc, o.words) if isinstance(o.key, Ref) else o for o in q.order
        ),
    )


# ---------------------------------------------------------------------------------------------
# 'where …?' asks for a place

PLACE_WORDS = frozenset(
    [
        "location",
        "city",
        "country",
        "address",
        "venue",
        "place",
        "region",
        "state",
        "town",
        "hometown",
        "nation",
        "site",
        "county",
        "province",
        "street",
        "continent",
        "headquarters",
        "headquarter",
    ]
)


def answer_where(plan: Plan, ctx: Context) -> Plan:
    """'Where was the party held?', 'Where is the youngest teacher from?': the answer is a place.
    A row that shows no place column answers another question (the party's id), so the listed
    thing's one place column is shown in place of its name or key; a later '… and where is the
    school located?' adds the school's place after what was asked first. With no place column, or
    several ('city' and 'country'), or rows grouped by something else, it is declined: which
    place is meant is a guess."""
    tokens = plan.shape.tokens
    asked = [
        i for i, t in enumerate(tokens) if t.low == "where" and (i == 0 or tokens[i - 1].low in ("and", ","))
    ]
    if not asked:  # '… and where is its university located?' asks too; 'the cities where …' does not
        return plan
    q = plan.query
    lex = ctx.lex
    if any(_is_place(lex, r) for r in (*q.groups, *q.projection)):
        return plan
    # the thing named after a later 'where' ('… and where is the school located?'), else the target
    after = next(
        (m for m in plan.matching.mentions if m.start > asked[0] and m.sense and m.sense.kind == "table"),
        None,
    )
    thing = after.sense.table if asked[0] > 0 and after is not None and after.sense else q.target
    table = lex.table(thing or "")
    places = (
        [Ref(table.name, c.name) for c in table.columns if _is_place(lex, Ref(table.name, c.name))]
        if table
        else []
    )
    if len(places) != 1 or q.groups or not q.projection:
        raise Decline("it could not tell which place 'where' asks for", ["where"])
    identifying = {c.lower() for c in (*label_columns(lex, places[0].table), *lex.key_of(places[0].table))}
    rest = [r for r in q.projection if not (r.table == places[0].table and r.column.lower() in identifying)]
    if asked[0] > 0:  # '… and where is it located?': the place after what was asked first
        return plan.with_query(projection=(*q.projection, places[0]))
    return plan.with_query(projection=(places[0], *rest))


def _is_place(lex: Lexicon, ref: Ref) -> bool:
    return bool(PLACE_WORDS & set(split_identifier(ref.column))) and not (
        is_key(lex, ref) or is_pointer(lex, ref)
    )
