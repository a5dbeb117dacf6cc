"""The audit log: every question, who asked where, the SQL, status, rows, time, LLM calls, tokens.

Written to the state database and as one structured log line per question (logger
`askbase.audit`), so it reaches both `python -m bot audit` and the log pipeline.

Secrets never reach either: the configured secret values (API keys, tokens, database passwords)
and anything shaped like a credential (Slack and OpenAI tokens, `user:password@` in URLs,
`password=...`) are replaced by `***` in every text field, whatever the person typed
(core/redact.py, which traces use too).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.answer import Outcome
from core.redact import redact
from core.settings import Settings
from core.state.schema import audit

log = logging.getLogger("askbase.audit")


def record(
    engine: sa.Engine | None,
    outcome: Outcome,
    *,
    source: str,
    user: str | None = None,
    channel: str | None = None,
    secrets: Iterable[str] = (),
) -> None:
    known = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)

    def clean(text: str | None) -> str | None:
        return redact(text, known)

    entry: dict[str, Any] = {
        "at": dt.datetime.now(dt.UTC),
        "source": source,
        "user": clean(user),
        "channel": clean(channel),
        "database": clean(outcome.database),
        "question": clean(outcome.question),
        "sql": clean(outcome.sql),
        "status": outcome.status,
        "mode": outcome.mode,
        "error_kind": outcome.error_kind or None,
        "rows": outcome.row_count,
        "ms": outcome.trace.ms,
        "llm_calls": outcome.trace.llm_calls,
        "tokens": outcome.trace.tokens,
        "trace_id": outcome.trace.id,
        "reused_from": outcome.reuse.audit_text() if outcome.reuse else None,
    }
    _write(engine, entry, "question")


def record_operation(
    engine: sa.Engine | None,
    *,
    source: str,
    action: str,
    database: str,
    error_kind: str | None,
    rows: int,
    ms: float,
    trace_id: str,
    user: str | None = None,
    channel: str | None = None,
    secrets: Iterable[str] = (),
) -> None:
    """Work on a database that answers no question (`index build`, `catalog import ...`: core/askbase.py
    `operating`): one row like a question's, the action in place of the question, the count the
    work reports as its rows, no SQL and no mode."""
    known = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
    entry: dict[str, Any] = {
        "at": dt.datetime.now(dt.UTC),
        "source": source,
        "user": redact(user, known),
        "channel": redact(channel, known),
        "database": redact(database, known),
        "question": redact(action, known),
        "sql": None,
        "status": "error" if error_kind else "answer",
        "mode": None,
        "error_kind": error_kind,
        "rows": rows,
        "ms": ms,
        "llm_calls": 0,
        "tokens": 0,
        "trace_id": trace_id,
        "reused_from": None,
    }
    _write(engine, entry, "operation")


def _write(engine: sa.Engine | None, entry: dict[str, Any], event: str) -> None:
    log.info(json.dumps({**entry, "at": entry["at"].isoformat(), "event": event}, ensure_ascii=False))
    if engine is not None:
        with engine.begin() as conn:
            conn.execute(audit.insert().values(**entry))


def secrets_of(settings: Settings) -> frozenset[str]:
    """Every secret value in the settings: keys, tokens, and the databases' passwords."""
    values = [
        settings.llm.api_key,
        settings.slack.bot_token,
        settings.slack.signing_secret,
        settings.slack.app_token,
        settings.slack.client_secret,
        settings.slack.state_secret,
        settings.teams.app_password,
        settings.teams.link_secret,
    ]
    found = {v.get_secret_value() for v in values if v is not None}
    for db in settings.databases.values():
        try:
            password = make_url(db.url).password
        except Exception:  # not a URL: nothing to take from it
            continue
        if password:
            found.add(str(password))
    return frozenset(s for s in found if s)


DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str) -> dt.timedelta:
    match = DURATION.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a duration like 30m, 12h or 7d")
    return dt.timedelta(**{UNITS[match.group(2)]: int(match.group(1))})


def entries_since(engine: sa.Engine, since: dt.timedelta) -> list[dict[str, Any]]:
    cutoff = dt.datetime.now(dt.UTC) - since
    with engine.connect() as conn:
        rows = conn.execute(sa.select(audit).where(audit.c.at >= cutoff).order_by(audit.c.at)).all()
    return [dict(r._mapping) for r in rows]
