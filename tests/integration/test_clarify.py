"""Asking back: Sphinteract's running example, grounded questions, the settings and the rules.

The real pipeline runs against small SQLite databases with the real `openai` client talking to the
scripted model server; results are checked against SQL written by hand.
"""

from __future__ import annotations

import io
import re
import sqlite3

import pytest

from core.answer import Clarification, Option
from core.askbase import Askbase
from core.clarify.policy import exchange_for, match_words
from core.clarify.sra import summarize_review_ask
from core.clarify.transcript import Exchange, Transcript, options_key
from core.keyword import Reading
from core.llm import LLM
from core.pipeline import answer
from core.request import Request
from core.settings import load_settings
from tests.clarify_fixtures import (
    BY_CUSTOMER,
    BY_SUPPLIER,
    FIRST_ANSWER,
    GOLD,
    LOCATED_ANSWER,
    QUESTION,
    nuclear_db,
    rows,
    script_paper_model,
    shop_db,
    sra_reply,
)
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


def make_app(tmp_path, llm_settings=None, **engine):
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        databases={
            "nuclear": {"url": f"sqlite:///{nuclear_db(tmp_path / 'nuclear.sqlite')}"},
            "shop": {"url": f"sqlite:///{shop_db(tmp_path / 'shop.sqlite')}"},
        },
        engine={"fallback_to_keyword": False, **engine},
    )
    return Askbase(settings, llm=LLM(llm_settings) if llm_settings else None)


def ask(app, db: str, question: str, transcript: Transcript | None = None, **request):
    transcript = transcript or Transcript()
    req = Request(question, transcript=transcript, **request)
    return answer(app.database(db), req, app.settings.engine, app.llm)


def pick(clarification: Clarification, words: str) -> Exchange:
    index = next(i for i, o in enumerate(clarification.options) if words.lower() in o.label.lower())
    return exchange_for(clarification, option=index)


# ---------------------------------------------------------------- Example 6.1


def test_the_papers_running_example_takes_two_rounds_to_the_right_answer(tmp_path, fake_llm, llm_settings):
    script_paper_model(fake_llm)
    app = make_app(tmp_path, llm_settings)
    path = tmp_path / "nuclear.sqlite"

    first = ask(app, "nuclear", QUESTION)
    assert first.status == "answer"  # nothing in the data competes: no question before answering
    assert fake_llm.calls("clarify") == []
    assert [list(r) for r in first.rows] == [["United States", "Vallecitos"]]

    # round 1: the person rejects it; the SRA round asks about 'located' (AmbOutput)
    t = Transcript().rejecting(first.sql)
    asked = ask(app, "nuclear", QUESTION, t, after_rejection=True)
    c1 = asked.clarification
    assert asked.status == "clarify" and c1.kind == "AmbOutput" and "located" in c1.question
    assert [o.label for o in c1.options] == [
        "The country where it is built",
        LOCATED_ANSWER,
        "The name of the power plant and the country",
    ]  # the model's own "Others" is dropped: every question gets one "Other…" from the adapter
    assert first.sql in fake_llm.calls("clarify")[0].user
    t = t.plus(pick(c1, "Latitude"))
    second = ask(app, "nuclear", QUESTION, t)
    assert [list(r) for r in second.rows] == rows(
        path, GOLD.replace("ConstructionStartAt", "OperationalFrom")
    )

    # round 2: rejected again; the review sees AmbOutput resolved and asks about 'first'
    t = t.rejecting(second.sql)
    asked = ask(app, "nuclear", QUESTION, t, after_rejection=True)
    c2 = asked.clarification
    assert c2.kind == "AmbQuestion" and "first" in c2.question
    assert len(c2.options) == 3 and c2.question != c1.question
    prompt = fake_llm.calls("clarify")[-1].user
    assert first.sql in prompt and second.sql in prompt and f"answered: {LOCATED_ANSWER}" in prompt
    t = t.plus(pick(c2, "construction"))
    third = ask(app, "nuclear", QUESTION, t)
    assert [list(r) for r in third.rows] == rows(path, GOLD)
    generate = fake_llm.calls("generate")[-1].user
    assert f"answered: {FIRST_ANSWER}" in generate and second.sql in generate
    assert t.rounds == 2


# ---------------------------------------------------------------- grounded candidates, LLM mode


