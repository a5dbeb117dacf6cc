"""`python -m core.bench ask`: execution accuracy as the issue defines it, in keyword, LLM and plain
mode, the two-mode comparison and the stratified sample."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections import Counter
from typing import Any

import pytest

from core.bench.ask import (
    Gold,
    Question,
    Result,
    asks_for_order,
    compare,
    main,
    order_keys,
    same_on_other_columns,
    same_result,
    stratified_sample,
)
from core.database import Databases
from core.schema_text import schema_text
from core.settings import load_settings
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import FakeOpenAI, Reply


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


def test_the_golds_order_counts_only_when_the_question_asks_for_one():
    by_total = gold([("Brazil", 30), ("India", 12), ("Canada", 8)], ordered=True, keys=[1])
    by_name = [("Brazil", 30), ("Canada", 8), ("India", 12)]
    unasked = Question("geo", "What is the total population in cities by country?", "…")
    asked = Question("geo", "Total city population per country, sorted from largest to smallest", "…")
    category = Question("geo", "Which country has the most people in cities, then the next?", "…", "order_by")
    assert not asks_for_order(unasked)
    assert asks_for_order(asked) and asks_for_order(category)
    assert same_result(by_name, by_total, order_asked=asks_for_order(unasked))
    assert not same_result(by_name, by_total, order_asked=asks_for_order(asked))
    assert not same_result(by_name[:2], by_total, order_asked=False)  # the rows themselves still count


def test_an_answer_on_fewer_or_more_columns_than_the_gold_is_right_only_in_the_semantic_figure():
    stations = gold([("Palo Alto", "San Jose"), ("Market", "SF"), ("Howard", "SF")])
    assert not same_result([("Palo Alto",), ("Market",), ("Howard",)], stations)  # strict: wrong
    assert same_on_other_columns([("Market",), ("Palo Alto",), ("Howard",)], stations)
    assert same_on_other_columns([("SF",), ("San Jose",), ("SF",)], stations)  # any of its columns
    assert not same_on_other_columns([("Market",), ("Howard",)], stations)  # a row missing
    assert not same_on_other_columns([("Market",), ("Market",), ("Howard",)], stations)  # a value wrong
    assert not same_on_other_columns([("Palo Alto", 1), ("Market", 2), ("Howard", 3)], stations)
    with_count = [("SF", 2, "Market"), ("San Jose", 1, "Palo Alto"), ("SF", 2, "Howard")]
    assert same_on_other_columns(with_count, stations)  # the gold's columns among more, in any order
    assert not same_on_other_columns([("Palo Alto", "San Jose", 1), ("Market", "SF", 2)], stations)
    assert not same_on_other_columns(
        [("Palo Alto", "Oakland", 1), ("Market", "SF", 2), ("Howard", "SF", 2)], stations
    )
    assert not same_on_other_columns(
        [("Palo Alto", "San Jose"), ("Market", "SF"), ("Howard", "SF")], stations
    )  # as many columns: the strict rule's to judge
    ranked = gold([("a", "x", 3), ("b", "y", 2), ("c", "z", 1)], ordered=True, keys=[2])
    assert same_on_other_columns([("a", 3), ("b", 2), ("c", 1)], ranked)
    assert not same_on_other_columns([("b",), ("a",), ("c",)], ranked)  # out of the asked order
    assert same_on_other_columns([("b",), ("a",), ("c",)], ranked, order_asked=False)


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
    assert out["wrong_rate_semantic"] == pytest.approx((4 - 3 - out["other_columns"]) / 4)
    assert out["ex"] == pytest.approx(3 / 5) and out["wrong_rate"] == pytest.approx(1 / 4)
    assert out["llm_calls_per_question"] == 0
    assert out["per_category"]["ratio"]["abstained"] == 1
    assert out["per_category"]["group_by"]["correct"] == 1
    assert out["first_reader"] == {"answered": 0, "right": 0, "wrong": 0}  # the grammar read all four


def test_limit_takes_the_first_questions(dataset, capsys):
    assert run_json(capsys, str(dataset), "--limit", "2")["questions"] == 2


def test_llm_mode_uses_the_configured_endpoint_and_the_instructions(dataset, capsys, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM customer"))
    fake_llm.respond("revise", mr.fixing("SELECT COUNT(*) FROM customer"))
    out = run_json(capsys, str(dataset), "--mode", "llm", "--limit", "2")
    assert out["mode"] == "llm" and out["questions"] == 2
    assert out["llm_calls_per_question"] >= 1 and out["tokens_per_question"] > 0
    prompts = [c.user for c in fake_llm.calls("generate")]
    assert any("Amounts are in euros." in p for p in prompts)  # instructions go to the LLM only
    assert not any("Amounts are in euros." in p for p in prompts[:1])


def test_llm_mode_reports_how_its_candidates_were_chosen(dataset, capsys, fake_llm, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    # the primary counts orders, the alternative customers: they disagree, the judge picks B
    fake_llm.respond(
        "generate", mr.writing("SELECT COUNT(*) FROM orders", "SELECT COUNT(*) AS n FROM customer")
    )
    fake_llm.respond(
        "judge",
        lambda body: Reply(content=mr.json_fenced({"choice": "B", "ambiguous": False, "why": "customers"})),
    )
    details = tmp_path / "llm.jsonl"
    assert main(["--dataset", str(dataset), "--mode", "llm", "--limit", "1", "--details", str(details)]) == 0
    text = capsys.readouterr().out
    assert "candidates: disagree 1 (right 1); judged 1: picked right 1, the other was right 0" in text
    line = json.loads(details.read_text())
    assert line["correct"] and line["llm_calls"] == 2
    assert line["candidates"] == {
        "decision": "disagree",
        "judged": True,
        "asked": False,
        "other_right": False,
        "revised": 0,
    }


# ---------------------------------------------------------------------------------------------
# plain mode: the baseline people compare Askbase with

JOIN_SQL = (
    "SELECT c.city, SUM(o.amount) AS total FROM orders AS o JOIN customer AS c ON c.id = o.customer_id "
    "GROUP BY c.city"
)


@pytest.fixture
def endpoint(fake_llm, monkeypatch) -> FakeOpenAI:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ASKBASE_LLM__RETRY_INITIAL_S", "0.01")
    return fake_llm


def plain_model(fake: FakeOpenAI, answers: dict[str, str]) -> list[str]:
    """A model that answers the plain prompt by the question it is asked, the way models write:
    reasoning, then a fenced query, then a sentence. Returns the replies it sent, in order."""
    sent: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        question = body["messages"][1]["content"]
        sql = next(sql for start, sql in answers.items() if question.startswith(start))
        reply = mr.sql_fenced(sql, reasoning="The schema has the tables this needs; join on the key.")
        sent.append(reply)
        return Reply(content=reply)

    fake.respond("plain", respond)
    return sent


def test_plain_mode_sends_the_whole_schema_with_keys_and_three_example_rows(dataset, capsys, endpoint):
    sent = plain_model(
        endpoint,
        {"How many customers": "SELECT COUNT(*) FROM customer", "What is the total amount": JOIN_SQL},
    )
    out = run_json(capsys, str(dataset), "--mode", "plain", "--limit", "2")

    assert out["mode"] == "plain" and out["correct"] == 2 and out["ex"] == 1.0
    calls = endpoint.calls("plain")
    assert [c.task for c in calls] == ["plain", "plain"]  # one call per question, no retry needed
    system = calls[0].system
    assert "SQLite" in system and dt.date.today().isoformat() in system
    customer = system[system.index("CREATE TABLE customer (") :]
    assert "name TEXT NOT NULL" in customer and "PRIMARY KEY (id)" in customer
    assert "FOREIGN KEY (customer_id) REFERENCES customer (id)" in system  # the orders table's key
    assert "3 example rows from table customer" in system
    assert "1 | Customer 1 | Porto" in system and "3 | Customer 3 | Lisbon" in system
    assert "Customer 4" not in system  # three rows, not the table
    assert "3 example rows from table orders" in system
    assert calls[0].system == calls[1].system  # the whole schema, whatever the question
    assert calls[0].user == "How many customers are there?"
    assert calls[1].user == "What is the total amount of orders per city?\nAmounts are in euros."
    # calls and tokens are what the endpoint reported, as in LLM mode
    assert out["llm_calls_per_question"] == 1
    reported = [
        sum(len(m["content"]) for m in c.messages) // 4 + len(r) // 4
        for c, r in zip(calls, sent, strict=True)
    ]
    assert out["tokens_per_question"] == pytest.approx(sum(reported) / 2)


def test_plain_mode_retries_once_with_the_database_error(dataset, capsys, endpoint):
    first = mr.sql_fenced("SELECT COUNT(*) FROM customers")
    endpoint.script(
        "plain", first, mr.sql_fenced("SELECT COUNT(*) FROM customer", reasoning="The table is customer.")
    )
    out = run_json(capsys, str(dataset), "--mode", "plain", "--limit", "1")

    assert out["correct"] == 1 and out["llm_calls_per_question"] == 2
    retry = endpoint.calls("plain")[1]
    assert retry.task == "plain:retry"
    assert [m["role"] for m in retry.messages] == ["system", "user", "assistant", "user"]
    assert retry.messages[2]["content"] == first  # the conversation goes on from the model's reply
    assert "no such table: customers" in retry.user


def test_plain_mode_gives_up_after_one_retry_and_never_runs_a_write(dataset, capsys, endpoint, tmp_path):
    endpoint.script(
        "plain",
        mr.sql_fenced("DELETE FROM customer"),
        mr.sql_in_prose("SELECT COUNT(*) FROM customer WHERE town = 'Porto'"),
        mr.sql_fenced("SELECT COUNT(*) FROM customer"),  # a third call would get this right
    )
    details = tmp_path / "plain.jsonl"
    out = run_json(capsys, str(dataset), "--mode", "plain", "--limit", "1", "--details", str(details))

    assert out["failed"] == 1 and out["answered"] == 0 and out["correct"] == 0
    calls = endpoint.calls("plain")
    assert len(calls) == 2 and "refused" in calls[1].user  # the guard's verdict is the error shown
    line = json.loads(details.read_text())
    assert line["status"] == "error" and "no such column: town" in line["error"] and line["llm_calls"] == 2
    with sqlite3.connect(dataset / "database" / "shop" / "shop.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM customer").fetchone() == (12,)


def test_plain_mode_does_not_retry_a_refusal(dataset, capsys, endpoint):
    endpoint.script("plain", mr.REFUSAL, mr.sql_fenced("SELECT COUNT(*) FROM customer"))
    out = run_json(capsys, str(dataset), "--mode", "plain", "--limit", "1")
    assert out["failed"] == 1 and len(endpoint.calls("plain")) == 1


def test_the_plain_prompt_shows_no_denied_data(dataset, tmp_path):
    url = f"sqlite:///{dataset / 'database' / 'shop' / 'shop.sqlite'}"
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        databases={
            "shop": {
                "url": url,
                "deny_tables": ["orders"],
                "deny_columns": ["customer.city"],
                "mask_columns": ["customer.name"],
            }
        },
    )
    dbs = Databases(settings)
    try:
        text = schema_text(dbs.get("shop"), settings.engine)
    finally:
        dbs.close()
    assert "CREATE TABLE customer" in text and "3 example rows from table customer" in text
    assert "orders" not in text and "city" not in text and "Lisbon" not in text
    assert "Customer 1" not in text and "C***" in text  # masked as in any answer


# ---------------------------------------------------------------------------------------------
# two modes, same questions


def test_compare_prints_both_modes_and_the_questions_where_they_differ(dataset, capsys, endpoint, tmp_path):
    endpoint.respond("generate", mr.writing("SELECT COUNT(*) FROM customer"))
    endpoint.respond("revise", mr.fixing("SELECT COUNT(*) FROM customer"))
    plain_model(
        endpoint,
        {"How many customers": "SELECT COUNT(*) FROM orders", "What is the total amount": JOIN_SQL},
    )
    details = tmp_path / "both.jsonl"
    argv = ["--dataset", str(dataset), "--mode", "llm", "--compare", "plain", "--limit", "2"]
    assert main([*argv, "--details", str(details), "--quiet"]) == 0
    text = capsys.readouterr().out

    assert "== llm mode ==" in text and "== plain mode ==" in text
    table = text[text.index("EX (correct / questions)") :].splitlines()[0]
    assert table.split()[-2:] == ["50.0%", "50.0%"]
    wins = text[text.index("llm right, plain not (1):") : text.index("plain right, llm not (1):")]
    assert "[shop] How many customers are there?" in wins
    assert "plain    wrong      SELECT COUNT(*) FROM orders" in wins
    losses = text[text.index("plain right, llm not (1):") :]
    assert "What is the total amount of orders per city?" in losses
    assert "llm      wrong" in losses and "plain    right      SELECT c.city, SUM(o.amount)" in losses

    lines = [json.loads(x) for x in details.read_text().splitlines()]
    assert Counter(x["mode"] for x in lines) == {"llm": 2, "plain": 2}
    plain_q2 = next(x for x in lines if x["mode"] == "plain" and "per city" in x["question"])
    assert plain_q2["correct"] and plain_q2["sql"].startswith("SELECT c.city") and plain_q2["gold_sql"]
    assert plain_q2["result"]["row_count"] == 3 and plain_q2["result"]["columns"] == ["city", "total"]
    assert plain_q2["llm_calls"] == 1 and plain_q2["tokens"] > 0
    assert all(x["llm_calls"] >= 1 for x in lines if x["mode"] == "llm")


def test_compare_json_has_both_figures_and_the_differences(dataset, capsys, endpoint):
    endpoint.respond("generate", mr.writing("SELECT COUNT(*) FROM customer"))
    endpoint.respond("revise", mr.fixing("SELECT COUNT(*) FROM customer"))
    plain_model(endpoint, {"How many customers": "SELECT COUNT(*) FROM customer", "What is": JOIN_SQL})
    out = run_json(capsys, str(dataset), "--mode", "llm", "--compare", "plain", "--limit", "2")
    assert out["mode"] == "llm" and out["compare"]["mode"] == "plain"
    assert out["correct"] == 1 and out["compare"]["correct"] == 2
    c = out["comparison"]
    assert c["both_right"] == 1 and c["wins"] == [] and len(c["losses"]) == 1
    loss = c["losses"][0]
    assert (
        loss["right"] == "plain" and loss["plain"]["outcome"] == "right" and loss["llm"]["outcome"] == "wrong"
    )
    assert c["needless_asks"] == 0


def result(q: Question, mode: str, status: str, correct: bool = False) -> Result:
    return Result(q=q, status=status, correct=correct, ms=1, engine_ms=1, llm_calls=1, tokens=1, mode=mode)


def test_a_needless_ask_is_a_question_asked_back_that_the_baseline_got_right():
    qs = [Question("db", f"q{i}", "SELECT 1") for i in range(4)]
    askbase = [
        result(qs[0], "llm", "clarify"),  # the baseline answered it right: needless
        result(qs[1], "llm", "clarify"),  # the baseline got it wrong too: asking was fair
        result(qs[2], "llm", "answer", correct=True),
        result(qs[3], "llm", "answer"),
    ]
    plain = [
        result(qs[0], "plain", "answer", correct=True),
        result(qs[1], "plain", "answer"),
        result(qs[2], "plain", "error"),
        result(qs[3], "plain", "answer", correct=True),
    ]
    c = compare(askbase, plain)
    assert [d.q.question for d in c.needless_asks] == ["q0"]
    assert [d.q.question for d in c.wins] == ["q2"] and [d.q.question for d in c.losses] == ["q0", "q3"]
    assert (c.both_right, c.both_wrong) == (0, 1)
    assert c.to_json(questions=4)["needless_ask_rate"] == 0.25


# ---------------------------------------------------------------------------------------------
# the sample


def pool() -> list[Question]:
    sizes = {"big": 30, "mid": 20, "small": 5, "tiny": 2}
    return [Question(db, f"{db} question {i}", "SELECT 1") for db, n in sizes.items() for i in range(n)]


def test_the_sample_is_stratified_over_databases():
    qs = pool()
    sample = stratified_sample(qs, 20, seed=3)  # shares of 57: 10.5, 7.0, 1.8, 0.7
    assert len(sample) == len(set(sample)) == 20
    assert Counter(q.db_id for q in sample) == {"big": 10, "mid": 7, "small": 2, "tiny": 1}
    assert sample == [q for q in qs if q in sample]  # in the dataset's order
    few = stratified_sample(qs, 2, seed=3)
    assert len({q.db_id for q in few}) == 2  # fewer than the databases: one each from n of them
    assert stratified_sample(qs, 100, seed=3) == qs


def test_the_sample_is_named_by_its_seed():
    qs = pool()
    assert stratified_sample(qs, 19, seed=7) == stratified_sample(qs, 19, seed=7)
    assert len({tuple(q.question for q in stratified_sample(qs, 19, seed=s)) for s in range(5)}) == 5


def test_sample_on_the_command_line(dataset, capsys, tmp_path):
    picked = []
    for _ in range(2):
        details = tmp_path / "d.jsonl"
        out = run_json(capsys, str(dataset), "--sample", "3", "--seed", "11", "--details", str(details))
        assert out["questions"] == 3 and out["sample"] == {"n": 3, "seed": 11}
        picked.append([json.loads(x)["gold_sql"] for x in details.read_text().splitlines()])
    assert picked[0] == picked[1]
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert "stratified over databases" in help_text and "--seed" in help_text


def test_a_folder_of_question_lists_runs_as_a_dataset(tmp_path, capsys):
    sets = tmp_path / "fresh"
    sets.mkdir()
    (sets / "demo.json").write_text(
        json.dumps(
            [
                {
                    "db_id": "demo",
                    "question": "How many clients are there?",
                    "gold_sql": "SELECT COUNT(*) FROM client",
                    "shape": "count",
                },
                {
                    "db_id": "demo",
                    "question": "How many payments are there?",
                    "gold_sql": "SELECT COUNT(*) FROM client",
                    "shape": "count",
                },
            ]
        )
    )
    out = run_json(capsys, str(sets), "--mode", "keyword")
    assert (
        out["questions"] == 2 and out["answered"] == 2 and out["correct"] == 1
    )  # the second gold is another count
    assert out["per_category"]["count"]["questions"] == 2
