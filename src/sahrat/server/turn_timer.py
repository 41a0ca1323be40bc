"""A table's pace: the turn timer, which plays the engine's ``timeout_action`` when a
turn's time runs out; the break between rounds, while players read the summary; and
the forfeit of a seat the timer played too many turns in a row.
"""

from __future__ import annotations

import time
from typing import Any

from .connection import Connection
from .pacing import RoundBreak, ends_round, new_break
from .table_base import Step, TableBase

MAX_TIMER_STEPS = 8


class TurnTimer(TableBase):
    """The turn's clock, the round break, and idle seats."""

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
