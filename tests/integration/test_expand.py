"""Expanding SQL written over the view: same rows as the view, readable, in the database's dialect."""

from __future__ import annotations

import os
import sqlite3
import uuid

import pytest
import sqlalchemy as sa
import sqlglot
from sqlglot import exp

from core.catalog import reflect
from core.connect import readonly_engine
from core.expand import ExpandError, _with_cte, expand
from core.graph import build_graph
from core.joins import synthesize_view
from tests.servers import admin_engine

SHOP = """
CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE "Customer" (id INTEGER PRIMARY KEY, "Name" TEXT, home_city_id INTEGER REFERENCES city(id),
    work_city_id INTEGER REFERENCES city(id));
CREATE TABLE "order" (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES "Customer"(id), total REAL);
CREATE TABLE line (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES "order"(id), sku TEXT, qty INTEGER);
"""
ROWS = {
    "city": [(1, "Berlin"), (2, "Paris"), (3, "Rome")],
    '"Customer"': [(1, "Ada", 1, 2), (2, "Bob", 2, None), (3, "Cy", 3, 3)],
    '"order"': [(1, 1, 10.0), (2, 1, 25.0), (3, 2, 7.5), (4, 3, 12.0)],
    "line": [(1, 1, "A", 1), (2, 1, "B", 2), (3, 2, "A", 5), (4, 3, "C", 1), (5, 4, "A", 2)],
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    path = tmp_path_factory.mktemp("expand") / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SHOP)
    for table, values in ROWS.items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' for _ in values[0])})", values)
    con.commit()
    con.close()
    engine = readonly_engine(f"sqlite:///{path}")
    graph = build_graph(reflect(engine, "shop"), engine)
    yield graph, engine
    engine.dispose()


def run(engine, sql: str) -> tuple[list[str], list[tuple]]:
    with engine.connect() as conn:
        result = conn.execute(sa.text(sql))
        return list(result.keys()), [tuple(r) for r in result.all()]


def test_inline_sql_reads_like_hand_written_sql_and_keeps_the_view_column_names(shop):
    graph, engine = shop
    view = synthesize_view(graph, ["order", "Customer"])
    sql = expand(
        f"SELECT customer_name, SUM(order_total) AS spent FROM {view.name} GROUP BY customer_name",
        view,
        "sqlite",
    )
    assert "WITH" not in sql and view.name not in sql
    assert "JOIN Customer AS customer" in sql and '"order".total' in sql  # case-insensitive SQLite: no quotes
    # role copies of city are not read, and a many-to-one LEFT JOIN never changes the rows: gone
    assert "city" not in sql
    columns, rows = run(engine, sql)
    assert columns == ["customer_name", "spent"]
    assert sorted(rows) == [("Ada", 35.0), ("Bob", 7.5), ("Cy", 12.0)]


def test_select_star_lists_every_view_column(shop):
    graph, engine = shop
    view = synthesize_view(graph, ["Customer", "city"])
    columns, rows = run(engine, expand(f"SELECT * FROM {view.name}", view, "sqlite"))
    assert columns == [c.name for c in view.columns]
    assert {"home_city_name", "work_city_name"} <= set(columns) and len(rows) == 3


QUERIES = [
    "SELECT COUNT(*) FROM {v}",
    "SELECT COUNT(DISTINCT customer_id) AS n FROM {v} WHERE line_qty > 1",
    "SELECT customer_name, SUM(line_qty) AS qty FROM {v} GROUP BY customer_name HAVING SUM(line_qty) > 2 ORDER BY qty DESC",
    "SELECT DISTINCT home_city_name FROM {v} ORDER BY home_city_name",
    "SELECT v.customer_name, v.work_city_name FROM {v} AS v WHERE v.work_city_name IS NULL",
    "SELECT line_sku, COUNT(*) AS n FROM {v} GROUP BY line_sku ORDER BY n DESC, line_sku LIMIT 2",
]


