"""Business definitions kept in the state database: taught in chat, learned from clarifications,
imported from dbt or OSI (the YAML ones stay in the catalog file).

A new table only; nothing changes for existing rows.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "definitions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("database", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("ref", sa.String(200), nullable=False),
        sa.Column("body", sa.JSON, nullable=False),
        sa.Column("scope_channel", sa.String(64)),
        sa.Column("scope_team", sa.String(64)),
        sa.Column("scope_user", sa.String(64)),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("replaces", sa.Integer),
        sa.Column("proposed_by", sa.String(64)),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.String(64)),
        sa.Column("decided_at", sa.DateTime(timezone=True)),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("note", sa.Text),
    )
    op.create_index("ix_definitions_database", "definitions", ["database"])
    op.create_index("ix_definitions_ref", "definitions", ["ref"])


def downgrade() -> None:
    op.drop_index("ix_definitions_ref", "definitions")
    op.drop_index("ix_definitions_database", "definitions")
    op.drop_table("definitions")
