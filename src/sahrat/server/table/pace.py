"""A table's pace: the turn's deadline, the break between rounds, and the clock that
wakes the table at either.

When a turn's time runs out the timer plays the engine's ``timeout_action`` (for as
many steps as the turn needs, up to the round's end); the move is handed to the
table's one entry like any other, so it is made durable before anyone sees it. A
break pauses play after a round while the players read its summary; it ends when
nobody is waited for or at its end, whichever comes first.

A seat whose player has left the match (left, was suspended, or forfeited it) and
that no bot plays (a coin table's: RULES.md §1.10) has a short turn of its own,
``SAHRAT_LEFT_SEAT_TURN_SECONDS``, instead of the table's: the others do not wait the
table's turn time for someone who is gone. A dropped connection is not a leave: its
seat keeps the table's time and the grace period.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sahrat.rules.engine import Engine
from sahrat.server.table.match import Match
from sahrat.server.table.moves import MakeSteps, Position, Step, Steps, Submit
from sahrat.server.table.pacing import Clock, RoundBreak, new_break
from sahrat.server.table.seating import Seating
from sahrat.settings import Settings

MAX_TIMER_STEPS = 8  # a turn the timer plays never runs away: at most this many steps

BreakOver = Callable[[], None]


@dataclass(frozen=True)
class Plan:
    """The pace after some steps, decided before they are written (the deadline is
    stored with them) and adopted once they are durable."""

    deadline: float | None
    round_break: RoundBreak | None


class Pace:
    """The deadline (the turn's, or during a round break the break's end), the round
    break, and the clock."""

    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        seating: Seating,
        match: Match,
        deadline: float | None,
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._seating = seating
        self._match = match  # read: the options, and where the play is
        self._deadline = deadline
        self._round_break: RoundBreak | None = None
        self._clock = Clock()

    @property
    def deadline(self) -> float | None:
        return self._deadline

    @property
    def round_break(self) -> RoundBreak | None:
        return self._round_break

    # --- the turn's time ---------------------------------------------------------------

    def turn_seconds(self, seat: int | None = None) -> float:
        """A turn's time: the table's, or for a leaver's seat the timer plays the short
        time of such seats (never longer than the table's)."""
        override = self._settings.turn_seconds_override
        turn = self._match.options.turn_seconds
        seconds = float(override if override is not None else turn)
        if seat is not None and self._seating.timer_plays(seat):
            return min(seconds, self._settings.left_seat_turn_seconds)
        return seconds

    def turn_deadline(self, state: Any = None) -> float:
        """The deadline of a turn starting now, for the seat to act in ``state`` (the
        match's by default)."""
        state = self._match.state if state is None else state
        seat = self._engine.to_act(state) if state is not None else None
        return time.time() + self.turn_seconds(seat)

    def start(self, deadline: float) -> None:
        """A match starts: its first turn ends at ``deadline``."""
        self._deadline = deadline
        self._round_break = None

    def plan(self, steps: Steps, readers: set[int]) -> Plan:
        """The pace after ``steps`` from the match's state: a round that ends starts a
        break if any of its ``readers`` is there, a new turn gets its deadline, and a
        turn that goes on keeps its own."""
        after = steps[-1][1]
        if after.over:
            return Plan(None, None)
        if not any(step.ends_round for step, _ in steps):
            if self._engine.to_act(after) == self._engine.to_act(self._match.state):
                return Plan(self._deadline, None)
            return Plan(self.turn_deadline(after), None)
        seconds = int(getattr(self._match.options, "break_seconds", 0))
        pause = new_break(seconds, readers)
        if pause is not None:
            return Plan(pause.until, pause)
        return Plan(self.turn_deadline(after), None)

    def adopt(self, plan: Plan) -> None:
        """The steps planned for are durable."""
        self._deadline, self._round_break = plan.deadline, plan.round_break

    def hurried(self) -> float | None:
        """The seat to act has just been left to the timer: the earlier deadline its
        turn gets now (within the short time of such seats), or None if it keeps its
        own (no turn runs, the seat is not the timer's, or its turn ends sooner)."""
        state = self._match.state
        if not self._match.playing or state is None or self._round_break is not None:
            return None
        seat = self._engine.to_act(state)
        if seat is None or not self._seating.timer_plays(seat) or self._deadline is None:
            return None
        deadline = self.turn_deadline()
        return deadline if deadline < self._deadline else None

    def hurry(self, deadline: float) -> None:
        """The running turn ends at ``deadline`` (from :meth:`hurried`)."""
        self._deadline = deadline

    def restore(self, waiting: set[int]) -> None:
        """After a restart or a takeover. A round that had just ended is still in its
        break (its end is the stored deadline) if that has not passed and a player is
        to be waited for (``waiting``, as they come back); a break already over starts
        the next turn's clock. A leaver's turn the timer plays ends within the short
        time, whatever deadline was stored (a stored shortened one is kept)."""
        if self._match.round_just_ended():
            if self._deadline is not None and self._deadline > time.time() and waiting:
                self._round_break = RoundBreak(self._deadline, set(waiting))
                return
            self._deadline = self.turn_deadline()
        state = self._match.state
        if self._deadline is None or state is None:
            return
        seat = self._engine.to_act(state)
        if seat is not None and self._seating.timer_plays(seat):
            self._deadline = min(self._deadline, self.turn_deadline())

    # --- the break between rounds --------------------------------------------------------

    def reader_done(self, seat: int) -> bool:
        """The seat's player is done with the round's summary (or gone, or a bot's):
        True if the break was waiting for it."""
        pause = self._round_break
        if pause is None or seat not in pause.waiting:
            return False
        pause.waiting.discard(seat)
        return True

    def end_break(self) -> bool:
        """The next round's play starts, its first turn's clock with it: False if no
        break is running (or the match is not being played)."""
        if self._round_break is None or not self._match.playing:
            return False
        self._round_break = None
        self._deadline = self.turn_deadline()
        return True

    # --- the clock -----------------------------------------------------------------------

    def arm(self, submit: Submit, break_over: BreakOver) -> None:
        """Wake up at the turn's deadline (the timer's move, handed to ``submit``) or
        during a break at its end (``break_over``, if the break is still that one)."""
        if self._deadline is None or not self._match.playing:
            self._clock.cancel()
            return
        pause = self._round_break
        if pause is not None:
            self._clock.at(pause.until, lambda: self._break_ends(pause, break_over))
        else:
            seq = self._match.seq
            self._clock.at(self._deadline, lambda: submit("timer", self.turn_over(seq)))

    async def _break_ends(self, pause: RoundBreak, break_over: BreakOver) -> None:
        if self._round_break is pause:
            break_over()

    def turn_over(self, seq: int) -> MakeSteps:
        """The timer's move for the turn at ``seq``: nothing if the table moved since."""

        async def steps(position: Position) -> Steps:
            if not position.at(seq) or position.paused:
                return []
            return timeout_steps(self._engine, position.state, seq)

        return steps

    def close(self) -> None:
        """No more wake-ups (the match is over, or the table is closing)."""
        self._clock.cancel()


def timeout_steps(engine: Engine, state: Any, seq: int) -> Steps:
    """The turn's time ran out at ``seq``: the engine's timeout action, for as many
    steps as the turn needs (up to the round's end, which starts a break)."""
    seat = engine.to_act(state)
    steps: Steps = []
    if seat is None:
        return steps
    for index in range(MAX_TIMER_STEPS):
        if state.over or engine.to_act(state) != seat:
            break
        action = engine.timeout_action(state)
        state, events = engine.apply(state, action)
        step = Step(seq + index + 1, engine.action_to_json(action), events, "timer", seat, None)
        steps.append((step, state))
        if step.ends_round:
            break  # the next round waits for its break
    return steps
