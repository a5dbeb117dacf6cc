"""The relationship graph: declared, catalog and inferred edges, and the patterns read off them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml

from core.catalog import overlay, reflect
from core.connect import readonly_engine
from core.graph import build_graph


def make_db(path: Path, ddl: str, rows: dict[str, list[tuple]] | None = None):
    """A SQLite file with `ddl` and `rows`, reflected through a read-only engine."""
    con = sqlite3.connect(path)
    con.executescript(ddl)
    for table, values in (rows or {}).items():
        if values:
            marks = ", ".join("?" for _ in values[0])
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
    con.commit()
    con.close()
    engine = readonly_engine(f"sqlite:///{path}")
    return reflect(engine, path.stem), engine


def edge_set(graph, origin=None):
    return {
        (e.table.lower(), e.columns, e.ref_table.lower(), e.ref_columns)
        for e in graph.edges
        if origin is None or e.origin == origin
    }


def test_two_foreign_keys_to_the_same_table_are_two_edges_with_their_roles(tmp_path):
    catalog, engine = make_db(
        tmp_path / "air.sqlite",
        """
        CREATE TABLE airports (code TEXT PRIMARY KEY, city TEXT);
        CREATE TABLE flights (id INTEGER PRIMARY KEY,
            source_airport TEXT REFERENCES airports(code), dest_airport TEXT REFERENCES airports(code));
        """,
    )
    graph = build_graph(catalog, engine)
    edges = graph.edges_between("flights", "airports")
    assert sorted(e.role for e in edges) == ["dest_airport", "source_airport"]
    assert all(e.origin == "declared" and e.confidence == 1.0 for e in edges)


def test_undeclared_keys_are_inferred_from_names_with_a_confidence(tmp_path):
    catalog, _ = make_db(
        tmp_path / "names.sqlite",
        """
        CREATE TABLE restaurant (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE location (restaurant_id INTEGER PRIMARY KEY, street TEXT);
        CREATE TABLE station (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE trip (id INTEGER PRIMARY KEY, start_station_id INTEGER, end_station_id INTEGER);
        CREATE TABLE paper (paperId INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE paperDataset (paperId INTEGER, datasetId INTEGER, PRIMARY KEY (paperId, datasetId));
        CREATE TABLE writer (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE note (id INTEGER PRIMARY KEY, age INTEGER, name TEXT);
        CREATE TABLE airlines (uid INTEGER PRIMARY KEY, airline TEXT);
        CREATE TABLE flights (airline INTEGER, flight_no INTEGER, PRIMARY KEY (airline, flight_no));
        """,
    )
    graph = build_graph(catalog)  # no engine: names only
    inferred = edge_set(graph, "inferred")
    assert ("location", ("restaurant_id",), "restaurant", ("id",)) in inferred
    assert ("trip", ("start_station_id",), "station", ("id",)) in inferred
    assert ("trip", ("end_station_id",), "station", ("id",)) in inferred
    assert ("paperdataset", ("paperId",), "paper", ("paperId",)) in inferred
    assert ("flights", ("airline",), "airlines", ("uid",)) in inferred
    # generic names join nothing: every table has an id and a name
    assert not any(t == "note" or r == "note" for t, _, r, _ in inferred)
    for e in graph.edges:
        assert 0.5 <= e.confidence < 1.0 and e.evidence.startswith("name:")


def test_value_inclusion_finds_keys_that_names_do_not_reveal(tmp_path):
    faculty = [(fid, f"Prof {fid}") for fid in (1082, 1121, 1148, 1172, 1177, 1193, 2192, 2881, 4432, 9922)]
    students = [(i, f"S{i}", faculty[i % 7][0], 18 + i % 5) for i in range(1, 40)]
    catalog, engine = make_db(
        tmp_path / "values.sqlite",
        """
        CREATE TABLE faculty (fac_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE student (stu_id INTEGER PRIMARY KEY, name TEXT, advisor INTEGER, age INTEGER);
        CREATE TABLE grade (level INTEGER PRIMARY KEY, label TEXT);
        """,
        {"faculty": faculty, "student": students, "grade": [(i, f"G{i}") for i in range(1, 60)]},
    )
    graph = build_graph(catalog, engine)
    (edge,) = graph.edges_between("student", "faculty")
    assert (edge.columns, edge.ref_columns, edge.origin) == (("advisor",), ("fac_id",), "inferred")
    assert "values" in edge.evidence
    # ages 18..22 all appear among the dense grade levels 1..59, which proves nothing
    assert graph.edges_between("student", "grade") == []


def test_data_that_contradicts_a_name_match_drops_the_edge(tmp_path):
    catalog, engine = make_db(
        tmp_path / "contra.sqlite",
        """
        CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER);
        """,
        {"customer": [(i, f"c{i}") for i in range(1, 11)], "orders": [(i, 500 + i) for i in range(1, 30)]},
    )
    assert build_graph(catalog).edges_between("orders", "customer")  # the name alone suggests it
    assert build_graph(catalog, engine).edges_between("orders", "customer") == []


def test_patterns_are_detected_from_the_edges(tmp_path):
    catalog, engine = make_db(
        tmp_path / "patterns.sqlite",
        """
        CREATE TABLE ref_status (status_code TEXT PRIMARY KEY, label TEXT);
        CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT, status_code TEXT REFERENCES ref_status);
        CREATE TABLE course (id INTEGER PRIMARY KEY, title TEXT, status_code TEXT REFERENCES ref_status);
        CREATE TABLE enrollment (student_id INTEGER REFERENCES student(id), course_id INTEGER REFERENCES course(id),
            PRIMARY KEY (student_id, course_id));
        CREATE TABLE amount (id INTEGER PRIMARY KEY, value REAL);
        CREATE TABLE tax (id INTEGER PRIMARY KEY, amount_id INTEGER UNIQUE REFERENCES amount(id), rate REAL);
        CREATE TABLE fee (id INTEGER PRIMARY KEY, amount_id INTEGER UNIQUE REFERENCES amount(id), reason TEXT);
        """,
        {
            "amount": [(i, i * 1.5) for i in range(1, 21)],
            "tax": [(i, i, 0.2) for i in range(1, 11)],
            "fee": [(i, 10 + i, "late") for i in range(1, 11)],
        },
    )
    graph = build_graph(catalog, engine)
    kinds = {(p.kind, p.root.lower(), tuple(t.lower() for t in p.tables)) for p in graph.patterns}
    assert ("many_to_many", "enrollment", ("course", "student")) in kinds
    assert ("lookup", "ref_status", ()) in kinds
    assert ("subtype", "amount", ("fee", "tax")) in kinds
    # no amount is both a tax and a fee in the data: the split is exclusive
    assert "amount" in graph.exclusive
    assert "ref_status" in graph.lookups


def test_subtypes_that_share_rows_are_not_exclusive(tmp_path):
    catalog, engine = make_db(
        tmp_path / "bank.sqlite",
        """
        CREATE TABLE accounts (custid INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE checking (custid INTEGER PRIMARY KEY REFERENCES accounts, balance REAL);
        CREATE TABLE savings (custid INTEGER PRIMARY KEY REFERENCES accounts, balance REAL);
        """,
        {
            "accounts": [(i, f"a{i}") for i in range(1, 11)],
            "checking": [(i, 10.0) for i in range(1, 9)],
            "savings": [(i, 20.0) for i in range(3, 11)],
        },
    )
    graph = build_graph(catalog, engine)
    assert any(p.kind == "subtype" and p.root == "accounts" for p in graph.patterns)
    assert "accounts" not in graph.exclusive


def test_catalog_relationships_and_patterns_join_the_graph(tmp_path):
    catalog, engine = make_db(
        tmp_path / "cat.sqlite",
        """
        CREATE TABLE place (id INTEGER PRIMARY KEY, city TEXT, country TEXT, lat REAL, lon REAL);
        CREATE TABLE shop (id INTEGER PRIMARY KEY, name TEXT, where_is INTEGER);
        CREATE TABLE depot (id INTEGER PRIMARY KEY, name TEXT, site INTEGER);
        """,
    )
    catalog = overlay(
        catalog,
        yaml.safe_load(
            """
            relationships:
              - {from: shop.where_is, to: place.id, description: the shop's address}
              - {from: depot.site, to: place.id}
            patterns:
              - {kind: lookup, table: place}
            """
        ),
    )
    graph = build_graph(catalog, engine)
    (edge,) = graph.edges_between("shop", "place")
    assert edge.origin == "catalog" and edge.confidence == 1.0
    assert graph.lookups == {"place"}
    assert "lookup table (catalog)" in graph.describe_table("place")


def test_the_graph_is_cached_by_catalog_signature(tmp_path):
    faculty = [(fid, f"P{fid}") for fid in (1082, 1121, 1148, 4432, 9922)]
    catalog, engine = make_db(
        tmp_path / "cache.sqlite",
        """
        CREATE TABLE faculty (fac_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE student (id INTEGER PRIMARY KEY, advisor INTEGER);
        """,
        {"faculty": faculty, "student": [(i, faculty[i % 5][0]) for i in range(20)]},
    )
    catalog = catalog.__class__(**{**catalog.__dict__, "signature": "sig-1"})
    cache = tmp_path / "cache"
    first = build_graph(catalog, engine, cache_dir=cache)
    assert first.edges_between("student", "faculty")  # found by values
    # same signature: read back from disk, no engine needed to know what profiling found
    again = build_graph(catalog, None, cache_dir=cache)
    assert again.edges == first.edges
    changed = catalog.__class__(**{**catalog.__dict__, "signature": "sig-2"})
    assert build_graph(changed, None, cache_dir=cache).edges_between("student", "faculty") == []


def test_restricted_graph_drops_denied_tables_and_edges_on_denied_columns(tmp_path):
    catalog, engine = make_db(
        tmp_path / "deny.sqlite",
        """
        CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, ssn TEXT UNIQUE);
        CREATE TABLE salary (id INTEGER PRIMARY KEY, person_id INTEGER REFERENCES person(id), amount REAL);
        CREATE TABLE badge (id INTEGER PRIMARY KEY, ssn TEXT REFERENCES person(ssn));
        """,
    )
    graph = build_graph(catalog, engine).restricted(["salary"], ["person.ssn"])
    assert graph.catalog.table("salary") is None
    assert [c.name for c in graph.catalog.table("person").columns] == ["id", "name"]
    assert graph.edges_between("badge", "person") == []


@pytest.mark.parametrize("n_tables", [600])
def test_inference_scales_to_a_chess_sized_schema(n_tables):
    from core.bench.joins import synthetic_catalog

    catalog = synthetic_catalog(n_tables)
    assert sum(len(t.columns) for t in catalog.tables) >= 4000
    graph = build_graph(catalog)
    # a fifth of the synthetic foreign keys are undeclared; their names give them away
    assert graph.stats["inferred"] > 0.1 * graph.stats["declared"]
