"""Conquian melds (RULES.md §2.1, §2.2): rank order A 2 3 4 5 6 7 J Q K, ace only low,
sets of 3–4, runs of 3–8; and the searches built on them, checked against brute force."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.rules.cards import Card, parse_card, parse_cards
from sahrat.rules.conquian import (
    ALL_MELDS,
    DECK,
    best_take,
    can_reach_eleven,
    cards_of,
    check_meld,
    fits_melds,
    is_meld,
    mask_of,
    meld_problem,
)
from sahrat.rules.errors import InvalidMeld


def cards(text: str) -> list[Card]:
    return parse_cards(text)


@pytest.mark.parametrize(
    "text",
    [
        "5S 5H 5D",  # a set of 3
        "5S 5H 5D 5C",  # a set of 4
        "AS 2S 3S",  # the ace is low
        "6H 7H JH",  # 7 and J are adjacent
        "7D JD QD KD",
        "AC 2C 3C 4C 5C 6C 7C JC",  # 8 cards, the longest run
        "JC 7C 6C",  # any order in, table order out
    ],
)
def test_valid_melds(text: str) -> None:
    assert is_meld(cards(text))
    assert meld_problem(cards(text)) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("5S 5H", "at least 3"),
        ("4S 5S", "at least 3"),
        ("", "at least 3"),
        ("QS KS AS", "consecutive"),  # Q K A is not a run: the ace is only low
        ("KH AH 2H", "consecutive"),  # no wrapping
        ("5S 6S JS", "consecutive"),  # 5 6 J has a gap (the 7)
        ("AS 2S 3S 4S 5S 6S 7S JS QS", "at most 8"),  # 9 cards
        ("5S 6H 7D", "one rank"),
        ("5S 5H 6H", "one rank"),
        ("7S 8S 9S", "not in the Conquian deck"),
        ("TS JS QS", "not in the Conquian deck"),
    ],
)
def test_invalid_melds(text: str, why: str) -> None:
    group = cards(text)
    assert not is_meld(group)
    problem = meld_problem(group)
    assert problem is not None and why in problem
    with pytest.raises(InvalidMeld, match=why):
        check_meld(group)


def test_check_meld_returns_table_order() -> None:
    assert check_meld(cards("JC 7C 6C")) == tuple(cards("6C 7C JC"))
    assert check_meld(cards("5C 5S 5D")) == tuple(cards("5S 5D 5C"))


def test_the_meld_table_by_brute_force() -> None:
    # Every 3..8-card group of the 40 cards that is a meld is in the table, and no other:
    # checked directly from the definition on all groups of one rank or one suit.
    order = "A234567JQK"

    def by_definition(group: tuple[Card, ...]) -> bool:
        ranks = [order.index(c.face[0]) for c in group]
        if len({c.rank for c in group}) == 1:
            return 3 <= len(group) <= 4
        if len({c.suit for c in group}) != 1 or not 3 <= len(group) <= 8:
            return False
        ranks.sort()
        return ranks == list(range(ranks[0], ranks[0] + len(group)))

    expected = set()
    for suit in "SHDC":
        same_suit = [parse_card(r + suit) for r in order]
        for size in range(3, 9):
            for group in combinations(same_suit, size):
                if by_definition(group):
                    expected.add(mask_of(group))
    for rank in order:
        same_rank = [parse_card(rank + s) for s in "SHDC"]
        for size in (3, 4):
            for group in combinations(same_rank, size):
                expected.add(mask_of(group))
    assert set(ALL_MELDS) == expected
    assert len(ALL_MELDS) == len(expected) == 10 * 5 + 4 * 33


def _brute_partition(group: list[Card]) -> bool:
    if not group:
        return True
    first = group[0]
    rest = group[1:]
    for size in (2, 3, 4, 5, 6, 7):
        for others in combinations(rest, size):
            if is_meld([first, *others]):
                remaining = [c for c in rest if c not in others]
                if _brute_partition(remaining):
                    return True
    return False


dense = st.integers(min_value=0, max_value=6).flatmap(
    lambda start: st.lists(
        st.sampled_from([c for c in DECK if start <= DECK.index(c) % 10 < start + 4]),
        min_size=10,
        max_size=11,
        unique=True,
    )
)


@settings(max_examples=150, deadline=None)
@given(dense, st.integers(min_value=0, max_value=10))
def test_can_reach_eleven_matches_brute_force(group: list[Card], split: int) -> None:
    # Dense hands (4 suits x 4 consecutive ranks) overlap in many melds: the hard case.
    if len(group) != 11:
        return
    card, rest = group[0], group[1:]
    opened, hand = rest[:split], rest[split:]
    expected = _brute_partition(group)
    assert can_reach_eleven([opened], hand, card) == expected


@settings(max_examples=60, deadline=None)
@given(dense)
def test_best_take_is_valid_and_maximal(group: list[Card]) -> None:
    card, hand = group[0], group[1:]
    arrangement = best_take([], hand, card)
    most = next(
        (
            size
            for size in range(len(hand), 1, -1)
            if any(_brute_partition([card, *chosen]) for chosen in combinations(hand, size))
        ),
        None,
    )
    if arrangement is None:
        assert most is None
        return
    laid = [c for meld in arrangement for c in meld]
    assert all(is_meld(meld) for meld in arrangement)
    assert card in laid and len(laid) == len(set(laid))
    assert set(laid) - {card} <= set(hand)
    assert len(laid) - 1 == most


def test_fits_melds_rearranging_without_hand_cards() -> None:
    assert fits_melds([cards("5S 5H 5D")], parse_card("5C"))
    assert fits_melds([cards("3S 4S 5S 6S"), cards("3H 4H 5H 6H")], parse_card("3D"))
    assert not fits_melds([cards("4S 5S 6S")], parse_card("6D"))  # 4S 5S would be left
    assert fits_melds([cards("4S 5S 6S 7S")], parse_card("JS"))
    assert not fits_melds([], parse_card("5C"))
    assert not fits_melds([cards("5S 5H 5D")], parse_card("6C"))


def test_can_reach_eleven_needs_exactly_eleven() -> None:
    opened = [cards("AS 2S 3S 4S 5S 6S 7S"), cards("AH AD AC")]
    assert can_reach_eleven(opened, [], parse_card("JS"))
    assert not can_reach_eleven(opened, [], parse_card("KS"))
    assert not can_reach_eleven(opened[:1], cards("AH AD"), parse_card("JS"))  # only 10


def test_cards_of_and_mask_of_round_trip() -> None:
    assert cards_of(mask_of(DECK)) == DECK
    assert cards_of(mask_of(cards("QS 5H AS"))) == tuple(cards("AS QS 5H"))
