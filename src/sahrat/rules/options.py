"""Table options per game (RULES.md §1.11 and §2.6), validated, with defaults.

A table created with no options plays the default rules. ``from_dict``
accepts the JSON form used by game records and the REST API; an unknown
option or a value out of range raises :class:`BadOption` naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from enum import Enum
from functools import lru_cache
from typing import Any, Literal, TypeVar, get_args

from .errors import BadOption
from .melds import AceValue


class HandValues(Enum):
    """What a card left in hand costs at the end of a round (RULES.md §1.11)."""

    JOKER_15_ACE_11 = "joker_15_ace_11"
    JOKER_10_ACE_10 = "joker_10_ace_10"


KONKAN_GAMES = {"konkan": 51, "konkan71": 71}

T = TypeVar("T")

# The strengths of the bots that fill free seats and take over leavers' seats
# (sahrat.bots.levels); a server option, not a rule: it never changes how a deal plays.
BotLevel = Literal["simple", "strong", "expert"]
BOT_LEVELS: tuple[str, ...] = get_args(BotLevel)


def _int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadOption(name, f"must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise BadOption(name, f"must be between {low} and {high}, not {value}")
    return value


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise BadOption(name, f"must be true or false, not {value!r}")
    return value


def _enum(name: str, value: Any, kind: type[Enum]) -> Any:
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in kind)
        raise BadOption(name, f"must be one of {allowed}, not {value!r}") from None


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        names = ", ".join(repr(choice) for choice in allowed)
        raise BadOption(name, f"must be one of {names}, not {value!r}")
    return value


def _to_json(options: object) -> dict[str, Any]:
    return dict(_json_of(options))


@lru_cache(maxsize=256)
def _json_of(options: object) -> tuple[tuple[str, Any], ...]:
    """Options are frozen, so their JSON form is computed once per distinct set."""
    out: dict[str, Any] = {}
    for key, value in asdict(options).items():  # type: ignore[call-overload]
        out[key] = value.value if isinstance(value, Enum) else value
    return tuple(out.items())


@dataclass(frozen=True, slots=True)
class KonkanOptions:
    """Konkan table options; every default is the house rule of RULES.md §1.11."""

    threshold: int = 51
    players: int = 4
    rounds: int = 5
    turn_seconds: int = 30
    # The pause between two rounds, for reading the round's summary: no turn timer runs
    # and the next round's play waits until every player continues (0: no pause).
    break_seconds: int = 15
    stake: int = 0
    hand_exempt_from_threshold: bool = False
    escalating_opening: bool = False
    ace_value: AceValue = AceValue.ALWAYS_11
    hand_values: HandValues = HandValues.JOKER_15_ACE_11
    hand_rummy: bool = False
    swapped_joker_must_be_laid: bool = False
    redeal: bool = False
    max_reshuffles: int = 3
    # Bounds on a match's length (RULES.md §1.3, §1.9): every match ends, whoever plays.
    max_extra_rounds: int = 3
    max_round_turns: int = 1000
    # How well the bots play at this free table (never at a coin table): those filling
    # free seats at the start and those taking over a leaver's seat.
    bot_level: BotLevel = "expert"

    def __post_init__(self) -> None:
        _int("threshold", self.threshold, 0, 500)
        _int("players", self.players, 2, 4)
        _int("rounds", self.rounds, 1, 20)
        _int("turn_seconds", self.turn_seconds, 10, 300)
        _int("break_seconds", self.break_seconds, 0, 120)
        _int("stake", self.stake, 0, 10**9)
        _int("max_reshuffles", self.max_reshuffles, 0, 10)
        _int("max_extra_rounds", self.max_extra_rounds, 0, 5)
        _int("max_round_turns", self.max_round_turns, 100, 1000)
        for name in (
            "hand_exempt_from_threshold",
            "escalating_opening",
            "hand_rummy",
            "swapped_joker_must_be_laid",
            "redeal",
        ):
            _bool(name, getattr(self, name))
        _enum("ace_value", self.ace_value, AceValue)
        _enum("hand_values", self.hand_values, HandValues)
        _choice("bot_level", self.bot_level, BOT_LEVELS)

    @property
    def coin_table(self) -> bool:
        return self.stake > 0

    @classmethod
    def for_game(cls, game: str, values: Mapping[str, Any] | None = None) -> KonkanOptions:
        """Options of a ``konkan`` (51) or ``konkan71`` (71) table, overridden by ``values``."""
        if game not in KONKAN_GAMES:
            raise BadOption("game", f"must be one of {sorted(KONKAN_GAMES)}, not {game!r}")
        merged: dict[str, Any] = {"threshold": KONKAN_GAMES[game]}
        merged.update(values or {})
        return cls.from_dict(merged)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> KonkanOptions:
        return _from_dict(cls, values, {"ace_value": AceValue, "hand_values": HandValues})

    def to_json(self) -> dict[str, Any]:
        return _to_json(self)


@dataclass(frozen=True, slots=True)
class ConquianOptions:
    """Conquian table options (RULES.md §2.6)."""

    wins_needed: int = 3
    double_after_draw: bool = False
    stake: int = 0
    turn_seconds: int = 30
    break_seconds: int = 15  # the pause between two deals (as Konkan's between rounds)
    # The match also ends at its this-many-th drawn deal (RULES.md §2.6): drawn deals
    # (two timers refusing everything) could otherwise follow each other forever.
    max_drawn_deals: int = 5
    bot_level: BotLevel = "expert"  # the bots' strength at a free table (as Konkan's)

    def __post_init__(self) -> None:
        _int("wins_needed", self.wins_needed, 1, 50)
        _bool("double_after_draw", self.double_after_draw)
        _int("stake", self.stake, 0, 10**9)
        _int("turn_seconds", self.turn_seconds, 10, 300)
        _int("break_seconds", self.break_seconds, 0, 120)
        _int("max_drawn_deals", self.max_drawn_deals, 1, 20)
        _choice("bot_level", self.bot_level, BOT_LEVELS)

    @property
    def players(self) -> int:
        return 2

    @property
    def coin_table(self) -> bool:
        return self.stake > 0

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ConquianOptions:
        return _from_dict(cls, values, {})

    def to_json(self) -> dict[str, Any]:
        return _to_json(self)


def _from_dict(cls: type[T], values: Mapping[str, Any], enums: Mapping[str, type[Enum]]) -> T:
    known = {field.name for field in fields(cls)}  # type: ignore[arg-type]
    for key in values:
        if key not in known:
            raise BadOption(str(key), f"unknown option; known options are {sorted(known)}")
    converted = {
        key: _enum(key, value, enums[key]) if key in enums else value
        for key, value in values.items()
    }
    return cls(**converted)
