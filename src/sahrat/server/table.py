"""A live table: the one writer of its match.

Every operation on a table (a command, a join, a timer expiry, a bot's move) runs
under the table's lock, one at a time, so the table is an actor. The path of a move
reads top to bottom in "the move" below: a command is checked, the engine applies it,
the step is appended to the event log and awaited until durable, and only then is
anyone told — one reply to the sender, one update text per seat. The server never
decides a rule: it asks the engine (``apply``, ``view``, ``timeout_action``).

The table's other concerns live beside it, each in its own module: who sits where
(``seating.py``), the turn timer and the break between rounds (``pacing.py``), bots and
hints (``autoplay.py``), and what a finished match writes (``settlement.py``). What a
table needs from its process is the ``TableServices`` protocol (``services.py``), so
nothing here imports the hub.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import orjson
from sqlalchemy.exc import IntegrityError

from sahrat.rules.errors import RuleError
from sahrat.rules.events import Event
from sahrat.rules.record import engine_for, options_for
from sahrat.rules.rng import new_seed, seed_commitment
from sahrat.store import ledger
from sahrat.store.log import Append

from . import metrics
from .autoplay import BotSeats, suggest
from .connection import Connection, TableError, message, refusal
from .pacing import Clock, RoundBreak, ends_round, new_break
from .protocol import Command
from .seating import Seating
from .services import TableServices
from .settlement import PlayTally, match_row, settlement

__all__ = ["Connection", "Step", "Table", "TableError", "refusal"]

log = logging.getLogger("sahrat.table")

DEDUPE_SIZE = 2048  # a resent command is a recent one (docs/protocol.md promises 2048)
RECENT_SIZE = 256  # steps kept for reconnects; a client further behind gets a snapshot
MAX_TIMER_STEPS = 8
REACTION_GAP = 1.0
HINT_GAP = 2.0  # a hint costs a bot's thinking: one per connection every two seconds
SPECTATORS_SHOWN = 50  # names of spectators in the table's info; the count is complete
SPECTATOR_NOTICE_GAP = 2.0  # spectators coming and going: one table message per 2 s


@dataclass
class Step:
    """One accepted action with what it caused."""

    seq: int
    action: dict[str, Any]
    events: list[Event]
    by: str
    seat: int
    cid: str | None


class Table:
    """A table and its current match, kept in memory by the process that serves it."""

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
        self._spectator_notice: asyncio.TimerHandle | None = None

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
            "rematch": sorted(self.rematch) if self.status == "finished" else [],
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
        """Announce the table (seats, presence, spectators): every connection first
        follows the seating, so a seat taken or given up here re-seats its user's
        sockets."""
        if self._spectator_notice is not None:
            self._spectator_notice.cancel()
            self._spectator_notice = None
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

    def _spectators_changed(self) -> None:
        """Spectators come and go in crowds: the table hears of it at most once every
        ``SPECTATOR_NOTICE_GAP`` seconds, not once per socket."""
        if self._spectator_notice is None:
            self._spectator_notice = asyncio.get_running_loop().call_later(
                SPECTATOR_NOTICE_GAP, self.broadcast_table
            )

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

    # --- connections ---------------------------------------------------------------

    def connect(self, conn: Connection, since: int | None) -> None:
        """Register a connection and greet it: a snapshot, or the missed updates. The
        table is announced at once if a seat's presence changed; a spectator coming
        changes nothing in play and is announced with the next batch of spectators."""
        present = self.connected_seats()
        watching = len(self.spectators())
        retaken = False
        self.follow_seating(conn)
        self.connections[conn] = None
        seat = conn.seat
        if seat is not None:
            self.seating.away.discard(seat)
            task = self._grace.pop(seat, None)
            if task is not None:
                task.cancel()
            if self.status == "playing" and not self.seating.played_by_owner(seat):
                # Coming back to the table takes the seat over again, hand and all.
                self._set_controller(seat, None, left=False)
                retaken = True
        missed = self._missed_since(since) if since is not None else None
        if missed is not None and self.state is not None:
            updates = [self._update_for(step, conn.seat) for step in missed]
            conn.send(self._message("resume", {"missed": updates, "snapshot": self.snapshot(conn)}))
        else:
            conn.send(self._message("snapshot", self.snapshot(conn)))
        if retaken or self.connected_seats() != present:
            self.broadcast_table()
        elif len(self.spectators()) != watching:
            self._spectators_changed()

    def _missed_since(self, since: int) -> list[Step] | None:
        """The steps after ``since`` if all of them are still remembered, else None."""
        if since == self.seq:
            return []
        if since > self.seq or not self.recent:
            return None
        if self.recent[0].seq > since + 1:
            return None
        return [step for step in self.recent if step.seq > since]

    def disconnect(self, conn: Connection) -> None:
        present = self.connected_seats()  # before the close: a closed one is not present
        watching = len(self.spectators())
        conn.close()
        if conn not in self.connections:
            return
        self.connections.pop(conn, None)
        seat = conn.seat
        if seat is not None and seat not in self.connected_seats() and self.status == "playing":
            self._grace[seat] = asyncio.create_task(self._grace_period(seat))
            if self.round_break is not None and seat in self.round_break.waiting:
                self.round_break.waiting.discard(seat)  # nobody waits for an empty chair
                self._break_changed()
        if self.connected_seats() != present:
            self.broadcast_table()
        elif len(self.spectators()) != watching:
            self._spectators_changed()

    def expect_players(self) -> None:
        """After a restart or a takeover nobody is connected yet: each player's seat
        gets the grace period it would have had on a dropped connection."""
        if self.status != "playing":
            return
        for seat in range(self.players):
            if not self.seating.played_by_owner(seat):
                continue
            if seat not in self.connected_seats() and seat not in self._grace:
                self._grace[seat] = asyncio.create_task(self._grace_period(seat))

    async def _grace_period(self, seat: int) -> None:
        await asyncio.sleep(self.hub.settings.grace_seconds)
        if seat not in self.connected_seats() and self.status == "playing":
            self.seating.away.add(seat)
            self._grace.pop(seat, None)
            if self.bots_allowed:
                # At a free table a bot plays the hand until the player is back.
                self._set_controller(seat, self.bot_level, left=False)
            self.broadcast_table()

    # --- seats -------------------------------------------------------------------------

    async def join(self, user_id: int, seat: int | None, address: str | None = None) -> None:
        async with self.lock:
            mine = self.seat_of(user_id)
            if self.status == "playing" and mine is not None:
                if not self.seating.played_by_owner(mine):
                    await self.hub.check_can_sit(user_id, 0)
                    self._set_controller(mine, None, left=False)
                    self.broadcast_table()
                    return
                raise TableError("already_seated", "you already have a seat at this table")
            if self.status != "waiting":
                raise TableError("table_started", "the match has started; watch as a spectator")
            if mine is not None:
                raise TableError("already_seated", "you already have a seat at this table")
            free = self.seating.free()
            if not free:
                raise TableError("table_full", "every seat is taken")
            if seat is None:
                seat = free[0]
            elif not 0 <= seat < self.players:
                raise TableError("no_such_seat", f"seat {seat} is not a seat at this table", 422)
            elif seat not in free:
                raise TableError("seat_taken", f"seat {seat} is taken")
            if self.options.coin_table and self.hub.settings.one_address_per_coin_table:
                self.seating.check_address(address)
            await self.hub.check_can_sit(user_id, self.options.stake)
            await self.hub.store_seat(self.id, seat, user_id, None, False, address)
            self.seating.sit(seat, user_id, address)
            await self._start_if_full()
            self.broadcast_table()
            if self.seat_of(user_id) is None:  # the match could not start: not enough coins
                raise TableError(
                    "not_enough_coins",
                    f"you cannot cover this table's stake of {self.options.stake}",
                )

    async def start_with_bots(self, user_id: int, level: str | None = None) -> None:
        """The creator starts a free table now, bots in the empty seats; they play at
        ``level`` if given, else at the table's ``bot_level`` option."""
        level = level or self.options.bot_level
        async with self.lock:
            if user_id != self.creator_id:
                raise TableError("not_creator", "only the table's creator can start it", 403)
            if self.status != "waiting":
                raise TableError("table_started", "the match has already started")
            if not self.bots_allowed:
                raise TableError("no_bots_at_coin_tables", "bots never sit at coin tables")
            if self.seat_of(user_id) is None:
                raise TableError("not_seated", "take a seat before starting with bots")
            for seat in self.seating.free():
                await self.hub.store_seat(self.id, seat, None, level, False)
                self.seating.bots[seat] = level
            await self._start_match()
            self.broadcast_table()

    async def leave(self, user_id: int) -> None:
        async with self.lock:
            seat = self.seat_of(user_id)
            if seat is None:
                raise TableError("not_seated", "you have no seat at this table")
            if self.status == "playing":
                # Leaving never redeals: at a free table a bot plays on with the same
                # hand, at a coin table the turn timer does; the player may come back.
                level = self.bot_level if self.bots_allowed else None
                self._set_controller(seat, level, left=True)
                self.broadcast_table()
                return
            await self.hub.remove_seat(self.id, seat)
            self.seating.unseat(seat)
            self.rematch.discard(seat)  # leaving a finished table declines its rematch
            self.broadcast_table()

    async def update_options(self, options: dict[str, Any]) -> None:
        """Change some options of a waiting table (raises BadOption naming a bad one);
        a table shrunk to exactly its players starts."""
        async with self.lock:
            if self.status == "playing":
                raise TableError(
                    "match_in_progress",
                    "a match is in progress at this table; change its options when it is over",
                )
            if self.status != "waiting":
                raise TableError("table_finished", f"the table is {self.status}")
            parsed = options_for(self.game, {**self.options.to_json(), **options})
            taken = [seat for seat, owner in enumerate(self.seats) if owner is not None]
            if taken and max(taken) >= int(parsed.players):
                raise TableError(
                    "seats_taken", f"seat {max(taken)} is taken; cannot shrink the table"
                )
            stored = parsed.to_json()
            await self.hub.store_options(self.id, stored)
            await self.change_options(stored)

    async def change_options(self, options: dict[str, Any]) -> None:
        """New (validated, stored) options for a waiting table (caller holds the lock):
        the seats follow ``players``, and a table shrunk to exactly its players starts."""
        self.options = options_for(self.game, options)
        self.seating.resize(self.players)
        if any(owner is not None for owner in self.seats):
            await self._start_if_full()
        self.broadcast_table()

    def demote(self, user_id: int) -> None:
        """The user's connections here become a spectator's (a suspended player)."""
        self._reseat_connections()

    def _set_controller(self, seat: int, bot_level: str | None, *, left: bool) -> None:
        """Hand a seat to a bot (or back to its player), remembered in the database."""
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

    # --- the move: command → engine → durable log → updates ---------------------------

    async def command(self, conn: Connection, command: Command) -> None:
        """Answer one command: exactly one reply, after any update it caused."""
        started = time.perf_counter()
        async with self.lock:
            try:
                reply = await self._command(conn, command)
            except TableError as error:  # this process no longer serves the table
                reply = refusal(command.cid, error.code, error.message)
            except IntegrityError:  # another process wrote this seq: it owns the table now
                self.log.warning("table %s: another process wrote its log; letting go", self.id)
                self.hub.drop(self.id, "this table moved to another server; reconnect")
                reply = refusal(
                    command.cid, "unavailable", "the table moved to another server; send it again"
                )
            except Exception:  # the log could not be written: nothing was applied
                self.log.exception("table %s: command %s not saved", self.id, command.cid)
                reply = refusal(
                    command.cid,
                    "unavailable",
                    "the move could not be saved and was not played; send it again",
                )
        conn.send(self._message("reply", reply))
        problem = reply.get("error")
        (metrics.COMMANDS.labels(problem["code"]) if problem else metrics.COMMANDS_OK).inc()
        metrics.COMMAND_SECONDS.observe(time.perf_counter() - started)

    async def _command(self, conn: Connection, command: Command) -> dict[str, Any]:
        """Check a command, play it through the engine, and commit the step."""
        if self.follow_seating(conn):  # cannot happen while every seating change re-seats
            reply = refusal(
                command.cid, "seat_changed", "your seat at this table changed; look again"
            )
            reply["snapshot"] = self.snapshot(conn)
            return reply
        seat = conn.seat
        if seat is None:
            return refusal(command.cid, "spectator", "spectators cannot play")
        earlier = self.replies.get((seat, command.cid))
        if earlier is not None:
            return earlier  # a duplicate gets its earlier answer
        if self.status != "playing" or self.state is None:
            return refusal(command.cid, "not_playing", f"the table is {self.status}, not playing")
        if self.round_break is not None:
            return refusal(
                command.cid,
                "round_break",
                "the next round starts when every player has continued, or when the break ends",
            )
        if not self.seating.played_by_owner(seat):
            # Playing at your own seat is coming back to it, as reconnecting is.
            self._set_controller(seat, None, left=False)
            self.broadcast_table()
        if command.seq != self.seq:
            reply = refusal(
                command.cid,
                "stale",
                f"the table is at seq {self.seq}; your command was sent at seq {command.seq}",
            )
            reply["snapshot"] = self.snapshot(conn)
            return reply
        if command.action.get("seat", seat) != seat:
            return refusal(command.cid, "not_your_seat", "you can only play for your own seat")
        try:
            action = self.engine.action_from_json({**command.action, "seat": seat})
            state, events = self.engine.apply(self.state, action)
        except RuleError as error:
            return refusal(command.cid, error.code, error.message)
        except (TypeError, ValueError, AttributeError) as error:
            return refusal(command.cid, "bad_action", f"not an action: {error}")
        step = Step(
            self.seq + 1, self.engine.action_to_json(action), events, "player", seat, command.cid
        )
        await self._commit([(step, state)])
        reply = {"cid": command.cid, "ok": True}
        self._remember(seat, command.cid, reply)
        return reply

    def _remember(self, seat: int, cid: str, reply: dict[str, Any]) -> None:
        self.replies[(seat, cid)] = reply
        while len(self.replies) > DEDUPE_SIZE:
            self.replies.popitem(last=False)

    def _check_lease(self) -> None:
        """Refuse to write for a table whose lease this process may have lost."""
        if not self.hub.may_write(self.id):
            raise TableError(
                "unavailable", "the table is moving to another server; send the move again", 503
            )

    async def _commit(self, steps: list[tuple[Step, Any]]) -> None:
        """Make ``steps`` durable, then adopt the new state and tell every connection.

        The steps are appended to the log (with the match's row and coins if they end
        it) and awaited until durable; nothing is adopted or sent before that, so a
        step anyone has seen survives any crash."""
        self._check_lease()
        final_state = steps[-1][1]
        over = bool(final_state.over)
        round_ended = not over and ends_round(
            event.type for step, _ in steps for event in step.events
        )
        pause = self._new_break() if round_ended else None
        if over:
            deadline = None
        elif pause is not None:
            deadline = pause.until
        elif round_ended or self.engine.to_act(final_state) != self.engine.to_act(self.state):
            deadline = self._new_deadline()
        else:
            deadline = self.deadline
        match, coins = self._match_end(final_state, steps) if over else (None, [])
        entries = [
            {
                "seq": step.seq,
                "kind": "action",
                "seat": step.seat,
                "client_id": step.cid,
                "data": {"action": step.action, "by": step.by},
            }
            for step, _ in steps
        ]
        status = "finished" if over else "playing"
        last_seq = steps[-1][0].seq
        await self.hub.writer.append(
            Append(self.id, entries, last_seq, status, _as_datetime(deadline), match, coins)
        )
        self.round_break = pause
        for step, state in steps:
            self.state = state
            self.seq = step.seq
            self.actions.append(step.action)
            self.recent.append(step)
            self.tally.count(step.by, step.seat)
            self.deadline = deadline
            self._publish(step)
        self.status = status
        if over:
            self.clock.cancel()
            self.broadcast_table()
            self.hub.forget_later(self.id)
        else:
            self._forfeit_idle_seats()
            self._arm_timer()
            self._schedule_bot()

    def _publish(self, step: Step) -> None:
        """Send a durable step: one JSON text per seat (spectators share one), not per
        connection, from views whose common part the engine builds once."""
        receivers: list[Connection] = []
        for conn in list(self.connections):
            if self.follow_seating(conn):  # re-seated: a whole new picture, not a step
                conn.send(self._message("snapshot", self.snapshot(conn)))
            else:
                receivers.append(conn)
        if not receivers:
            return
        views = self.engine.views(self.state, {conn.seat for conn in receivers})
        texts = {
            seat: orjson.dumps(self._message("update", self._update_for(step, seat, view))).decode()
            for seat, view in views.items()
        }
        for conn in receivers:
            conn.send_text(texts[conn.seat])

    def _match_end(
        self, final_state: Any, steps: list[tuple[Step, Any]]
    ) -> tuple[dict[str, Any], list[ledger.Movement]]:
        """The match row and the coins written with a match's last step."""
        assert self.seed is not None
        row = match_row(
            self.engine,
            final_state,
            game=self.game,
            options=self.options,
            seats=self.seats,
            names=self.hub.names,
            seed=self.seed,
            first_dealer=self.first_dealer,
            actions=self.actions + [step.action for step, _ in steps],
        )
        coins = settlement(
            final_state,
            table_id=self.id,
            start_seq=self.start_seq if self.start_seq is not None else 0,
            options=self.options,
            seats=self.seats,
            left=self.seating.left,
            moved=self.tally.moved | {step.seat for step, _ in steps if step.by == "player"},
            free_table_earnings=self.hub.defaults.free_table_earnings,
        )
        return row, coins

    def _forfeit_idle_seats(self) -> None:
        """A seat the timer played for ``timer_turns_to_forfeit`` turns in a row is
        forfeited like a player who left: a bot plays it at a free table, the timer at
        a coin table, and its player may come back and take it over."""
        forfeited = False
        for seat in self.tally.idle(self.hub.settings.timer_turns_to_forfeit):
            if seat not in self.seating.left and self.seats[seat] is not None:
                level = self.bot_level if self.bots_allowed else None
                self._set_controller(seat, level, left=True)
                forfeited = True
        if forfeited:
            self.broadcast_table()

    # --- a match's start and restore ---------------------------------------------------

    async def _start_if_full(self) -> None:
        if not self.seating.free():
            await self._start_match()

    async def _start_match(self) -> bool:
        """Deal a new match (caller holds the lock). At a coin table every seat's stake
        moves into the match's pot in the same transaction as the ``start`` entry; a
        player who cannot cover it any more loses the seat and the table keeps waiting
        (False)."""
        seed = new_seed()
        state = self.engine.new_game(self.options, seed)
        seq = self.seq + 1
        deadline = self._new_deadline()
        entry = {
            "seq": seq,
            "kind": "start",
            "seat": None,
            "client_id": None,
            "data": {"seed": seed, "seats": list(self.seats), "first_dealer": state.dealer},
        }
        stakes: list[ledger.Movement] = []
        if self.options.coin_table:
            owners = [owner for owner in self.seats if owner is not None]
            have = await self.hub.coin_balances(owners)
            short = [owner for owner in owners if have[owner] < self.options.stake]
            if short:
                await self._unseat_short(short)
                return False
            stakes = ledger.stake_movements(self.id, seq, self.seats, self.options.stake)
        self._check_lease()
        try:
            await self.hub.writer.append(
                Append(self.id, [entry], seq, "playing", _as_datetime(deadline), ledger=stakes)
            )
        except ledger.Overdraft as error:  # the balance changed since we looked
            owner = ledger.user_of(error.account)
            await self._unseat_short([owner] if owner is not None else [])
            return False
        self.start_seq = seq
        self.first_dealer = int(state.dealer)
        self.state, self.seed, self.seq, self.status = state, seed, seq, "playing"
        self.actions = []
        self.tally = PlayTally()
        self.deadline = deadline
        self.recent.clear()
        for conn in list(self.connections):
            conn.send(self._message("snapshot", self.snapshot(conn)))
        self._arm_timer()
        self._schedule_bot()
        return True

    async def _unseat_short(self, user_ids: list[int]) -> None:
        """Free the seats of players who cannot cover the stake, and tell the table."""
        for user_id in user_ids:
            seat = self.seat_of(user_id)
            if seat is None:
                continue
            await self.hub.remove_seat(self.id, seat)
            self.seating.unseat(seat)
        self._reseat_connections()
        names = ", ".join(self.hub.names.get(u, f"player {u}") for u in user_ids)
        text = (
            f"the match could not start: {names} cannot cover the stake of "
            f"{self.options.stake} coins; the table waits for players"
        )
        self._send_all("error", {"code": "not_enough_coins", "message": text})

    def restore(self, entries: Sequence[Any]) -> None:
        """Rebuild the match from its log entries: its start, then its actions (the
        hub reads a table's log from its current match's start)."""
        for entry in entries:
            if entry.kind == "start":
                self.start_seq = entry.seq
                self.seed = entry.data["seed"]
                self.state = self.engine.new_game(
                    self.options, self.seed, (), entry.data.get("first_dealer")
                )
                self.first_dealer = int(self.state.dealer)
                self.actions = []
                self.tally = PlayTally()
                self.replies.clear()
                self.recent.clear()  # as a live table forgets them at a start
            elif entry.kind == "action" and self.state is not None:
                action = self.engine.action_from_json(entry.data["action"])
                self.state, events = self.engine.apply(self.state, action)
                self.actions.append(entry.data["action"])
                step = Step(
                    entry.seq,
                    entry.data["action"],
                    events,
                    entry.data.get("by", "player"),
                    entry.seat,
                    entry.client_id,
                )
                self.recent.append(step)
                self.tally.count(step.by, step.seat)
                if entry.client_id is not None and entry.seat is not None:
                    self._remember(
                        entry.seat, entry.client_id, {"cid": entry.client_id, "ok": True}
                    )
        if self.status == "playing":
            self._resume_break()
            self._arm_timer()
            self._schedule_bot()

    # --- moves nobody waits for: bots and the timer ------------------------------------

    def _schedule_bot(self) -> None:
        """If a bot is to act, let it move after a short, human-like pause."""
        if self.status != "playing" or self.state is None or self.state.over:
            return
        if self.round_break is not None:
            return  # bots wait for the next round like everyone
        seat = self.engine.to_act(self.state)
        if seat is None or self.seating.bots[seat] is None:
            return
        if self._bot_task is not None and not self._bot_task.done():
            return
        self._bot_task = asyncio.create_task(self._bot_move(self.seq))

    async def _bot_move(self, seq: int) -> None:
        await asyncio.sleep(self.hub.settings.bot_delay_seconds)
        await self._unattended("bot", self._bot_step(seq), self._schedule_bot)

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

    async def _bot_step(self, seq: int) -> None:
        async with self.lock:
            self._bot_task = None
            if self.seq != seq or self.status != "playing" or self.state is None:
                self._schedule_bot()
                return
            if self.round_break is not None:
                return
            seat = self.engine.to_act(self.state)
            level = self.seating.bots[seat] if seat is not None else None
            if seat is None or level is None:
                return
            # The bot sees exactly what a person in that seat would see.
            view = self.engine.view(self.state, seat)
            try:
                action = await self.bot_seats.decide(seat, level, view)
                if self.seating.bots[seat] != level or self.round_break is not None:
                    return  # its player came back (or left it) while it was thinking
                state, events = self.engine.apply(self.state, action)
            except RuleError:
                self.log.warning("table %s: bot at seat %s proposed an illegal move", self.id, seat)
                action = self.engine.timeout_action(self.state)
                state, events = self.engine.apply(self.state, action)
            step = Step(self.seq + 1, self.engine.action_to_json(action), events, "bot", seat, None)
            await self._commit([(step, state)])

    def _turn_seconds(self) -> float:
        override = self.hub.settings.turn_seconds_override
        return float(override if override is not None else self.options.turn_seconds)

    def _new_deadline(self) -> float:
        return time.time() + self._turn_seconds()

    def _arm_timer(self) -> None:
        """Wake up at the turn's deadline, or during a break at its end."""
        if self.deadline is None or self.status != "playing":
            self.clock.cancel()
            return
        pause = self.round_break
        if pause is not None:
            self.clock.at(pause.until, lambda: self._break_over(pause))
        else:
            seq = self.seq
            self.clock.at(self.deadline, lambda: self._expire(seq))

    async def _expire(self, seq: int) -> None:
        def again() -> None:
            if self.seq == seq and self.status == "playing":
                self.clock.at(time.time(), lambda: self._expire(seq))

        await self._unattended("timer", self._expire_now(seq), again)

    async def _expire_now(self, seq: int) -> None:
        """The turn's time ran out: the engine's timeout action, for as many steps as
        the turn needs (up to the round's end, which starts a break)."""
        async with self.lock:
            if self.seq != seq or self.status != "playing" or self.state is None:
                return
            if self.round_break is not None:
                return
            seat = self.engine.to_act(self.state)
            state = self.state
            steps: list[tuple[Step, Any]] = []
            for index in range(MAX_TIMER_STEPS):
                if state.over or self.engine.to_act(state) != seat:
                    break
                action = self.engine.timeout_action(state)
                state, events = self.engine.apply(state, action)
                step = Step(
                    self.seq + index + 1,
                    self.engine.action_to_json(action),
                    events,
                    "timer",
                    seat,
                    None,
                )
                steps.append((step, state))
                if ends_round(event.type for event in events):
                    break  # the next round waits for its break
            if steps:
                await self._commit(steps)

    # --- the break between rounds ---------------------------------------------------

    def _new_break(self) -> RoundBreak | None:
        return new_break(int(getattr(self.options, "break_seconds", 0)), self._readers())

    def _readers(self) -> set[int]:
        """The seats whose own player is here to press "continue"."""
        return {
            seat
            for seat in self.connected_seats()
            if self.seating.bots[seat] is None and seat not in self.seating.left
        }

    def _resume_break(self) -> None:
        """After a restart or a takeover: a round that had just ended is still in its
        break (its end is the stored deadline) if that has not passed; its players are
        waited for as they come back. A break already over starts the next turn's clock."""
        last = self.recent[-1] if self.recent else None
        if last is None or not ends_round(event.type for event in last.events):
            return
        if self.deadline is not None and self.deadline > time.time():
            waiting = {seat for seat in range(self.players) if self.seating.played_by_owner(seat)}
            if waiting:
                self.round_break = RoundBreak(self.deadline, waiting)
                return
        self.deadline = self._new_deadline()

    def continue_play(self, conn: Connection) -> None:
        """A player is done with the round's summary; the last one starts the round."""
        self.follow_seating(conn)
        pause = self.round_break
        if pause is None or conn.seat is None or conn.seat not in pause.waiting:
            return  # nothing to wait for (a late or a spectator's continue changes nothing)
        pause.waiting.discard(conn.seat)
        self._break_changed()

    def _break_changed(self) -> None:
        """Tell the table who is still reading; end the break once nobody is."""
        pause = self.round_break
        if pause is None:
            return
        if pause.waiting:
            self._send_break()
        else:
            self._end_break()

    async def _break_over(self, pause: RoundBreak) -> None:
        if self.round_break is pause:
            self._end_break()

    def _end_break(self) -> None:
        """The next round's play starts: its first turn's clock, its bots."""
        if self.round_break is None or self.status != "playing":
            return
        self.round_break = None
        self.deadline = self._new_deadline()
        self._send_break()
        self._arm_timer()
        self._schedule_bot()

    def _send_break(self) -> None:
        pause = self.round_break
        payload = {"round_break": pause.to_json() if pause else None, "deadline": self.deadline}
        self._send_all("break", payload)

    # --- a hint ----------------------------------------------------------------------

    async def hint(self, conn: Connection) -> None:
        """At a free table, the bot's suggestion for the asking seat's turn, to that
        connection only. Never at a coin table: coins are played for by people alone."""
        self.follow_seating(conn)
        seat = conn.seat
        problem: tuple[str, str] | None = None
        if not self.bots_allowed:
            problem = "no_hints_at_coin_tables", "coin tables are played without help"
        elif seat is None:
            problem = "spectator", "spectators get no hints"
        elif (
            self.status != "playing"
            or self.state is None
            or self.round_break is not None
            or self.engine.to_act(self.state) != seat
        ):
            problem = "not_your_turn", "a hint is for your own turn"
        elif time.monotonic() - conn.last_hint < HINT_GAP:
            problem = "too_many_hints", f"one hint every {HINT_GAP:g} seconds at most"
        if problem is not None:
            code, text = problem
            conn.send(self._message("error", {"code": code, "message": text}))
            return
        conn.last_hint = time.monotonic()
        view = self.engine.view(self.state, seat)  # what the seat sees, nothing more
        action = await suggest(self.game, self.hub.settings.hint_level, view)
        data = dict(self.engine.action_to_json(action))
        data.pop("seat", None)
        conn.send(self._message("hint", {"action": data}))

    # --- a rematch ----------------------------------------------------------------------

    async def ask_rematch(self, conn: Connection) -> None:
        """A seated player asks for another match at the same seats; the last one to ask
        starts it (bots ask at once). At a free table a seat whose player left the match
        goes to a bot; at a coin table everyone must still be there (and pay again)."""
        async with self.lock:
            self.follow_seating(conn)
            problem = self._rematch_problem(conn.seat)
            if problem is not None:
                code, text = problem
                conn.send(self._message("error", {"code": code, "message": text}))
                return
            assert conn.seat is not None
            self.rematch.add(conn.seat)
            for seat, owner in enumerate(self.seats):
                if owner is None or (seat in self.seating.left and self.bots_allowed):
                    self.rematch.add(seat)  # a bot's seat, or a leaver's a bot takes
            if len(self.rematch) < self.players:
                self.broadcast_table()
                return
            await self._rematch()

    def _rematch_problem(self, seat: int | None) -> tuple[str, str] | None:
        if self.status != "finished":
            return "not_finished", "a rematch is asked for once the match is over"
        if seat is None:
            return "spectator", "spectators cannot ask for a rematch"
        if seat in self.seating.left:
            return "left", "you left this match"
        if self.seating.free():
            return "seat_empty", "a player left the table: open a new one"
        if not self.bots_allowed and self.seating.left:
            return "seat_empty", "a player left this coin match: open a new table"
        return None

    async def _rematch(self) -> None:
        """Everyone asked: leavers' seats go to bots, and a new match is dealt."""
        level = self.bot_level
        seating = self.seating
        for seat in sorted(seating.left):
            await self.hub.store_seat(self.id, seat, None, level, False)
            seating.seats[seat], seating.bots[seat] = None, level
        seating.left.clear()
        seating.away.clear()
        self.rematch.clear()
        self.status = "waiting"
        if not await self._start_match():  # a stake nobody can cover any more
            await self.hub.store_status(self.id, "waiting")
        self.broadcast_table()

    async def close_down(self, unless: Callable[[], bool] | None = None) -> bool:
        """Close the table for good (not while it plays, nor when ``unless`` says no
        once the lock is held): stored, a waiting table's seats freed, everyone told,
        every socket closed. False if it stays open."""
        async with self.lock:
            if self.status == "playing":
                raise TableError(
                    "match_in_progress", "the table's match is in progress; close it after"
                )
            if unless is not None and unless():
                return False
            free_seats = self.status == "waiting"
            await self.hub.store_closed(self.id, free_seats)
            self.closed(free_seats=free_seats)
            return True

    async def hand_over(self, code: int, reason: str) -> None:
        """This process stops serving the table: once the step in progress is done,
        every socket is told (``code``) to reconnect, to whoever serves it next."""
        async with self.lock:
            self.close(code, reason)

    def closed(self, *, free_seats: bool) -> None:
        """The table was closed (its row says so): a waiting table's seats are freed,
        everyone is told, then every socket closes."""
        self.status = "closed"
        if free_seats:
            self.seating.seats = [None] * self.players
        self.broadcast_table()
        self.close()

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop the table's tasks and close its connections (with ``code``)."""
        self.clock.cancel()
        if self._bot_task is not None:
            self._bot_task.cancel()
        if self._spectator_notice is not None:
            self._spectator_notice.cancel()
        for task in self._grace.values():
            task.cancel()
        for conn in list(self.connections):
            conn.close(code, reason)


def _as_datetime(timestamp: float | None) -> datetime | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
