"""Masked and denied columns cannot be read around: not through filters, joins, sorts, groups,
functions, set operations, views, cached answers or verified queries.

The red team's two bypasses (a masked e-mail rebuilt one character at a time from a filter, and
smuggled into the part the mask keeps) and the variants below go through the engine's one door
for SQL (`Askbase.rerun`: access → guard → execute → audit) on real SQLite, PostgreSQL and
MariaDB; each must be refused with a reason that names the column, and no address may reach the
answer. What is still allowed — showing the column (masked) and counting it — is checked on the
same databases, so a guard that refused everything would fail too.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import sqlalchemy as sa

from core.access import Principal
from core.answer_cache import CachedAnswer, key_for
from core.askbase import Askbase
from core.demo import CATALOG_PATH
from core.guard import GuardPolicy, check
from core.settings import DatabaseSettings, load_settings
from core.state import answer_cache as cache_store
from core.state import verified as verified_store
from tests.servers import server_url

PG = "ASKBASE_TEST_POSTGRES_URL"
MY = "ASKBASE_TEST_MYSQL_URL"
ALICE = Principal.of(user="U1", channel="C1")
EMAILS = ("alice@cust1.acme.com", "bob@cust2.acme.com", "carol@cust3.example.org")

# The red team's two bypasses, per dialect ({c}: the customers table).
REBUILT = {
    "postgres": "SELECT c.id, string_agg(chr(a.i), '' ORDER BY b.i) FROM {c} c CROSS JOIN (SELECT"
    " generate_series(32,126) i) a CROSS JOIN (SELECT generate_series(1,40) i) b WHERE"
    " ascii(substr(c.email, b.i, 1)) = a.i GROUP BY c.id",
    "mysql": "WITH RECURSIVE a(i) AS (SELECT 32 UNION ALL SELECT i + 1 FROM a WHERE i < 126),"
    " b(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM b WHERE i < 40)"
    " SELECT c.id, GROUP_CONCAT(CHAR(a.i) ORDER BY b.i SEPARATOR '') FROM {c} c, a, b"
    " WHERE ASCII(SUBSTRING(c.email, b.i, 1)) = a.i GROUP BY c.id",
    "sqlite": "WITH RECURSIVE a(i) AS (SELECT 32 UNION ALL SELECT i + 1 FROM a WHERE i < 126),"
    " b(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM b WHERE i < 40)"
    " SELECT c.id, group_concat(char(a.i), '') FROM {c} c, a, b"
    " WHERE unicode(substr(c.email, b.i, 1)) = a.i GROUP BY c.id",
}
SMUGGLED = {
    "postgres": "SELECT 'x@' || replace(email, '@', '.') AS e FROM {c}",
    "mysql": "SELECT CONCAT('x@', REPLACE(email, '@', '.')) AS e FROM {c}",
    "sqlite": "SELECT 'x@' || replace(email, '@', '.') AS e FROM {c}",
}
POSITION = {
    "postgres": "SELECT id FROM {c} WHERE position('@' in email) > 5",
    "mysql": "SELECT id FROM {c} WHERE INSTR(email, '@') > 5",
    "sqlite": "SELECT id FROM {c} WHERE instr(email, '@') > 5",
}
# Variants written for this suite: each reads the masked column somewhere but the output.
VARIANTS = [
    "SELECT id FROM {c} WHERE email LIKE 'a%'",  # a LIKE prefix
    "SELECT id FROM {c} WHERE email > 'm'",  # a range
    "SELECT id FROM {c} WHERE email = 'alice@cust1.acme.com'",  # a guess checked
    "SELECT id FROM {c} ORDER BY email LIMIT 1",  # binary search by ORDER BY ... LIMIT 1
    "SELECT email AS e FROM {c} ORDER BY 1 LIMIT 1",  # the same by position
    "SELECT email AS e FROM {c} ORDER BY e DESC LIMIT 1",  # the same by output name
    "SELECT substr(email, 1, 1) AS f, COUNT(*) AS n FROM {c} GROUP BY substr(email, 1, 1)",  # GROUP BY a substring
    "SELECT o.id FROM {o} o JOIN {c} c ON c.email = o.note",  # a join on it
    "SELECT id, CASE WHEN email LIKE '%acme%' THEN 1 ELSE 0 END AS acme FROM {c}",  # CASE
    "SELECT id FROM {c} WHERE length(email) = 20",  # a function in WHERE
    "SELECT x.e FROM (SELECT email AS e FROM {c}) x WHERE x.e LIKE 'b%'",  # renamed in a derived table
    "WITH m AS (SELECT id, email FROM {c}) SELECT id FROM m ORDER BY email DESC LIMIT 1",  # through a CTE
    "SELECT id FROM {c} WHERE id IN (SELECT id FROM {c} WHERE email LIKE 'a%')",  # a subquery filter
    "SELECT COUNT(*) AS n FROM {c} HAVING MAX(email) > 'm'",  # HAVING
    "SELECT email FROM {c} UNION SELECT 'alice@cust1.acme.com'",  # UNION compares values
    "SELECT id, ROW_NUMBER() OVER (ORDER BY email) AS r FROM {c}",  # a window
    "SELECT id FROM {c} WHERE email IN (SELECT note FROM {o})",  # IN
]
ALLOWED = [
    "SELECT id, name, email FROM {c} ORDER BY id",
    "SELECT c.name, c.email, o.amount FROM {c} c JOIN {o} o ON o.customer_id = c.id WHERE o.amount > 10",
    "SELECT COUNT(email) AS n, COUNT(DISTINCT email) AS d FROM {c}",
    "WITH m AS (SELECT id, email FROM {c}) SELECT email FROM m ORDER BY id",
    "SELECT email FROM {c} UNION ALL SELECT note FROM {o}",
]
DIALECTS = ["sqlite", "postgres", "mysql"]


def bypasses(dialect: str) -> list[str]:
    return [REBUILT[dialect], SMUGGLED[dialect], POSITION[dialect], *VARIANTS]


# ---------------------------------------------------------------- the guard alone


def policy(c: str = "customers", o: str = "orders") -> GuardPolicy:
    return GuardPolicy(
        mask_columns=frozenset({f"{c}.email"}),
        deny_columns=frozenset({f"{c}.tax_id"}),
        table_columns={c: ("id", "name", "email", "tax_id"), o: ("id", "customer_id", "amount", "note")},
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_guard_refuses_every_use_of_a_masked_column_but_showing_and_counting(dialect):
    for template in bypasses(dialect):
        sql = template.format(c="customers", o="orders")
        verdict = check(sql, dialect, policy())
        assert not verdict.allowed, sql
        assert "customers.email" in verdict.reason, (sql, verdict.reason)
    for template in ALLOWED:
        sql = template.format(c="customers", o="orders")
        assert check(sql, dialect, policy()).allowed, sql


def test_the_reason_says_where_the_column_was_used():
    reasons = {
        sql: check(sql, "postgres", policy()).reason
        for sql in (
            "SELECT id FROM customers WHERE email LIKE 'a%'",
            "SELECT id FROM customers ORDER BY email LIMIT 1",
            "SELECT lower(email) FROM customers",
            "SELECT o.id FROM orders o JOIN customers c ON c.email = o.note",
        )
    }
    assert list(reasons.values()) == [
        "uses masked column customers.email in WHERE; a masked column can only be shown or counted",
        "uses masked column customers.email in ORDER BY; a masked column can only be shown or counted",
        "uses masked column customers.email inside LOWER() in the output; a masked column can only be shown or counted",
        "uses masked column customers.email in JOIN ON; a masked column can only be shown or counted",
    ]


def test_exists_and_stars_that_only_show_are_allowed():
    masks_only = GuardPolicy(
        mask_columns=frozenset({"customers.email"}), table_columns=policy().table_columns
    )
    for sql in (
        "SELECT id FROM orders o WHERE EXISTS (SELECT * FROM customers c WHERE c.id = o.customer_id)",
        "SELECT x.id, x.email FROM (SELECT id, name, email FROM customers) x WHERE x.name LIKE 'A%'",
        "SELECT c FROM customers c",  # a whole row, shown: the executor masks it
    ):
        assert check(sql, "postgres", masks_only).allowed, sql
    for sql in (
        "SELECT x.id FROM (SELECT id, name, email FROM customers) x WHERE x.email LIKE 'A%'",
        "SELECT row_to_json(c) FROM customers c",
        "SELECT * FROM customers NATURAL JOIN orders",
        "SELECT id FROM customers JOIN orders USING (email)",
    ):
        assert not check(sql, "postgres", policy()).allowed, sql


def test_the_command_line_takes_mask_column(cli_guard):
    lines = "SELECT email FROM customers\nSELECT id FROM customers WHERE email LIKE 'a%'\nSELECT COUNT(email) FROM customers\n"
    out = cli_guard(["check", "--dialect", "mysql", "--mask-column", "customers.email"], lines)
    verdicts = out.splitlines()
    assert verdicts[0] == "ALLOW" and verdicts[2] == "ALLOW"
    assert verdicts[1].startswith("DENY uses masked column customers.email in WHERE")


@pytest.fixture
def cli_guard(monkeypatch, capsys):
    import io
    import sys

    from core.guard.cli import main

    def run(args: list[str], stdin: str) -> str:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        assert main(args) == 0
        return capsys.readouterr().out

    return run


# ---------------------------------------------------------------- real databases, through the engine


@dataclass
class Shop:
    dialect: str
    askbase: Askbase
    c: str  # customers
    o: str  # orders
    view: str  # a view over the denied column
    contact: str  # a view over the masked column

    def rerun(self, template: str):
        sql = template.format(c=self.c, o=self.o, v=self.view, m=self.contact)
        return self.askbase.rerun(sql, database="shop", principal=ALICE, purpose="rerun")


def _create(conn: sa.Connection, c: str, o: str, view: str, contact: str) -> None:
    conn.execute(
        sa.text(
            f"CREATE TABLE {c} (id INTEGER PRIMARY KEY, name VARCHAR(40), email VARCHAR(80), tax_id VARCHAR(20))"
        )
    )
    conn.execute(
        sa.text(
            f"CREATE TABLE {o} (id INTEGER PRIMARY KEY, customer_id INTEGER, amount INTEGER, note VARCHAR(80))"
        )
    )
    for i, email in enumerate(EMAILS, 1):
        conn.execute(
            sa.text(f"INSERT INTO {c} VALUES (:i, :n, :e, :t)"),
            {"i": i, "n": email.split("@")[0].title(), "e": email, "t": f"TX-{i}0{i}"},
        )
        conn.execute(sa.text(f"INSERT INTO {o} VALUES (:i, :i, :a, 'n')"), {"i": i, "a": 10 * i})
    conn.execute(sa.text(f"CREATE VIEW {view} AS SELECT id, name, tax_id AS tid FROM {c}"))
    conn.execute(sa.text(f"CREATE VIEW {contact} AS SELECT id, lower(email) AS contact FROM {c}"))


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(PG, marks=pytest.mark.postgres, id="postgres"),
        pytest.param(MY, marks=pytest.mark.mysql, id="mysql"),
    ]
)
def shop(request, tmp_path, state_url) -> Iterator[Shop]:
    tag = uuid.uuid4().hex[:8]
    c, o, view, contact = f"mr_{tag}_customers", f"mr_{tag}_orders", f"mr_{tag}_cview", f"mr_{tag}_contact"
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'shop.sqlite'}"
        admin = sa.create_engine(url)
        dialect = "sqlite"
    else:
        url = server_url(request.param)
        admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        dialect = "postgres" if request.param == PG else "mysql"
    with admin.begin() as conn:
        _create(conn, c, o, view, contact)
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="shop",
        databases={
            "shop": DatabaseSettings(url=url, mask_columns=[f"{c}.email"], deny_columns=[f"{c}.tax_id"])
        },
    )
    askbase = Askbase(settings)
    yield Shop(dialect, askbase, c, o, view, contact)
    askbase.close()
    if request.param != "sqlite":
        with admin.begin() as conn:
            for name in (view, contact):
                conn.execute(sa.text(f"DROP VIEW IF EXISTS {name}"))
            for name in (o, c):
                conn.execute(sa.text(f"DROP TABLE IF EXISTS {name}"))
    admin.dispose()


def _leaks(outcome) -> list[str]:
    text = " ".join([outcome.answer or "", outcome.error or "", repr(outcome.rows)])
    return [e for e in EMAILS if e in text or e.replace("@", ".") in text]


def test_masked_columns_cannot_be_read_around_on_a_real_database(shop):
    for template in bypasses(shop.dialect):
        outcome = shop.rerun(template)
        assert outcome.status == "error" and outcome.error_kind == "guard", (template, outcome.error)
        assert f"{shop.c}.email" in outcome.error and not _leaks(outcome), template
    shown = shop.rerun(ALLOWED[0])
    assert shown.status == "answer", shown.error
    assert [r[2] for r in shown.rows] == [
        "a***@cust1.acme.com",
        "b***@cust2.acme.com",
        "c***@cust3.example.org",
    ]
    counted = shop.rerun(ALLOWED[2])
    assert counted.status == "answer" and [tuple(r) for r in counted.rows] == [(3, 3)]
    joined = shop.rerun(ALLOWED[1])
    assert joined.status == "answer" and len(joined.rows) == 2 and not _leaks(joined)


def test_views_over_denied_and_masked_columns_are_those_columns(shop):
    for template in ("SELECT tid FROM {v}", "SELECT * FROM {v}", "SELECT id FROM {v} WHERE tid LIKE 'TX%'"):
        outcome = shop.rerun(template)
        assert outcome.status == "error" and outcome.error_kind == "guard", (template, outcome.error)
        assert shop.view in outcome.error and "tid" in outcome.error and "TX-" not in repr(outcome.rows)
    names = shop.rerun("SELECT name FROM {v} ORDER BY id")
    if shop.dialect == "sqlite":  # SQLite's authorizer refuses a view that reads a denied column at all
        assert names.status == "error" and names.error_kind == "permission"
    else:  # the servers run the view as its owner: only the guard stands between it and the column
        assert names.status == "answer" and [r[0] for r in names.rows] == ["Alice", "Bob", "Carol"]
    contacts = shop.rerun("SELECT contact FROM {m} ORDER BY id")
    assert contacts.status == "answer" and not _leaks(contacts)
    assert [r[0] for r in contacts.rows] == [
        "a***@cust1.acme.com",
        "b***@cust2.acme.com",
        "c***@cust3.example.org",
    ]
    filtered = shop.rerun("SELECT id FROM {m} WHERE contact LIKE 'a%'")
    assert filtered.status == "error" and f"{shop.contact}.contact" in filtered.error


# ---------------------------------------------------------------- verified queries and the cache


@pytest.fixture
def demo_masked(demo_var, state_url) -> Iterator[tuple[Askbase, Askbase]]:
    """The demo database twice over one state database: as it is, and with client.email masked."""
    base = {"var_dir": str(demo_var), "state_url": state_url, "verified": {"schema_check_s": 0}}
    url = f"sqlite:///{demo_var / 'demo.sqlite'}"
    open_ = Askbase(
        load_settings(**base, databases={"demo": DatabaseSettings(url=url, catalog=str(CATALOG_PATH))})
    )
    masked = Askbase(
        load_settings(
            **base,
            databases={
                "demo": DatabaseSettings(url=url, catalog=str(CATALOG_PATH), mask_columns=["client.email"])
            },
        )
    )
    yield open_, masked
    open_.close()
    masked.close()


def test_a_verified_query_that_filters_on_a_masked_column_is_not_reused(demo_masked):
    open_, masked = demo_masked
    sql = "SELECT name FROM client WHERE email LIKE '%@acme-logistics.de'"
    n = open_.trusted.verify(
        open_.database("demo"), "Which clients have an acme-logistics.de email?", sql, "U0"
    ).query.id
    out = masked.ask("Which clients have an acme-logistics.de email?", principal=ALICE)
    assert out.reuse is None  # never answered under the ✅ of a query that reads around the mask
    q = verified_store.get(masked.state, n)
    assert q is not None and q.stale and "masked column client.email" in q.stale_reason


def test_a_cached_answer_that_no_longer_passes_the_guard_is_not_shown(demo_masked):
    _, masked = demo_masked
    question = "Which clients have an acme-logistics.de email?"
    db = masked.database("demo")
    key = key_for(masked.settings, ALICE, "demo", db.config, question, masked.trusted.watch.signature(db))
    leaked = CachedAnswer(
        question=question,
        database="demo",
        mode="llm",
        answer="Acme Logistics GmbH",
        sql="SELECT name FROM client WHERE email LIKE '%@acme-logistics.de'",
        columns=("name",),
        rows=(("Acme Logistics GmbH",),),
        truncated=False,
        interpretation="",
        computed_at=dt.datetime.now(dt.UTC),
        trace_id="t-old",
    )
    cache_store.put(masked.state, key, leaked, 100, window_s=600, max_entries=10)
    assert cache_store.get(masked.state, key, 600, dt.datetime.now(dt.UTC)) is not None
    out = masked.ask(question, principal=ALICE)
    assert out.reuse is None or out.reuse.cached_from != "t-old"
