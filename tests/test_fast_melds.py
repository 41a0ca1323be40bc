"""The fast meld value (``sahrat.bots.fastmelds``) agrees with the engine's meld search
(``sahrat.rules.search.best_melds``) on random hands: two decks, jokers, both ace
options, hand sizes from 3 to 18, and hands crowded into one suit (long runs, twins)
or full of jokers, where the two searches differ most in how they get there."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.bots import fastmelds
from sahrat.bots.konkan_sim import PARTNERS, partnered
from sahrat.rules.cards import Card, konkan_deck, parse_cards
from sahrat.rules.melds import AceValue
from sahrat.rules.search import _encode, _isolated, best_melds

DECK = konkan_deck()
SEED = 20261202
HANDS_PER_SHAPE = 25


def random_hands(rng: random.Random) -> list[list[Card]]:
    hands = []
    jokers = DECK[104:]
    for size in (3, 5, 8, 11, 14, 15, 18):
        for _ in range(HANDS_PER_SHAPE):
            hands.append(rng.sample(DECK, size))
            hands.append(rng.sample(DECK[:104], size - 2) + jokers)
            suit = rng.randrange(4)
            one_suit = [c for c in DECK[:104] if c.suit is not None and c.suit.index == suit]
            hands.append(rng.sample(one_suit, min(size, 24)) + rng.sample(jokers, rng.randrange(3)))
    return hands


@pytest.mark.parametrize("ace", list(AceValue))
def test_fast_value_equals_the_engine_search_on_random_hands(ace: AceValue) -> None:
    rng = random.Random(SEED)
    print(f"seed {SEED}")  # shown with -s or on failure: the hands can be made again
    for hand in random_hands(rng):
        expected = best_melds(hand, ace).value
        assert fastmelds.hand_value(hand, ace) == expected, (sorted(map(str, hand)), ace)


cards = st.lists(st.sampled_from(range(106)), min_size=3, max_size=16, unique=True)


@settings(max_examples=200, deadline=None)
@given(cards, st.sampled_from(list(AceValue)))
def test_fast_value_equals_the_engine_search(keys: list[int], ace: AceValue) -> None:
    hand = [DECK[k] for k in keys]
    assert fastmelds.hand_value(hand, ace) == best_melds(hand, ace).value


def test_known_hands() -> None:
    # values from the rules (§1.4): A=11 here, J Q K = 10, a joker the card it stands for
    hand = parse_cards(["AS", "2S", "3S", "9H", "9D", "9C", "KD"])
    assert fastmelds.hand_value(hand) == 11 + 2 + 3 + 27
    # a joker standing for a card the hand holds, to free it for the other joker's run
    hand = parse_cards(["5S'", "6S'", "7S'", "8S'", "TS'", "KS", "JK", "JK'"])
    assert fastmelds.hand_value(hand) == (5 + 6 + 7 + 8) + (8 + 9 + 10)
    # every card melded: one must stay back to discard (then 4-card set drops to 3)
    hand = parse_cards(["7S", "7H", "7D", "7C"])
    assert fastmelds.hand_value(hand) == 21
    assert fastmelds.hand_value(parse_cards(["2S", "9H", "KD"])) == 0


def test_isolated_cards_include_the_engines() -> None:
    # The engine's filter also pairs K with 2 (two apart across the ace); no run holds
    # both (K A 2 is not a run, §1.4), so here they are isolated: a tighter filter.
    rng = random.Random(SEED)
    for _ in range(2000):
        mask, _jokers = _encode(rng.sample(DECK[:104], rng.randrange(1, 20)))
        engine = _isolated(mask)
        assert fastmelds.isolated(mask) & engine == engine
    two, king = parse_cards(["2S", "KS"])
    mask, _ = _encode([two, king])
    assert fastmelds.isolated(mask) == mask and _isolated(mask) == 0


def test_partners_are_the_faces_that_can_share_a_meld() -> None:
    seven_spades = 6
    assert partnered(1 << (2 * 7), seven_spades)  # 8S
    assert partnered(1 << (2 * 8), seven_spades)  # 9S, a joker between
    assert not partnered(1 << (2 * 9), seven_spades)  # TS
    assert partnered(1 << (2 * (13 + 6)), seven_spades)  # 7H
    ace_spades, king_spades = 0, 12
    assert PARTNERS[ace_spades] >> (2 * king_spades) & 3  # Q K A
