"""Keyword mode on dates: time buckets ('per month'), the fact's own date, quarters, dates kept as
text — checked against SQL written by hand on the demo database, and on PostgreSQL and MariaDB
for the dialect-specific bucket SQL."""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.askbase import Askbase
from core.clarify.policy import exchange_for
from core.clarify.transcript import Transcript
from core.database import Database
from core.pipeline import answer
from core.request import Request
from core.settings import DatabaseSettings
from tests.servers import server_url

# The demo's payments per month/quarter/week, written by hand in SQLite.
MONTHLY_AMOUNT_2025 = (
    "SELECT strftime('%Y-%m', p.paid_on), SUM(a.amount) FROM payment p JOIN payment_amount a "
    "ON a.payment_id = p.id WHERE p.paid_on >= '2025-01-01' AND p.paid_on < '2026-01-01' GROUP BY 1 ORDER BY 1"
)
QUARTERLY_PAYMENTS = (
    "SELECT strftime('%Y', paid_on) || '-Q' || ((CAST(strftime('%m', paid_on) AS INTEGER) + 2) / 3), "
    "COUNT(*) FROM payment GROUP BY 1 ORDER BY 1"
)
WEEKLY_PAYMENTS_2025 = (
    "SELECT date(paid_on, 'weekday 0', '-6 days'), COUNT(*) FROM payment "
    "WHERE paid_on >= '2025-01-01' AND paid_on < '2026-01-01' GROUP BY 1 ORDER BY 1"
)


@pytest.fixture
def app(settings):
    app = Askbase(settings)  # no OPENAI_API_KEY in the isolated environment: keyword mode
    yield app
    app.close()


def rows(outcome) -> list[tuple]:
    return [tuple(r) for r in outcome.rows]


def norm(rs: list[tuple]) -> list[tuple]:
    """Numbers to 4 decimals (servers return DECIMAL sums), the rest as it is."""
    return [tuple(round(float(v), 4) if isinstance(v, float | int | Decimal) else v for v in r) for r in rs]


def same_rows(got: list[tuple], want: list[tuple]) -> bool:
    return Counter(norm(got)) == Counter(norm(want))


def demo(app, question: str, **request):
    return answer(app.database("demo"), Request(question, **request), app.settings.engine, None)


def chosen(clarification, option) -> Transcript:
    """The transcript after the person picks `option`, as the adapters keep it."""
    return Transcript().plus(exchange_for(clarification, option=clarification.options.index(option)))


# ---------------------------------------------------------------------------------------------
# the demo database (SQLite)


