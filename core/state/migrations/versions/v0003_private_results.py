"""Private results: a channel whose answers only the asker sees (`/ask private on`).

- `channel_settings.private_results` (false for every existing row: nothing changes for them);
- `channel_settings.database` may be NULL: a channel can be made private before (or without)
  anyone choosing its database with `/ask db NAME`, and NULL keeps meaning "the default".

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # SQLite cannot change a column's nullability in place: batch mode copies the table (rows too)
    with op.batch_alter_table("channel_settings") as batch:
        batch.add_column(sa.Column("private_results", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.alter_column("database", existing_type=sa.String(200), nullable=True)


def downgrade() -> None:
    """Back to 0002: channels made private without a database choice have nothing 0002 can keep."""
    op.execute(sa.text("DELETE FROM channel_settings WHERE database IS NULL"))
    with op.batch_alter_table("channel_settings") as batch:
        batch.alter_column("database", existing_type=sa.String(200), nullable=False)
        batch.drop_column("private_results")
