"""The queue's pairing (``sahrat.server.matchmaking.pairing``): who sits with whom, from
the waiting entries and the time now, as docs/rating.md ("Pairing") says."""

from __future__ import annotations

from sahrat.server.matchmaking.pairing import SPEEDS, Entry, Formation, Rules, fits, pair

RULES = Rules(bot_wait=30.0, base_window=100.0, widen_per_second=10.0, max_window=600.0)
T0 = 1_000_000.0


def entry(
    user_id: int,
    rating: int = 1500,
    *,
    joined: float = T0,
    network: str | None = None,
    players: int = 2,
    game: str = "konkan",
    pool: str = "konkan51",
    speed: str = "normal",
) -> Entry:
    return Entry(
        user_id=user_id,
        game=game,
        pool=pool,
        players=players,
        speed=speed,
        rating=rating,
        network=network if network is not None else f"198.51.100.{user_id}",
        joined_at=joined,
    )


def users(formations: list[Formation]) -> list[tuple[list[int], int]]:
    return [([e.user_id for e in f.entries], f.bots) for f in formations]


def test_two_close_ratings_form_a_table_at_once() -> None:
    assert users(pair([entry(1, 1500), entry(2, 1550)], T0, RULES)) == [([1, 2], 0)]


def test_a_table_forms_only_when_full() -> None:
    three = [entry(i, 1500, players=4) for i in (1, 2, 3)]
    assert pair(three, T0 + 1, RULES) == []
    assert users(pair([*three, entry(4, 1500, players=4)], T0 + 1, RULES)) == [([1, 2, 3, 4], 0)]


def test_far_ratings_wait_until_their_windows_widen() -> None:
    # 300 points apart: the window is 100 at first and widens by 10 a second, so both
    # must have waited 20 s (100 + 10 * 20 = 300) before they sit together.
    pair_of = [entry(1, 1500), entry(2, 1800)]
    assert pair(pair_of, T0 + 19, RULES) == []
    assert users(pair(pair_of, T0 + 20, RULES)) == [([1, 2], 0)]


def test_the_narrowest_window_decides() -> None:
    # The first has waited long (its window is wide); the newcomer's window is 100:
    # a newcomer is not dragged into a match far from their level.
    old, new = entry(1, 1500, joined=T0), entry(2, 1800, joined=T0 + 25)
    assert pair([old, new], T0 + 25, Rules(bot_wait=100.0)) == []
    assert users(pair([old, new], T0 + 45, Rules(bot_wait=100.0))) == [([1, 2], 0)]


def test_the_window_stops_at_its_maximum() -> None:
    assert RULES.window(entry(1), T0 + 10_000) == 600.0
    assert RULES.window(entry(1), T0 + 5) == 150.0
    assert RULES.window(entry(1), T0 - 5) == 100.0  # a clock behind the entry's: no wait


def test_the_oldest_picks_the_closest_ratings() -> None:
    waiting = [
        entry(1, 1500, joined=T0),
        entry(2, 1590, joined=T0 + 1),
        entry(3, 1520, joined=T0 + 2),
    ]
    # 1 (the oldest) takes 3 (20 apart) rather than 2 (90 apart); 2 waits.
    assert users(pair(waiting, T0 + 2, RULES)) == [([1, 3], 0)]


def test_a_fresh_opponent_before_one_met_too_often() -> None:
    # 1 met 3 too often lately (a match of theirs would move neither rating): 1 takes
    # 2, though 3's rating is closer; alone together, the two still meet.
    waiting = [
        entry(1, 1500, joined=T0),
        entry(2, 1590, joined=T0 + 1),
        entry(3, 1510, joined=T0 + 2),
    ]
    repeats = {frozenset((1, 3))}
    assert users(pair(waiting, T0 + 2, RULES, repeats)) == [([1, 2], 0)]
    assert users(pair([waiting[0], waiting[2]], T0 + 2, RULES, repeats)) == [([1, 3], 0)]


def test_never_one_network_twice_at_a_table() -> None:
    same = [entry(1, network="203.0.113.7"), entry(2, network="203.0.113.7")]
    assert pair(same, T0, RULES) == []
    # after the bot wait each gets a table of their own, with a bot
    assert users(pair(same, T0 + 30, RULES)) == [([1], 1), ([2], 1)]


def test_one_household_is_split_over_two_tables() -> None:
    household = "2001:db8:1:200::/56"
    waiting = [
        entry(1, network=household, joined=T0),
        entry(2, network=household, joined=T0 + 1),
        entry(3, joined=T0 + 2),
        entry(4, joined=T0 + 3),
    ]
    assert users(pair(waiting, T0 + 3, RULES)) == [([1, 3], 0), ([2, 4], 0)]


def test_an_unknown_network_is_shared_with_nobody() -> None:
    unknown = [
        Entry(1, "konkan", "konkan51", 2, "normal", 1500, None, T0),
        Entry(2, "konkan", "konkan51", 2, "normal", 1500, None, T0),
    ]
    assert users(pair(unknown, T0, RULES)) == [([1, 2], 0)]  # None is not one network
    assert fits(unknown, RULES, T0)


def test_a_lone_player_gets_bots_after_the_wait() -> None:
    alone = [entry(1, players=4)]
    assert pair(alone, T0 + 29.9, RULES) == []
    assert users(pair(alone, T0 + 30, RULES)) == [([1], 3)]


def test_after_the_wait_whoever_fits_sits_and_bots_take_the_rest() -> None:
    waiting = [entry(1, 1500, players=4), entry(2, 1510, players=4, joined=T0 + 20)]
    assert users(pair(waiting, T0 + 30, RULES)) == [([1, 2], 2)]


def test_only_one_shape_sits_together() -> None:
    waiting = [
        entry(1, players=2),
        entry(2, players=4),
        entry(3, speed="fast"),
        entry(4, pool="konkan71"),
        entry(5, game="conquian", pool="conquian"),
    ]
    assert pair(waiting, T0 + 1, RULES) == []
    formed = pair([*waiting, entry(6, game="conquian", pool="conquian")], T0 + 1, RULES)
    assert users(formed) == [([5, 6], 0)]


def test_each_entry_sits_at_one_table_only() -> None:
    waiting = [entry(i, 1500 + i, joined=T0 + i) for i in range(1, 8)]
    formed = pair(waiting, T0 + 60, RULES)
    seated = [e.user_id for f in formed for e in f.entries]
    assert sorted(seated) == list(range(1, 8))  # every one, once: 3 pairs and a bot table
    assert users(formed)[-1] == ([7], 1)


def test_one_player_twice_counts_once() -> None:
    twice = [entry(1, joined=T0), entry(1, joined=T0 + 1), entry(2)]
    assert users(pair(twice, T0 + 1, RULES)) == [([1, 2], 0)]


def test_the_speeds_are_table_turn_times() -> None:
    assert SPEEDS == {"fast": 15, "normal": 30, "slow": 60}
    assert all(10 <= seconds <= 300 for seconds in SPEEDS.values())  # the option's bounds
