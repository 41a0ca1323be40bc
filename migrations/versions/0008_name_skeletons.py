"""Account names that look alike are one name: ``users.name_key`` becomes the Unicode
confusables skeleton (UTS #39) of the name, taken whatever its case (``b0ss``, ``b٥ss``
and ``boss`` share one key; ``١ila``, ``اila`` and ``lila`` another), instead of the
NFKC form with a few Arabic letters and digits in one form. A skeleton can be three
times as long as its name: the column widens from 80 to 160 characters.

Accounts whose names now share a key keep them, as in migration 0005: the oldest keeps
the key, each later one gets ``<key>#<id>`` ('#' is never in a name, so no new name
can take it), and they still log in by their exact name.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op
from glyphguard.confusables import skeleton

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000  # keys written per statement

_users = sa.table("users", sa.column("id", sa.Integer), sa.column("name"), sa.column("name_key"))


# A copy of sahrat.names.name_key as it was when this migration was written (a
# migration must not change when the application's code does); the confusables data
# is glyphguard's, whose version pyproject.toml pins.
def _skeleton_key(name: str) -> str:
    normal = unicodedata.normalize("NFKC", name)
    key = "".join(c for c in normal if unicodedata.category(c) != "Cf").casefold()
    for _ in range(8):
        folded = skeleton(key).casefold()
        if folded == key:
            break
        key = folded
    return key


# The key of migration 0005 (for the downgrade).
_LOOK_ALIKE = str.maketrans(
    {"\u06cc": "\u064a", "\u06a9": "\u0643"} | {chr(0x06F0 + d): chr(0x0660 + d) for d in range(10)}
)


def _nfkc_key(name: str) -> str:
    normal = unicodedata.normalize("NFKC", name)
    visible = "".join(c for c in normal if unicodedata.category(c) != "Cf")
    return visible.translate(_LOOK_ALIKE).casefold()


def _rekey(key_of: Callable[[str], str]) -> None:
    """Every account's key by ``key_of``, the oldest account first to keep a shared one.

    The keys that change are first set to ``#<id>`` (no key is that: a name has visible
    characters and no '#'), so that no new key meets an old one still in place on the
    way: ``b٥ss`` (id 1) takes ``boss`` while ``boss`` (id 2) still holds it."""
    bind = op.get_bind()
    taken: set[str] = set()
    changes: list[dict[str, object]] = []
    rows = bind.execute(
        sa.select(_users.c.id, _users.c.name, _users.c.name_key).order_by(_users.c.id)
    )
    for user_id, name, old in rows.all():
        key = key_of(name)
        if key in taken:
            key = f"{key}#{user_id}"
        taken.add(key)
        if key != old:
            changes.append({"uid": user_id, "key": key})
    update = (
        _users.update()
        .where(_users.c.id == sa.bindparam("uid"))
        .values(name_key=sa.bindparam("key"))
    )
    for start in range(0, len(changes), BATCH):
        part = changes[start : start + BATCH]
        bind.execute(update, [{"uid": row["uid"], "key": f"#{row['uid']}"} for row in part])
    for start in range(0, len(changes), BATCH):
        bind.execute(update, changes[start : start + BATCH])


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.alter_column(
            "name_key", existing_type=sa.String(length=80), type_=sa.String(length=160)
        )
    _rekey(_skeleton_key)


def downgrade() -> None:
    _rekey(_nfkc_key)
    with op.batch_alter_table("users") as batch:
        batch.alter_column(
            "name_key", existing_type=sa.String(length=160), type_=sa.String(length=80)
        )
