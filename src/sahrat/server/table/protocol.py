"""The WebSocket protocol's messages (documented in ``docs/protocol.md``).

Every server message is ``{"type", "seq", "payload"}`` where ``seq`` is the
table's sequence number after the step it reports. Clients send commands
with a client id (``cid``, for de-duplication) and the ``seq`` they saw.
JSON schemas of these models are in ``docs/schemas/`` (``sahrat schemas``).

Every message the server sends is built by ``messages.py``, one function per shape,
each naming the model here that documents it; what goes in a view is the engine's.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

# --- client → server ---------------------------------------------------------------


class Command(BaseModel):
    """Play an action for the connection's seat."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["command"]
    cid: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[^\x00]+$",
        description="client id, unique per command (any text without NUL)",
    )
    seq: int = Field(ge=0, description="the table's seq the client saw last")
    action: dict[str, Any] = Field(
        description='an engine action without its seat, e.g. {"type": "discard", '
        '"card": "7H"} (docs/game-record.md)'
    )


class CommandFields(Protocol):
    """What the table reads of a valid command: this model's fields, as the socket's
    decoder (``socket/decode.py``) gives them in its own struct."""

    cid: str
    seq: int
    action: dict[str, Any]


REACTIONS = ("hello", "good_game", "well_played", "thanks", "oops", "hurry", "wow", "laugh")


class React(BaseModel):
    """A quick reaction: one of a few preset phrases (no free text at the table)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["react"]
    reaction: Literal[
        "hello", "good_game", "well_played", "thanks", "oops", "hurry", "wow", "laugh"
    ]


class Reaction(BaseModel):
    """Someone at the table reacted."""

    seat: int | None
    user_id: int
    name: str | None
    reaction: str


class ChatBody(BaseModel):
    """What is said: free text, or a quick phrase by its key (docs/social.md, "Chat")."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(
        default=None,
        description="1 to 200 characters once trimmed, no control characters; "
        "exactly one of text and phrase",
    )
    phrase: str | None = Field(
        default=None, description="a quick phrase's key, e.g. yalla, nice, thanks, hurry"
    )


class Chat(BaseModel):
    """Say something at the table (players' and spectators' chat are apart)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["chat"]
    payload: ChatBody


class ChatInfo(BaseModel):
    """One chat message, as each connection allowed to read it gets it."""

    id: str = Field(description="the message's id (a report names it)")
    user_id: int
    name: str | None
    seat: int | None = Field(description="the sender's seat; null: a spectator")
    channel: Literal["players", "spectators"] = Field(
        description="players: said by a seated player, read by everyone at the table; "
        "spectators: said by a spectator, read by spectators (and by players except "
        "during play at a coin table)"
    )
    text: str | None = Field(description="free text (shown as text, never as markup)")
    phrase: str | None = Field(description="a quick phrase's key, shown in the reader's words")
    at: float = Field(description="when it was said, Unix seconds")


class ChatHistory(BaseModel):
    """The table's recent messages this connection may read (sent when it opens)."""

    messages: list[ChatInfo] = Field(description="oldest first, at most 50")


