"""The SQL guard lets through exactly the read-only, bounded, permitted queries — nothing else.

Corpora live in tests/corpus/ (written by hand); the benchmark data of ../shared/bench is read at test
time and the tests that need it skip when it is absent.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from core.guard import DANGEROUS_FUNCTIONS, GuardPolicy, UnknownDialectError, Verdict, check
from tests.paths import CORPUS, ROOT

# ../shared/bench from the main checkout, ../../shared/bench from a worktree under /work/wt
BENCH = next(
    (d / "shared" / "bench" for d in ROOT.parents if (d / "shared" / "bench").is_dir()),
    ROOT.parent / "shared" / "bench",
)
SPIDER_GOLD = BENCH / "spider-train" / "train_gold.sql"
SPIDER_DBS = BENCH / "spider-train" / "database"
DEFOG_QUESTIONS = BENCH / "defog" / "questions.json"


def spider_gold() -> list[tuple[str, str]]:
    """Spider's distinct (gold SQL, database) pairs: the file gives most queries twice, once per
    wording of their question, and a query is checked the same whichever question it answers."""
    pairs = (line.split("\t", 1) for line in SPIDER_GOLD.read_text(encoding="utf-8").splitlines())
    return list(dict.fromkeys((sql, db_id) for sql, db_id in pairs))


def read_corpus(name: str) -> list[tuple[str, str]]:
    """(dialect, sql) pairs of a corpus file; '-- ' lines and blank lines are notes."""
    pairs = []
    for line in (CORPUS / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("-- "):
            continue
        dialect, sql = line.split("\t", 1)
        pairs.append((dialect, sql))
    return pairs


ATTACKS = read_corpus("attacks.sql")
LEGIT = read_corpus("legit.sql")

# The policy both corpora are checked under (attacks.sql says so in its header): the column rules
# must deny the attacks that reach members.tax_id and let every legitimate query through.
CORPUS_COLUMNS = {"members": ("id", "name", "email", "tax_id"), "orders": ("id", "member_id", "total")}
CORPUS_POLICY = GuardPolicy(
    deny_tables=frozenset({"payroll"}),
    deny_columns=frozenset({"members.tax_id"}),
    table_columns=CORPUS_COLUMNS,
)
CORPUS_CLI_POLICY = [
    "--deny-table",
    "payroll",
    "--deny-column",
    "members.tax_id",
    *[arg for table, cols in CORPUS_COLUMNS.items() for arg in ("--columns", f"{table}={','.join(cols)}")],
]


def obfuscated(sql: str) -> list[str]:
    """Variants an attacker would try: flipped case, a leading comment, both."""
    return [sql.swapcase(), f"/* harmless note */ {sql}", f"/* NOTE */\t{sql.swapcase()}"]


# Invisible and control characters slipped between tokens; the database would read some of them as
# whitespace, some as part of a name, and the guard must not guess.
CONTROL_ATTACKS = [
    (dialect, template.format(char))
    for dialect in ("sqlite", "postgres", "mysql")
    for char in ("\x00", "\x0b", "\x0c", "\x1b", "\u200b", "\u200e", "\u202e", "\ufeff", "\u00a0", "\u2028")
    for template in ("SELECT 1{};DROP TABLE users", "SELECT name FROM users{}UNION SELECT 1")
]

ALL_ATTACKS = ATTACKS + [(d, variant) for d, sql in ATTACKS for variant in obfuscated(sql)] + CONTROL_ATTACKS


# --------------------------------------------------------------------------------------------
# Attacks are denied, legitimate queries allowed
# --------------------------------------------------------------------------------------------


# The warehouse dialects (core/warehouse/): each with its own attacks in the corpora.
WAREHOUSE_DIALECTS = ["duckdb", "snowflake", "bigquery", "databricks", "trino", "redshift"]
ALL_DIALECTS = ["sqlite", "postgres", "mysql", *WAREHOUSE_DIALECTS]


def test_attack_corpus_is_large_and_covers_every_dialect() -> None:
    by_dialect = defaultdict(int)
    for dialect, _ in ATTACKS:
        by_dialect[dialect] += 1
    assert len(ATTACKS) >= 200
    assert all(by_dialect[d] >= 50 for d in ("sqlite", "postgres", "mysql")), dict(by_dialect)
    assert all(by_dialect[d] >= 30 for d in WAREHOUSE_DIALECTS), dict(by_dialect)
    legit = {d for d, _ in LEGIT}
    assert set(WAREHOUSE_DIALECTS) <= legit


@pytest.mark.parametrize(("dialect", "sql"), ALL_ATTACKS)
def test_attack_is_denied_with_a_reason(dialect: str, sql: str) -> None:
    verdict = check(sql, dialect, CORPUS_POLICY)
    assert not verdict.allowed, f"{dialect}: {sql!r} was allowed as {verdict.sql!r}"
    assert verdict.sql == ""
    assert verdict.reason and "\n" not in verdict.reason


@pytest.mark.parametrize("dialect", ALL_DIALECTS, ids=lambda d: f"{d}-functions")
def test_every_known_dangerous_function_is_denied_however_it_is_called(dialect: str) -> None:
    quote = "`" if dialect in ("mysql", "bigquery", "databricks") else '"'
    allowed = []
    for name in DANGEROUS_FUNCTIONS:
        for sql in (
            f"SELECT {name}()",
            f"SELECT {name.upper()}(1, 'x')",
            f"SELECT {quote}{name}{quote}(1)",
            f"SELECT a FROM t WHERE b = (SELECT {name}(1)) ORDER BY a",
            f"SELECT * FROM {name}('x') AS f",
        ):
            if check(sql, dialect).allowed:
                allowed.append(sql)
    assert not allowed


@pytest.mark.parametrize(("dialect", "sql"), LEGIT)
def test_legitimate_query_is_allowed(dialect: str, sql: str) -> None:
    for policy in (GuardPolicy(), CORPUS_POLICY):
        verdict = check(sql, dialect, policy)
        assert verdict.allowed, f"{dialect}: {sql!r} denied: {verdict.reason}"
        assert verdict.sql


def run_cli(dialect: str, lines: list[str], *extra: str) -> subprocess.CompletedProcess[bytes]:
    stdin = "".join(line + "\n" for line in lines).encode("utf-8")
    return subprocess.run(
        [sys.executable, "-m", "core.guard", "check", "--dialect", dialect, *extra],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


# ids are not bare dialect names: conftest skips tests keyworded "postgres"/"mysql" without a server.
@pytest.mark.parametrize("dialect", ALL_DIALECTS, ids=lambda d: f"{d}-corpus")
def test_cli_denies_every_attack_and_allows_every_legit_query(dialect: str) -> None:
    attacks = [sql for d, sql in ALL_ATTACKS if d == dialect and "\n" not in sql and "\r" not in sql]
    legit = [sql for d, sql in LEGIT if d == dialect]
    result = run_cli(dialect, attacks + legit, *CORPUS_CLI_POLICY)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode("utf-8").splitlines()
    assert len(out) == len(attacks) + len(legit)
    allowed_attacks = [
        sql for sql, line in zip(attacks, out[: len(attacks)], strict=True) if not line.startswith("DENY ")
    ]
    denied_legit = [
        (sql, line) for sql, line in zip(legit, out[len(attacks) :], strict=True) if line != "ALLOW"
    ]
    assert not allowed_attacks
    assert not denied_legit


@pytest.mark.skipif(not SPIDER_GOLD.exists(), reason=f"needs ../shared/bench: {SPIDER_GOLD} is missing")
def test_every_spider_gold_query_is_allowed_in_sqlite() -> None:
    queries = spider_gold()
    assert len(queries) > 4500
    denied = []
    for sql, _ in queries:
        verdict = check(sql, "sqlite")
        if not verdict.allowed:
            denied.append((sql, verdict.reason))
    assert not denied, denied[:10]


@pytest.mark.skipif(not SPIDER_GOLD.exists(), reason=f"needs ../shared/bench: {SPIDER_GOLD} is missing")
def test_guarded_spider_queries_return_the_same_rows_as_the_originals() -> None:
    """What runs is regenerated from the checked tree; it must mean what the question's SQL meant."""
    connections: dict[str, sqlite3.Connection] = {}
    differences = []
    for sql, db_id in spider_gold():
        path = SPIDER_DBS / db_id / f"{db_id}.sqlite"
        if db_id not in connections:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            connection.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
            connections[db_id] = connection
        connection = connections[db_id]
        try:
            expected = connection.execute(sql).fetchall()
        except sqlite3.Error:
            continue  # a few gold queries do not run at all
        guarded = check(sql, "sqlite", GuardPolicy(limit=None)).sql
        try:
            actual = connection.execute(guarded).fetchall()
        except sqlite3.Error as error:
            differences.append((sql, guarded, str(error)))
            continue
        if actual != expected and sorted(map(repr, actual)) != sorted(map(repr, expected)):
            differences.append((sql, guarded, "different rows"))
    for connection in connections.values():
        connection.close()
    assert not differences, differences[:5]


