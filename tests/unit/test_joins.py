"""View synthesis: the minimum-cost join tree under Lucy's constraints, and what it looks like.

The demo tests at the end ask Lucy's three motivating questions (papers/lucy.txt §2.2, C.1) with
hand-written SQL over the view (no LLM), expand it, and check the joins of the SQL that runs.
"""

from __future__ import annotations

import itertools
import math
import random
import sqlite3
from pathlib import Path

import networkx as nx
import pytest
import sqlalchemy as sa
import sqlglot
import yaml
from sqlglot import exp

from core.catalog import overlay, reflect
from core.connect import readonly_engine
from core.expand import expand
from core.graph import build_graph
from core.joins import sample_sql, synthesize_view, view_ddl
from core.joins.steiner import Weights, steiner_tree


def make_graph(path: Path, ddl: str, rows: dict[str, list[tuple]] | None = None, catalog_yaml: str = ""):
    con = sqlite3.connect(path)
    con.executescript(ddl)
    for table, values in (rows or {}).items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' for _ in values[0])})", values)
    con.commit()
    con.close()
    engine = readonly_engine(f"sqlite:///{path}")
    catalog = reflect(engine, path.stem)
    if catalog_yaml:
        catalog = overlay(catalog, yaml.safe_load(catalog_yaml))
    return build_graph(catalog, engine), engine


def join_graph(sql: str, dialect: str = "sqlite") -> tuple[set[frozenset[str]], dict[str, str], set[str]]:
    """Join edges (as {'table.col', 'table.col'}), join kind per alias, and tables of a SELECT."""
    select = sqlglot.parse_one(sql, read=dialect)
    assert isinstance(select, exp.Select)
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in select.find_all(exp.Table)}
    edges: set[frozenset[str]] = set()
    kinds: dict[str, str] = {}
    for join in select.args.get("joins") or []:
        kinds[aliases[join.this.alias_or_name.lower()]] = (join.side or "inner").lower()
        for eq in join.args["on"].find_all(exp.EQ):
            a, b = eq.this, eq.expression
            edges.add(
                frozenset(
                    (
                        f"{aliases[a.table.lower()]}.{a.name.lower()}",
                        f"{aliases[b.table.lower()]}.{b.name.lower()}",
                    )
                )
            )
    return edges, kinds, set(aliases.values())


def pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


# ---------------------------------------------------------------------------------------------
# the tree


def _brute_force(g: nx.Graph, terminals: list[str]) -> float:
    others = [n for n in g if n not in terminals]
    best = math.inf
    for r in range(len(others) + 1):
        for extra in itertools.combinations(others, r):
            h = g.subgraph([*terminals, *extra])
            if nx.is_connected(h):
                best = min(best, nx.minimum_spanning_tree(h).size(weight="weight"))
    return best


@pytest.mark.parametrize("seed", range(40))
def test_steiner_tree_is_minimal_up_to_eight_tables(seed):
    rng = random.Random(seed)
    g = nx.gnp_random_graph(11, 0.3, seed=seed)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = rng.choice([1.0, 1.0, 1.15, 1.3, 1.5])
    g = nx.relabel_nodes(g, {n: f"t{n}" for n in g})
    component = max(nx.connected_components(g), key=len)
    terminals = rng.sample(sorted(component), min(len(component), rng.randint(2, 8)))
    weights = {u: {v: g.edges[u, v]["weight"] for v in g[u]} for u in g}

    tree, unreachable = steiner_tree(weights, terminals)

    assert unreachable == []
    assert tree.method == "exact"
    assert tree.cost == pytest.approx(_brute_force(g, terminals))
    t = nx.Graph(tree.pairs)
    t.add_nodes_from(tree.nodes)
    assert set(terminals) <= set(t) and nx.is_tree(t)
    assert sum(weights[a][b] for a, b in tree.pairs) == pytest.approx(tree.cost)


