"""The table option ``bot_level`` (both games): ``simple``, ``strong`` or ``expert``,
``expert`` by default, and anything else refused with a BadOption naming it."""

from __future__ import annotations

from typing import Any

import pytest

from sahrat.bots.levels import LEVELS
from sahrat.rules.errors import BadOption
from sahrat.rules.options import BOT_LEVELS, ConquianOptions, KonkanOptions


def _konkan(values: dict[str, Any]) -> KonkanOptions:
    return KonkanOptions.for_game("konkan", values)


MAKERS = [_konkan, ConquianOptions.from_dict]


def test_the_option_offers_exactly_the_bots_levels() -> None:
    assert tuple(LEVELS) == BOT_LEVELS


@pytest.mark.parametrize("make", MAKERS)
def test_the_default_is_expert_and_travels_in_the_json(make: Any) -> None:
    options = make({})
    assert options.bot_level == "expert"
    assert options.to_json()["bot_level"] == "expert"


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("level", ["simple", "strong", "expert"])
def test_every_level_is_accepted_and_round_trips(make: Any, level: str) -> None:
    options = make({"bot_level": level})
    assert options.bot_level == level
    assert make(options.to_json()) == options


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("value", ["Expert", "hard", "", None, 2, True, ["simple"]])
def test_anything_else_is_refused_naming_the_option(make: Any, value: Any) -> None:
    with pytest.raises(BadOption) as caught:
        make({"bot_level": value})
    assert caught.value.option == "bot_level"
    assert "'simple', 'strong', 'expert'" in caught.value.message
    assert repr(value) in caught.value.message


def test_a_coin_table_may_carry_it_harmlessly() -> None:
    options = _konkan({"stake": 10, "bot_level": "simple"})
    assert options.coin_table and options.bot_level == "simple"
