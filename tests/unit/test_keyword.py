"""Keyword mode on the demo database: answers with no LLM, checked against SQL written by hand."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from core.askbase import Askbase
from core.clarify.policy import exchange_for
from core.clarify.transcript import Transcript
from core.keyword import Reading
from core.pipeline import answer
from core.request import Request
from tests.conftest import ENGINES, settings_on

# The SQL shapes keyword mode writes (counts, groups, top-n, joins that repeat rows, date ranges,
# anti-joins, HAVING, ratios) are also answered on the DuckDB copy of the demo: the tests marked
# ON_EACH_ENGINE. The rest are about reading the question, the same on every engine.
ON_EACH_ENGINE = pytest.mark.parametrize("app", ENGINES, indirect=True)


@pytest.fixture
def app(settings, request):
    """Askbase over the demo: on SQLite, or on each engine of ENGINES for ON_EACH_ENGINE tests."""
    app = Askbase(settings_on(settings, getattr(request, "param", "sqlite"), request))
    # the isolated environment has no OPENAI_API_KEY: no LLM
    assert app.llm is None
    yield app
    app.close()


def rows(outcome) -> list[tuple]:
    return [tuple(r) for r in outcome.rows]


def same_rows(got: list[tuple], want: list[tuple]) -> bool:
    """Equal as multisets, floats equal to 9 significant digits (each engine adds them up in its
    own order: a sum may differ in its last bits)."""

    def same(a: object, b: object) -> bool:
        if isinstance(a, float) and isinstance(b, int | float):
            return math.isclose(a, b, rel_tol=1e-9)
        return a == b

    left = list(want)
    for row in got:
        match = next((i for i, w in enumerate(left) if len(w) == len(row) and all(map(same, row, w))), None)
        if match is None:
            return False
        left.pop(match)
    return not left


def ask(app, question: str, **request) -> object:
    return answer(app.database("demo"), Request(question, **request), app.settings.engine, None)


def chosen(clarification, option) -> Transcript:
    """The transcript after the person picks `option`, as the adapters keep it."""
    return Transcript().plus(exchange_for(clarification, option=clarification.options.index(option)))


@ON_EACH_ENGINE
def test_quick_start_question_is_answered_without_a_key(app, hand):
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and outcome.mode == "keyword"
    assert rows(outcome) == hand("SELECT COUNT(*) FROM client")
    assert "Counted clients" in outcome.interpretation
    assert "300" in outcome.answer


def test_a_loosely_typed_value_and_a_code_meaning_become_filters(app, hand):
    outcome = app.ask("How many active clients are in zurich?")
    assert outcome.status == "answer"
    want = hand(
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
        "WHERE client.status = 'ACT' AND location.city = 'Zürich'"
    )
    assert rows(outcome) == want and want[0][0] > 0
    assert "'ACT' (active)" in outcome.interpretation and "'Zürich'" in outcome.interpretation


@ON_EACH_ENGINE
def test_per_group_aggregates(app, hand):
    per_country = app.ask("How many clients per country?")
    assert same_rows(
        rows(per_country),
        hand(
            "SELECT location.country, COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
            "GROUP BY location.country"
        ),
    )
    cost = app.ask("total cost per segment")
    assert same_rows(
        rows(cost),
        hand(
            "SELECT client.segment, SUM(usage.cost) FROM usage JOIN client ON usage.client_id = client.id "
            "GROUP BY client.segment"
        ),
    )
    assert cost.columns == ("segment", "total_cost")


@ON_EACH_ENGINE
def test_top_n_ranks_an_entity_by_the_total_of_its_rows(app, hand):
    outcome = app.ask("top 5 clients by cpu hours")
    want = hand(
        "SELECT client.name, SUM(usage.cpu_hours) AS h FROM usage JOIN client ON usage.client_id = client.id "
        "GROUP BY client.id ORDER BY h DESC LIMIT 5"
    )
    assert [r[0] for r in rows(outcome)] == [r[0] for r in want]
    assert same_rows(rows(outcome), want)
    assert "total" in outcome.interpretation and "first 5" in outcome.interpretation


@ON_EACH_ENGINE
def test_count_over_a_join_that_repeats_rows_counts_each_thing_once(app, hand):
    outcome = app.ask("Top 3 datacenters by number of hosts")
    want = hand(
        "SELECT datacenter.name, COUNT(*) AS n FROM compute JOIN datacenter ON compute.dc_id = datacenter.id "
        "GROUP BY datacenter.id ORDER BY n DESC LIMIT 3"
    )
    assert [r[1] for r in rows(outcome)] == [r[1] for r in want]


@ON_EACH_ENGINE
def test_years_and_rolling_periods_become_date_ranges(app, hand):
    failed = app.ask("How many payments failed in 2025?")
    assert rows(failed) == hand(
        "SELECT COUNT(*) FROM payment WHERE status = 'failed' AND paid_on >= '2025-01-01' AND paid_on < '2026-01-01'"
    )
    recent = ask(app, "How many payments in the last 30 days?", today=dt.date(2026, 6, 30))
    assert rows(recent) == hand("SELECT COUNT(*) FROM payment WHERE paid_on >= '2026-05-31'")
    assert "2026-05-31" in recent.interpretation


def test_comparison_on_a_numeric_column(app, hand):
    outcome = app.ask("How many hosts have more than 64 cpu cores?")
    assert rows(outcome) == hand("SELECT COUNT(*) FROM compute WHERE cpu_cores > 64")


def test_list_shows_the_entity_names(app, hand):
    outcome = app.ask("list the clients in munchen")
    assert same_rows(
        rows(outcome),
        hand(
            "SELECT client.name FROM client JOIN location ON client.loc_id = location.id "
            "WHERE location.city = 'München'"
        ),
    )


@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("What is the ratio of active to churned clients?", "ratio"),
        ("Which clients have no payments in 2025?", "negation"),
        ("How many unicorns are there?", "unicorns"),
    ],
)
def test_declines_rather_than_guesses_and_says_what_it_understood(app, question, says):
    outcome = app.ask(question)
    assert outcome.status == "error" and outcome.error_kind == "keyword_abstain"
    assert outcome.mode == "keyword" and not outcome.rows
    assert says in outcome.error
    assert "Try" in outcome.error  # a rephrasing to try


@ON_EACH_ENGINE
def test_things_with_no_rows_of_another_table(app, hand):
    outcome = app.ask("Which clients have no payments?")
    assert outcome.status == "answer", outcome.error
    want = "SELECT name FROM client c WHERE NOT EXISTS (SELECT 1 FROM payment p WHERE p.client_id = c.id)"
    assert same_rows(rows(outcome), hand(want))
    assert "has no payments" in outcome.interpretation
    outcome = app.ask("How many clients have no usage?")
    assert outcome.status == "answer", outcome.error
    assert same_rows(
        rows(outcome), hand("SELECT COUNT(*) FROM client WHERE id NOT IN (SELECT client_id FROM usage)")
    )


def test_not_a_stored_value_is_every_other_value(app, hand):
    outcome = app.ask("Which clients are not active?")
    assert outcome.status == "answer", outcome.error
    assert same_rows(rows(outcome), hand("SELECT name FROM client WHERE status <> 'ACT'"))
    assert "is not" in outcome.interpretation


def test_a_value_of_two_columns_is_asked_back_and_the_choice_answers(app, hand):
    first = ask(app, "How many clients are in Singapore?")
    assert first.status == "clarify" and first.clarification.kind == "AmbValue"
    labels = [o.label for o in first.clarification.options]
    assert any("city" in label for label in labels) and any("country" in label for label in labels)
    country = next(o for o in first.clarification.options if "country" in o.label)
    assert Reading.decode(country.value) == Reading("Singapore", "location", "country", "Singapore")
    second = ask(app, "How many clients are in Singapore?", transcript=chosen(first.clarification, country))
    assert second.status == "answer"
    assert rows(second) == hand(
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.country = 'Singapore'"
    )


def test_two_date_columns_are_asked_back_and_the_choice_answers(app, hand):
    first = ask(app, "How many clients in 2024?")
    assert first.status == "clarify" and first.clarification.kind == "AmbTableColumn"
    signup = next(o for o in first.clarification.options if "signup" in o.label)
    second = ask(app, "How many clients in 2024?", transcript=chosen(first.clarification, signup))
    assert rows(second) == hand(
        "SELECT COUNT(*) FROM client WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01'"
    )


def test_the_question_words_pick_the_date_column(app, hand):
    outcome = app.ask("How many clients signed up in 2024?")
    assert outcome.status == "answer"
    assert rows(outcome) == hand(
        "SELECT COUNT(*) FROM client WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01'"
    )


def test_every_stage_is_in_the_trace(app):
    outcome = app.ask("total cost per segment")
    names = [s.name for s in outcome.trace.stages]
    assert names == ["retrieve", "interpret", "view", "confidence", "compile", "expand", "guard", "execute"]
    assert outcome.trace.llm_calls == 0
    assert outcome.sql.rstrip().upper().endswith("LIMIT 1000")  # the guard bounds every query


def test_reading_round_trip_and_foreign_option_values():
    r = Reading("Frankfurt", "datacenter", "name", "frankfurt", "contains")
    assert Reading.decode(r.encode()) == r
    assert Reading.decode("some free text") is None
    assert Reading.decode("reading:{not json") is None


@ON_EACH_ENGINE
def test_count_of_entities_with_more_than_n_related_rows(app, hand):
    outcome = app.ask("How many clients have more than 10 payments?")
    assert rows(outcome) == hand(
        "SELECT COUNT(*) FROM (SELECT client_id FROM payment GROUP BY client_id HAVING COUNT(*) > 10)"
    )
    listed = app.ask("Which clients have more than 20 payments?")
    assert same_rows(
        rows(listed),
        hand(
            "SELECT client.name FROM client JOIN payment ON payment.client_id = client.id "
            "GROUP BY client.id HAVING COUNT(*) > 20"
        ),
    )


@ON_EACH_ENGINE
def test_ratio_of_two_numbers_of_each_row(app, hand):
    outcome = app.ask("ratio of memory gb to cpu cores for each host")
    assert same_rows(
        rows(outcome),
        hand("SELECT hostname, CAST(memory_gb AS REAL) / NULLIF(cpu_cores, 0) FROM compute"),
    )
    assert "ratio of memory gb to cpu cores" in outcome.interpretation


def test_a_ratio_of_counts_is_declined(app):
    outcome = app.ask("What is the ratio of enterprise clients to startup clients?")
    assert outcome.status == "error" and outcome.error_kind == "keyword_abstain"
