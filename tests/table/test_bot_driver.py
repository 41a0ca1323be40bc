"""The bots of a table (``BotDriver``): when a bot's seat is to act, its move is handed
to the table's entry after a pause, one turn pending at a time, made from exactly what
the seat sees; hints are for a player's own turn at a free table."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sahrat.rules.record import engine_for, options_for
from sahrat.server.table.bots import HINT_GAP, BotDriver
from sahrat.server.table.connection import Connection
from sahrat.server.table.match import Match
from sahrat.server.table.moves import MakeSteps, Position
from sahrat.server.table.seating import Seating

from .fakes import eventually, settings

GAME = "konkan"
ENGINE = engine_for(GAME)


class Entry:
    """The table's one entry as the bots see it: the moves handed to it."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, MakeSteps]] = []

    async def submit(self, by: str, make: MakeSteps) -> None:
        self.moves.append((by, make))


def built(delay: float = 0.01, **values: Any) -> tuple[BotDriver, Match, Seating]:
    """A driver at a table whose seat to act is a bot's (the others are people's)."""
    options = options_for(GAME, {"players": 3})
    match = Match(ENGINE, GAME, options, "waiting", 0)
    match.start(ENGINE.new_game(options, "bots-1"), "bots-1", 1)
    seat = ENGINE.to_act(match.state)
    assert seat is not None
    seating = Seating([1, 2, 3], [None, None, None])
    seating.control(seat, "simple", left=False)
    log = logging.LoggerAdapter(logging.getLogger("test"), {})
    chosen = settings(bot_delay_seconds=delay, hint_level="simple", **values)
    return BotDriver(GAME, ENGINE, seating, chosen, log, 7), match, seating


def position(match: Match, *, paused: bool = False) -> Position:
    return match.position(paused=paused)


@pytest.mark.asyncio
async def test_a_bots_move_is_handed_over_after_its_pause_once() -> None:
    driver, match, _ = built()
    entry = Entry()
    driver.schedule(position(match), entry.submit)
    driver.schedule(position(match), entry.submit)  # one pending turn at a time
    await eventually(lambda: len(entry.moves) == 1)
    await asyncio.sleep(0.05)
    assert len(entry.moves) == 1
    by, make = entry.moves[0]
    [(step, state)] = await make(position(match))
    seat = ENGINE.to_act(match.state)
    assert by == "bot" and step.by == "bot" and step.seat == seat and step.seq == 2
    # a legal move of that seat, from the match's state: the engine replays it the same
    replayed, _ = ENGINE.apply(match.state, ENGINE.action_from_json(step.action))
    assert ENGINE.view(replayed, None) == ENGINE.view(state, None)


@pytest.mark.asyncio
async def test_a_move_asked_for_at_an_old_seq_is_dropped_and_the_bot_waits_again() -> None:
    driver, match, _ = built()
    entry = Entry()
    driver.schedule(position(match), entry.submit)
    await eventually(lambda: len(entry.moves) == 1)
    _, make = entry.moves[0]
    moved = Position(match.seq + 1, True, match.state, False)  # someone moved since
    assert await make(moved) == []
    await eventually(lambda: len(entry.moves) == 2)  # a fresh pause, for the table now
    assert await entry.moves[1][1](position(match, paused=True)) == []  # a break: no move


@pytest.mark.asyncio
async def test_no_move_for_a_seat_its_player_took_back() -> None:
    driver, match, seating = built()
    entry = Entry()
    driver.schedule(position(match), entry.submit)
    await eventually(lambda: len(entry.moves) == 1)
    seat = ENGINE.to_act(match.state)
    assert seat is not None
    seating.control(seat, None, left=False)
    assert await entry.moves[0][1](position(match)) == []
    driver.schedule(position(match), entry.submit)  # no bot to act: nothing scheduled
    await asyncio.sleep(0.05)
    assert len(entry.moves) == 1


@pytest.mark.asyncio
async def test_nothing_is_scheduled_during_a_break_or_once_closed() -> None:
    driver, match, _ = built(delay=0.05)
    entry = Entry()
    driver.schedule(position(match, paused=True), entry.submit)
    await asyncio.sleep(0.1)
    assert entry.moves == []
    driver.schedule(position(match), entry.submit)
    driver.close()  # the pending turn is dropped
    await asyncio.sleep(0.15)
    assert entry.moves == []


@pytest.mark.asyncio
async def test_a_hint_is_for_a_players_own_turn_at_a_free_table() -> None:
    driver, match, seating = built()
    seat = ENGINE.to_act(match.state)
    assert seat is not None
    seating.control(seat, None, left=False)  # a person plays the seat to act
    mine, other = Connection(user_id=1, seat=seat), Connection(user_id=2, seat=(seat + 1) % 3)
    watcher = Connection(user_id=9)
    here = position(match)
    assert (await driver.hint(mine, bots_allowed=False, position=here))[1]["code"] == (
        "no_hints_at_coin_tables"
    )
    assert (await driver.hint(watcher, bots_allowed=True, position=here))[1]["code"] == "spectator"
    assert (await driver.hint(other, bots_allowed=True, position=here))[1]["code"] == (
        "not_your_turn"
    )
    paused = position(match, paused=True)
    assert (await driver.hint(mine, bots_allowed=True, position=paused))[1]["code"] == (
        "not_your_turn"
    )
    kind, payload = await driver.hint(mine, bots_allowed=True, position=here)
    assert kind == "hint" and "seat" not in payload["action"] and payload["action"]["type"]
    assert (await driver.hint(mine, bots_allowed=True, position=here))[1]["code"] == (
        "too_many_hints"
    )
    assert HINT_GAP >= 1
