"""A live table: the one writer of its match.

Every operation on a table (a command, a join, a timer expiry) runs under the
table's lock, one at a time, so the table is an actor: it applies a step
through the engine, appends it to the event log and waits until that is
durable, and only then tells anyone. The server never decides a rule: it
asks the engine (``apply``, ``view``, ``timeout_action``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy.exc import IntegrityError

from sahrat.rules.errors import RuleError
from sahrat.rules.events import Event
from sahrat.rules.record import GameRecord, engine_for, options_for
from sahrat.rules.rng import new_seed, seed_commitment
from sahrat.store import ledger
from sahrat.store.log import Append

from . import metrics
from .addresses import network_key
from .protocol import Command

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger("sahrat.table")

DEDUPE_SIZE = 2048  # a resent command is a recent one (docs/protocol.md promises 2048)
RECENT_SIZE = 256  # steps kept for reconnects; a client further behind gets a snapshot
MAX_TIMER_STEPS = 8
REACTION_GAP = 1.0
HINT_GAP = 2.0  # a hint costs a bot's thinking: one per connection every two seconds
ROUND_ENDS = frozenset({"round_end", "deal_end"})  # a Konkan round's, a Conquian deal's


class TableError(Exception):
    """A refused table operation (join a full seat, leave a running match...)."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(eq=False)
