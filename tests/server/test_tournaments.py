"""A paid knock-out on a real server (SQLite, then PostgreSQL), played to its end over
real WebSockets (docs/tournaments.md): 8 Konkan seats, 6 people and 2 bots, two go
through from each table of 4. One registered player never comes (the timer forfeits
the seat to a bot: a no-show, with no standing), one leaves their first table (a bot
finishes it: dropped, with the standing the bot earned), and the server is killed in
the middle of the first round and started again.

Every expected value comes from the written rules: each table's places are its match's
score sheet's; through go the two best places of a table who are people still in it
(a tie by the better match total, then the seat order); the final table's places are
the first places of the standings; the pool is the fees less the house's 10 %, paid 50
/ 30 / 20 % to three places (up to 8 players with a standing), the coins left over to the first; and
every coin moves through the ledger: each fee into the escrow, the prizes and the
house's share out of it, leaving it empty."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .harness import Api, ServerProcess
from .tournament_support import (
    TOURNAMENT_ENV,
    Driver,
    balances,
    detail,
    first_match,
    iso_in,
    make_tournament,
    register,
    tournament_ledger,
)

FEE = 100
WELCOME = 1000


def through(
    table: dict[str, Any], places: dict[int, int], totals: dict[int, int], out: set[int]
) -> list[int]:
    """The two who go through a Konkan table: best place, then the lower (better)
    match total, then the seat order; skipping bots and those who dropped out."""
    seats = table["seats"]
    ranked = sorted(seats, key=lambda e: (places[e], totals[e], seats.index(e)))
    return [e for e in ranked if e not in out][:2]


def split_prizes(pool: int, places: list[int]) -> list[int]:
    """The coins of each standing line, best first (ties share the prizes of the places
    they span, the odd coins one each from the first of them): 3 places paid up to 8
    players, 50/30/20 % each rounded down, the rest to the first."""
    shares = [pool * percent // 100 for percent in (50, 30, 20)]
    shares[0] += pool - sum(shares)
    shares += [0] * (len(places) - len(shares))
    coins = [0] * len(places)
    start = 0
    while start < len(places):
        end = start
        while end < len(places) and places[end] == places[start]:
            end += 1
        each, extra = divmod(sum(shares[start:end]), end - start)
        for index in range(start, end):
            coins[index] = each + (index - start < extra)
        start = end
    return coins


def test_a_knockout_with_bots_a_no_show_a_drop_out_and_a_restart(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    server = start_server(**TOURNAMENT_ENV)

    async def scenario() -> None:
        api = Api(server)
        try:
            people = [await api.account("ko") for _ in range(6)]
            tokens = {user["id"]: token for token, user in people}
            made = await make_tournament(
                api,
                people[0][0],
                name="Friday cup",
                game="konkan",
                format="knockout",
                seats=8,
                starts_at=iso_in(6),
                fee=FEE,
                min_fill=6,
            )
            tid = made["id"]
            assert (made["state"], made["round_count"], made["advance"]) == ("registering", 2, 2)
            for token, _user in people:
                await register(api, token, tid)
            before = await detail(api, tid, people[0][0])
            assert before["registered"] == 6 and before["me"]["registered"] is True
            assert before["pool"] == 6 * FEE - 6 * FEE * 100 // 1000
            fees = await tournament_ledger(database, tid)
            assert sorted((m.debit, m.credit, m.amount, m.reason) for m in fees) == sorted(
                (f"user:{u}", f"tour:{tid}", FEE, "tournament_fee") for u in tokens
            )
            absent, leaver = people[4][1]["id"], people[5][1]["id"]
            driver = Driver(server, api, "konkan", tokens, absent={absent}, leave_after={leaver: 2})
            restarted: list[bool] = []

            async def restart_mid_round(found: dict[str, Any]) -> None:
                round_one = found["rounds"][0]["tables"] if found["rounds"] else []
                playing = [t for t in round_one if t["state"] == "playing"]
                if restarted or len(playing) < 2 or sum(map(len, driver.played.values())) < 6:
                    return
                restarted.append(True)
                server.kill()  # SIGKILL: what is durable is all that survives
                server.start(port=server.port)

            done = await driver.run(tid, until=("finished",), during=restart_mid_round)
            assert restarted, "the server was not restarted in the middle of round 1"
        finally:
            await api.aclose()
        await check_result(database, tid, done, tokens, absent, leaver)

    asyncio.run(scenario())


async def check_result(
    database: str,
    tid: int,
    done: dict[str, Any],
    tokens: dict[int, str],
    absent: int,
    leaver: int,
) -> None:
    entrants = {e["entry"]: e for e in done["entrants"]}
    entry_of = {e["user_id"]: e["entry"] for e in done["entrants"] if e["user_id"]}
    bots = {e["entry"] for e in done["entrants"] if e["bot"]}
    assert len(bots) == 2 and len(entrants) == 8
    assert {e for e, row in entrants.items() if row["dropped"]} == {
        entry_of[absent],
        entry_of[leaver],
    }
    rounds = done["rounds"]
    assert [len(r["tables"]) for r in rounds] == [2, 1]
    assert sorted(e for t in rounds[0]["tables"] for e in t["seats"]) == sorted(entrants)
    out = bots | {entry_of[absent], entry_of[leaver]}
    went_through: list[int] = []
    for table in [*rounds[0]["tables"], *rounds[1]["tables"]]:
        match = await first_match(database, table["table_id"])
        sheet = match["score_sheet"]
        places = {e: sheet["places"][seat] for seat, e in enumerate(table["seats"])}
        totals = {e: sheet["totals"][seat] for seat, e in enumerate(table["seats"])}
        assert {int(k): v for k, v in table["places"].items()} == places
        if table in rounds[0]["tables"]:
            went_through += through(table, places, totals, out)
        else:
            final, final_places = table["seats"], places
    assert sorted(rounds[1]["tables"][0]["seats"]) == sorted(went_through)
    standings = done["standings"]
    # bots have no standing, nor the player who never came (a no-show)
    assert [e for e, row in entrants.items() if row["no_show"]] == [entry_of[absent]]
    assert len(standings) == 5 and entry_of[absent] not in {line["entry"] for line in standings}
    # the final's players first, by their places there (3 when a table of the first round
    # sent only one person through: the other seats went to bots or to those who dropped)
    # (players tied at the final share its place, in whatever order the standings list them)
    head = standings[: len(final)]
    assert sorted(line["entry"] for line in head) == sorted(final)
    assert [line["place"] for line in head] == sorted(final_places.values())
    assert all(line["place"] == final_places[line["entry"]] for line in head)
    pool = 6 * FEE - 6 * FEE * 100 // 1000
    assert done["pool"] == pool
    coins = split_prizes(pool, [line["place"] for line in standings])
    assert [line["prize"] for line in standings] == coins
    ledger = await tournament_ledger(database, tid)
    user_of = {e["entry"]: e["user_id"] for e in done["entrants"]}
    want = {(f"user:{u}", f"tour:{tid}", FEE, "tournament_fee") for u in tokens}
    want |= {
        (f"tour:{tid}", f"user:{user_of[line['entry']]}", prize, "tournament_prize")
        for line, prize in zip(standings, coins, strict=True)
        if prize
    }
    want.add((f"tour:{tid}", "house", 6 * FEE - pool, "tournament_house"))
    assert sorted((m.debit, m.credit, m.amount, m.reason) for m in ledger) == sorted(want)
    assert len(ledger) == len(want)  # nothing paid twice, whatever the restart replayed
    won = {user_of[line["entry"]]: prize for line, prize in zip(standings, coins, strict=True)}
    found = await balances(database, [f"tour:{tid}", *(f"user:{u}" for u in tokens)])
    assert found[f"tour:{tid}"] == 0
    for user in tokens:
        assert found[f"user:{user}"] == WELCOME - FEE + won.get(user, 0)