@pytest.mark.skipif(
    not DEFOG_QUESTIONS.exists(), reason=f"needs ../shared/bench: {DEFOG_QUESTIONS} is missing"
)
@pytest.mark.parametrize("dialect", WAREHOUSE_DIALECTS)
def test_every_defog_gold_query_transpiled_to_a_warehouse_dialect_is_allowed(dialect: str) -> None:
    """The defog gold queries (PostgreSQL), read as the guard reads them and written in each
    warehouse's dialect by sqlglot, are legitimate there too."""
    from core.guard.reading import parse_one

    denied, count = [], 0
    for question in json.loads(DEFOG_QUESTIONS.read_text(encoding="utf-8")):
        for sql in [question["gold_sql"], *(question.get("gold_alternatives") or [])]:
            transpiled = parse_one(sql, "postgres").sql(dialect=dialect)
            count += 1
            verdict = check(transpiled, dialect)
            if not verdict.allowed:
                denied.append((transpiled, verdict.reason))
    assert count > 500
    assert not denied, denied[:5]


@pytest.mark.skipif(
    not DEFOG_QUESTIONS.exists(), reason=f"needs ../shared/bench: {DEFOG_QUESTIONS} is missing"
)
def test_every_defog_gold_query_is_allowed_in_postgres() -> None:
    denied = []
    for question in json.loads(DEFOG_QUESTIONS.read_text(encoding="utf-8")):
        for sql in [question["gold_sql"], *(question.get("gold_alternatives") or [])]:
            verdict = check(sql, "postgres")
            if not verdict.allowed:
                denied.append((sql, verdict.reason))
    assert not denied, denied[:5]


