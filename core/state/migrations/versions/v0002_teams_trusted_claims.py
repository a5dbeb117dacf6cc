"""Teams schedules, trusted answers, question claims: what main added to the state before migrations.

- `schedules.platform` (which chat a schedule posts in; every earlier row is a Slack one, so the
  column arrives with the server default 'slack') and `schedules.address` (a Teams conversation
  reference; NULL for Slack);
- `audit_log.reused_from` (an answer reused from a verified query or the cache; NULL before);
- the tables `verified_queries` and `answer_cache` (trusted answers) and `question_claims`
  (questions in flight, answered once even when a process dies), with their indexes.

Main made these with `metadata.create_all` for a while (4e317c5 had all but the claims, c06b5bd
all) before this revision existed, and the baseline adopts such a database table by table; so
each step here runs only where its column or table is missing, and a database from any of them
arrives at the same schema with its rows.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def _new_columns() -> dict[str, list[sa.Column[Any]]]:
    """Made anew on each call: a Column belongs to the one table Alembic attaches it to."""
    return {
        "schedules": [
            sa.Column("platform", sa.String(16), nullable=False, server_default="slack"),
            sa.Column("address", sa.JSON),
        ],
        "audit_log": [sa.Column("reused_from", sa.String(64))],
    }


def _create_table(name: str, *elements: sa.Column[Any] | sa.Constraint, indexes: Sequence[str] = ()) -> None:
    """Create `name` with its single-column indexes (ix_<table>_<column>) unless it exists."""
    if sa.inspect(op.get_bind()).has_table(name):
        return
    op.create_table(name, *elements)
    for column in indexes:
        op.create_index(f"ix_{name}_{column}", name, [column])


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table, columns in _new_columns().items():
        have = {c["name"] for c in inspector.get_columns(table)}
        for column in columns:
            if column.name not in have:
                # A plain ALTER TABLE ... ADD COLUMN on both SQLite and PostgreSQL: NOT NULL is
                # allowed because the server default fills every existing row.
                op.add_column(table, column)
    _create_table(
        "verified_queries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("sql", sa.Text, nullable=False),
        sa.Column("dialect", sa.String(32), nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("reusable", sa.Boolean, nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("verified_by", sa.String(64), nullable=False),
        sa.Column("verified_at", TZ, nullable=False),
        sa.Column("team", sa.String(64)),
        sa.Column("channel", sa.String(64)),
        sa.Column("source_trace", sa.String(32)),
        sa.Column("signature", sa.String(64)),
        sa.Column("stale_reason", sa.Text),
        sa.Column("stale_at", TZ),
        sa.Column("stale_notified_at", TZ),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("unverified_by", sa.String(64)),
        sa.Column("unverified_at", TZ),
        sa.Column("reuse_count", sa.Integer, nullable=False),
        sa.Column("last_reused_at", TZ),
        indexes=("database",),
    )
    _create_table(
        "answer_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("answer", sa.JSON, nullable=False),
        sa.Column("bytes", sa.Integer, nullable=False),
        sa.Column("source_trace", sa.String(32)),
        sa.Column("created_at", TZ, nullable=False),
        indexes=("database", "created_at"),
    )
    _create_table(
        "question_claims",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("lease_until", TZ, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("payload", sa.JSON),
        sa.Column("status_ref", sa.String(64)),
        sa.Column("thread_ref", sa.String(64)),
        sa.Column("received_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        indexes=("lease_until", "received_at"),
    )


def downgrade() -> None:
    """Back to 0001: the three tables and three columns go, with what they held."""
    op.drop_table("question_claims")
    op.drop_table("answer_cache")
    op.drop_table("verified_queries")
    for table, columns in _new_columns().items():
        with op.batch_alter_table(table) as batch:  # SQLite copies the table; PostgreSQL drops the column
            for column in reversed(columns):
                batch.drop_column(column.name)
