"""The expert level: it decides from its seat's view only, and a seed fixes its play.

The hidden-information test re-deals, before each of the expert's decisions, every
card its seat cannot see (the other seats' hands and the stock; the pile and the
dead cards, which it saw face up, stay) and asks a copy of the bot, same memory and
same seed, to decide on the re-dealt table: the decision must not change.
"""

from __future__ import annotations

import asyncio
import copy
import random
from typing import Any

from sahrat.bots import expert
from sahrat.bots.simple_conquian import act as simple_conquian
from sahrat.bots.simple_konkan import act as simple_konkan
from sahrat.rules import conquian, konkan
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.server.table.autoplay import suggest

DECISIONS = 40  # expert decisions checked per game


def redeal_konkan(state: konkan.KonkanState, seat: int, rng: random.Random) -> Any:
    new = state.clone()
    others = [s for s in range(state.players) if s != seat]
    pool = [card for s in others for card in new.hands[s]] + new.stock
    rng.shuffle(pool)
    for s in others:
        count = len(new.hands[s])
        new.hands[s], pool = pool[:count], pool[count:]
    new.stock = pool
    return new


def redeal_conquian(state: conquian.ConquianState, seat: int, rng: random.Random) -> Any:
    new = state.clone()
    other = 1 - seat
    pool = new.hands[other] + new.stock
    rng.shuffle(pool)
    count = len(new.hands[other])
    new.hands[other] = sorted(pool[:count], key=conquian.card_index)
    new.stock = pool[count:]
    return new


def check_blind(engine: Any, state: Any, others: Any, redeal: Any, game: str) -> int:
    """Play until DECISIONS expert decisions were checked; returns how many were searches."""
    rng = random.Random(f"redeal-{game}")
    bot = expert.ExpertBot(game, seed="blind", budget=60.0)  # samples only: no time cap
    checked = searched = 0
    while not state.over and checked < DECISIONS:
        seat = engine.to_act(state)
        if seat != 0:
            state, _ = engine.apply(state, others(engine.view(state, seat)))
            continue
        twin = copy.deepcopy(bot)
        other_state = redeal(state, 0, rng)
        assert engine.view(other_state, 0) == engine.view(state, 0)
        hidden_before = [h for s, h in enumerate(state.hands) if s != 0]
        hidden_after = [h for s, h in enumerate(other_state.hands) if s != 0]
        action = bot.act(engine.view(state, 0))
        assert twin.act(engine.view(other_state, 0)) == action
        checked += 1
        searched += hidden_before != hidden_after and type(action).__name__ == "Discard"
        state, _ = engine.apply(state, action)
    assert checked == DECISIONS
    return searched


def test_konkan_expert_decides_the_same_whatever_the_hidden_cards() -> None:
    state = konkan.new_game(KonkanOptions(), "expert-blind")
    assert check_blind(konkan, state, simple_konkan, redeal_konkan, "konkan") >= 5


def test_conquian_expert_decides_the_same_whatever_the_hidden_cards() -> None:
    state = conquian.new_game(ConquianOptions(), "expert-blind")
    assert check_blind(conquian, state, simple_conquian, redeal_conquian, "conquian") >= 5


def play_conquian(seed: str) -> list[Any]:
    players = [expert.ExpertBot("conquian", seed=seed, budget=60.0).act, simple_conquian]
    state = conquian.new_game(ConquianOptions(), "expert-seeded")
    moves = []
    while not state.over and len(moves) < 150:
        seat = conquian.to_act(state)
        action = players[seat](conquian.view(state, seat))
        moves.append(action)
        state, _ = conquian.apply(state, action)
    return moves


def test_a_seed_gives_one_line_of_play() -> None:
    assert play_conquian("one") == play_conquian("one")


def test_sampled_deals_agree_with_the_view() -> None:
    state = conquian.new_game(ConquianOptions(), "expert-search")
    bot = expert.ExpertBot("conquian", seed="s", samples=8)
    view = conquian.view(state, conquian.to_act(state))
    sample = expert.conquian_sampler(view, (1 << 40) - 1 & ~bot_mask(view), random.Random(1))
    deal = sample()
    their = 1 - view["viewer"]
    assert deal.hands[their].bit_count() == view["hand_counts"][their]
    assert len(deal.stock) == view["stock_count"]
    assert not deal.hands[their] & deal.hands[view["viewer"]]
    action = bot.act(view)
    assert conquian.check_action(state, action) is None


def bot_mask(view: dict[str, Any]) -> int:
    from sahrat.rules.cards import parse_card, parse_cards

    mask = conquian.mask_of(parse_cards(view["hand"]))
    if view.get("face_up"):
        mask |= 1 << conquian.card_index(parse_card(view["face_up"]))
    return mask


def test_fast_deal_follows_the_engine() -> None:
    # the rollouts' bit-mask deal must play exactly as the engine does
    for index in range(6):
        state = conquian.new_game(ConquianOptions(), f"fast-{index}")
        results = 0
        while not state.over and results == len(state.results):
            how = state.face_up_how.value if state.face_up_how else ""
            deal = expert.FastDeal(
                [conquian.mask_of(h) for h in state.hands],
                list(state.open_masks),
                [conquian.card_index(c) for c in state.stock],
                conquian.card_index(state.face_up) if state.face_up else -1,
                how,
                state.face_up_from or 0,
                state.turn,
                expert._PHASES[state.phase.value],
            )
            action = simple_conquian(conquian.view(state, state.turn))
            expert._play_line(deal, action)
            state, _ = conquian.apply(state, action)
            if len(state.results) > results:
                assert deal.phase == expert.OVER
                assert deal.winner == state.results[-1].winner
                break
            assert deal.hands == [conquian.mask_of(h) for h in state.hands]
            assert deal.opened == state.open_masks
            assert (deal.turn, deal.phase) == (state.turn, expert._PHASES[state.phase.value])
            assert deal.stock == [conquian.card_index(c) for c in state.stock]


def test_a_hint_is_a_fresh_experts_legal_move() -> None:
    """The table's one way to a hint (``autoplay.suggest``): a fresh bot of the hint
    level decides from the seat's view; the same view gets the same hint."""
    state = konkan.new_game(KonkanOptions(), "hint")
    seat = konkan.to_act(state)
    view = konkan.view(state, seat)
    hint = asyncio.run(suggest("konkan", "expert", view))
    assert hint == asyncio.run(suggest("konkan", "expert", view))
    assert hint.seat == seat and konkan.check_action(state, hint) is None
    cstate = conquian.new_game(ConquianOptions(), "hint")
    cseat = conquian.to_act(cstate)
    chint = asyncio.run(suggest("conquian", "expert", conquian.view(cstate, cseat)))
    assert chint.seat == cseat and conquian.check_action(cstate, chint) is None
