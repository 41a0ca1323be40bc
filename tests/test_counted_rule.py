"""The rule of a counted match (``sahrat.server.table.settlement``, docs/economy.md "What
counts"), piece by piece: own turns, rounds played, the five conditions, the earnings
it pays. The live attacks are in tests/server/test_real_play.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sahrat.rules.options import ConquianOptions
from sahrat.server.table.settlement import (
    CountingRule,
    PlayTally,
    match_players,
    rounds_played,
    settlement,
)
from sahrat.store import ledger

RULE = CountingRule(min_rounds=3, min_deals=3, min_turns=2)


def test_own_turns_are_runs_of_a_seats_steps_with_a_move_of_its_player() -> None:
    tally = PlayTally()
    for by, seat in [("player", 0), ("player", 0), ("bot", 1), ("timer", 0), ("player", 0)]:
        tally.count(by, seat)
    tally.count("player", 1, ends_round=True)  # the round ends on seat 1's move...
    tally.count("player", 1)  # ...and seat 1 starts the next: a new turn
    tally.count("timer", 0)
    tally.count("player", 0)  # the timer, then the player, in one turn: one own turn
    assert tally.own_turns == {0: 3, 1: 2}
    copy = tally.copy()
    copy.count("bot", 1)
    copy.count("player", 1)
    assert copy.own_turns == {0: 3, 1: 3} and tally.own_turns == {0: 3, 1: 2}


def test_rounds_played_are_the_ones_someone_won() -> None:
    konkan = {"rounds": [{"winner": 0}, {"winner": None, "finish": "void"}, {"winner": 1}]}
    conquian = {"deals": [{"winner": None, "finish": "draw"}, {"winner": 1}]}
    assert rounds_played("konkan", konkan) == 2
    assert rounds_played("conquian", conquian) == 1
    assert rounds_played("conquian", {}) == 0


def _sheet(won: int) -> dict[str, Any]:
    return {"deals": [{"winner": 0}] * won, "totals": [won, 0]}


def _players(
    *,
    winner: int | None = 0,
    won: int = 3,
    seats: list[int | None] | None = None,
    in_seat: set[int] | None = None,
    turns: dict[int, int] | None = None,
    addresses: dict[int, str] | None = None,
) -> dict[int, bool]:
    owners: list[int | None] = [11, 22] if seats is None else seats
    plays = match_players(
        "conquian",
        SimpleNamespace(match_winner=winner),
        _sheet(won),
        seats=owners,
        in_seat={0, 1} if in_seat is None else in_seat,
        own_turns={0: 5, 1: 5} if turns is None else turns,
        addresses={0: "198.51.100.1", 1: "198.51.100.2"} if addresses is None else addresses,
        rule=RULE,
    )
    return {play.seat: play.counted for play in plays}


def test_every_condition_of_the_rule() -> None:
    assert _players() == {0: True, 1: True}
    assert _players(winner=None) == {0: False, 1: False}  # a tie: not decided
    assert _players(won=2) == {0: False, 1: False}  # two deals won: too short
    assert _players(turns={0: 5, 1: 1}) == {0: True, 1: False}  # one turn of its own
    assert _players(in_seat={0}) == {0: True, 1: False}  # seat 1 finished as a bot's
    same = {0: "198.51.100.1", 1: "198.51.100.1"}
    assert _players(addresses=same) == {0: False, 1: False}  # one network
    assert _players(addresses={0: "198.51.100.1"}) == {0: True, 1: True}  # one unknown
    # a bot's own seat: no row for it, and an opponent on no one's network
    assert _players(seats=[11, None], addresses=same) == {0: True}


def test_free_table_earnings_go_to_counted_seats_with_the_daily_cap() -> None:
    options = ConquianOptions()
    moves = settlement(
        SimpleNamespace(match_winner=0),
        table_id=7,
        start_seq=1,
        options=options,
        seats=[11, 22],
        counted_seats={1},
        free_table_earnings=10,
        earnings_per_day=200,
    )
    assert moves == [
        ledger.Movement(
            "table:7:seq:1:earn:1",
            ledger.HOUSE,
            ledger.user_account(22),
            10,
            "earnings",
            7,
            1,
            daily_cap=200,
        )
    ]
