"""Account names are unique in one form: ``users.name_key`` is the name in NFKC, without
format (bidi) characters, with look-alike Arabic letters in one form, case-folded.

Accounts made before this could share a key ("boss", "Boss", "boss" with an invisible
mark): the oldest keeps the key, each later one gets ``<key>#<id>`` ('#' is never in a
name, so no new name can take it). Those accounts keep their names and still log in
by their exact name.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A copy of sahrat.store.models.name_key as it was when this migration was written
# (a migration must not change when the application's code does).
_LOOK_ALIKE = str.maketrans(
    {"\u06cc": "\u064a", "\u06a9": "\u0643"} | {chr(0x06F0 + d): chr(0x0660 + d) for d in range(10)}
)


def _name_key(name: str) -> str:
    normal = unicodedata.normalize("NFKC", name)
    visible = "".join(c for c in normal if unicodedata.category(c) != "Cf")
    return visible.translate(_LOOK_ALIKE).casefold()


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("name_key", sa.String(length=80), nullable=True))
    users = sa.table("users", sa.column("id", sa.Integer), sa.column("name"), sa.column("name_key"))
    bind = op.get_bind()
    taken: set[str] = set()
    for user_id, name in bind.execute(sa.select(users.c.id, users.c.name).order_by(users.c.id)):
        key = _name_key(name)
        if key in taken:
            key = f"{key}#{user_id}"
        taken.add(key)
        bind.execute(users.update().where(users.c.id == user_id).values(name_key=key))
    with op.batch_alter_table("users") as batch:
        batch.alter_column("name_key", existing_type=sa.String(length=80), nullable=False)
        batch.create_unique_constraint("uq_users_name_key", ["name_key"])


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_name_key", type_="unique")
        batch.drop_column("name_key")
