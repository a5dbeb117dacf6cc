"""Secrets out of everything a person or a log sees: the audit log, traces, the Details modal.

People paste credentials into questions; configured secrets (API keys, tokens, database
passwords) can surface in error texts. Both are replaced by `***` before text is stored or shown:
the secret values this process was configured with (`know_secrets`, called by the engine when it
starts) and anything shaped like a credential — Slack and OpenAI tokens, `user:password@` in
URLs, `password=...`.

A question is scrubbed sooner, at the door (`scrub_question`): where the engine takes it
(`Askbase.ask`), where a chat adapter first reads it (Slack: bot/slack/text.py `incoming`), and
again where the state database stores what adapters hand it before the engine has seen it (a
question's claim, a turn, a schedule). Turns, claims, the answer cache and the LLM then never
hold the secret, only `[secret-removed]` in its place — a marker the engine recognises, so a
question scrubbed by the adapter still gets the asker the note that something was removed
(`SECRET_NOTE`), and scrubbing twice changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REMOVED = "[secret-removed]"  # what stands in a question for a secret it held (no space: one value)
# a value already replaced (the marker alone, up to where a value ends) is not a value to replace
_DONE_URL = r"(?!\[secret-removed\]@)"
_DONE_VALUE = r"(?!\[secret-removed\](?:[\s&;,'\"]|$))"

CREDENTIALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:xox[abposre]|xapp|xoxe\.xox[bp])-[A-Za-z0-9-]{8,}"), "***"),  # Slack tokens
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "***"),  # OpenAI-style API keys
    (re.compile(rf"(://[^\s:/@]+):{_DONE_URL}[^\s@/]+@"), r"\1:***@"),  # user:password@ in URLs
    (
        re.compile(
            rf"(?i)\b(password|passwd|pwd|secret|token|api_?key)(\s*[=:]\s*){_DONE_VALUE}[^\s&;,'\"]+"
        ),
        r"\1\2***",
    ),
)

MIN_SECRET = 4  # shorter configured values would blank out ordinary words

SECRET_NOTE = "I removed what looked like a password or API key from your question before storing it."
# The same shapes for questions, each replaced by the marker (so the engine can tell it was done)
QUESTION_CREDENTIALS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (pattern, replacement.replace("***", REMOVED)) for pattern, replacement in CREDENTIALS
)

_known: set[str] = set()


def know_secrets(values: Iterable[str]) -> None:
    """Remember this process's configured secret values; `redact` removes them from then on."""
    _known.update(v for v in values if v and len(v) >= MIN_SECRET)


def redact(text: str | None, secrets: Iterable[str] = ()) -> str | None:
    """`text` without secret values (given and known) and without anything shaped like a credential."""
    if not text:
        return text
    for secret in sorted({s for s in (*secrets, *_known) if len(s) >= MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, "***")
    for pattern, replacement in CREDENTIALS:
        text = pattern.sub(replacement, text)
    return text


def redact_all(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` with every string in it redacted: dicts, lists and tuples are walked."""
    known = tuple(secrets)
    if isinstance(value, str):
        return redact(value, known)
    if isinstance(value, dict):
        return {k: redact_all(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_all(v, known) for v in value)
    return value


def scrub_question(text: str) -> tuple[str, bool]:
    """`text` with every secret in it (known values, credential shapes) replaced by `REMOVED`,
    and whether it holds one removed — now or by an earlier door (the marker is there)."""
    for secret in sorted({s for s in _known if len(s) >= MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REMOVED)
    for pattern, replacement in QUESTION_CREDENTIALS:
        text = pattern.sub(replacement, text)
    return text, REMOVED in text


def scrub_all(value: Any) -> Any:
    """`value` with every string in it scrubbed like a question (a claim's payload: dicts, lists)."""
    if isinstance(value, str):
        return scrub_question(value)[0]
    if isinstance(value, dict):
        return {k: scrub_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_all(v) for v in value)
    return value