class Ping(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["ping"]


class Hint(BaseModel):
    """At a free table, on your turn: ask the server's bot what it would play."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["hint"]


class HintInfo(BaseModel):
    """The suggestion for the asking seat only: an action as a command would carry it."""

    action: dict[str, Any] = Field(description="an engine action without its seat")


class Rematch(BaseModel):
    """Once the match is over: play another one at the same seats (when everyone asks)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["rematch"]


class Resync(BaseModel):
    """Send me the table whole: a ``snapshot`` (a client that distrusts its view)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["resync"]


class Continue(BaseModel):
    """Done reading the round's summary: start the next round (when everyone has)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["continue"]


# --- server → client ------------------------------------------------------------------


class ErrorInfo(BaseModel):
    code: str = Field(description="stable machine-readable code")
    message: str = Field(description="what was wrong, in plain English")


class SeatRating(BaseModel):
    """A seat's rating at a rated table, in the table's pool (docs/rating.md)."""

    value: int = Field(description="the shown number (1500 for a new player)")
    provisional: bool = Field(description="still uncertain: shown with a ?")


class TableSeat(BaseModel):
    seat: int
    user_id: int | None
    name: str | None
    connected: bool
    away: bool = Field(description="disconnected past the grace period")
    bot: bool = Field(default=False, description="a bot plays this seat now")
    bot_level: str | None = Field(default=None, description="the bot's level, when a bot plays")
    left: bool = Field(default=False, description="the owner walked away from the match")
    rating: SeatRating | None = Field(
        default=None,
        description="at a rated table only: the seat's player's rating (a bot's fixed one), "
        "null for an empty seat",
    )


class TableInfo(BaseModel):
    id: int
    game: str
    options: dict[str, Any]
    private: bool
    invite_code: str | None = Field(default=None, description="shown to seated players only")
    status: Literal["waiting", "playing", "finished", "closed"]
    coin_table: bool
    creator_id: int
    seats: list[TableSeat]
    seq: int
    seed_commitment: str | None = Field(
        default=None, description="SHA-256 of the match's seed, revealed at match end"
    )
    rematch: list[int] = Field(
        default_factory=list,
        description="once the match is over: the seats that asked for a rematch (bots' "
        "seats at once); when every seat has, a new match starts at the same seats",
    )
    spectators: list[str] = Field(
        default_factory=list,
        description="the names of the users watching (at most 50), in the order they came",
    )
    spectator_count: int = Field(default=0, description="how many users are watching")
    rated: bool = Field(
        default=False,
        description="a rated table: its match moves its players' ratings (docs/rating.md); "
        "it offers no rematch",
    )
    chat: bool = Field(
        default=True,
        description="the table's chat is on (its creator may turn it off: docs/social.md)",
    )
    friends_watch: bool = Field(
        default=False,
        description="the creator's friends may watch this table though it is private "
        '(docs/social.md, "Friends")',
    )
    spectator_delay: bool = Field(
        default=False,
        description="spectators see each round (deal) of this table only once it is over: "
        "while one is played their snapshot's view is null and no update reaches them "
        '(a prize tournament\'s table: docs/protocol.md, "Spectators")',
    )
    tournament_id: int | None = Field(
        default=None,
        description="the tournament whose round this table plays (docs/tournaments.md); "
        "null at every other table",
    )


class RoundBreak(BaseModel):
    """The pause between two rounds (deals): no turn timer runs, nobody can move."""

    until: float = Field(description="when the next round's play starts anyway, Unix seconds")
    waiting: list[int] = Field(description="the seats whose player has not continued yet")


class Snapshot(BaseModel):
    """Everything a connection needs to draw the table from scratch."""

    table: TableInfo
    seat: int | None = Field(description="the connection's seat; null for a spectator")
    view: dict[str, Any] | None = Field(description="the engine's view for that seat")
    deadline: float | None = Field(
        description="when the table moves on by itself, Unix seconds: the turn's deadline, "
        "or during a round break the break's end"
    )
    round_break: RoundBreak | None = Field(
        default=None, description="set between two rounds (deals) until play resumes"
    )


class BreakInfo(BaseModel):
    """A round break changed: a player continued, or it ended (``round_break`` null)."""

    round_break: RoundBreak | None
    deadline: float | None = Field(description="the break's end, or the turn's once it ended")


class Update(BaseModel):
    """An accepted step: what happened, as this seat may see it, and what it changed in
    the seat's view (docs/protocol.md, "Updates")."""

    events: list[dict[str, Any]]
    changes: dict[str, Any] | None = Field(
        description="the view's fields the step changed, with their new values: lay them "
        "over the view you hold (null inside a resume's missed list, and when `view` is "
        "sent whole)"
    )
    gone: list[str] = Field(
        description="the view's fields no longer in it (e.g. drawn and simple_actions once "
        "the turn has passed): remove them"
    )
    view: dict[str, Any] | None = Field(
        description="the whole view after the step, sent instead of changes when this "
        "connection's seat was shown no view at the step's start (rare: it replaces "
        "the view you hold); null otherwise"
    )
    deadline: float | None
    by: Literal["player", "timer", "bot"]
    round_break: RoundBreak | None = Field(
        default=None, description="set when this step ended a round (deal) and a break began"
    )


class RatingChange(BaseModel):
    """One person's rating moved by a rated match."""

    seat: int
    user_id: int
    before: int = Field(description="the shown number before the match")
    after: int = Field(description="the shown number after it")
    provisional: bool = Field(description="the new rating is still provisional")
    unrated: Literal["short", "repeat", "no_opponent"] | None = Field(
        description="why this person's rating did not move (docs/rating.md, 'What a match "
        "is rated against'): the match was not really played (short), an opponent at the "
        "table was met too often lately (repeat), nobody counted as an opponent "
        "(no_opponent); null: it moved"
    )


class RatingsInfo(BaseModel):
    """What a rated match's end did to its players' ratings (sent once it is stored)."""

    pool: Literal["konkan51", "konkan71", "conquian"]
    changes: list[RatingChange] = Field(description="one per person seated, by seat")


class Reply(BaseModel):
    """The answer to one command (exactly one per command)."""

    cid: str
    ok: bool
    error: ErrorInfo | None = None
    snapshot: Snapshot | None = Field(default=None, description="sent with a stale error")


class Resume(BaseModel):
    """After a reconnect with ``since``: the missed updates, then a fresh snapshot."""

    missed: list[Update]
    snapshot: Snapshot


class ServerMessage(BaseModel):
    type: Literal[
        "snapshot",
        "update",
        "reply",
        "resume",
        "table",
        "break",
        "hint",
        "reaction",
        "chat",
        "chat_history",
        "ratings",
        "error",
        "pong",
        "bye",
    ]
    seq: int
    payload: dict[str, Any]


MESSAGE_PAYLOADS: dict[str, type[BaseModel] | None] = {
    "snapshot": Snapshot,
    "update": Update,
    "reply": Reply,
    "resume": Resume,
    "table": TableInfo,
    "break": BreakInfo,
    "hint": HintInfo,
    "reaction": Reaction,
    "chat": ChatInfo,
    "chat_history": ChatHistory,
    "ratings": RatingsInfo,
    "error": ErrorInfo,
    "pong": None,
    "bye": ErrorInfo,
}
