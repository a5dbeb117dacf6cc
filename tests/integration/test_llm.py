"""The LLM client against a real HTTP server through the real openai SDK."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.llm import LLM, LLMBadReply, LLMError, LLMRefused, LLMUnavailable
from core.settings import LLMSettings
from core.trace import Trace
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply


class Tables(BaseModel):
    tables: list[str]


MESSAGES = [{"role": "user", "content": "Which tables?"}]
GOOD = mr.json_fenced({"tables": ["client"]})


def ask(llm: LLM, task: str = "link") -> tuple[Tables, Trace]:
    trace = Trace()
    with trace.stage(task):
        result = llm.json(task, MESSAGES, Tables)
    return result, trace


def test_structured_output_requested_and_tokens_recorded(fake_llm, llm_settings):
    fake_llm.script("link", GOOD)
    result, trace = ask(LLM(llm_settings))
    assert result.tables == ["client"]
    body = fake_llm.calls("link")[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["tables"]
    call = trace.stages[0].llm_calls[0]
    assert call.ok and call.prompt_tokens > 0 and call.completion_tokens > 0


def test_model_per_task(fake_llm, llm_settings):
    fake_llm.script("link", GOOD)
    settings = llm_settings.model_copy(update={"models": {"link": "small-linker"}})
    ask(LLM(settings))
    assert fake_llm.calls("link")[0].body["model"] == "small-linker"


def test_429_then_success_is_retried(fake_llm, llm_settings):
    fake_llm.script("link", Reply(status=429, retry_after=0.01), GOOD)
    result, trace = ask(LLM(llm_settings))
    assert result.tables == ["client"]
    assert trace.stages[0].llm_calls[0].attempts == 2


def test_5xx_then_success_is_retried(fake_llm, llm_settings):
    fake_llm.script("link", Reply(status=503), Reply(status=500), GOOD)
    result, _ = ask(LLM(llm_settings))
    assert result.tables == ["client"]
    assert len(fake_llm.calls("link")) == 3


def test_timeout_then_success_is_retried(fake_llm, llm_settings):
    settings = llm_settings.model_copy(update={"timeout_s": 0.3})
    fake_llm.script("link", Reply(content=GOOD, delay_s=1.0), GOOD)
    result, trace = ask(LLM(settings))
    assert result.tables == ["client"]
    assert trace.stages[0].llm_calls[0].attempts == 2


def test_dropped_connection_then_success(fake_llm, llm_settings):
    fake_llm.script("link", Reply(drop=True), GOOD)
    result, _ = ask(LLM(llm_settings))
    assert result.tables == ["client"]


def test_retries_are_bounded(fake_llm, llm_settings):
    fake_llm.script("link", *[Reply(status=500)] * 10)
    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        ask(LLM(llm_settings))
    assert len(fake_llm.calls("link")) == llm_settings.max_attempts


def test_client_errors_are_not_retried(fake_llm, llm_settings):
    fake_llm.script("link", Reply(status=401, error_message="bad key"))
    with pytest.raises(LLMUnavailable, match="API key was rejected"):
        ask(LLM(llm_settings))
    assert len(fake_llm.calls("link")) == 1


def test_malformed_json_is_repaired_once(fake_llm, llm_settings):
    fake_llm.script("link", "The relevant tables are client and payment.")
    fake_llm.script("link:repair", '{"tables": ["client", "payment"]}')
    result, trace = ask(LLM(llm_settings))
    assert result.tables == ["client", "payment"]
    repair_prompt = fake_llm.calls("link")[1]
    assert repair_prompt.task == "link:repair"
    assert "no JSON" in repair_prompt.user
    assert [c.task for c in trace.stages[0].llm_calls] == ["link", "link:repair"]


def test_truncated_json_is_used_without_a_repair_call(fake_llm, llm_settings):
    fake_llm.script("link", Reply(content='{"tables": ["client", "pay', finish_reason="length"))
    fake_llm.script("link:repair", '{"tables": ["payment"]}')
    result, _ = ask(LLM(llm_settings))
    assert result.tables == ["client"]  # the complete member kept, the cut-off "pay" dropped
    assert [c.task for c in fake_llm.calls("link")] == ["link"]  # no repair round was needed


def test_schema_mismatch_is_repaired(fake_llm, llm_settings):
    fake_llm.script("link", '{"table": "client"}', '{"tables": ["client"]}')
    result, _ = ask(LLM(llm_settings))
    assert result.tables == ["client"]


def test_still_broken_after_repair_is_a_clear_error(fake_llm, llm_settings):
    fake_llm.script("link", "no idea", "still no idea")
    with pytest.raises(LLMBadReply, match="could not be used"):
        ask(LLM(llm_settings))


def test_refusal_is_reported_not_repaired(fake_llm, llm_settings):
    fake_llm.script("link", mr.REFUSAL)
    with pytest.raises(LLMRefused, match="declined"):
        ask(LLM(llm_settings))
    assert len(fake_llm.calls("link")) == 1


def test_structured_output_refusal_field(fake_llm, llm_settings):
    fake_llm.script("link", Reply(refusal="I can't assist with that."))
    with pytest.raises(LLMRefused):
        ask(LLM(llm_settings))


def test_endpoint_without_structured_output_falls_back(fake_llm, llm_settings):
    fake_llm.reject_response_format = True
    fake_llm.script("link", GOOD, GOOD)
    llm = LLM(llm_settings)
    assert ask(llm)[0].tables == ["client"]
    assert ask(llm)[0].tables == ["client"]
    bodies = [c.body for c in fake_llm.calls("link")]
    # the first request asked for structured output and was rejected; none asks again
    assert ["response_format" in b for b in bodies] == [True, False, False]


def test_sql_replies(fake_llm, llm_settings):
    fake_llm.script("generate", mr.sql_fenced("SELECT COUNT(*) FROM v"))
    sql, _ = LLM(llm_settings).sql("generate", MESSAGES)
    assert sql == "SELECT COUNT(*) FROM v"
    assert "response_format" not in fake_llm.calls("generate")[0].body


def test_llm_down_is_a_clear_error():
    settings = LLMSettings(
        api_key="k", base_url="http://127.0.0.1:9/v1", max_attempts=2, retry_initial_s=0.01, retry_max_s=0.02
    )
    with pytest.raises(LLMUnavailable, match="could not be reached"):
        LLM(settings).chat("understand", MESSAGES)


def test_unconfigured_llm_explains_how_to_configure():
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        LLM(LLMSettings())


def test_api_key_never_in_error_text(fake_llm, llm_settings):
    fake_llm.script("link", Reply(status=401, error_message="Incorrect API key provided: test-key"))
    with pytest.raises(LLMUnavailable) as info:
        ask(LLM(llm_settings))
    assert "test-key" not in str(info.value)