# --------------------------------------------------------------------------------------------
# Reading the text: statements, strings, comments, quoting
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("sqlite", "SELECT name FROM users WHERE bio = 'a; DROP TABLE users'"),
        ("mysql", 'SELECT name FROM users WHERE bio = "x;y"'),
        ("postgres", "SELECT $body$ ; DELETE FROM users $body$ AS text"),
        ("postgres", "SELECT E'it\\'s; fine' AS text"),
        ("sqlite", 'SELECT "DELETE", "drop" FROM "update"'),
        ("mysql", "SELECT `delete`, `insert` FROM `update`"),
        ("postgres", "SELECT 1;"),
        ("postgres", "SELECT 1; -- trailing note"),
        ("mysql", "SELECT 'it\\'s' AS text"),
        ("sqlite", "SELECT 1 /* a note */ FROM t"),
    ],
)
def test_semicolons_and_command_words_inside_strings_and_names_are_data(dialect: str, sql: str) -> None:
    assert check(sql, dialect).allowed


@pytest.mark.parametrize("sql", ["", "   ", ";", " ; ; ", "-- just a comment", "/* nothing */"])
def test_empty_input_is_denied(sql: str) -> None:
    verdict = check(sql, "sqlite")
    assert not verdict.allowed
    assert verdict.reason == "is empty"


def test_quoting_that_depends_on_server_mode_is_judged_both_ways() -> None:
    # MySQL by default reads \' as a quote inside the string; with NO_BACKSLASH_ESCAPES the string
    # ends at the backslash and SLEEP runs.
    assert not check("SELECT 'x\\' OR SLEEP(5) -- '", "mysql").allowed
    # Harmless in both readings (the other reading is not even SQL): allowed.
    assert check("SELECT 'O\\'Brien' AS name", "mysql").allowed
    # PostgreSQL with standard_conforming_strings=off reads the backslash as an escape.
    assert not check("SELECT 'a\\'', pg_sleep(10) --'", "postgres").allowed
    assert check("SELECT 'C:\\temp\\' AS path", "postgres").allowed


