"""A tournament's fixed shape and its check (docs/tournaments.md, "Formats")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Format = Literal["knockout", "swiss"]
GameName = Literal["konkan", "conquian"]
FORMATS: tuple[Format, ...] = ("knockout", "swiss")
GAMES: tuple[GameName, ...] = ("konkan", "conquian")


class PlanError(ValueError):
    """A plan field out of range; ``code`` names the field (``tournament_seats`` ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Plan:
    """The fixed shape of one tournament.

    ``seats``: knock-out, 4, 8, 16 or 32 (Konkan) or a power of two from 2 to 32
    (Conquian); Swiss, the most entrants. ``rounds``: Swiss, set by the maker;
    knock-out, :func:`knockout_rounds`. ``advance``: knock-out Konkan, 1 or 2 go through
    from each table (Conquian pairs: always 1; Swiss: unused)."""

    game: GameName
    format: Format
    seats: int
    rounds: int
    advance: int = 2


# Why these bounds: a knock-out of Konkan tables of 4 halves (advance 2) or quarters
# (advance 1) the field each round, so 4 to 32 seats is one to four rounds, as the
# competitions players know; a Swiss field is bounded by what one round can seat in
# reasonable time (bench/bench_tournament_pairing.py) and a day's play.
KNOCKOUT_SEATS: dict[GameName, tuple[int, ...]] = {
    "konkan": (4, 8, 16, 32),
    "conquian": (2, 4, 8, 16, 32),
}
SWISS_LEAST: dict[GameName, int] = {"konkan": 3, "conquian": 2}
SWISS_MOST = 1024
SWISS_ROUNDS_MOST = 12
TABLE_MOST: dict[GameName, int] = {"konkan": 4, "conquian": 2}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_plan(plan: Plan) -> None:
    """Raise :class:`PlanError` with the code of the first bad field, in the order game,
    format, seats, advance, rounds (a round count can only be judged once the others
    hold)."""
    _check_shape(plan)
    _check_rounds(plan)


def _check_shape(plan: Plan) -> None:
    if plan.game not in GAMES:
        raise PlanError("tournament_game", f"game must be one of {', '.join(GAMES)}")
    if plan.format not in FORMATS:
        raise PlanError("tournament_format", f"format must be one of {', '.join(FORMATS)}")
    game = plan.game
    if not _is_int(plan.seats):
        raise PlanError("tournament_seats", "seats must be a whole number")
    if plan.format == "knockout":
        allowed = KNOCKOUT_SEATS[game]
        if plan.seats not in allowed:
            choices = ", ".join(map(str, allowed))
            raise PlanError("tournament_seats", f"a {game} knock-out has {choices} seats")
    elif not SWISS_LEAST[game] <= plan.seats <= SWISS_MOST:
        raise PlanError(
            "tournament_seats",
            f"a {game} Swiss has {SWISS_LEAST[game]} to {SWISS_MOST} seats",
        )
    if not _is_int(plan.advance) or plan.advance not in (1, 2):
        raise PlanError("tournament_advance", "advance must be 1 or 2")
    if plan.format == "knockout" and game == "conquian" and plan.advance != 1:
        raise PlanError("tournament_advance", "one player goes through from a Conquian pair")


def _check_rounds(plan: Plan) -> None:
    if not _is_int(plan.rounds):
        raise PlanError("tournament_rounds", "rounds must be a whole number")
    if plan.format == "knockout":
        wanted = knockout_rounds(plan)
        if plan.rounds != wanted:
            raise PlanError(
                "tournament_rounds", f"this knock-out plays {wanted} rounds, not {plan.rounds}"
            )
    elif not 1 <= plan.rounds <= SWISS_ROUNDS_MOST:
        raise PlanError("tournament_rounds", f"a Swiss plays 1 to {SWISS_ROUNDS_MOST} rounds")


def make_plan(
    game: str, format: str, seats: int, rounds: int | None = None, advance: int | None = None
) -> Plan:
    """A checked plan with the defaults filled in: a knock-out's rounds from its seats,
    advance 1 for Conquian and 2 for Konkan. Raises :class:`PlanError`."""
    if game not in GAMES:
        raise PlanError("tournament_game", f"game must be one of {', '.join(GAMES)}")
    if format not in FORMATS:
        raise PlanError("tournament_format", f"format must be one of {', '.join(FORMATS)}")
    if advance is None:
        advance = 1 if game == "conquian" else 2
    plan = Plan(game, format, seats, 0 if rounds is None else rounds, advance)
    _check_shape(plan)
    if rounds is None:
        if plan.format == "swiss":
            raise PlanError("tournament_rounds", "a Swiss needs its number of rounds")
        plan = Plan(plan.game, plan.format, seats, knockout_rounds(plan), advance)
    _check_rounds(plan)
    return plan


def table_sizes(game: GameName, players: int) -> list[int]:
    """The table sizes of a round of ``players``, largest first.

    Konkan: tables of 4, and of 3 as few as the count allows (``players`` mod 4 of 1, 2,
    3 needs three, two, one table of 3); 5 players are a 3 and a 2, 2 players a 2 and one
    player a bye (a table of 1). Conquian: pairs, and an odd player out a bye."""
    if players < 0:
        raise ValueError("a negative number of players")
    if game == "conquian":
        return [2] * (players // 2) + [1] * (players % 2)
    if players <= 4:
        return [players] if players else []
    if players == 5:
        return [3, 2]
    threes = -players % 4  # 0, 3, 2, 1 tables of 3 for players mod 4 of 0, 1, 2, 3
    return [4] * ((players - 3 * threes) // 4) + [3] * threes


def going_through(plan: Plan, size: int) -> int:
    """How many of a knock-out table of ``size`` go through: ``advance``, but never the
    whole table (a Konkan table of 2 sends one); a bye goes through."""
    if size <= 1:
        return size
    return min(plan.advance, size - 1)


def rounds_for(plan: Plan, players: int) -> int:
    """The rounds a tournament of ``plan`` started with ``players`` entrants plays, when
    nobody leaves early: a Swiss its ``rounds``; a knock-out until the players left fit
    one table (that table is the final), none for a single player."""
    if plan.format == "swiss":
        return plan.rounds
    rounds = 0
    while players > 1:
        rounds += 1
        if players <= TABLE_MOST[plan.game]:
            break
        players = sum(going_through(plan, size) for size in table_sizes(plan.game, players))
    return rounds


def knockout_rounds(plan: Plan) -> int:
    """The rounds of a full knock-out of ``plan.seats`` players (16 Konkan seats, advance
    2: 16, 8, 4 players, three rounds)."""
    return rounds_for(Plan(plan.game, "knockout", plan.seats, 0, plan.advance), plan.seats)
