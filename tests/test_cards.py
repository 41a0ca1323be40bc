"""Cards: identity across two decks and a text form that round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sahrat.rules.cards import Card, Rank, Suit, conquian_deck, konkan_deck, parse_card
from sahrat.rules.errors import BadCard, RuleError

ALL = konkan_deck()


@given(st.sampled_from(ALL))
def test_text_form_round_trips(card: Card) -> None:
    assert Card.parse(str(card)) == card
    assert parse_card(str(card)).copy == card.copy


def test_konkan_deck_is_two_decks_and_two_jokers() -> None:
    assert len(ALL) == 106
    assert len(set(ALL)) == 106
    assert sum(card.is_joker for card in ALL) == 2
    assert Card(Rank.SEVEN, Suit.HEARTS, 0) != Card(Rank.SEVEN, Suit.HEARTS, 1)
    assert Card(Rank.SEVEN, Suit.HEARTS, 1).face == "7H"


def test_conquian_deck_has_no_8_9_10() -> None:
    deck = conquian_deck()
    assert len(deck) == 40
    assert not {card.rank for card in deck} & {Rank.EIGHT, Rank.NINE, Rank.TEN}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("7H", "7H"), ("10s", "TS"), ("ad", "AD"), ("JK'", "JK'"), (" QC' ", "QC'")],
)
def test_parse_accepts_common_spellings(text: str, expected: str) -> None:
    assert str(parse_card(text)) == expected


@pytest.mark.parametrize("text", ["", "1H", "7X", "7H''", "JOKER", "H7", "77H"])
def test_parse_rejects_with_a_specific_error(text: str) -> None:
    with pytest.raises(BadCard) as raised:
        parse_card(text)
    assert isinstance(raised.value, RuleError)
    assert raised.value.code == "bad_card"
    assert repr(text) in str(raised.value)


def test_cards_are_immutable() -> None:
    card = parse_card("7H")
    with pytest.raises(AttributeError):
        card.copy = 1  # type: ignore[misc]
