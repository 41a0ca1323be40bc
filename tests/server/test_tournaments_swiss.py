"""A paid Swiss on a real server (SQLite, then PostgreSQL), played to its end over real
WebSockets (docs/tournaments.md, "Swiss by tables"): 10 Konkan players, 3 rounds. Two
registered players do not play their round-1 tables: one never comes (the timer plays
their turns, and forfeits the seat to a bot if the match lasts long enough), one leaves
as soon as the table is dealt, before any move (a bot plays it). Both are no-shows
(dropped at their first table without a move of their own, bot seats with no standing
whose points are as real as anyone's for their table-mates), and they sit in no later
round. One player leaves their round-2 table
after their first move, in their first turn (a round can end before anyone's second
turn; a bot finishes it) and sits in no round 3. The server is killed (SIGKILL) in the
middle of round 2 and started again.

A Swiss seats no bot entrants of its own (only a knock-out's empty seats get bots), so
the bots here are those the no-shows' and the leaver's seats are played by. It is
paid (a fee of 100) so that the Swiss's standings, shared places and all, decide
prizes, and the no-shows' fees stay in the pool, which the free case would not show.

The people have ratings of their own, all different, so the seeds (the last tie-break
of the seating order) are the rating order. Every expected value from the written
rules:

* table sizes: 10 players a 4 and two 3s; 8 (round 2) two 4s; 7 (round 3) a 4 and a 3;
* round 1 by rating: the four strongest at table 1, the next three at table 2;
* the order of a later round: points, then match total (Konkan: lower is better),
  then opponents' strength, then seed; the seating is checked against what the rules
  promise, not against the fewest repeats of all seatings (which they do not promise):
  the greedy of "Grouping" is computed here; when it seats nobody with a former
  table-mate the tables are exactly its; otherwise the tables repeat no more meetings
  than it, and no exchange of two players between two tables lowers the repeats;
* each table's places are its match's score sheet's; place p at a table of n scores
  3(n+1-2p)/(n-1), tied places the average of the positions they span;
* the standings (the no-shows left out): by points, then match total, then opponents'
  strength (the average of the points of every opponent met, bots' seats included),
  sharing a place only when all three are equal, rating and entry id for the order;
  the leaver keeps their standing, 2 rounds played, out in round 2;
* the prizes: the pool is the 10 fees less the house's 10 %, 3 places paid (8 with a
  standing) at 50 / 30 / 20 %, shared places sharing their positions' prizes; held in
  the complaint window; the ledger and every balance as in the knock-out.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from .harness import Api, ServerProcess
from .tournament_support import (
    FEE,
    TOURNAMENT_ENV,
    WELCOME,
    Driver,
    RestartInRound,
    WindowWatch,
    check_ledger,
    detail,
    first_match,
    iso_in,
    konkan_table_sizes,
    make_tournament,
    prize_pool,
    rated_people,
    split_prizes,
    table_points,
)

ROUNDS = 3
RATINGS = [1900, 1860, 1820, 1780, 1740, 1700, 1660, 1620, 1580, 1540]
NO_SHOW_SEEDS = (2, 9)  # at tables 1 and 3 of round 1
LEAVER_SEED = 6
LEAVE_ROUND = RESTART_ROUND = 2

Met = dict[frozenset[int], int]


def repeats(tables: Sequence[Sequence[int]], met: Met) -> int:
    """The earlier meetings of the pairs seated together, each pair once per meeting."""
    return sum(met.get(frozenset(pair), 0) for t in tables for pair in itertools.combinations(t, 2))


def greedy(ordered: list[int], sizes: list[int], met: Met) -> list[list[int]]:
    """ "Grouping", step 1: each table, top first, takes the best player left, then seat
    by seat the best-standing player left who has met nobody at the table (if every one
    has, the one adding the fewest earlier meetings)."""
    left = list(ordered)
    tables = []
    for size in sizes:
        table = [left.pop(0)]
        while len(table) < size:
            cost = [sum(met.get(frozenset((c, o)), 0) for o in table) for c in left]
            table.append(left.pop(cost.index(min(cost))))
        tables.append(table)
    return tables


def no_exchange_helps(tables: list[list[int]], met: Met) -> bool:
    """Whether no exchange of two players between two tables lowers the repeats."""
    now = repeats(tables, met)
    for a, b in itertools.combinations(range(len(tables)), 2):
        for x, y in itertools.product(tables[a], tables[b]):
            swapped = [list(t) for t in tables]
            swapped[a][swapped[a].index(x)] = y
            swapped[b][swapped[b].index(y)] = x
            if repeats(swapped, met) < now:
                return False
    return True


def test_a_swiss_of_10_with_no_shows_a_drop_out_and_a_restart(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    server = start_server(**TOURNAMENT_ENV)

    async def scenario() -> dict[str, Any]:
        api = Api(server)
        try:
            rated = await rated_people(database, [api], "sw", RATINGS)
            people, tokens, rating = rated.accounts, rated.tokens, rated.rating
            made = await make_tournament(
                api,
                people[0][0],
                name="Evening Swiss",
                game="konkan",
                format="swiss",
                seats=len(people),
                rounds=ROUNDS,
                starts_at=iso_in(8),
                fee=FEE,
            )
            assert (made["state"], made["round_count"]) == ("registering", ROUNDS)
            await rated.register(made["id"])
            before = await detail(api, made["id"])
            assert {e["user_id"]: e["rating"] for e in before["entrants"]} == rating
            absent = {people[s - 1][1]["id"] for s in NO_SHOW_SEEDS}
            leaver = people[LEAVER_SEED - 1][1]["id"]
            driver = Driver(
                server,
                api,
                "konkan",
                tokens,
                # one never comes (the timer plays their turns until it forfeits the seat,
                # or the match ends first), one walks out before a move of their own
                absent={people[NO_SHOW_SEEDS[0] - 1][1]["id"]},
                walk_out={people[NO_SHOW_SEEDS[1] - 1][1]["id"]},
                leave_after={leaver: 1},
                leave_in={leaver: LEAVE_ROUND},
            )
            window = WindowWatch(api, database)
            restarts = RestartInRound(server, api, RESTART_ROUND, then=window)
            driver.after_move = restarts.after_move
            done = await driver.run(made["id"], until=("finished",), during=restarts.look)
            assert restarts.restarted, (
                f"the server was not restarted in the middle of round {RESTART_ROUND}"
            )
            assert window.seen, "the complaint window was never seen"
            done["test"] = {
                "absent": absent,
                "leaver": leaver,
                "left_at": driver.left_at.get(leaver),
                "tokens": tokens,
                "held": window.seen[0],
            }
            return done
        finally:
            await api.aclose()

    done = asyncio.run(scenario())
    asyncio.run(check_swiss(database, done))


async def check_swiss(database: str, done: dict[str, Any]) -> None:
    facts = done["test"]
    entrants = {e["entry"]: e for e in done["entrants"]}
    entry_of = {e["user_id"]: e["entry"] for e in done["entrants"]}
    user_of = {e: row["user_id"] for e, row in entrants.items()}
    rating = {e: row["rating"] for e, row in entrants.items()}
    seed = {e: n for n, e in enumerate(sorted(entrants, key=lambda e: -rating[e]), start=1)}
    no_shows = {entry_of[u] for u in facts["absent"]}
    leaver = entry_of[facts["leaver"]]
    assert len(entrants) == len(RATINGS) and not any(row["bot"] for row in entrants.values())
    assert {e for e, row in entrants.items() if row["no_show"]} == no_shows
    assert {e for e, row in entrants.items() if row["dropped"]} == no_shows | {leaver}
    gone_after = {1: no_shows, 2: no_shows | {leaver}, 3: no_shows | {leaver}}

    rounds = done["rounds"]
    assert [r["round"] for r in rounds] == list(range(1, ROUNDS + 1))
    points: dict[int, Fraction] = dict.fromkeys(entrants, Fraction(0))
    totals: dict[int, int] = dict.fromkeys(entrants, 0)
    opponents: dict[int, list[int]] = {e: [] for e in entrants}
    played: dict[int, int] = dict.fromkeys(entrants, 0)
    met: Met = {}

    def strength(e: int) -> Fraction:
        if not opponents[e]:
            return Fraction(0)
        return sum((points[o] for o in opponents[e]), Fraction(0)) / len(opponents[e])

    for round_no, round_ in enumerate(rounds, start=1):
        tables = sorted(round_["tables"], key=lambda t: t["table_no"])
        assert [t["table_no"] for t in tables] == list(range(1, len(tables) + 1))
        seated = [list(t["seats"]) for t in tables]
        players = [e for e in entrants if e not in gone_after.get(round_no - 1, set())]
        assert sorted(e for t in seated for e in t) == sorted(players)
        sizes = konkan_table_sizes(len(players))
        assert [len(t) for t in seated] == sizes
        ordered = sorted(players, key=lambda e: (-points[e], totals[e], -strength(e), seed[e]))
        best = greedy(ordered, sizes, met)
        if repeats(best, met) == 0:  # nobody with a former table-mate: the greedy's tables
            assert [sorted(t) for t in seated] == [sorted(t) for t in best], round_no
        assert repeats(seated, met) <= repeats(best, met), round_no
        assert no_exchange_helps(seated, met), round_no
        if round_no == 1:  # by rating: the four strongest at table 1
            assert sorted(seed[e] for e in seated[0]) == [1, 2, 3, 4]
        for table in tables:
            seats = list(table["seats"])
            assert table["state"] == "finished"
            sheet = (await first_match(database, table["table_id"]))["score_sheet"]
            places = {e: sheet["places"][seat] for seat, e in enumerate(seats)}
            assert {int(k): v for k, v in table["places"].items()} == places
            for entry, scored in table_points(places).items():
                points[entry] += scored
            for seat, entry in enumerate(seats):
                totals[entry] += sheet["totals"][seat]
                opponents[entry] += [e for e in seats if e != entry]
                played[entry] += 1
            for pair in itertools.combinations(seats, 2):
                met[frozenset(pair)] = met.get(frozenset(pair), 0) + 1
    assert facts["left_at"] in {t["table_id"] for t in rounds[LEAVE_ROUND - 1]["tables"]}

    people = [e for e in entrants if e not in no_shows]
    key = {e: (-points[e], totals[e], -strength(e)) for e in people}
    lines = done["standings"]
    assert [line["entry"] for line in lines] == sorted(
        people, key=lambda e: (key[e], -rating[e], e)
    )
    for line in lines:
        e = line["entry"]
        assert line["place"] == 1 + sum(key[o] < key[e] for o in people)
        assert Fraction(line["points"]) == points[e]
        assert line["match_total"] == totals[e]
        assert Fraction(line["opponents_strength"]) == strength(e)
        assert line["rounds_played"] == played[e] == (LEAVE_ROUND if e == leaver else ROUNDS)
        assert line["out_in_round"] == (LEAVE_ROUND if e == leaver else None)

    pool = prize_pool(len(entrants))
    assert done["pool"] == pool
    coins = split_prizes(pool, [line["place"] for line in lines])
    assert [line["prize"] for line in lines] == coins
    assert [line["prize"] for line in facts["held"]["standings"]] == coins
    won = {user_of[line["entry"]]: prize for line, prize in zip(lines, coins, strict=True)}
    await check_ledger(database, done["id"], FEE, list(facts["tokens"]), pool, won, WELCOME)
