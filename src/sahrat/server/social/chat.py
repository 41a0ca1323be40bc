"""Table chat's rules (docs/social.md, "Chat"): what may be said, how often, and who
reads it.

A message is free text or one of the quick phrases (:data:`PHRASES`, sent as its key:
each page shows it in its own language). Free text is trimmed; it must then hold 1 to
:data:`MAX_CHARS` characters and no control character (line breaks, tabs, the
bidirectional overrides, embeddings, isolates and marks, and every other invisible
format character but the joiners that Arabic, Persian and emoji sequences need).
A user may send :data:`RATE_COUNT` messages in any :data:`RATE_WINDOW` seconds at a
table (refused ones do not count).

Who reads what: a player's message (the sender has a seat) is the table's: every
connection gets it, players' and spectators'. A spectator's message is the spectators';
players read it too except during play at a coin table (:func:`players_read_spectators`:
a watcher must not be able to advise a player where coins are at stake). A viewer never
gets the message of someone they blocked (:data:`Blocked`, the hook the friends' blocks
plug into; nobody is blocked until then). Muting is the page's own: a muted player's
messages still come, and the page hides them.

Each table keeps its last :data:`HISTORY` messages in memory (:class:`ChatRoom`): a
connection that opens gets those it may read, and a report names one of them. Nothing
here knows a table, a socket or the database: ``table/chat.py`` wires it to a table.
"""

from __future__ import annotations

import secrets
import time
import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

MAX_CHARS = 200  # characters of free text, after trimming
HISTORY = 50  # messages a table keeps
RATE_COUNT = 5  # messages a user may send...
RATE_WINDOW = 10.0  # ...in any window of this many seconds, at one table

# The quick phrases, by key (the pages' words: chat.phrase.<key> in static/i18n/).
PHRASES = (
    "hello",
    "yalla",
    "nice",
    "well_played",
    "better_luck",
    "thanks",
    "hurry",
    "wait",
    "sorry",
    "good_game",
    "one_more",
    "bye",
)

Channel = Literal["players", "spectators"]

# Format characters a text may hold: the zero-width non-joiner and joiner (Persian and
# Arabic words, emoji sequences) and the tag characters of subdivision flags.
ALLOWED_FORMAT = frozenset({"\u200c", "\u200d"}) | frozenset(map(chr, range(0xE0020, 0xE0080)))
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

# Whether ``viewer`` blocked ``sender``: the friends' blocks plug in here (a block hides
# every message of the blocked one from the blocker). Until then nobody is blocked.
Blocked = Callable[[int, int], bool]


def nobody_blocked(viewer: int, sender: int) -> bool:
    return False


def error_payload(code: str, message: str) -> dict[str, Any]:
    """A refused chat message (an ``error`` payload: ``ErrorInfo``)."""
    return {"code": code, "message": message}


def control_character(text: str) -> str | None:
    """The first character of ``text`` a message may not hold, if any."""
    for char in text:
        if unicodedata.category(char) in REFUSED_CATEGORIES and char not in ALLOWED_FORMAT:
            return char
    return None


def check_text(raw: str) -> tuple[str, None] | tuple[None, dict[str, Any]]:
    """Free text as it will be shown (trimmed), or why it is refused."""
    text = raw.strip()
    if not text:
        return None, error_payload("chat_empty", "a message needs some text")
    if len(text) > MAX_CHARS:
        return None, error_payload(
            "chat_too_long", f"a message holds at most {MAX_CHARS} characters, not {len(text)}"
        )
    bad = control_character(text)
    if bad is not None:
        return None, error_payload(
            "chat_bad_text",
            f"a message may not hold control characters (U+{ord(bad):04X})",
        )
    return text, None


