"""`python -m core.bench ask`: execution accuracy as the issue defines it, in keyword and LLM mode."""

from __future__ import annotations

import json
import sqlite3

import pytest

from core.bench.ask import Gold, main, order_keys, same_result
from tests.fakes import model_replies as mr
from tests.fakes.model_replies import view_name
from tests.fakes.openai_server import Reply


def gold(rows, ordered=False, keys=None) -> Gold:
    return Gold(rows=rows, ordered=ordered, tie_keys=keys)


def test_rows_compare_as_a_multiset_with_columns_in_any_order():
    g = gold([("a", 1), ("b", 2), ("b", 2)])
    assert same_result([(2, "b"), (1, "a"), (2, "b")], g)
    assert not same_result([(2, "b"), (1, "a")], g)  # a row missing
    assert not same_result([("a", 1), ("b", 2), ("b", 3)], g)  # a value differs
    assert not same_result([("a", 1, 0), ("b", 2, 0), ("b", 2, 0)], g)  # an extra column
    assert same_result([("a", 1.0000000001), ("b", 2), ("b", 2)], g)  # float noise


def test_order_counts_only_when_the_gold_orders_and_ties_may_swap():
    ordered = gold([("x", 3), ("y", 2), ("z", 2), ("w", 1)], ordered=True, keys=[1])
    assert same_result([("x", 3), ("z", 2), ("y", 2), ("w", 1)], ordered)  # a tie, swapped
    assert not same_result([("w", 1), ("x", 3), ("y", 2), ("z", 2)], ordered)
    unknown_keys = gold([("x", 3), ("y", 2)], ordered=True, keys=None)
    assert not same_result([("y", 2), ("x", 3)], unknown_keys)


def test_order_keys_are_found_by_alias_expression_or_position():
    assert order_keys("SELECT a, COUNT(*) AS n FROM t GROUP BY a ORDER BY n DESC") == (True, [1])
    assert order_keys("SELECT t.a, t.b FROM t ORDER BY t.b") == (True, [1])
    assert order_keys("SELECT a, b FROM t ORDER BY 1") == (True, [0])
    assert order_keys("SELECT a FROM t ORDER BY LENGTH(a)") == (True, None)
    assert order_keys("SELECT a FROM t") == (False, None)


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "bench"
    db_dir = root / "database" / "shop"
    db_dir.mkdir(parents=True)
    with sqlite3.connect(db_dir / "shop.sqlite") as con:
        con.executescript(
            """
            CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
            CREATE TABLE orders (
                id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer (id),
                amount REAL NOT NULL, placed_on DATE NOT NULL
            );
            """
        )
        cities = ["Lisbon", "Porto", "Braga"]
        con.executemany(
            "INSERT INTO customer VALUES (?, ?, ?)",
            [(i, f"Customer {i}", cities[i % 3]) for i in range(1, 13)],
        )
        con.executemany(
            "INSERT INTO orders VALUES (?, ?, ?, ?)",
            [(i, 1 + i % 12, 10.0 * (i % 7 + 1), f"2024-0{1 + i % 9}-1{i % 10}") for i in range(1, 61)],
        )
    questions = [
        {
            "db_id": "shop",
            "category": "simple",
            "question": "How many customers are there?",
            "gold_sql": "SELECT COUNT(*) FROM customer",
        },
        {
            "db_id": "shop",
            "category": "group_by",
            "question": "What is the total amount of orders per city?",
            "gold_sql": "SELECT customer.city, SUM(orders.amount) FROM orders JOIN customer "
            "ON orders.customer_id = customer.id GROUP BY customer.city",
            "instructions": "Amounts are in euros.",
        },
        {
            "db_id": "shop",
            "category": "ratio",
            "question": "What is the ratio of Lisbon customers to Porto customers?",
            "gold_sql": "SELECT 1.0",
        },
        {
            "db_id": "shop",
            "category": "simple",
            "question": "How many customers are there?",
            "gold_sql": "SELECT COUNT(*) FROM orders",  # the engine's answer is right only by the alternative
            "gold_alternatives": ["SELECT COUNT(*) FROM orders", "SELECT COUNT(id) FROM customer"],
        },
        {
            "db_id": "shop",
            "category": "simple",
            "question": "How many customers are there?",
            "gold_sql": "SELECT COUNT(*) FROM orders",  # a wrong answer, as the benchmark sees it
        },
    ]
    (root / "questions.json").write_text(json.dumps(questions))
    return root


def run_json(capsys, *argv: str) -> dict:
    assert main(["--dataset", *argv, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_keyword_mode_figures(dataset, capsys):
    out = run_json(capsys, str(dataset), "--mode", "keyword")
    for key in (
        "questions",
        "answered",
        "correct",
        "ex",
        "wrong_rate",
        "p50_ms",
        "p95_ms",
        "llm_calls_per_question",
    ):
        assert key in out
    assert out["questions"] == 5
    assert out["correct"] == 3 and out["answered"] == 4 and out["abstained"] == 1
    assert out["ex"] == pytest.approx(3 / 5) and out["wrong_rate"] == pytest.approx(1 / 4)
    assert out["llm_calls_per_question"] == 0
    assert out["per_category"]["ratio"]["abstained"] == 1
    assert out["per_category"]["group_by"]["correct"] == 1


def test_limit_takes_the_first_questions(dataset, capsys):
    assert run_json(capsys, str(dataset), "--limit", "2")["questions"] == 2


def test_llm_mode_uses_the_configured_endpoint_and_the_instructions(dataset, capsys, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    fake_llm.respond(
        "understand", lambda body: Reply(content=mr.json_fenced(mr.understanding("Sum", [], ["orders"])))
    )

    def generate(body):
        name = view_name(body)
        return Reply(content=mr.sql_fenced(f"SELECT COUNT(*) FROM {name}"))

    fake_llm.respond("generate", generate)
    fake_llm.respond("revise", generate)
    out = run_json(capsys, str(dataset), "--mode", "llm", "--limit", "2")
    assert out["mode"] == "llm" and out["questions"] == 2
    assert out["llm_calls_per_question"] >= 2 and out["tokens_per_question"] > 0
    prompts = [c.user for c in fake_llm.calls("understand")]
    assert any("Amounts are in euros." in p for p in prompts)  # instructions go to the LLM only
    assert not any("Amounts are in euros." in p for p in prompts[:1])
