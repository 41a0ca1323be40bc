"""The value of a seat's round when the expert's play-outs stop early
(:mod:`sahrat.bots.konkan_value`): a fitted table of mean final scores, checked against
what the rules make of a round (§1.8) rather than against its own numbers."""

from __future__ import annotations

import random

from sahrat.bots import konkan_value
from sahrat.bots.konkan_deals import base_round, sample
from sahrat.bots.konkan_lines import Position, play_line, weighed_lines
from sahrat.bots.konkan_sim import Round
from sahrat.rules import konkan
from sahrat.rules.options import KonkanOptions


def table() -> dict[tuple[int, ...], tuple[float, int]]:
    return konkan_value._table()


def test_every_estimate_is_a_score_a_round_can_give() -> None:
    # §1.8: -60 (out with a Hand) is the least a seat can score; 200 (unopened when
    # another went out with a Hand) the most a seat that never opened pays
    means = [mean for mean, _count in table().values()]
    assert means and all(-60 <= mean <= 200 for mean in means)


def test_an_unopened_seat_far_from_the_target_expects_to_pay_more() -> None:
    # four players, unopened, fourteen cards: a hand that holds its opening opens at its
    # next turn, one 35 points short often pays the 100 of §1.8 at the round's end
    near = table()[(4, 0, 0, 14)][0]
    far = table()[(4, 0, 7, 14)][0]
    assert near + 20 < far


def test_an_opened_seat_with_more_to_pay_expects_to_pay_more() -> None:
    # four players, opened, four cards in hand: 10-14 points against 40-44 points
    light = table()[(4, 1, 2, 4)][0]
    heavy = table()[(4, 1, 8, 4)][0]
    assert light + 5 < heavy


def test_a_round_that_ended_is_valued_by_its_own_scores() -> None:
    game = konkan_value.deal(random.Random(3), 4, 0, 51)
    game.play_turn(0, draw=False)
    game.run()
    assert game.turn < 0
    assert konkan_value.scores(game) == [float(score) for score in game.scores()]


def test_every_situation_of_a_simulated_round_has_a_value() -> None:
    rng = random.Random(5)
    for players in (2, 3, 4):
        for target in (51, 71):
            game: Round = konkan_value.deal(rng, players, 0, target)
            game.play_turn(0, draw=False)
            while game.turn >= 0:
                values = konkan_value.scores(game)
                assert len(values) == players
                game.play_turn(game.turn)


def test_the_fit_is_one_table_for_its_seed() -> None:
    assert konkan_value.fit(30, "a") == konkan_value.fit(30, "a")
    assert konkan_value.fit(30, "a") != konkan_value.fit(30, "b")


def test_a_horizon_past_the_round_end_gives_the_whole_play_out() -> None:
    # cut after 500 turns, a play-out has ended by itself: its value is the round's own
    state = konkan.new_game(KonkanOptions(), "horizon")
    seat = konkan.to_act(state)
    position = Position.of(state, seat)
    lines = weighed_lines(position, "play")
    assert lines
    base = base_round(position.me)
    for index in range(8):
        world = sample(position.me, base, position.hidden, random.Random(index))
        for line in lines:
            whole = play_line(position, world.copy(), line, False)
            assert play_line(position, world.copy(), line, False, 500) == whole
