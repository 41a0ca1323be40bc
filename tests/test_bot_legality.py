"""Every bot level proposes only legal moves, over many random positions.

Two sources of positions: seeded matches played by a mix of the levels and of
random legal moves (commits, redeals, discards no bot would make), so that
positions no bot steers to arise too; and Konkan end games made to order, where
a seat that has opened holds a few cards (often a joker) and the card on the
pile often fits its melds. At every decision each level is asked for the move
of the seat to act, from that seat's view, and the engine must accept every
proposal.
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.bots.levels import LEVELS, Player, bot_for
from sahrat.rules import konkan
from sahrat.rules.cards import SUITS, Card, Rank, joker, konkan_deck
from sahrat.rules.errors import RuleError
from sahrat.rules.melds import ACE_HIGH, position_rank
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import engine_for, options_for

RANDOM_MOVE = 0.25  # share of the moves played at random among the simple legal actions
DECISIONS = 200  # per table and seed, over as many matches as that takes
LEVEL_NAMES = sorted(LEVELS)

TABLES = [
    ("konkan", {"rounds": 1}),  # the last round from the first deal: commits
    ("konkan", {"players": 2, "rounds": 2, "hand_rummy": True}),
    ("konkan71", {"players": 3, "rounds": 1, "redeal": True}),
    (
        "konkan",
        {
            "rounds": 1,
            "swapped_joker_must_be_laid": True,
            "escalating_opening": True,
            "hand_exempt_from_threshold": True,
            "ace_value": "low_1_else_10",
        },
    ),
    ("conquian", {}),
]


def players_for(game: str, seats: int) -> dict[tuple[int, str], Player]:
    """One player per seat and level: the stateful ones see every view of their seat."""
    return {(seat, level): bot_for(game, level) for seat in range(seats) for level in LEVEL_NAMES}


def proposals(
    engine: ModuleType, state: Any, players: dict[tuple[int, str], Player], illegal: list[str]
) -> dict[str, Any]:
    """Every level's move for the seat to act; the refused ones are noted in ``illegal``."""
    seat = engine.to_act(state)
    view = engine.view(state, seat)
    moves: dict[str, Any] = {}
    for level in LEVEL_NAMES:
        move = players[seat, level](view)
        try:
            engine.apply(state, move)  # the state given is left untouched
        except RuleError as refused:
            illegal.append(f"{level} at seat {seat}: {move}: {refused.code} {refused}")
        else:
            moves[level] = move
    return moves


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize(("game", "values"), TABLES)
def test_every_level_proposes_legal_moves(game: str, values: dict[str, Any], seed: int) -> None:
    engine = engine_for(game)
    rng = random.Random(f"{game}-{seed}")
    illegal: list[str] = []
    decisions = matches = 0
    while decisions < DECISIONS:
        state = engine.new_game(options_for(game, values), f"legality-{seed}-{matches}")
        matches += 1
        players = players_for(game, state.players)
        while not state.over and decisions < DECISIONS:
            decisions += 1
            moves = proposals(engine, state, players, illegal)
            driver = LEVEL_NAMES[(engine.to_act(state) + seed) % len(LEVEL_NAMES)]
            if driver not in moves or rng.random() < RANDOM_MOVE:
                move = rng.choice(engine.simple_actions(state))
            else:
                move = moves[driver]
            state, _ = engine.apply(state, move)
    assert not illegal, "\n".join(illegal[:5])


# --- Konkan end games made to order -------------------------------------------------------


@st.composite
def end_games(draw: st.DrawFn) -> konkan.KonkanState:
    """Seat 0 has opened with a run and two sets and keeps a few cards (often a joker);
    the others drew and threw, and seat 3's card, on the pile at seat 0's draw, often
    fits one of seat 0's melds."""
    suit = draw(st.sampled_from(SUITS))
    length = 7 if draw(st.booleans()) else draw(st.integers(3, 6))  # 7: one card kept
    start = draw(st.integers(1, ACE_HIGH - length + 1))
    run = [Card(position_rank(p), suit) for p in range(start, start + length)]
    sets = []
    for rank in draw(st.permutations([Rank.JACK, Rank.QUEEN, Rank.KING]))[:2]:  # 60 or more
        suits = draw(st.permutations(SUITS))[:3]
        sets.append([Card(rank, s, 1 if Card(rank, s) in run else 0) for s in suits])
    melded = run + sets[0] + sets[1]
    free = [card for card in konkan_deck() if card not in melded and not card.is_joker]
    kept = draw(st.lists(st.sampled_from(free), min_size=8 - length, max_size=8 - length))
    kept = list(dict.fromkeys(kept))
    if draw(st.booleans()):
        kept[0] = joker(1)  # seat 0 may be left holding nothing but this joker
    thrown_by_0 = draw(st.sampled_from([c for c in free if c not in kept]))
    fitting = [
        Card(position_rank(p), suit, copy)
        for p in (start - 1, start + length)
        if 1 <= p <= ACE_HIGH
        for copy in (0, 1)
    ] + [Card(s[0].rank, other, 1) for s in sets for other in SUITS]
    hand_0 = [*melded, *kept, thrown_by_0]
    spare = [c for c in free if c not in hand_0]
    thrown_by_3 = draw(st.sampled_from([c for c in fitting if c in spare]) | st.sampled_from(spare))
    # a card drawn twice into ``kept`` leaves room for the next free one
    fill = [card for card in free if card not in hand_0 and card != thrown_by_3]
    hand_0 += fill[: 15 - len(hand_0)]
    order = konkan.stacked_deck({0: hand_0, 3: [thrown_by_3]}, players=4, dealer=3)
    state = konkan.new_game(KonkanOptions(), "end-game", decks=[order], first_dealer=3)
    opening = (tuple(run), tuple(sets[0]), tuple(sets[1]))
    state, _ = konkan.apply(state, konkan.LayDown(0, opening))
    state, _ = konkan.apply(state, konkan.Discard(0, thrown_by_0))
    for seat in (1, 2, 3):
        state, _ = konkan.apply(state, konkan.Draw(seat))
        hand = state.hands[seat]
        throw = thrown_by_3 if seat == 3 else next(c for c in reversed(hand) if not c.is_joker)
        state, _ = konkan.apply(state, konkan.Discard(seat, throw))
    return state


@settings(max_examples=100, deadline=None)
@given(end_games(), st.integers(0, len(LEVEL_NAMES) - 1))
def test_every_level_plays_legal_end_games(state: konkan.KonkanState, first: int) -> None:
    players = players_for("konkan", state.players)
    illegal: list[str] = []
    for turn in range(12):  # seat 0's draw and a few turns on
        if state.over or state.results:
            break  # the round is over
        moves = proposals(konkan, state, players, illegal)
        move = moves.get(LEVEL_NAMES[(first + turn) % len(LEVEL_NAMES)])
        state, _ = konkan.apply(state, move or konkan.timeout_action(state))
    assert not illegal, "\n".join(illegal)
