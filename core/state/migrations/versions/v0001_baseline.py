"""Baseline: the state schema of the release before migrations (core/state/schema.py at eb83305).

Each table is created only where it is missing, so a database that release made with
`metadata.create_all` (all tables, or the ones its features had by then) is adopted in place,
keeping its rows, and a new database gets exactly the same schema.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def _create_table(name: str, *elements: sa.Column[Any] | sa.Constraint, indexes: Sequence[str] = ()) -> None:
    """Create `name` with its single-column indexes (ix_<table>_<column>) unless it exists."""
    if sa.inspect(op.get_bind()).has_table(name):
        return
    op.create_table(name, *elements)
    for column in indexes:
        op.create_index(f"ix_{name}_{column}", name, [column])


def upgrade() -> None:
    _create_table(
        "conversations",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("channel", sa.String(64)),
        sa.Column("user", sa.String(64)),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    )
    _create_table(
        "turns",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("conversation_id", sa.String(200), sa.ForeignKey("conversations.id"), nullable=False),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("user", sa.String(64)),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("mode", sa.String(16)),
        sa.Column("answer", sa.Text),
        sa.Column("sql", sa.Text),
        sa.Column("columns", sa.JSON),
        sa.Column("row_count", sa.Integer),
        sa.Column("created_at", TZ, nullable=False),
        indexes=("conversation_id", "trace_id"),
    )
    _create_table(
        "traces",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    _create_table(
        "processed_events",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("received_at", TZ, nullable=False),
    )
    _create_table(
        "feedback",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("user", sa.String(64)),
        sa.Column("verdict", sa.String(8), nullable=False),
        sa.Column("comment", sa.Text),
        sa.Column("created_at", TZ, nullable=False),
        indexes=("trace_id",),
    )
    _create_table(
        "examples",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("sql", sa.Text, nullable=False),
        sa.Column("created_by", sa.String(64)),
        sa.Column("created_at", TZ, nullable=False),
        sa.UniqueConstraint("database", "question", name="uq_examples_question"),
        indexes=("database",),
    )
    _create_table(
        "channel_settings",
        sa.Column("team", sa.String(64), primary_key=True),
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("set_by", sa.String(64)),
        sa.Column("updated_at", TZ, nullable=False),
    )
    _create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", TZ, nullable=False),
        sa.Column("source", sa.String(32)),
        sa.Column("user", sa.String(64)),
        sa.Column("channel", sa.String(64)),
        sa.Column("database", sa.String(200)),
        sa.Column("question", sa.Text),
        sa.Column("sql", sa.Text),
        sa.Column("status", sa.String(16)),
        sa.Column("mode", sa.String(16)),
        sa.Column("error_kind", sa.String(32)),
        sa.Column("rows", sa.Integer),
        sa.Column("ms", sa.Float),
        sa.Column("llm_calls", sa.Integer),
        sa.Column("tokens", sa.Integer),
        sa.Column("trace_id", sa.String(32)),
        indexes=("at",),
    )
    _create_table(
        "schedules",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("team", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("sql", sa.Text, nullable=False),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("trigger", sa.JSON, nullable=False),
        sa.Column("condition", sa.JSON, nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("paused_reason", sa.Text),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("retry_at", TZ),
        sa.Column("error_ts", sa.String(32)),
        sa.Column("last_tick", TZ),
        sa.Column("last_run_at", TZ),
        sa.Column("last_status", sa.String(16)),
        sa.Column("last_rows", sa.Integer),
        sa.Column("last_fingerprint", sa.String(64)),
        sa.Column("last_result", sa.JSON),
        sa.Column("source_trace", sa.String(32)),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        indexes=("team", "channel", "owner"),
    )
    _create_table(
        "schedule_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("schedule_id", sa.Integer, nullable=False),
        sa.Column("scheduled_for", TZ, nullable=False),
        sa.Column("manual", sa.Boolean, nullable=False),
        sa.Column("worker", sa.String(200)),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ),
        sa.Column("ms", sa.Float),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("rows", sa.Integer),
        sa.Column("error", sa.Text),
        sa.Column("note", sa.Text),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("message_ts", sa.String(32)),
        sa.UniqueConstraint("schedule_id", "scheduled_for", name="uq_schedule_runs_tick"),
        indexes=("schedule_id",),
    )
    _create_table(
        "scheduler_lease",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("acquired_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
    )
    _create_table(
        "clarifications",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("conversation_id", sa.String(200), nullable=False),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("transcript", sa.JSON, nullable=False),
        sa.Column("asker", sa.String(64)),
        sa.Column("team", sa.String(64)),
        sa.Column("channel", sa.String(64)),
        sa.Column("thread_ts", sa.String(32)),
        sa.Column("message_ts", sa.String(32)),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("answer", sa.Text),
        sa.Column("answer_value", sa.Text),
        sa.Column("answered_by", sa.String(64)),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
        sa.Column("answered_at", TZ),
        indexes=("conversation_id",),
    )


def downgrade() -> None:
    """The baseline is where history starts: nothing before it to go back to."""
    raise NotImplementedError("the baseline revision cannot be downgraded")
