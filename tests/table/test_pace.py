"""A table's pace (``Pace``): the deadline of the seat to act, the break after a round,
and the clock that hands the timer's move to the table's entry once, when it is due."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from sahrat.rules.record import engine_for, options_for
from sahrat.server.table.match import Match
from sahrat.server.table.moves import MakeSteps, Steps
from sahrat.server.table.pace import Pace, timeout_steps
from sahrat.server.table.seating import Seating

from .fakes import eventually, settings

GAME = "konkan"
ENGINE = engine_for(GAME)


def parts(
    *, deadline: float | None = None, turn_seconds: int = 30, **values: Any
) -> tuple[Pace, Match, Seating]:
    seating = Seating([1, 2, 3], [None, None, None])
    options = options_for(GAME, {"players": 3, "turn_seconds": turn_seconds})
    match = Match(ENGINE, GAME, options, "waiting", 0)
    match.start(ENGINE.new_game(options, "pace-1"), "pace-1", 1)
    pace = Pace(settings(**values), ENGINE, seating, match, deadline)
    return pace, match, seating


class Entry:
    """The table's one entry as the pace sees it: the moves handed to it."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, MakeSteps]] = []

    async def submit(self, by: str, make: MakeSteps) -> None:
        self.moves.append((by, make))


def until_round_ends(state: Any, seq: int) -> Steps:
    """The timer's steps from ``state`` up to the first that ends a round."""
    steps: Steps = []
    while True:
        made = timeout_steps(ENGINE, state, seq)
        steps += made
        state, seq = made[-1][1], made[-1][0].seq
        if made[-1][0].ends_round:
            return steps


@pytest.mark.asyncio
async def test_the_clock_hands_the_timers_move_to_the_entry_once_when_the_turn_is_over() -> None:
    pace, match, _ = parts(deadline=time.time() + 0.05)
    entry = Entry()
    pace.arm(entry.submit, lambda: None)
    assert entry.moves == []
    await eventually(lambda: len(entry.moves) == 1)
    await asyncio.sleep(0.1)
    assert len(entry.moves) == 1  # once
    by, make = entry.moves[0]
    steps = await make(match.position(paused=False))
    seat = ENGINE.to_act(match.state)
    assert by == "timer" and steps
    assert all(step.by == "timer" and step.seat == seat for step, _ in steps)
    assert [step.seq for step, _ in steps] == list(range(2, 2 + len(steps)))
    # asked for at seq 1: nothing once the table has moved on, or during a break
    assert await make(match.position(paused=True)) == []
    match.adopt(*steps[0])
    assert await make(match.position(paused=False)) == []


@pytest.mark.asyncio
async def test_a_closed_pace_never_wakes_up() -> None:
    pace, _, _ = parts(deadline=time.time() + 0.05)
    entry = Entry()
    pace.arm(entry.submit, lambda: None)
    pace.close()
    await asyncio.sleep(0.2)
    assert entry.moves == []


def test_a_turn_that_goes_on_keeps_its_deadline_and_a_new_turn_gets_its_own() -> None:
    pace, match, _ = parts(deadline=1000.0, turn_seconds=20)
    steps = timeout_steps(ENGINE, match.state, match.seq)  # the seat's whole turn
    while len(steps) < 2:  # a turn of a draw and a discard
        for step, state in steps:
            match.adopt(step, state)
        steps = timeout_steps(ENGINE, match.state, match.seq)
    plan = pace.plan(steps, readers={0, 1, 2})
    assert plan.round_break is None
    assert plan.deadline is not None and abs(plan.deadline - (time.time() + 20)) < 1
    assert ENGINE.to_act(steps[0][1]) == ENGINE.to_act(match.state)  # the draw
    assert pace.plan(steps[:1], readers={0}).deadline == 1000.0


def test_a_round_that_ends_starts_a_break_for_those_there_to_read_it() -> None:
    pace, match, _ = parts(deadline=1000.0)
    steps = until_round_ends(match.state, match.seq)
    if steps[-1][1].over:
        pytest.skip("this deal's first round ended the match")
    plan = pace.plan(steps, readers={0, 2})
    assert plan.round_break is not None and plan.round_break.waiting == {0, 2}
    assert plan.deadline == plan.round_break.until  # the break's end
    assert pace.plan(steps, readers=set()).round_break is None  # nobody to wait for
    pace.adopt(plan)
    assert pace.reader_done(0) and not pace.reader_done(0) and not pace.reader_done(1)
    assert pace.round_break is not None and pace.round_break.waiting == {2}
    assert pace.end_break()
    assert pace.round_break is None and pace.deadline is not None
    assert not pace.end_break()  # no break to end


def test_the_seat_of_a_leaver_the_timer_plays_has_the_short_turn() -> None:
    pace, match, seating = parts(deadline=time.time() + 30, left_seat_turn_seconds=5.0)
    seat = ENGINE.to_act(match.state)
    assert seat is not None
    assert pace.turn_seconds(seat) == 30
    assert pace.hurried() is None  # its player is still there
    seating.control(seat, None, left=True)
    assert pace.turn_seconds(seat) == 5
    hurried = pace.hurried()
    assert hurried is not None and hurried < time.time() + 6
    pace.hurry(hurried)
    assert pace.deadline == hurried
    assert pace.hurried() is None  # it ends sooner already


def test_a_restore_resumes_a_break_not_over_yet() -> None:
    pace, match, _ = parts(deadline=time.time() + 10)
    steps = until_round_ends(match.state, match.seq)
    if steps[-1][1].over:
        pytest.skip("this deal's first round ended the match")
    for step, state in steps:
        match.adopt(step, state)
    pace.restore(waiting={0, 1})
    assert pace.round_break is not None and pace.round_break.waiting == {0, 1}
    over, match, _ = parts(deadline=time.time() - 1)  # a break already over
    for step, state in until_round_ends(match.state, match.seq):
        match.adopt(step, state)
    over.restore(waiting={0, 1})
    assert over.round_break is None and over.deadline is not None
    assert over.deadline > time.time()
