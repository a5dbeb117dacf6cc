"""LLM client over the `openai` SDK, for any OpenAI-compatible endpoint.

What it adds to the SDK: a model per task, bounded retries with backoff (tenacity) on 429 / 5xx /
timeouts / dropped connections, honouring Retry-After; structured output (JSON schema) where the
endpoint supports it, falling back when it does not; defensive parsing of the reply with one
repair round; and a record of every call (tokens, ms, attempts) on the running trace stage.

The SDK is imported when the first client is made, not with this module: it takes half a second
of every process start, and keyword mode (no key set) never needs it. The functions below that
name its error classes only run once a client exists.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from core import deadline, prompts
from core.replies import RefusalError, ReplyError, extract_json, extract_sql, refusal
from core.settings import LLMSettings
from core.trace import LLMCall, record_llm_call

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)


MIN_ATTEMPT_S = 0.05  # with less than this left of the question's deadline, no call is started


class _OutOfTime(Exception):
    """The question's deadline passed before a call could start."""


class LLMError(Exception):
    """An LLM failure, with a message a person can act on (never a secret or a stack trace)."""


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or kept failing after bounded retries."""


class LLMBadReply(LLMError):
    """The model answered, but not with anything usable, even after one repair round."""


class LLMRefused(LLMBadReply):
    pass


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    refusal: str | None = None


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError | openai.RateLimitError):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def _retry_after(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None


def _describe(exc: BaseException | None) -> str:
    """A short, secret-free description of an SDK error for logs and user messages."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "the endpoint could not be reached"
    if isinstance(exc, openai.RateLimitError):
        return "rate limited or out of quota (HTTP 429)"
    if isinstance(exc, openai.AuthenticationError):
        return "the API key was rejected (HTTP 401)"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from the endpoint"
    return type(exc).__name__


