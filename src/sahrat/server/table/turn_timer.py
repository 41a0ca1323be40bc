"""A table's pace: the turn timer, which plays the engine's ``timeout_action`` when a
turn's time runs out; the break between rounds, while players read the summary; and
the forfeit of a seat the timer played too many turns in a row.

A seat whose player has left the match (left, was suspended, or forfeited it) and
that no bot plays (a coin table's: RULES.md §1.10) has a short turn of its own,
``SAHRAT_LEFT_SEAT_TURN_SECONDS``, instead of the table's: the others do not wait the
table's turn time for someone who is gone. A dropped connection is not a leave: its
seat keeps the table's time and the grace period.
"""

from __future__ import annotations

import time
from typing import Any

from sahrat.server.table.base import Step, TableBase, as_datetime
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.pacing import RoundBreak, ends_round, new_break
from sahrat.store.log import Append

MAX_TIMER_STEPS = 8


class TurnTimer(TableBase):
    """The turn's clock, the round break, and idle seats."""

    def _turn_seconds(self, seat: int | None = None) -> float:
        """A turn's time: the table's, or for a leaver's seat the timer plays the short
        time of such seats (never longer than the table's)."""
        override = self.hub.settings.turn_seconds_override
        seconds = float(override if override is not None else self.options.turn_seconds)
        if seat is not None and self._timer_plays(seat):
            return min(seconds, self.hub.settings.left_seat_turn_seconds)
        return seconds

    def _timer_plays(self, seat: int) -> bool:
        """The seat's player left the match and no bot plays it: only the timer moves."""
        return seat in self.seating.left and self.seating.bots[seat] is None

    def _new_deadline(self, state: Any = None) -> float:
        state = self.state if state is None else state
        seat = self.engine.to_act(state) if state is not None else None
        return time.time() + self._turn_seconds(seat)

    async def _hurry_left_seat(self) -> None:
        """The seat to act has just been left to the timer (its player left, was
        suspended, or forfeited it): its turn ends within the short time from now rather
        than at the table's deadline. The new deadline is stored as a step's is (a
        restart or a takeover keeps it) and shown to everyone in a fresh snapshot, the
        deadline having changed without a step. A player who comes back during that
        turn has what is left of it (coming and going gives no one more time)."""
        if self.status != "playing" or self.state is None or self.round_break is not None:
            return
        seat = self.engine.to_act(self.state)
        if seat is None or not self._timer_plays(seat) or self.deadline is None:
            return
        deadline = self._new_deadline()
        if deadline >= self.deadline:
            return
        try:
            self._check_lease()
            await self.hub.writer.append(
                Append(self.id, [], self.seq, self.status, as_datetime(deadline))
            )
        except TableError:
            return  # another process serves the table now; its restore shortens the turn
        except Exception:  # not stored: the restore shortens the turn again
            self.log.warning("table %s: a left seat's deadline was not stored", self.id)
        self.deadline = deadline
        self._arm_timer()
        for conn in list(self.connections):
            conn.send(self._message("snapshot", self.snapshot(conn)))

    def _restored_left_seat(self) -> None:
        """After a restart or a takeover: a leaver's turn the timer plays ends within the
        short time, whatever deadline was stored (a stored shortened one is kept)."""
        if self.round_break is not None or self.state is None or self.deadline is None:
            return
        seat = self.engine.to_act(self.state)
        if seat is not None and self._timer_plays(seat):
            self.deadline = min(self.deadline, self._new_deadline())

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

    async def _forfeit_idle_seats(self) -> None:
        """A seat the timer played for ``timer_turns_to_forfeit`` turns in a row is
        forfeited like a player who left: a bot plays it at a free table, the timer at
        a coin table (at a left seat's pace), and its player may come back and take it
        over."""
        forfeited = False
        for seat in self.tally.idle(self.hub.settings.timer_turns_to_forfeit):
            if seat not in self.seating.left and self.seats[seat] is not None:
                level = self.bot_level if self.bots_allowed else None
                self._set_controller(seat, level, left=True)
                forfeited = True
        if forfeited:
            self.broadcast_table()
            await self._hurry_left_seat()

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
