"""What a finished match leaves behind, and who really played it.

``PlayTally`` counts, step by step, each seat's own moves and the turns the timer
played for it: a seat whose player never moved earns nothing at a free table, and one
the timer played too many turns in a row is forfeited (docs/economy.md). It is rebuilt
from the log on restore. ``match_row`` and ``settlement`` are what the last step of a
match writes in the same transaction: the record and score sheet, and the coins.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from sahrat.rules.record import GameRecord
from sahrat.store import ledger

log = logging.getLogger("sahrat.table")


class PlayTally:
    """This match's own moves per seat, and the current run of timer turns per seat."""

    def __init__(self) -> None:
        self.moved: set[int] = set()
        self.timer_turns: dict[int, int] = {}
        self._last: tuple[str, int] | None = None

    def count(self, by: str, seat: int) -> None:
        """A step made by ``by`` (player, bot, timer) for ``seat``. A run of timer steps
        of one seat is one turn; a move of the player's own ends the run."""
        previous, self._last = self._last, (by, seat)
        if by == "player":
            self.moved.add(seat)
            self.timer_turns[seat] = 0
        elif by == "timer" and previous != ("timer", seat):
            self.timer_turns[seat] = self.timer_turns.get(seat, 0) + 1

    def back(self, seat: int) -> None:
        """The seat's player is back at it: its idle turns start again."""
        self.timer_turns.pop(seat, None)

    def idle(self, limit: int) -> list[int]:
        """Seats the timer played for ``limit`` turns in a row (none if ``limit`` is 0)."""
        if limit <= 0:
            return []
        return [seat for seat, turns in self.timer_turns.items() if turns >= limit]


def match_row(
    engine: ModuleType,
    state: Any,
    *,
    game: str,
    options: Any,
    seats: list[int | None],
    names: dict[int, str],
    seed: str,
    first_dealer: int,
    actions: list[dict[str, Any]],
) -> dict[str, Any]:
    """The ``matches`` row of a finished match: its record replays it exactly."""
    record = GameRecord(
        game=game,
        options=options.to_json(),
        # every seat is named (a bot's own seat too): a record replays by its seats
        seats=[
            names.get(owner, f"seat {i}") if owner is not None else f"bot {i}"
            for i, owner in enumerate(seats)
        ],
        seed=seed,
        first_dealer=first_dealer,
        actions=actions,
    )
    return {
        "game": game,
        "winner_seat": getattr(state, "match_winner", None),
        "players": list(seats),
        "score_sheet": engine.score_sheet(state),
        "record": record.to_json(),
    }


def settlement(
    state: Any,
    *,
    table_id: int,
    start_seq: int,
    options: Any,
    seats: list[int | None],
    left: set[int],
    moved: set[int],
    free_table_earnings: int,
) -> list[ledger.Movement]:
    """The coins a finished match moves: a coin table's pot paid out (RULES.md §1.10),
    or at a free table the earnings of each player who finished it and made moves of
    their own (``moved``): a table of bots and timers started and never played earns
    nothing (docs/economy.md)."""
    if not options.coin_table:
        if free_table_earnings <= 0:
            return []
        return [
            ledger.Movement(
                f"table:{table_id}:seq:{start_seq}:earn:{seat}",
                ledger.HOUSE,
                ledger.user_account(owner),
                free_table_earnings,
                "earnings",
                table_id,
                start_seq,
            )
            for seat, owner in enumerate(seats)
            if owner is not None and seat not in left and seat in moved
        ]
    stake = options.stake
    pot = stake * sum(owner is not None for owner in seats)
    places = getattr(state, "places", None)
    try:
        shares = ledger.payout_shares(
            pot, int(options.players), list(places) if places else None, state.match_winner
        )
    except ledger.LedgerError:  # shares exist for every finished match: a bug
        log.exception("table %s: no payout for these places; stakes refunded", table_id)
        shares = {seat: stake for seat, owner in enumerate(seats) if owner is not None}
    return ledger.payout_movements(table_id, start_seq, seats, shares)
