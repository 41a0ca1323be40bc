"""Both games are engines (``sahrat.rules.engine``): each has every member of the
protocol with the protocol's parameters, and a deal can be played through those
members alone. mypy checks the types (``sahrat.rules.record``); these tests check
what is there at run time.

And the Konkan view's ``opening_target``: the total the next opening must reach
(RULES.md §1.5 and §1.11): 51 at a Konkan table, 71 at Konkan 71, the table's
``threshold`` option otherwise; with the escalating opening, more than the last
opening laid at the table this round.
"""

from __future__ import annotations

import inspect
import random
from typing import Any

import pytest

from sahrat.rules import conquian, konkan
from sahrat.rules.cards import parse_card, parse_cards
from sahrat.rules.engine import Engine, GameEngine
from sahrat.rules.errors import RuleError
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import GAMES, engine_for, options_for

MEMBERS = sorted(
    name
    for name, value in vars(GameEngine).items()
    if not name.startswith("_") and inspect.isfunction(value)
)


def test_the_protocol_names_what_the_server_and_the_tools_call() -> None:
    called = sorted(
        [
            "action_from_json",
            "action_to_json",
            "apply",
            "check_action",
            "check_invariants",
            "describe",
            "new_game",
            "score_sheet",
            "simple_actions",
            "timeout_action",
            "to_act",
            "view",
            "views",
        ]
    )
    assert called == MEMBERS


@pytest.mark.parametrize("game", GAMES)
def test_each_game_has_every_member_with_the_protocols_parameters(game: str) -> None:
    engine = engine_for(game)
    assert engine is (conquian if game == "conquian" else konkan)
    for name in MEMBERS:
        member = getattr(engine, name, None)
        assert callable(member), f"{game} has no {name}"
        wanted = list(inspect.signature(getattr(GameEngine, name)).parameters.values())[1:]
        found = list(inspect.signature(member).parameters.values())
        assert [(p.name, p.kind, p.default) for p in found] == [
            (p.name, p.kind, p.default) for p in wanted
        ], f"{game}.{name}"


def _one_deal(engine: Engine, state: Any, seed: str) -> tuple[Any, int]:
    """Play the first deal (or round) to its end from the engine's own legal moves,
    checking every member's promise along the way."""
    rng = random.Random(seed)
    sheet = engine.score_sheet(state)
    finished = "deals" if "deals" in sheet else "rounds"
    assert sheet[finished] == [] and not sheet["over"]
    steps = 0
    while not engine.score_sheet(state)[finished]:
        assert not state.over and steps < 5_000
        seat = engine.to_act(state)
        assert seat is not None
        seats = [None, *range(state.players)]
        together = engine.views(state, seats)
        for viewer in seats:
            assert together[viewer] == engine.view(state, viewer)
        assert "hand" not in together[None] and together[seat]["viewer"] == seat
        moves = engine.simple_actions(state)
        assert moves, engine.describe(state)
        move = rng.choice([*moves, engine.timeout_action(state)])
        assert engine.check_action(state, move) is None
        assert engine.action_from_json(engine.action_to_json(move)) == move
        state, _ = engine.apply(state, move)
        assert engine.check_invariants(state) == []
        steps += 1
    return state, steps


@pytest.mark.parametrize(
    ("game", "values"),
    [("konkan", {"players": 3}), ("konkan71", {"players": 2}), ("conquian", {})],
)
def test_a_deal_is_played_through_the_protocol_alone(game: str, values: dict[str, Any]) -> None:
    engine = engine_for(game)
    state = engine.new_game(options_for(game, values), f"protocol-{game}")
    assert engine.check_invariants(state) == []
    state, steps = _one_deal(engine, state, game)
    assert steps > 10
    assert isinstance(engine.describe(state), str)
    # the next deal is under way; a move out of turn is refused and changes nothing
    seat = engine.to_act(state)
    assert seat is not None
    move = engine.action_to_json(engine.timeout_action(state))
    out_of_turn = engine.action_from_json({**move, "seat": (seat + 1) % state.players})
    before = engine.view(state, seat)
    assert engine.check_action(state, out_of_turn) is not None
    assert engine.view(state, seat) == before


# --- the Konkan view's opening target --------------------------------------------------------


def _targets(state: konkan.KonkanState) -> set[int]:
    """The opening target as every viewer (each seat and a spectator) sees it."""
    views = konkan.views(state, [None, *range(state.players)])
    return {view["opening_target"] for view in views.values()}


