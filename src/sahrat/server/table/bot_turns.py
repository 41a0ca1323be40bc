"""Bots at a table: a bot's move when its seat is to act, after a human-like pause,
and the hint a person asks for at a free table. A bot sees exactly what a person in
its seat would see, and thinks off the event loop (``autoplay.py``).
"""

from __future__ import annotations

import asyncio
import time

from sahrat.rules.errors import RuleError
from sahrat.server.table.autoplay import suggest
from sahrat.server.table.base import Step, TableBase
from sahrat.server.table.connection import Connection

HINT_GAP = 2.0  # a hint costs a bot's thinking: one per connection every two seconds


class BotTurns(TableBase):
    """A bot's moves, and hints."""

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