def script_orders(fake_llm) -> None:
    """A writer that follows the stored value it is told about; an SRA round that asks whose city."""

    def generate(body):
        values = body["messages"][0]["content"].partition("### Values found in the data")[2]
        chosen = "suppliers.city = 'Lyon'" in values and "customers.city" not in values
        return Reply(content=mr.candidates(BY_SUPPLIER if chosen else BY_CUSTOMER, task="Orders from Lyon"))

    fake_llm.respond("generate", generate)

    def clarify(body):
        prompt = body["messages"][-1]["content"]
        ids = {label.strip(): cid for cid, label in re.findall(r"(C1[ab]) ([^\[]+)\[", prompt)}
        return Reply(
            content=sra_reply(
                summary="Count orders whose city is Lyon.",
                review={"AmbValue": "Lyon is both a customer city and a supplier city"},
                ask=True,
                kind="AmbValue",
                question="Orders from Lyon: whose city should be Lyon?",
                options=[
                    {"text": "the customer's city", "candidate": ids.get("customers city is Lyon")},
                    {"text": "the supplier's city", "candidate": ids.get("suppliers city is Lyon")},
                ],
            )
        )

    fake_llm.respond("clarify", clarify)


def test_with_always_a_value_in_two_columns_is_asked_before_answering_and_the_choice_is_exact(
    tmp_path, fake_llm, llm_settings
):
    """`clarify: always` keeps Sphinteract's round before writing; with `auto` a question like
    this is asked only after writing both readings (tests/integration/test_candidates.py)."""
    script_orders(fake_llm)
    app = make_app(tmp_path, llm_settings, clarify="always")
    first = ask(app, "shop", "How many orders came from Lyon?")
    assert first.status == "clarify" and first.clarification.kind == "AmbValue"
    assert [o.label for o in first.clarification.options] == ["the customer's city", "the supplier's city"]
    supplier = first.clarification.options[1]
    assert Reading.decode(supplier.value) == Reading("Lyon", "suppliers", "city", "Lyon")
    prompt = fake_llm.calls("clarify")[0].user
    assert "customers.city = 'Lyon'" in prompt and "suppliers.city = 'Lyon'" in prompt
    assert [c.task for c in fake_llm.calls()] == ["clarify"]  # no SQL written before asking
    t = Transcript().plus(exchange_for(first.clarification, option=1))
    second = ask(app, "shop", "How many orders came from Lyon?", t)
    assert second.status == "answer"
    assert [list(r) for r in second.rows] == rows(tmp_path / "shop.sqlite", BY_SUPPLIER)
    assert len(fake_llm.calls("clarify")) == 2  # always: one more round, which found nothing new to ask
    assert second.trace.llm_calls == 2


def script_customers(fake_llm) -> None:
    fake_llm.script("generate", mr.candidates("SELECT COUNT(*) AS customers FROM customers"))


def test_a_plain_question_costs_no_extra_call_and_no_stage(tmp_path, fake_llm, llm_settings):
    script_customers(fake_llm)
    app = make_app(tmp_path, llm_settings)
    outcome = ask(app, "shop", "How many customers are there?")
    assert outcome.status == "answer"
    assert fake_llm.calls("clarify") == []
    assert "clarify" not in [s.name for s in outcome.trace.stages]


def test_always_runs_a_round_that_may_stop_and_off_never_asks(tmp_path, fake_llm, llm_settings):
    script_orders(fake_llm)
    script_customers(fake_llm)
    always = make_app(tmp_path, llm_settings, clarify="always")
    fake_llm.script("clarify", sra_reply(summary="Count customers.", ask=False))
    outcome = ask(always, "shop", "How many customers are there?")
    assert outcome.status == "answer" and len(fake_llm.calls("clarify")) == 1
    stage = next(s for s in outcome.trace.stages if s.name == "clarify")
    assert "nothing left" in stage.outputs["stopped"]

    off = make_app(tmp_path, llm_settings, clarify="off")
    outcome = ask(off, "shop", "How many orders came from Lyon?")
    assert outcome.status == "answer" and len(fake_llm.calls("clarify")) == 1


def test_a_failed_round_still_answers(tmp_path, fake_llm, llm_settings):
    script_orders(fake_llm)
    fake_llm.respond("clarify", lambda body: Reply(status=500))
    app = make_app(tmp_path, llm_settings, clarify="always")
    outcome = ask(app, "shop", "How many orders came from Lyon?")
    assert outcome.status == "answer"
    assert "error" in next(s for s in outcome.trace.stages if s.name == "clarify").outputs


# ---------------------------------------------------------------- the SRA reply, held to the rules


def sra(fake_llm, llm_settings, reply: str, transcript: Transcript | None = None, candidates=()):
    transcript = transcript or Transcript()
    fake_llm.script("clarify", reply)
    return summarize_review_ask(
        "How many orders?", "CREATE TABLE v (x INT);", transcript, candidates, LLM(llm_settings)
    )