def test_what_runs_is_regenerated_without_comments() -> None:
    verdict = check("SELECT name /* what we need */ FROM users -- sorted later", "sqlite")
    assert verdict.allowed
    assert "/*" not in verdict.sql and "--" not in verdict.sql
    assert verdict.sql == "SELECT name FROM users LIMIT 1000"


def test_pathological_input_is_denied_not_crashed() -> None:
    deep = "SELECT " + "(" * 3000 + "1" + ")" * 3000
    assert not check(deep, "postgres").allowed
    huge = "SELECT " + ", ".join(["1"] * 60_000)
    verdict = check(huge, "sqlite")
    assert not verdict.allowed and "longer than" in verdict.reason


def test_unknown_dialect_is_a_clear_error_and_aliases_work() -> None:
    with pytest.raises(UnknownDialectError, match="oracle"):
        check("SELECT 1", "oracle")
    assert check("SELECT 1", "postgresql").allowed
    assert check("SELECT 1", "MariaDB").allowed


# --------------------------------------------------------------------------------------------
# LIMIT
# --------------------------------------------------------------------------------------------


@pytest.fixture
def numbers() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE n (i INTEGER)")
    connection.executemany("INSERT INTO n VALUES (?)", [(i,) for i in range(50)])
    return connection


def rows(connection: sqlite3.Connection, sql: str, limit: int | None) -> list[tuple]:
    verdict = check(sql, "sqlite", GuardPolicy(limit=limit))
    assert verdict.allowed, verdict.reason
    return connection.execute(verdict.sql).fetchall()


def test_limit_is_added_when_missing(numbers: sqlite3.Connection) -> None:
    assert len(rows(numbers, "SELECT i FROM n", 10)) == 10
    assert len(rows(numbers, "SELECT i FROM n UNION ALL SELECT i FROM n", 10)) == 10
    assert len(rows(numbers, "WITH m AS (SELECT i FROM n) SELECT i FROM m ORDER BY i", 7)) == 7


def test_larger_limit_is_lowered_and_smaller_one_kept(numbers: sqlite3.Connection) -> None:
    assert len(rows(numbers, "SELECT i FROM n LIMIT 40", 10)) == 10
    assert len(rows(numbers, "SELECT i FROM n LIMIT 3", 10)) == 3
    assert rows(numbers, "SELECT i FROM n ORDER BY i LIMIT 3 OFFSET 5", 10) == [(5,), (6,), (7,)]
    assert len(rows(numbers, "SELECT i FROM n LIMIT -1", 10)) == 10  # SQLite: -1 means no limit


def test_limit_of_inner_queries_is_left_alone(numbers: sqlite3.Connection) -> None:
    sql = "SELECT count(*) FROM (SELECT i FROM n LIMIT 30)"
    assert rows(numbers, sql, 10) == [(30,)]


def test_limit_that_is_an_expression_keeps_its_meaning_and_is_capped(numbers: sqlite3.Connection) -> None:
    assert len(rows(numbers, "SELECT i FROM n LIMIT (SELECT count(*) FROM n)", 10)) == 10
    assert len(rows(numbers, "SELECT i FROM n LIMIT (SELECT 4)", 10)) == 4


def test_limit_arithmetic_with_modulo_is_read_as_sql_means_it(numbers: sqlite3.Connection) -> None:
    median = (
        "SELECT avg(i) FROM (SELECT i FROM n ORDER BY i "
        "LIMIT 2 - (SELECT count(*) FROM n) % 2 OFFSET (SELECT (count(*) - 1) / 2 FROM n))"
    )
    assert rows(numbers, median, 10) == [(24.5,)]


def test_no_limit_policy_changes_nothing(numbers: sqlite3.Connection) -> None:
    assert len(rows(numbers, "SELECT i FROM n", None)) == 50


