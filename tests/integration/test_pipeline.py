"""End to end on the demo database: the real pipeline, the real openai client, a scripted model —
on each engine of tests/conftest.py ENGINES (the demo on SQLite, and its copies on DuckDB, PostgreSQL,
MariaDB and the Snowflake emulation)."""

from __future__ import annotations

import pytest

from core.askbase import Askbase
from core.conversation import Turn
from core.llm import LLM
from core.settings import LLMSettings
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


@pytest.fixture
def app(engine_settings, llm_settings):
    app = Askbase(engine_settings, llm=LLM(llm_settings))
    yield app
    app.close()


def test_happy_path_answers_with_sql_rows_and_a_full_trace(app, fake_llm, hand):
    fake_llm.respond(
        "generate",
        mr.writing(
            "SELECT COUNT(*) AS clients FROM client",
            "SELECT COUNT(id) AS clients FROM client",
            task="Number of clients",
        ),
    )
    outcome = app.ask("How many clients are there?", db="demo")
    assert outcome.status == "answer", outcome.error
    assert [tuple(r) for r in outcome.rows] == hand("SELECT COUNT(*) FROM client")
    assert "300" in outcome.answer and outcome.answer.startswith("Number of clients")
    assert "client" in outcome.sql.lower()
    names = [s.name for s in outcome.trace.stages]
    run = ["expand", "guard", "execute"]
    assert names == ["retrieve", "scope", "recipe", "generate", *run, *run, "select"]
    assert outcome.trace.llm_calls == 1  # the two candidates agree: no other call
    assert outcome.trace.tokens > 0
    assert outcome.sql.rstrip().upper().endswith("LIMIT 1000")  # the guard bounds every query


