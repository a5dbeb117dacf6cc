"""What a table's columns are for, read from the catalog and the join graph.

Keyword mode has no LLM to say which column names a row ('the clients' → client.name), which
number is worth adding up, or which column merely points at another table. These small rules
answer that from the schema alone, so every part of the reader asks the same questions the
same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from core.dictionary import name_words, stem
from core.keyword.lexicon import WORDS
from core.keyword.match import Lexicon, Mention, Sense
from core.keyword.plan import Measure, Ref

if TYPE_CHECKING:
    from core.graph.multigraph import Edge

NUMERIC = ("integer", "number")
TEMPORAL = ("date", "datetime")


def column_kind(lex: Lexicon, table: str, column: str) -> str:
    """The catalog's kind of the column, except that text holding ISO dates counts as a date."""
    t = lex.table(table)
    c = t.column(column) if t else None
    if t is None or c is None:
        return "other"
    if c.kind == "text" and c.name in lex.text_dates(t.name):
        return "date"
    return c.kind


def stored_as_text(lex: Lexicon, ref: Ref) -> bool:
    """The catalog's own kind is text (a date kept as text must be cast before date functions)."""
    t = lex.table(ref.table)
    c = t.column(ref.column) if t else None
    return c is not None and c.kind == "text"


def is_numeric(lex: Lexicon, ref: Ref) -> bool:
    return column_kind(lex, ref.table, ref.column) in NUMERIC


def date_subject(lex: Lexicon, m: Mention) -> bool:
    """A date column, or a number column holding years: what a year or period can restrict."""
    s = m.sense
    if s is None or s.kind != "column" or not s.column:
        return False
    kind = column_kind(lex, s.table, s.column)
    return kind in TEMPORAL or (kind in NUMERIC and "year" in s.column.lower())


OWN_WORDS = frozenset(["details", "detail", "content", "description", "text"])


def label_columns(lex: Lexicon, table: str) -> list[str]:
    """The columns that name a row of `table` for a person: name, title, first + last name..."""
    t = lex.table(table)
    if t is None:
        return []
    tname = table.lower().replace("_", "")
    texts = [c for c in t.columns if c.kind == "text"]

    def flat(name: str) -> str:
        return name.lower().replace("_", "")

    single = stem(tname)
    # 'name', 'title', or a column named for the table itself (product.product, country.country)
    for want in ("name", f"{tname}name", "title", f"{tname}title", "fullname", tname, single):
        hit = [c.name for c in texts if flat(c.name) == want]
        if hit:
            return hit[:1]

    def bare(name: str) -> str:  # customer_first_name in customers: 'firstname'
        low = flat(name)
        return low[len(single) :] if low.startswith(single) and low != single else low

    # spelled a letter differently from the table (appellations.Appelation)
    close = [c.name for c in texts if len(single) >= 5 and fuzz.ratio(flat(c.name), single) >= 90]
    if len(close) == 1:
        return close

    first = [c.name for c in texts if bare(c.name) in ("firstname", "givenname", "fname")]
    last = [c.name for c in texts if bare(c.name) in ("lastname", "surname", "familyname", "lname")]
    if first and last:
        return [first[0], last[0]]
    named = [c.name for c in texts if flat(c.name).endswith(("name", "title"))]
    if named:
        return named[:1]
    key = list(lex.key_of(table))
    # the row told in the table's own words: customers.customer_details, addresses.address_content
    own = [c.name for c in texts if flat(c.name) != bare(c.name) and bare(c.name) in OWN_WORDS]
    if len(own) == 1:
        return own
    described = [c.name for c in texts if flat(c.name).endswith("description")]
    if len(described) == 1 and len(key) == 1 and key[0] in {c.name for c in texts}:
        return described  # ref_colors (color_code, color_description): 'the color' is the description
    if key:
        return key[:1]
    ids = [c.name for c in t.columns if flat(c.name).endswith("id")]
    own = [c for c in ids if not is_pointer(lex, Ref(table, c))]  # review.rid beside business_id
    if own:
        return own[:1]
    if len(ids) >= 2:
        return []  # plays_games (StuID, GameID): a row pairs two things and names neither alone
    if ids:
        return ids[:1]
    return [t.columns[0].name] if t.columns else []


def is_birth_date(column: str) -> bool:
    """The column's name says it holds a date of birth ('date_of_birth', 'BirthDate', 'dob')."""
    low = column.lower()
    return any(w in low for w in WORDS.sets["birth_words"])


