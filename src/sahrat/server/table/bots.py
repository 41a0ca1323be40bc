"""Bots at a table: a bot's move when its seat is to act, after a human-like pause,
and the hint a person asks for at a free table. A bot sees exactly what a person in
its seat would see, and thinks off the event loop (``autoplay.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from sahrat.bots.levels import pause_factor
from sahrat.rules.engine import Engine
from sahrat.rules.errors import RuleError
from sahrat.server.table.autoplay import BotSeats, suggest
from sahrat.server.table.connection import Connection
from sahrat.server.table.messages import error_payload, hint_payload
from sahrat.server.table.moves import MakeSteps, Position, Step, Steps, Submit
from sahrat.server.table.seating import Seating
from sahrat.settings import Settings

HINT_GAP = 2.0  # a hint costs a bot's thinking: one per connection every two seconds


class BotDriver:
    """The bots of one table: one player per seat a bot plays (a bot may remember what
    it saw), and the one pending bot turn."""

    def __init__(
        self,
        game: str,
        engine: Engine,
        seating: Seating,
        settings: Settings,
        log: logging.LoggerAdapter[logging.Logger],
        table_id: int,
    ) -> None:
        self._game = game
        self._engine = engine
        self._seating = seating
        self._settings = settings
        self._log = log
        self._table_id = table_id
        self._players = BotSeats(game)
        self._pending: asyncio.Task[None] | None = None  # until the table takes its move

    def forget(self, seat: int) -> None:
        """The seat changes hands: a bot that plays it later starts afresh."""
        self._players.forget(seat)

    def schedule(self, position: Position, submit: Submit) -> None:
        """If a bot is to act, hand its move to ``submit`` after a short, human-like
        pause (one pending at a time: the move made then is the one the table needs)."""
        state = position.state
        if not position.playing or state is None or state.over or position.paused:
            return  # during a break, bots wait for the next round like everyone
        seat = self._engine.to_act(state)
        if seat is None or self._seating.bots[seat] is None:
            return
        if self._pending is not None and not self._pending.done():
            return
        pause = pause_factor(self._game, self._engine.view(state, seat))  # harder: longer
        self._pending = asyncio.create_task(self._after_pause(position.seq, submit, pause))

    async def _after_pause(self, seq: int, submit: Submit, pause: float = 1.0) -> None:
        await asyncio.sleep(self._settings.bot_delay_seconds * pause)
        await submit("bot", self._turn(seq, submit))

    def _turn(self, seq: int, submit: Submit) -> MakeSteps:
        async def steps(position: Position) -> Steps:
            self._pending = None  # taken: the steps it leads to may schedule the next turn
            if not position.at(seq):
                self.schedule(position, submit)  # the table moved on: a fresh pause
                return []
            if position.paused:
                return []
            return await self._move(position)

        return steps

    async def _move(self, position: Position) -> Steps:
        """The move of the bot to act, from exactly what a person in its seat sees."""
        state, engine = position.state, self._engine
        seat = engine.to_act(state)
        level = self._seating.bots[seat] if seat is not None else None
        if seat is None or level is None:
            return []
        try:
            action = await self._players.decide(seat, level, engine.view(state, seat))
            if self._seating.bots[seat] != level:
                return []  # its player came back (or left it) while it was thinking
            after, events = engine.apply(state, action)
        except RuleError:
            self._log.warning(
                "table %s: bot at seat %s proposed an illegal move", self._table_id, seat
            )
            action = engine.timeout_action(state)
            after, events = engine.apply(state, action)
        step = Step(position.seq + 1, engine.action_to_json(action), events, "bot", seat, None)
        return [(step, after)]

    async def hint(
        self, conn: Connection, *, bots_allowed: bool, position: Position
    ) -> tuple[str, dict[str, Any]]:
        """At a free table, the bot's suggestion for the asking seat's turn: a ``hint``
        payload, or an ``error`` one saying why not."""
        problem = self._no_hint(conn, bots_allowed, position)
        if problem is not None:
            return "error", error_payload(*problem)
        conn.last_hint = time.monotonic()
        view = self._engine.view(position.state, conn.seat)  # what the seat sees, no more
        action = await suggest(self._game, self._settings.hint_level, view)
        return "hint", hint_payload(self._engine.action_to_json(action))

    def _no_hint(
        self, conn: Connection, bots_allowed: bool, position: Position
    ) -> tuple[str, str] | None:
        """Why ``conn`` gets no hint now, if it does not: hints are for a seated
        player's own turn at a free table (coins are played for by people alone), one
        every ``HINT_GAP`` seconds."""
        if not bots_allowed:
            return "no_hints_at_coin_tables", "coin tables are played without help"
        if conn.seat is None:
            return "spectator", "spectators get no hints"
        state = position.state
        if (
            not position.playing
            or state is None
            or position.paused
            or self._engine.to_act(state) != conn.seat
        ):
            return "not_your_turn", "a hint is for your own turn"
        if time.monotonic() - conn.last_hint < HINT_GAP:
            return "too_many_hints", f"one hint every {HINT_GAP:g} seconds at most"
        return None

    def close(self) -> None:
        """The pending bot turn is dropped (one being played finishes)."""
        if self._pending is not None:
            self._pending.cancel()
