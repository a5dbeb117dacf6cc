"""Key inference on databases that declare no keys at all, from small samples.

In a handful of rows every id column looks unique — the bridge's as much as the entity's — so
what decides direction, and which of several unique columns a key points at, is the evidence of
`core.graph.owners`: the table a key's name names, and an entity rather than a bridge.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

from core.bench.joins import main as joins_main
from core.bench.stripped import declared_keys, score_recovery, strip_keys
from core.catalog import reflect
from core.connect import readonly_engine
from core.database import Database
from core.graph import build_graph
from core.graph.names import ABBREVIATED, INITIAL, SPELLED, UNNAMED, names_table
from core.graph.owners import BRIDGE, ENTITY, OTHER, Owners
from core.schema_text import ASKBASE, schema_text
from core.settings import DatabaseSettings
from tests.unit.test_graph import edge_set, make_db

# An academic catalogue with no keys declared: three conferences, each in one domain, so the
# bridge's cid and did are as unique as the entities' own keys.
ACADEMIC = """
    CREATE TABLE conference (cid INTEGER, name TEXT, homepage TEXT);
    CREATE TABLE domain (did INTEGER, name TEXT);
    CREATE TABLE domain_conference (cid INTEGER, did INTEGER);
    CREATE TABLE publication (pid INTEGER, title TEXT, cid INTEGER, year INTEGER);
