"""Konkan table options (RULES.md §1.11): defaults, accepted values, refusals.

A bad value is refused with ``bad_option`` naming the option; through a game
record the replay refuses to start (it raises :class:`BadOption`), which a
scenario cannot express, so these are plain tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from sahrat.rules.errors import BadOption
from sahrat.rules.melds import AceValue
from sahrat.rules.options import HandValues, KonkanOptions
from sahrat.rules.record import GameRecord, replay, replay_summary


def test_defaults_are_the_house_rules() -> None:
    """§1.11, the 'default' column, and §1.1 (Konkan: threshold 51)."""
    options = KonkanOptions()
    assert options.threshold == 51
    assert options.players == 4
    assert options.rounds == 5
    assert options.turn_seconds == 30
    assert options.stake == 0
    assert not options.coin_table
    assert options.hand_exempt_from_threshold is False
    assert options.escalating_opening is False
    assert options.ace_value is AceValue.ALWAYS_11
    assert options.hand_values is HandValues.JOKER_15_ACE_11
    assert options.hand_rummy is False
    assert options.swapped_joker_must_be_laid is False
    assert options.redeal is False
    assert options.max_reshuffles == 3


def test_table_types() -> None:
    """§1.1: Konkan opens at 51, Konkan 71 at 71; §1.11: any threshold, e.g. 81."""
    assert KonkanOptions.for_game("konkan").threshold == 51
    assert KonkanOptions.for_game("konkan71").threshold == 71
    assert KonkanOptions.for_game("konkan", {"threshold": 81}).threshold == 81
    assert KonkanOptions.for_game("konkan71", {"threshold": 81}).threshold == 81


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("players", 2),
        ("players", 3),
        ("players", 4),
        ("rounds", 1),
        ("rounds", 7),
        ("turn_seconds", 10),
        ("turn_seconds", 30),
        ("turn_seconds", 300),
        ("stake", 0),
        ("stake", 1),
        ("stake", 500),
        ("threshold", 81),
        ("max_reshuffles", 0),
        ("max_reshuffles", 3),
        ("max_reshuffles", 10),
        ("hand_exempt_from_threshold", True),
        ("escalating_opening", True),
        ("hand_rummy", True),
        ("swapped_joker_must_be_laid", True),
        ("redeal", True),
        ("ace_value", "always_11"),
        ("ace_value", "low_1_else_10"),
        ("hand_values", "joker_15_ace_11"),
        ("hand_values", "joker_10_ace_10"),
    ],
)
def test_accepted_values(name: str, value: Any) -> None:
    options = KonkanOptions.from_dict({name: value})
    assert options.to_json()[name] == value


def test_stake_makes_a_coin_table() -> None:
    """§1.11: a positive stake is a coin table."""
    assert KonkanOptions.from_dict({"stake": 10}).coin_table


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("players", 1),  # §1.1: 2 to 4 players
        ("players", 5),
        ("rounds", 0),  # §1.11: any positive number
        ("rounds", -1),
        ("turn_seconds", 9),  # §1.11: 10-300 s
        ("turn_seconds", 301),
        ("turn_seconds", 0),
        ("turn_seconds", "30"),
        ("turn_seconds", 30.5),
        ("turn_seconds", True),
        ("stake", -1),  # 0 or a positive number of coins
        ("max_reshuffles", -1),  # §1.11: 0-10
        ("max_reshuffles", 11),
        ("threshold", -1),
        ("threshold", "51"),
        ("hand_exempt_from_threshold", "yes"),
        ("escalating_opening", 1),
        ("hand_rummy", None),
        ("swapped_joker_must_be_laid", "true"),
        ("redeal", 0),
        ("ace_value", "always_1"),
        ("hand_values", "joker_15_ace_10"),
        ("no_such_option", 1),
    ],
)
def test_refused_values_name_the_option(name: str, value: Any) -> None:
    with pytest.raises(BadOption) as caught:
        KonkanOptions.from_dict({name: value})
    assert caught.value.code == "bad_option"
    assert caught.value.option == name
    assert repr(name) in str(caught.value)


@pytest.mark.parametrize("seconds", [5, 301])
def test_a_record_with_a_bad_option_does_not_start(seconds: int) -> None:
    record = GameRecord(game="konkan", options={"players": 2, "turn_seconds": seconds})
    with pytest.raises(BadOption) as caught:
        replay(record)
    assert caught.value.option == "turn_seconds"
    summary = replay_summary(record)
    assert summary["ok"] is False
    assert summary["error"]["code"] == "bad_option"
    assert "turn_seconds" in summary["error"]["message"]


def test_konkan71_record_opens_at_71() -> None:
    record = GameRecord(game="konkan71", options={"players": 2})
    assert replay(record).state.options.threshold == 71
