"""Singular and plural forms (core.plurals, via inflect): what name matching and hints rely on."""

from __future__ import annotations

import pytest

from core.catalog import Catalog, Column, Table
from core.dictionary import KeywordDictionary
from core.plurals import name_phrase, plural, singular
from core.suggestions import example_questions


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # the three the suffix rules got wrong
        ("statuses", "status"),
        ("series", "series"),
        ("species", "species"),
        # regular and irregular plurals
        ("clients", "client"),
        ("cities", "city"),
        ("addresses", "address"),
        ("boxes", "box"),
        ("churches", "church"),
        ("companies", "company"),
        ("movies", "movie"),
        ("analyses", "analysis"),
        ("people", "person"),
        ("children", "child"),
        ("men", "man"),
        # already singular, or words that only look plural
        ("status", "status"),
        ("campus", "campus"),
        ("class", "class"),
        ("ids", "ids"),
        ("data", "data"),
        ("they", "they"),
        ("e176", "e176"),
        ("", ""),
    ],
)
def test_singular(word, expected):
    assert singular(word) == expected


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("status", "statuses"),
        ("city", "cities"),
        ("resource pool", "resource pools"),
        ("tax", "taxes"),
        ("person", "people"),
        ("series", "series"),
        ("orders", "orders"),  # plural already
        ("data", "data"),
    ],
)
def test_plural(phrase, expected):
    assert plural(phrase) == expected


def test_names_in_capitals_are_said_in_lower_case():
    """Snowflake keeps unquoted names in capitals: keyword mode's sentences say them as on other engines."""
    assert [name_phrase(n) for n in ("payment_amount", "CPU_CORES", "clientName", " MEMORY_GB ")] == [
        "payment amount",
        "cpu cores",
        "clientName",
        "memory gb",
    ]


def test_a_question_in_the_plural_finds_the_singular_table_and_column():
    species = Table(
        "species",
        (Column("id", "INTEGER", "integer", primary_key=True), Column("status", "TEXT", "text")),
    )
    series = Table("series", (Column("id", "INTEGER", "integer", primary_key=True),))
    d = KeywordDictionary(Catalog(database="zoo", dialect="sqlite", tables=(species, series)))
    found = d.match("statuses")[0]  # an exact match, not a near miss ('statuse' scored 0.92)
    assert (found.table, found.column, found.via, found.score) == ("species", "status", "name", 1.0)
    assert d.match("species")[0].table == "species"
    assert d.match("series")[0].table == "series"


def test_suggested_questions_name_tables_in_the_plural():
    """'How many business categorys are there?' and 'How many address are there?' read as typos."""
    tables = tuple(
        Table(name, (Column("id", "INTEGER", "integer", primary_key=True),), description=f"The {name}s")
        for name in ("business_category", "address", "clients")
    )
    questions = example_questions(Catalog(database="shop", dialect="sqlite", tables=tables), limit=3)
    assert sorted(questions) == [
        "How many addresses are there?",
        "How many business categories are there?",
        "How many clients are there?",
    ]