@pytest.mark.parametrize(
    ("dialect", "sql", "expected"),
    [
        ("postgres", "SELECT a FROM t LIMIT ALL", "SELECT a FROM t LIMIT 100"),
        (
            "postgres",
            "SELECT a FROM t FETCH FIRST 500 ROWS ONLY",
            "SELECT a FROM t FETCH FIRST 100 ROWS ONLY",
        ),
        ("postgres", "SELECT a FROM t FETCH FIRST 5 ROWS ONLY", "SELECT a FROM t FETCH FIRST 5 ROWS ONLY"),
        ("mysql", "SELECT a FROM t LIMIT 20, 500", "SELECT a FROM t LIMIT 100 OFFSET 20"),
        ("postgres", "(SELECT a FROM t) LIMIT 3", "(SELECT a FROM t) LIMIT 3"),
        (
            "postgres",
            "SELECT a FROM t UNION SELECT a FROM u",
            "SELECT a FROM t UNION SELECT a FROM u LIMIT 100",
        ),
    ],
)
def test_limit_in_each_dialect(dialect: str, sql: str, expected: str) -> None:
    assert check(sql, dialect, GuardPolicy(limit=100)).sql == expected


# --------------------------------------------------------------------------------------------
# Access policy
# --------------------------------------------------------------------------------------------

HR = GuardPolicy(
    deny_tables=frozenset({"salaries", "hr.reviews"}),
    deny_columns=frozenset({"employees.salary", "employees.ssn"}),
)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM salaries",
        "SELECT s.amount FROM employees e JOIN salaries s ON s.employee_id = e.id",
        "SELECT name FROM employees WHERE id IN (SELECT employee_id FROM salaries)",
        "WITH s AS (SELECT * FROM salaries) SELECT count(*) FROM s",
        "SELECT * FROM public.salaries",
        "SELECT * FROM hr.reviews",
        # a CTE named like the table hides it only where it is visible
        "SELECT * FROM salaries, (WITH salaries AS (SELECT 1 AS x) SELECT x FROM salaries) AS y",
        "WITH a AS (SELECT * FROM salaries), salaries AS (SELECT 1 AS x) SELECT * FROM a",
    ],
)
def test_denied_tables_are_denied_wherever_they_appear(sql: str) -> None:
    verdict = check(sql, "postgres", HR)
    assert not verdict.allowed
    assert "salaries" in verdict.reason or "reviews" in verdict.reason


def test_a_cte_named_like_a_denied_table_is_not_that_table() -> None:
    verdict = check("WITH salaries AS (SELECT 1 AS x) SELECT x FROM salaries", "postgres", HR)
    assert verdict.allowed
    assert verdict.tables == ()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name, salary FROM employees",
        "SELECT e.name FROM employees e WHERE e.salary > 100000",
        "SELECT name FROM employees ORDER BY salary DESC",
        "SELECT avg(salary) FROM employees",
        "SELECT * FROM employees",
        "SELECT e.* FROM employees AS e",
        "SELECT e FROM employees e",  # a whole row carries every column
        "SELECT row_to_json(e) FROM employees e",
        "SELECT x.salary FROM (SELECT * FROM employees) AS x",
        "SELECT x.s FROM (SELECT salary AS s FROM employees) AS x",
        "SELECT d.name FROM departments d WHERE EXISTS (SELECT 1 FROM employees e WHERE salary > 5)",
        "SELECT name FROM employees JOIN payroll USING (salary)",
        "SELECT name FROM employees NATURAL JOIN payroll",
        "SELECT q.ssn FROM employees e",  # unknown qualifier: could be anything
    ],
)
def test_denied_columns_are_denied_however_they_are_reached(sql: str) -> None:
    verdict = check(sql, "postgres", HR)
    assert not verdict.allowed
    assert "employees" in verdict.reason


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name, dept_id FROM employees",
        "SELECT count(*) FROM employees",
        "SELECT d.* FROM employees e JOIN departments d ON d.id = e.dept_id",
        "SELECT j.salary FROM jobs j JOIN employees e ON e.job_id = j.id",
        "SELECT salary FROM jobs",
    ],
)
def test_other_columns_and_other_tables_stay_available(sql: str) -> None:
    assert check(sql, "postgres", HR).allowed


def test_reasons_name_the_rule_but_never_the_data() -> None:
    verdict = check("SELECT name FROM employees WHERE salary = 123456", "postgres", HR)
    assert not verdict.allowed
    assert "employees.salary" in verdict.reason
    assert "123456" not in verdict.reason
    star = check("SELECT * FROM employees", "postgres", HR)
    assert "salary" in star.reason and "name the columns" in star.reason


