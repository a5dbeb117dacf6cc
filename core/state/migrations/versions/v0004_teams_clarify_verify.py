"""Teams at parity with Slack for clarifying questions and verified queries.

- `clarifications.address`: where a Teams clarifying question's card lives (the SDK's
  ConversationReference as JSON, as `schedules.address`), so the expiry sweep and a newer question
  can update a card in any conversation, not only the one being served; NULL for Slack's, whose
  channel and ts say it already;
- `verified_queries.verifier_name`: the verifier's display name, for chats that cannot render a
  user id as a name (Teams); NULL for Slack's, which show `<@U…>`.

Both columns are nullable and empty for rows made before: nothing changes for them.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("clarifications") as batch:
        batch.add_column(sa.Column("address", sa.JSON))
    with op.batch_alter_table("verified_queries") as batch:
        batch.add_column(sa.Column("verifier_name", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("verified_queries") as batch:
        batch.drop_column("verifier_name")
    with op.batch_alter_table("clarifications") as batch:
        batch.drop_column("address")