def test_the_opening_target_is_51_at_konkan_and_71_at_konkan_71() -> None:
    for game, target in (("konkan", 51), ("konkan71", 71)):
        for players in (2, 3, 4):
            options = KonkanOptions.for_game(game, {"players": players})
            assert _targets(konkan.new_game(options, f"target-{game}")) == {target}
    custom = KonkanOptions.for_game("konkan", {"threshold": 81})
    assert _targets(konkan.new_game(custom, "target-81")) == {81}
    # without a history (replay steps) too
    state = konkan.new_game(KonkanOptions(), "target-replay")
    assert konkan.view(state, None, history=False)["opening_target"] == 51


# Two seats, seat 1 deals: seat 0 opens (15 cards, starting in the play phase) with
# kings and queens, 60 points (J Q K count 10, RULES.md §1.4).
OPENER = "KS KH KD QS QH QD 4C 9D 3S 6H AD 7C JS TD 2D"
OPENING = (tuple(parse_cards("KS KH KD")), tuple(parse_cards("QS QH QD")))


def _opened(game: str, values: dict[str, Any]) -> konkan.KonkanState:
    options = KonkanOptions.for_game(game, {"players": 2, **values})
    deck = konkan.stacked_deck({0: parse_cards(OPENER)}, players=2, dealer=1)
    state = konkan.new_game(options, "target", decks=[deck], first_dealer=1)
    state, _ = konkan.apply(state, konkan.LayDown(0, OPENING))
    state, _ = konkan.apply(state, konkan.Discard(0, parse_card("4C")))
    return state


def test_an_opening_does_not_move_the_target_without_the_escalating_option() -> None:
    assert _targets(_opened("konkan", {})) == {51}


def test_the_escalating_target_is_one_more_than_the_last_opening() -> None:
    # 60 laid at a 51 table: the next opening must total more than 60
    assert _targets(_opened("konkan", {"escalating_opening": True})) == {61}
    # before any opening, the threshold
    options = KonkanOptions.for_game("konkan71", {"players": 2, "escalating_opening": True})
    assert _targets(konkan.new_game(options, "target-71")) == {71}


def test_the_escalating_target_holds_for_konkan_71_openings_above_the_threshold() -> None:
    # aces (11 each), kings and queens: 93 laid at a Konkan 71 table, so 94 next
    hand = "AS AH AD KS KH KD QS QH QD 4C 9D 3S 6H 7C JS"
    options = KonkanOptions.for_game("konkan71", {"players": 2, "escalating_opening": True})
    deck = konkan.stacked_deck({0: parse_cards(hand)}, players=2, dealer=1)
    state = konkan.new_game(options, "target-93", decks=[deck], first_dealer=1)
    melds = tuple(tuple(parse_cards(m)) for m in ("AS AH AD", "KS KH KD", "QS QH QD"))
    state, _ = konkan.apply(state, konkan.LayDown(0, melds))
    state, _ = konkan.apply(state, konkan.Discard(0, parse_card("4C")))
    assert _targets(state) == {94}


def test_the_escalation_starts_again_each_round() -> None:
    # seat 0 goes out as a Hand (110 in melds, then its last discard): round 2's first
    # opening only needs the threshold again
    hand = "2S 3S 4S 5S 6S KS KH KD QS QH QD JS JH JD 4C"
    options = KonkanOptions.for_game("konkan", {"players": 2, "escalating_opening": True})
    deck = konkan.stacked_deck({0: parse_cards(hand)}, players=2, dealer=1)
    state = konkan.new_game(options, "target-round", decks=[deck], first_dealer=1)
    melds = tuple(
        tuple(parse_cards(m)) for m in ("2S 3S 4S 5S 6S", "KS KH KD", "QS QH QD", "JS JH JD")
    )
    state, _ = konkan.apply(state, konkan.LayDown(0, melds))
    assert _targets(state) == {111}
    state, _ = konkan.apply(state, konkan.Discard(0, parse_card("4C")))
    assert state.round == 2
    assert _targets(state) == {51}


@pytest.mark.parametrize("game", ["konkan", "conquian"])
@pytest.mark.parametrize("kind", [["draw"], {"type": "draw"}, 7, None, True])
def test_an_action_whose_type_is_not_a_name_is_a_bad_action(game: str, kind: object) -> None:
    # docs/protocol.md: a malformed action is refused `bad_action`, never a crash
    engine = engine_for(game)
    with pytest.raises(RuleError) as refused:
        engine.action_from_json({"type": kind, "seat": 0})
    assert refused.value.code == "bad_action"
