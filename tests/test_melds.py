"""Konkan melds (RULES.md §1.4): runs, sets, one joker, what it stands for, values, swaps."""

from __future__ import annotations

import pytest

from sahrat.rules.cards import parse_cards
from sahrat.rules.errors import InvalidLayOff, InvalidMeld, InvalidSwap
from sahrat.rules.melds import AceValue, MeldKind, build_meld, lay_off, swap_joker


def meld(text: str):  # type: ignore[no-untyped-def]
    return build_meld(parse_cards(text))


@pytest.mark.parametrize(
    "text",
    [
        "AH 2H 3H",  # ace low
        "QH KH AH",  # ace high
        "5S 6S 7S 8S 9S TS JS QS KS",
        "AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",  # 13 cards, ace low
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",  # 13 cards, ace high
        "3C 5C JK",  # the joker fills the gap
        "7S 7H 7D",
        "7S 7H 7D 7C'",  # copies from either deck
        "7S 7H JK",
        "7S 7H 7D JK",
    ],
)
def test_valid_melds(text: str) -> None:
    assert len(meld(text).cards) == len(text.split())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("KH AH 2H", "wrap"),
        ("AH 2H", "at least 3"),
        ("5H 6H 8H", "consecutive"),
        ("5H 6H 7S", "one suit"),
        ("7S 7S' 7H", "different suits"),
        ("7S 7H 7D 7C JK", "at most 4"),
        ("5H JK JK'", "at most one joker"),
        ("5H 6H JK JK'", "at most one joker"),
        ("5H 5H' 6H", "same rank"),
        ("JK 5H 9H", "consecutive"),
    ],
)
def test_invalid_melds_say_why(text: str, why: str) -> None:
    with pytest.raises(InvalidMeld) as raised:
        meld(text)
    assert why in str(raised.value)
    assert raised.value.code == "invalid_meld"


def test_run_of_14_is_refused() -> None:
    with pytest.raises(InvalidMeld):
        meld("AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD JK")


def test_a_joker_stands_for_one_card() -> None:
    assert meld("3C 5C JK").joker_for == ("4C",)
    assert meld("5C 6C JK").joker_for == ("7C",)  # by default it extends upward
    assert meld("JK 5C 6C").joker_for == ("4C",)  # listed first: it stands below
    assert meld("QC KC JK").joker_for == ("AC",)  # up to the high ace
    assert meld("JK AC 2C").joker_for == ("3C",)  # nothing below a low ace
    assert meld("7S 7H JK").joker_for == ("7D", "7C")  # a 3-card set: both missing suits
    assert meld("7S 7H 7C JK").joker_for == ("7D",)


def test_run_keeps_table_order() -> None:
    assert [str(c) for c in meld("9H 7H 8H").cards] == ["7H", "8H", "9H"]
    assert meld("9H 7H 8H").kind is MeldKind.RUN


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7H 8H 9H", 24),
        ("JH QH KH", 30),
        ("AH 2H 3H", 16),  # ace 11
        ("QH KH AH", 31),
        ("AS AH AD", 33),
        ("3C 5C JK", 12),  # the joker is worth the 4 it stands for
        ("7S 7H JK", 21),
        ("TS JS JK", 30),  # 10 + 10 + the joker as QS (10)
    ],
)
def test_meld_values(text: str, value: int) -> None:
    assert meld(text).value() == value


def test_ace_value_option() -> None:
    # RULES §1.11: 1 in a low run, 10 elsewhere.
    assert meld("AH 2H 3H").value(AceValue.LOW_1_ELSE_10) == 6
    assert meld("QH KH AH").value(AceValue.LOW_1_ELSE_10) == 30
    assert meld("AS AH AD").value(AceValue.LOW_1_ELSE_10) == 30


def test_lay_off_extends_a_run_and_fills_a_set() -> None:
    assert [str(c) for c in lay_off(meld("5H 6H 7H"), parse_cards("4H 8H")).cards] == [
        "4H",
        "5H",
        "6H",
        "7H",
        "8H",
    ]
    assert len(lay_off(meld("7S 7H 7D"), parse_cards("7C")).cards) == 4
    with pytest.raises(InvalidLayOff):
        lay_off(meld("7S 7H 7D 7C"), parse_cards("7S'"))
    with pytest.raises(InvalidLayOff):
        lay_off(meld("7S 7H JK"), parse_cards("JK'"))
    with pytest.raises(InvalidLayOff):
        lay_off(meld("5H 6H 7H"), parse_cards("9H"))


def test_a_joker_keeps_its_card_when_the_run_grows() -> None:
    grown = lay_off(meld("5H 6H JK"), parse_cards("8H"))
    assert grown.joker_for == ("7H",)
    with pytest.raises(InvalidLayOff):
        lay_off(meld("5H 6H JK"), parse_cards("7H"))  # that is a swap, not a lay-off


def test_swap_in_a_run_takes_one_card() -> None:
    swapped, joker = swap_joker(meld("5H JK 7H"), parse_cards("6H'"))
    assert joker.is_joker
    assert [str(c) for c in swapped.cards] == ["5H", "6H'", "7H"]
    with pytest.raises(InvalidSwap):
        swap_joker(meld("5H JK 7H"), parse_cards("6S"))


def test_swap_in_a_set_completes_four_real_cards() -> None:
    swapped, _ = swap_joker(meld("9S 9H JK"), parse_cards("9D 9C"))
    assert sorted(c.face for c in swapped.cards) == ["9C", "9D", "9H", "9S"]
    with pytest.raises(InvalidSwap):
        swap_joker(meld("9S 9H JK"), parse_cards("9D"))  # both missing suits are needed
    swapped, _ = swap_joker(meld("9S 9H 9D JK"), parse_cards("9C"))
    assert len(swapped.cards) == 4
    with pytest.raises(InvalidSwap):
        swap_joker(meld("9S 9H 9D"), parse_cards("9C"))  # no joker to take


@pytest.mark.parametrize(
    "text",
    [
        "3H 4H 5H 6H 7H 8H 9H TH JH QH JK AH",  # the joker is KH: an ace-high run
        "JK 2S 3S",
        "AS 2S JK",
        "QC KC JK",
        "7S 7H JK",
        "7S 7H 7D 7C",
    ],
)
def test_a_meld_round_trips_through_its_json_form(text: str) -> None:
    from sahrat.rules.melds import Meld

    original = meld(text)
    assert Meld.from_json(original.to_json()) == original


def test_the_ace_high_run_with_a_joker_is_not_read_as_ace_low() -> None:
    from sahrat.rules.melds import Meld

    on_table = meld("3H 4H 5H 6H 7H 8H 9H TH JH QH JK AH")
    assert on_table.joker_for == ("KH",)
    again = Meld.from_json(on_table.to_json())
    with pytest.raises(InvalidLayOff):
        lay_off(again, parse_cards("KH"))  # the joker already stands for KH
    assert lay_off(again, parse_cards("2H")).cards[0] == parse_cards("2H")[0]
