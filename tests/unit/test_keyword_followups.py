"""Follow-ups in keyword mode, through the real entry `Askbase.ask` with the thread's history: a
follow-up is a change to the last reading (a filter, a period, a grouping) and answers about the
same things; one it cannot place as such a change says that it needs an LLM."""

from __future__ import annotations

from collections import Counter

import pytest

from core.askbase import Askbase
from core.conversation import Turn


@pytest.fixture
def app(settings):
    app = Askbase(settings)  # no OPENAI_API_KEY in the isolated environment: keyword mode
    assert app.llm is None
    yield app
    app.close()


def norm(rs) -> Counter:
    """Rows as a multiset, sums compared to 4 decimals."""
    return Counter(tuple(round(v, 4) if isinstance(v, float) else v for v in r) for r in rs)


def rows(outcome) -> Counter:
    return norm(outcome.rows)


class Thread:
    """A conversation as the Slack app and the console keep it: the answered turns, in order."""

    def __init__(self, app: Askbase) -> None:
        self.app = app
        self.turns: list[Turn] = []

    def ask(self, question: str):
        outcome = self.app.ask(question, history=tuple(self.turns))
        if outcome.status == "answer":
            self.turns.append(
                Turn(question, outcome.sql, tuple(outcome.columns), outcome.row_count, outcome.answer)
            )
        return outcome


SEGMENTS_IN_GERMANY = (
    "SELECT client.segment, COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
    "WHERE location.country = 'Germany' GROUP BY client.segment"
)


def test_a_follow_up_adding_a_filter_answers_the_filtered_question(app, hand):
    thread = Thread(app)
    assert thread.ask("How many clients per segment?").status == "answer"
    outcome = thread.ask("and only those in Germany?")
    assert outcome.status == "answer", outcome.error
    assert outcome.mode == "keyword"
    assert rows(outcome) == norm(hand(SEGMENTS_IN_GERMANY))  # clients, still per segment
    assert outcome.interpretation.startswith("Follow-up to 'How many clients per segment?'")


def test_a_second_follow_up_replaces_the_value_and_a_period_replaces_the_period(app, hand):
    thread = Thread(app)
    thread.ask("How many clients per segment?")
    thread.ask("and only those in Germany?")
    france = thread.ask("what about France?")
    assert rows(france) == norm(hand(SEGMENTS_IN_GERMANY.replace("Germany", "France")))

    payments = Thread(app)
    payments.ask("How many payments per month in 2025?")
    failed = payments.ask("and only the failed ones?")
    assert failed.status == "answer", failed.error
    earlier = payments.ask("what about 2024?")
    assert earlier.status == "answer", earlier.error
    assert rows(earlier) == norm(
        hand(
            "SELECT strftime('%Y-%m', paid_on), COUNT(*) FROM payment WHERE status = 'failed' "
            "AND paid_on >= '2024-01-01' AND paid_on < '2025-01-01' GROUP BY 1",
        )
    )


def test_a_follow_up_changing_the_grouping_keeps_the_measure_and_the_filters(app, hand):
    thread = Thread(app)
    thread.ask("total cost per segment")
    thread.ask("and only the active clients")
    outcome = thread.ask("per country instead")
    assert outcome.status == "answer", outcome.error
    assert rows(outcome) == norm(
        hand(
            "SELECT location.country, SUM(usage.cost) FROM usage JOIN client ON usage.client_id = client.id "
            "JOIN location ON client.loc_id = location.id WHERE client.status = 'ACT' GROUP BY location.country",
        )
    )


@pytest.mark.parametrize(
    ("follow_up", "word"),
    [
        ("and the top 5 by cost?", "top"),
        ("and only those not in Germany?", "not in"),
        ("what is the average amount?", "average"),
        ("and only those on the moon?", "moon"),
    ],
)
def test_a_follow_up_it_cannot_place_says_it_needs_an_llm(app, follow_up, word):
    thread = Thread(app)
    thread.ask("How many clients per segment?")
    outcome = thread.ask(follow_up)
    assert outcome.status == "error" and outcome.error_kind == "keyword_abstain" and not outcome.rows
    assert "follow-up to 'How many clients per segment?'" in outcome.error
    assert f"'{word}'" in outcome.error and "need an LLM" in outcome.error


def test_an_answer_keyword_mode_did_not_give_is_not_continued(app):
    llm_turn = Turn("How many clients per segment?", "SELECT segment, COUNT(*) FROM client GROUP BY segment")
    outcome = app.ask("and only those in Germany?", history=(llm_turn,))
    assert outcome.status == "error" and outcome.error_kind == "keyword_abstain" and not outcome.rows
    assert "need an LLM" in outcome.error


def test_a_question_of_its_own_in_a_thread_is_read_on_its_own(app, hand):
    thread = Thread(app)
    thread.ask("How many clients per segment?")
    outcome = thread.ask("how many payments are there?")
    assert outcome.status == "answer"
    assert rows(outcome) == norm(hand("SELECT COUNT(*) FROM payment"))


def test_a_period_said_as_a_range_replaces_the_period(app, hand):
    thread = Thread(app)
    thread.ask("How many payments per month in 2025?")
    outcome = thread.ask("between 2023 and 2024 instead")
    assert outcome.status == "answer", outcome.error
    assert rows(outcome) == norm(
        hand(
            "SELECT strftime('%Y-%m', paid_on), COUNT(*) FROM payment "
            "WHERE paid_on >= '2023-01-01' AND paid_on < '2025-01-01' GROUP BY 1"
        )
    )


def test_follow_ups_on_a_list_replace_one_value_and_add_another(app, hand):
    thread = Thread(app)
    thread.ask("list clients in Germany")
    thread.ask("what about France?")
    outcome = thread.ask("and only the enterprise ones")
    assert outcome.status == "answer", outcome.error
    assert rows(outcome) == norm(
        hand(
            "SELECT client.name FROM client JOIN location ON client.loc_id = location.id "
            "WHERE location.country = 'France' AND client.segment = 'enterprise'"
        )
    )
    assert "only where segment is 'enterprise'" in outcome.interpretation