def age_column(lex: Lexicon, table: str) -> Ref | None:
    """The table's number column called age ('the youngest captain', 'from oldest to youngest')."""
    t = lex.table(table)
    ages = [c.name for c in (t.columns if t else ()) if c.name.lower() == "age" and c.kind in NUMERIC]
    return Ref(table, ages[0]) if ages else None


def is_key(lex: Lexicon, ref: Ref) -> bool:
    return ref.column.lower() in {k.lower() for k in lex.key_of(ref.table)}


def is_pointer(lex: Lexicon, ref: Ref) -> bool:
    """A foreign key column: it names another table's rows."""
    return pointed_at(lex, ref) is not None


def pointed_at(lex: Lexicon, ref: Ref) -> str | None:
    """The table whose rows a foreign key column names (flight.airport_id → airport)."""
    return next(
        (
            e.ref_table
            for e in lex.db.graph.edges
            if e.table.lower() == ref.table.lower()
            and len(e.columns) == 1
            and e.columns[0].lower() == ref.column.lower()
        ),
        None,
    )


def foreign_keys(lex: Lexicon, table: str, to: str) -> list[Edge]:
    """The one-column foreign keys of `table` onto `to`: one says which row of `to` a row has;
    two (a flight's origin and destination airport) do not say which is meant."""
    return [
        e
        for e in lex.db.graph.edges
        if len(e.columns) == 1
        and not e.is_self
        and e.table.lower() == table.lower()
        and e.ref_table.lower() == to.lower()
    ]


def counts_something(lex: Lexicon, s: Sense) -> bool:
    """A numeric column that holds a count ('num_enrolled', 'review_count', 'numcitedby')."""
    if not s.column or column_kind(lex, s.table, s.column) not in NUMERIC:
        return False
    low = s.column.lower()
    return bool(
        re.match(r"(num|n_|no_|number|count|total)", low) or re.search(r"(count|_num|number|total)$", low)
    )


# Numbers averaged rather than added up when rows are ranked by them per group ('rating', 'price').
AVERAGED = re.compile(
    r"(rate|rating|score|price|grade|gpa|percent|pct|ratio|age|speed|avg|average|level)", re.I
)


def ranking_measure(ref: Ref, words: str = "") -> Measure:
    """What ranks groups by a column of their rows: the rows added up ('top clients by cpu hours',
    'the month with the highest cost'), or averaged for rates and scores."""
    return Measure("AVG" if AVERAGED.search(ref.column) else "SUM", ref.table, ref.column, words=words)


def measure_columns(lex: Lexicon, table: str) -> list[str]:
    """The numbers of `table` worth computing with: numeric, and neither its key nor a pointer."""
    t = lex.table(table)
    if t is None:
        return []
    key = {k.lower() for k in lex.key_of(table)}
    fks = {c.lower() for e in lex.db.graph.edges if e.table.lower() == table.lower() for c in e.columns}
    return [
        c.name
        for c in t.columns
        if c.kind in NUMERIC
        and c.name.lower() not in key
        and c.name.lower() not in fks
        and not c.name.lower().endswith("id")
    ]


# Words in the name of a column that holds money (singular, as name_words gives them): what
# '$100' or '€5' is compared with.
MONEY_WORDS = frozenset(
    [
        "price",
        "cost",
        "amount",
        "fee",
        "fare",
        "salary",
        "budget",
        "revenue",
        "pay",
        "payment",
        "charge",
        "spend",
        "spending",
        "income",
        "wage",
    ]
)
CURRENCY_SIGNS = ("$", "€", "£", "¥")


def money_column(lex: Lexicon, table: str) -> str | None:
    """The one number of `table` that holds money ('wines over $100' → wine.Price), if only one."""
    money = [c for c in measure_columns(lex, table) if MONEY_WORDS & set(name_words(c).split())]
    return money[0] if len(money) == 1 else None


def parent_levels(lex: Lexicon, table: str) -> Iterator[list[str]]:
    """The tables `table` points to many-to-one (a foreign key onto a unique key), one hop at a
    time, each table once: a payment line's payment, then that payment's client."""
    seen, frontier = {table.lower()}, [table]
    while frontier:
        nxt = []
        for t in frontier:
            for e in lex.db.graph.edges:
                if e.table.lower() == t.lower() and e.ref_unique and e.ref_table.lower() not in seen:
                    seen.add(e.ref_table.lower())
                    nxt.append(e.ref_table)
        if nxt:
            yield nxt
        frontier = nxt


def measure_column(lex: Lexicon, table: str) -> str | None:
    """The one number a row of `table` has ('orders above 50' → order.amount), if only one."""
    nums = measure_columns(lex, table)
    return nums[0] if len(nums) == 1 else None
