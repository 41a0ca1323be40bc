"""A paid knock-out on two server processes sharing PostgreSQL and Redis, and the
process that carries it on killed (SIGKILL) in the middle of round 1
(docs/tournaments.md, "Running a tournament": all of a tournament's state is in the
database, so "a restart or a process failover at any point goes on from the rows").

8 Konkan seats, two go through from each table of 4; six people register (more than
``min_fill``, 4 by default: half the seats), so two bot entrants take the empty seats
at the start. Each person plays over a real WebSocket to a process of their own, half
to each, as a load balancer spreads them, and moves to the other process once theirs
is dead.

While round 1's tables play, the process holding the tournament's lease
(``tournaments.lease_by``, named in its log by the runner when it starts) is killed and
never started again: the harder case, since the survivor alone must take over the
tables the dead process served (from their event logs, once their Redis leases are
past) and the tournament (once its lease is past), seat the final, store the result
and pay the prizes, with nobody coming back to finish what the dead process started.

Every expected value comes from the written rules, never from the server's answers:

* round 1 deals the seeds (the people's ratings are all different and none a bot's:
  four above it, two below, so the bots are seeds 5 and 6) in snake order to two
  tables of 4: seeds 1, 4, 5, 8 and 2, 3, 6, 7, one bot at each;
* each table's places are its match's score sheet's; the entrants a bot finished for
  (``match_players.in_seat_at_end`` false) are dropped; through go the two best places
  of a table who are people still in it (a tie by the better match total, then the
  seat order); the final seats the table winners, then the second ones, each by seed;
* the standings: the final's players by their place there, then the outs of round 1
  by placement points and match total at their table; each line's points, match total,
  opponents' strength, rounds played and round out;
* the prizes: the pool is the six fees less the house's 10 %, paid over 3 places (six
  players with a standing: up to 8) at 50 / 30 / 20 %; held during the complaint window;
* every coin through the ledger: each fee into the escrow, each prize and the house's
  share out of it, each exactly once, leaving the escrow empty, and every balance.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aioredis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from server.harness import Api, ServerProcess
from server.knockout_expectations import check_standings, snake, through
from server.tournament_support import (
    FEE,
    TOURNAMENT_ENV,
    WELCOME,
    Driver,
    WindowWatch,
    check_ledger,
    first_match,
    iso_in,
    konkan_table_sizes,
    make_tournament,
    prize_pool,
    rated_people,
    split_prizes,
)

SEATS = 8
RATINGS = [1900, 1860, 1820, 1780, 1400, 1360]  # a bot's rating (1500) between 4th and 5th
MOVES_BEFORE_KILL = 4  # people's moves at round 1's tables before the kill


def alive(server: ServerProcess) -> bool:
    return server.proc is not None and server.proc.poll() is None


class Balanced(ServerProcess):
    """What the players' sockets connect to: each token to its own process, or to a
    live one once that process is dead (a load balancer's health check)."""

    def __init__(self, servers: Sequence[ServerProcess], homes: Mapping[str, ServerProcess]):
        super().__init__(servers[0].database_url, servers[0].log_dir)
        self.servers, self.homes = list(servers), dict(homes)

    def serving(self, token: str) -> ServerProcess:
        home = self.homes[token]
        return home if alive(home) else next(s for s in self.servers if alive(s))

    async def ws_url_async(self, table_id: int, token: str, since: int | None = None) -> str:
        return await self.serving(token).ws_url_async(table_id, token, since)


class AnyLive(Api):
    """REST reads through the first live process (a dead one answers nothing)."""

    def __init__(self, servers: Sequence[ServerProcess]) -> None:
        super().__init__(servers[0])
        self.apis = [Api(server) for server in servers]

    async def get(self, path: str, token: str | None = None) -> Any:
        for api in self.apis:
            if alive(api.server):
                with contextlib.suppress(httpx.HTTPError):
                    return await api.get(path, token)
        raise httpx.ConnectError(f"no live process answers {path}")

    async def aclose(self) -> None:
        for api in self.apis:
            await api.aclose()
        await super().aclose()


def log_records(server: ServerProcess) -> list[dict[str, Any]]:
    """The process's JSON log lines (every start's)."""
    records = []
    for path in sorted(Path(server.log_dir).glob("server-*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    records.append(json.loads(line))
    return records


def runner_name(server: ServerProcess) -> str:
    """The name this process's tournament runner puts in the leases it takes."""
    names = [r["runner"] for r in log_records(server) if "runner" in r]
    assert len(names) == 1, names
    return str(names[0])


async def lease_holder(database: str, tournament_id: int) -> str | None:
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            found = await conn.scalar(
                text("SELECT lease_by FROM tournaments WHERE id = :t"), {"t": tournament_id}
            )
    finally:
        await engine.dispose()
    return None if found is None else str(found)


async def table_owners(server: ServerProcess, table_ids: Sequence[int]) -> dict[int, str | None]:
    """The cluster node serving each game table (its Redis lease's value)."""
    client = aioredis.Redis.from_url(server.extra_env["SAHRAT_REDIS_URL"], decode_responses=True)
    prefix = server.extra_env["SAHRAT_CLUSTER_PREFIX"]
    try:
        owners = {}
        for table_id in table_ids:
            value = await client.get(f"{prefix}:lease:{table_id}")
            owners[table_id] = None if value is None else str(value)
        return owners
    finally:
        await client.aclose()


async def has_match(database: str, table_id: int) -> bool:
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            found = await conn.scalar(
                text("SELECT count(*) FROM matches WHERE table_id = :t"), {"t": table_id}
            )
    finally:
        await engine.dispose()
    return bool(found)


async def seat_plays(database: str, match_id: int) -> dict[int, tuple[int, bool]]:
    """A finished match's people by seat: (moves of their own, in their seat at the end)."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT seat, own_turns, in_seat_at_end FROM match_players WHERE match_id = :m"
                ),
                {"m": match_id},
            )
            return {int(seat): (int(turns), bool(kept)) for seat, turns, kept in rows}
    finally:
        await engine.dispose()


def test_killing_the_process_that_carries_a_knockout_hands_it_to_the_other(
    start_node: Callable[..., ServerProcess], cluster_database: str
) -> None:
    database = cluster_database
    servers = [start_node(**TOURNAMENT_ENV, SAHRAT_LOG_FORMAT="json") for _ in range(2)]

    async def scenario() -> None:
        home_apis = [Api(server) for server in servers]
        reads = AnyLive(servers)
        try:
            # half the people to each process, and their REST calls to it too
            rated = await rated_people(database, home_apis, "ko", RATINGS)
            people, tokens = rated.accounts, rated.tokens
            home = {token: servers[i % 2] for i, (token, _user) in enumerate(people)}
            made = await make_tournament(
                home_apis[0],
                people[0][0],
                name="Failover cup",
                game="konkan",
                format="knockout",
                seats=SEATS,
                starts_at=iso_in(6),
                fee=FEE,
            )
            tid = made["id"]
            assert (made["state"], made["round_count"], made["advance"]) == ("registering", 2, 2)
            await rated.register(tid)
            names = {runner_name(server): server for server in servers}
            assert len(names) == 2

            driver = Driver(Balanced(servers, home), reads, "konkan", tokens)
            window = WindowWatch(reads, database)
            killed: list[dict[str, Any]] = []
            holders: set[str | None] = set()  # the tournament's lease holders after the kill

            async def during(found: dict[str, Any]) -> None:
                await window(found)
                if killed:
                    holders.add(await lease_holder(database, tid))
                    return
                if not found["rounds"]:
                    return
                tables = found["rounds"][0]["tables"]
                moves = sum(len(driver.played.get(t["table_id"], [])) for t in tables)
                if any(t["state"] != "playing" for t in tables) or moves < MOVES_BEFORE_KILL:
                    return
                holder = await lease_holder(database, tid)
                assert holder in names, (holder, names)
                dead = names[holder]
                assert dead.proc is not None
                table_ids = [int(t["table_id"]) for t in tables]
                owners = await table_owners(dead, table_ids)
                dead.kill()  # SIGKILL, and never started again
                # the tables whose match was still being played: none of their results is
                # written yet (the survivor may write one only once their lease is past)
                playing = [t for t in table_ids if not await has_match(database, t)]
                dead_node = f"-{dead.proc.pid}-"
                served = [t for t in playing if dead_node in (owners[t] or "")]
                killed.append({"dead": dead, "holder": holder, "served": served, "moves": moves})

            done = await driver.run(tid, until=("finished",), during=during)
            assert killed, "the lease holder was not killed while round 1 played"
            assert window.seen, "the complaint window was never seen"
        finally:
            for api in home_apis:
                await api.aclose()
            await reads.aclose()

        kill = killed[0]
        (survivor,) = [server for server in servers if server is not kill["dead"]]
        assert alive(survivor) and not alive(kill["dead"])
        assert kill["served"], "the dead process served none of round 1's tables in play"
        # the survivor carried the tournament on to its end (the only lease taken after
        # the kill is its own: the final seated, the prizes paid) and took over every
        # table in play that the dead process served
        assert holders - {None, kill["holder"]} == {runner_name(survivor)}, holders
        records = log_records(survivor)
        said = [str(r["message"]) for r in records]
        assert f"tournament {tid}: round 2 seated at 1 tables" in said
        assert f"tournament {tid}: prizes paid" in said
        for table_id in kill["served"]:
            assert any(
                r.get("table_id") == table_id and "took table" in r["message"] for r in records
            ), table_id
        print(f"failover: served by the dead process {kill['served']}, moves {kill['moves']}")
        await check_result(database, tid, done, tokens, window.seen[0])

    asyncio.run(scenario())


async def check_result(
    database: str, tid: int, done: dict[str, Any], tokens: dict[int, str], held: dict[str, Any]
) -> None:
    entrants = {e["entry"]: e for e in done["entrants"]}
    user_of = {e["entry"]: e["user_id"] for e in done["entrants"]}
    bots = {e for e, row in entrants.items() if row["bot"]}
    assert len(entrants) == SEATS and len(bots) == SEATS - len(tokens)
    assert all(user_of[e] is None for e in bots)
    strength = {e: row["rating"] for e, row in entrants.items()}
    seeded = sorted(entrants, key=lambda e: (-strength[e], e))
    seed = {e: number for number, e in enumerate(seeded, start=1)}
    assert sorted(seed[e] for e in bots) == [5, 6]

    rounds = done["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    results: list[list[dict[str, Any]]] = []  # per round, per table
    dropped: dict[int, int] = {}  # entry -> the round a bot finished their table in
    no_shows: set[int] = set()
    for round_no, round_ in enumerate(rounds, start=1):
        tables = sorted(round_["tables"], key=lambda t: t["table_no"])
        assert [t["table_no"] for t in tables] == list(range(1, len(tables) + 1))
        played = []
        for table in tables:
            assert table["state"] == "finished"
            seats = list(table["seats"])
            match = await first_match(database, table["table_id"])
            sheet = match["score_sheet"]
            places = {e: sheet["places"][seat] for seat, e in enumerate(seats)}
            at_table = {e: sheet["totals"][seat] for seat, e in enumerate(seats)}
            assert {int(k): v for k, v in table["places"].items()} == places
            own = await seat_plays(database, match["id"])
            for seat, e in enumerate(seats):
                if e in bots or own.get(seat, (0, False))[1]:
                    continue
                dropped[e] = round_no
                if round_no == 1 and own.get(seat, (0, False))[0] == 0:
                    no_shows.add(e)
            played.append({"seats": seats, "places": places, "totals": at_table})
        results.append(played)
    assert {e for e, row in entrants.items() if row["dropped"]} == set(dropped)
    assert {e for e, row in entrants.items() if row["no_show"]} == no_shows

    # round 1: by seed in snake order over 2 tables of 4 (the bots compared as a count)
    def shape(tables: list[list[int]]) -> list[tuple[list[int], int]]:
        return [(sorted(e for e in t if e not in bots), sum(e in bots for e in t)) for t in tables]

    assert konkan_table_sizes(SEATS) == [4, 4]
    assert shape([t["seats"] for t in results[0]]) == shape(snake(seeded, [4, 4]))
    # the final: the first through from each table, then the second ones, each by seed
    out = bots | {e for e, r in dropped.items() if r == 1}
    sent = [through(t["seats"], t["places"], t["totals"], out) for t in results[0]]
    firsts = sorted((s[0] for s in sent if s), key=seed.__getitem__)
    seconds = sorted((s[1] for s in sent if len(s) > 1), key=seed.__getitem__)
    order = firsts + seconds
    assert 2 <= len(order) <= 4
    assert [sorted(t["seats"]) for t in results[1]] == [sorted(order)]

    people = [e for e in entrants if e not in bots and e not in no_shows]
    lines = done["standings"]
    check_standings(lines, results, entrants, people, strength)

    pool = prize_pool(len(tokens))
    assert done["pool"] == pool
    coins = split_prizes(pool, [line["place"] for line in lines])
    assert [line["prize"] for line in lines] == coins
    assert [line["prize"] for line in held["standings"]] == coins  # held in the window
    won = {user_of[line["entry"]]: prize for line, prize in zip(lines, coins, strict=True)}
    await check_ledger(database, tid, FEE, list(tokens), pool, won, WELCOME)
