"""The retrieve stage on the demo database: the user's words become tables, columns and stored values."""

from __future__ import annotations

from pathlib import Path

from core.database import Database
from core.demo import demo_settings
from core.dictionary import keyword_dictionary
from core.link import match_tables
from core.retrieval import Keywords
from core.retrieve import guess_keywords, retrieve
from core.values import Access


def values_of(retrieval) -> set[tuple[str, str, str]]:
    return {(m.table, m.column, m.value) for m in retrieval.values}


def test_keywords_find_tables_and_stored_spellings(demo_db):
    r = retrieve(
        "How many active customers are in Zurich?", Keywords(("customers",), ("active", "zurich")), demo_db
    )
    assert r.schema[0].table == "client" and r.schema[0].column is None
    assert ("client", "status", "ACT") in values_of(r)  # 'active' is what ACT means
    assert ("location", "city", "Zürich") in values_of(r)
    act = next(m for m in r.values if m.value == "ACT")
    assert act.via == "meaning" and act.score == 1.0
    reasons, _, ambiguous = match_tables(r)
    assert {"client", "location"} <= set(reasons) and ambiguous == []


def test_codes_are_found_without_their_punctuation(demo_db):
    r = retrieve("payments of invoice INV2024-00123", Keywords(("payments",), ("INV2024-00123",)), demo_db)
    best = r.values[0]
    assert (best.table, best.column, best.value, best.score) == (
        "payment",
        "invoice_no",
        "INV-2024-00123",
        1.0,
    )
    r = retrieve("load of esx fra1 017", Keywords(("load",), ("esx fra1 017",)), demo_db)
    assert (r.values[0].table, r.values[0].value) == ("compute", "esx-fra1-017")


def test_an_object_keyword_that_is_a_value(demo_db):
    r = retrieve("hosts like esx-fra1-017", Keywords(("hosts", "esx-fra1-017")), demo_db)
    assert r.schema[0].table == "compute"
    assert ("compute", "hostname", "esx-fra1-017") in values_of(r)
    assert all(m.keyword != "hosts" for m in r.values)  # a table name is not searched among values


def test_descriptions_relevant_to_the_question(demo_db):
    r = retrieve("Which clients churned?", Keywords(("clients",), ("churned",)), demo_db)
    assert r.descriptions, "the catalog explains status codes"
    top = r.descriptions[0]
    assert (top.table, top.column, top.value) == ("client", "status", "CHN")
    assert len(r.descriptions) <= 8


def test_without_keywords_they_are_guessed(demo_db):
    r = retrieve("How many churned clients per segment?", Keywords(), demo_db)
    assert ("client", "status", "CHN") in values_of(r)
    assert any(m.table == "client" and m.column == "segment" for m in r.schema)
    assert r.notes and "guessed" in r.notes[0]


def test_guess_keywords():
    kw = guess_keywords('Show payments of "Acme Corp" in New York for invoice INV-2024-00123 over 100 euros')
    assert {"Acme Corp", "New York", "INV-2024-00123", "100"} <= set(kw.values)
    assert {"payments", "invoice", "euros"} <= set(kw.objects)
    assert "show" not in kw.objects and "Show" not in kw.values


def test_summary_shows_what_matched_and_how_well(demo_db):
    r = retrieve("active customers", Keywords(("customers",), ("active",)), demo_db)
    summary = r.summary()
    assert any("'customers' → client (synonym" in s for s in summary["schema"])
    assert any("client.status = 'ACT' ('active') (meaning, 1.00)" in s for s in summary["values"])


def test_denied_tables_are_never_retrieved(demo_var):
    config = demo_settings(demo_var).model_copy(
        update={"deny_tables": ["payment"], "deny_columns": ["client.name"]}
    )
    db = Database(name="demo-restricted", config=config, var_dir=Path(demo_var))
    r = retrieve(
        "invoice INV-2024-00123 of client Acme paid by card",
        Keywords(("payments", "invoice", "client name"), ("INV-2024-00123", "Acme", "card")),
        db,
    )
    touched = {m.table for m in r.schema} | {m.table for m in r.values} | {d.table for d in r.descriptions}
    assert "payment" not in touched
    assert all(m.column != "name" or m.table != "client" for m in [*r.schema, *r.values])
    assert all(d.column != "name" or d.table != "client" for d in r.descriptions)


def test_dictionary_is_built_once_per_catalog(demo_db):
    retrieve("clients", Keywords(("clients",)), demo_db)
    first = keyword_dictionary(demo_db.catalog, Access.of(demo_db))
    retrieve("payments", Keywords(("payments",)), demo_db)
    assert keyword_dictionary(demo_db.catalog, Access.of(demo_db)) is first
