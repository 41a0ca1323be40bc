"""Seats carry who controls them: a bot's own seat has no owner, and a player who
left a free table keeps the seat while a bot plays it (``bot_level``); ``left``
marks a player who walked away (the turn timer plays a coin table's seat).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.alter_column("user_id", existing_type=sa.Integer(), nullable=True)
        batch.add_column(sa.Column("bot_level", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("left", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("left")
        batch.drop_column("bot_level")
        batch.alter_column("user_id", existing_type=sa.Integer(), nullable=False)