def test_allowed_tables_lets_only_those_through() -> None:
    policy = GuardPolicy(allowed_tables=frozenset({"orders", "customers"}))
    assert check("SELECT * FROM orders JOIN customers USING (customer_id)", "sqlite", policy).allowed
    assert check("WITH o AS (SELECT * FROM orders) SELECT * FROM o", "sqlite", policy).allowed
    assert check("SELECT value FROM json_each('[1, 2]')", "sqlite", policy).allowed
    verdict = check("SELECT * FROM orders JOIN refunds USING (order_id)", "sqlite", policy)
    assert not verdict.allowed and "refunds" in verdict.reason


def test_verdict_lists_the_tables_read() -> None:
    verdict = check(
        "WITH big AS (SELECT * FROM orders WHERE total > 10) "
        "SELECT c.name FROM big JOIN customers c ON c.id = big.customer_id, json_each('[1]')",
        "sqlite",
    )
    assert verdict == Verdict(True, verdict.sql, "", ("orders", "customers"))


# --------------------------------------------------------------------------------------------
# Column rules on resolved lineage: renames, aliases that differ only in case, whole rows
# --------------------------------------------------------------------------------------------

SHOP_COLUMNS = {"customers": ("id", "name", "email", "tax_id"), "orders": ("id", "customer_id", "total")}
SHOP = GuardPolicy(
    deny_tables=frozenset({"payroll"}),
    deny_columns=frozenset({"customers.tax_id"}),
    table_columns=SHOP_COLUMNS,
)
SHOP_WITHOUT_SCHEMA = dataclasses.replace(SHOP, table_columns={})

# Each reaches customers.tax_id (or payroll's row type) in its dialect.
COLUMN_LEAKS = [
    # a column list renames the table's columns by position: t is tax_id
    ("postgres", "SELECT x.t FROM customers AS x(a, b, c, t)"),
    ("postgres", "SELECT t FROM customers x(a, b, c, t)"),
    (
        "postgres",
        "SELECT o.id FROM orders o JOIN customers AS x(a, b, c, t) ON x.a = o.customer_id WHERE x.t > '1'",
    ),
    ("postgres", "SELECT a FROM orders JOIN customers AS x(a, b, c, t) USING (t)"),
    (
        "postgres",
        "SELECT (SELECT x.t FROM customers AS x(a, b, c, t) WHERE x.a = o.customer_id) FROM orders o",
    ),
    ("mysql", "SELECT x.t FROM customers AS x(a, b, c, t)"),
    ("sqlite", "SELECT x.t FROM customers AS x(a, b, c, t)"),
    # aliases that differ only in case are different names in PostgreSQL ("C" vs c) and MariaDB
    ("postgres", 'SELECT c.tax_id FROM customers c JOIN orders "C" ON "C".customer_id = c.id'),
    ("postgres", 'SELECT "C".tax_id FROM customers "C", orders c WHERE c.customer_id = "C".id'),
    ("postgres", 'SELECT "c".tax_id FROM customers c, orders "C"'),
    ("postgres", 'SELECT "X".* FROM customers "X" JOIN orders x ON x.customer_id = "X".id'),
    (
        "postgres",
        'SELECT (SELECT c.tax_id FROM orders "C" WHERE "C".customer_id = c.id LIMIT 1) FROM customers c',
    ),
    ("mysql", "SELECT c.tax_id FROM customers c JOIN orders C ON C.customer_id = c.id"),
    ("mysql", "SELECT c.tax_id FROM orders C JOIN customers c ON C.customer_id = c.id"),
    ("mysql", "SELECT C.tax_id FROM customers C, orders c WHERE c.customer_id = C.id"),
    # SQLite reads c and C as one name and takes the table that has the column
    ("sqlite", "SELECT c.tax_id FROM customers c, orders C WHERE C.customer_id = c.id"),
    ("sqlite", "SELECT C.tax_id FROM orders c JOIN customers C ON c.customer_id = C.id"),
    # whole rows: a row value, PostgreSQL's function notation (c.f is f(c)), row types
    ("postgres", "SELECT c.row_to_json FROM customers c"),
    ("postgres", "SELECT c.to_jsonb FROM customers AS c"),
    ("postgres", "SELECT c.concat FROM customers c"),
    ("postgres", "SELECT c.json_agg FROM customers c"),
    ("postgres", "SELECT (c).tax_id FROM customers c"),
    ("postgres", "SELECT (c).* FROM customers c"),
    ("postgres", 'SELECT row_to_json("X") FROM customers "X"'),
    ("postgres", "SELECT to_jsonb(x) FROM customers AS x(a, b, c, t)"),
    ("postgres", "SELECT jsonb_populate_record(NULL::payroll, '{}')"),
    ("postgres", "SELECT json_populate_recordset(NULL::public.payroll, '[]')"),
    ("postgres", "SELECT (NULL::customers).tax_id"),
    ("postgres", "SELECT CAST('(1,a,b,c)' AS customers)"),
    ("postgres", "SELECT '{}'::payroll[]"),
]