def test_beyond_the_exact_limit_the_tree_is_a_good_approximation():
    rng = random.Random(3)
    g = nx.connected_watts_strogatz_graph(40, 4, 0.3, seed=3)
    g = nx.relabel_nodes(g, {n: f"t{n}" for n in g})
    weights = {u: dict.fromkeys(g[u], 1.0) for u in g}
    terminals = rng.sample(sorted(g), 10)
    approx, _ = steiner_tree(weights, terminals, exact_limit=8)
    exact, _ = steiner_tree(weights, terminals, exact_limit=10)
    assert approx.method == "approximate" and exact.method == "exact"
    assert exact.cost <= approx.cost <= 1.25 * exact.cost
    assert set(terminals) <= set(approx.nodes)


@pytest.mark.parametrize("seed", range(20))
def test_copies_of_a_table_are_searched_once_and_the_tree_is_still_minimal(seed):
    """A warehouse's daily, history and staging copies of a table join the same tables at the same
    cost (twins): the search keeps one of each kind, and finds a tree of the same cost as a search
    of every table, using a copy when the question asks for it."""
    rng = random.Random(seed)
    g = nx.gnp_random_graph(9, 0.35, seed=seed)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = rng.choice([1.0, 1.15, 1.3])
    g = nx.relabel_nodes(g, {n: f"t{n}" for n in g})
    for n in list(g):
        for k in range(rng.randint(0, 3)):
            copy = f"{n}_copy{k}"
            g.add_node(copy)
            for m in list(g[n]):
                if "_copy" not in m:
                    g.add_edge(copy, m, weight=g.edges[n, m]["weight"])
    component = max(nx.connected_components(g), key=len)
    terminals = rng.sample(sorted(component), min(len(component), rng.randint(2, 6)))
    plain = {u: {v: g.edges[u, v]["weight"] for v in g[u]} for u in g}
    twins = Weights(plain)
    assert twins.twins()  # every generated copy stands in for another

    tree, unreachable = steiner_tree(twins, terminals)

    assert unreachable == []
    assert tree.cost == pytest.approx(steiner_tree(plain, terminals)[0].cost)
    assert set(terminals) <= set(tree.nodes)
    assert sum(plain[a][b] for a, b in tree.pairs) == pytest.approx(tree.cost)


def test_unreachable_tables_are_left_out_and_said_so(tmp_path):
    graph, _ = make_graph(
        tmp_path / "islands.sqlite",
        """
        CREATE TABLE a (id INTEGER PRIMARY KEY);
        CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id));
        CREATE TABLE island (id INTEGER PRIMARY KEY, x TEXT);
        """,
    )
    view = synthesize_view(graph, ["a", "island", "b"])
    assert view.dropped == ("island",)
    assert any("could not join island" in n for n in view.explain())
    assert set(view.tables) == {"a", "b"}


# ---------------------------------------------------------------------------------------------
# Lucy's constraints and roles on small schemas


AIRLINE = """
CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE airports (code TEXT PRIMARY KEY, name TEXT, city_id INTEGER REFERENCES city(id));
CREATE TABLE flights (id INTEGER PRIMARY KEY, source_airport TEXT REFERENCES airports(code),
    dest_airport TEXT REFERENCES airports(code), price REAL);
"""


def test_two_foreign_keys_give_one_aliased_copy_per_role(tmp_path):
    graph, engine = make_graph(
        tmp_path / "air.sqlite",
        AIRLINE,
        {
            "city": [(1, "Berlin"), (2, "Paris")],
            "airports": [("BER", "Brandenburg", 1), ("CDG", "Charles de Gaulle", 2)],
            "flights": [(1, "BER", "CDG", 99.0), (2, "CDG", "BER", 89.0)],
        },
    )
    view = synthesize_view(graph, ["flights", "airports", "city"])
    names = {c.name for c in view.columns}
    assert {"source_airport_name", "dest_airport_name"} <= names
    assert {"source_airport_city_name", "dest_airport_city_name"} <= names
    assert view.root_table == "flights" and not view.fans_out
    assert {s.role for s in view.steps if s.table == "airports"} == {"source_airport", "dest_airport"}
    sql = expand(
        f"SELECT source_airport_city_name, dest_airport_city_name FROM {view.name} ORDER BY flights_price",
        view,
        "sqlite",
    )
    with engine.connect() as conn:
        assert conn.execute(sa.text(sql)).all() == [("Paris", "Berlin"), ("Berlin", "Paris")]
    ddl = view_ddl(view)
    assert "same table airports in different roles" in ddl