@pytest.mark.parametrize("query", QUERIES)
def test_inlined_sql_returns_what_the_whole_view_returns(shop, query):
    graph, engine = shop
    view = synthesize_view(graph, ["line", "order", "Customer", "city"])
    sql = query.format(v=view.name)
    inlined = expand(sql, view, "sqlite")
    whole = _with_cte(sqlglot.parse_one(sql, read="sqlite"), view, "sqlite").sql("sqlite")
    assert "WITH" not in inlined
    assert run(engine, inlined) == run(engine, whole)


def test_the_view_used_twice_becomes_one_pruned_cte(shop):
    graph, engine = shop
    view = synthesize_view(graph, ["order", "Customer"])
    sql = expand(
        f"SELECT customer_name FROM {view.name} WHERE order_total > (SELECT AVG(order_total) FROM {view.name})",
        view,
        "sqlite",
    )
    tree = sqlglot.parse_one(sql, read="sqlite")
    (cte,) = tree.args["with_"].expressions
    assert cte.alias == view.name
    assert [p.alias for p in cte.this.expressions] == ["order_total", "customer_name"]
    assert run(engine, sql)[1] == [("Ada",)]


def test_the_queries_own_ctes_are_kept(shop):
    graph, engine = shop
    view = synthesize_view(graph, ["order", "Customer"])
    sql = expand(
        f"WITH big AS (SELECT customer_name, order_total FROM {view.name} WHERE order_total > 11) "
        "SELECT customer_name FROM big ORDER BY order_total",
        view,
        "sqlite",
    )
    ctes = [c.alias for c in sqlglot.parse_one(sql, read="sqlite").args["with_"].expressions]
    assert ctes == [view.name, "big"]
    assert run(engine, sql)[1] == [("Cy",), ("Ada",)]


def test_sql_over_base_tables_or_a_single_table_passes_through(shop):
    graph, _ = shop
    view = synthesize_view(graph, ["order", "Customer"])
    assert expand('SELECT total FROM "order"', view, "sqlite") == 'SELECT\n  total\nFROM "order"'
    single = synthesize_view(graph, ["line"])
    assert (
        single.single_table and expand("SELECT sku FROM line", single, "sqlite") == "SELECT\n  sku\nFROM line"
    )


def test_mistakes_come_back_as_messages_the_reviser_can_use(shop):
    graph, _ = shop
    view = synthesize_view(graph, ["order", "Customer"])
    with pytest.raises(
        ExpandError, match=r"no such column: customer_email \(the recipe .* has: .*customer_name"
    ):
        expand(f"SELECT customer_email FROM {view.name}", view, "sqlite")
    with pytest.raises(ExpandError, match="unknown table 'x'"):
        expand(f"SELECT x.customer_name FROM {view.name} AS v", view, "sqlite")
    with pytest.raises(ExpandError, match="could not parse"):
        expand(f"SELECT FROM WHERE {view.name}", view, "sqlite")
    with pytest.raises(ExpandError, match="one SQL statement"):
        expand(f"SELECT 1 FROM {view.name}; SELECT 2", view, "sqlite")


def test_identifiers_are_quoted_only_where_the_dialect_needs_it(shop):
    graph, _ = shop
    view = synthesize_view(graph, ["order", "Customer"])
    query = f"SELECT customer_name, order_total FROM {view.name} LIMIT 5"
    postgres = expand(query, view, "postgres")
    assert '"Customer"."Name" AS customer_name' in postgres or 'customer."Name" AS customer_name' in postgres
    assert 'FROM "order"' in postgres
    mysql = expand(query, view, "mysql")
    assert "FROM `order`" in mysql and "customer.Name AS customer_name" in mysql
    tsql = expand(query, view, "tsql")
    assert "TOP 5" in tsql and "[order]" in tsql


# ---------------------------------------------------------------------------------------------
# real databases


