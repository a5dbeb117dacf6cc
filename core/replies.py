"""Read what real models actually send back: JSON or SQL wrapped in prose, fences and reasoning.

Models put reasoning first (`<think>…</think>`, "Let me think…"), wrap JSON and SQL in markdown
fences, add a sentence after, cut off mid-object when they hit the token limit, use Python-style
single quotes or trailing commas, or refuse. These functions find the payload anyway, or say
precisely why they could not, so the caller can ask once for a repair.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.S | re.I)
FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|$)", re.S)
SQL_START = re.compile(r"^\s*(WITH|SELECT)\b", re.I | re.M)
REFUSAL = re.compile(
    r"\b(I(?:'m| am) (?:sorry|unable|not able)|I can(?:no|')t (?:help|assist|do|comply|provide)|"
    r"I won't|as an AI\b|I must decline|cannot comply)",
    re.I,
)


class ReplyError(ValueError):
    """The reply holds no usable payload; `str(err)` says why, for the repair prompt and the log."""


class RefusalError(ReplyError):
    pass


def strip_reasoning(text: str) -> str:
    return THINK.sub("", text or "").strip()


def refusal(text: str) -> str | None:
    """The refusal sentence when the reply is a refusal rather than an answer."""
    match = REFUSAL.search(text or "")
    if not match:
        return None
    start = text.rfind(".", 0, match.start()) + 1
    end = text.find(".", match.end())
    return text[start : end + 1 if end >= 0 else len(text)].strip()


# ---------------------------------------------------------------------------------------------
# JSON


def json_candidates(text: str) -> list[Any]:
    """Every JSON value found in `text`, in order of appearance, fenced blocks first."""
    body = strip_reasoning(text)
    found: list[Any] = []
    for lang, block in FENCE.findall(body):
        if lang.lower() in ("", "json", "jsonc", "javascript", "js"):
            value = _loads_lenient(block)
            if value is not _NOTHING:
                found.append(value)
    if found:
        return found
    decoder = json.JSONDecoder()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch in "{[":
            try:
                value, end = decoder.raw_decode(body, i)
            except ValueError:
                i += 1
                continue
            if isinstance(value, dict | list):
                found.append(value)
            i = end
        else:
            i += 1
    if not any(isinstance(v, dict) for v in found):
        start = min((p for p in (body.find("{"), body.find("[")) if p >= 0), default=-1)
        if start >= 0:
            value = _loads_lenient(body[start:])
            if value is not _NOTHING:
                found.append(value)
    return found


def extract_json(text: str) -> Any:
    """The last JSON object in the reply (reasoning-first replies put the answer last)."""
    candidates = [c for c in json_candidates(text) if isinstance(c, dict)]
    if candidates:
        return candidates[-1]
    said = refusal(text)
    if said:
        raise RefusalError(said)
    raise ReplyError("the reply contains no JSON object" if text.strip() else "the reply is empty")


_NOTHING = object()


def _loads_lenient(text: str) -> Any:
    text = text.strip()
    for attempt in (text, _close_truncated(text)):
        if not attempt:
            continue
        try:
            return json.loads(attempt)
        except ValueError:
            pass
        cleaned = re.sub(r",\s*([}\]])", r"\1", attempt)  # trailing commas
        try:
            return json.loads(cleaned)
        except ValueError:
            pass
        try:  # single quotes, True/False/None: a Python literal
            value = ast.literal_eval(cleaned)
            if isinstance(value, dict | list):
                return value
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    return _NOTHING


def _scan(text: str) -> tuple[list[str], bool, int, int]:
    """Bracket state of `text`: (closers still open, inside a string, last top-level-safe comma,
    end of the first complete value or -1)."""
    stack: list[str] = []
    in_string = escaped = False
    last_comma = 0
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                return stack, False, last_comma, i
            stack.pop()
            if not stack:
                return stack, False, last_comma, i + 1
        elif ch == ",":
            last_comma = i
    return stack, in_string, last_comma, -1


def _close_truncated(text: str) -> str:
    """Close the brackets a reply cut off by the token limit left open."""
    start = min((p for p in (text.find("{"), text.find("[")) if p >= 0), default=-1)
    if start < 0:
        return ""
    text = text[start:]
    stack, in_string, last_comma, end = _scan(text)
    if end >= 0:
        return text[:end]
    if not in_string:
        candidate = text.rstrip().rstrip(",") + "".join(reversed(stack))
        try:
            json.loads(candidate)
            return candidate
        except ValueError:
            pass
    # A cut-off string is garbage ("pay" of "payment"): drop the half-written member, close the rest.
    if not last_comma:
        return ""
    head = text[:last_comma]
    return head + "".join(reversed(_scan(head)[0]))


# ---------------------------------------------------------------------------------------------
# SQL


def extract_sql(text: str) -> str:
    """The SQL statement in a reply: the last ```sql fence, a JSON "sql" field, or bare SQL."""
    body = strip_reasoning(text)
    fences = [(lang.lower(), block.strip()) for lang, block in FENCE.findall(body)]
    sql_blocks = [b for lang, b in fences if lang in ("sql", "sqlite", "postgresql", "postgres", "mysql")]
    plain_blocks = [b for lang, b in fences if lang == "" and SQL_START.search(b)]
    for block in reversed(sql_blocks or plain_blocks):
        if block:
            return _trim_sql(block)
    for candidate in reversed(json_candidates(body)):
        if isinstance(candidate, dict):
            for key in ("sql", "query", "SQL"):
                if isinstance(candidate.get(key), str) and candidate[key].strip():
                    return _trim_sql(candidate[key])
    match = SQL_START.search(body)
    if match:
        return _trim_sql(_until_prose(body[match.start() :]))
    said = refusal(text)
    if said:
        raise RefusalError(said)
    raise ReplyError("the reply contains no SQL query" if body else "the reply is empty")


def _until_prose(text: str) -> str:
    """Bare SQL followed by an explanation: stop at the first blank line that starts prose."""
    parts = re.split(r"\n\s*\n", text)
    kept = [parts[0]]
    for part in parts[1:]:
        first = part.lstrip().split(" ", 1)[0].upper()
        if first in {
            "FROM",
            "WHERE",
            "GROUP",
            "ORDER",
            "HAVING",
            "LIMIT",
            "JOIN",
            "UNION",
            "SELECT",
            "AND",
            "OR",
        }:
            kept.append(part)
        else:
            break
    return "\n\n".join(kept)


def _trim_sql(sql: str) -> str:
    sql = sql.strip().strip("`").strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return sql