# (question, SQL written by hand, whether the order of the rows matters)
ANSWERED = [
    pytest.param(
        "total payment amount per client segment",
        "SELECT c.segment, SUM(a.amount) FROM payment_amount a JOIN payment p ON a.payment_id = p.id "
        "JOIN client c ON p.client_id = c.id GROUP BY c.segment",
        False,
        id="a table in an aggregate is measured by its one number",
    ),
    pytest.param(
        "Total payment amount per month in 2025",
        MONTHLY_AMOUNT_2025,
        True,
        id="per month of the measured fact's date, and the year restricts that date",
    ),
    pytest.param(
        "total amount per currency in 2025",
        "SELECT a.currency, SUM(a.amount) FROM payment_amount a JOIN payment p ON a.payment_id = p.id "
        "WHERE p.paid_on >= '2025-01-01' AND p.paid_on < '2026-01-01' GROUP BY a.currency",
        False,
        id="a year restricts the date of the row the measured table belongs to",
    ),
    pytest.param(
        "total payment amount in March 2025",
        "SELECT SUM(a.amount) FROM payment_amount a JOIN payment p ON a.payment_id = p.id "
        "WHERE p.paid_on >= '2025-03-01' AND p.paid_on < '2025-04-01'",
        False,
        id="a month restricts the same date",
    ),
    pytest.param(
        "How many clients signed up per month in 2024?",
        "SELECT strftime('%Y-%m', signup_date), COUNT(*) FROM client "
        "WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01' GROUP BY 1 ORDER BY 1",
        True,
        id="counted entities by the date their words name",
    ),
    pytest.param(
        "How many hosts were commissioned per year?",
        "SELECT strftime('%Y', commissioned_on), COUNT(*) FROM compute GROUP BY 1 ORDER BY 1",
        True,
        id="per year of the date a verb names",
    ),
    pytest.param(
        "How many new clients joined each month?",
        "SELECT strftime('%Y-%m', signup_date), COUNT(*) FROM client GROUP BY 1 ORDER BY 1",
        True,
        id="each month",
    ),
    pytest.param("number of payments per quarter", QUARTERLY_PAYMENTS, True, id="per quarter"),
    pytest.param("number of payments per week in 2025", WEEKLY_PAYMENTS_2025, True, id="per week"),
    pytest.param(
        "Which month had the most payments?",
        "SELECT strftime('%Y-%m', paid_on) AS m FROM payment GROUP BY m ORDER BY COUNT(*) DESC LIMIT 1",
        True,
        id="the busiest month",  # the month asked for; the count that picked it is not
    ),
    pytest.param(
        "Which month had the highest total payment amount?",
        "SELECT strftime('%Y-%m', p.paid_on) AS m FROM payment p "
        "JOIN payment_amount a ON a.payment_id = p.id GROUP BY m ORDER BY SUM(a.amount) DESC LIMIT 1",
        True,
        id="the month with the highest total",
    ),
    pytest.param(
        "Which month in 2025 had the highest cpu hours?",
        "SELECT strftime('%Y-%m', month) AS m FROM usage "
        "WHERE month >= '2025-01-01' AND month < '2026-01-01' GROUP BY m ORDER BY SUM(cpu_hours) DESC LIMIT 1",
        True,
        id="months ranked by their rows added up",
    ),
    pytest.param(
        "Which month had the most payments, and how many payments did it have?",
        "SELECT strftime('%Y-%m', paid_on) AS m, COUNT(*) AS n FROM payment GROUP BY m ORDER BY n DESC LIMIT 1",
        True,
        id="the busiest month with the count it was asked for",
    ),
    pytest.param(
        "How many payments in Q1 2025?",
        "SELECT COUNT(*) FROM payment WHERE paid_on >= '2025-01-01' AND paid_on < '2025-04-01'",
        True,
        id="a quarter of a year",
    ),
    pytest.param(
        "How many payments since March 2026?",
        "SELECT COUNT(*) FROM payment WHERE paid_on >= '2026-03-01'",
        True,
        id="since a month",
    ),
]


@pytest.mark.parametrize(("question", "sql", "ordered"), ANSWERED)
def test_date_questions_are_answered_as_sql_written_by_hand(app, hand, question, sql, ordered):
    outcome = demo(app, question)
    assert outcome.status == "answer", outcome.error
    got, want = norm(rows(outcome)), norm(hand(sql))
    assert want  # an empty answer would prove nothing
    assert got == want if ordered else Counter(got) == Counter(want)


def test_the_reading_says_which_date_it_used(app):
    outcome = demo(app, "Total payment amount per month in 2025")
    assert "paid on" in outcome.interpretation and "usage" not in outcome.sql.lower()
    assert len(outcome.rows) == 12


def test_bucket_labels_read_the_same_everywhere(app):
    quarterly = demo(app, "number of payments per quarter")
    assert rows(quarterly)[0][0] == "2024-Q1"
    monthly = demo(app, "monthly total amount in the second quarter of 2025")
    assert [r[0] for r in rows(monthly)] == ["2025-04", "2025-05", "2025-06"]


def test_a_bucket_over_a_table_with_two_dates_is_asked_back(app, hand):
    first = demo(app, "number of clients per year")
    assert first.status == "clarify"
    labels = [o.label for o in first.clarification.options]
    assert any("signup" in label for label in labels) and any("birth" in label for label in labels)
    signup = next(o for o in first.clarification.options if "signup" in o.label)
    second = demo(app, "number of clients per year", transcript=chosen(first.clarification, signup))
    assert norm(rows(second)) == norm(
        hand("SELECT strftime('%Y', signup_date), COUNT(*) FROM client GROUP BY 1 ORDER BY 1")
    )


