"""Secrets out of everything a person or a log sees: the audit log, traces, the Details modal.

People paste credentials into questions; configured secrets (API keys, tokens, database
passwords) can surface in error texts. Both are replaced by `***` before text is stored or shown:
the secret values this process was configured with (`know_secrets`, called by the engine when it
starts) and anything shaped like a credential — Slack and OpenAI tokens, `user:password@` in
URLs, `password=...`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

CREDENTIALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:xox[abposre]|xapp|xoxe\.xox[bp])-[A-Za-z0-9-]{8,}"), "***"),  # Slack tokens
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "***"),  # OpenAI-style API keys
    (re.compile(r"(://[^\s:/@]+):[^\s@/]+@"), r"\1:***@"),  # user:password@ in URLs
    (re.compile(r"(?i)\b(password|passwd|pwd|secret|token|api_?key)(\s*[=:]\s*)[^\s&;,'\"]+"), r"\1\2***"),
)

MIN_SECRET = 4  # shorter configured values would blank out ordinary words

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
