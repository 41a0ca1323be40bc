"""What every part of a live table shares: its fields, what each connection sees,
and how messages go out.

A table is assembled from parts, one module each (see ``table.py``): the move path,
seats and matches (``lifecycle.py``), sockets coming and going (``presence.py``), the
turn timer and the round break (``turn_timer.py``), and bots (``bot_turns.py``). Each
part is a class over this base, which holds the state they all read and declares
what one part asks of another, so every part can be read and typed on its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import orjson

from sahrat.rules.events import Event
from sahrat.rules.record import engine_for, options_for
from sahrat.rules.rng import seed_commitment
from sahrat.server.table.autoplay import BotSeats
from sahrat.server.table.connection import Connection, TableError, message
from sahrat.server.table.pacing import Clock, RoundBreak
from sahrat.server.table.seating import Seating
from sahrat.server.table.services import TableServices
from sahrat.server.table.settlement import PlayTally

log = logging.getLogger("sahrat.table")

DEDUPE_SIZE = 2048  # a resent command is a recent one (docs/protocol.md promises 2048)
RECENT_SIZE = 256  # steps kept for reconnects; a client further behind gets a snapshot
REACTION_GAP = 1.0
SPECTATORS_SHOWN = 50  # names of spectators in the table's info; the count is complete
# A table's `table` messages: at most one every 2 s (docs/protocol.md). The first change
# after a quiet spell goes at once; the changes within the gap go as one message later.
TABLE_MESSAGE_GAP = 2.0


@dataclass
class Step:
    """One accepted action with what it caused."""

    seq: int
    action: dict[str, Any]
    events: list[Event]
    by: str
    seat: int
    cid: str | None


class TableBase:
    """A table's state and its outgoing messages; the parts of ``Table`` build on it."""

    def __init__(
        self,
        services: TableServices,
        *,
        table_id: int,
        game: str,
        options: dict[str, Any],
        private: bool,
        invite_code: str | None,
        creator_id: int,
        status: str,
        seq: int,
        seats: list[int | None],
        deadline: float | None = None,
        bots: list[str | None] | None = None,
        left: set[int] | None = None,
        addresses: dict[int, str] | None = None,
    ) -> None:
        self.hub = services
        self.id = table_id
        self.log = logging.LoggerAdapter(log, {"table_id": table_id})
        self.game = game
        self.options = options_for(game, options)
        self.engine: ModuleType = engine_for(game)
        self.private = private
        self.invite_code = invite_code
        self.creator_id = creator_id
        self.status = status
        self.seq = seq
        self.seating = Seating(
            seats, bots or [None] * len(seats), left or set(), set(), dict(addresses or {})
        )
        self.deadline = deadline  # the turn's, or during a round break the break's end
        self.round_break: RoundBreak | None = None
        self.rematch: set[int] = set()  # once the match is over: seats that want another
        self.lock = asyncio.Lock()
        # The match: its state, its seed and start, and its actions so far.
        self.state: Any = None
        self.seed: str | None = None
        self.start_seq: int | None = None  # the seq of the current match's start entry
        self.first_dealer = 0  # who dealt the current match's first round (for its record)
        self.actions: list[dict[str, Any]] = []
        self.tally = PlayTally()
        # Who is told: the sockets, the answers to recent commands, the recent steps.
        self.connections: dict[Connection, None] = {}  # a set that keeps arrival order
        self.replies: OrderedDict[tuple[int, str], dict[str, Any]] = OrderedDict()
        self.recent: deque[Step] = deque(maxlen=RECENT_SIZE)
        self.clock = Clock()
        self.bot_seats = BotSeats(game)
        self._bot_task: asyncio.Task[None] | None = None
        self._grace: dict[int, asyncio.Task[None]] = {}
        self._table_message: asyncio.TimerHandle | None = None  # the next, merged one
        self._table_told = -TABLE_MESSAGE_GAP  # (loop time) when the last one was sent

    @property
    def players(self) -> int:
        return int(self.options.players)

    @property
    def seats(self) -> list[int | None]:
        return self.seating.seats

    def seat_of(self, user_id: int) -> int | None:
        return self.seating.seat_of(user_id)

    @property
    def bots_allowed(self) -> bool:
        """Bots sit only at free tables (RULES.md §1.10)."""
        return not self.options.coin_table

    @property
    def bot_level(self) -> str:
        """The level of a bot that takes over a seat here: the level of the bots already
        at the table (a ``start`` that named its level overrides the option for the whole
        match), else the table's ``bot_level`` option."""
        started = next((level for level in self.seating.bots if level is not None), None)
        return started or self.options.bot_level

    # --- what each connection sees ------------------------------------------------

    def seat_for(self, user_id: int) -> int | None:
        """The seat a connection of ``user_id`` plays and sees: the user's seat at this
        table now (none for a suspended player, who may only watch)."""
        if user_id in self.hub.suspended:
            return None
        return self.seating.seat_of(user_id)

    def follow_seating(self, conn: Connection) -> bool:
        """Give ``conn`` its user's seat as the table seats them now; True if it changed.

        The seating is the only truth about who plays where: a connection's seat is a
        copy of it, refreshed here before the connection is shown a view or its command
        is played. Seats change under the table's lock, and every change is announced
        through :meth:`broadcast_table`, which re-seats every connection first (and
        sends a fresh snapshot to those whose seat changed)."""
        seat = self.seat_for(conn.user_id)
        if seat == conn.seat:
            return False
        conn.seat = seat
        return True

    def _reseat_connections(self) -> None:
        for conn in list(self.connections):
            if self.follow_seating(conn):
                conn.send(self._message("snapshot", self.snapshot(conn)))

    def connected_seats(self) -> set[int]:
        return {c.seat for c in self.connections if c.seat is not None and not c.closed}

    def spectators(self) -> list[int]:
        """The users watching (a connection with no seat), in the order they came."""
        seen: dict[int, None] = {}
        for conn in self.connections:
            if conn.seat is None and not conn.closed:
                seen.setdefault(conn.user_id)
        return list(seen)

    def info(self, viewer: int | None = None) -> dict[str, Any]:
        seating = self.seating
        connected = self.connected_seats()
        names = self.hub.names
        seats = [
            {
                "seat": seat,
                "user_id": owner,
                "name": names.get(owner) if owner is not None else None,
                "connected": seat in connected,
                "away": seat in seating.away,
                "bot": seating.bots[seat] is not None,
                "bot_level": seating.bots[seat],
                "left": seat in seating.left,
            }
            for seat, owner in enumerate(seating.seats)
        ]
        watching = self.spectators()
        return {
            "id": self.id,
            "game": self.game,
            "options": self.options.to_json(),
            "private": self.private,
            "invite_code": self.invite_code if self._shows_invite_code(viewer) else None,
            "status": self.status,
            "coin_table": self.options.coin_table,
            "creator_id": self.creator_id,
            "seats": seats,
            "seq": self.seq,
            "seed_commitment": seed_commitment(self.seed) if self.seed else None,
            "rematch": sorted(self.rematch_seats()) if self.status == "finished" else [],
            "spectators": [
                names.get(user_id, f"player {user_id}") for user_id in watching[:SPECTATORS_SHOWN]
            ],
            "spectator_count": len(watching),
        }

    def _shows_invite_code(self, viewer: int | None) -> bool:
        """Only the creator and the seated see a private table's invite code."""
        return viewer is not None and (viewer in self.seats or viewer == self.creator_id)

    def snapshot(self, conn: Connection) -> dict[str, Any]:
        self.follow_seating(conn)
        view = self.engine.view(self.state, conn.seat) if self.state is not None else None
        return {
            "table": self.info(conn.user_id),
            "seat": conn.seat,
            "view": view,
            "deadline": self.deadline,
            "round_break": self.round_break.to_json() if self.round_break else None,
        }

    def _message(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return message(kind, self.seq, payload)

    def _update_for(
        self, step: Step, seat: int | None, view: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A step as ``seat`` may see it, with ``view``, the seat's view of the table now;
        an older step (in a resume) carries none."""
        latest = view is not None
        pause = self.round_break if latest else None
        return {
            "events": [event.for_seat(seat) for event in step.events],
            "view": view,
            "deadline": self.deadline if latest else None,
            "by": step.by,
            "round_break": pause.to_json() if pause else None,
        }

    def _send_all(self, kind: str, payload: dict[str, Any]) -> None:
        """One message, the same for everyone: serialised once."""
        text = orjson.dumps(self._message(kind, payload)).decode()
        for conn in list(self.connections):
            conn.send_text(text)

    def broadcast_table(self) -> None:
        """Announce a change of the table (seats, presence, the rematch list, its
        status): every connection follows the seating at once, so a seat taken or given
        up here re-seats its user's sockets (each with a snapshot) before anything else;
        the ``table`` message itself goes through :meth:`_table_changed`."""
        self._reseat_connections()
        self._table_changed()

    def _spectators_changed(self) -> None:
        """Spectators come and go in crowds: like every other change, they are told at
        most once every ``TABLE_MESSAGE_GAP`` seconds, not once per socket."""
        self._table_changed()

    def _table_changed(self) -> None:
        """Tell the table it changed, at most one ``table`` message every
        ``TABLE_MESSAGE_GAP`` seconds whoever causes the changes (a crowd of spectators,
        one account taking and giving up a seat again and again): the first change after
        a quiet spell goes at once, and every later one within the gap is merged into
        one message sent when the gap is over, with the table as it is then. Nothing
        play depends on waits for it: a seat's own sockets get their snapshot at once,
        a match's start and every step come as snapshots and updates."""
        if self._table_message is not None:
            return  # a message is due: it will show this change too
        loop = asyncio.get_running_loop()
        wait = self._table_told + TABLE_MESSAGE_GAP - loop.time()
        if wait <= 0:
            self._send_table()
        else:
            self._table_message = loop.call_later(wait, self._send_table)

    def _send_table(self) -> None:
        """Send the ``table`` message now (the one due, if any, goes with it)."""
        if self._table_message is not None:
            self._table_message.cancel()
            self._table_message = None
        self._table_told = asyncio.get_running_loop().time()
        self._reseat_connections()
        texts: dict[bool, str] = {}  # one text for those who see the invite code, one not
        for conn in list(self.connections):
            shown = self._shows_invite_code(conn.user_id)
            text = texts.get(shown)
            if text is None:
                text = texts[shown] = orjson.dumps(
                    self._message("table", self.info(conn.user_id))
                ).decode()
            conn.send_text(text)

    def rematch_seats(self) -> set[int]:
        """Once the match is over, the seats that want another: those whose player asked,
        and from the start every seat a bot will play (a bot's own seat, and at a free
        table a leaver's, which a bot takes in the rematch)."""
        seating = self.seating
        automatic = {
            seat
            for seat, owner in enumerate(seating.seats)
            if (owner is None and seating.bots[seat] is not None)
            or (seat in seating.left and self.bots_allowed)
        }
        return self.rematch | automatic

    def react(self, conn: Connection, reaction: str) -> None:
        """Pass a preset reaction on to the table, at most one per connection a second."""
        now = time.monotonic()
        if now - conn.last_reaction < REACTION_GAP:
            conn.send(
                self._message(
                    "error",
                    {"code": "too_many_reactions", "message": "one reaction a second at most"},
                )
            )
            return
        conn.last_reaction = now
        name = self.hub.names.get(conn.user_id)
        payload = {"seat": conn.seat, "user_id": conn.user_id, "name": name, "reaction": reaction}
        self._send_all("reaction", payload)

    # --- who controls a seat, and moves nobody waits for ---------------------------

    def _set_controller(
        self, seat: int, bot_level: str | None, *, left: bool
    ) -> asyncio.Task[None]:
        """Hand a seat to a bot (or back to its player), remembered in the database; the
        task that writes it (awaited by a leave, whose answer says it is done)."""
        self.seating.bots[seat] = bot_level
        self.bot_seats.forget(seat)
        if left:
            self.seating.left.add(seat)
        else:
            self.seating.left.discard(seat)
        if bot_level is None and not left:
            self.tally.back(seat)  # back at the seat: idle turns start again
        elif self.round_break is not None and seat in self.round_break.waiting:
            self.round_break.waiting.discard(seat)  # a bot reads no summary
            self._break_changed()
        task = asyncio.create_task(
            self.hub.store_seat(self.id, seat, self.seats[seat], bot_level, left)
        )
        self.hub.background(task)
        self._schedule_bot()
        return task

    async def _unattended(
        self, who: str, step: Coroutine[Any, Any, None], again: Callable[[], None]
    ) -> None:
        """Make a move nobody waits for (a bot's, the timer's): if the table moved, its
        new owner makes it; if it could not be saved, ``again`` a second later."""
        try:
            await step
        except TableError:
            return
        except Exception:
            self.log.exception("table %s: the %s's move was not saved; trying again", self.id, who)
            await asyncio.sleep(1.0)
            again()

    def _check_lease(self) -> None:
        """Refuse to write for a table whose lease this process may have lost."""
        if not self.hub.may_write(self.id):
            raise TableError(
                "unavailable", "the table is moving to another server; send the move again", 503
            )

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop the table's tasks and close its connections (with ``code``)."""
        self.clock.cancel()
        if self._bot_task is not None:
            self._bot_task.cancel()
        if self._table_message is not None:
            self._table_message.cancel()
            self._table_message = None
        for task in self._grace.values():
            task.cancel()
        for conn in list(self.connections):
            conn.close(code, reason)

    # --- what the table's other parts provide ----------------------------------------

    async def _commit(self, steps: list[tuple[Step, Any]]) -> None:
        """Make steps durable, then adopt and publish them (``table.py``)."""
        raise NotImplementedError

    def _new_deadline(self, state: Any = None) -> float:
        """The deadline of a turn starting now, for the seat to act in ``state`` (the
        table's by default) (``turn_timer.py``)."""
        raise NotImplementedError

    def _arm_timer(self) -> None:
        """Wake up at the turn's deadline or the break's end (``turn_timer.py``)."""
        raise NotImplementedError

    async def _hurry_left_seat(self) -> None:
        """Shorten the turn of a seat just left to the timer (``turn_timer.py``)."""
        raise NotImplementedError

    def _break_changed(self) -> None:
        """Tell who still reads the round's summary (``turn_timer.py``)."""
        raise NotImplementedError

    def _schedule_bot(self) -> None:
        """Let a bot move if one is to act (``bot_turns.py``)."""
        raise NotImplementedError


def as_datetime(timestamp: float | None) -> datetime | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
