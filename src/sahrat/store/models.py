"""The database schema (migrated by Alembic: ``migrations/``).

A table's match is its event log: the ``start`` entry (seed, options, seats)
and every accepted action, each with the table's ``seq``. ``(table_id, seq)``
is unique, so no two writers can ever both append the same step. Replaying
the log through the engine rebuilds the match exactly.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    false,
    func,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from sahrat.names import name_key


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


def _name_key_of_row(context: Any) -> str:
    return name_key(context.get_current_parameters()["name"])


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    # unique: "Boss", "boss", "boss" with an invisible mark and the look-alikes "b0ss"
    # and "b٥ss" are one name (sahrat.names). Accounts that shared a key when it was
    # made keep theirs suffixed "#<id>" (migrations 0005 and 0008). A skeleton can be
    # three times as long as its name.
    name_key: Mapped[str] = mapped_column(String(160), unique=True, default=_name_key_of_row)
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    guest: Mapped[bool] = mapped_column(Boolean, default=False)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    suspended: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    # the last authenticated request, written at most once a minute (friends' presence)
    last_seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Token(Base):
    """A bearer token; only its SHA-256 is stored."""

    __tablename__ = "tokens"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class SocketTicket(Base):
    """A one-time, short-lived ticket to open one table's WebSocket, so that the bearer
    token never travels in a URL. Only its SHA-256 is stored; using it deletes it. It
    remembers the token it was issued for: the socket closes when that token expires
    or is revoked."""

    __tablename__ = "socket_tickets"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    table_id: Mapped[int] = mapped_column(BigInteger)  # any id: the socket says 4404
    token_digest: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class GameTable(Base):
    """A table: its game and options, and where its current match stands."""

    __tablename__ = "game_tables"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(20))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    invite_code: Mapped[str | None] = mapped_column(String(32), unique=True, nullable=True)
    creator_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    # waiting (for players) | playing | finished | closed
    status: Mapped[str] = mapped_column(String(16), default="waiting", index=True)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    deadline_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    # a rated table's match moves its players' ratings (docs/rating.md)
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # its players and spectators may chat (docs/social.md, "Chat")
    chat: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # the creator's friends may watch it though it is private (docs/social.md, "Friends")
    friends_watch: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # spectators see each round (deal) once it is over (a prize tournament's table)
    spectator_delay: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # the tournament whose round this table plays (store/tournament_models.py), if any
    tournament_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)


class Seat(Base):
    """A taken seat: its owner (a player, or none for a bot's own seat) and who
    controls it now (``bot_level`` set while a bot plays it)."""

    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("table_id", "seat"), UniqueConstraint("table_id", "user_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("game_tables.id", ondelete="CASCADE"))
    seat: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    bot_level: Mapped[str | None] = mapped_column(String(16), nullable=True)
    left: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # the network address the player joined from (coin tables: one account per address)
    address: Mapped[str | None] = mapped_column(String(64), nullable=True)


class LogEntry(Base):
    """One step of a table's match: ``start`` (seed, options, seats) or ``action``."""

    __tablename__ = "log_entries"
    __table_args__ = (UniqueConstraint("table_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("game_tables.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    client_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Match(Base):
    """A finished match: its score sheet and its whole game record."""

    __tablename__ = "matches"
    __table_args__ = (Index("ix_matches_table", "table_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("game_tables.id", ondelete="CASCADE"))
    game: Mapped[str] = mapped_column(String(20))
    winner_seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    players: Mapped[list[Any]] = mapped_column(JSON)  # user ids by seat
    score_sheet: Mapped[dict[str, Any]] = mapped_column(JSON)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    finished_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )


class MatchPlayer(Base):
    """A person seated in a finished match, and how they played it: written in the same
    transaction as the match's row and never changed after (leaving the table, or its
    seats changing for a rematch, changes nothing here). A bot's own seat has no row.

    ``counted`` is the one rule of docs/economy.md ("What counts"), decided when the
    match ended (``sahrat.server.table.settlement.counted``): a counted match earns coins at a
    free table, counts towards the matches a coin table asks for, and counts on the
    leaderboard."""

    __tablename__ = "match_players"
    __table_args__ = (Index("ix_match_players_user", "user_id", "match_id"),)

    match_id: Mapped[int] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    # turns in which the player made a move of their own in this match
    own_turns: Mapped[int] = mapped_column(Integer, default=0)
    # the player's own seat at the end: not left, suspended, forfeited or played by a bot
    in_seat_at_end: Mapped[bool] = mapped_column(Boolean)
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 1 the first
    won: Mapped[bool] = mapped_column(Boolean)  # the match's single winner
    counted: Mapped[bool] = mapped_column(Boolean)
    # the network key (sahrat.server.addresses.network_key) the player sat down from
    network: Mapped[str | None] = mapped_column(String(64), nullable=True)


class MatchAnalysis(Base):
    """A finished Konkan match's analysis (docs/analysis.md), made once on request and
    served from here afterwards, by any process."""

    __tablename__ = "match_analyses"

    match_id: Mapped[int] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    seconds: Mapped[float] = mapped_column(Float)  # what making it took
    body: Mapped[dict[str, Any]] = mapped_column(JSON)


# --- the coin ledger (``sahrat.store.ledger``) -----------------------------------------

HOUSE_ACCOUNT = "house"


class LedgerAccount(Base):
    """An account coins can sit in: ``user:<id>`` (a player), ``pot:<table>:<seq>`` (a
    table match's pot, ``seq`` being its start entry) or ``house`` (grants coins)."""

    __tablename__ = "ledger_accounts"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))  # user | pot | house
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="RESTRICT"), unique=True, nullable=True
    )
    table_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Balance(Base):
    """An account's balance, updated in the same transaction as each entry. Only the
    house may go below zero: its balance is minus everything it ever granted."""

    __tablename__ = "balances"
    __table_args__ = (
        CheckConstraint(
            f"balance >= 0 OR account_id = '{HOUSE_ACCOUNT}'", name="ck_balances_non_negative"
        ),
    )

    account_id: Mapped[str] = mapped_column(ForeignKey("ledger_accounts.id"), primary_key=True)
    balance: Mapped[int] = mapped_column(BigInteger, default=0)


