"""The schema text of a scope: a table's rendering is remembered, never stale."""

from __future__ import annotations

from core.schema_text import ASKBASE, schema_text
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
