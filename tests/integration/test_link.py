"""Link stage: which tables a question needs, from retrieval matches, with the LLM only when needed."""

from __future__ import annotations

import pytest

from core.catalog import Catalog, Column, Table
from core.link import LinkError, link, match_tables
from core.llm import LLM
from core.retrieval import Retrieval, SchemaMatch, ValueMatch
from core.understand import Understanding
from tests.fakes import model_replies as mr


def catalog(n_tables: int = 4) -> Catalog:
    names = ["client", "compute", "payment", "location", *(f"extra_{i}" for i in range(max(0, n_tables - 4)))]
    return Catalog(
        database="t",
        dialect="sqlite",
        tables=tuple(
            Table(n, (Column("id", "INTEGER", "integer", primary_key=True), Column("status", "TEXT", "text")))
            for n in names[:n_tables]
        ),
    )


U = Understanding(question="How many hosts are active?")


def test_each_keyword_links_its_best_table_without_an_llm():
    r = Retrieval(
        schema=[
            SchemaMatch("hosts", "compute", None, 0.98, "synonym"),
            SchemaMatch("hosts", "client", None, 0.5),
        ],
        values=[ValueMatch("Berlin", "location", "city", "Berlin", 1.0)],
    )
    linking = link(U, r, catalog(), llm=None)
    assert linking.tables == ("compute", "location") and not linking.used_llm
    assert "Berlin" in linking.reasons["location"]


def test_a_value_stored_in_several_tables_goes_with_the_table_the_question_names():
    r = Retrieval(
        schema=[SchemaMatch("hosts", "compute", None, 0.98, "synonym")],
        values=[
            ValueMatch("active", "client", "status", "ACT", 1.0),
            ValueMatch("active", "compute", "status", "active", 1.0),
        ],
    )
    reasons, columns, ambiguous = match_tables(r)
    assert list(reasons) == ["compute"] and columns == {"compute": ["status"]} and not ambiguous


def test_a_column_name_shared_by_tables_is_settled_by_the_other_keywords():
    r = Retrieval(
        schema=[
            SchemaMatch("clients", "client", None, 1.0),
            SchemaMatch("status", "payment", "status", 1.0),
            SchemaMatch("status", "client", "status", 1.0),
        ]
    )
    reasons, columns, ambiguous = match_tables(r)
    assert list(reasons) == ["client"] and columns == {"client": ["status"]} and ambiguous == []


def test_disagreeing_matches_ask_the_llm(fake_llm, llm_settings):
    r = Retrieval(
        schema=[
            SchemaMatch("status", "payment", "status", 1.0),
            SchemaMatch("status", "client", "status", 1.0),
        ]
    )
    fake_llm.script("link", mr.json_fenced({"tables": ["Payment", "no_such_table"]}))
    linking = link(U, r, catalog(), LLM(llm_settings))
    assert linking.used_llm and linking.tables == ("payment",) and linking.ambiguous == ("status",)
    prompt = fake_llm.calls("link")[0].user
    assert "How many hosts are active?" in prompt and '"client"' in prompt


def test_large_schemas_ask_the_llm_even_when_matches_agree(fake_llm, llm_settings):
    r = Retrieval(schema=[SchemaMatch("hosts", "compute", None, 0.98)])
    fake_llm.script("link", '{"tables": ["compute"]}')
    linking = link(U, r, catalog(30), LLM(llm_settings), llm_min_tables=25)
    assert linking.used_llm and linking.tables == ("compute",)


def test_nothing_matched_and_no_llm_is_a_clear_error():
    with pytest.raises(LinkError, match="none of the question's words"):
        link(U, Retrieval(), catalog(), llm=None)
