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
    NO_OPPONENT,
    REPEAT,
    SHORT,
    Contender,
    Cooldown,
    CooldownRule,
    Rating,
    after_completed,
    after_leave,
    cooldown_minutes,
    final_ranks,
    pool_of,
    rate,
    rate_each,
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


# --- who a match is rated against (docs/rating.md) ------------------------------------------

TABLE = [(30.0, 4.0), (22.0, 6.5), (25.0, 25 / 3), (27.0, 3.0)]
RANKS = [2, 1, 4, 3]


def test_when_everyone_counts_each_update_is_the_joint_one() -> None:
    seats = [
        Contender(Rating(mu, sigma), rank) for (mu, sigma), rank in zip(TABLE, RANKS, strict=True)
    ]
    got = rate_each(seats, played=True)
    for outcome, theirs in zip(got, openskill_rate(TABLE, RANKS), strict=True):
        assert outcome.unrated is None
        assert (outcome.rating.mu, outcome.rating.sigma) == pytest.approx(theirs, abs=1e-12)


def test_a_seat_hardly_played_feeds_nobody_but_is_rated_itself() -> None:
    # seat 1 (hardly played) won: the others are rated as if it had not been there; it
    # is rated against all of them
    seats = [
        Contender(Rating(*TABLE[0]), 2),
        Contender(Rating(*TABLE[1]), 1, played=False),
        Contender(BOT, 4, bot=True),
        Contender(Rating(*TABLE[3]), 3),
    ]
    got = rate_each(seats, played=True)
    without = openskill_rate([TABLE[0], (BOT.mu, BOT.sigma), TABLE[3]], [2, 4, 3])
    assert (got[0].rating.mu, got[0].rating.sigma) == pytest.approx(without[0], abs=1e-12)
    assert (got[3].rating.mu, got[3].rating.sigma) == pytest.approx(without[2], abs=1e-12)
    everyone = openskill_rate([TABLE[0], TABLE[1], (BOT.mu, BOT.sigma), TABLE[3]], RANKS)
    assert (got[1].rating.mu, got[1].rating.sigma) == pytest.approx(everyone[1], abs=1e-12)
    assert got[2].rating == BOT and all(o.unrated is None for o in got)


def test_a_pair_met_too_often_is_not_rated_at_all() -> None:
    # seats 0 and 1 met too often: neither moves, even against the others (a partner
    # who throws the match hands the farmer the others' places too); the others are
    # rated against everyone as usual
    seats = [
        Contender(Rating(mu, sigma), rank) for (mu, sigma), rank in zip(TABLE, RANKS, strict=True)
    ]
    got = rate_each(seats, played=True, repeats={frozenset((0, 1))})
    assert [(o.rating, o.unrated) for o in got[:2]] == [
        (Rating(*TABLE[0]), REPEAT),
        (Rating(*TABLE[1]), REPEAT),
    ]
    joint = openskill_rate(TABLE, RANKS)
    for outcome, theirs in zip(got[2:], joint[2:], strict=True):
        assert outcome.unrated is None
        assert (outcome.rating.mu, outcome.rating.sigma) == pytest.approx(theirs, abs=1e-12)


def test_two_seats_that_met_too_often_do_not_move() -> None:
    seats = [Contender(Rating(30, 4), 1), Contender(Rating(20, 4), 2)]
    got = rate_each(seats, played=True, repeats={frozenset((0, 1))})
    assert [(o.rating, o.unrated) for o in got] == [
        (Rating(30, 4), REPEAT),
        (Rating(20, 4), REPEAT),
    ]


def test_nobody_moves_after_a_match_not_really_played() -> None:
    seats = [Contender(Rating(30, 4), 1), Contender(BOT, 2, bot=True)]
    got = rate_each(seats, played=False)
    assert [(o.rating, o.unrated) for o in got] == [(Rating(30, 4), SHORT), (BOT, None)]


def test_a_guest_feeds_guests_and_bots_only() -> None:
    # an account, a guest and a bot: the account is rated against the bot alone; the
    # guest against both
    table = [(26.0, 5.0), (24.0, 7.0), (BOT.mu, BOT.sigma)]
    seats = [
        Contender(Rating(*table[0]), 2),
        Contender(Rating(*table[1]), 1, guest=True),
        Contender(BOT, 3, bot=True),
    ]
    got = rate_each(seats, played=True)
    alone = openskill_rate([table[0], table[2]], [2, 3])
    assert (got[0].rating.mu, got[0].rating.sigma) == pytest.approx(alone[0], abs=1e-12)
    joint = openskill_rate(table, [2, 1, 3])
    assert (got[1].rating.mu, got[1].rating.sigma) == pytest.approx(joint[1], abs=1e-12)
    # two guests rate each other as two accounts would
    two = [Contender(Rating(), 1, guest=True), Contender(Rating(), 2, guest=True)]
    joint = openskill_rate([(25.0, 25 / 3)] * 2, [1, 2])
    for outcome, theirs in zip(rate_each(two, played=True), joint, strict=True):
        assert (outcome.rating.mu, outcome.rating.sigma) == pytest.approx(theirs, abs=1e-12)


def test_with_nobody_who_counts_a_rating_stays() -> None:
    # two seats neither of which really played: nobody to be rated against
    seats = [Contender(Rating(), 1, played=False), Contender(Rating(), 2, played=False)]
    got = rate_each(seats, played=True)
    assert [(o.rating, o.unrated) for o in got] == [
        (Rating(), NO_OPPONENT),
        (Rating(), NO_OPPONENT),
    ]


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


# --- what the table hands the store: a match really played, each person's own turns ----


@pytest.mark.parametrize(
    ("rounds", "played"),
    [
        ([{"winner": 0}, {"winner": 1}, {"winner": 0}], True),  # three rounds gone out
        ([{"winner": 0}, {"winner": None}, {"winner": 1}], False),  # one of them void
        ([{"winner": 0}], False),  # a one-round table
    ],
)
def test_a_rated_match_is_played_by_the_counted_match_minimums(
    rounds: list[dict[str, int | None]], played: bool
) -> None:
    from sahrat.server.table.rated import rated_match
    from sahrat.server.table.seating import Seating
    from sahrat.settings import Settings

    rated = rated_match(
        game="konkan",
        options={"players": 2},
        row={"score_sheet": {"rounds": rounds, "places": [1, 2]}, "winner_seat": 0},
        players=[{"seat": 0, "own_turns": 12}, {"seat": 1, "own_turns": 4}],
        seating=Seating(seats=[7, 8], bots=[None, None]),
        table_id=1,
        start_seq=0,
        settings=Settings(),
        now=T0,
    )
    assert rated.played is played  # the defaults: 3 rounds ended by a player going out
    assert [seat.own_turns for seat in rated.seats] == [12, 4]
    assert rated.min_turns == 10 and rated.repeat_limit == 3
