"""`python -m bot audit [--since 1d] [--json]`: who asked what, where, and what ran.

A table for people by default (one line per question, times in UTC, long text cut); `--json`
prints one JSON object with every field of every entry, for scripts and log tooling.
Exit codes: 0, or 2 when --since is not a duration.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

from bot.terminal import table
from core.conversation.upkeep import entries_since, open_state, parse_since
from core.settings import Settings

COLUMNS = (
    "at (UTC)",
    "source",
    "user",
    "channel",
    "database",
    "status",
    "rows",
    "ms",
    "llm",
    "tokens",
    "question",
    "sql",
)


def run_audit(args: argparse.Namespace, settings: Settings) -> int:
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    engine = open_state(settings.state_database_url)
    try:
        entries = entries_since(engine, since)
    finally:
        engine.dispose()
    if getattr(args, "json", False):
        print(
            json.dumps({"since": args.since, "count": len(entries), "entries": [_json(e) for e in entries]})
        )
        return 0
    if not entries:
        print(f"No questions in the last {args.since}.")
        return 0
    print(table(COLUMNS, [_row(e) for e in entries], max_rows=len(entries)))
    print(_summary(entries, args.since))
    return 0


def _when(value: Any) -> str:
    if isinstance(value, dt.datetime):
        when = value.astimezone(dt.UTC) if value.tzinfo is not None else value
        return when.strftime("%Y-%m-%d %H:%M:%S")
    return str(value or "")


def _status(entry: dict[str, Any]) -> str:
    if entry.get("status") == "error":
        return f"error:{entry.get('error_kind') or '?'}"
    status = entry.get("status") or ""
    if entry.get("reused_from"):  # "verified #3", "cache 1a2b3c4d5e6f" (issue 19)
        return f"{status} ({str(entry['reused_from']).split(' of ')[0][:16]})"
    return f"{status} ({entry['mode']})" if entry.get("mode") == "keyword" else status


def _row(entry: dict[str, Any]) -> list[Any]:
    return [
        _when(entry.get("at")),
        entry.get("source") or "",
        entry.get("user") or "-",
        entry.get("channel") or "-",
        entry.get("database") or "",
        _status(entry),
        entry.get("rows"),
        None if entry.get("ms") is None else round(entry["ms"]),
        entry.get("llm_calls"),
        entry.get("tokens"),
        entry.get("question") or "",
        entry.get("sql") or "",
    ]


def _summary(entries: list[dict[str, Any]], since: str) -> str:
    errors = sum(1 for e in entries if e.get("status") == "error")
    refused = sum(1 for e in entries if e.get("error_kind") == "access")
    calls = sum(e.get("llm_calls") or 0 for e in entries)
    tokens = sum(e.get("tokens") or 0 for e in entries)
    people = len({(e.get("source"), e.get("user")) for e in entries})
    return (
        f"{_n(len(entries), 'question')} in the last {since} from {_n(people, 'asker')}: "
        f"{_n(errors, 'error')} ({refused:,} refused by access rules), {_n(calls, 'LLM call')}, "
        f"{_n(tokens, 'token')}."
    )


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _json(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: (_iso(v) if isinstance(v, dt.datetime) else v) for k, v in entry.items()}


def _iso(value: dt.datetime) -> str:
    return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()