class LedgerEntry(Base):
    """One movement of coins: ``amount`` leaves ``debit_account`` and arrives in
    ``credit_account``. The idempotency key makes a replayed movement a no-op."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount > 0", name="ck_ledger_entries_positive"),
        Index("ix_ledger_entries_debit", "debit_account"),
        Index("ix_ledger_entries_credit", "credit_account"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(200), unique=True)
    debit_account: Mapped[str] = mapped_column(ForeignKey("ledger_accounts.id"))
    credit_account: Mapped[str] = mapped_column(ForeignKey("ledger_accounts.id"))
    amount: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(String(32))
    table_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    match_seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ServerSetting(Base):
    """A server default an admin set (welcome grant, free-table earnings, turn time)."""

    __tablename__ = "server_settings"

    key: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[int] = mapped_column(Integer)


# --- rated quick play's queue (``sahrat.store.queue``) ----------------------------------


class QueueEntry(Base):
    """A player waiting for a rated table (one entry per player), shared by every
    process: any of them may seat it. ``claimed_by`` marks the process forming its
    table (so that no other forms one too); ``table_id`` the table it was seated at."""

    __tablename__ = "queue_entries"
    __table_args__ = (Index("ix_queue_entries_waiting", "table_id", "pool"),)

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    game: Mapped[str] = mapped_column(String(20))
    pool: Mapped[str] = mapped_column(String(16))
    players: Mapped[int] = mapped_column(Integer)
    threshold: Mapped[int | None] = mapped_column(Integer, nullable=True)  # Konkan's
    speed: Mapped[str] = mapped_column(String(8))
    turn_seconds: Mapped[int] = mapped_column(Integer)
    rating: Mapped[int] = mapped_column(Integer)  # the shown rating at join
    # the network key (sahrat.server.addresses.network_key) the player queued from
    network: Mapped[str | None] = mapped_column(String(64), nullable=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))  # the last heartbeat
    claimed_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    table_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    seated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


# --- rated play (``sahrat.ratings``, ``sahrat.store.ratings``; docs/rating.md) ----------


class Rating(Base):
    """A player's rating in one pool, as the last rated match (or an admin's reset) left
    it. ``shown`` and ``provisional`` are written with ``mu`` and ``sigma`` so that the
    leaderboard is one index range: settled ratings of a pool by shown number."""

    __tablename__ = "ratings"
    __table_args__ = (
        Index("ix_ratings_board", "pool", "provisional", "shown", "user_id", "last_played_at"),
    )

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    pool: Mapped[str] = mapped_column(String(16), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    shown: Mapped[int] = mapped_column(Integer)
    provisional: Mapped[bool] = mapped_column(Boolean)
    last_played_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class RatingHistory(Base):
    """One change of a rating: after a rated match (``reason`` "match", with the
    player's place) or an admin's reset ("reset"). Written with the change, never
    changed after."""

    __tablename__ = "rating_history"
    __table_args__ = (Index("ix_rating_history_user", "user_id", "pool", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    pool: Mapped[str] = mapped_column(String(16))
    match_id: Mapped[int | None] = mapped_column(
        ForeignKey("matches.id", ondelete="SET NULL"), nullable=True
    )
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    shown: Mapped[int] = mapped_column(Integer)
    provisional: Mapped[bool] = mapped_column(Boolean)
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reason: Mapped[str] = mapped_column(String(8))  # match | reset
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RatedCooldown(Base):
    """A player's leave record for rated play (``sahrat.ratings.Cooldown``): the leave
    score, when the bar from rated play ends, and when the score was last updated."""

    __tablename__ = "rated_cooldowns"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    score: Mapped[float] = mapped_column(Float, default=0.0)
    leaves: Mapped[int] = mapped_column(Integer, default=0)
    until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RatedLeave(Base):
    """A rated match its player left, or whose seat the timer forfeited: one row per
    player and match (the match known by its table and its start entry's seq), so a
    leave counts once, whatever restarts or takeovers replay, and the match's end puts
    the seat last even if its player came back."""

    __tablename__ = "rated_leaves"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    table_id: Mapped[int] = mapped_column(
        ForeignKey("game_tables.id", ondelete="CASCADE"), primary_key=True
    )
    start_seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    reason: Mapped[str] = mapped_column(String(8))  # left | forfeit
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ChatReport(Base):
    """A chat message a player reported (docs/social.md, "Chat"): its words as said,
    kept for the admins (``GET /api/admin/chat/reports``); a reporter reports a message
    once."""

    __tablename__ = "chat_reports"
    __table_args__ = (UniqueConstraint("message_id", "reporter_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(Integer, index=True)  # kept when the table goes
    message_id: Mapped[str] = mapped_column(String(32))
    sender_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    sender_seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reporter_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))  # players | spectators
    text: Mapped[str | None] = mapped_column(String(400), nullable=True)
    phrase: Mapped[str | None] = mapped_column(String(32), nullable=True)
    said_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class Friendship(Base):
    """A friend request (``pending``) or a friendship (``accepted``) between two players:
    one row per pair (``pair`` is ``"<lower id>:<higher id>"``), whoever asked."""

    __tablename__ = "friendships"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pair: Mapped[str] = mapped_column(String(24), unique=True)
    requester_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    addressee_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(16))  # pending | accepted
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Block(Base):
    """A player blocked by another: no request, invitation or chat message from them."""

    __tablename__ = "blocks"

    blocker_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    blocked_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TableInvitation(Base):
    """A friend asked to a table; it seats them (as its invite code would) until it
    expires."""

    __tablename__ = "table_invitations"
    __table_args__ = (UniqueConstraint("table_id", "inviter_id", "invitee_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("game_tables.id", ondelete="CASCADE"))
    inviter_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    invitee_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