LUCY_MINI = """
CREATE TABLE location (id INTEGER PRIMARY KEY, city TEXT);
CREATE TABLE client (id INTEGER PRIMARY KEY, name TEXT, loc_id INTEGER REFERENCES location(id));
CREATE TABLE datacenter (id INTEGER PRIMARY KEY, name TEXT, loc_id INTEGER REFERENCES location(id));
CREATE TABLE pool (id INTEGER PRIMARY KEY, name TEXT, dc_id INTEGER REFERENCES datacenter(id));
CREATE TABLE pool_client (pool_id INTEGER REFERENCES pool(id), client_id INTEGER REFERENCES client(id),
    PRIMARY KEY (pool_id, client_id));
CREATE TABLE usage (id INTEGER PRIMARY KEY, pool_id INTEGER REFERENCES pool(id),
    client_id INTEGER REFERENCES client(id), month TEXT, cpu REAL, memory REAL, cost REAL);
"""
LUCY_PATTERNS = """
patterns:
  - {kind: lookup, table: location}
  - {kind: many_to_many, bridge: pool_client, tables: [client, pool]}
"""


def test_a_lookup_table_is_never_the_connector(tmp_path):
    graph, _ = make_graph(tmp_path / "lk.sqlite", LUCY_MINI, catalog_yaml=LUCY_PATTERNS)
    view = synthesize_view(graph, ["client", "datacenter"])
    assert "location" not in view.tables
    assert [s.table for s in view.steps] == ["pool_client", "pool", "datacenter"]
    assert any("location" in n and "C4" in n for n in view.notes)


def test_a_requested_lookup_hangs_off_each_table_that_refers_to_it(tmp_path):
    graph, _ = make_graph(tmp_path / "lk2.sqlite", LUCY_MINI, catalog_yaml=LUCY_PATTERNS)
    view = synthesize_view(graph, ["client", "location", "datacenter"])
    copies = [s for s in view.steps if s.table == "location"]
    assert {s.alias for s in copies} == {"client_location", "datacenter_location"}
    assert all(s.kind == "left" for s in copies)
    assert {"client_location_city", "datacenter_location_city"} <= {c.name for c in view.columns}


def test_the_many_to_many_goes_through_its_bridge(tmp_path):
    ddl = (
        LUCY_MINI + "CREATE TABLE usage_note (id INTEGER PRIMARY KEY, usage_id INTEGER REFERENCES usage(id));"
    )
    graph, _ = make_graph(tmp_path / "mm.sqlite", ddl, catalog_yaml=LUCY_PATTERNS)
    view = synthesize_view(graph, ["client", "pool"])
    assert [s.table for s in view.steps] == ["pool_client", "pool"]
    # client–usage–pool would be the cheapest tree here, but it relates clients and pools without
    # the bridge: Lucy's C3 puts pool_client between them and keeps usage only for its note
    view = synthesize_view(graph, ["client", "pool", "usage_note"])
    assert pair("pool_client.client_id", "client.id") in {
        frozenset(f"{view.aliases[a.split('.')[0]]}.{a.split('.')[1]}" for a in s.on[0]) for s in view.steps
    }
    assert "C3" in " ".join(view.notes)
    assert pair(("pool", "id"), ("usage", "pool_id")) not in view.join_edges()
    # when usage itself is asked for, usage is the relation the question names
    view = synthesize_view(graph, ["client", "usage", "pool"])
    assert "pool_client" not in view.tables


def test_declared_edges_beat_inferred_ones_of_the_same_length(tmp_path):
    graph, _ = make_graph(
        tmp_path / "decl.sqlite",
        """
        CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE account (id INTEGER PRIMARY KEY, owner INTEGER REFERENCES customer(customer_id));
        CREATE TABLE card (id INTEGER PRIMARY KEY, customer_id INTEGER, account_id INTEGER REFERENCES account(id));
        """,
    )
    view = synthesize_view(graph, ["card", "customer", "account"])
    by_table = {s.table: s for s in view.steps}
    assert all(s.origin == "declared" for s in view.steps), view.explain()
    assert set(by_table) == {"customer", "account"} or set(by_table) == {"account", "customer"}
    # the inferred card.customer_id → customer edge is what joins them when account is not asked for
    direct = synthesize_view(graph, ["card", "customer"])
    assert [s.origin for s in direct.steps] == ["inferred"]
    assert "inferred 0.85: name: same name as key customer.customer_id" in direct.explain()[3]


