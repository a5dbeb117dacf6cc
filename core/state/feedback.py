"""👍 / 👎 feedback; 👍 turns a question → SQL pair into a confirmed example for few-shot prompts."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from core.examples import Example
from core.previews import cut_text
from core.redact import scrub_question
from core.state.engine import preview_bytes
from core.state.schema import examples, feedback

MAX_EXAMPLES = 500  # per database; the most recent are the most relevant to today's schema


def record_feedback(
    engine: sa.Engine, trace_id: str, user: str | None, verdict: str, comment: str = ""
) -> None:
    if verdict not in ("up", "down"):
        raise ValueError(f"verdict must be 'up' or 'down', not {verdict!r}")
    with engine.begin() as conn:
        conn.execute(
            feedback.insert().values(
                trace_id=trace_id,
                user=user,
                verdict=verdict,
                # chat inputs are capped by the chat; a crafted request is not. Free text, so
                # stored without secrets like a question (core/redact.py)
                comment=cut_text(scrub_question(comment)[0], preview_bytes(engine)),
                created_at=dt.datetime.now(dt.UTC),
            )
        )


def confirm_example(
    engine: sa.Engine, database: str, question: str, sql: str, user: str | None = None
) -> None:
    """Store (or refresh) a confirmed example; the latest SQL for a question wins."""
    with engine.begin() as conn:
        updated = conn.execute(
            examples.update()
            .where(examples.c.database == database, examples.c.question == question)
            .values(sql=sql, created_by=user, created_at=dt.datetime.now(dt.UTC))
        ).rowcount
        if not updated:
            conn.execute(
                examples.insert().values(
                    database=database,
                    question=question,
                    sql=sql,
                    created_by=user,
                    created_at=dt.datetime.now(dt.UTC),
                )
            )


def examples_for(engine: sa.Engine, database: str) -> list[Example]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(examples.c.question, examples.c.sql)
            .where(examples.c.database == database)
            .order_by(examples.c.created_at.desc())
            .limit(MAX_EXAMPLES)
        ).all()
    return [Example(r.question, r.sql, database) for r in rows]


def feedback_for(engine: sa.Engine, trace_id: str) -> list[dict[str, object]]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(feedback).where(feedback.c.trace_id == trace_id).order_by(feedback.c.id)
        ).all()
    return [dict(r._mapping) for r in rows]


def recent_votes(engine: sa.Engine, limit: int = 50) -> list[dict[str, object]]:
    """The latest votes, newest first, each with the trace it is about (what the analysts review)."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(
                feedback.c.trace_id,
                feedback.c.user,
                feedback.c.verdict,
                feedback.c.comment,
                feedback.c.created_at,
            )
            .order_by(feedback.c.id.desc())
            .limit(limit)
        ).all()
    return [dict(r._mapping) for r in rows]


def is_example(engine: sa.Engine, database: str, question: str, sql: str) -> bool:
    """Whether `question` is a confirmed example on `database` with this very SQL."""
    with engine.connect() as conn:
        found = conn.execute(
            sa.select(examples.c.sql).where(examples.c.database == database, examples.c.question == question)
        ).scalar()
    return found is not None and found == sql