class LLM:
    """One client per process; thread-safe (the SDK client is)."""

    def __init__(self, settings: LLMSettings, client: openai.OpenAI | None = None) -> None:
        if client is None and not settings.configured:
            raise LLMError(
                "No LLM is configured. Set OPENAI_API_KEY (and OPENAI_BASE_URL for a non-OpenAI "
                "endpoint such as Azure, vLLM or Ollama), or set llm.api_key in the YAML config."
            )
        import openai

        self.settings = settings
        self.client = client or openai.OpenAI(
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            base_url=settings.base_url or None,
            timeout=settings.timeout_s,
            max_retries=0,  # retries are ours (bounded, logged, visible in the trace)
        )
        self._structured = settings.structured_output
        self._lock = threading.Lock()

    # -- raw chat -------------------------------------------------------------------------------

    def chat(
        self,
        task: str,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One completion, retried on transient failures; the call is recorded on the trace."""
        import openai

        model = self.settings.model_for(task.split(":")[0])
        call = LLMCall(task=task, model=model)
        start = time.perf_counter()
        limit = deadline.current()
        try:
            if limit is not None and limit.remaining <= MIN_ATTEMPT_S:
                raise _OutOfTime()
            completion = self._chat_with_retries(call, model, messages, schema)
        except (openai.OpenAIError, _OutOfTime) as exc:
            if limit is not None and limit.remaining <= MIN_ATTEMPT_S:
                call.ok, call.error = False, "the question's time limit ran out"
                raise LLMUnavailable(
                    f"The language model did not answer within the question's time limit ({limit.seconds:g} s)."
                ) from exc
            call.ok, call.error = False, _describe(exc)
            raise LLMUnavailable(f"The language model is unavailable: {_describe(exc)}.") from exc
        finally:
            call.ms = round((time.perf_counter() - start) * 1000, 3)
            record_llm_call(call)
        call.prompt_tokens, call.completion_tokens = completion.prompt_tokens, completion.completion_tokens
        return completion

    def _chat_with_retries(
        self, call: LLMCall, model: str, messages: list[dict[str, str]], schema: dict[str, Any] | None
    ) -> Completion:
        s = self.settings
        backoff = wait_random_exponential(multiplier=s.retry_initial_s, max=s.retry_max_s)  # full jitter

        limit = deadline.current()

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            hinted = _retry_after(exc)
            pause = min(hinted, s.retry_max_s) if hinted is not None else backoff(state)
            return pause if limit is None else max(0.0, min(pause, limit.remaining - MIN_ATTEMPT_S))

        attempts = stop_after_attempt(max(1, s.max_attempts))

        def stop(state: RetryCallState) -> bool:  # out of attempts, or of time
            return attempts(state) or (limit is not None and limit.remaining <= MIN_ATTEMPT_S)

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "LLM %s attempt %d failed (%s); retrying", call.task, state.attempt_number, _describe(exc)
            )

        retrying = Retrying(
            retry=retry_if_exception(_retryable),
            stop=stop,
            wait=wait,
            before_sleep=before_sleep,
            reraise=True,
        )
        for attempt in retrying:
            with attempt:
                call.attempts = attempt.retry_state.attempt_number
                timeout = (
                    s.timeout_s if limit is None else max(MIN_ATTEMPT_S, min(s.timeout_s, limit.remaining))
                )
                return self._create(model, messages, schema, call.task, timeout)
        raise AssertionError("unreachable")  # pragma: no cover

    def _create(
        self,
        model: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        task: str,
        timeout: float | None = None,
    ) -> Completion:
        import openai

        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": self.settings.temperature,
            "timeout": timeout if timeout is not None else self.settings.timeout_s,
        }
        if self.settings.max_tokens:
            kwargs["max_tokens"] = self.settings.max_tokens
        mode = self._structured if schema is not None else "off"
        if mode in ("auto", "json_schema"):
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": task.split(":")[0], "schema": schema, "strict": False},
            }
        elif mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        try:
            response = self.client.chat.completions.create(**kwargs, extra_headers={"X-Askbase-Task": task})
        except openai.BadRequestError as exc:
            if "response_format" not in kwargs or self._structured != "auto":
                raise
            # The endpoint does not do structured output: prompt-only JSON from now on.
            log.info("endpoint rejected response_format (%s); using prompt-only JSON", _describe(exc))
            with self._lock:
                self._structured = "off"
            kwargs.pop("response_format")
            response = self.client.chat.completions.create(**kwargs, extra_headers={"X-Askbase-Task": task})
        usage = response.usage
        if not response.choices:  # seen from overloaded proxies: parse as an empty reply
            return Completion(text="", model=response.model or model)
        choice = response.choices[0]
        return Completion(
            text=choice.message.content or "",
            model=response.model or model,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
            finish_reason=choice.finish_reason,
            refusal=getattr(choice.message, "refusal", None),
        )

    # -- typed replies --------------------------------------------------------------------------

    def json(self, task: str, messages: list[dict[str, str]], model_cls: type[M]) -> M:
        """A reply validated against `model_cls`, with one repair round if it is not."""
        schema = model_cls.model_json_schema()
        completion = self.chat(task, messages, schema=schema)
        try:
            return self._validate(completion, model_cls)
        except LLMRefused:
            raise
        except LLMBadReply as first:
            log.info("LLM %s reply unusable (%s); asking for a repair", task, first)
            repair = prompts.render(
                "repair_json",
                schema=json.dumps(schema),
                reply=completion.text[:6000] or "(empty)",
                problem=str(first),
            )
            repaired = self.chat(f"{task}:repair", repair, schema=schema)
            try:
                return self._validate(repaired, model_cls)
            except LLMBadReply as second:
                raise LLMBadReply(f"The language model's reply could not be used: {second}") from second

    def sql(self, task: str, messages: list[dict[str, str]]) -> tuple[str, Completion]:
        """The SQL in a free-text reply (reasoning then a ```sql fence, as models write it)."""
        completion = self.chat(task, messages)
        if completion.refusal:
            raise LLMRefused(f"The language model declined: {completion.refusal}")
        try:
            return extract_sql(completion.text), completion
        except RefusalError as exc:
            raise LLMRefused(f"The language model declined: {exc}") from exc
        except ReplyError as exc:
            raise LLMBadReply(f"The language model's reply had no SQL: {exc}") from exc

    @staticmethod
    def _validate(completion: Completion, model_cls: type[M]) -> M:
        if completion.refusal:
            raise LLMRefused(f"The language model declined: {completion.refusal}")
        try:
            data = extract_json(completion.text)
        except RefusalError as exc:
            raise LLMRefused(f"The language model declined: {exc}") from exc
        except ReplyError as exc:
            truncated = " (cut off at the token limit)" if completion.finish_reason == "length" else ""
            raise LLMBadReply(f"{exc}{truncated}") from exc
        try:
            return model_cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()[:5]
            )
            said = refusal(completion.text)
            if said:
                raise LLMRefused(f"The language model declined: {said}") from exc
            raise LLMBadReply(f"JSON does not match the schema ({problems})") from exc