def test_joins_that_repeat_rows_are_flagged_and_keys_are_exposed(tmp_path):
    graph, _ = make_graph(
        tmp_path / "fan.sqlite",
        """
        CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), total REAL);
        """,
    )
    many_to_one = synthesize_view(graph, ["orders", "customer"], {"orders": ["total"], "customer": ["name"]})
    assert not many_to_one.fans_out
    assert [c.name for c in many_to_one.columns] == [
        "orders_id",
        "orders_total",
        "customer_id",
        "customer_name",
    ]
    one_to_many = synthesize_view(graph, ["customer", "orders"], {"customer": ["name"], "orders": ["total"]})
    # the most relevant table first, but the view starts where no join repeats rows
    assert one_to_many.root_table == "orders"
    # asked the other way round with a star root, the customer rows repeat
    fan, _ = make_graph(
        tmp_path / "fan2.sqlite",
        """
        CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), total REAL);
        CREATE TABLE refund (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), amount REAL);
        """,
    )
    view = synthesize_view(fan, ["customer", "orders", "refund"])
    assert view.fans_out
    assert "COUNT(DISTINCT customer_id)" in view_ddl(view)
    assert set(view.grain) == {"orders", "refund"}


def test_a_pass_through_key_table_is_left_out(tmp_path):
    graph, _ = make_graph(
        tmp_path / "pass.sqlite",
        """
        CREATE TABLE paper (paper_id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE dataset (dataset_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE keyphrase (keyphrase_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE paper_dataset (paper_id INTEGER REFERENCES paper, dataset_id INTEGER REFERENCES dataset,
            PRIMARY KEY (paper_id, dataset_id));
        CREATE TABLE paper_keyphrase (paper_id INTEGER REFERENCES paper,
            keyphrase_id INTEGER REFERENCES keyphrase, PRIMARY KEY (paper_id, keyphrase_id));
        """,
    )
    view = synthesize_view(graph, ["dataset", "paper_dataset", "paper_keyphrase", "keyphrase"])
    assert "paper" not in view.tables
    assert frozenset({("paper_dataset", "paper_id"), ("paper_keyphrase", "paper_id")}) in view.join_edges()
    with_paper = synthesize_view(graph, ["dataset", "paper_dataset", "paper_keyphrase", "keyphrase", "paper"])
    assert "paper" in with_paper.tables


def test_denied_tables_are_never_joined_through(tmp_path):
    graph, _ = make_graph(tmp_path / "deny.sqlite", LUCY_MINI, catalog_yaml=LUCY_PATTERNS)
    view = synthesize_view(graph, ["client", "datacenter"], deny_tables=["pool_client"])
    assert "pool_client" not in view.tables and "usage" in view.tables
    view = synthesize_view(graph, ["client", "usage"], deny_columns=["client.name"], deny_tables=["usage"])
    assert view.single_table and "client_name" not in {c.name for c in view.columns}
    assert any("not available" in n for n in view.notes)


def test_a_table_asked_for_twice_gets_its_self_reference(tmp_path):
    graph, engine = make_graph(
        tmp_path / "self.sqlite",
        "CREATE TABLE employee (id INTEGER PRIMARY KEY, name TEXT, manager_id INTEGER REFERENCES employee(id));",
        {"employee": [(1, "Ada", None), (2, "Bob", 1), (3, "Cy", 1)]},
    )
    view = synthesize_view(graph, ["employee", "employee"])
    sql = expand(
        f"SELECT employee_name, employee_manager_name FROM {view.name} ORDER BY employee_id", view, "sqlite"
    )
    with engine.connect() as conn:
        assert conn.execute(sa.text(sql)).all() == [("Ada", None), ("Bob", "Ada"), ("Cy", "Ada")]


