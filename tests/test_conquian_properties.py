"""Random legal Conquian play, checked after every action (DESIGN.md "tests that carry
weight"): 40 cards conserved, exactly one seat to act, the replay of the action list
from the same seed equals the live state, and no view shows a card of the other hand,
of the stock or of the dead pile. Plus a seeded soak (300 deals; 2,000 in `make soak`)."""

from __future__ import annotations

import os
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.bots.simple_conquian import act
from sahrat.rules.cards import Card, parse_card
from sahrat.rules.conquian import (
    Action,
    ConquianState,
    Phase,
    Take,
    action_from_json,
    action_to_json,
    apply,
    best_take,
    check_action,
    check_invariants,
    new_game,
    simple_actions,
    timeout_action,
    to_act,
    view,
)
from sahrat.rules.errors import RuleError
from sahrat.rules.options import ConquianOptions


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for key, value in data.items() if key != "options" for s in _strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in _strings(value)]
    return []


def _as_card(text: str) -> Card | None:
    try:
        return parse_card(text)
    except RuleError:
        return None


def view_problems(state: ConquianState) -> list[str]:
    """Every card a view shows must be the viewer's own hand, a meld card or the face-up
    card; none of the other hand, the stock or the dead pile."""
    problems = []
    public = {c for melds in state.melds for meld in melds for c in meld}
    if state.face_up is not None:
        public.add(state.face_up)
    for seat in (0, 1, None):
        allowed = public | (set(state.hands[seat]) if seat is not None else set())
        seen = view(state, seat)
        shown = {c for c in map(_as_card, _strings(seen)) if c is not None}
        if shown - allowed:
            problems.append(f"view of {seat} shows {sorted(map(str, shown - allowed))}")
        if (seat is None) == ("hand" in seen):
            problems.append(f"view of {seat}: hand shown to the wrong viewer")
    return problems


def check_all(state: ConquianState) -> None:
    problems = check_invariants(state)
    assert not problems, problems
    if not state.over:
        assert to_act(state) in (0, 1)
        assert simple_actions(state), "the seat to act always has a simple action"
        assert check_action(state, timeout_action(state)) is None
    assert not view_problems(state)


def random_take(state: ConquianState, rnd: random.Random) -> Take | None:
    """A take laying a random part of the hand (or none of it), when one exists."""
    seat = state.turn
    assert state.face_up is not None
    hand = state.hands[seat]
    part = rnd.sample(hand, rnd.randint(0, len(hand)))
    melds = best_take(state.melds[seat], part, state.face_up)
    return None if melds is None else Take(seat, melds)


def choose(state: ConquianState, rnd: random.Random, bot_share: float) -> Action:
    """The simple player, a random simple action, or a random take."""
    if rnd.random() < bot_share:
        action: Action = act(view(state, state.turn))
        return action
    if state.phase in (Phase.CHOOSE, Phase.TURNED_UP, Phase.FORCED) and rnd.random() < 0.5:
        take = random_take(state, rnd)
        if take is not None:
            return take
    return rnd.choice(simple_actions(state))


def replayed(options: ConquianOptions, seed: str, actions: list[dict[str, Any]]) -> ConquianState:
    state = new_game(options, seed)
    for raw in actions:
        state, _ = apply(state, action_from_json(raw))
    return state


@settings(max_examples=40, deadline=None)
@given(
    seed=st.text(alphabet="abcdef0123456789", min_size=1, max_size=8),
    choices=st.integers(min_value=0, max_value=2**32),
    bot_share=st.sampled_from([0.0, 0.5, 0.9]),
    double=st.booleans(),
)
def test_random_legal_play(seed: str, choices: int, bot_share: float, double: bool) -> None:
    options = ConquianOptions(wins_needed=1, double_after_draw=double)
    rnd = random.Random(choices)
    state = new_game(options, seed)
    log: list[dict[str, Any]] = []
    check_all(state)
    for _ in range(400):  # two deals at most (a draw, then a deal that is won)
        if state.over or len(state.results) >= 2:
            break
        action = choose(state, rnd, bot_share)
        snapshot = state.clone()
        new, _ = apply(state, action)
        assert state == snapshot  # the state given to apply is never changed
        state = new
        log.append(action_to_json(action))
        check_all(state)
        assert replayed(options, seed, log) == state


@settings(max_examples=30, deadline=None)
@given(seed=st.text(alphabet="0123456789", min_size=1, max_size=6), data=st.data())
def test_refused_moves_leave_the_state_unchanged(seed: str, data: st.DataObject) -> None:
    # Any action from any seat, legal or not: if refused, the state is exactly as it was.
    state = new_game(None, seed)
    rnd = random.Random(seed)
    for _ in range(60):
        if state.over:
            break
        seat = data.draw(st.sampled_from([0, 1]))
        kind = data.draw(
            st.sampled_from(["take", "refuse", "pass", "discard", "force", "decline_force"])
        )
        raw: dict[str, Any] = {"seat": seat, "type": kind}
        if kind == "take":
            pool = ["KS", "8H"] + [str(c) for c in [*state.hands[seat], *state.stock[:3]]]
            if state.face_up is not None:
                pool.append(str(state.face_up))
            raw["melds"] = [data.draw(st.lists(st.sampled_from(pool), max_size=4))]
        if kind == "discard":
            raw["card"] = data.draw(
                st.sampled_from(["KS"] + [str(c) for c in [*state.hands[0], *state.hands[1]]])
            )
        snapshot = state.clone()
        try:
            state, _ = apply(state, action_from_json(raw))
        except RuleError:
            assert state == snapshot
            state, _ = apply(state, choose(state, rnd, 0.5))
        check_all(state)


SOAK_DEALS = int(os.environ.get("SAHRAT_SOAK_DEALS", "300"))  # make soak: 2,000


def test_soak_deals() -> None:
    # Seeded self-play of SOAK_DEALS deals: simple player against a random one and
    # against itself, with every invariant checked after every action and a full replay
    # at the end of each match.
    deals = 0
    match = 0
    wins = draws = 0
    phases: set[Phase] = set()
    while deals < SOAK_DEALS:
        seed = f"soak-{match}"
        rnd = random.Random(match)
        options = ConquianOptions(double_after_draw=match % 2 == 1)
        bot_share = (1.0, 0.7, 0.3)[match % 3]
        state = new_game(options, seed)
        log: list[dict[str, Any]] = []
        while not state.over:
            action = choose(state, rnd, bot_share)
            state, _ = apply(state, action)
            log.append(action_to_json(action))
            phases.add(state.phase)
            problems = check_invariants(state)
            assert not problems, (seed, problems)
            if len(log) % 7 == 0:
                assert not view_problems(state), seed
        assert replayed(options, seed, log) == state
        deals += len(state.results)
        wins += sum(r.winner is not None for r in state.results)
        draws += sum(r.winner is None for r in state.results)
        match += 1
    assert wins + draws == deals >= SOAK_DEALS
    assert wins > 0 and draws > 0
    assert phases == set(Phase)  # forcing questions and forced takes included
