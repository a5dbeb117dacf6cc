"""Linking recalls the join path: the tables between the tables a question names are linked too."""

from __future__ import annotations

from core.catalog import Catalog, Column, Pattern, Relationship, Table
from core.graph import build_graph
from core.link import link
from core.llm import LLM
from core.retrieval import Retrieval, SchemaMatch
from core.understand import Understanding
from tests.fakes import model_replies as mr


def table(name: str, *fks: str) -> Table:
    cols = [Column("id", "INTEGER", "integer", False, True), Column("name", "TEXT", "text")]
    cols += [Column(f"{fk}_id", "INTEGER", "integer") for fk in fks]
    return Table(name, tuple(cols), ("id",))


def chain_catalog(fillers: int = 0) -> Catalog:
    """client ← pool_client → pool → datacenter → location ← client: the path, and a shortcut by city."""
    tables = [
        table("location"),
        table("client", "location"),
        table("datacenter", "location"),
        table("pool", "datacenter"),
        table("pool_client", "pool", "client"),
        *(table(f"filler_{i}") for i in range(fillers)),
    ]
    rels = [
        Relationship(t.name, (c.name,), c.name.removesuffix("_id"), ("id",))
        for t in tables
        for c in t.columns
        if c.name.endswith("_id")
    ]
    return Catalog(
        "t",
        "sqlite",
        tuple(tables),
        tuple(rels),
        (Pattern("lookup", "location"), Pattern("many_to_many", "pool_client", ("client", "pool"))),
    )


Q = Understanding(question="Which clients use datacenters in Frankfurt?")
R = Retrieval(
    schema=[SchemaMatch("clients", "client", None, 1.0), SchemaMatch("datacenters", "datacenter", None, 1.0)]
)


def test_the_tables_between_the_named_ones_are_linked_with_a_reason():
    linking = link(Q, R, chain_catalog(), llm=None)
    assert linking.tables[:2] == ("client", "datacenter")
    # Lucy: through the bridge and the pools, never through the shared location lookup
    assert set(linking.tables[2:]) == {"pool_client", "pool"}
    assert linking.reasons["pool"] == "on the join path between client and datacenter"


def test_the_database_graph_can_be_given():
    catalog = chain_catalog()
    graph = build_graph(catalog).restricted(["pool_client"])
    linking = link(Q, R, catalog, llm=None, graph=graph)
    # with the bridge denied, nothing joins clients to datacenters but the shared city
    assert "pool_client" not in linking.tables


def test_a_large_schema_shows_the_llm_the_path_between_the_matches(fake_llm, llm_settings):
    fake_llm.script("link", mr.json_fenced({"tables": ["client", "datacenter"]}))
    linking = link(Q, R, chain_catalog(fillers=70), LLM(llm_settings), llm_min_tables=25)
    prompt = fake_llm.calls("link")[0].user
    assert '"pool_client"' in prompt and '"pool"' in prompt and '"filler_3"' not in prompt
    assert linking.used_llm and set(linking.tables) == {"client", "datacenter", "pool_client", "pool"}
