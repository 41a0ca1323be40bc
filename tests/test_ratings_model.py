"""The ratings arithmetic (``sahrat.ratings``, docs/rating.md): an update is openskill's
own Plackett–Luce ``rate()`` for the same places, ties and leavers included; bots keep
their fixed rating; the shown number and the provisional flag; the pools; and the
cool-down of a leaver, escalating and decaying."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from openskill.models import PlackettLuce

from sahrat import ratings
from sahrat.ratings import (
    BOT,
    Cooldown,
    CooldownRule,
    Rating,
    after_completed,
    after_leave,
    cooldown_minutes,
    final_ranks,
    pool_of,
    rate,
    seconds_left,
)

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def openskill_rate(
    before: list[tuple[float, float]], ranks: list[int]
) -> list[tuple[float, float]]:
    model = PlackettLuce()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    return [(team[0].mu, team[0].sigma) for team in model.rate(teams, ranks=ranks)]


# --- pools ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "options", "pool"),
    [
        ("konkan", {}, "konkan51"),
        ("konkan", {"players": 2}, "konkan51"),
        ("konkan", {"players": 3, "threshold": 51}, "konkan51"),
        ("konkan", {"threshold": 71}, "konkan71"),
        ("konkan71", {}, "konkan71"),
        ("konkan71", {"threshold": 71, "players": 4}, "konkan71"),
        ("conquian", {"wins_needed": 1}, "conquian"),
    ],
)
def test_pool_of(game: str, options: dict[str, int], pool: str) -> None:
    assert pool_of(game, options) == pool
    assert pool in ratings.POOLS


# --- the update -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "ranks"),
    [
        ([(25.0, 25 / 3), (25.0, 25 / 3)], [1, 2]),
        ([(25.0, 25 / 3), (25.0, 25 / 3)], [1, 1]),  # a tie
        ([(30.0, 4.0), (22.0, 6.5), (25.0, 25 / 3)], [2, 1, 3]),
        ([(28.0, 3.0), (24.0, 5.0), (20.0, 7.0), (25.0, 2.0)], [1, 2, 2, 4]),  # shared 2nd
        ([(26.0, 5.0), (26.0, 5.0), (26.0, 5.0), (26.0, 5.0)], [1, 1, 1, 1]),
    ],
)
def test_an_update_is_openskills_plackett_luce(
    before: list[tuple[float, float]], ranks: list[int]
) -> None:
    got = rate([Rating(mu, sigma) for mu, sigma in before], ranks, [False] * len(before))
    expected = openskill_rate(before, ranks)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.mu == pytest.approx(theirs[0], abs=1e-12)
        assert mine.sigma == pytest.approx(theirs[1], abs=1e-12)


def test_a_bot_takes_part_at_its_fixed_rating_and_keeps_it() -> None:
    people = [Rating(25.0, 25 / 3), Rating(27.0, 5.0)]
    got = rate([*people, BOT], [2, 3, 1], [False, False, True])
    expected = openskill_rate([(25.0, 25 / 3), (27.0, 5.0), (BOT.mu, BOT.sigma)], [2, 3, 1])
    assert got[2] == BOT  # never updated
    for mine, theirs in zip(got[:2], expected[:2], strict=True):
        assert (mine.mu, mine.sigma) == pytest.approx(theirs, abs=1e-12)
    # the bots' rating is a new player's (docs/rating.md)
    assert (BOT.mu, BOT.sigma) == (PlackettLuce().mu, PlackettLuce().sigma)


def test_winning_raises_and_losing_lowers() -> None:
    winner, loser = rate([Rating(), Rating()], [1, 2], [False, False])
    assert winner.mu > 25 > loser.mu
    assert winner.sigma < 25 / 3 and loser.sigma < 25 / 3


def test_one_seat_is_no_match() -> None:
    assert rate([Rating(30, 2)], [1], [False]) == [Rating(30, 2)]


@pytest.mark.parametrize(
    ("places", "left", "ranks"),
    [
        ([1, 2, 3, 4], [False] * 4, [1, 2, 3, 4]),
        ([1, 2, 3, 4], [True, False, False, False], [4, 1, 2, 3]),  # the winner left: last
        ([1, 2, 3, 4], [True, False, True, False], [3, 1, 3, 2]),  # leavers share last
        ([1, 1, 3], [False, False, False], [1, 1, 3]),  # a tie shares its place
        ([2, 1], [False, False], [2, 1]),
        ([None, 1], [False, False], [2, 1]),  # no place from the engine: after the placed
        ([1, 2], [True, True], [1, 1]),  # everyone left: one shared place
    ],
)
def test_final_ranks(places: list[int | None], left: list[bool], ranks: list[int]) -> None:
    assert final_ranks(places, left) == ranks


# --- the shown number ---------------------------------------------------------------------


def test_the_shown_number_is_the_mean_scaled() -> None:
    """docs/rating.md: shown = round(1500 + 40 (mu - 25)); sigma changes only the "?"."""
    assert ratings.shown(Rating()) == 1500  # a new player
    for mu, sigma, expected in [(30.0, 2.0, 1700), (18.5, 4.25, 1240), (25.0, 1.0, 1500)]:
        assert ratings.shown(Rating(mu, sigma)) == expected


def test_provisional_while_sigma_is_high() -> None:
    assert ratings.provisional(Rating())  # 8.33 > 6
    assert not ratings.provisional(Rating(25, 5.9))
    assert ratings.provisional(Rating(25, 5.9), threshold=5.0)


# --- cool-downs ----------------------------------------------------------------------------

RULE = CooldownRule(
    base_minutes=5, growth=3, max_minutes=24 * 60, decay_hours=24, forgive_matches=3
)


def test_leaves_escalate_the_cool_down() -> None:
    state = Cooldown()
    bars = []
    for _ in range(8):  # leave after leave, no time between them to decay the score
        state = after_leave(state, T0, RULE)
        assert state.until is not None
        bars.append((state.until - T0).total_seconds() / 60)
    # base 5 minutes, times 3 for each further leave, at most 24 hours
    assert bars == [5, 15, 45, 135, 405, 1215, 1440, 1440]
    assert state.leaves == 8 and state.score == 8


def test_waiting_out_a_bar_decays_the_score_a_little() -> None:
    first = after_leave(Cooldown(), T0, RULE)
    assert first.until is not None
    second = after_leave(first, first.until, RULE)  # right after the 5 minutes
    assert second.score == pytest.approx(2 - 5 / 60 / 24)
    assert second.until == first.until + timedelta(minutes=15)


def test_the_score_decays_with_time() -> None:
    state = after_leave(Cooldown(), T0, RULE)
    state = after_leave(state, T0 + timedelta(minutes=6), RULE)
    assert state.score == pytest.approx(2 - 6 / 60 / 24)
    # a day later the score lost one: a third leave counts as a second
    later = T0 + timedelta(days=1, minutes=6)
    third = after_leave(state, later, RULE)
    assert third.until == later + timedelta(minutes=15)
    # two more days: clean again, a leave is a first one
    clean = after_leave(third, later + timedelta(days=2), RULE)
    assert clean.until == later + timedelta(days=2, minutes=5)


def test_completed_matches_forgive_a_leave() -> None:
    state = after_leave(Cooldown(), T0, RULE)
    state = after_leave(state, T0, RULE)  # two leaves at once: score 2
    for _ in range(3):
        state = after_completed(state, T0, RULE)
    assert state.score == pytest.approx(1.0)
    assert state.until == T0 + timedelta(minutes=15)  # the bar itself is served in full
    assert after_leave(state, T0 + timedelta(hours=1), RULE).until == T0 + timedelta(
        hours=1, minutes=15
    )  # score 1 + 1 less an hour's decay: the second step, 15 minutes
    for _ in range(10):
        state = after_completed(state, T0, RULE)
    assert state.score == 0.0  # never below a clean record


def test_a_longer_bar_running_is_kept() -> None:
    state = Cooldown(score=0.0, until=T0 + timedelta(hours=5), changed_at=T0)
    assert after_leave(state, T0, RULE).until == T0 + timedelta(hours=5)


def test_seconds_left() -> None:
    state = after_leave(Cooldown(), T0, RULE)
    assert seconds_left(state, T0) == 300
    assert seconds_left(state, T0 + timedelta(minutes=4)) == 60
    assert seconds_left(state, T0 + timedelta(minutes=6)) == 0
    assert seconds_left(Cooldown(), T0) == 0


@pytest.mark.parametrize(
    ("score", "minutes"), [(0.0, 0.0), (0.3, 5.0), (1.0, 5.0), (1.01, 15.0), (2.0, 15.0)]
)
def test_cooldown_minutes(score: float, minutes: float) -> None:
    assert cooldown_minutes(score, RULE) == minutes


def test_no_decay_when_switched_off() -> None:
    rule = CooldownRule(decay_hours=0, forgive_matches=0)
    state = after_leave(Cooldown(), T0, rule)
    state = after_completed(state, T0 + timedelta(days=100), rule)
    assert state.score == 1.0
