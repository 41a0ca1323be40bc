"""Properties of the Konkan engine checked after every action of random play.

The players mix the simple player's moves with random proposals (random
melds, lay-offs, swaps, discards, out-of-turn and out-of-phase actions).
After every action: 106 cards conserved, exactly one seat to act, views hide
what they must, refused actions change nothing, round scores follow RULES.md
§1.8, and replaying the record gives the same state.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.bots import simple_konkan
from sahrat.rules import konkan
from sahrat.rules.errors import RuleError
from sahrat.rules.konkan import (
    Action,
    ClaimRedeal,
    Commit,
    Discard,
    Draw,
    EndTurn,
    Finish,
    KonkanState,
    LayDown,
    LayOff,
    SwapJoker,
    TakeDiscard,
    hand_card_value,
)
from sahrat.rules.options import HandValues, KonkanOptions
from sahrat.rules.record import GameRecord, record_of, replay
from sahrat.simulate import view_leaks


def random_proposal(state: KonkanState, rnd: random.Random) -> Action:
    seat = state.turn
    if rnd.random() < 0.05:
        seat = rnd.randrange(state.players)  # maybe out of turn
    hand = state.hands[state.turn] or [konkan.konkan_deck()[0]]
    pick = rnd.randrange(9)
    if pick == 0:
        return Draw(seat)
    if pick == 1:
        return Discard(seat, rnd.choice(hand))
    if pick == 2:
        return LayDown(seat, (tuple(rnd.sample(hand, min(len(hand), rnd.randint(3, 5)))),))
    if pick == 3 and state.melds:
        target = rnd.choice(state.melds)
        return LayDown(seat, lay_offs=(LayOff(target.id, (rnd.choice(hand),)),))
    if pick == 4 and state.melds:
        target = rnd.choice(state.melds)
        return SwapJoker(seat, target.id, tuple(rnd.sample(hand, min(len(hand), 2))))
    if pick == 5:
        return TakeDiscard(seat, (tuple(rnd.sample(hand, min(len(hand), 2))),))
    if pick == 6:
        return Commit(seat)
    if pick == 7:
        return ClaimRedeal(seat)
    return EndTurn(seat)


def expected_scores(before: KonkanState, result: konkan.RoundResult) -> tuple[int, ...]:
    """RULES.md §1.8 computed independently from the state before the round ended."""
    values = before.options.hand_values
    doubled = result.finish in (Finish.HAND, Finish.KONKAN, Finish.COMMITTED_KONKAN)
    scores = []
    for seat, hand in enumerate(result.hands):
        if seat == result.winner:
            scores.append(-60 if doubled else -30)
            continue
        if before.opened[seat] and not before.committed[seat]:
            score = sum(hand_card_value(card, values) for card in hand)
        else:
            score = 100
        scores.append(score * 2 if doubled else score)
    return tuple(scores)


def check_after(state: KonkanState) -> None:
    assert konkan.check_invariants(state) == []
    assert (konkan.to_act(state) is None) == state.over
    for viewer in [None, *range(state.players)]:
        assert view_leaks(konkan, state, viewer) == []
    if not state.over:
        spectator = konkan.view(state, None)
        assert "hand" not in spectator
        assert sum(spectator["hand_counts"]) + spectator["stock_count"] > 0


def play(seed: str, options: KonkanOptions, rnd: random.Random, steps: int) -> None:
    state = konkan.new_game(options, seed)
    start = state
    accepted: list[Action] = []
    for _ in range(steps):
        if state.over:
            break
        if rnd.random() < 0.3:
            action = random_proposal(state, rnd)
        else:
            action = simple_konkan.act(konkan.view(state, state.turn))
        before = state.clone()
        try:
            state, events = konkan.apply(state, action)
        except RuleError:
            assert state == before, "a refused action changed the state"
            continue
        assert before == before.clone()
        accepted.append(action)
        for event in events:
            if event.type == "round_end":
                result = state.results[len(before.results)]
                assert result.scores == expected_scores(before, result)
        check_after(state)
    record = GameRecord.from_json(record_of("konkan", start, accepted).to_json())
    again = replay(record)
    assert again.ok
    assert again.state == state


options_strategy = st.builds(
    KonkanOptions,
    threshold=st.sampled_from([0, 51, 71, 81]),
    players=st.integers(2, 4),
    rounds=st.integers(1, 3),
    hand_exempt_from_threshold=st.booleans(),
    escalating_opening=st.booleans(),
    hand_values=st.sampled_from(list(HandValues)),
    hand_rummy=st.booleans(),
    swapped_joker_must_be_laid=st.booleans(),
    redeal=st.booleans(),
    max_reshuffles=st.integers(0, 3),
    stake=st.sampled_from([0, 10]),
)


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=8), options_strategy, st.integers(0, 2**32))
def test_random_play_keeps_every_invariant(seed: str, options: KonkanOptions, moves: int) -> None:
    play(seed, options, random.Random(moves), steps=1500)


def test_same_seed_same_game() -> None:
    def run() -> Any:
        rnd = random.Random(5)
        state = konkan.new_game(KonkanOptions(players=3), "same")
        for _ in range(300):
            if state.over:
                break
            action = simple_konkan.act(konkan.view(state, state.turn))
            if rnd.random() < 0.1:
                action = konkan.timeout_action(state)
            state, _ = konkan.apply(state, action)
        return state

    assert run() == run()


def test_different_seeds_deal_differently() -> None:
    hands = {tuple(konkan.new_game(seed=str(i)).hands[0]) for i in range(20)}
    assert len(hands) == 20