def test_sql_in_options_other_options_and_letters_are_cleaned_up(fake_llm, llm_settings):
    result = sra(
        fake_llm,
        llm_settings,
        sra_reply(
            ask=True,
            kind="AmbColumn",
            question="Which amount should be added up?",
            options=[
                "a) the order amount",
                "b) SELECT SUM(amount) FROM orders",
                "(c) the amount after tax",
                "d) Other (please specify)",
                "e) the order amount",
            ],
        ),
    )
    c = result.clarification
    assert c.kind == "AmbTableColumn"
    assert [o.label for o in c.options] == ["the order amount", "the amount after tax"]


def test_a_question_asked_before_is_never_asked_again(fake_llm, llm_settings):
    before = Exchange(
        "Which amount should be added up?", "the order amount", "AmbTableColumn", ("the order amount", "tax")
    )
    repeat = sra_reply(
        ask=True,
        question="Which amount should be summed up?",  # a paraphrase of the earlier question
        options=["the order amount", "the amount after tax"],
    )
    result = sra(fake_llm, llm_settings, repeat, Transcript((before,)))
    assert result.clarification is None and "repeated" in result.reason

    # the same choices under a different question are the same question
    same_options = sra_reply(
        ask=True, question="Totally different words?", options=["tax", "the order amount"]
    )
    offered = ("the order amount", "tax")
    keyed = Transcript((Exchange("Which one?", "tax", "AmbValue", offered, key=options_key(offered)),))
    assert sra(fake_llm, llm_settings, same_options, keyed).clarification is None


def test_sql_in_the_question_or_one_option_left_means_no_question(fake_llm, llm_settings):
    assert (
        sra(
            fake_llm, llm_settings, sra_reply(ask=True, question="SELECT * FROM v?", options=["a", "b"])
        ).clarification
        is None
    )
    assert (
        sra(
            fake_llm, llm_settings, sra_reply(ask=True, question="Which?", options=["only one"])
        ).clarification
        is None
    )


# ---------------------------------------------------------------- keyword mode (no LLM)


def test_keyword_questions_follow_the_round_limit_and_the_off_switch(settings):
    app = Askbase(settings)
    question = "How many clients in Singapore in 2024?"
    first = ask(app, "demo", question)
    assert first.status == "clarify"
    limited = Askbase(
        settings.model_copy(update={"engine": settings.engine.model_copy(update={"clarify_max_rounds": 1})})
    )
    t = Transcript().plus(exchange_for(first.clarification, option=1))
    settled = ask(limited, "demo", question, t)
    assert settled.status == "answer" and "stopped asking" in settled.interpretation

    off = Askbase(
        settings.model_copy(update={"engine": settings.engine.model_copy(update={"clarify": "off"})})
    )
    outcome = ask(off, "demo", question)
    assert outcome.status == "answer" and "questions are off" in outcome.interpretation


def test_after_a_thumbs_down_keyword_mode_asks_about_a_near_reading_or_says_nothing_is_left(settings):
    app = Askbase(settings)
    question = "How many clients in Frankfurt?"
    first = app.ask(question)
    assert first.status == "answer" and "city" in first.interpretation
    rejected = Transcript().rejecting(first.sql)
    back = app.ask(question, transcript=rejected, after_rejection=True)
    assert back.status == "clarify" and back.mode == "keyword"
    assert back.trace.stages[0].name == "clarified"  # the rejected SQL is on record
    datacenter = next(i for i, o in enumerate(back.clarification.options) if "datacenter" in o.label)
    chosen = rejected.plus(exchange_for(back.clarification, option=datacenter))
    again = app.ask(question, transcript=chosen)
    assert again.status == "answer" and "datacenter" in again.sql.lower() and again.sql != first.sql

    plain = app.ask("How many clients are there?")
    none = app.ask(plain.question, transcript=Transcript().rejecting(plain.sql), after_rejection=True)
    assert none.status == "error" and none.error_kind == "clarify_none"
    assert "nothing else to ask" in none.error


def test_own_words_pick_the_option_they_point_at():
    options = (
        Option("customers city is Lyon", Reading("Lyon", "customers", "city", "Lyon").encode()),
        Option("suppliers city is Lyon", Reading("Lyon", "suppliers", "city", "Lyon").encode()),
    )
    assert match_words("I mean the supplier", options) == options[1]
    assert match_words("Lyon", options) is None  # shared by both: says nothing
    assert match_words("no idea", options) is None


