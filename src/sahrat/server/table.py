"""A live table: the one writer of its match.

Every operation on a table (a command, a join, a timer expiry) runs under the
table's lock, one at a time, so the table is an actor: it applies a step
through the engine, appends it to the event log and waits until that is
durable, and only then tells anyone. The server never decides a rule: it
asks the engine (``apply``, ``view``, ``timeout_action``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from sahrat.rules.errors import RuleError
from sahrat.rules.events import Event
from sahrat.rules.record import GameRecord, engine_for, options_for
from sahrat.rules.rng import new_seed, seed_commitment
from sahrat.store.log import Append

from .protocol import Command

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger("sahrat.table")

DEDUPE_SIZE = 2048
RECENT_SIZE = 512
MAX_TIMER_STEPS = 8
REACTION_GAP = 1.0


class TableError(Exception):
    """A refused table operation (join a full seat, leave a running match...)."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(eq=False)
class Connection:
    """One WebSocket: who it is, which seat it sees, and its outgoing queue."""

    user_id: int
    seat: int | None
    outbox: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(1024))
    closed: bool = False
    last_reaction: float = -1e9

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message; a client too slow to keep up is dropped (it can resume)."""
        if self.closed:
            return
        try:
            self.outbox.put_nowait(json.dumps(message, separators=(",", ":")))
        except asyncio.QueueFull:
            self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            while True:
                try:
                    self.outbox.put_nowait(None)
                    break
                except asyncio.QueueFull:
                    self.outbox.get_nowait()


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
    ) -> None:
        self.hub = hub
        self.id = table_id
        self.game = game
        self.options = options_for(game, options)
        self.engine: ModuleType = engine_for(game)
        self.private = private
        self.invite_code = invite_code
        self.creator_id = creator_id
        self.status = status
        self.seq = seq
        self.seats = seats
        self.deadline = deadline
        self.lock = asyncio.Lock()
        self.state: Any = None
        self.seed: str | None = None
        self.actions: list[dict[str, Any]] = []
        self.connections: set[Connection] = set()
        self.replies: OrderedDict[tuple[int, str], dict[str, Any]] = OrderedDict()
        self.recent: deque[Step] = deque(maxlen=RECENT_SIZE)
        self.away: set[int] = set()
        self._timer: asyncio.Task[None] | None = None
        self._grace: dict[int, asyncio.Task[None]] = {}

    # --- what clients see -----------------------------------------------------

    @property
    def players(self) -> int:
        return int(self.options.players)

    def seat_of(self, user_id: int) -> int | None:
        for seat, owner in enumerate(self.seats):
            if owner == user_id:
                return seat
        return None

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
                }
            )
        show_code = viewer is not None and (viewer in self.seats or viewer == self.creator_id)
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
        }

    def snapshot(self, conn: Connection) -> dict[str, Any]:
        view = self.engine.view(self.state, conn.seat) if self.state is not None else None
        return {
            "table": self.info(conn.user_id),
            "seat": conn.seat,
            "view": view,
            "deadline": self.deadline,
        }

    def _message(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "seq": self.seq, "payload": payload}

    def _update_for(self, step: Step, seat: int | None) -> dict[str, Any]:
        return {
            "events": [event.for_seat(seat) for event in step.events],
            "view": self.engine.view(self.state, seat),
            "deadline": self.deadline,
            "by": step.by,
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
        for conn in list(self.connections):
            conn.send(self._message("table", self.info(conn.user_id)))

    # --- connections ---------------------------------------------------------------

    def connect(self, conn: Connection, since: int | None) -> None:
        """Register a connection and greet it: a snapshot, or the missed updates."""
        self.connections.add(conn)
        if conn.seat is not None:
            self.away.discard(conn.seat)
            task = self._grace.pop(conn.seat, None)
            if task is not None:
                task.cancel()
        missed = self._missed_since(since) if since is not None else None
        if missed is not None and self.state is not None:
            updates = [
                {
                    "events": [event.for_seat(conn.seat) for event in step.events],
                    "view": None,
                    "deadline": None,
                    "by": step.by,
                }
                for step in missed
            ]
            conn.send(self._message("resume", {"missed": updates, "snapshot": self.snapshot(conn)}))
        else:
            conn.send(self._message("snapshot", self.snapshot(conn)))
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
        self.connections.discard(conn)
        conn.close()
        seat = conn.seat
        if seat is not None and seat not in self.connected_seats() and self.status == "playing":
            self._grace[seat] = asyncio.create_task(self._grace_period(seat))
        self.broadcast_table()

    async def _grace_period(self, seat: int) -> None:
        await asyncio.sleep(self.hub.settings.grace_seconds)
        if seat not in self.connected_seats():
            self.away.add(seat)
            self._grace.pop(seat, None)
            self.broadcast_table()

    # --- seats -------------------------------------------------------------------------

    async def join(self, user_id: int, seat: int | None) -> None:
        async with self.lock:
            if self.status != "waiting":
                raise TableError("table_started", "the match has started; watch as a spectator")
            if self.seat_of(user_id) is not None:
                raise TableError("already_seated", "you already have a seat at this table")
            free = [s for s, owner in enumerate(self.seats) if owner is None]
            if not free:
                raise TableError("table_full", "every seat is taken")
            if seat is None:
                seat = free[0]
            elif not 0 <= seat < self.players:
                raise TableError("no_such_seat", f"seat {seat} is not a seat at this table", 422)
            elif self.seats[seat] is not None:
                raise TableError("seat_taken", f"seat {seat} is taken")
            await self.hub.store_seat(self.id, seat, user_id)
            self.seats[seat] = user_id
            if all(owner is not None for owner in self.seats):
                await self._start_match()
            self.broadcast_table()

    async def leave(self, user_id: int) -> None:
        async with self.lock:
            seat = self.seat_of(user_id)
            if seat is None:
                raise TableError("not_seated", "you have no seat at this table")
            if self.status == "playing":
                raise TableError(
                    "match_running",
                    "you cannot give up a seat in a running match; your turns are played "
                    "by the turn timer while you are away",
                )
            await self.hub.remove_seat(self.id, seat)
            self.seats[seat] = None
            self.broadcast_table()

    # --- the match ---------------------------------------------------------------------

    async def _start_match(self) -> None:
        """Deal a new match (caller holds the lock)."""
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
        await self.hub.writer.append(
            Append(self.id, [entry], seq, "playing", _as_datetime(deadline))
        )
        self.state, self.seed, self.seq, self.status = state, seed, seq, "playing"
        self.actions = []
        self.deadline = deadline
        self.recent.clear()
        for conn in list(self.connections):
            conn.send(self._message("snapshot", self.snapshot(conn)))
        self._arm_timer()

    def restore(self, entries: Sequence[Any]) -> None:
        """Rebuild the match from its log entries (start, then actions)."""
        for entry in entries:
            if entry.kind == "start":
                self.seed = entry.data["seed"]
                self.state = self.engine.new_game(
                    self.options, self.seed, (), entry.data.get("first_dealer")
                )
                self.actions = []
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
                if entry.client_id is not None and entry.seat is not None:
                    self._remember(
                        entry.seat, entry.client_id, {"cid": entry.client_id, "ok": True}
                    )
        if self.status == "playing":
            self._arm_timer()

    async def command(self, conn: Connection, command: Command) -> None:
        """Answer one command: exactly one reply, after any update it caused."""
        async with self.lock:
            try:
                reply = await self._command(conn, command)
            except Exception:  # the log could not be written: nothing was applied
                log.exception("table %s: command %s not saved", self.id, command.cid)
                reply = _error(
                    command.cid,
                    "unavailable",
                    "the move could not be saved and was not played; send it again",
                )
        conn.send(self._message("reply", reply))

    async def _command(self, conn: Connection, command: Command) -> dict[str, Any]:
        seat = conn.seat
        if seat is None:
            return _error(command.cid, "spectator", "spectators cannot play")
        earlier = self.replies.get((seat, command.cid))
        if earlier is not None:
            return earlier  # a duplicate gets its earlier answer
        if self.status != "playing" or self.state is None:
            return _error(command.cid, "not_playing", f"the table is {self.status}, not playing")
        if command.seq != self.seq:
            reply = _error(
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
            return _error(command.cid, "not_your_seat", "you can only play for your own seat")
        except RuleError as error:
            return _error(command.cid, error.code, error.message)
        except (TypeError, ValueError, AttributeError) as error:
            return _error(command.cid, "bad_action", f"not an action: {error}")
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
        final_state = steps[-1][1]
        before = self.engine.to_act(self.state)
        after = self.engine.to_act(final_state)
        over = bool(final_state.over)
        deadline = None if over else (self.deadline if after == before else self._new_deadline())
        match_row = None
        if over:
            actions = self.actions + [step.action for step, _ in steps]
            match_row = self._match_row(final_state, actions)
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
            Append(self.id, entries, last_seq, status, _as_datetime(deadline), match_row)
        )
        for step, state in steps:
            self.state = state
            self.seq = step.seq
            self.actions.append(step.action)
            self.recent.append(step)
            self.deadline = deadline
            for conn in list(self.connections):
                conn.send(self._message("update", self._update_for(step, conn.seat)))
        self.status = status
        if over:
            self._cancel_timer()
            self.broadcast_table()
        else:
            self._arm_timer()
        self.hub.stats_moves += len(steps)

    def _match_row(self, state: Any, actions: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.seed is not None
        record = GameRecord(
            game=self.game,
            options=self.options.to_json(),
            seats=[
                self.hub.names.get(owner, f"seat {i}")
                for i, owner in enumerate(self.seats)
                if owner is not None
            ],
            seed=self.seed,
            first_dealer=self._first_dealer(),
            actions=actions,
        )
        return {
            "game": self.game,
            "winner_seat": getattr(state, "match_winner", None),
            "players": list(self.seats),
            "score_sheet": self.engine.score_sheet(state),
            "record": record.to_json(),
        }

    def _first_dealer(self) -> int:
        return int(self.engine.new_game(self.options, self.seed).dealer)

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
        self._timer = asyncio.create_task(self._expire(self.seq, self.deadline))

    async def _expire(self, seq: int, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.time()))
        async with self.lock:
            if self.seq != seq or self.status != "playing" or self.state is None:
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
            if steps:
                self._timer = None
                await self._commit(steps)

    def close(self) -> None:
        self._cancel_timer()
        for task in self._grace.values():
            task.cancel()
        for conn in list(self.connections):
            conn.close()


class _SeatError(Exception):
    pass


def _error(cid: str, code: str, message: str) -> dict[str, Any]:
    return {"cid": cid, "ok": False, "error": {"code": code, "message": message}}


def _as_datetime(timestamp: float | None) -> datetime | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
