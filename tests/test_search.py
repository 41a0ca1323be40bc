"""The meld search agrees with a brute force over every subset of small dense hands."""

from __future__ import annotations

from functools import cache
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.rules.cards import SUITS, Card, Rank, Suit, joker, konkan_deck, parse_cards
from sahrat.rules.errors import InvalidMeld
from sahrat.rules.konkan import is_konkan
from sahrat.rules.melds import ACE_HIGH, AceValue, MeldKind, build_meld
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


def test_konkan_with_a_joker_standing_in_the_run_for_a_card_the_set_uses() -> None:
    # the run AC'…8C' JK TC JC leaves 9C' to the set 9H 9C' JK'; QD is discarded
    hand = parse_cards("3C JK 7C 6C 4C' 2C 5C' 8C' QD AC' JC 9H TC 9C' JK'")
    found = konkan_out(hand)
    assert found is not None
    assert [str(card) for card in found.left] == ["QD"]
    check_konkan(hand, found.melds, found.left, found.value, AceValue.ALWAYS_11)
    assert found.value == brute_force_konkan(hand, AceValue.ALWAYS_11)


def check_konkan(
    hand: list[Card],
    melds: tuple[tuple[Card, ...], ...],
    left: tuple[Card, ...],
    value: int,
    ace: AceValue,
) -> None:
    """The engine accepts these melds as a Konkan laid from ``hand``, worth ``value``."""
    built = [build_meld(meld) for meld in melds]
    assert is_konkan(built)
    used = [card for meld in melds for card in meld]
    assert sorted([*used, *left], key=lambda c: c.key) == sorted(hand, key=lambda c: c.key)
    assert len(left) == 1 and not left[0].is_joker
    assert sum(meld.value(ace) for meld in built) == value


def brute_force_konkan(hand: list[Card], ace: AceValue) -> int | None:
    """The best Konkan value over every split of ``hand`` into a set, a run and a real
    card to discard, each meld validated by the engine (None: no Konkan)."""
    jokers = [i for i, card in enumerate(hand) if card.is_joker]
    # a set is cards of one rank and jokers: every such choice of 3 or 4 is tried
    groups = {tuple(i for i, card in enumerate(hand) if card.rank is rank) for rank in Rank}
    best: int | None = None
    for group in groups:
        for set_size in (3, 4):
            for combo in combinations([*group, *jokers], set_size):
                try:
                    meld = build_meld([hand[i] for i in combo])
                except InvalidMeld:
                    continue
                others = [card for i, card in enumerate(hand) if i not in combo]
                for discard in others:
                    if discard.is_joker:
                        continue
                    run = tuple(
                        sorted((c for c in others if c is not discard), key=lambda c: c.key)
                    )
                    if len({card.suit for card in run if not card.is_joker}) != 1:
                        continue  # not one suit: never a run (skips the engine's slower check)
                    run_value = meld_value_any_joker_place(run, ace)
                    if meld.kind is MeldKind.SET and run_value is not None:
                        value = meld.value(ace) + run_value
                        best = value if best is None else max(best, value)
    return best


DECK = konkan_deck()
REAL_CARDS = [card for card in DECK if not card.is_joker]


@st.composite
def konkan_hands(draw: st.DrawFn) -> list[Card]:
    """15 cards holding a Konkan by construction, jokers standing in either meld (the card
    a joker replaces is dropped or kept as the discard); sometimes one card is then
    swapped for another, which may break it."""
    run_length, set_size = (10, 4) if draw(st.booleans()) else (11, 3)
    suit = SUITS[draw(st.integers(0, 3))]
    start = draw(st.integers(1, ACE_HIGH - run_length + 1))
    ranks = [Rank.ACE if p == ACE_HIGH else Rank(p) for p in range(start, start + run_length)]
    run = [Card(rank, suit) for rank in ranks]
    # the set's rank is often one the run holds: the hard case for the search
    if draw(st.booleans()):
        set_rank = ranks[draw(st.integers(0, run_length - 1))]
    else:
        set_rank = Rank(draw(st.integers(1, 13)))
    set_suits = draw(SUIT_ORDERS)[:set_size]
    set_ = [Card(set_rank, s, 1 if Card(set_rank, s) in run else 0) for s in set_suits]
    # where the jokers stand: 0 (in the run) on the set's rank, 1 anywhere in the meld, 2 not
    replaced: list[Card] = []
    jokers = iter([joker(0), joker(1)])
    for meld in (run, set_):
        place = draw(st.integers(0, 2))
        if place == 2:
            continue
        index = draw(st.integers(0, len(meld) - 1))
        if place == 0 and set_rank in ranks and meld is run:
            index = ranks.index(set_rank)
        replaced.append(meld[index])
        meld[index] = next(jokers)
    hand = run + set_
    if replaced and draw(st.booleans()):
        hand.append(replaced[draw(st.integers(0, len(replaced) - 1))])
    else:
        spare = [card for card in REAL_CARDS if card not in set(hand)]
        hand.append(spare[draw(st.integers(0, len(spare) - 1))])
    if draw(st.booleans()):
        others = [card for card in DECK if card not in set(hand)]
        hand[draw(st.integers(0, 14))] = others[draw(st.integers(0, len(others) - 1))]
    draw(SHUFFLES).shuffle(hand)
    return hand


SUIT_ORDERS = st.permutations(SUITS)
SHUFFLES = st.randoms(use_true_random=False)


@settings(max_examples=200, deadline=None)
@given(konkan_hands(), st.sampled_from(list(AceValue)))
def test_konkan_out_agrees_with_a_brute_force(hand: list[Card], ace: AceValue) -> None:
    expected = brute_force_konkan(hand, ace)
    found = konkan_out(hand, ace)
    assert (found is None) == (expected is None)
    if found is not None:
        check_konkan(hand, found.melds, found.left, found.value, ace)
        assert found.value == expected