def players_read_spectators(*, coin_table: bool, playing: bool) -> bool:
    """Whether the players read the spectators' messages now: not during play at a coin
    table."""
    return not (coin_table and playing)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message said at a table."""

    id: str
    user_id: int
    name: str | None
    seat: int | None  # the sender's seat; None: a spectator
    channel: Channel
    text: str | None
    phrase: str | None
    at: float  # Unix seconds
    players_read: bool  # the players were sent it (a report of theirs may name it)

    def payload(self) -> dict[str, Any]:
        """The message as the ``chat`` message and ``chat_history`` carry it."""
        return {
            "id": self.id,
            "user_id": self.user_id,
            "name": self.name,
            "seat": self.seat,
            "channel": self.channel,
            "text": self.text,
            "phrase": self.phrase,
            "at": self.at,
        }


def reads(
    message: ChatMessage,
    viewer: int,
    *,
    player: bool,
    spectators_open: bool,
    blocked: Blocked = nobody_blocked,
) -> bool:
    """Whether ``viewer`` (a ``player`` seated at the table, or a spectator) reads
    ``message`` now (``spectators_open``: :func:`players_read_spectators`)."""
    if viewer != message.user_id and blocked(viewer, message.user_id):
        return False
    if message.channel == "players" or not player:
        return True
    return spectators_open


@dataclass
class ChatRoom:
    """A table's chat: its last messages and each sender's recent sends."""

    history: int = HISTORY
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    messages: deque[ChatMessage] = field(init=False)
    _sent: dict[int, deque[float]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.messages = deque(maxlen=self.history)

    def too_fast(self, user_id: int) -> dict[str, Any] | None:
        """Why ``user_id`` may not send now (the rate limit), if so."""
        sent = self._sent.get(user_id)
        now = self.clock()
        while sent and now - sent[0] >= RATE_WINDOW:
            sent.popleft()
        if sent is not None and len(sent) >= RATE_COUNT:
            wait = max(1, int(RATE_WINDOW - (now - sent[0]) + 0.999))
            return error_payload(
                "chat_too_fast",
                f"at most {RATE_COUNT} messages in {RATE_WINDOW:g} seconds; wait {wait} s",
            )
        return None

    def say(
        self,
        *,
        user_id: int,
        name: str | None,
        seat: int | None,
        body: dict[str, Any],
        spectators_open: bool,
    ) -> ChatMessage | dict[str, Any]:
        """Check and keep a message ``body`` (``{"text": ...}`` or ``{"phrase": ...}``)
        from ``user_id`` at ``seat`` (None: a spectator): the message, or a refusal."""
        text: str | None = None
        phrase: str | None = None
        if set(body) == {"text"} and isinstance(body["text"], str):
            text, problem = check_text(body["text"])
            if problem is not None:
                return problem
        elif set(body) == {"phrase"} and body["phrase"] in PHRASES:
            phrase = body["phrase"]
        else:
            return error_payload(
                "bad_chat",
                'a chat message is {"type": "chat", "payload": {"text": "..."}} or '
                f'{{"phrase": one of {list(PHRASES)}}}',
            )
        problem = self.too_fast(user_id)
        if problem is not None:
            return problem
        self._sent.setdefault(user_id, deque()).append(self.clock())
        channel: Channel = "players" if seat is not None else "spectators"
        message = ChatMessage(
            id=secrets.token_urlsafe(9),
            user_id=user_id,
            name=name,
            seat=seat,
            channel=channel,
            text=text,
            phrase=phrase,
            at=round(self.wall(), 3),
            players_read=channel == "players" or spectators_open,
        )
        self.messages.append(message)
        return message

    def find(self, message_id: str) -> ChatMessage | None:
        return next((m for m in self.messages if m.id == message_id), None)

    def readable(
        self,
        viewer: int,
        *,
        player: bool,
        spectators_open: bool,
        blocked: Blocked = nobody_blocked,
    ) -> list[ChatMessage]:
        """The kept messages ``viewer`` reads now, oldest first."""
        return [
            m
            for m in self.messages
            if reads(m, viewer, player=player, spectators_open=spectators_open, blocked=blocked)
        ]


def may_report(message: ChatMessage, reporter: int, *, seated: bool) -> bool:
    """Whether ``reporter`` may report ``message``: not their own, and one they were
    sent (a player: a player's message, or a spectator's sent while players read them)."""
    if message.user_id == reporter:
        return False
    return message.channel == "players" or not seated or message.players_read


def report_fields(message: ChatMessage) -> dict[str, Any]:
    """What a report keeps of the message (its words, who said it, where)."""
    return {
        "message_id": message.id,
        "sender_id": message.user_id,
        "sender_seat": message.seat,
        "channel": message.channel,
        "text": message.text,
        "phrase": message.phrase,
        "said_at": message.at,
    }