"""
ACADEMIC_ROWS = {
    "conference": [(1, "ISA", "isa.org"), (2, "AAAS", "aaas.org"), (3, "ICML", "icml.cc")],
    "domain": [(1, "Biology"), (2, "Computing"), (3, "Physics"), (4, "Chemistry")],
    "domain_conference": [(1, 1), (2, 3), (3, 2)],
    "publication": [
        (1, "Climate", 1, 2020),
        (2, "Social media", 2, 2020),
        (3, "Mining", 3, 2021),
        (4, "GPUs", 3, 2021),
    ],
}


def academic(tmp_path: Path):
    return make_db(tmp_path / "academic.sqlite", ACADEMIC, ACADEMIC_ROWS)


def test_a_bridge_references_the_entities_it_pairs_even_when_both_columns_look_unique(tmp_path):
    catalog, engine = academic(tmp_path)
    graph = build_graph(catalog, engine)
    inferred = edge_set(graph, "inferred")
    assert ("domain_conference", ("cid",), "conference", ("cid",)) in inferred
    assert ("domain_conference", ("did",), "domain", ("did",)) in inferred
    # never the entity pointing at the bridge, whichever table was met first
    assert not any(r == "domain_conference" for _, _, r, _ in inferred)
    # publication.cid's values are in both conference.cid and domain_conference.cid, both unique
    # here: the conference, which the name abbreviates and which has a name of its own, wins
    assert ("publication", ("cid",), "conference", ("cid",)) in inferred
    # so the bridge is seen as one, and the years, unique in four rows, join nothing
    assert any(p.kind == "many_to_many" and p.root == "domain_conference" for p in graph.patterns)
    assert not any("year" in cols for _, cols, _, _ in inferred)
    # the same three cids on both sides: the name decides; four domains, three used: the values do
    (to_conference,) = graph.edges_between("domain_conference", "conference")
    assert "direction by name" in to_conference.evidence
    (to_domain,) = graph.edges_between("domain_conference", "domain")
    assert "direction by values" in to_domain.evidence
    report = graph.stats["inference"]
    assert report["direction by name"] == 1 and report["key chosen by name"] >= 1
    assert report["direction flipped"] >= 1  # conference and domain were met before the bridge


def test_a_key_name_names_its_table_spelled_out_abbreviated_or_by_initial():
    assert names_table("conference_id", "conferences") == SPELLED
    assert names_table("customerId", "customer") == SPELLED
    assert names_table("conf_id", "conference") == ABBREVIATED
    assert names_table("prod_type_id", "product_types") == ABBREVIATED
    assert names_table("dc_id", "domain_conference") == ABBREVIATED
    assert names_table("card_id", "customers_cards") == ABBREVIATED  # the table's head noun
    assert names_table("cid", "conference") == INITIAL
    assert names_table("cid", "domain_conference") == UNNAMED
    assert names_table("paper_id", "author") == UNNAMED
    assert names_table("id", "conference") == UNNAMED  # a bare id names whatever table holds it


def test_tables_are_entities_bridges_or_neither_by_name_and_columns(tmp_path):
    catalog, _ = make_db(
        tmp_path / "shapes.sqlite",
        """
        CREATE TABLE paper (paperid INTEGER, title TEXT);
        CREATE TABLE field (fieldid INTEGER);
        CREATE TABLE author (authorid INTEGER, authorname TEXT);
        CREATE TABLE paperfield (fieldid INTEGER, paperid INTEGER);
        CREATE TABLE writes (paperid INTEGER, authorid INTEGER);
        CREATE TABLE checking (custid INTEGER, balance REAL);
        """,
    )
    owners = Owners(catalog)
    shape = {t.name: owners.shape(t) for t in catalog.tables}
    assert shape == {
        "author": ENTITY,
        "checking": OTHER,
        "field": OTHER,
        "paper": ENTITY,
        "paperfield": BRIDGE,  # its name joins paper and field
        "writes": BRIDGE,  # nothing but other tables' keys
    }


def test_an_abbreviated_name_picks_its_table_among_several_unique_id_columns(tmp_path):
    catalog, engine = make_db(
        tmp_path / "talks.sqlite",
        """
        CREATE TABLE conference (id INTEGER, name TEXT);
        CREATE TABLE room (id INTEGER, label TEXT);
        CREATE TABLE speaker (id INTEGER, name TEXT);
        CREATE TABLE talk (id INTEGER, title TEXT, conf_id INTEGER);
        """,
        {
            "conference": [(i, f"Conf {i}") for i in range(1, 6)],
            "room": [(i, f"R{i}") for i in range(1, 9)],
            "speaker": [(i, f"S{i}") for i in range(1, 12)],
            "talk": [(i, f"Talk {i}", 1 + i % 4) for i in range(1, 20)],
        },
    )
    graph = build_graph(catalog, engine)
    # 1..4 are ids of every table; only one table is the one conf_id abbreviates
    assert edge_set(graph, "inferred") == {("talk", ("conf_id",), "conference", ("id",))}
    assert graph.edges_between("talk", "conference")[0].evidence.startswith("values:")


def test_with_no_name_to_go_on_the_entity_is_the_referenced_table(tmp_path):
    catalog, engine = make_db(
        tmp_path / "bank.sqlite",
        """
        CREATE TABLE accounts (custid INTEGER, name TEXT);
        CREATE TABLE checking (custid INTEGER, balance REAL);
        CREATE TABLE savings (custid INTEGER, balance REAL);
        """,
        {
            "accounts": [(i, f"customer {i}") for i in (11, 24, 37, 42, 58)],
            "checking": [(i, 100.0 * i) for i in (11, 24, 37, 42, 58)],
            "savings": [(i, 10.5 * i) for i in (11, 24, 37, 42, 58)],
        },
    )
    graph = build_graph(catalog, engine)
    # custid names none of them and all three hold the same five values: the table that
    # describes the customer (a name) is the one the others point at
    assert edge_set(graph, "inferred") == {
        ("checking", ("custid",), "accounts", ("custid",)),
        ("savings", ("custid",), "accounts", ("custid",)),
    }
    assert all("direction by shape" in e.evidence for e in graph.edges)


def test_a_column_that_fits_two_equally_likely_keys_is_left_unjoined(tmp_path):
    codes = ["AX1", "BX2", "CX3", "DX4", "EX5"]
    catalog, engine = make_db(
        tmp_path / "tie.sqlite",
        """
        CREATE TABLE alpha (code TEXT PRIMARY KEY, label TEXT);
        CREATE TABLE beta (code TEXT PRIMARY KEY, label TEXT);
        CREATE TABLE item (id INTEGER PRIMARY KEY, category TEXT);
        """,
        {
            "alpha": [(c, f"alpha {c}") for c in codes],
            "beta": [(c, f"beta {c}") for c in codes],
            "item": [(i, codes[i % 4]) for i in range(1, 30)],
        },
    )
    graph = build_graph(catalog, engine)
    # category names neither table, and both are keyed entities: nothing tells them apart
    assert graph.edges_between("item", "alpha") == graph.edges_between("item", "beta") == []
    assert graph.stats["inference"]["dropped: several equally likely keys"] == 1


def test_inferred_keys_in_a_keyless_database_never_use_dates_or_amounts(tmp_path):
    days = [f"2024-03-{d:02d}" for d in range(1, 8)]
    catalog, engine = make_db(
        tmp_path / "keyless_hygiene.sqlite",
        """
        CREATE TABLE calendar (day_key TEXT, label TEXT);
        CREATE TABLE customer (customer_id INTEGER, name TEXT);
        CREATE TABLE quote (quote_id INTEGER, day_key TEXT, premium_id REAL, customer_id INTEGER);
        CREATE TABLE tariff (premium_id REAL, band TEXT);
        """,
        {
            "calendar": [(d, f"day {d}") for d in days],
            "customer": [(i, f"c{i}") for i in range(1, 6)],
            "quote": [(i, days[i % 7], [10.5, 20.25, 30.75][i % 3], 1 + i % 5) for i in range(1, 12)],
            "tariff": [(10.5, "low"), (20.25, "mid"), (30.75, "high")],
        },
    )
    graph = build_graph(catalog, engine)
    assert edge_set(graph, "inferred") == {("quote", ("customer_id",), "customer", ("customer_id",))}


def test_the_writer_sees_the_bridge_referencing_the_entity(tmp_path, settings):
    academic(tmp_path)
    db = Database("academic", DatabaseSettings(url=f"sqlite:///{tmp_path / 'academic.sqlite'}"), tmp_path)
    text = schema_text(db, settings.engine, ASKBASE)
    tables = {
        block.split(" (", 1)[0].removeprefix("CREATE TABLE "): block
        for block in text.split("CREATE TABLE ")[1:]
    }
    tables = {k.split()[0]: v for k, v in tables.items()}
    assert "cid INTEGER REFERENCES conference(cid)" in tables["domain_conference"]
    assert "did INTEGER REFERENCES domain(did)" in tables["domain_conference"]
    assert "cid INTEGER REFERENCES conference(cid)" in tables["publication"]
    assert "REFERENCES" not in tables["conference"] and "REFERENCES" not in tables["domain"]
    db.dispose()


# ---------------------------------------------------------------------------------------------
# the held-out check: databases that declare keys, with their keys stripped

SHOP = """
    CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE product (product_id INTEGER PRIMARY KEY, title TEXT);
    CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(customer_id),
        placed TEXT);
    CREATE TABLE order_product (order_id INTEGER REFERENCES orders(order_id),
        product_id INTEGER REFERENCES product(product_id), PRIMARY KEY (order_id, product_id));
