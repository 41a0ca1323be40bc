"""The REST API's request and response bodies, and how a stored row becomes one.

Every body is a pydantic model: the OpenAPI document (``/openapi.json``, ``/docs``)
names each by its class. A request body forbids fields it does not know.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sahrat.names import NAME_CHARS
from sahrat.rules.record import GAMES
from sahrat.server.table.protocol import ErrorInfo, TableInfo
from sahrat.store.models import LedgerEntry, Match, User

# --- errors ------------------------------------------------------------------------------


class ErrorResponse(BaseModel):
    detail: ErrorInfo


class ValidationErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ValidationErrorResponse(BaseModel):
    """FastAPI's shape for an invalid request (and for a bad table option)."""

    detail: list[ValidationErrorItem]


# --- accounts ----------------------------------------------------------------------------


class UserOut(BaseModel):
    id: int
    name: str
    guest: bool


Pool = Literal["konkan51", "konkan71", "conquian"]


class PoolRating(BaseModel):
    """A rating in one pool (docs/rating.md)."""

    rating: int = Field(description="the shown number (1500 for a new player)")
    provisional: bool = Field(description="still uncertain: shown with a ?")
    games: int = Field(description="rated matches played in the pool")


class CooldownOut(BaseModel):
    """A cool-down from rated play after leaving rated matches (docs/rating.md)."""

    until: datetime
    seconds_left: int


class MeOut(UserOut):
    balance: int = Field(description="coins")
    is_admin: bool = False
    suspended: bool = False
    ratings: dict[str, PoolRating] = Field(
        default_factory=dict, description="by pool, the pools played rated"
    )
    cooldown: CooldownOut | None = Field(
        default=None, description="set while barred from rated play"
    )


class AuthOut(BaseModel):
    token: str = Field(description="send it as `Authorization: Bearer <token>`")
    user: UserOut


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        max_length=100,
        description=f"{NAME_CHARS}; taken in NFKC, trimmed, spaces collapsed, and unique "
        "whatever its case or look (checked by the route: 422 ``name_hidden_chars`` for a "
        "control or bidi character)",
        examples=["layla"],
    )
    password: str = Field(min_length=8, max_length=1024, examples=["correct horse"])


class RenameBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        max_length=100,
        description=f"{NAME_CHARS}; taken in NFKC, trimmed, spaces collapsed, and unique "
        "whatever its case or look (checked by the route: 422 ``name_hidden_chars`` for a "
        "control or bidi character)",
        examples=["layla"],
    )


class GuestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lang: Literal["ar", "en"] | None = Field(
        default=None,
        description="the page's language: the guest's generated name is in it (English "
        "when not given)",
    )


class LoginBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=100)
    password: str = Field(max_length=1024)


class EntryOut(BaseModel):
    """One coin movement, as seen from one account."""

    id: int
    amount: int = Field(description="positive: coins in; negative: coins out")
    reason: str = Field(description="welcome | earnings | stake | payout")
    counterparty: str = Field(description="the other account: house, pot:<table>:<seq>, user:<id>")
    table_id: int | None
    created_at: datetime


class LedgerOut(BaseModel):
    balance: int
    entries: list[EntryOut] = Field(description="newest first")


class LeaderRow(BaseModel):
    user_id: int
    name: str
    coins: int
    wins: int


# --- tables ------------------------------------------------------------------------------


class NewTable(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    game: str = Field(description=f"one of {', '.join(GAMES)}", examples=["konkan"])
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="table options (docs: RULES.md §1.11, §2.6); omitted ones take defaults",
        examples=[{"players": 2}],
    )
    private: bool = Field(default=False, description="unlisted; joined with its invite code")
    rated: bool = Field(
        default=False,
        description="a rated table (admins only: others get rated play from the queue)",
    )
    chat: bool = Field(default=True, description='the table\'s chat is on (docs/social.md, "Chat")')
    friends_watch: bool = Field(default=False, description="the creator's friends may watch it")


class JoinBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    seat: int | None = Field(default=None, description="a free seat; the first free by default")
    invite_code: str | None = Field(
        default=None, max_length=64, description="a private table's invite code"
    )


class InviteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    invite_code: str = Field(min_length=1, max_length=64)


class StartBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    bots: bool = Field(default=True, description="fill the empty seats with bots")
    level: Literal["simple", "strong", "expert"] | None = Field(
        default=None,
        description="how well the bots play; overrides the table's `bot_level` option "
        "for this match (its bots and those taking over a leaver's seat) if given",
    )


class TicketOut(BaseModel):
    ticket: str
    expires_in: float


# --- finished matches --------------------------------------------------------------------


class MatchSummary(BaseModel):
    id: int
    table_id: int
    game: str
    winner_seat: int | None
    players: list[int | None] = Field(description="user ids by seat")
    score_sheet: dict[str, Any]
    finished_at: datetime


class MatchDetail(MatchSummary):
    record: dict[str, Any] = Field(description="a game record: `sahrat replay` plays it back")


