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
    moves: list[Any] = []
    while not state.over and len(moves) < 150:
        seat = conquian.to_act(state)
        assert seat is not None
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


# --- the Konkan rollouts -----------------------------------------------------------------------


def konkan_game(hands: dict[int, str], *, rounds: int = 5) -> konkan.KonkanState:
    from sahrat.rules.cards import parse_cards

    options = KonkanOptions.for_game("konkan", {"players": 4, "rounds": rounds})
    order = konkan.stacked_deck(
        {seat: parse_cards(cards) for seat, cards in hands.items()}, [], players=4, dealer=3
    )
    return konkan.new_game(options, "scenario", decks=[order], first_dealer=3)


def test_the_expert_lays_a_hand_when_it_holds_one() -> None:
    # the opener's 15 cards: 2S-6S, three 7s, three kings, three 8s (14 melded) and 9D
    state = konkan_game({0: "2S 3S 4S 5S 6S 7H 7D 7C KS KH KD 8H 8D 8C 9D"})
    bot = expert.ExpertBot("konkan", seed="hand", budget=60.0)
    action = bot.act(konkan.view(state, 0))
    assert isinstance(action, konkan.LayDown), action
    assert sum(len(meld) for meld in action.melds) == 14
    state, _ = konkan.apply(state, action)
    action = bot.act(konkan.view(state, 0))
    assert action == konkan.Discard(0, parse("9D"))
    state, events = konkan.apply(state, action)
    finish = [event for event in events if event.type == "round_end"]
    assert finish and finish[0].public["finish"] == "hand"


def test_a_committed_expert_holding_a_konkan_lays_it() -> None:
    state = konkan_game({0: "3C JK 7C 6C 4C' 2C 5C' 8C' QD AC' JC 9H TC 9C' JK'"}, rounds=1)
    state, _ = konkan.apply(state, konkan.Commit(0))
    action = expert.ExpertBot("konkan", seed="k").act(konkan.view(state, 0))
    assert isinstance(action, konkan.LayDown), action
    state, _ = konkan.apply(state, action)
    assert [str(card) for card in state.hands[0]] == ["QD"]


def parse(text: str) -> Any:
    from sahrat.rules.cards import parse_card

    return parse_card(text)


def play_konkan(seed: str, decisions: int = 60) -> list[Any]:
    players: list[Any] = [expert.ExpertBot("konkan", seed=seed, budget=60.0).act]
    players += [simple_konkan] * 3
    state = konkan.new_game(KonkanOptions(), "expert-seeded")
    moves: list[Any] = []
    while not state.over and len(moves) < decisions:
        seat = konkan.to_act(state)
        assert seat is not None
        action = players[seat](konkan.view(state, seat))
        assert konkan.check_action(state, action) is None
        moves.append(action)
        state, _ = konkan.apply(state, action)
    return moves


def test_a_seed_gives_one_line_of_konkan_play() -> None:
    assert play_konkan("one") == play_konkan("one")


def test_every_line_weighed_is_a_legal_move_of_the_seat() -> None:
    # each line the expert may play becomes a move the engine accepts at that point: draw
    # or take the pile's card, the opening's melds, then the discard it was valued with
    from sahrat.bots.konkan_bot import KonkanBot
    from sahrat.bots.konkan_expert import KonkanExpert
    from sahrat.bots.konkan_lines import Position, weighed_lines

    state = konkan.new_game(KonkanOptions(), "lines")
    strong = KonkanBot(strict=True)
    compared = drawn = 0
    while not state.over and (compared < 40 or drawn < 4):
        seat = konkan.to_act(state)
        view = konkan.view(state, seat)
        if seat != 0:
            state, _ = konkan.apply(state, simple_konkan(view))
            continue
        action = strong.act(view)
        position = Position.of(state, seat)
        for line in weighed_lines(position, "draw") if view["phase"] == "draw" else ():
            chooser = KonkanExpert(KonkanBot(), samples=1)
            chooser.search = lambda *_args, line=line: line  # type: ignore[method-assign]
            move = chooser.decide(view, action, position.hidden, random.Random(0), 1e9)
            assert konkan.check_action(state, move) is None, (line, move)
            assert isinstance(move, konkan.Draw) == (line.move == "draw"), (line, move)
            drawn += 1
        if view["phase"] == "play":
            for line in weighed_lines(position, "play"):
                chooser = KonkanExpert(KonkanBot(), samples=1)
                chooser.search = lambda *_args, line=line: line  # type: ignore[method-assign]
                move = chooser.decide(view, action, position.hidden, random.Random(0), 1e9)
                assert konkan.check_action(state, move) is None, (line, move)
                if isinstance(move, konkan.LayDown):
                    after, _ = konkan.apply(state, move)
                    discard = chooser.decide(
                        konkan.view(after, seat),
                        strong.act(konkan.view(after, seat)),
                        [],
                        random.Random(0),
                        1e9,
                    )
                    assert konkan.check_action(after, discard) is None, (line, discard)
                compared += 1
        state, _ = konkan.apply(state, action)
    assert compared >= 20 and drawn >= 4