"""
SHOP_ROWS = {
    "customer": [(i, f"c{i}") for i in range(1, 9)],
    "product": [(i, f"p{i}") for i in range(1, 7)],
    "orders": [(i, 1 + i % 8, f"2024-01-{i:02d}") for i in range(1, 21)],
    "order_product": [(i, 1 + (i * 7) % 6) for i in range(1, 21)],
}


def test_stripping_keys_keeps_the_data_and_drops_every_key(tmp_path):
    catalog, _ = make_db(tmp_path / "shop.sqlite", SHOP, SHOP_ROWS)
    declared = declared_keys(catalog, tmp_path / "shop.sqlite")
    assert {d.kind for d in declared} == {"recoverable"} and len(declared) == 3
    copy = strip_keys(tmp_path / "shop.sqlite", tmp_path / "out" / "shop.sqlite")
    stripped = reflect(readonly_engine(f"sqlite:///{copy}"), "shop")
    assert not stripped.relationships and not any(t.primary_key or t.unique for t in stripped.tables)
    with sqlite3.connect(tmp_path / "shop.sqlite") as a, sqlite3.connect(copy) as b:
        for table in SHOP_ROWS:
            assert (
                a.execute(f"SELECT * FROM {table}").fetchall()
                == b.execute(f"SELECT * FROM {table}").fetchall()
            )
    small = strip_keys(
        tmp_path / "shop.sqlite", tmp_path / "small" / "shop.sqlite", 3, [d.fk for d in declared]
    )
    with sqlite3.connect(small) as b:
        # three orders, and the customers they were placed by, even past the first three rows
        assert b.execute("SELECT COUNT(*) FROM orders").fetchone() == (3,)
        assert not b.execute(
            "SELECT customer_id FROM orders WHERE customer_id NOT IN (SELECT customer_id FROM customer)"
        ).fetchall()


def test_recovery_counts_right_reversed_and_missed_keys(tmp_path):
    catalog, _ = make_db(tmp_path / "shop.sqlite", SHOP, SHOP_ROWS)
    declared = declared_keys(catalog, tmp_path / "shop.sqlite")
    copy = strip_keys(tmp_path / "shop.sqlite", tmp_path / "out" / "shop.sqlite")
    engine = readonly_engine(f"sqlite:///{copy}")
    graph = build_graph(reflect(engine, "shop"), engine)
    counts: Counter[str] = Counter()
    notes = score_recovery(declared, graph.edges, counts)
    assert counts["declared"] == 3 and counts["recovered"] == 3, notes
    assert counts["inferred right"] == counts["inferred"] == 3
    flipped = [
        replace(e, table=e.ref_table, columns=e.ref_columns, ref_table=e.table, ref_columns=e.columns)
        for e in graph.edges
    ]
    counts = Counter()
    score_recovery(declared, flipped, counts)
    assert counts["inferred reversed"] == 3 and counts["recovered"] == 0


def test_the_joins_benchmark_scores_inference_against_stripped_keys(tmp_path, capsys):
    (tmp_path / "db" / "shop").mkdir(parents=True)
    make_db(tmp_path / "db" / "shop" / "shop.sqlite", SHOP, SHOP_ROWS)
    assert (
        joins_main(["--db-dir", str(tmp_path / "db"), "--strip-keys", "--large-queries", "0", "--json"]) == 0
    )
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    assert result["recovery"]["declared"] == 3
    assert result["recovery"]["recall"] == 1.0 and result["recovery"]["precision"] == 1.0
    assert "stripped keys (all)" in out and "precision 1.000" in out