class MyMatch(MatchSummary):
    seat: int = Field(description="my seat in the match")
    won: bool
    place: int | None = Field(
        description="my place, 1 the first (tied places share one); null if the sheet has none"
    )
    total: int | None = Field(
        description="my total: Konkan points (fewer is better), Conquian deals won"
    )
    totals: list[int] = Field(description="every seat's total, by seat")
    names: list[str | None] = Field(description="the players' names today, by seat; null: a bot")
    counted: bool = Field(
        description="the match counted for me (docs/economy.md, 'What counts'): it earned "
        "free-table coins, counts towards a coin table's required matches and on the "
        "leaderboard"
    )


class MyTable(BaseModel):
    """A table I am seated at, as the lobby's "my games" shows it (docs/social.md)."""

    table: TableInfo
    seat: int = Field(description="my seat")
    turn: int | None = Field(
        description="the seat whose move it is; null while nobody's (waiting for players, "
        "between two rounds, the match over)"
    )
    turn_name: str | None = Field(
        description="that seat's player's name (a bot may be playing it for them); null for "
        "a bot's own seat"
    )
    yours: bool = Field(description="it is my move")
    finished: bool = Field(
        description="the match is over and the table still open (a rematch may be asked); "
        "it leaves the list when the table closes"
    )
    left: bool = Field(description="I walked away from the match: a bot or the timer plays")


class ReplayStep(BaseModel):
    """The table after a step of a finished match, every hand face up."""

    view: dict[str, Any] = Field(description="the spectator view (without options and scores)")
    hands: list[list[str]] = Field(description="every seat's hand")


class ReplayOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    start: int = Field(alias="from", description="the step this page starts at")
    total: int = Field(description="the steps of the whole match: the deal, then one per action")
    next: int | None = Field(description="where the next page starts; null after the last step")
    steps: list[ReplayStep] = Field(description="at most `limit` steps, from `from` on")


# --- health ------------------------------------------------------------------------------


class Health(BaseModel):
    ok: bool


class Ready(BaseModel):
    ready: bool
    pid: int = Field(
        description="the answering process's id: which process a supervisor (or a test that "
        "started one) reached on this port"
    )


# --- admin -------------------------------------------------------------------------------


class AdminNewTable(NewTable):
    sit: bool = Field(default=False, description="the admin takes the first seat")


class OptionsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    options: dict[str, Any] = Field(
        description="options to change (RULES.md §1.11, §2.6); the others are kept",
        examples=[{"stake": 100, "players": 3}],
    )


class Defaults(BaseModel):
    welcome_grant: int = Field(description="coins a new account gets")
    free_table_earnings: int = Field(
        description="coins per player of a counted free-table match (docs/economy.md)"
    )
    default_turn_seconds: int = Field(description="a new table's turn time unless it sets one")
    free_table_earnings_per_day: int = Field(
        description="the most free-table earnings one account is paid in any 24 hours"
    )


class DefaultsBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    welcome_grant: int | None = Field(default=None, ge=0, le=1_000_000)
    free_table_earnings: int | None = Field(default=None, ge=0, le=1_000_000)
    default_turn_seconds: int | None = Field(default=None, ge=10, le=300)
    free_table_earnings_per_day: int | None = Field(default=None, ge=0, le=1_000_000_000)


class PlayerOut(BaseModel):
    id: int
    name: str
    guest: bool
    is_admin: bool
    suspended: bool
    balance: int


class SuspendBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    suspended: bool = Field(default=True, description="false lifts a suspension")


class LedgerCheck(BaseModel):
    ok: bool = Field(description="no coin appeared or vanished, no balance below zero")
    total: int = Field(description="the sum of every balance: 0")
    granted: int = Field(description="everything the house ever gave")
    held: int = Field(description="the players' and pots' balances: equal to granted")
    negative: list[str] = Field(description="accounts below zero")
    mismatched: list[str] = Field(description="accounts whose balance is not their entries'")


# --- from the store ----------------------------------------------------------------------


def utc(moment: datetime) -> datetime:
    """SQLite gives naive UTC datetimes (asyncpg aware ones): always send an offset."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def user_out(user: User) -> UserOut:
    return UserOut(id=user.id, name=user.name, guest=user.guest)


def table_info(data: dict[str, Any]) -> TableInfo:
    """A table as the hub describes it."""
    return TableInfo.model_validate(data)


def match_fields(row: Match) -> dict[str, Any]:
    """A finished match's summary fields (a :class:`MatchSummary`'s)."""
    return {
        "id": row.id,
        "table_id": row.table_id,
        "game": row.game,
        "winner_seat": row.winner_seat,
        "players": row.players,
        "score_sheet": row.score_sheet,
        "finished_at": utc(row.finished_at),
    }


def entry_out(entry: LedgerEntry, account: str) -> EntryOut:
    """A ledger entry as ``account`` sees it: coins in or out, and from or to whom."""
    incoming = entry.credit_account == account
    return EntryOut(
        id=entry.id,
        amount=entry.amount if incoming else -entry.amount,
        reason=entry.reason,
        counterparty=entry.debit_account if incoming else entry.credit_account,
        table_id=entry.table_id,
        created_at=utc(entry.created_at),
    )
