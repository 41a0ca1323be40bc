"""A paid knock-out on a real server (SQLite, then PostgreSQL), played to its end over
real WebSockets (docs/tournaments.md): 16 Konkan seats, two go through from each table
of 4. Thirteen people register (more than ``min_fill``, 8 by default: half the seats),
so three bot entrants take the empty seats at the start. One registered player never
opens their table and leaves it as soon as it is dealt, before any move (a bot plays
the seat: dropped at their first table without a move of their own, a no-show, with
no standing; one who never came at all would be forfeited by the timer only if the
match lasted two of their turns, which one Konkan round does not always do), one
leaves their first table after their first move, in their first turn (a round can
end before anyone's second turn; a bot finishes it: dropped, with the standing
the bot earned), and the server is killed (SIGKILL) in the middle of the second round
and started again.

The people have ratings of their own, all different and none a bot's, so the seeds are
the rating order and every table of every round can be told from the rules. The
no-show and the leaver are the first and eighth seeds, whom the snake seats at table 1
with a bot: that table sends one person through, so round 2 seats 7 (a table of 4 and
one of 3) and sends 4 to the final.

Every expected value comes from the written rules, never from the server's answers:

* round 1 deals the seeds in snake order to 4 tables of 4 (seeds 1-4 to tables 1-4,
  5-8 back from 4 to 1, ...); later rounds seat those who went through first from
  their table, then the second ones, each by seed, snaked over the table sizes of the
  count (7: a 4 and a 3);
* each table's places are its match's score sheet's; through go the two best places
  of a table who are people still in it (a tie by the better match total, then the
  seat order), one from a table of 2;
* the standings: the final's players by their place there, then the outs of round 2,
  then of round 1, each by placement points at their last table and then its match
  total (sharing a place when both are equal), rating and entry id for the order; the
  no-show and the bots have none; each line's points, match total, opponents' strength,
  rounds played and round out;
* the prizes: the pool is the 13 fees less the house's 10 %, paid over 4 places (12
  players with a standing: up to 16) at 40 / 30 / 20 / 10 %, the coins left over to
  the first, shared places sharing their positions' prizes; held during the complaint
  window (nothing but fees in the ledger), then paid;
* every coin through the ledger: each fee into the escrow, each prize and the house's
  share out of it, each once, leaving it empty, and every balance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .harness import Api, ServerProcess
from .knockout_expectations import check_standings, snake, through
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
    tournament_ledger,
)

SEATS = 16
# 8 above a bot's rating and 5 below: seeds 1-8, three bots, seeds 12-16
RATINGS = [1900, 1860, 1820, 1780, 1740, 1700, 1660, 1620, 1400, 1360, 1320, 1280, 1240]
NO_SHOW_SEED, LEAVER_SEED = 1, 8  # both at table 1 of round 1, with a bot
RESTART_ROUND = 2


def test_a_knockout_of_16_with_bots_a_no_show_a_drop_out_and_a_restart(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    server = start_server(**TOURNAMENT_ENV)

    async def scenario() -> None:
        api = Api(server)
        try:
            rated = await rated_people(database, [api], "ko", RATINGS)
            people, tokens, rating = rated.accounts, rated.tokens, rated.rating
            made = await make_tournament(
                api,
                people[0][0],
                name="Saturday cup",
                game="konkan",
                format="knockout",
                seats=SEATS,
                starts_at=iso_in(8),
                fee=FEE,
            )
            tid = made["id"]
            assert (made["state"], made["round_count"], made["advance"]) == ("registering", 3, 2)
            await rated.register(tid)
            before = await detail(api, tid, people[0][0])
            assert before["registered"] == len(people) and before["me"]["registered"] is True
            assert before["pool"] == prize_pool(len(people))
            assert {e["user_id"]: e["rating"] for e in before["entrants"]} == rating
            fees = await tournament_ledger(database, tid)
            assert sorted((m.debit, m.credit, m.amount, m.reason) for m in fees) == sorted(
                (f"user:{u}", f"tour:{tid}", FEE, "tournament_fee") for u in tokens
            )
            absent = people[NO_SHOW_SEED - 1][1]["id"]
            leaver = people[LEAVER_SEED - 1][1]["id"]
            driver = Driver(
                server, api, "konkan", tokens, walk_out={absent}, leave_after={leaver: 1}
            )
            window = WindowWatch(api, database)
            restarts = RestartInRound(server, api, RESTART_ROUND, then=window)
            driver.after_move = restarts.after_move
            done = await driver.run(tid, until=("finished",), during=restarts.look)
            assert restarts.restarted, (
                f"the server was not restarted in the middle of round {RESTART_ROUND}"
            )
            assert window.seen, "the complaint window was never seen"
        finally:
            await api.aclose()
        await check_result(database, tid, done, tokens, absent, leaver, window.seen[0])

    asyncio.run(scenario())


async def check_result(
    database: str,
    tid: int,
    done: dict[str, Any],
    tokens: dict[int, str],
    absent: int,
    leaver: int,
    held: dict[str, Any],
) -> None:
    entrants = {e["entry"]: e for e in done["entrants"]}
    entry_of = {e["user_id"]: e["entry"] for e in done["entrants"] if e["user_id"]}
    user_of = {e["entry"]: e["user_id"] for e in done["entrants"]}
    bots = {e for e, row in entrants.items() if row["bot"]}
    assert len(entrants) == SEATS and len(bots) == SEATS - len(tokens)
    assert all(user_of[e] is None for e in bots)
    assert {e for e, row in entrants.items() if row["dropped"]} == {
        entry_of[absent],
        entry_of[leaver],
    }
    assert [e for e, row in entrants.items() if row["no_show"]] == [entry_of[absent]]
    # seeds: by rating (people's all different, and none a bot's: the bots are seeds 9-11)
    strength = {e: row["rating"] for e, row in entrants.items()}
    seeded = sorted(entrants, key=lambda e: (-strength[e], e))
    seed = {e: number for number, e in enumerate(seeded, start=1)}
    assert sorted(seed[e] for e in bots) == [9, 10, 11]

    rounds = done["rounds"]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    out = bots | {entry_of[absent], entry_of[leaver]}
    results: list[list[dict[str, Any]]] = []  # per round, per table: seats, places, totals
    for round_ in rounds:
        tables = sorted(round_["tables"], key=lambda t: t["table_no"])
        assert [t["table_no"] for t in tables] == list(range(1, len(tables) + 1))
        played = []
        for table in tables:
            assert table["state"] == "finished"
            seats = list(table["seats"])
            sheet = (await first_match(database, table["table_id"]))["score_sheet"]
            places = {e: sheet["places"][seat] for seat, e in enumerate(seats)}
            at_table = {e: sheet["totals"][seat] for seat, e in enumerate(seats)}
            assert {int(k): v for k, v in table["places"].items()} == places
            played.append({"seats": seats, "places": places, "totals": at_table})
        results.append(played)

    # round 1: every entrant, by seed in snake order over 4 tables of 4 (bots, alike for
    # the rules, compared as a count)
    def shape(tables: list[list[int]]) -> list[tuple[list[int], int]]:
        return [(sorted(e for e in t if e not in bots), sum(e in bots for e in t)) for t in tables]

    assert konkan_table_sizes(SEATS) == [4, 4, 4, 4]
    expected = snake(seeded, konkan_table_sizes(SEATS))
    assert shape([t["seats"] for t in results[0]]) == shape(expected)
    assert {entry_of[absent], entry_of[leaver]} <= set(results[0][0]["seats"])
    # later rounds: the first through from each table, then the second ones, each by seed
    for index in (1, 2):
        sent = [through(t["seats"], t["places"], t["totals"], out) for t in results[index - 1]]
        firsts = sorted((s[0] for s in sent if s), key=seed.__getitem__)
        seconds = sorted((s[1] for s in sent if len(s) > 1), key=seed.__getitem__)
        order = firsts + seconds
        expected = snake(order, konkan_table_sizes(len(order)))
        assert [sorted(t["seats"]) for t in results[index]] == [sorted(t) for t in expected]
    assert [len(t["seats"]) for t in results[1]] == [4, 3]  # table 1 sent one person
    assert [len(t["seats"]) for t in results[2]] == [4]  # the final

    people = [e for e in entrants if e not in bots and e != entry_of[absent]]
    lines = done["standings"]
    check_standings(lines, results, entrants, people, strength)
    assert [line["entry"] for line in lines[:4]] == sorted(
        results[2][0]["seats"], key=lambda e: (results[2][0]["places"][e], -strength[e], e)
    )

    pool = prize_pool(len(tokens))
    assert done["pool"] == pool and len(lines) == 12
    coins = split_prizes(pool, [line["place"] for line in lines])
    assert [line["prize"] for line in lines] == coins
    assert [line["prize"] for line in held["standings"]] == coins  # held in the window
    won = {user_of[line["entry"]]: prize for line, prize in zip(lines, coins, strict=True)}
    await check_ledger(database, tid, FEE, list(tokens), pool, won, WELCOME)
