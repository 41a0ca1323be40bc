"""What a finished match leaves behind, and who really played it.

``PlayTally`` counts, step by step, each seat's own turns and the turns the timer
played for it: a seat the timer played too many turns in a row is forfeited
(docs/economy.md). It is rebuilt from the log on restore, so a restart or a takeover
counts the same. ``match_row``, ``match_players`` and ``settlement`` are what the last
step of a match writes in the same transaction: the record and score sheet, who sat
in the match and whether it counted for them, and the coins.

**A counted match** (:func:`counted`, docs/economy.md "What counts") is the one rule
behind free-table earnings, coin-table qualification and the leaderboard. A seat's
match counts when all of these hold:

1. the match is *decided*: it has a single winner (a tie, a shared first place, a
   Conquian match ended by ``max_drawn_deals`` with equal points are not decided);
2. it was *really played*: Konkan at least ``SAHRAT_COUNTED_MIN_ROUNDS`` rounds that
   ended with a player going out (void rounds — the stock exhausted, ``max_round_turns``
   reached — do not count), Conquian at least ``SAHRAT_COUNTED_MIN_DEALS`` deals won by
   someone (drawn deals do not). So a table with ``rounds`` 1, ``wins_needed`` 1 or
   ``max_drawn_deals`` 1 plays as any other but never earns or counts (with the
   default minimums);
3. the seat's player made at least ``SAHRAT_COUNTED_MIN_TURNS`` turns with a move of
   their own in this match;
4. the player finished in their own seat: a seat handed to a bot or to the timer —
   left, suspended, forfeited, or played by a bot while its player is away at the
   end — is the bot's, and its win is nobody's;
5. at least one opponent is not on the player's network: another seat of the match is
   a bot's own, or a person whose network key (``addresses.network_key``, the rule a
   coin table's ``same_address`` uses) differs or is unknown.

What the engine decides (who won, how each round or deal ended) is read from its
state and score sheet, never decided again here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sahrat.rules.engine import Engine
from sahrat.rules.record import GameRecord
from sahrat.server.addresses import network_key
from sahrat.settings import Settings
from sahrat.store import ledger

log = logging.getLogger("sahrat.table")


class PlayTally:
    """This match's own turns per seat, and the current run of timer turns per seat.

    A turn is a run of steps for one seat (the steps of a Konkan turn: draw, lay down,
    discard; of a Conquian one: refuse, then pass the card one turned up); a round's
    end ends the turn. A turn is the player's own if they made at least one of its
    moves themselves (``by`` "player": a command with the player's client id)."""

    def __init__(self) -> None:
        self.own_turns: dict[int, int] = {}
        self.timer_turns: dict[int, int] = {}
        self._last: tuple[str, int] | None = None
        self._turn: int | None = None  # the seat whose turn runs now
        self._turn_owned = False  # ...and whether its player has moved in it

    def count(self, by: str, seat: int, *, ends_round: bool = False) -> None:
        """A step made by ``by`` (player, bot, timer) for ``seat``. A run of timer steps
        of one seat is one timer turn; a move of the player's own ends the run."""
        previous, self._last = self._last, (by, seat)
        if seat != self._turn:
            self._turn, self._turn_owned = seat, False
        if by == "player":
            if not self._turn_owned:
                self.own_turns[seat] = self.own_turns.get(seat, 0) + 1
                self._turn_owned = True
            self.timer_turns[seat] = 0
        elif by == "timer" and previous != ("timer", seat):
            self.timer_turns[seat] = self.timer_turns.get(seat, 0) + 1
        if ends_round:
            self._turn = None  # the next round's first step starts a turn, whoever acts

    def copy(self) -> PlayTally:
        other = PlayTally()
        other.own_turns = dict(self.own_turns)
        other.timer_turns = dict(self.timer_turns)
        other._last, other._turn, other._turn_owned = self._last, self._turn, self._turn_owned
        return other

    def back(self, seat: int) -> None:
        """The seat's player is back at it: its idle turns start again."""
        self.timer_turns.pop(seat, None)

    def idle(self, limit: int) -> list[int]:
        """Seats the timer played for ``limit`` turns in a row (none if ``limit`` is 0)."""
        if limit <= 0:
            return []
        return [seat for seat, turns in self.timer_turns.items() if turns >= limit]


# --- what counts ----------------------------------------------------------------------


@dataclass(frozen=True)
class CountingRule:
    """The minimums of a counted match (the module's docstring has the whole rule)."""

    min_rounds: int = 3  # Konkan rounds ended by a player going out
    min_deals: int = 3  # Conquian deals won by someone
    min_turns: int = 10  # turns with a move of the player's own

    @classmethod
    def of(cls, settings: Settings) -> CountingRule:
        return cls(
            settings.counted_min_rounds, settings.counted_min_deals, settings.counted_min_turns
        )

    def min_played(self, game: str) -> int:
        return self.min_deals if game == "conquian" else self.min_rounds


def rounds_played(game: str, sheet: Mapping[str, Any]) -> int:
    """Rounds (Konkan) or deals (Conquian) that someone won, from the engine's score
    sheet: a void Konkan round and a drawn Conquian deal have no winner."""
    results = sheet.get("deals" if game == "conquian" else "rounds") or []
    return sum(
        1 for result in results if isinstance(result, Mapping) and result.get("winner") is not None
    )


def counted(
    rule: CountingRule,
    *,
    decided: bool,
    played: int,
    min_played: int,
    own_turns: int,
    in_seat_at_end: bool,
    opponent_elsewhere: bool,
) -> bool:
    """Whether a seat's finished match counts: every condition of the rule holds."""
    return (
        decided
        and played >= min_played
        and own_turns >= rule.min_turns
        and in_seat_at_end
        and opponent_elsewhere
    )


def seat_place(game: str, sheet: Mapping[str, Any], winner: int | None, seat: int) -> int | None:
    """A seat's place in a match: the score sheet's own (Konkan), else by its totals
    (Conquian: more deals won is better), else first for the winner only."""
    places = sheet.get("places")
    if isinstance(places, list) and seat < len(places) and isinstance(places[seat], int):
        return int(places[seat])
    totals = sheet.get("totals")
    if isinstance(totals, list) and all(isinstance(x, int) for x in totals) and seat < len(totals):
        mine = totals[seat]
        if game == "conquian":
            return 1 + sum(1 for x in totals if x > mine)
        return 1 + sum(1 for x in totals if x < mine)
    return 1 if winner is not None and winner == seat else None


@dataclass(frozen=True)
class SeatPlay:
    """One ``match_players`` row: a person seated in a finished match."""

    seat: int
    user_id: int
    own_turns: int
    in_seat_at_end: bool
    place: int | None
    won: bool
    counted: bool
    network: str | None

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def match_players(
    game: str,
    state: Any,
    sheet: Mapping[str, Any],
    *,
    seats: list[int | None],
    in_seat: set[int],
    own_turns: Mapping[int, int],
    addresses: Mapping[int, str],
    rule: CountingRule,
) -> list[SeatPlay]:
    """Every person's seat of a finished match (``seats``: owners by seat, None for a
    bot's own), and whether the match counts for them. ``in_seat``: the seats their own
    player played at the end; ``addresses``: where each seat's player sat down from."""
    winner = getattr(state, "match_winner", None)
    played = rounds_played(game, sheet)
    networks = {
        seat: network_key(addresses.get(seat))
        for seat, owner in enumerate(seats)
        if owner is not None
    }
    out = []
    for seat, owner in enumerate(seats):
        if owner is None:
            continue
        mine = networks[seat]
        elsewhere = any(
            other is None or mine is None or networks[index] is None or networks[index] != mine
            for index, other in enumerate(seats)
            if index != seat
        )
        turns = own_turns.get(seat, 0)
        out.append(
            SeatPlay(
                seat=seat,
                user_id=owner,
                own_turns=turns,
                in_seat_at_end=seat in in_seat,
                place=seat_place(game, sheet, winner, seat),
                won=winner is not None and winner == seat,
                counted=counted(
                    rule,
                    decided=winner is not None,
                    played=played,
                    min_played=rule.min_played(game),
                    own_turns=turns,
                    in_seat_at_end=seat in in_seat,
                    opponent_elsewhere=elsewhere,
                ),
                network=mine,
            )
        )
    return out


# --- the rows and the coins -------------------------------------------------------------


def match_row(
    engine: Engine,
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
    counted_seats: set[int],
    free_table_earnings: int,
    earnings_per_day: int,
) -> list[ledger.Movement]:
    """The coins a finished match moves: a coin table's pot paid out (RULES.md §1.10),
    or at a free table ``free_table_earnings`` for each seat the match counted for
    (``counted_seats``), within the account's daily cap: the ledger pays at most what
    keeps the account's earnings of the last 24 hours within ``earnings_per_day``
    (docs/economy.md)."""
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
                daily_cap=earnings_per_day,
            )
            for seat, owner in enumerate(seats)
            if owner is not None and seat in counted_seats
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