@pytest.mark.parametrize("with_paper", [True, False])
def test_a_branch_asked_for_twice_gets_a_second_copy_on_what_both_share(tmp_path, with_paper):
    graph, engine = make_graph(
        tmp_path / "coauthors.sqlite",
        """
        CREATE TABLE author (aid INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE paper (pid INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE writes (aid INTEGER REFERENCES author, pid INTEGER REFERENCES paper, PRIMARY KEY (aid, pid));
        """,
        {
            "author": [(1, "Ada"), (2, "Bob"), (3, "Cy")],
            "paper": [(10, "Joins"), (11, "Views"), (12, "Roles")],
            "writes": [(1, 10), (2, 10), (1, 11), (3, 11), (2, 12)],
        },
    )
    tables = ["writes", "author", "writes", "author"] + (["paper"] if with_paper else [])
    view = synthesize_view(graph, tables)
    assert sorted(view.tables) == sorted(
        ["writes", "author", "writes", "author"] + (["paper"] if with_paper else [])
    )
    first, second = sorted(a for a, t in view.aliases.items() if t == "author")
    key = "paper_pid" if with_paper else "writes_pid"
    sql = expand(
        f"SELECT DISTINCT {key} FROM {view.name} WHERE {first}_name = 'Ada' AND {second}_name = 'Bob'",
        view,
        "sqlite",
    )
    with engine.connect() as conn:
        assert conn.execute(sa.text(sql)).all() == [(10,)]  # the one paper both wrote


def test_the_trace_explains_each_join(tmp_path):
    graph, _ = make_graph(tmp_path / "trace.sqlite", LUCY_MINI, catalog_yaml=LUCY_PATTERNS)
    lines = synthesize_view(graph, ["client", "datacenter"]).explain()
    text = "\n".join(lines)
    assert lines[1] == "requested: client, datacenter; added: pool, pool_client"
    assert "JOIN pool_client ON client.id = pool_client.client_id" in text
    assert "declared foreign key" in text and "bridge of many-to-many client ↔ pool (catalog)" in text
    assert "grain: one row per pool_client" in text


def test_view_ddl_shows_columns_samples_and_fan_out(tmp_path):
    graph, engine = make_graph(
        tmp_path / "ddl.sqlite",
        LUCY_MINI,
        {
            "location": [(1, "Berlin")],
            "client": [(1, "Acme", 1), (2, "Globex", 1)],
            "datacenter": [(1, "dev-berlin-1", 1)],
            "pool": [(1, "p1", 1), (2, "p2", 1)],
            "pool_client": [(1, 1), (2, 1), (1, 2)],
        },
        catalog_yaml=LUCY_PATTERNS,
    )
    view = synthesize_view(graph, ["client", "datacenter"], {"client": ["name"], "datacenter": ["name"]})
    with engine.connect() as conn:
        samples = conn.execute(sa.text(sample_sql(view, "sqlite", 2))).all()
    ddl = view_ddl(view, samples)
    assert ddl.startswith(f"CREATE TABLE {view.name} (")
    assert "client_name TEXT" in ddl and "-- client.name" in ddl
    assert "2 example rows" in ddl and "Acme" in ddl
    assert "rows of client, pool, datacenter repeat" in ddl and "COUNT(DISTINCT client_id)" in ddl


# ---------------------------------------------------------------------------------------------
# the demo database: Lucy's questions


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from core.database import Database
    from core.demo import demo_settings

    var = tmp_path_factory.mktemp("joins-demo")
    db = Database(name="demo", config=demo_settings(var), var_dir=var)
    yield db
    db.dispose()


def run(db, sql: str) -> list[tuple]:
    with db.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(sql)).all()]


