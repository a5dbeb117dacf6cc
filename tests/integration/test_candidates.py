"""LLM mode as issue 13 builds it: the whole schema in front of the writer, the join recipe as a
hint, two candidates in one reply, chosen by running them.

The real pipeline on real SQLite databases, the real `openai` client against the scripted model
server; every answer is checked against SQL written by hand, and every LLM call the fake server
records is counted.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from core.askbase import Askbase
from core.clarify.policy import exchange_for
from core.clarify.transcript import Transcript
from core.llm import LLM
from core.settings import load_settings
from tests.clarify_fixtures import BY_CUSTOMER, BY_SUPPLIER, LYON, rows, script_two_readings, shop_db
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


def hand(demo_var: Path, sql: str) -> list[list[object]]:
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        return [list(r) for r in conn.execute(sql).fetchall()]


def got(outcome) -> list[list[object]]:
    return [list(r) for r in outcome.rows]


@pytest.fixture
def app(engine_settings, llm_settings):
    app = Askbase(engine_settings, llm=LLM(llm_settings))
    yield app
    app.close()


def values_section(prompt: str) -> str:
    """The prompt's hints on stored values, as the model reads them."""
    found = re.search(r"### Values found in the data\n(.*?)(\n###|\Z)", prompt, re.S)
    return found.group(1) if found else ""


# ---------------------------------------------------------------- base tables, recipe, one call

NO_PAYMENT = (
    "SELECT c.name FROM client AS c WHERE NOT EXISTS (SELECT 1 FROM payment AS p WHERE p.client_id = c.id)"
)
NO_PAYMENT_LEFT = "SELECT c.name FROM client c LEFT JOIN payment p ON p.client_id = c.id WHERE p.id IS NULL"


def test_clients_with_no_payment_are_answered_over_the_base_tables_in_one_call(app, fake_llm, demo_var):
    fake_llm.respond("generate", mr.writing(NO_PAYMENT, NO_PAYMENT_LEFT, task="Clients with no payment"))
    outcome = app.ask("Which clients have no payment?")
    assert outcome.status == "answer", outcome.error
    want = hand(demo_var, NO_PAYMENT)
    assert len(want) == 16 and sorted(got(outcome)) == sorted(want)
    assert "NOT EXISTS" in outcome.sql.upper()
    # the writer saw both base tables (not one inner-join view that has no client without payments)
    system = fake_llm.calls("generate")[0].system
    assert "CREATE TABLE client" in system and "CREATE TABLE payment" in system
    assert "NOT EXISTS" in system  # the analyst's advice for "no X"
    # two agreeing candidates: answered with the one call, no judge, no revision
    assert [r.task for r in fake_llm.requests] == ["generate"]
    assert outcome.trace.llm_calls == 1
    select = next(s for s in outcome.trace.stages if s.name == "select")
    assert select.outputs["decision"] == "agree"


DEV_CLIENTS = (
    "SELECT DISTINCT client.name FROM client JOIN pool_client ON pool_client.client_id = client.id "
    "JOIN resource_pool ON resource_pool.id = pool_client.pool_id "
    "JOIN datacenter ON datacenter.id = resource_pool.dc_id WHERE datacenter.name LIKE 'dev%'"
)


def test_a_query_over_the_recipe_is_expanded_to_base_tables_and_answers(app, fake_llm, demo_var):
    # one ```sql block only: one candidate, still answered
    fake_llm.respond(
        "generate", mr.writing("SELECT DISTINCT client_name FROM {recipe} WHERE datacenter_name LIKE 'dev%'")
    )
    outcome = app.ask("Which clients use datacenters whose name starts with dev?")
    assert outcome.status == "answer", outcome.error
    assert sorted(got(outcome)) == sorted(hand(demo_var, DEV_CLIENTS))
    recipe = mr.recipe_name(fake_llm.calls("generate")[0].body)
    assert recipe.lower() not in outcome.sql.lower()  # the database never sees the recipe's name
    assert "pool_client" in outcome.sql and "datacenter" in outcome.sql
    system = fake_llm.calls("generate")[0].system
    assert f"WITH {recipe} AS (" in system and "grain:" in system
    assert outcome.trace.llm_calls == 1


