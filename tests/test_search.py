"""The meld search agrees with a brute force over every subset of small dense hands."""

from __future__ import annotations

from functools import cache
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.rules.cards import Card, Rank, Suit, joker, parse_cards
from sahrat.rules.errors import InvalidMeld
from sahrat.rules.melds import AceValue, build_meld
from sahrat.rules.search import best_melds, best_opening, hand_out, konkan_out

# Dense hands: 4 suits × ranks Q K A 2 3 (around the ace, the hard case) plus jokers.
POOL = [
    Card(rank, suit, copy)
    for suit in Suit
    for rank in (Rank.QUEEN, Rank.KING, Rank.ACE, Rank.TWO, Rank.THREE)
    for copy in (0, 1)
] + [joker(0), joker(1)]
MID_POOL = [
    Card(rank, suit, copy)
    for suit in (Suit.SPADES, Suit.HEARTS)
    for rank in (Rank.FIVE, Rank.SIX, Rank.SEVEN, Rank.EIGHT, Rank.NINE)
    for copy in (0, 1)
] + [joker(0), joker(1)]

hands = st.one_of(
    st.lists(st.sampled_from(POOL), min_size=3, max_size=9, unique=True),
    st.lists(st.sampled_from(MID_POOL), min_size=3, max_size=9, unique=True),
)


def meld_value_any_joker_place(cards: tuple[Card, ...], ace: AceValue) -> int | None:
    best = None
    for joker_low in (False, True):
        try:
            value = build_meld(cards, joker_low=joker_low).value(ace)
        except InvalidMeld:
            continue
        best = value if best is None else max(best, value)
    return best


def brute_force(hand: list[Card], ace: AceValue, whole: bool) -> int | None:
    """Best total of disjoint melds leaving a real card (whole: exactly one card, real)."""
    n = len(hand)
    melds: list[tuple[int, int]] = []
    for size in range(3, n + 1):
        for combo in combinations(range(n), size):
            value = meld_value_any_joker_place(tuple(hand[i] for i in combo), ace)
            if value is not None:
                melds.append((sum(1 << i for i in combo), value))

    @cache
    def best(remaining: int) -> int | None:
        left = [hand[i] for i in range(n) if remaining >> i & 1]
        reals_left = [c for c in left if not c.is_joker]
        if whole:
            here = 0 if len(left) == 1 and reals_left else None
        else:
            here = 0 if reals_left else None
        for mask, value in melds:
            if mask & remaining == mask:
                sub = best(remaining & ~mask)
                if sub is not None and (here is None or sub + value > here):
                    here = sub + value
        return here

    return best((1 << n) - 1)


@settings(max_examples=500, deadline=None)
@given(hands, st.sampled_from(list(AceValue)))
def test_best_melds_is_optimal_and_valid(hand: list[Card], ace: AceValue) -> None:
    result = best_melds(hand, ace)
    expected = brute_force(hand, ace, whole=False)
    assert result.value == (expected or 0)
    used = [card for meld in result.melds for card in meld]
    assert len(used) == len(set(used)) and set(used) <= set(hand)
    assert sorted(used + list(result.left), key=lambda c: c.key) == sorted(
        hand, key=lambda c: c.key
    )
    assert sum(build_meld(meld).value(ace) for meld in result.melds) == result.value
    assert any(not card.is_joker for card in result.left)


@settings(max_examples=500, deadline=None)
@given(hands)
def test_hand_out_finds_every_whole_hand(hand: list[Card]) -> None:
    found = hand_out(hand)
    expected = brute_force(hand, AceValue.ALWAYS_11, whole=True) if len(hand) >= 4 else None
    assert (found is not None) == (expected is not None)
    if found is not None:
        assert len(found.left) == 1 and not found.left[0].is_joker
        assert found.value == expected
        for meld in found.melds:
            build_meld(meld)


def test_best_opening_meets_the_threshold_or_is_none() -> None:
    hand = parse_cards("7H 8H 9H 2S 3S 4S 5D 7C 9D JS KC QD 4H 6C 8S")
    assert best_opening(hand, 51) is None  # 24 + 9 = 33
    hand = parse_cards("7H 8H 9H TH JH QH KH 2S 3S 4S 5D 7C 9D JS KC")
    opening = best_opening(hand, 51)
    assert opening is not None and opening.value == 73  # 64 + 9
    assert best_opening(hand, 81) is None


def test_konkan_shapes_are_found() -> None:
    ten_and_four = parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S TS KC KD KH KS' 4D")
    found = konkan_out(ten_and_four)
    assert found is not None and [len(m) for m in found.melds] == [10, 4]
    assert [str(c) for c in found.left] == ["4D"]
    eleven_and_three = parse_cards("3H 4H 5H 6H 7H 8H JK TH JH QH KH 2C 2D 2S 9C")
    found = konkan_out(eleven_and_three)
    assert found is not None and [len(m) for m in found.melds] == [11, 3]
    assert konkan_out(parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S KC KD KH KS' 4D 5D")) is None