def test_q1_clients_reach_datacenters_through_pools_not_the_shared_location(demo):
    from core.view import build_view

    view = build_view(demo, ["client", "datacenter"], {"client": ["name"], "datacenter": ["name"]})
    sql = expand(
        f"SELECT DISTINCT client_name, datacenter_name FROM {view.name} WHERE datacenter_name LIKE 'dev%'",
        view,
        "sqlite",
    )
    edges, kinds, tables = join_graph(sql)
    assert edges == {
        pair("client.id", "pool_client.client_id"),
        pair("pool_client.pool_id", "resource_pool.id"),
        pair("resource_pool.dc_id", "datacenter.id"),
    }
    assert "location" not in tables and set(kinds.values()) == {"inner"}
    got = set(run(demo, sql))
    correct = set(
        run(
            demo,
            """SELECT DISTINCT c.name, d.name FROM datacenter d JOIN resource_pool r ON r.dc_id = d.id
               JOIN pool_client pc ON pc.pool_id = r.id JOIN client c ON c.id = pc.client_id
               WHERE d.name LIKE 'dev%'""",
        )
    )
    same_city = set(
        run(
            demo,
            """SELECT DISTINCT c.name, d.name FROM client c JOIN location l ON l.id = c.loc_id
               JOIN datacenter d ON d.loc_id = l.id WHERE d.name LIKE 'dev%'""",
        )
    )
    assert got == correct and got and got != same_city


def test_q2_cpu_config_and_runtime_are_reached_through_their_branches_with_left_joins(demo):
    from core.view import build_view

    view = build_view(demo, ["resource_pool", "config_cpu", "runtime_cpu"])
    sql = expand(
        f"SELECT DISTINCT resource_pool_name FROM {view.name} "
        "WHERE config_cpu_overhead_limit > runtime_cpu_overall_usage + 100",
        view,
        "sqlite",
    )
    edges, kinds, _ = join_graph(sql)
    assert edges == {
        pair("resource_pool.id", "pool_config.pool_id"),
        pair("pool_config.id", "config_cpu.config_id"),
        pair("resource_pool.id", "pool_runtime.pool_id"),
        pair("pool_runtime.id", "runtime_cpu.runtime_id"),
    }
    assert kinds == dict.fromkeys(["pool_config", "config_cpu", "pool_runtime", "runtime_cpu"], "left")
    correct = run(
        demo,
        """SELECT DISTINCT rp.name FROM resource_pool rp LEFT JOIN pool_config c ON rp.id = c.pool_id
           LEFT JOIN config_cpu cc ON c.id = cc.config_id LEFT JOIN pool_runtime r ON rp.id = r.pool_id
           LEFT JOIN runtime_cpu rc ON r.id = rc.runtime_id WHERE cc.overhead_limit > rc.overall_usage + 100""",
    )
    assert sorted(run(demo, sql)) == sorted(correct) and correct


@pytest.mark.parametrize("tables", [["payment_amount", "tax", "supercharge"], ["tax", "supercharge"]])
def test_q3_tax_and_supercharge_are_summed_as_amounts_not_joined_to_each_other(demo, tables):
    from core.view import build_view

    view = build_view(demo, tables)
    sql = expand(
        f"SELECT SUM(payment_amount_amount) FROM {view.name} WHERE tax_id IS NOT NULL OR supercharge_id IS NOT NULL",
        view,
        "sqlite",
    )
    edges, kinds, _ = join_graph(sql)
    assert edges == {
        pair("payment_amount.id", "tax.amount_id"),
        pair("payment_amount.id", "supercharge.amount_id"),
    }
    assert kinds == {"tax": "left", "supercharge": "left"}
    ((total,),) = run(demo, sql)
    ((expected,),) = run(
        demo,
        """SELECT SUM(amount) FROM payment_amount WHERE id IN (SELECT amount_id FROM tax)
           OR id IN (SELECT amount_id FROM supercharge)""",
    )
    ((both,),) = run(
        demo,
        """SELECT COUNT(*) FROM payment_amount a JOIN tax t ON t.amount_id = a.id
           JOIN supercharge s ON s.amount_id = a.id""",
    )
    assert total == pytest.approx(expected) and total > 0
    assert both == 0  # joining both, as the LLM in Lucy's paper did, finds nothing


def test_without_the_catalog_the_demo_subtypes_are_found_exclusive_by_their_data(demo, tmp_path):
    from dataclasses import replace

    bare = replace(demo.catalog, patterns=(), signature="")
    graph = build_graph(bare, demo.engine)
    assert "payment_amount" in graph.exclusive
    view = synthesize_view(graph, ["tax", "supercharge"])
    assert view.root_table == "payment_amount"
    assert {s.kind for s in view.steps} == {"left"}