class Connection:
    """One WebSocket: who it is, which seat it was last shown, and its outgoing queue.

    ``seat`` is never decided by the transport: the table sets it from its seating
    (:meth:`Table.follow_seating`) before anything is sent to or accepted from the
    connection, so a socket never outlives its user's seat."""

    user_id: int
    seat: int | None = None
    outbox: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(1024))
    closed: bool = False
    last_reaction: float = -1e9
    last_hint: float = -1e9
    close_code: int = 1000  # the WebSocket close code once closed (4503: reconnect)
    close_reason: str = ""

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message; a client too slow to keep up is dropped (it can resume)."""
        self.send_text(orjson.dumps(message).decode())

    def send_text(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.outbox.put_nowait(text)
        except asyncio.QueueFull:
            self.close(4503, "too slow to keep up; reconnect to catch up")

    def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.close_code, self.close_reason = code, reason
            while True:
                try:
                    self.outbox.put_nowait(None)
                    break
                except asyncio.QueueFull:
                    self.outbox.get_nowait()


@dataclass
class RoundBreak:
    """The pause after a round (deal) ends and before the next one is played: the next
    round is dealt, but no turn timer runs and nobody moves until every connected player
    has continued or ``until`` has passed (the table option ``break_seconds``)."""

    until: float
    waiting: set[int]

    def to_json(self) -> dict[str, Any]:
        return {"until": self.until, "waiting": sorted(self.waiting)}


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
        hub: Hub,
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
    ) -> None:
        self.hub = hub
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
        self.seats = seats  # owners: a player's id, or None (a free seat or a bot's own)
        self.bots: list[str | None] = bots or [None] * len(seats)  # level of a bot playing it
        self.left = left or set()  # seats whose owner walked away from the match
        self.addresses: dict[int, str] = {}  # the network address each seat joined from
        self.deadline = deadline  # the turn's, or during a round break the break's end
        self.round_break: RoundBreak | None = None
        self.rematch: set[int] = set()  # once the match is over: seats that want another
        self.lock = asyncio.Lock()
        self.state: Any = None
        self.seed: str | None = None
        self.start_seq: int | None = None  # the seq of the current match's start entry
        self.first_dealer = 0  # who dealt the current match's first round (for its record)
        self.actions: list[dict[str, Any]] = []
        self.connections: set[Connection] = set()
        self.replies: OrderedDict[tuple[int, str], dict[str, Any]] = OrderedDict()
        self.recent: deque[Step] = deque(maxlen=RECENT_SIZE)
        self.away: set[int] = set()
        self._timer: asyncio.Task[None] | None = None
        self._grace: dict[int, asyncio.Task[None]] = {}
        self._bot_task: asyncio.Task[None] | None = None
        self._players: dict[int, Any] = {}  # a bot player per seat (bots may remember)
        # This match's own moves and idle turns, rebuilt from the log on restore: a seat
        # whose player never moved earns nothing, and one the timer played too many
        # turns in a row is forfeited (docs/economy.md).
        self.moved: set[int] = set()
        self.timer_turns: dict[int, int] = {}
        self._last_step: Step | None = None

    # --- what clients see -----------------------------------------------------

    @property
    def players(self) -> int:
        return int(self.options.players)

    def seat_of(self, user_id: int) -> int | None:
        for seat, owner in enumerate(self.seats):
            if owner == user_id:
                return seat
        return None

    def seat_for(self, user_id: int) -> int | None:
        """The seat a connection of ``user_id`` plays and sees: the user's seat at this
        table now (none for a suspended player, who may only watch)."""
        if user_id in self.hub.suspended:
            return None
        return self.seat_of(user_id)

    def follow_seating(self, conn: Connection) -> bool:
        """Give ``conn`` its user's seat as the table seats them now; True if it changed.

        The seating (``seats``) is the only truth about who plays where: a connection's
        seat is a copy of it, refreshed here before the connection is shown a view or
        its command is played. Seats change under the table's lock, and every change is
        announced through :meth:`broadcast_table`, which re-seats every connection first
        (and sends a fresh snapshot to those whose seat changed)."""
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

    def info(self, viewer: int | None = None) -> dict[str, Any]:
        connected = self.connected_seats()
        seats = []
        for seat, owner in enumerate(self.seats):
            seats.append(
                {
                    "seat": seat,
                    "user_id": owner,
                    "name": self.hub.names.get(owner) if owner is not None else None,
                    "connected": seat in connected,
                    "away": seat in self.away,
                    "bot": self.bots[seat] is not None,
                    "bot_level": self.bots[seat],
                    "left": seat in self.left,
                }
            )
        show_code = self._shows_invite_code(viewer)
        return {
            "id": self.id,
            "game": self.game,
            "options": self.options.to_json(),
            "private": self.private,
            "invite_code": self.invite_code if show_code else None,
            "status": self.status,
            "coin_table": self.options.coin_table,
            "creator_id": self.creator_id,
            "seats": seats,
            "seq": self.seq,
            "seed_commitment": seed_commitment(self.seed) if self.seed else None,
            "rematch": sorted(self.rematch) if self.status == "finished" else [],
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
        return {"type": kind, "seq": self.seq, "payload": payload}

    def _update_for(self, step: Step, seat: int | None, *, latest: bool = True) -> dict[str, Any]:
        """A step as ``seat`` may see it; an older step (in a resume) carries no view."""
        pause = self.round_break if latest else None
        return {
            "events": [event.for_seat(seat) for event in step.events],
            "view": self.engine.view(self.state, seat) if latest else None,
            "deadline": self.deadline if latest else None,
            "by": step.by,
            "round_break": pause.to_json() if pause else None,
        }

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
        payload = {
            "seat": conn.seat,
            "user_id": conn.user_id,
            "name": self.hub.names.get(conn.user_id),
            "reaction": reaction,
        }
        for other in list(self.connections):
            other.send(self._message("reaction", payload))

    def broadcast_table(self) -> None:
        """Announce the table (seats, presence): every connection first follows the
        seating, so a seat taken or given up here re-seats its user's sockets."""
        self._reseat_connections()
        texts: dict[bool, str] = {}  # one text for those who see the invite code, one not
        for conn in list(self.connections):
            shown = self._shows_invite_code(conn.user_id)
            text = texts.get(shown)
            if text is None:
                message = self._message("table", self.info(conn.user_id))
                text = texts[shown] = orjson.dumps(message).decode()
            conn.send_text(text)

    # --- connections ---------------------------------------------------------------

    def connect(self, conn: Connection, since: int | None) -> None:
        """Register a connection and greet it: a snapshot, or the missed updates. The
        table is announced again only if a seat's presence changed: a spectator coming
        or going changes nothing the others see (and must not cost every socket a
        message)."""
        present = self.connected_seats()
        retaken = False
        self.follow_seating(conn)
        self.connections.add(conn)
        if conn.seat is not None:
            self.away.discard(conn.seat)
            task = self._grace.pop(conn.seat, None)
            if task is not None:
                task.cancel()
            if self.status == "playing" and (
                conn.seat in self.left or self.bots[conn.seat] is not None
            ):
                # Coming back to the table takes the seat over again, hand and all.
                self._set_controller(conn.seat, None, left=False)
                retaken = True
        missed = self._missed_since(since) if since is not None else None
        if missed is not None and self.state is not None:
            updates = [self._update_for(step, conn.seat, latest=False) for step in missed]
            conn.send(self._message("resume", {"missed": updates, "snapshot": self.snapshot(conn)}))
        else:
            conn.send(self._message("snapshot", self.snapshot(conn)))
        if retaken or self.connected_seats() != present:
            self.broadcast_table()

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
        conn.close()
        if conn not in self.connections:
            return
        self.connections.discard(conn)
        seat = conn.seat
        if seat is not None and seat not in self.connected_seats() and self.status == "playing":
            self._grace[seat] = asyncio.create_task(self._grace_period(seat))
            if self.round_break is not None and seat in self.round_break.waiting:
                self.round_break.waiting.discard(seat)  # nobody waits for an empty chair
                self._break_changed()
        if self.connected_seats() != present:
            self.broadcast_table()

    def expect_players(self) -> None:
        """After a restart or a takeover nobody is connected yet: each player's seat
        gets the grace period it would have had on a dropped connection."""
        if self.status != "playing":
            return
        for seat, owner in enumerate(self.seats):
            if owner is None or seat in self.left or self.bots[seat] is not None:
                continue
            if seat not in self.connected_seats() and seat not in self._grace:
                self._grace[seat] = asyncio.create_task(self._grace_period(seat))

    async def _grace_period(self, seat: int) -> None:
        await asyncio.sleep(self.hub.settings.grace_seconds)
        if seat not in self.connected_seats() and self.status == "playing":
            self.away.add(seat)
            self._grace.pop(seat, None)
            if self.bots_allowed:
                # At a free table a bot plays the hand until the player is back.
                self._set_controller(seat, self.bot_level, left=False)
            self.broadcast_table()

    @property
    def bot_level(self) -> str:
        """The level of a bot that takes over a seat here: the level the table was
        started with (its bots' own), else the server's ``SAHRAT_BOT_LEVEL``."""
        started = next((level for level in self.bots if level is not None), None)
        return started or self.hub.settings.bot_level

    @property
    def bots_allowed(self) -> bool:
        """Bots sit only at free tables (RULES.md §1.10)."""
        return not self.options.coin_table

    def _set_controller(self, seat: int, bot_level: str | None, *, left: bool) -> None:
        """Hand a seat to a bot (or back to its player), remembered in the database."""
        self.bots[seat] = bot_level
        self._players.pop(seat, None)
        if left:
            self.left.add(seat)
        else:
            self.left.discard(seat)
        if bot_level is None and not left:
            self.timer_turns.pop(seat, None)  # back at the seat: idle turns start again
        elif self.round_break is not None and seat in self.round_break.waiting:
            self.round_break.waiting.discard(seat)  # a bot reads no summary
            self._break_changed()
        task = asyncio.create_task(
            self.hub.store_seat(self.id, seat, self.seats[seat], bot_level, left)
        )
        self.hub.background(task)
        self._schedule_bot()

    # --- seats -------------------------------------------------------------------------

    async def join(self, user_id: int, seat: int | None, address: str | None = None) -> None:
        async with self.lock:
            mine = self.seat_of(user_id)
            if self.status == "playing" and mine is not None:
                if mine in self.left or self.bots[mine] is not None:
                    await self.hub.check_can_sit(user_id, 0)
                    self._set_controller(mine, None, left=False)
                    self.broadcast_table()
                    return
                raise TableError("already_seated", "you already have a seat at this table")
            if self.status != "waiting":
                raise TableError("table_started", "the match has started; watch as a spectator")
            if mine is not None:
                raise TableError("already_seated", "you already have a seat at this table")
            free = self._free_seats()
            if not free:
                raise TableError("table_full", "every seat is taken")
            if seat is None:
                seat = free[0]
            elif not 0 <= seat < self.players:
                raise TableError("no_such_seat", f"seat {seat} is not a seat at this table", 422)
            elif seat not in free:
                raise TableError("seat_taken", f"seat {seat} is taken")
            self._check_address(address)
            await self.hub.check_can_sit(user_id, self.options.stake)
            await self.hub.store_seat(self.id, seat, user_id, None, False, address)
            self.seats[seat] = user_id
            if address is not None:
                self.addresses[seat] = address
            if not self._free_seats():
                await self._start_match()
            self.broadcast_table()
            if self.seat_of(user_id) is None:  # the match could not start: not enough coins
                raise TableError(
                    "not_enough_coins",
                    f"you cannot cover this table's stake of {self.options.stake}",
                )

    def _check_address(self, address: str | None) -> None:
        """At a coin table, one account per network address: two accounts of one
        household or one player's two accounts cannot share a pot (against collusion)."""
        if (
            address is None
            or not self.options.coin_table
            or not self.hub.settings.one_address_per_coin_table
        ):
            return
        mine = network_key(address)
        if mine is None:
            return
        for seat, other in self.addresses.items():
            # one network, not one text: an IPv6 subscriber picks any address in its /64
            if network_key(other) == mine and self.seats[seat] is not None:
                raise TableError(
                    "same_address",
                    "another player at this coin table joined from your network address; "
                    "a coin table takes one account per address",
                )

    def _free_seats(self) -> list[int]:
        return [
            seat
            for seat, owner in enumerate(self.seats)
            if owner is None and self.bots[seat] is None
        ]

    async def start_with_bots(self, user_id: int, level: str) -> None:
        """The creator starts a free table now, bots in the empty seats."""
        async with self.lock:
            if user_id != self.creator_id:
                raise TableError("not_creator", "only the table's creator can start it", 403)
            if self.status != "waiting":
                raise TableError("table_started", "the match has already started")
            if not self.bots_allowed:
                raise TableError("no_bots_at_coin_tables", "bots never sit at coin tables")
            if self.seat_of(user_id) is None:
                raise TableError("not_seated", "take a seat before starting with bots")
            for seat in self._free_seats():
                await self.hub.store_seat(self.id, seat, None, level, False)
                self.bots[seat] = level
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
            self.seats[seat] = None
            self.addresses.pop(seat, None)
            self.rematch.discard(seat)  # leaving a finished table declines its rematch
            self.broadcast_table()

    # --- the match ---------------------------------------------------------------------

    def set_options(self, options: dict[str, Any]) -> None:
        """New (validated) options for a waiting table; the seats list follows ``players``."""
        self.options = options_for(self.game, options)
        players = int(self.options.players)
        self.seats = (self.seats + [None] * players)[:players]
        self.bots = (self.bots + [None] * players)[:players]

    def demote(self, user_id: int) -> None:
        """The user's connections here become a spectator's (a suspended player)."""
        self._reseat_connections()

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
        self._new_match_tally()
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
            self.seats[seat] = None
            self.addresses.pop(seat, None)
        self._reseat_connections()
        names = ", ".join(self.hub.names.get(u, f"player {u}") for u in user_ids)
        message = (
            f"the match could not start: {names} cannot cover the stake of "
            f"{self.options.stake} coins; the table waits for players"
        )
        for conn in list(self.connections):
            conn.send(self._message("error", {"code": "not_enough_coins", "message": message}))

    def restore(self, entries: Sequence[Any]) -> None:
        """Rebuild the match from its log entries (start, then actions)."""
        for entry in entries:
            if entry.kind == "start":
                self.start_seq = entry.seq
                self.seed = entry.data["seed"]
                self.state = self.engine.new_game(
                    self.options, self.seed, (), entry.data.get("first_dealer")
                )
                self.first_dealer = int(self.state.dealer)
                self.actions = []
                self._new_match_tally()
                self.replies.clear()
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
                self._tally(step)
                if entry.client_id is not None and entry.seat is not None:
                    self._remember(
                        entry.seat, entry.client_id, {"cid": entry.client_id, "ok": True}
                    )
        if self.status == "playing":
            self._resume_break()
            self._arm_timer()
            self._schedule_bot()

    def _resume_break(self) -> None:
        """After a restart or a takeover: a round that had just ended is still in its
        break (its end is the stored deadline) if that has not passed; its players are
        waited for as they come back. A break already over starts the next turn's clock."""
        last = self.recent[-1] if self.recent else None
        if last is None or not any(event.type in ROUND_ENDS for event in last.events):
            return
        if self.deadline is not None and self.deadline > time.time():
            waiting = {
                seat
                for seat, owner in enumerate(self.seats)
                if owner is not None and self.bots[seat] is None and seat not in self.left
            }
            if waiting:
                self.round_break = RoundBreak(self.deadline, waiting)
                return
        self.deadline = self._new_deadline()

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
        metrics.COMMANDS.labels(problem["code"] if problem else "ok").inc()
        metrics.COMMAND_SECONDS.observe(time.perf_counter() - started)

    def _check_lease(self) -> None:
        """Refuse to write for a table whose lease this process may have lost."""
        if not self.hub.may_write(self.id):
            raise TableError(
                "unavailable", "the table is moving to another server; send the move again", 503
            )

    async def _command(self, conn: Connection, command: Command) -> dict[str, Any]:
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
        if seat in self.left or self.bots[seat] is not None:
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
        try:
            raw = {**command.action, "seat": seat}
            if "seat" in command.action and command.action["seat"] != seat:
                raise _SeatError()
            action = self.engine.action_from_json(raw)
            state, events = self.engine.apply(self.state, action)
        except _SeatError:
            return refusal(command.cid, "not_your_seat", "you can only play for your own seat")
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

    async def _commit(self, steps: list[tuple[Step, Any]]) -> None:
        """Make ``steps`` durable, then adopt the new state and tell every connection."""
        self._check_lease()
        final_state = steps[-1][1]
        before = self.engine.to_act(self.state)
        after = self.engine.to_act(final_state)
        over = bool(final_state.over)
        ends_round = not over and any(
            event.type in ROUND_ENDS for step, _ in steps for event in step.events
        )
        pause = self._new_break() if ends_round else None
        if over:
            deadline = None
        elif pause is not None:
            deadline = pause.until
        elif ends_round or after != before:
            deadline = self._new_deadline()
        else:
            deadline = self.deadline
        match_row = None
        coins: list[ledger.Movement] = []
        if over:
            actions = self.actions + [step.action for step, _ in steps]
            match_row = self._match_row(final_state, actions)
            moved = self.moved | {step.seat for step, _ in steps if step.by == "player"}
            coins = self._settlement(final_state, moved)
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
            Append(self.id, entries, last_seq, status, _as_datetime(deadline), match_row, coins)
        )
        self.round_break = pause
        for step, state in steps:
            self.state = state
            self.seq = step.seq
            self.actions.append(step.action)
            self.recent.append(step)
            self._tally(step)
            self.deadline = deadline
            # One view and one JSON text per seat (spectators share one), not per connection.
            texts: dict[int | None, str] = {}
            for conn in list(self.connections):
                if self.follow_seating(conn):  # re-seated: a whole new picture, not a step
                    conn.send(self._message("snapshot", self.snapshot(conn)))
                    continue
                text = texts.get(conn.seat)
                if text is None:
                    message = self._message("update", self._update_for(step, conn.seat))
                    text = texts[conn.seat] = orjson.dumps(message).decode()
                conn.send_text(text)
        self.status = status
        if over:
            self._cancel_timer()
            self.broadcast_table()
            self.hub.forget_later(self.id)
        else:
            self._forfeit_idle_seats()
            self._arm_timer()
            self._schedule_bot()

    def _match_row(self, state: Any, actions: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.seed is not None
        record = GameRecord(
            game=self.game,
            options=self.options.to_json(),
            # every seat is named (a bot's own seat too): a record replays by its seats
            seats=[
                self.hub.names.get(owner, f"seat {i}") if owner is not None else f"bot {i}"
                for i, owner in enumerate(self.seats)
            ],
            seed=self.seed,
            first_dealer=self.first_dealer,
            actions=actions,
        )
        return {
            "game": self.game,
            "winner_seat": getattr(state, "match_winner", None),
            "players": list(self.seats),
            "score_sheet": self.engine.score_sheet(state),
            "record": record.to_json(),
        }

    def _settlement(self, state: Any, moved: set[int]) -> list[ledger.Movement]:
        """The coins a finished match moves, written with its match row: a coin table's
        pot paid out (RULES.md §1.10), or at a free table the earnings of each player
        who finished it and made moves of their own (``moved``): a table of bots and
        timers started and never played earns nothing (docs/economy.md)."""
        start = self.start_seq if self.start_seq is not None else 0
        if not self.options.coin_table:
            amount = self.hub.defaults.free_table_earnings
            if amount <= 0:
                return []
            return [
                ledger.Movement(
                    f"table:{self.id}:seq:{start}:earn:{seat}",
                    ledger.HOUSE,
                    ledger.user_account(owner),
                    amount,
                    "earnings",
                    self.id,
                    start,
                )
                for seat, owner in enumerate(self.seats)
                if owner is not None and seat not in self.left and seat in moved
            ]
        stake = self.options.stake
        pot = stake * sum(owner is not None for owner in self.seats)
        places = getattr(state, "places", None)
        try:
            shares = ledger.payout_shares(
                pot, self.players, list(places) if places else None, state.match_winner
            )
        except ledger.LedgerError:  # shares exist for every finished match: a bug
            log.exception("table %s: no payout for these places; stakes refunded", self.id)
            shares = {seat: stake for seat, owner in enumerate(self.seats) if owner is not None}
        return ledger.payout_movements(self.id, start, self.seats, shares)

    # --- who really plays ------------------------------------------------------------

    def _new_match_tally(self) -> None:
        self.moved = set()
        self.timer_turns = {}
        self._last_step = None

    def _tally(self, step: Step) -> None:
        """Count a step toward its seat's own moves or idle turns. A run of timer steps
        of one seat is one turn; a move of the player's own ends the run."""
        previous, self._last_step = self._last_step, step
        if step.by == "player":
            self.moved.add(step.seat)
            self.timer_turns[step.seat] = 0
        elif step.by == "timer" and not (
            previous is not None and previous.by == "timer" and previous.seat == step.seat
        ):
            self.timer_turns[step.seat] = self.timer_turns.get(step.seat, 0) + 1

    def _forfeit_idle_seats(self) -> None:
        """A seat the timer played for ``timer_turns_to_forfeit`` turns in a row is
        forfeited like a player who left: a bot plays it at a free table, the timer at
        a coin table, and its player may come back and take it over."""
        limit = self.hub.settings.timer_turns_to_forfeit
        if limit <= 0:
            return
        forfeited = False
        for seat, turns in self.timer_turns.items():
            if turns >= limit and seat not in self.left and self.seats[seat] is not None:
                level = self.bot_level if self.bots_allowed else None
                self._set_controller(seat, level, left=True)
                forfeited = True
        if forfeited:
            self.broadcast_table()

    # --- bots ---------------------------------------------------------------------------

    def _schedule_bot(self) -> None:
        """If a bot is to act, let it move after a short, human-like pause."""
        if self.status != "playing" or self.state is None or self.state.over:
            return
        if self.round_break is not None:
            return  # bots wait for the next round like everyone
        seat = self.engine.to_act(self.state)
        if seat is None or self.bots[seat] is None:
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
            level = self.bots[seat] if seat is not None else None
            if seat is None or level is None:
                return
            player = self._players.get(seat)
            if player is None:
                player = self._players[seat] = make_bot(self.game, level)
            # The bot sees exactly what a person in that seat would see, and thinks in a
            # worker thread: a searching bot must not hold up the other tables' moves.
            view = self.engine.view(self.state, seat)
            try:
                thinking = time.perf_counter()
                action = await asyncio.to_thread(player, view)
                metrics.BOT_DECISION_SECONDS.observe(time.perf_counter() - thinking)
                if self.bots[seat] != level or self.round_break is not None:
                    return  # its player came back (or left it) while it was thinking
                state, events = self.engine.apply(self.state, action)
            except RuleError:
                self.log.warning("table %s: bot at seat %s proposed an illegal move", self.id, seat)
                action = self.engine.timeout_action(self.state)
                state, events = self.engine.apply(self.state, action)
            step = Step(self.seq + 1, self.engine.action_to_json(action), events, "bot", seat, None)
            await self._commit([(step, state)])

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
            code, message = problem
            conn.send(self._message("error", {"code": code, "message": message}))
            return
        conn.last_hint = time.monotonic()
        view = self.engine.view(self.state, seat)  # what the seat sees, nothing more
        player = make_bot(self.game, self.hub.settings.hint_level)
        action = await asyncio.to_thread(player, view)  # thinking never blocks the loop
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
                code, message = problem
                conn.send(self._message("error", {"code": code, "message": message}))
                return
            assert conn.seat is not None
            self.rematch.add(conn.seat)
            for seat, owner in enumerate(self.seats):
                if owner is None or (seat in self.left and self.bots_allowed):
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
        if seat in self.left:
            return "left", "you left this match"
        if any(owner is None and self.bots[s] is None for s, owner in enumerate(self.seats)):
            return "seat_empty", "a player left the table: open a new one"
        if not self.bots_allowed and self.left:
            return "seat_empty", "a player left this coin match: open a new table"
        return None

    async def _rematch(self) -> None:
        """Everyone asked: leavers' seats go to bots, and a new match is dealt."""
        level = self.bot_level
        for seat in sorted(self.left):
            await self.hub.store_seat(self.id, seat, None, level, False)
            self.seats[seat], self.bots[seat] = None, level
        self.left.clear()
        self.rematch.clear()
        self.away.clear()
        self.status = "waiting"
        if not await self._start_match():  # a stake nobody can cover any more
            await self.hub.store_status(self.id, "waiting")
        self.broadcast_table()

    # --- the break between rounds ---------------------------------------------------

    def _new_break(self) -> RoundBreak | None:
        """The break that follows a round's end, if anyone is there to read its summary:
        a table of bots, timers and absent players plays straight on."""
        seconds = int(getattr(self.options, "break_seconds", 0))
        waiting = self._readers()
        if seconds <= 0 or not waiting:
            return None
        return RoundBreak(time.time() + seconds, waiting)

    def _readers(self) -> set[int]:
        """The seats whose own player is here to press "continue"."""
        return {
            seat
            for seat in self.connected_seats()
            if self.bots[seat] is None and seat not in self.left
        }

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
        payload = {
            "round_break": self.round_break.to_json() if self.round_break else None,
            "deadline": self.deadline,
        }
        text = orjson.dumps(self._message("break", payload)).decode()
        for conn in list(self.connections):
            conn.send_text(text)

    async def _break_over_at(self, pause: RoundBreak) -> None:
        await asyncio.sleep(max(0.0, pause.until - time.time()))
        if self.round_break is pause:
            self._timer = None
            self._end_break()

    # --- the turn timer ------------------------------------------------------------

    def _turn_seconds(self) -> float:
        override = self.hub.settings.turn_seconds_override
        return float(override if override is not None else self.options.turn_seconds)

    def _new_deadline(self) -> float:
        return time.time() + self._turn_seconds()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm_timer(self) -> None:
        self._cancel_timer()
        if self.deadline is None or self.status != "playing":
            return
        if self.round_break is not None:
            self._timer = asyncio.create_task(self._break_over_at(self.round_break))
            return
        self._timer = asyncio.create_task(self._expire(self.seq, self.deadline))

    async def _expire(self, seq: int, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.time()))

        def again() -> None:
            if self.seq == seq and self.status == "playing":
                self._timer = asyncio.create_task(self._expire(seq, time.time()))

        await self._unattended("timer", self._expire_now(seq), again)

    async def _expire_now(self, seq: int) -> None:
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
                if any(event.type in ROUND_ENDS for event in events):
                    break  # the next round waits for its break
            if steps:
                self._timer = None
                await self._commit(steps)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop the table's tasks and close its connections (with ``code``)."""
        self._cancel_timer()
        if self._bot_task is not None:
            self._bot_task.cancel()
        for task in self._grace.values():
            task.cancel()
        for conn in list(self.connections):
            conn.close(code, reason)


def make_bot(game: str, level: str) -> Any:
    """A fresh bot player for one seat: ``view -> action``."""
    from sahrat.bots.levels import bot_for

    return bot_for(game, level)


class _SeatError(Exception):
    pass


def refusal(cid: str, code: str, message: str) -> dict[str, Any]:
    """The payload of a ``reply`` refusing command ``cid``."""
    return {"cid": cid, "ok": False, "error": {"code": code, "message": message}}


def _as_datetime(timestamp: float | None) -> datetime | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
