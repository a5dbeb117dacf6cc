"""Secrets typed into a question are removed at the door (issue 31), not only from the audit.

A person pastes a password, an API key and a Slack token into a question. Through the real Bolt
app, the fake Slack Web API and the fake OpenAI-compatible model: none of the three reaches the
state database (every table: turns, traces, claims, the answer cache, the audit), the model's
requests, what Slack is sent, or the log — and the reply tells the asker what was removed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import sqlalchemy as sa

from core.answer import Outcome
from core.answer_cache import normalize_question
from core.clarify.transcript import Exchange, Transcript
from core.redact import REMOVED, SECRET_NOTE, scrub_question
from core.state import events, feedback
from core.state.conversations import ensure_conversation, record_turn
from tests.slack_harness import RunningBot

CHANNEL = "C0001"
PASSWORD = "hunter2-Zq8"
API_KEY = "sk-proj-4f9aQ7vX2mB8nK3pL6tR1wY5"
SLACK_TOKEN = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
SECRETS = (PASSWORD, API_KEY, SLACK_TOKEN)
QUESTION = f"how many clients are there? password={PASSWORD} my key is {API_KEY} and token {SLACK_TOKEN}"


def everything_stored(engine: sa.Engine) -> str:
    """Every row of every table of the state database, as one text."""
    rows: list[Any] = []
    with engine.connect() as conn:
        for table in sa.inspect(conn).get_table_names():
            rows.extend(tuple(r) for r in conn.execute(sa.text(f'SELECT * FROM "{table}"')))
    return json.dumps(rows, default=str)


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_secrets_typed_into_a_question_are_stored_sent_and_shown_nowhere(
    make_bot, slack, plan, fake_llm, caplog
):
    caplog.set_level(logging.DEBUG)
    bot: RunningBot = make_bot()
    _, ts = bot.sender.mention(QUESTION)
    answer = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=20)
    assert answer.result() == [["300"]]  # still answered
    assert SECRET_NOTE in answer.all_text()
    # /ask posts the question back in a root message of its own: without them too
    bot.sender.command(QUESTION.replace("clients", "datacenters"))
    slack.wait_for(lambda s: sum(SECRET_NOTE in m.all_text() for m in s.messages.values()) == 2, timeout=20)

    assert fake_llm.requests, "the model was asked"
    assert leaked(json.dumps([r.body for r in fake_llm.requests])) == []
    assert REMOVED in fake_llm.requests[0].user  # the question, with the marker where each was
    stored = everything_stored(bot.state)
    assert leaked(stored) == []
    for table in ("turns", "question_claims", "answer_cache", "audit_log", "traces"):
        with bot.state.connect() as conn:
            assert conn.execute(sa.text(f'SELECT COUNT(*) FROM "{table}"')).scalar(), f"nothing in {table}"
    with bot.state.connect() as conn:
        cached = conn.execute(sa.text("SELECT question FROM answer_cache")).scalars().all()
    assert cached and all("secret-removed" in q for q in cached)  # kept normalized
    assert leaked(json.dumps([c.args for c in slack.calls], default=str)) == []
    assert leaked(caplog.text) == []


def test_the_engine_removes_them_for_any_caller_and_the_outcome_says_so(
    settings, llm_settings, fake_llm, plan
):
    """CLI, Teams, a schedule: `Askbase.ask` is the door every question goes through."""
    from core.askbase import Askbase
    from core.llm import LLM

    askbase = Askbase(settings, llm=LLM(llm_settings))
    try:
        outcome = askbase.ask(QUESTION, source="cli")
        assert outcome.status == "answer" and outcome.notes == (SECRET_NOTE,)
        assert leaked(outcome.question) == [] and leaked(json.dumps(outcome.to_json(), default=str)) == []
        assert outcome.to_json()["notes"] == [SECRET_NOTE]
        assert leaked(json.dumps([r.body for r in fake_llm.requests])) == []
        again = askbase.ask(QUESTION, source="cli")  # the same question: from the cache, noted again
        assert again.reuse is not None and again.notes == (SECRET_NOTE,)
        assert askbase.ask("how many clients are there?", source="cli").notes == ()
        assert leaked(everything_stored(askbase.state)) == []
    finally:
        askbase.close()


def test_scrubbing_is_idempotent_and_says_when_something_was_removed():
    once, removed = scrub_question(QUESTION)
    assert removed and leaked(once) == [] and once.count(REMOVED) == 3
    assert scrub_question(once) == (once, True)  # a question scrubbed by the adapter is noted by the engine
    assert scrub_question("postgresql://bob:s3cret@db/sales") == (
        f"postgresql://bob:{REMOVED}@db/sales",
        True,
    )
    assert scrub_question("how many clients?") == ("how many clients?", False)
    # the answer cache keys on the scrubbed question: two people pasting different secrets share it
    other = scrub_question(QUESTION.replace(PASSWORD, "other-pass"))[0]
    assert normalize_question(other) == normalize_question(once)


def test_claims_and_turns_an_adapter_stores_itself_are_stored_without_them(state_url):
    """Adapters claim a question, and store turns of their own failures, before the engine sees it."""
    from core.state import open_state

    engine = open_state(state_url)
    try:
        claim = events.claim(
            engine, "msg:T1:C1:1.0", "me", 30, payload={"question": QUESTION, "nested": [QUESTION]}
        )
        assert claim is not None and leaked(json.dumps(claim.payload)) == []
        ensure_conversation(engine, "slack:T1:C1:1.0", "demo", channel="C1", user="U1")
        record_turn(engine, "slack:T1:C1:1.0", Outcome.failed(QUESTION, "busy", "Busy."), user="U1")
        # a comment after 👎 and an "Other…" answer are the person's own words too
        feedback.record_feedback(engine, "trace1", "U1", "down", f"wrong, and my password={PASSWORD}")
        told = Transcript.of([Exchange("Which city?", f"Lyon {API_KEY}")])
        clean, removed = told.without_secrets()
        assert removed and leaked(json.dumps(clean.to_json())) == []
        assert leaked(everything_stored(engine)) == []
    finally:
        engine.dispose()
