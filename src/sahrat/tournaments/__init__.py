"""Tournaments' rules (docs/tournaments.md): the shape of a tournament, who sits with
whom each round, placement points, standings with their tie-breaks, and prizes.

Pure: no I/O, no clock, no global random state. Every random choice draws from a
``random.Random`` made inside the function from the seed it is given, so the store, the
runner and a test that replays a tournament all compute the same tables and standings.

* :mod:`.plan`: a tournament's fixed shape (:class:`Plan`), its check, the number of
  knock-out rounds and the table sizes of a round.
* :mod:`.results`: entrants, one table's result and its placement points.
* :mod:`.seating`: the tables of a round (:func:`seat_round`).
* :mod:`.standing`: who goes through a knock-out table, and the standings.
* :mod:`.payout`: the pool, the house's share and the prize of each place.
"""

from __future__ import annotations

from .payout import paid_places, pool_and_house, prize_split, prizes
from .plan import (
    FORMATS,
    GAMES,
    Format,
    GameName,
    Plan,
    PlanError,
    check_plan,
    knockout_rounds,
    make_plan,
    rounds_for,
    table_sizes,
)
from .results import BYE_POINTS, Entrant, TableResult, bye_result, placement_points
from .seating import seat_round
from .standing import Standing, advancers, finished, standings, still_in

__all__ = [
    "BYE_POINTS",
    "FORMATS",
    "GAMES",
    "Entrant",
    "Format",
    "GameName",
    "Plan",
    "PlanError",
    "Standing",
    "TableResult",
    "advancers",
    "bye_result",
    "check_plan",
    "finished",
    "knockout_rounds",
    "make_plan",
    "paid_places",
    "placement_points",
    "pool_and_house",
    "prize_split",
    "prizes",
    "rounds_for",
    "seat_round",
    "standings",
    "still_in",
    "table_sizes",
]