@pytest.mark.parametrize(("dialect", "sql"), COLUMN_LEAKS)
@pytest.mark.parametrize("policy", [SHOP, SHOP_WITHOUT_SCHEMA], ids=["schema", "no-schema"])
def test_a_denied_column_is_denied_through_renames_case_and_whole_rows(
    dialect: str, sql: str, policy: GuardPolicy
) -> None:
    verdict = check(sql, dialect, policy)
    assert not verdict.allowed, f"{dialect}: {sql!r} was allowed"
    assert "customers" in verdict.reason or "payroll" in verdict.reason


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "SELECT x.b, x.a FROM customers AS x(a, b)"),  # name, id
        ("postgres", "SELECT x.email FROM customers AS x(a, b)"),  # beyond the list: its own name
        ("postgres", 'SELECT c.name, "C".total FROM customers c JOIN orders "C" ON "C".customer_id = c.id'),
        (
            "postgres",
            "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE total > 5)",
        ),
        ("postgres", "SELECT row_to_json(o), o.to_jsonb FROM orders o"),
        ("postgres", "SELECT jsonb_populate_record(NULL::orders, '{}')"),
        ("postgres", "WITH w(a, b) AS (SELECT id, name FROM customers) SELECT b FROM w"),
        ("mysql", "SELECT C.total, c.name FROM orders C JOIN customers c ON C.customer_id = c.id"),
        ("sqlite", "SELECT t.total FROM (SELECT customer_id, total FROM orders) AS t"),
    ],
)
def test_resolved_lineage_lets_the_other_columns_through(dialect: str, sql: str) -> None:
    verdict = check(sql, dialect, SHOP)
    assert verdict.allowed, verdict.reason


def test_without_the_schema_a_renamed_column_of_a_guarded_table_is_denied() -> None:
    """Which column `b` is depends on the table's column order: unknown, so denied (fail closed)."""
    verdict = check("SELECT x.b FROM customers AS x(a, b)", "postgres", SHOP_WITHOUT_SCHEMA)
    assert not verdict.allowed and "customers" in verdict.reason
    assert check("SELECT x.b FROM orders AS x(a, b)", "postgres", SHOP_WITHOUT_SCHEMA).allowed


def test_lineage_reasons_say_which_column_a_rename_reaches() -> None:
    verdict = check("SELECT x.t FROM customers AS x(a, b, c, t)", "postgres", SHOP)
    assert "customers.tax_id" in verdict.reason and "x.t" in verdict.reason
    notation = check("SELECT c.row_to_json FROM customers c", "postgres", SHOP)
    assert "whole rows of customers" in notation.reason


def _spider_reads() -> list[tuple[str, dict[str, tuple[str, ...]], set[tuple[str, str]]]]:
    """(gold SQL, its database's columns, the (table, column) pairs SQLite reads for it).

    SQLite's authorizer is the oracle: it reports every column the prepared statement reads.
    """
    out = []
    connections: dict[str, tuple[sqlite3.Connection, dict[str, tuple[str, ...]]]] = {}
    reads: set[tuple[str, str]] = set()

    def authorize(action: int, table: str | None, column: str | None, _db: str | None, _t: str | None) -> int:
        if action == sqlite3.SQLITE_READ and table and column:
            reads.add((table.lower(), column.lower()))
        return sqlite3.SQLITE_OK

    for sql, db_id in spider_gold():
        if db_id not in connections:
            path = SPIDER_DBS / db_id / f"{db_id}.sqlite"
            # no statement cache: a repeated query must be prepared (and authorized) again
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, cached_statements=0)
            names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            schema = {
                name.lower(): tuple(r[1].lower() for r in connection.execute(f'PRAGMA table_info("{name}")'))
                for name in names
            }
            connection.set_authorizer(authorize)
            connections[db_id] = (connection, schema)
        connection, schema = connections[db_id]
        reads.clear()
        try:
            connection.execute(f"EXPLAIN {sql}")  # prepared, not run: the authorizer sees every read
        except sqlite3.Error:
            continue  # a few gold queries do not run at all
        out.append((sql, schema, set(reads)))
    for connection, _ in connections.values():
        connection.close()
    return out


