"""A live table: the one writer of its match.

Every operation on a table runs under its lock, one at a time, so the table is an
actor. The path of a move reads top to bottom here: a command is checked, the engine
applies it, the step is appended to the event log and awaited until durable, and only
then is anyone told. The timer's and the bots' moves come through one entry,
:meth:`Table.submit`, to the same :meth:`Table._commit`. The package's docstring maps
the parts a table holds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from sqlalchemy.exc import IntegrityError

import sahrat.server.table.ending as ending
import sahrat.server.table.lifecycle as lifecycle
import sahrat.server.table.round_break as round_break
import sahrat.server.table.seat_control as seat_control
from sahrat.ratings import pool_of
from sahrat.rules.engine import Engine
from sahrat.rules.errors import RuleError
from sahrat.rules.record import engine_for, options_for
from sahrat.server import metrics
from sahrat.server.table.audience import Audience
from sahrat.server.table.bots import BotDriver
from sahrat.server.table.chat import TableChat
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.host import as_datetime
from sahrat.server.table.match import Match
from sahrat.server.table.messages import accepted, message, refusal
from sahrat.server.table.moves import MakeSteps, Position, Step, Steps
from sahrat.server.table.pace import Pace
from sahrat.server.table.protocol import CommandFields
from sahrat.server.table.seating import Seating
from sahrat.server.table.services import TableServices
from sahrat.store.log import Append

__all__ = ["Connection", "Step", "Table", "TableError", "refusal"]

log = logging.getLogger("sahrat.table")


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
        rated: bool = False,
        chat: bool = True,
        friends_watch: bool = False,
        spectator_delay: bool = False,
        tournament_id: int | None = None,
    ) -> None:
        self.services = services
        self.rated = rated  # its matches move ratings (docs/rating.md); no rematch
        # a rated table's seated people's (shown number, provisional) in its pool
        self.ratings: dict[int, tuple[int, bool]] = {}
        # the last rated match's ratings message, for a page opened after its end
        self.rating_changes: dict[str, Any] | None = None
        self.id = table_id
        self.log = logging.LoggerAdapter(log, {"table_id": table_id})
        self.game = game
        self.engine: Engine = engine_for(game)
        self.private = private
        self.friends_watch = friends_watch  # the creator's friends may watch (private)
        self.tournament_id = tournament_id  # its tournament: anyone may watch the table
        self.invite_code = invite_code
        self.creator_id = creator_id
        self.lock = asyncio.Lock()
        self.seating = Seating(
            seats, bots or [None] * len(seats), left or set(), set(), dict(addresses or {})
        )
        self.match = Match(self.engine, game, options_for(game, options), status, seq)
        settings = services.settings
        self.pace = Pace(settings, self.engine, self.seating, self.match, deadline)
        self.audience = Audience(
            services,
            self.engine,
            self.seating,
            self.match,
            self.pace,
            table_id=table_id,
            game=game,
            private=private,
            invite_code=invite_code,
            creator_id=creator_id,
            on_away=partial(seat_control.away, self),
            rated=rated,
            ratings=self.ratings,
            chat=chat,
            friends_watch=friends_watch,
            spectator_delay=spectator_delay,
            tournament_id=tournament_id,
        )
        self.chat = TableChat(services, self.audience, self.match, enabled=chat)
        self.bots = BotDriver(game, self.engine, self.seating, settings, self.log, table_id)

    # --- what the table is --------------------------------------------------------------

    @property
    def status(self) -> str:
        return self.match.status

    @property
    def seq(self) -> int:
        return self.match.seq

    @property
    def options(self) -> Any:
        return self.match.options

    @property
    def players(self) -> int:
        return int(self.options.players)

    @property
    def seats(self) -> list[int | None]:
        return self.seating.seats

    def seat_of(self, user_id: int) -> int | None:
        return self.seating.seat_of(user_id)

    @property
    def connections(self) -> dict[Connection, None]:
        return self.audience.connections

    def spectators(self) -> list[int]:
        return self.audience.spectators()

    @property
    def pool(self) -> str:
        """The rating pool of the table's matches (``sahrat.ratings.pool_of``)."""
        return pool_of(self.game, self.options.to_json())

    @property
    def bots_allowed(self) -> bool:
        """Bots sit only at free tables (RULES.md §1.10)."""
        return not self.options.coin_table

    @property
    def bot_level(self) -> str:
        """The level of a bot that takes over a seat here (``Seating.bot_level``)."""
        return self.seating.bot_level(self.options.bot_level)

    @property
    def in_lobby(self) -> bool:
        """Whether the lobby lists the table: it waits for players (anyone may sit
        down), or its match has a person playing in it, to watch (a seat whose player
        dropped counts: they may be back). A match its every person left is not shown."""
        if self.status == "waiting":
            return True
        return self.status == "playing" and self.seating.person_in_match()

    def info(self, viewer: int | None = None) -> dict[str, Any]:
        return self.audience.info(viewer)

    def snapshot(self, conn: Connection) -> dict[str, Any]:
        return self.audience.snapshot(conn)

    def broadcast_table(self) -> None:
        """Announce a change of the table (:meth:`Audience.table_changed`)."""
        self.audience.table_changed()

    def position(self) -> Position:
        return self.match.position(paused=self.pace.round_break is not None)

    # --- the move: command → checks → engine → durable log → updates --------------------

    async def command(self, conn: Connection, command: CommandFields) -> None:
        """Answer one command: exactly one reply, after any update it caused."""
        started = time.perf_counter()
        async with self.lock:
            try:
                reply = await self._command(conn, command)
            except TableError as error:  # this process no longer serves the table
                reply = refusal(command.cid, error.code, error.message)
            except IntegrityError:  # another process wrote this seq: it owns the table now
                self.log.warning("table %s: another process wrote its log; letting go", self.id)
                self.services.drop(self.id, "this table moved to another server; reconnect")
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
        conn.send(message("reply", self.seq, reply))
        problem = reply.get("error")
        (metrics.COMMANDS.labels(problem["code"]) if problem else metrics.COMMANDS_OK).inc()
        metrics.COMMAND_SECONDS.observe(time.perf_counter() - started)

    async def _command(self, conn: Connection, command: CommandFields) -> dict[str, Any]:
        """Check a command, play it through the engine, and commit the step."""
        cid = command.cid
        if self.audience.follow(conn):  # cannot happen while every seating change re-seats
            reply = refusal(cid, "seat_changed", "your seat at this table changed; look again")
            reply["snapshot"] = self.snapshot(conn)
            return reply
        seat = conn.seat
        if seat is None:
            return refusal(cid, "spectator", "spectators cannot play")
        earlier = self.match.answer(seat, cid)
        if earlier is not None:
            return earlier  # a duplicate gets its earlier answer
        if self.status != "playing" or self.match.state is None:
            return refusal(cid, "not_playing", f"the table is {self.status}, not playing")
        if self.pace.round_break is not None:
            return refusal(
                cid,
                "round_break",
                "the next round starts when every player has continued, or when the break ends",
            )
        if not self.seating.played_by_owner(seat):
            # Playing at your own seat is coming back to it, as reconnecting is.
            seat_control.set_controller(self, seat, None, left=False)
            self.broadcast_table()
        if command.seq != self.seq:
            reply = refusal(
                cid,
                "stale",
                f"the table is at seq {self.seq}; your command was sent at seq {command.seq}",
            )
            reply["snapshot"] = self.snapshot(conn)
            return reply
        if command.action.get("seat", seat) != seat:
            return refusal(cid, "not_your_seat", "you can only play for your own seat")
        played = self._play(seat, command)
        if isinstance(played, dict):
            return played
        await self._commit([played])
        reply = accepted(cid)
        self.match.remember(seat, cid, reply)
        return reply

    def _play(self, seat: int, command: CommandFields) -> tuple[Step, Any] | dict[str, Any]:
        """The engine's answer to a command: its step and the state it leads to, or a
        refusal. A malformed action is the engine's ``bad_action`` (a ``RuleError``);
        anything else the engine raises is a bug, logged and answered ``server_error``."""
        cid = command.cid
        try:
            action = self.engine.action_from_json({**command.action, "seat": seat})
            state, events = self.engine.apply(self.match.state, action)
        except RuleError as error:
            return refusal(cid, error.code, error.message)
        except Exception:
            self.log.exception("table %s: the engine failed on command %s", self.id, cid)
            return refusal(cid, "server_error", "the server failed on this move; it was not played")
        step = Step(self.seq + 1, self.engine.action_to_json(action), events, "player", seat, cid)
        return step, state

    async def _commit(self, steps: Steps) -> None:
        """Make ``steps`` durable, then adopt them and tell every connection.

        The steps are appended to the log (with the match's row and coins if they end
        it) and awaited until durable; nothing is adopted or sent before that, so a
        step anyone has seen survives any crash."""
        self.check_lease()
        final_state = steps[-1][1]
        over = bool(final_state.over)
        plan = self.pace.plan(steps, self.seating.readers(self.audience.connected_seats()))
        match, players, coins, rated = (
            ending.rows(self, final_state, steps) if over else (None, [], [], None)
        )
        await self.services.writer.append(
            Append(
                self.id,
                [step.entry() for step, _ in steps],
                steps[-1][0].seq,
                "finished" if over else "playing",
                as_datetime(plan.deadline),
                match=match,
                match_players=players,
                ledger=coins,
                rated=rated,
            )
        )
        self.pace.adopt(plan)
        for step, state in steps:
            before = self.match.adopt(step, state)
            self.audience.publish(step, before)
        if over:
            ending.ended(self, rated)
        else:
            await seat_control.forfeit_idle_seats(self)
            self.arm()
            self.schedule_bot()

    def check_lease(self) -> None:
        """Refuse to write for a table whose lease this process may have lost."""
        if not self.services.may_write(self.id):
            raise TableError(
                "unavailable", "the table is moving to another server; send the move again"
            )

    # --- moves nobody types: the timer's and the bots' ------------------------------------

    async def submit(self, by: str, make: MakeSteps) -> None:
        """The one entry of a move nobody typed (``by`` the timer or a bot): under the
        lock, ``make`` turns the table's position into steps (none if the table moved
        since the move was asked for), committed as a command's are. If the table moved
        to another process, its new owner makes the move; if the steps could not be
        saved, the turn is given again a second later (the clock fires at once for a
        passed deadline, and the bot to act is scheduled)."""
        try:
            async with self.lock:
                steps = await make(self.position())
                if steps:
                    await self._commit(steps)
        except TableError:
            return
        except Exception:
            self.log.exception("table %s: the %s's move was not saved; trying again", self.id, by)
            await asyncio.sleep(1.0)
            self.arm()
            self.schedule_bot()

    def arm(self) -> None:
        """Wake up at the turn's deadline (the timer's move) or at the break's end."""
        self.pace.arm(self.submit, partial(round_break.end, self))

    def schedule_bot(self) -> None:
        """Let a bot move, after its pause, if one is to act."""
        self.bots.schedule(self.position(), self.submit)

    # --- the break between rounds (round_break.py) ---------------------------------------

    def continue_play(self, conn: Connection) -> None:
        round_break.continue_play(self, conn)

    def break_changed(self) -> None:
        round_break.changed(self)

    # --- a restore --------------------------------------------------------------------------

    def restore(self, entries: Sequence[Any]) -> None:
        """Rebuild the match from its log entries (read from its current match's start)
        and, while it plays, its pace and its bots."""
        self.match.restore(entries)
        if self.status == "playing":
            self.pace.restore({s for s in range(self.players) if self.seating.played_by_owner(s)})
            self.arm()
            self.schedule_bot()

    # --- connections ------------------------------------------------------------------------

    def connect(self, conn: Connection, since: int | None) -> None:
        """Register a connection and greet it: a snapshot, or the missed updates. The
        table is announced at once if a seat's presence changed; a spectator coming
        changes nothing in play and is announced with the next batch of spectators."""
        before = self.audience.presence()
        self.audience.add(conn)
        retaken = conn.seat is not None and seat_control.retake(self, conn.seat)
        self.audience.greet(conn, self.match.missed_since(since) if since is not None else None)
        self.chat.greet(conn)
        if self.rating_changes is not None and self.status == "finished":
            conn.send(message("ratings", self.seq, self.rating_changes))
        self.audience.announce(before, seats_changed=retaken)

    def disconnect(self, conn: Connection) -> None:
        before = self.audience.presence()  # before the close: a closed one is not present
        emptied = self.audience.remove(conn, playing=self.status == "playing")
        if emptied is not None and self.pace.reader_done(emptied):
            self.break_changed()  # nobody waits for an empty chair
        self.audience.announce(before)

    def expect_players(self) -> None:
        """After a restart or a takeover nobody is connected yet: each player's seat
        gets the grace period it would have had on a dropped connection."""
        if self.status == "playing":
            seats = range(self.players)
            self.audience.expect(seat for seat in seats if self.seating.played_by_owner(seat))

    def demote(self, user_id: int) -> None:
        """The user's connections here become a spectator's (a suspended player)."""
        self.audience.reseat()

    def react(self, conn: Connection, reaction: str) -> None:
        self.audience.react(conn, reaction)

    async def hint(self, conn: Connection) -> None:
        """At a free table, the bot's suggestion for the asking seat's turn, to that
        connection only (never at a coin table: coins are played for by people alone)."""
        self.audience.follow(conn)
        allowed, position = self.bots_allowed, self.position()
        kind, payload = await self.bots.hint(conn, bots_allowed=allowed, position=position)
        conn.send(message(kind, self.seq, payload))

    # --- seats and matches (lifecycle.py), each under the lock ----------------------------

    async def join(self, user_id: int, seat: int | None, address: str | None = None) -> None:
        async with self.lock:
            await lifecycle.join(self, user_id, seat, address)

    async def start_with_bots(self, user_id: int, level: str | None = None) -> None:
        async with self.lock:
            await lifecycle.start_with_bots(self, user_id, level)

    async def leave(self, user_id: int) -> None:
        async with self.lock:
            await lifecycle.leave(self, user_id)

    async def update_options(self, options: dict[str, Any]) -> None:
        async with self.lock:
            await lifecycle.update_options(self, options)

    async def ask_rematch(self, conn: Connection) -> None:
        async with self.lock:
            await lifecycle.ask_rematch(self, conn)

    async def close_down(self, unless: Callable[[], bool] | None = None) -> bool:
        async with self.lock:
            return await lifecycle.close_down(self, unless)

    async def hand_over(self, code: int, reason: str) -> None:
        """This process stops serving the table: once the step in progress is done,
        every socket is told (``code``) to reconnect, to whoever serves it next."""
        async with self.lock:
            self.close(code, reason)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop every part's tasks and timers, and close the connections (``code``)."""
        self.pace.close()
        self.bots.close()
        self.audience.close(code, reason)