def test_revise_after_a_sql_error_sees_the_error(app, fake_llm, hand):
    fake_llm.respond("generate", mr.writing("SELECT COUNT(client_nme) FROM client"))
    fake_llm.respond("revise", mr.fixing("SELECT COUNT(*) FROM client"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer"
    assert [tuple(r) for r in outcome.rows] == hand("SELECT COUNT(*) FROM client")
    revise_prompt = fake_llm.calls("revise")[0].user
    # each engine's own words for it: SQLite "no such column", DuckDB and Snowflake "... not found",
    # PostgreSQL "... does not exist", MariaDB "Unknown column"
    assert "client_nme" in revise_prompt
    assert any(
        words in revise_prompt
        for words in ("no such column", "not found", "does not exist", "Unknown column")
    )
    assert [s.name for s in outcome.trace.stages].count("revise") == 1


def test_revise_after_an_empty_result(app, fake_llm, hand):
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM client WHERE status = 'active'"))
    fake_llm.respond("revise", mr.fixing("SELECT COUNT(*) FROM client WHERE status = 'ACT'"))
    outcome = app.ask("How many active clients are there?")
    assert outcome.status == "answer"
    assert [tuple(r) for r in outcome.rows] == hand("SELECT COUNT(*) FROM client WHERE status = 'ACT'")
    assert "only zero or NULL" in fake_llm.calls("revise")[0].user


def test_guard_refusal_is_revised_never_run(app, fake_llm, hand):
    fake_llm.respond("generate", mr.writing("DELETE FROM client"))
    fake_llm.respond("revise", mr.fixing("SELECT COUNT(*) FROM client"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer"
    assert "refused" in fake_llm.calls("revise")[0].user
    assert hand("SELECT COUNT(*) FROM client") == [(300,)]


def test_sql_the_guard_refuses_every_round_is_never_run_and_the_person_is_told_why(app, fake_llm, hand):
    fake_llm.respond("generate", mr.writing("DELETE FROM client"))
    fake_llm.respond("revise", mr.fixing("DROP TABLE client"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "error" and outcome.error_kind == "guard" and not outcome.rows
    assert "refused" in outcome.error and "DROP" in outcome.error  # the last round's reason
    assert "execute" not in [s.name for s in outcome.trace.stages]
    assert hand("SELECT COUNT(*) FROM client") == [(300,)]


def test_revisions_are_bounded(app, fake_llm):
    fake_llm.respond("generate", mr.writing("SELECT nope FROM client"))
    fake_llm.respond("revise", mr.fixing("SELECT still_nope FROM client"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "error"
    # the engine's own message names the column as it keeps names (Snowflake: STILL_NOPE)
    assert "rejected the query" in outcome.error and "still_nope" in outcome.error.lower()
    assert len(fake_llm.calls("revise")) == app.settings.engine.max_revisions


def test_follow_up_is_read_in_the_conversation(app, fake_llm, hand):
    history = [Turn("How many clients are there?", "SELECT COUNT(*) FROM client", ("clients",), 1)]
    sql = "SELECT COUNT(*) FROM client WHERE signup_date BETWEEN '2024-01-01' AND '2024-12-31'"
    fake_llm.respond(
        "generate",
        lambda body: Reply(content="Question: How many clients signed up in 2024?\n" + mr.candidates(sql)),
    )
    outcome = app.ask("and only for 2024?", history=history)
    assert outcome.status == "answer"
    generate = fake_llm.calls("generate")[0]
    assert "How many clients are there?" in generate.user and "SELECT COUNT(*) FROM client" in generate.user
    assert "standalone question" in generate.system  # a follow-up is restated by the writer itself
    written = next(s for s in outcome.trace.stages if s.name == "generate")
    assert written.outputs["question"] == "How many clients signed up in 2024?"
    assert [tuple(r) for r in outcome.rows] == hand(
        "SELECT COUNT(*) FROM client WHERE signup_date BETWEEN '2024-01-01' AND '2024-12-31'"
    )


def test_refusal_is_a_clear_error(app, fake_llm):
    fake_llm.script("generate", mr.REFUSAL)
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "error" and "declined" in outcome.error


def test_empty_question_is_rejected_before_any_llm_call(app, fake_llm):
    outcome = app.ask("   ")
    assert outcome.status == "error" and "Ask a question" in outcome.error
    assert fake_llm.requests == []


def test_every_question_is_audited(app, fake_llm):
    from core.state.audit import entries_since, parse_since

    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM client"))
    outcome = app.ask("How many clients are there?", source="cli", user="U1")
    rows = entries_since(app.state, parse_since("1h"))
    assert rows[-1]["trace_id"] == outcome.trace.id and rows[-1]["user"] == "U1"
    assert rows[-1]["status"] == "answer" and rows[-1]["llm_calls"] == outcome.trace.llm_calls


def test_llm_down_answers_in_keyword_mode_and_says_so(settings, hand):
    llm = LLM(
        LLMSettings(api_key="k", base_url="http://127.0.0.1:9/v1", max_attempts=2, retry_initial_s=0.01)
    )
    app = Askbase(settings, llm=llm)
    outcome = app.ask("How many clients are there?")
    app.close()
    assert outcome.status == "answer" and outcome.mode == "keyword"
    assert [tuple(r) for r in outcome.rows] == hand("SELECT COUNT(*) FROM client")
    assert "could not be reached" in outcome.interpretation
    generate = next(s for s in outcome.trace.stages if s.name == "generate")
    assert "could not be reached" in (generate.error or "")
    assert "fallback" in [s.name for s in outcome.trace.stages]


def test_llm_down_without_the_keyword_fallback_gives_a_clear_error(demo_var, monkeypatch):
    from core.settings import load_settings

    monkeypatch.setenv("ASKBASE_VAR_DIR", str(demo_var))
    settings = load_settings(var_dir=str(demo_var), engine={"fallback_to_keyword": False})
    llm = LLM(
        LLMSettings(api_key="k", base_url="http://127.0.0.1:9/v1", max_attempts=2, retry_initial_s=0.01)
    )
    app = Askbase(settings, llm=llm)
    outcome = app.ask("How many clients are there?")
    app.close()
    assert outcome.status == "error" and outcome.mode == "llm"
    assert "could not be reached" in outcome.error
