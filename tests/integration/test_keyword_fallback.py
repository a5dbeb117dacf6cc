"""When the LLM fails — the test server returns 500s, or dies mid-question — keyword mode answers,
labelled as such, and the failed LLM attempt stays in the trace."""

from __future__ import annotations

import pytest

from core.askbase import Askbase
from core.llm import LLM
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


@pytest.fixture
def app(settings, llm_settings):
    app = Askbase(settings, llm=LLM(llm_settings))
    yield app
    app.close()


def test_server_errors_fall_back_to_keyword_mode(app, fake_llm, hand):
    fake_llm.respond("generate", lambda body: Reply(status=500, error_message="upstream exploded"))
    outcome = app.ask("How many clients per segment?")
    assert outcome.status == "answer" and outcome.mode == "keyword"
    assert sorted(map(tuple, outcome.rows)) == sorted(
        hand("SELECT segment, COUNT(*) FROM client GROUP BY segment")
    )
    assert outcome.interpretation.startswith("The LLM failed")
    assert len(fake_llm.calls("generate")) == app.settings.llm.max_attempts  # retried, then gave up
    stages = [s.name for s in outcome.trace.stages]
    assert next(s for s in outcome.trace.stages if s.name == "generate").error
    assert stages[stages.index("fallback") + 1 :][:2] == ["retrieve", "interpret"]


def test_a_failure_after_the_first_call_keeps_the_llm_stages_in_the_trace(app, fake_llm, hand):
    fake_llm.respond("generate", mr.writing("SELECT nope FROM client"))
    fake_llm.respond("revise", lambda body: Reply(status=503))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and outcome.mode == "keyword"
    assert [tuple(r) for r in outcome.rows] == hand("SELECT COUNT(*) FROM client")
    stages = [s.name for s in outcome.trace.stages]
    run = ["expand", "guard", "execute"]
    assert stages[: stages.index("fallback")] == [
        "retrieve",
        "scope",
        "recipe",
        "generate",
        *run,
        "select",
        "revise",
    ]
    assert outcome.trace.llm_calls >= 2  # the successful generate call and the failed revise attempts


def test_keyword_mode_declines_with_the_reason_the_llm_was_not_used(app, fake_llm):
    fake_llm.respond("generate", lambda body: Reply(status=500))
    outcome = app.ask("What is the ratio of enterprise to startup clients?")
    assert outcome.status == "error" and outcome.error_kind == "keyword_abstain"
    assert outcome.error.startswith("The LLM failed") and "ratio" in outcome.error