@pytest.mark.skipif(not SPIDER_DBS.exists(), reason="Spider databases not available")
def test_spider_column_rules_match_what_sqlite_reads() -> None:
    """Denying every column a gold query does not read leaves it allowed (no false positive);
    denying one it reads denies it (no false negative). 4,600 distinct real queries, SQLite as the oracle."""
    false_positives, false_negatives = [], []
    queries = _spider_reads()
    for number, (sql, schema, reads) in enumerate(queries):
        tables = {t for t, _ in reads} | {
            t for t in schema if re.search(rf"\b{re.escape(t)}\b", sql, re.IGNORECASE)
        }
        unread = {f"{t}.{c}" for t in tables for c in schema.get(t, ()) if (t, c) not in reads}
        verdict = check(sql, "sqlite", GuardPolicy(deny_columns=frozenset(unread), table_columns=schema))
        if not verdict.allowed:
            false_positives.append((sql, verdict.reason))
        if reads:
            table, column = sorted(reads)[number % len(reads)]
            denied = GuardPolicy(deny_columns=frozenset({f"{table}.{column}"}), table_columns=schema)
            if check(sql, "sqlite", denied).allowed:
                false_negatives.append((sql, f"{table}.{column}"))
    print(
        f"Spider column rules: {len(queries)} gold queries, {len(false_positives)} false positives, "
        f"{len(false_negatives)} false negatives"
    )
    assert not false_positives, (len(false_positives), false_positives[:10])
    assert not false_negatives, (len(false_negatives), false_negatives[:10])


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def test_cli_prints_one_line_per_input_line_including_blank_ones() -> None:
    lines = ["SELECT 1", "", "DELETE FROM t;", "SELECT 'a;b' FROM t;\r", "   ", "SELECT 2 -- note"]
    result = run_cli("postgres", lines)
    assert result.returncode == 0
    out = result.stdout.decode("utf-8").splitlines()
    assert out == [
        "ALLOW",
        "DENY is empty",
        "DENY writes data (DELETE)",
        "ALLOW",
        "DENY is empty",
        "ALLOW",
    ]


def test_cli_can_show_the_sql_to_run_and_apply_a_policy() -> None:
    result = run_cli(
        "mysql",
        ["SELECT a FROM t LIMIT 5000", "SELECT * FROM secrets"],
        "--show-sql",
        "--limit",
        "50",
        "--deny-table",
        "secrets",
    )
    out = result.stdout.decode("utf-8").splitlines()
    assert out[0] == "ALLOW SELECT a FROM t LIMIT 50"
    assert out[1].startswith("DENY reads table secrets")


def test_cli_rejects_an_unknown_dialect_with_usage_exit_code() -> None:
    result = run_cli("oracle", ["SELECT 1"])
    assert result.returncode == 2
    assert b"unknown SQL dialect 'oracle'" in result.stderr
    assert result.stdout == b""


def test_bench_prints_figures_and_a_json_line(tmp_path: Path) -> None:
    source = tmp_path / "statements.sql"
    source.write_text("SELECT 1\tdb\nSELECT a FROM t WHERE b > 2\tdb\nDELETE FROM t\tdb\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "core.guard",
            "bench",
            "--dialect",
            "sqlite",
            "--file",
            str(source),
            "--count",
            "30",
            "--json",
        ],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.decode("utf-8").splitlines()[-1])
    assert figures["statements"] == 30
    assert figures["allowed"] == 20 and figures["denied"] == 10
    assert figures["statements_per_s"] > 0 and figures["baseline_statements_per_s"] > 0