def test_keyword_mode_reads_own_words_it_cannot_match_to_an_option(settings, demo_var):
    app = Askbase(settings)
    first = ask(app, "demo", "How many clients in 2024?")
    words = exchange_for(first.clarification, own_words="when they signed up", match_options=True)
    assert words.own_words
    outcome = ask(app, "demo", "How many clients in 2024?", Transcript((words,)))
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        want = conn.execute(
            "SELECT COUNT(*) FROM client WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01'"
        ).fetchall()
    assert outcome.status == "answer" and [tuple(r) for r in outcome.rows] == want


def test_own_words_that_spell_a_column_with_a_cue_word_pick_it(settings, demo_var):
    """'paid on' holds 'on', a date word: read as the column payment.paid_on, even in the brackets
    keyword mode adds the answer in."""
    app = Askbase(settings)
    question = "How many clients with payments in 2025?"
    first = ask(app, "demo", question)
    assert first.status == "clarify"
    words = exchange_for(first.clarification, own_words="paid on", match_options=True)
    outcome = ask(app, "demo", question, Transcript((words,)))
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        want = conn.execute(
            "SELECT COUNT(DISTINCT client_id) FROM payment WHERE paid_on >= '2025-01-01' AND paid_on < '2026-01-01'"
        ).fetchall()
    assert outcome.status == "answer" and [tuple(r) for r in outcome.rows] == want


# ---------------------------------------------------------------- the console


def test_the_console_numbers_the_options_and_takes_own_words(settings, demo_var):
    from bot.console import run_console

    lines = "How many clients in Singapore in 2024?\n2\n3\nthe city\n:quit\n"
    out = io.StringIO()
    assert run_console(Askbase(settings), stdin=io.StringIO(lines), stdout=out) == 0
    text = out.getvalue()
    assert "1. client birth date" in text and "2. client signup date" in text and "3. Other…" in text
    assert "Type your answer:" in text
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        (n,) = conn.execute(
            "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.city = "
            "'Singapore' AND signup_date >= '2024-01-01' AND signup_date < '2025-01-01'"
        ).fetchone()
    assert f"Number of clients: {n}" in text and "location city is 'Singapore'" in text


@pytest.mark.parametrize("question", ["How many clients are there?", "Total cost per segment"])
def test_plain_keyword_questions_are_not_asked_back(settings, question):
    outcome = ask(Askbase(settings), "demo", question)
    assert outcome.status == "answer"


# ---------------------------------------------------------------- what counts as competition


def candidates_for(db, objects, values, question="q"):
    from core.clarify.candidates import find_candidates
    from core.link import link
    from core.retrieval import Keywords
    from core.retrieve import retrieve
    from core.understand import Understanding
    from core.view import build_view

    keywords = Keywords(tuple(objects), tuple(values))
    retrieval = retrieve(question, keywords, db)
    linking = link(Understanding(question, keywords=keywords), retrieval, db.catalog, None)
    return find_candidates(retrieval, linking, build_view(db, linking.tables), db.catalog)


def test_only_real_competition_in_the_data_is_a_reason_to_ask(demo_db, tmp_path):
    singapore = [c for c in candidates_for(demo_db, ["clients"], ["Singapore"]) if c.strong]
    assert [c.kind for c in singapore] == ["AmbValue"]
    assert {c.detail for c in singapore[0].choices} == {
        "location.city = 'Singapore'",
        "location.country = 'Singapore'",
    }
    # 'active' is stored in three status columns, but the question names clients: settled
    assert not [c for c in candidates_for(demo_db, ["clients"], ["active"]) if c.strong]
    assert not [c for c in candidates_for(demo_db, ["cost", "segment"], []) if c.strong]


def test_a_table_in_two_roles_asks_which_role(tmp_path):
    path = tmp_path / "flights.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE airports (id INTEGER PRIMARY KEY, code TEXT NOT NULL, city TEXT NOT NULL);
            CREATE TABLE flights (id INTEGER PRIMARY KEY, airline TEXT NOT NULL,
                source_airport INTEGER NOT NULL REFERENCES airports (id),
                dest_airport INTEGER NOT NULL REFERENCES airports (id));
            INSERT INTO airports VALUES (1, 'BOS', 'Boston'), (2, 'JFK', 'New York');
            INSERT INTO flights VALUES (1, 'Delta', 1, 2), (2, 'Delta', 2, 1), (3, 'United', 1, 2);
            """
        )
    app = Askbase(load_settings(var_dir=str(tmp_path / "var")))
    found = candidates_for(app.database(f"sqlite:///{path}"), ["flights"], ["Boston"])
    roles = [c for c in found if c.strong]
    assert len(roles) == 1 and roles[0].kind == "AmbTableColumn"
    assert {c.detail for c in roles[0].choices} == {
        "source_airport_city = 'Boston'",
        "dest_airport_city = 'Boston'",
    }