def test_a_plain_draw_is_quicker_than_an_opening_to_weigh() -> None:
    from sahrat.bots.levels import pause_factor

    state = konkan.new_game(KonkanOptions(), "pace")
    opening = konkan.view(state, konkan.to_act(state))  # the opener's 15 cards, nobody open
    draw = dict(opening, phase="draw", discard_top=None)
    assert 0.5 <= pause_factor("konkan", draw) < pause_factor("konkan", opening) <= 2.0


def test_the_simulated_round_follows_the_engine_on_most_deals() -> None:
    # The rollouts' round (face masks, no joker swaps, no reshuffle) played by the simple
    # policy for every seat against the engine played by the simple player: the same
    # scores on most deals (they part where the engine's player picks a twin card or a
    # joker's place that the face-level search does not see).
    from sahrat.bots.fastmelds import encode
    from sahrat.bots.konkan_deals import face_of
    from sahrat.bots.konkan_sim import Round
    from sahrat.rules.melds import AceValue

    same = 0
    deals = 30
    for index in range(deals):
        state = konkan.new_game(KonkanOptions(), f"sim-{index}")
        hands, jokers = zip(*(encode(hand) for hand in state.hands), strict=True)
        stock = [face_of(card) for card in state.stock]
        sim = Round(
            list(hands),
            list(jokers),
            [False] * 4,
            [],
            stock,
            -1,
            state.turn,
            51,
            AceValue.ALWAYS_11,
            15,
        )
        sim.play_turn(sim.turn, draw=False)
        sim.run(500)
        while not state.over and not state.results:
            seat = konkan.to_act(state)
            state, _ = konkan.apply(state, simple_konkan(konkan.view(state, seat)))
        same += list(state.results[0].scores) == sim.scores()
    assert same >= deals * 3 // 4


def test_waiting_for_a_core_does_not_cut_the_sampling(monkeypatch: Any) -> None:
    # the budget is the deciding thread's own work: a playout that waits 5 ms without
    # working (as a process waits for a core on a loaded machine) still lets every sample
    # run, where a wall-clock cap of 40 ms would stop after two to four of the seven
    import time as _time

    playouts: list[int] = []
    real = expert.conquian_playout

    def waiting_playout(deal: Any, line: Any, seat: int) -> float:
        _time.sleep(0.005)
        playouts[-1] += 1
        return real(deal, line, seat)

    monkeypatch.setattr(expert, "conquian_playout", waiting_playout)
    bot = expert.ExpertBot("conquian", seed="waits", samples=7)
    state = conquian.new_game(ConquianOptions(), "waits")
    sampled = 0
    while not state.over and sampled < 3:
        seat = conquian.to_act(state)
        view = conquian.view(state, seat)
        if seat == 0:
            playouts.append(0)
            action = bot.act(view)
            assert playouts[-1] % 7 == 0  # every line met every one of the 7 samples
            sampled += playouts[-1] > 0
        else:
            action = simple_conquian(view)
        state, _ = conquian.apply(state, action)
    assert sampled == 3
