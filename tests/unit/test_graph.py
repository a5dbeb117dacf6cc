"""The relationship graph: declared, catalog and inferred edges, and the patterns read off them."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import replace
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
    assert next(p for p in graph.patterns if p.root == "accounts").description.startswith("overlapping")


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
    catalog = replace(catalog, signature="sig-1")
    cache = tmp_path / "cache"
    first = build_graph(catalog, engine, cache_dir=cache)
    assert first.edges_between("student", "faculty")  # found by values
    # same signature: read back from disk, no engine needed to know what profiling found
    again = build_graph(catalog, None, cache_dir=cache)
    assert again.edges == first.edges
    changed = replace(catalog, signature="sig-2")
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


# ---------------------------------------------------------------------------------------------
# inference hygiene


def test_dates_flags_amounts_and_free_text_are_never_inferred_join_keys(tmp_path):
    days = [f"2024-03-{d:02d}" for d in range(1, 21)]
    catalog, engine = make_db(
        tmp_path / "hygiene.sqlite",
        """
        CREATE TABLE rate (valid_from TEXT PRIMARY KEY, pct REAL);
        CREATE TABLE quote (id INTEGER PRIMARY KEY, valid_from TEXT, is_active INTEGER, premium REAL,
            remarks TEXT, customer_id INTEGER);
        CREATE TABLE flag_kind (is_active INTEGER PRIMARY KEY, label TEXT);
        CREATE TABLE tariff (premium REAL PRIMARY KEY, band TEXT);
        CREATE TABLE note_text (remarks TEXT PRIMARY KEY, author TEXT);
        CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT);
        """,
        {
            "rate": [(d, 1.5) for d in days],
            "quote": [
                (i, days[i % 20], i % 2, [10.5, 20.25, 30.75][i % 3], "x" * 90 + str(i % 4), 1 + i % 9)
                for i in range(1, 60)
            ],
            "flag_kind": [(0, "no"), (1, "yes")],
            "tariff": [(10.5, "low"), (20.25, "mid"), (30.75, "high")],
            "note_text": [("x" * 90 + str(i), "me") for i in range(4)],
            "customer": [(i, f"c{i}") for i in range(1, 10)],
        },
    )
    graph = build_graph(catalog, engine)
    inferred = edge_set(graph, "inferred")
    # the one real key is found; the same-named dates, flags, amounts and remarks are not joined
    assert inferred == {("quote", ("customer_id",), "customer", ("customer_id",))}
    report = graph.stats["inference"]
    for kind in ("datetime", "flag", "amount", "long text"):
        assert report.get(f"dropped: {kind} column", 0) >= 1, (kind, report)
    assert report["kept by name"] + report.get("kept by values", 0) == 1


def test_a_foreign_key_to_a_missing_table_is_skipped_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="core.catalog"):
        catalog, engine = make_db(
            tmp_path / "missing.sqlite",
            """
            CREATE TABLE claim (id INTEGER PRIMARY KEY, office_id INTEGER REFERENCES office(id));
            CREATE TABLE payment (id INTEGER PRIMARY KEY, claim_id INTEGER REFERENCES claim(id));
            """,
        )
    assert [r.table for r in catalog.relationships] == ["payment"]
    assert any("claim.office_id" in m and "office is not in the database" in m for m in caplog.messages)
    assert build_graph(catalog, engine).edges_between("payment", "claim")


# ---------------------------------------------------------------------------------------------
# enterprise patterns


ENTERPRISE = """
    CREATE TABLE party (party_id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE person (party_id INTEGER PRIMARY KEY REFERENCES party, born TEXT);
    CREATE TABLE company (party_id INTEGER PRIMARY KEY REFERENCES party, industry TEXT);
    CREATE TABLE agreement (agreement_id INTEGER PRIMARY KEY, signed TEXT);
    CREATE TABLE policy (policy_id INTEGER PRIMARY KEY REFERENCES agreement(agreement_id), number TEXT);
    CREATE TABLE agreement_party_role (agreement_id INTEGER REFERENCES agreement, party_id INTEGER
        REFERENCES party, party_role_code TEXT, start_date TEXT, end_date TEXT,
        PRIMARY KEY (agreement_id, party_id, party_role_code));
    CREATE TABLE claim (claim_id INTEGER PRIMARY KEY, policy_id INTEGER REFERENCES policy);
    CREATE TABLE claim_amount (claim_amount_id INTEGER PRIMARY KEY, claim_id INTEGER REFERENCES claim,
        amount REAL);
    CREATE TABLE loss_payment (claim_amount_id INTEGER PRIMARY KEY REFERENCES claim_amount, method TEXT);
    CREATE TABLE loss_reserve (claim_amount_id INTEGER PRIMARY KEY REFERENCES claim_amount, reason TEXT);
    CREATE TABLE coverage_detail (detail_id INTEGER PRIMARY KEY, policy_id INTEGER REFERENCES policy);
    CREATE TABLE premium (premium_id INTEGER PRIMARY KEY, policy_id INTEGER REFERENCES policy,
        detail_id INTEGER REFERENCES coverage_detail, amount REAL);
"""


def enterprise_rows() -> dict[str, list[tuple]]:
    people, companies = range(1, 21), range(21, 26)
    roles = []
    for a in range(1, 31):
        roles += [
            (a, people[a % 20], "PH", "2024-01-01", None),
            (a, people[(a + 7) % 20], "AG", "2024-01-01", None),
        ]
        if a % 3 == 0:
            roles.append((a, companies[a % 5], "BR", "2024-01-01", None))
    return {
        "party": [(i, f"party {i}") for i in range(1, 26)],
        "person": [(i, "1980-01-01") for i in people],
        "company": [(i, "retail") for i in companies],
        "agreement": [(a, "2024-01-01") for a in range(1, 41)],
        "policy": [(a, f"P-{a}") for a in range(1, 31)],
        "agreement_party_role": roles,
        "claim": [(c, 1 + c % 30) for c in range(1, 16)],
        "claim_amount": [(i, 1 + i % 15, 100.0 + i) for i in range(1, 41)],
        "loss_payment": [(i, "wire") for i in range(1, 41, 2)],
        "loss_reserve": [(i, "estimate") for i in range(2, 41, 2)],
        "coverage_detail": [(d, 1 + d % 30) for d in range(1, 41)],
        "premium": [(i, 1 + (1 + i % 40) % 30, 1 + i % 40, 50.0) for i in range(1, 61)],
    }


def test_subtypes_roles_typed_facts_and_parallel_paths_are_detected(tmp_path):
    catalog, engine = make_db(tmp_path / "ent.sqlite", ENTERPRISE, enterprise_rows())
    graph = build_graph(catalog, engine)
    by_kind = {(p.kind, p.root): p for p in graph.patterns}
    assert by_kind[("subtype", "agreement")].tables == ("policy",)
    assert by_kind[("subtype", "party")].tables == ("company", "person")
    role = by_kind[("role", "agreement_party_role")]
    # the role codes come from profiling; the party plays the role named by party_role_code
    assert role.tables == ("agreement", "party") and role.column == "party_role_code"
    assert [c for c, _ in role.codes] == ["AG", "BR", "PH"]
    fact = by_kind[("typed_fact", "claim_amount")]
    assert fact.tables == ("loss_payment", "loss_reserve") and "claim_amount" in graph.exclusive
    assert ("parallel_path", "premium") in by_kind
    assert by_kind[("parallel_path", "premium")].tables == ("policy", "coverage_detail")
    # the role table is no plain many-to-many bridge, but C3 still routes agreement ↔ party through it
    assert ("many_to_many", "agreement_party_role") not in by_kind
    assert graph.bridges[frozenset(("agreement", "party"))] == ["agreement_party_role"]


def test_tables_referencing_a_supertype_join_its_subtypes_on_the_shared_key(tmp_path):
    catalog, engine = make_db(tmp_path / "ent.sqlite", ENTERPRISE, enterprise_rows())
    graph = build_graph(catalog, engine)
    (edge,) = graph.edges_between("agreement_party_role", "policy")
    assert (edge.columns, edge.ref_columns, edge.via) == (("agreement_id",), ("policy_id",), "agreement")
    assert "shares the key of agreement" in str(edge)
    # a little dearer than a real edge: with agreement in the view the real edges are used
    assert 1.0 < edge.cost < 2.0
    assert graph.stats["shared_key"] >= 3  # policy via agreement; person and company via party


def test_role_codes_come_from_the_code_table_the_role_column_references(tmp_path):
    catalog, engine = make_db(
        tmp_path / "codes.sqlite",
        """
        CREATE TABLE party (party_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE claim (claim_id INTEGER PRIMARY KEY, opened TEXT);
        CREATE TABLE role_type (role_code TEXT PRIMARY KEY, role_name TEXT, notes TEXT);
        CREATE TABLE claim_party_role (claim_id INTEGER REFERENCES claim, party_id INTEGER REFERENCES party,
            role_code TEXT REFERENCES role_type, PRIMARY KEY (claim_id, party_id, role_code));
        """,
        {
            "party": [(i, f"p{i}") for i in range(1, 11)],
            "claim": [(i, "2024-01-01") for i in range(1, 11)],
            "role_type": [("CL", "claimant", "files it"), ("WI", "witness", "saw it")],
            "claim_party_role": [(c, c, "CL") for c in range(1, 11)]
            + [(c, 11 - c, "WI") for c in range(1, 6)],
        },
    )
    graph = build_graph(catalog, engine)
    (role,) = [p for p in graph.patterns if p.kind == "role"]
    assert role.codes == (("CL", "claimant"), ("WI", "witness"))
    assert "role table" in graph.describe_table("claim_party_role")


def test_the_catalog_declares_role_codes_and_switches_a_wrong_detection_off(tmp_path):
    catalog, engine = make_db(tmp_path / "ent.sqlite", ENTERPRISE, enterprise_rows())
    catalog = overlay(
        catalog,
        yaml.safe_load(
            """
            patterns:
              - kind: role
                root: agreement_party_role
                tables: [agreement, party]
                column: party_role_code
                codes: {AG: agent, PH: "policy holder, holder", BR: broker}
              - {kind: parallel_path, root: premium, ignore: true}
            """
        ),
    )
    graph = build_graph(catalog, engine)
    role = graph.roles["agreement_party_role"]
    assert role.origin == "catalog" and dict(role.codes)["PH"] == "policy holder, holder"
    assert not any(p.kind == "parallel_path" and p.root == "premium" for p in graph.patterns)


def test_the_admin_report_round_trips_through_the_catalog_yaml(tmp_path):
    from core.graph.report import graph_report, patterns_yaml

    catalog, engine = make_db(tmp_path / "ent.sqlite", ENTERPRISE, enterprise_rows())
    detected = build_graph(catalog, engine)
    text = "\n".join(graph_report(detected))
    assert "Role tables" in text and "party_role_code: AG, BR, PH" in text and "[detected]" in text
    block = patterns_yaml(detected)
    confirmed = build_graph(overlay(catalog, yaml.safe_load(block)), engine)
    # pasted into the catalog, the same patterns come back, now declared rather than detected
    key = lambda g: sorted((p.kind, p.root, p.tables, p.column, p.codes) for p in g.patterns)  # noqa: E731
    assert key(confirmed) == key(detected)
    assert {p.origin for p in confirmed.patterns} == {"catalog"}


def test_graph_for_is_the_profiled_graph_once_built_and_declared_joins_before(tmp_path):
    from core.graph import graph_for

    faculty = [(fid, f"P{fid}") for fid in (1082, 1121, 1148, 4432, 9922)]
    catalog, engine = make_db(
        tmp_path / "for.sqlite",
        """
        CREATE TABLE faculty (fac_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE student (id INTEGER PRIMARY KEY, advisor INTEGER);
        CREATE TABLE course (id INTEGER PRIMARY KEY, teacher_id INTEGER REFERENCES faculty(fac_id));
        CREATE TABLE staff (staff_id INTEGER PRIMARY KEY);
        CREATE TABLE shift (id INTEGER PRIMARY KEY, staff_id INTEGER);
        """,
        {
            "faculty": faculty,
            "student": [(i, faculty[i % 5][0]) for i in range(20)],
            "staff": [(i,) for i in range(1, 5)],
            "shift": [(i, 100 + i) for i in range(1, 9)],
        },
    )
    before = graph_for(catalog)
    # declared joins only: no guess from names (shift.staff_id, which the data rejects), no values
    assert before.edges_between("course", "faculty") and not before.edges_between("shift", "staff")
    profiled = build_graph(catalog, engine)
    assert graph_for(catalog) is profiled and profiled.edges_between("student", "faculty")