@pytest.mark.parametrize(
    "question",
    [
        "payments per month",  # nothing to count or compute per month
        "how many payments in Q2",  # a quarter of which year?
        "What is the average number of payments per month?",  # an average of monthly counts
        "What is the average daily cpu hours?",  # an average of daily totals, not daily averages
    ],
)
def test_declines_time_questions_it_cannot_read(app, question):
    outcome = demo(app, question)
    assert outcome.status == "error" and outcome.error_kind == "keyword_abstain"


# ---------------------------------------------------------------------------------------------
# dates kept as text, month names (SQLite files like many real ones)


@pytest.fixture
def shop(tmp_path) -> Path:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE orders (order_id INTEGER PRIMARY KEY, placed_at TEXT, amount REAL, channel TEXT);
            CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, month TEXT, year INTEGER, visitors INTEGER);
            CREATE TABLE sessions (session_id INTEGER PRIMARY KEY, started_at TEXT, ended_at TEXT, device TEXT);
            CREATE TABLE students (student_id INTEGER PRIMARY KEY, name TEXT, admit_date TEXT,
                                   predicted_graduation_date TEXT);
            """
        )
        conn.executemany(
            "INSERT INTO sessions VALUES (?, ?, ?, ?)",
            [
                (
                    i,
                    f"2024-05-{i:02d} 10:00:00",
                    f"2024-05-{i:02d} 10:{i:02d}:3{i % 10}",
                    ("web", "app")[i % 2],
                )
                for i in range(1, 21)
            ],
        )
        conn.executemany(
            "INSERT INTO students VALUES (?, ?, ?, ?)",
            [(i, f"student {i}", f"{2015 + i % 6}-09-01", f"{2019 + i % 8}-06-30") for i in range(1, 31)],
        )
        orders = [
            (i, f"2024-{1 + i % 12:02d}-{1 + i % 27:02d} 1{i % 10}:00:00", 10.0 + i, ("web", "shop")[i % 2])
            for i in range(1, 61)
        ]
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
        months = ["January", "February", "March", "April", "May", "June", "July", "August"]
        conn.executemany(
            "INSERT INTO visits VALUES (?, ?, ?, ?)",
            [(i, m, 2024, 100 * (i + 1)) for i, m in enumerate(months)],
        )
    return path


def test_dates_kept_as_text_are_read_as_dates(app, shop, hand):
    db = app.database(f"sqlite:///{shop}")
    monthly = answer(db, Request("total order amount per month"), app.settings.engine, None)
    assert monthly.status == "answer"
    assert norm(rows(monthly)) == norm(
        hand("SELECT strftime('%Y-%m', placed_at), SUM(amount) FROM orders GROUP BY 1 ORDER BY 1", shop)
    )
    in_march = answer(db, Request("How many orders in March 2024?"), app.settings.engine, None)
    assert rows(in_march) == hand(
        "SELECT COUNT(*) FROM orders WHERE placed_at >= '2024-03-01' AND placed_at < '2024-04-01'", shop
    )


def test_month_names_are_ordered_by_the_calendar(app, shop):
    db = app.database(f"sqlite:///{shop}")
    outcome = answer(db, Request("total visitors per month"), app.settings.engine, None)
    assert [r[0] for r in rows(outcome)] == [
        "January", "February", "March", "April", "May", "June", "July", "August"
    ]  # fmt: skip


def test_a_duration_between_a_rows_start_and_end_in_the_stated_unit(app, shop, hand):
    db = app.database(f"sqlite:///{shop}")
    outcome = answer(db, Request("average session duration in seconds per device"), app.settings.engine, None)
    assert outcome.status == "answer"
    assert same_rows(
        rows(outcome),
        hand(
            "SELECT device, AVG(strftime('%s', ended_at) - strftime('%s', started_at)) FROM sessions GROUP BY device",
            shop,
        ),
    )
    longest = answer(db, Request("longest session duration in minutes"), app.settings.engine, None)
    assert same_rows(
        rows(longest),
        hand("SELECT MAX((julianday(ended_at) - julianday(started_at)) * 1440) FROM sessions", shop),
    )
    no_unit = answer(db, Request("average session duration"), app.settings.engine, None)
    assert no_unit.status == "error" and no_unit.error_kind == "keyword_abstain"  # seconds? days?


def test_a_word_that_names_a_date_column_picks_it(app, shop, hand):
    db = app.database(f"sqlite:///{shop}")
    outcome = answer(
        db,
        Request("How many students will graduate in the last 3 years?", today=dt.date(2026, 1, 1)),
        app.settings.engine,
        None,
    )
    assert rows(outcome) == hand(
        "SELECT COUNT(*) FROM students WHERE predicted_graduation_date >= '2023-01-01'", shop
    )
    assert "predicted graduation date" in outcome.interpretation


def test_latest_and_earliest_rows_and_when(app, hand):
    latest = demo(app, "show the 3 most recent payments")
    assert [r[-1] for r in rows(latest)] == [
        r[0] for r in hand("SELECT paid_on FROM payment ORDER BY paid_on DESC LIMIT 3")
    ]
    when = demo(app, "When did the latest payment happen?")
    assert rows(when)[0][-1] == hand("SELECT MAX(paid_on) FROM payment")[0][0]
    signed = demo(app, "Which client signed up most recently?")
    assert rows(signed)[0][0] == hand("SELECT name FROM client ORDER BY signup_date DESC LIMIT 1")[0][0]


# ---------------------------------------------------------------------------------------------
# PostgreSQL and MariaDB: the same buckets in each dialect

PG = "ASKBASE_TEST_POSTGRES_URL"
MY = "ASKBASE_TEST_MYSQL_URL"
SERVERS = [pytest.param(PG, marks=pytest.mark.postgres), pytest.param(MY, marks=pytest.mark.mysql)]
COPIED = {  # table → (column, type) in the order they are created; foreign keys declared
    "client": [("id", "INTEGER PRIMARY KEY"), ("name", "VARCHAR(200)"), ("segment", "VARCHAR(40)"),
               ("signup_date", "DATE")],
    "payment": [("id", "INTEGER PRIMARY KEY"), ("client_id", "INTEGER REFERENCES client (id)"),
                ("paid_on", "DATE"), ("status", "VARCHAR(20)")],
    "payment_amount": [("id", "INTEGER PRIMARY KEY"), ("payment_id", "INTEGER REFERENCES payment (id)"),
                       ("amount", "DECIMAL(12, 2)"), ("currency", "VARCHAR(3)")],
}  # fmt: skip


@pytest.fixture(params=SERVERS)
def server_db(request, demo_var, tmp_path) -> Iterator[Database]:
    """The demo's clients, payments and amounts copied into a fresh database on the server."""
    env = request.param
    name = f"askbase_kw_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server_url(env), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    url = make_url(server_url(env)).set(database=name).render_as_string(hide_password=False)
    writer = sa.create_engine(url)
    try:
        with sqlite3.connect(demo_var / "demo.sqlite") as src, writer.begin() as conn:
            for table, columns in COPIED.items():
                conn.execute(sa.text(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in columns)})"))
                names = [c for c, _ in columns]
                data = src.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall()
                insert = (
                    f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(':' + n for n in names)})"
                )
                conn.execute(sa.text(insert), [dict(zip(names, r, strict=True)) for r in data])
        writer.dispose()
        db = Database(name="kwserver", config=DatabaseSettings(url=url), var_dir=tmp_path)
        yield db
        db.dispose()
    finally:
        writer.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE {name}"))
        admin.dispose()


@pytest.mark.parametrize(
    ("question", "want"),
    [
        ("Total payment amount per month in 2025", MONTHLY_AMOUNT_2025),
        ("number of payments per quarter", QUARTERLY_PAYMENTS),
        ("number of payments per week in 2025", WEEKLY_PAYMENTS_2025),
    ],
)
def test_time_buckets_on_real_servers(server_db, settings, hand, question, want):
    outcome = answer(server_db, Request(question), settings.engine, None)
    assert outcome.status == "answer", outcome.error
    assert norm(rows(outcome)) == norm(hand(want))
