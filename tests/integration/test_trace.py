"""Traces: what a person sees behind "Details" and in `--json` holds no credential they typed.

A credential pasted into a question was scrubbed in the audit row but kept in the trace, which is
stored and shown in Slack's Details modal (issue 18 §9). The trace is scrubbed the way the audit
is: configured secrets and anything shaped like a credential become `***`.
"""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from core.askbase import Askbase
from core.llm import LLM
from core.settings import DatabaseSettings, load_settings
from core.state import conversations
from core.trace import Trace
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply

API_KEY = "sk-test-0123456789abcdefghijklmnop"
DB_PASSWORD = "Zebra-Quartz-77"  # configured, not shaped like a credential: only the settings know it
TYPED = [
    API_KEY,
    "xoxb-1111-2222-abcdefghij",
    "hunter2hunter2",  # password=...
    "s3cr3t-in-url",  # user:password@ in a URL
    DB_PASSWORD,
]
QUESTION = (
    f"How many clients? key {API_KEY}, token xoxb-1111-2222-abcdefghij, password=hunter2hunter2, "
    f"postgresql://bob:s3cr3t-in-url@db.internal/sales and the warehouse pw {DB_PASSWORD}"
)


@pytest.fixture
def app(demo_var, state_url, fake_llm, llm_settings):
    fake_llm.respond(
        "understand",
        lambda body: Reply(content=mr.json_fenced(mr.understanding(QUESTION, [QUESTION], ["clients"]))),
    )
    # the writer echoes the question (secrets included) into its task, as models do
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) AS clients FROM client", task=QUESTION))
    settings = load_settings(
        var_dir=str(demo_var),
        state_url=state_url,
        databases={
            "demo": DatabaseSettings(url=f"sqlite:///{demo_var / 'demo.sqlite'}"),
            "warehouse": DatabaseSettings(url=f"postgresql://askbase:{DB_PASSWORD}@127.0.0.1:9/nowhere"),
        },
        default_db="demo",
    )
    app = Askbase(settings, llm=LLM(llm_settings.model_copy(update={"api_key": SecretStr(API_KEY)})))
    yield app
    app.close()


def test_credentials_typed_into_a_question_never_reach_the_stored_or_shown_trace(app):
    outcome = app.ask(QUESTION)
    assert outcome.status == "answer", outcome.error
    shown = json.dumps(outcome.to_json(with_trace=True)["trace"], default=str)
    conversation = "C1:1700000000.000100"
    conversations.ensure_conversation(app.state, conversation, "demo", channel="C1", user="U1")
    conversations.record_turn(app.state, conversation, outcome, user="U1")
    stored = json.dumps(conversations.load_trace(app.state, outcome.trace.id), default=str)  # Details
    for text in (shown, stored):
        assert not [secret for secret in TYPED if secret in text], text
        assert "How many clients?" in text and "bob:***@db.internal" in text  # the rest stays readable


def test_stage_outputs_and_errors_are_scrubbed_too():
    trace = Trace(question="q")
    with trace.stage("generate") as stage:
        stage.outputs = {"sql": "SELECT 'password=abc123xyz'", "nested": [{"url": "mysql://u:pw123456@h/db"}]}
    with pytest.raises(RuntimeError), trace.stage("execute"):
        raise RuntimeError("could not connect with token xoxb-9999-8888-zzzzzzzz")
    data = json.dumps(trace.to_dict())
    assert "abc123xyz" not in data and "pw123456" not in data and "xoxb-9999" not in data
    assert "password=***" in data and "u:***@h" in data
