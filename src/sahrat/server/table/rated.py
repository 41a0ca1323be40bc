"""What a rated table adds to a match (docs/rating.md): the ratings its seats show, and
what its end hands to the log writer so that the ratings move in the transaction of
the match's own rows.

The places are the engine's, read from the score sheet the match row carries
(``settlement.seat_place``, as ``match_players`` reads them), never decided again; a
seat whose player left (``Seating.left`` at the end, or a leave stored during the
match) is last; a bot's own seat plays at the bots' fixed rating.

Whether the match was really played, and how many turns of its own each person made,
are the counted-match rule's (``settlement.CountingRule``: the same minimums as for
coins): the store rates each person only against the opponents that count for them
(``sahrat.ratings.rate_each``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sahrat import ratings
from sahrat.server.table.seating import Seating
from sahrat.server.table.settlement import CountingRule, rounds_played, seat_place
from sahrat.settings import Settings
from sahrat.store.ratings import RatedMatch, RatedSeat

BOT_SHOWN = (ratings.shown(ratings.BOT), False)  # what a bot's seat shows


def cooldown_rule(settings: Settings) -> ratings.CooldownRule:
    return ratings.CooldownRule(
        base_minutes=settings.rated_cooldown_minutes,
        growth=settings.rated_cooldown_growth,
        max_minutes=settings.rated_cooldown_max_minutes,
        decay_hours=settings.rated_cooldown_decay_hours,
        forgive_matches=settings.rated_cooldown_forgive_matches,
    )


def seat_rating(
    seating: Seating, seat: int, shown: Mapping[int, tuple[int, bool]]
) -> tuple[int, bool] | None:
    """What a seat of a rated table shows: its person's rating, a bot's fixed one for a
    bot's own seat, none for an empty seat, nor for a person whose rating this process
    has not read (a table listed from its rows in a cluster: the serving process reads
    each person's as they sit down, and every seat's when it loads the table)."""
    owner = seating.seats[seat]
    if owner is None:
        return BOT_SHOWN if seating.bots[seat] is not None else None
    return shown.get(owner)


def rated_match(
    *,
    game: str,
    options: dict[str, Any],
    row: Mapping[str, Any],
    players: Sequence[Mapping[str, Any]],
    seating: Seating,
    table_id: int,
    start_seq: int,
    settings: Settings,
    now: datetime | None = None,
) -> RatedMatch:
    """The ratings part of a rated match's last append (``row``: the match's row,
    ``players``: its ``match_players`` rows, with each person's own turns)."""
    sheet, winner = row["score_sheet"], row["winner_seat"]
    rule = CountingRule.of(settings)
    own_turns = {int(play["seat"]): int(play["own_turns"]) for play in players}
    seats = [
        RatedSeat(
            seat=seat,
            user_id=owner,
            place=seat_place(game, sheet, winner, seat),
            left=owner is not None and seat in seating.left,
            own_turns=own_turns.get(seat, 0),
        )
        for seat, owner in enumerate(seating.seats)
    ]
    return RatedMatch(
        pool=ratings.pool_of(game, options),
        table_id=table_id,
        start_seq=start_seq,
        at=now or datetime.now(UTC),
        seats=seats,
        played=rounds_played(game, sheet) >= rule.min_played(game),
        min_turns=rule.min_turns,
        repeat_limit=settings.rated_repeat_limit,
        repeat_hours=settings.rated_repeat_hours,
        provisional_sigma=settings.rating_provisional_sigma,
        cooldown=cooldown_rule(settings),
    )
