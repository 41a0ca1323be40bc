"""Table chat (docs/social.md, "Chat"): a table's ``chat`` setting (on unless its
creator turned it off), and ``chat_reports``, the messages players reported, kept with
their words for the admins.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("game_tables") as batch:
        batch.add_column(sa.Column("chat", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.create_table(
        "chat_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(length=32), nullable=False),
        sa.Column("sender_id", sa.Integer(), nullable=False),
        sa.Column("sender_seat", sa.Integer(), nullable=True),
        sa.Column("reporter_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("text", sa.String(length=400), nullable=True),
        sa.Column("phrase", sa.String(length=32), nullable=True),
        sa.Column("said_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["sender_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["reporter_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("message_id", "reporter_id"),
    )
    op.create_index("ix_chat_reports_table_id", "chat_reports", ["table_id"])
    op.create_index("ix_chat_reports_sender_id", "chat_reports", ["sender_id"])
    op.create_index("ix_chat_reports_reported_at", "chat_reports", ["reported_at"])


def downgrade() -> None:
    op.drop_index("ix_chat_reports_reported_at", table_name="chat_reports")
    op.drop_index("ix_chat_reports_sender_id", table_name="chat_reports")
    op.drop_index("ix_chat_reports_table_id", table_name="chat_reports")
    op.drop_table("chat_reports")
    with op.batch_alter_table("game_tables") as batch:
        batch.drop_column("chat")
