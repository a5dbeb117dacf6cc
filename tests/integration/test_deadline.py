"""One deadline per question: a hanging LLM endpoint costs the question its deadline, not minutes.

The real `openai` client talks to the fake server, which holds every reply far longer than the
deadline; each call's own timeout (60 s) and retries (3) would hold the question for minutes.
"""

from __future__ import annotations

import time

import pytest

from core.askbase import Askbase
from core.llm import LLM
from core.settings import LLMSettings, load_settings
from tests.fakes.openai_server import Reply

HANG_S = 30.0
# What the question may take past its deadline on a loaded CI machine; far below HANG_S, so an
# engine that waited for the endpoint still fails.
SLACK_S = 10.0


@pytest.fixture
def hanging_llm(fake_llm) -> LLMSettings:
    for task in ("understand", "generate", "link", "revise", "clarify"):
        fake_llm.respond(task, lambda body: Reply(content="{}", delay_s=HANG_S))
    return LLMSettings(api_key="test-key", base_url=fake_llm.base_url, timeout_s=60, max_attempts=3)


def ask(demo_var, tmp_path, llm_settings: LLMSettings, **engine) -> tuple[float, object]:
    # a state database of its own: the answer cache must not answer for the LLM
    settings = load_settings(
        var_dir=str(demo_var), state_url=f"sqlite:///{tmp_path / 'state.sqlite'}", engine=engine
    )
    app = Askbase(settings, llm=LLM(llm_settings))
    try:
        app.database("demo").catalog  # noqa: B018 — opened before the clock starts
        started = time.monotonic()
        outcome = app.ask("How many clients are there?")
        return time.monotonic() - started, outcome
    finally:
        app.close()


def test_a_hanging_llm_falls_back_to_keyword_mode_within_the_deadline(
    demo_var, tmp_path, hanging_llm, fake_llm
):
    took, outcome = ask(demo_var, tmp_path, hanging_llm, question_deadline_s=2.0)
    assert took < 2.0 + SLACK_S  # the deadline, plus keyword mode's own work
    assert outcome.status == "answer" and outcome.mode == "keyword"
    assert [tuple(r) for r in outcome.rows] == [(300,)]
    assert "time limit (2 s)" in outcome.interpretation
    assert len(fake_llm.calls()) == 1  # no retry was started after the deadline


def test_without_keyword_fallback_the_deadline_gives_a_clear_error(demo_var, tmp_path, hanging_llm):
    took, outcome = ask(demo_var, tmp_path, hanging_llm, question_deadline_s=1.5, fallback_to_keyword=False)
    assert took < 1.5 + SLACK_S
    assert outcome.status == "error" and outcome.error_kind == "llm"
    assert "did not answer within the question's time limit (1.5 s)" in outcome.error


def test_retries_still_happen_inside_the_deadline(demo_var, tmp_path, fake_llm, plan):
    """A quick failure is retried as before; the deadline only bounds the total."""
    fake_llm.script("generate", Reply(status=503))
    settings = LLMSettings(
        api_key="test-key", base_url=fake_llm.base_url, timeout_s=5, retry_initial_s=0.01, retry_max_s=0.05
    )
    _, outcome = ask(demo_var, tmp_path, settings, question_deadline_s=10.0)
    assert outcome.status == "answer" and outcome.mode == "llm"
    assert len(fake_llm.calls("generate")) >= 2  # the 503, then the retry that answered