def _admin(url_env: str) -> tuple[sa.Engine, str]:
    """A writable engine for setting up, and a suffix so parallel runs never collide."""
    return admin_engine(url_env), uuid.uuid4().hex[:8]


@pytest.mark.postgres
def test_expanded_sql_runs_on_postgresql_with_mixed_case_and_reserved_names():
    admin, suffix = _admin("ASKBASE_TEST_POSTGRES_URL")
    schema = f"askbase_joins_{suffix}"
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
            conn.execute(sa.text(f'CREATE TABLE "{schema}"."Customer" (id INT PRIMARY KEY, "Name" TEXT)'))
            conn.execute(
                sa.text(
                    f'CREATE TABLE "{schema}"."order" (id INT PRIMARY KEY, '
                    f'customer_id INT REFERENCES "{schema}"."Customer"(id), total NUMERIC)'
                )
            )
            conn.execute(sa.text(f"""INSERT INTO "{schema}"."Customer" VALUES (1, 'Ada'), (2, 'Bob')"""))
            conn.execute(sa.text(f'INSERT INTO "{schema}"."order" VALUES (1, 1, 10), (2, 1, 5), (3, 2, 7)'))
        engine = readonly_engine(os.environ["ASKBASE_TEST_POSTGRES_URL"])
        graph = build_graph(reflect(engine, "pg", schema=schema), engine)
        view = synthesize_view(graph, ["order", "Customer"])
        sql = expand(
            f"SELECT customer_name, SUM(order_total) AS spent FROM {view.name} GROUP BY customer_name ORDER BY spent",
            view,
            "postgres",
        )
        assert f'FROM {schema}."order"' in sql and 'customer."Name" AS customer_name' in sql
        assert run(engine, sql)[1] == [("Bob", 7), ("Ada", 15)]
        engine.dispose()
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@pytest.mark.mysql
def test_expanded_sql_runs_on_mysql_with_reserved_names():
    admin, suffix = _admin("ASKBASE_TEST_MYSQL_URL")
    usage, client = f"usage_{suffix}", f"Client_{suffix}"
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f"CREATE TABLE `{client}` (id INT PRIMARY KEY, `Name` VARCHAR(20))"))
            conn.execute(
                sa.text(
                    f"CREATE TABLE `{usage}` (id INT PRIMARY KEY, client_id INT, `rank` INT, "
                    f"FOREIGN KEY (client_id) REFERENCES `{client}`(id))"
                )
            )
            conn.execute(sa.text(f"INSERT INTO `{client}` VALUES (1, 'Ada'), (2, 'Bob')"))
            conn.execute(sa.text(f"INSERT INTO `{usage}` VALUES (1, 1, 3), (2, 2, 1), (3, 1, 2)"))
        engine = readonly_engine(os.environ["ASKBASE_TEST_MYSQL_URL"])
        graph = build_graph(reflect(engine, "my"), engine)
        view = synthesize_view(graph, [usage, client])
        rank = next(c.name for c in view.columns if c.column == "rank")
        name = next(c.name for c in view.columns if c.column == "Name")
        sql = expand(
            f"SELECT {name}, MIN({rank}) AS best FROM {view.name} GROUP BY {name} ORDER BY best",
            view,
            "mysql",
        )
        assert "`rank`" in sql
        assert run(engine, sql)[1] == [("Bob", 1), ("Ada", 2)]
        engine.dispose()
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS `{usage}`"))
            conn.execute(sa.text(f"DROP TABLE IF EXISTS `{client}`"))
        admin.dispose()


def test_expanded_sql_parses_back_to_the_views_joins(shop):
    graph, _ = shop
    view = synthesize_view(graph, ["line", "order", "Customer"])
    sql = expand(f"SELECT customer_name, line_sku FROM {view.name}", view, "sqlite")
    select = sqlglot.parse_one(sql, read="sqlite")
    assert [j.this.name for j in select.args["joins"]] == [s.table for s in view.steps]
    assert all(isinstance(j.args["on"], exp.EQ) for j in select.args["joins"])
