"""The answer cache: the same question, asked again soon, gets the answer computed a moment ago.

"The same question" is strict, so a cached answer is always the answer the pipeline would give:
the same normalized text (core/normalize.py), the same database, the same schema signature (a
changed schema is another key), the same per-database rules (denied and masked columns), and the
same access: the principal's matching access rules (core/access.py `matching_rules`), so an
answer never crosses to someone the rules treat differently — and, on a database with row-level
security (core/identity.py), the same identity told to the database. The operator (CLI, console) has a
key of its own. Only answers are cached, only within the window, only up to a size, and never for
a database configured off (`cache.off`).

This module is the pure part (keys, what is kept, the outcome a hit becomes); the rows live in
the state database (core/state/answer_cache.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from core.access import Principal, matching_rules
from core.answer import Mode, Outcome, Reuse, json_value
from core.guard import RULES_VERSION
from core.identity import NoDatabaseRole, identity_for
from core.normalize import normalize_question
from core.settings import CacheSettings, DatabaseSettings, Settings
from core.trace import Trace


@dataclass(frozen=True)
class CacheKey:
    database: str
    question: str  # normalized
    signature: str  # the catalog's schema signature
    rules: str  # the database's deny / mask rules
    access: str  # which access rules the asker matches

    @property
    def digest(self) -> str:
        text = "\x1f".join([self.database, self.question, self.signature, self.rules, self.access])
        return hashlib.sha256(text.encode()).hexdigest()


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def access_key(settings: Settings, who: Principal, database: str) -> str:
    if who.operator:
        return "operator"
    matched = matching_rules(settings, who, database)
    rules = [settings.access.rules[i].model_dump() for i in matched]
    governed = any(database in r.databases or "*" in r.databases for r in settings.access.rules)
    return f"rules {list(matched)} {_digest(rules)}" if governed else "open"


def rules_digest(config: DatabaseSettings) -> str:
    """The database's own rules (denied and masked columns) and the guard's rules version, in a few
    characters: answers and verified queries checked under older rules are checked again."""
    return _digest(
        [sorted(config.deny_tables), sorted(config.deny_columns), sorted(config.mask_columns), RULES_VERSION]
    )


def key_for(
    settings: Settings,
    who: Principal,
    database: str,
    config: DatabaseSettings,
    question: str,
    signature: str,
    meaning: str = "",
) -> CacheKey:
    """`meaning`: the fingerprint of the business definitions in force for the asker."""
    return CacheKey(
        database,
        normalize_question(question),
        signature,
        rules_digest(config) + (f"/{meaning}" if meaning else ""),
        access_key(settings, who, database) + identity_key(config, who),
    )


def identity_key(config: DatabaseSettings, who: Principal) -> str:
    """With row-level security (core/identity.py) the database answers each person — their role,
    id, email, groups, channel — its own way: their answers are cached apart."""
    try:
        identity = identity_for(config, who, source="")
    except NoDatabaseRole:
        return " no role"
    return "" if identity is None else f" as {_digest([identity.role, sorted(identity.variables.items())])}"


def enabled(settings: CacheSettings, database: str) -> bool:
    return settings.window_s > 0 and settings.max_entries > 0 and database not in settings.off


@dataclass(frozen=True)
class CachedAnswer:
    """What is kept of an answer: enough to show it again, nothing of its trace."""

    question: str  # as first asked
    database: str
    mode: Mode
    answer: str
    sql: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]  # JSON values (dates as ISO text)
    truncated: bool
    interpretation: str
    computed_at: dt.datetime
    trace_id: str  # the answer it repeats
    reuse: Reuse | None = None  # it was itself answered from a verified query

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "database": self.database,
            "mode": self.mode,
            "answer": self.answer,
            "sql": self.sql,
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "truncated": self.truncated,
            "interpretation": self.interpretation,
            "computed_at": self.computed_at.isoformat(),
            "trace_id": self.trace_id,
            "reuse": self.reuse.to_json() if self.reuse else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CachedAnswer:
        reuse = data.get("reuse")
        return cls(
            question=str(data["question"]),
            database=str(data["database"]),
            mode="keyword" if data.get("mode") == "keyword" else "llm",
            answer=str(data.get("answer", "")),
            sql=str(data.get("sql", "")),
            columns=tuple(str(c) for c in data.get("columns", ())),
            rows=tuple(tuple(r) for r in data.get("rows", ())),
            truncated=bool(data.get("truncated")),
            interpretation=str(data.get("interpretation", "")),
            computed_at=_utc(dt.datetime.fromisoformat(data["computed_at"])),
            trace_id=str(data.get("trace_id", "")),
            reuse=_reuse(reuse) if reuse else None,
        )


def _utc(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _reuse(data: dict[str, Any]) -> Reuse:
    at = data.get("verified_at")
    return Reuse(
        verified_id=data.get("verified_id"),
        verified_by=data.get("verified_by") or "",
        verified_at=_utc(dt.datetime.fromisoformat(at)) if at else None,
        verifier_name=data.get("verifier_name") or "",
        match=data.get("match") or "",
    )


def keepable(outcome: Outcome, settings: CacheSettings, now: dt.datetime) -> tuple[CachedAnswer, int] | None:
    """The answer as the cache keeps it, and its size; None when it is not to be kept (not an
    answer, a replay of the cache itself, or too large)."""
    if outcome.status != "answer" or (outcome.reuse is not None and outcome.reuse.cached):
        return None
    if outcome.exported_rows is not None or outcome.row_count > settings.max_rows:
        return None
    cached = CachedAnswer(
        question=outcome.question,
        database=outcome.database,
        mode=outcome.mode,
        answer=outcome.answer,
        sql=outcome.sql,
        columns=outcome.columns,
        rows=tuple(tuple(json_value(v) for v in row) for row in outcome.rows),
        truncated=outcome.truncated,
        interpretation=outcome.interpretation,
        computed_at=now,
        trace_id=outcome.trace.id,
        reuse=outcome.reuse,
    )
    size = len(json.dumps(cached.to_json(), default=str))
    return (cached, size) if size <= settings.max_bytes else None


def fresh(cached: CachedAnswer, now: dt.datetime, window_s: int) -> bool:
    return dt.timedelta(0) <= now - cached.computed_at <= dt.timedelta(seconds=window_s)


def replay(cached: CachedAnswer, question: str, trace: Trace) -> Outcome:
    """A cache hit as an answer of its own (its own trace, so its buttons work), saying how old it is."""
    reuse = replace(cached.reuse or Reuse(), cached_at=cached.computed_at, cached_from=cached.trace_id)
    return Outcome(
        status="answer",
        question=question,
        database=cached.database,
        mode=cached.mode,
        answer=cached.answer,
        sql=cached.sql,
        columns=cached.columns,
        rows=[tuple(r) for r in cached.rows],
        truncated=cached.truncated,
        interpretation=cached.interpretation,
        trace=trace,
        reuse=reuse,
    )
