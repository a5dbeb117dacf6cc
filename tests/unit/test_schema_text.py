"""The schema text of a scope: a table's rendering is remembered, never stale."""

from __future__ import annotations

from dataclasses import replace

from core.schema_text import ASKBASE, EXAMPLES_NOTE, read_examples, schema_text
from core.settings import load_settings


def test_a_remembered_rendering_equals_a_fresh_one(demo_db):
    """Tables are rendered once per what their text depends on (the shown tables they refer to,
    their columns' descriptions wanted): changing either renders anew, and asking again gives
    exactly what a process that never rendered them before gives."""
    settings = load_settings().engine
    scope = ["client", "payment", "location"]
    wider = [*scope, "usage"]
    described = frozenset({("client", "segment")})
    asked = [
        (scope, frozenset()),
        (scope, described),
        (["client", "payment"], described),
        (wider, described),
        (scope, frozenset()),
    ]
    first = [schema_text(demo_db, settings, ASKBASE, tables, wanted) for tables, wanted in asked]
    assert first[0] != first[1]  # the description shows only when wanted
    assert first[0] == first[4]
    demo_db.catalog.__dict__["_memo"].pop(("annotated tables",))  # as if never rendered
    fresh = [schema_text(demo_db, settings, ASKBASE, tables, wanted) for tables, wanted in asked]
    assert fresh == first


def test_example_rows_are_read_from_the_database_once_per_table(demo_db):
    """What `core.bench linking` times apart as the database's work: a table's first sight reads
    its example rows, later questions read them from memory, and the rendering is the same
    whether or not they were read beforehand."""
    settings = load_settings().engine
    style = replace(ASKBASE, sample_rows=2)
    before = schema_text(demo_db, settings, style, ["client", "payment"], frozenset())
    memo = demo_db.catalog.__dict__["_memo"]
    for key in [k for k in memo if isinstance(k, tuple) and k[:1] in (("sample",), ("annotated tables",))]:
        memo.pop(key)  # as if no table had been seen
    assert read_examples(demo_db, settings, style, ["client", "payment"]) == 2
    assert read_examples(demo_db, settings, style, ["client", "payment", "datacenter"]) == 1
    assert read_examples(demo_db, settings, replace(style, sample_rows=0), ["host"]) == 0
    assert schema_text(demo_db, settings, style, ["client", "payment"], frozenset()) == before
    assert before.startswith(EXAMPLES_NOTE)  # the rows read show as example values