def test_a_failing_candidate_is_outvoted_by_the_one_that_runs_without_a_revision(app, fake_llm, demo_var):
    fake_llm.respond(
        "generate", mr.writing("SELECT COUNT(*) FROM clients", "SELECT COUNT(*) AS clients FROM client")
    )
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and got(outcome) == hand(demo_var, "SELECT COUNT(*) FROM client")
    assert fake_llm.calls("revise") == [] and outcome.trace.llm_calls == 1
    select = next(s for s in outcome.trace.stages if s.name == "select")
    assert select.outputs["decision"] == "one" and select.outputs["chosen"] == "alternative"


def test_when_both_candidates_fail_one_revision_sees_both_errors(app, fake_llm, demo_var):
    fake_llm.respond("generate", mr.writing("SELECT COUNT(nope) FROM client", "SELECT COUNT(*) FROM cliente"))
    fake_llm.respond("revise", mr.fixing("SELECT COUNT(*) FROM client"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and got(outcome) == hand(demo_var, "SELECT COUNT(*) FROM client")
    revisions = fake_llm.calls("revise")
    assert len(revisions) == 1
    assert "nope" in revisions[0].user and "cliente" in revisions[0].user
    assert "CREATE TABLE client" in revisions[0].system  # the reviser sees the schema, not a view
    assert outcome.trace.llm_calls == 2


def test_a_reply_cut_off_at_the_token_limit_runs_only_its_whole_candidate(app, fake_llm, demo_var):
    whole = mr.candidates("SELECT COUNT(*) FROM client", "SELECT COUNT(*) FROM client WHERE id > 10")
    cut = whole[: whole.index("WHERE id") + 5]  # the alternative stops mid-query, fence unclosed
    fake_llm.script("generate", Reply(content=cut, finish_reason="length"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and got(outcome) == hand(demo_var, "SELECT COUNT(*) FROM client")
    written = next(s for s in outcome.trace.stages if s.name == "generate")
    assert len(written.outputs["candidates"]) == 1 and "cut" in written.outputs


def test_a_reply_with_bare_sql_and_no_fence_still_answers(app, fake_llm, demo_var):
    fake_llm.script("generate", "Task: count\nSELECT COUNT(*) AS n FROM client;")
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and got(outcome) == hand(demo_var, "SELECT COUNT(*) FROM client")


# ---------------------------------------------------------------- disagreement: judge, or ask


def llm_app(path: Path, tmp_path: Path, llm_settings, **engine) -> Askbase:
    """Askbase in LLM mode (no keyword fallback) over one SQLite database, its default."""
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        databases={path.stem: {"url": f"sqlite:///{path}"}},
        default_db=path.stem,
        engine={"fallback_to_keyword": False, **engine},
    )
    return Askbase(settings, llm=LLM(llm_settings))


def shop_app(tmp_path: Path, llm_settings, **engine) -> Askbase:
    return llm_app(shop_db(tmp_path / "shop.sqlite"), tmp_path, llm_settings, **engine)


def test_two_readings_with_different_results_are_asked_and_the_choice_runs_its_query(
    tmp_path, fake_llm, llm_settings
):
    script_two_readings(fake_llm)
    app = shop_app(tmp_path, llm_settings)
    path = tmp_path / "shop.sqlite"
    first = app.ask(LYON)
    assert first.status == "clarify", first.error
    c = first.clarification
    assert c.question == "Orders from Lyon: whose city should be Lyon?"
    customers, suppliers = rows(path, BY_CUSTOMER)[0][0], rows(path, BY_SUPPLIER)[0][0]
    assert customers != suppliers
    # two buttons, each with what its reading returns
    assert [o.label for o in c.options] == [
        f"the customer's city → {customers}",
        f"the supplier's city → {suppliers}",
    ]
    judged = fake_llm.calls("judge")[0].user
    assert "Query A" in judged and "Query B" in judged and "supplier is in Lyon" in judged
    assert [r.task for r in fake_llm.requests] == ["generate", "judge"]

    chosen = app.ask(LYON, transcript=Transcript().plus(exchange_for(c, option=1)))
    assert chosen.status == "answer" and got(chosen) == [[suppliers]]
    assert "suppliers" in chosen.sql
    assert len(fake_llm.requests) == 2  # choosing runs that reading's query: no new call


def test_a_judge_that_finds_one_reading_wrong_answers_with_the_other(tmp_path, fake_llm, llm_settings):
    script_two_readings(fake_llm, ambiguous=False)
    app = shop_app(tmp_path, llm_settings)
    outcome = app.ask(LYON)
    assert outcome.status == "answer"
    assert got(outcome) == rows(tmp_path / "shop.sqlite", BY_SUPPLIER)  # the judge chose B
    assert outcome.trace.llm_calls == 2


def test_the_judge_is_asked_for_unit_tests_and_they_are_kept_beside_its_pick(
    tmp_path, fake_llm, llm_settings
):
    """CHESS's unit tests in one call: the prompt asks for them, the reply's tests (here one as an
    object, the JSON after a paragraph of prose) are kept in the trace, and its pick is the answer."""
    script_two_readings(fake_llm)
    verdict = {
        "tests": ["only orders whose supplier is in Lyon", {"test": "one number, the count"}],
        "choice": "B",
        "ambiguous": False,
        "why": "B passes both tests; A filters the customer's city.",
    }
    fake_llm.respond("judge", lambda body: Reply(content=mr.json_with_prose(verdict)))
    app = shop_app(tmp_path, llm_settings)
    outcome = app.ask(LYON)
    assert outcome.status == "answer" and got(outcome) == rows(tmp_path / "shop.sqlite", BY_SUPPLIER)
    judge = next(s for s in outcome.trace.stages if s.name == "judge")
    assert judge.outputs["tests"][0] == "only orders whose supplier is in Lyon"
    assert "one number" in judge.outputs["tests"][1]
    assert "unit tests" in fake_llm.calls("judge")[0].system


def test_with_clarifying_off_the_judges_pick_is_the_answer(tmp_path, fake_llm, llm_settings):
    script_two_readings(fake_llm)
    app = shop_app(tmp_path, llm_settings, clarify="off")
    outcome = app.ask(LYON)
    assert outcome.status == "answer" and got(outcome) == rows(tmp_path / "shop.sqlite", BY_SUPPLIER)
    judge = next(s for s in outcome.trace.stages if s.name == "judge")
    assert "off" in judge.outputs["not_asked"]


def test_a_failed_judge_call_still_answers_with_the_primary(tmp_path, fake_llm, llm_settings):
    script_two_readings(fake_llm)
    fake_llm.respond("judge", lambda body: Reply(status=500))
    app = shop_app(tmp_path, llm_settings)
    outcome = app.ask(LYON)
    assert outcome.status == "answer" and got(outcome) == rows(tmp_path / "shop.sqlite", BY_CUSTOMER)


def test_a_clear_question_is_never_asked_back(tmp_path, fake_llm, llm_settings):
    fake_llm.respond(
        "generate",
        mr.writing("SELECT COUNT(*) FROM customers", "SELECT COUNT(id) FROM customers"),
    )
    app = shop_app(tmp_path, llm_settings)
    outcome = app.ask("How many customers are there?")
    assert outcome.status == "answer" and fake_llm.calls("judge") == [] and fake_llm.calls("clarify") == []


# ---------------------------------------------------------------- value hints that never mislead


def people_db(path: Path) -> Path:
    """Customers with first names and 2-letter state codes: 'Al' is a name here, 'AL' a state."""
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE customers (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL,
                last_name TEXT NOT NULL, state TEXT NOT NULL);
            CREATE TABLE orders (id INTEGER PRIMARY KEY,
                customer_id INTEGER NOT NULL REFERENCES customers (id), amount REAL NOT NULL);
            """
        )
        people = [
            ("Al", "Brooks", "CA"),
            ("Alice", "Moreau", "AL"),
            ("Bob", "Stone", "AL"),
            ("Al", "Nguyen", "TX"),
            ("Dana", "Reyes", "AK"),
            ("Eve", "Lund", "AZ"),
        ]
        for i, (first, last, state) in enumerate(people, 1):
            conn.execute("INSERT INTO customers VALUES (?, ?, ?, ?)", (i, first, last, state))
        for i in range(1, 25):
            conn.execute("INSERT INTO orders VALUES (?, ?, ?)", (i, 1 + i % len(people), 10.0 * i))
    return path


AL_TOTAL = (
    "SELECT SUM(o.amount) AS total FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE c.first_name = 'Al'"
)


def test_a_first_name_al_is_hinted_as_a_name_never_as_the_state_code_al(tmp_path, fake_llm, llm_settings):
    path = people_db(tmp_path / "people.sqlite")
    app = llm_app(path, tmp_path, llm_settings)
    fake_llm.respond("generate", mr.writing(AL_TOTAL, task="Total order amount of Al"))
    outcome = app.ask("What is the total amount of the orders placed by Al?")
    assert outcome.status == "answer" and got(outcome) == rows(path, AL_TOTAL)
    hints = values_section(fake_llm.calls("generate")[0].system)
    assert "customers.first_name = 'Al'" in hints
    assert "state" not in hints  # 'Al' is typed as a name: the state code 'AL' is not a reading of it
    recipe = next(s for s in outcome.trace.stages if s.name == "recipe")
    assert any("customers.state = 'AL'" in d and "case" in d for d in recipe.outputs["not_hinted"])
    # typed as a code, it is one
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM customers WHERE state = 'AL'"))
    app.ask("How many customers live in AL?")
    assert "customers.state = 'AL'" in values_section(fake_llm.calls("generate")[-1].system)
    app.close()


def routes_db(path: Path) -> Path:
    """Airlines whose call signs include CITY and HAS, a storm called Two and an aircraft sequence
    '2': stored values that ordinary words and quantities of a question match."""
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE airports (apid INTEGER PRIMARY KEY, name TEXT, city TEXT, iata TEXT);
            CREATE TABLE airlines (alid INTEGER PRIMARY KEY, name TEXT, callsign TEXT);
            CREATE TABLE routes (rid INTEGER PRIMARY KEY, alid INTEGER REFERENCES airlines (alid),
                src_apid INTEGER REFERENCES airports (apid), src_ap TEXT);
            CREATE TABLE storm (storm_id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO airports VALUES (1, 'Hassi R''Mel', 'Tilrempt', 'HAS'), (2, 'Heathrow', 'London', 'LHR'),
                (3, 'Kastrup', 'Copenhagen', 'CPH');
            INSERT INTO airlines VALUES (1, 'City Airways', 'CITY'), (2, 'British Airways', 'SPEEDBIRD'),
                (3, 'Cloud Air', 'CLOUD RUNNER'), (4, 'Hassan Air', 'HAS');
            INSERT INTO routes VALUES (1, 1, 2, 'LHR'), (2, 2, 2, 'LHR'), (3, 1, 3, 'CPH'), (4, 2, 1, 'HAS');
            INSERT INTO storm VALUES (1, 'One'), (2, 'Two'), (3, 'Three');
            CREATE TABLE aircraft (aircraft_code TEXT PRIMARY KEY, aircraft_code_sequence TEXT, range_miles INTEGER);
            INSERT INTO aircraft VALUES ('733', '1', 2000), ('734', '2', 2500), ('735', '3', 3000);
            """
        )
    return path


MOST_ROUTES = (
    "SELECT a.name, a.city, a.apid FROM airports a JOIN routes r ON r.src_apid = a.apid "
    "GROUP BY a.apid ORDER BY COUNT(*) DESC LIMIT 1"
)


def test_function_words_and_column_names_are_not_hinted_as_stored_values(tmp_path, fake_llm, llm_settings):
    path = routes_db(tmp_path / "routes.sqlite")
    app = llm_app(path, tmp_path, llm_settings)
    fake_llm.respond("generate", mr.writing(MOST_ROUTES, task="The airport with the most routes"))
    outcome = app.ask("Which airport has the most outgoing routes? Give its name, city, and id.")
    assert outcome.status == "answer" and got(outcome) == rows(path, MOST_ROUTES)
    # 'has' is no airport code, 'city' the airports' column rather than a call sign, 'id' no code
    assert values_section(fake_llm.calls("generate")[0].system) == ""
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM airlines", task="Airlines"))
    app.ask("How many airlines have more than two routes?")
    assert values_section(fake_llm.calls("generate")[-1].system) == ""  # no storm called 'Two'
    fake_llm.respond(
        "generate", mr.writing("SELECT aircraft_code FROM aircraft ORDER BY range_miles DESC LIMIT 2")
    )
    app.ask("What are the top 2 aircraft by range?")
    assert values_section(fake_llm.calls("generate")[-1].system) == ""  # 2 is how many, not a sequence '2'
    # typed as a value, the same words are hinted
    fake_llm.respond("generate", mr.writing("SELECT name FROM airlines WHERE callsign = 'CITY'"))
    app.ask("Which airline has the call sign CITY?")
    assert "airlines.callsign = 'CITY'" in values_section(fake_llm.calls("generate")[-1].system)
    app.close()
