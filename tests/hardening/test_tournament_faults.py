"""Faults: a paid tournament played to its end while its server is SIGKILLed again
and again, on SQLite and on PostgreSQL.

A Konkan knock-out of 8 seats (docs/tournaments.md): 7 people register and pay the
fee, a bot entrant takes the eighth seat at the start; two tables of 4, then the final.
Every person plays each of their tables over a WebSocket with the simple player (the
fault tests' ``SeatPlayer``, which reconnects with ``since`` after a death and keeps
every command it sent and every reply). Meanwhile the server is killed with SIGKILL
and started again on the same database, ``SAHRAT_TOURNAMENT_KILLS`` times (default 3;
the full run is 10) at points of the tournament's life:

* ``start``: the moment the tournament is due to start (its registration closes and
  the runner seats round 1 and opens its tables);
* ``mid_round``: a round being played, a few acknowledged moves after the last restart;
* ``between_rounds``: at once when the last table of round 1 ends (the runner reads
  its result and seats the final);
* ``complaints``: in the complaint window (the result written, the prizes held);
* ``payout``: as the complaint window ends (-0.05 to +0.25 s): the runner pays the
  prizes and the house's share and ends the tournament in one transaction, at its
  first tick after the window.

Three kills or four: a mid-round one and, chosen by ``SAHRAT_TOURNAMENT_FAULT_SEED``,
others of the four other points; five or more: every point once, the rest mid-round.

Afterwards: the tournament is finished; every table finished its one match, and every
command a person got an ``ok`` for is in its table's event log exactly once at the seq
its reply named (``faults_support.check_log``); the ledger holds each fee once, each
prize once (the pool split as the rules split it over the standings' places) and the
house's share once, the escrow is empty, every person's balance is their welcome
grant less the fee plus their prize, and the coin ledger balances. Results go to
``test-artifacts/hardening/tournament_faults_<database>.json``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.harness import Api, ServerProcess
from server.tournament_support import (
    TOURNAMENT_ENV,
    check_ledger,
    detail,
    iso_in,
    make_tournament,
    register,
    split_prizes,
)

from .conftest import env_count, env_seed, write_results
from .faults_support import SeatPlayer, check_log, read_tables

KILLS = env_count("SAHRAT_TOURNAMENT_KILLS", 3)  # make hardening: 10
SEATS = 8
PEOPLE = 7
FEE = 100
WELCOME = 1000  # SAHRAT_WELCOME_GRANT's default (docs/economy.md)
HOUSE_PERMILLE = int(TOURNAMENT_ENV["SAHRAT_TOURNAMENT_HOUSE_PERMILLE"])
COMPLAINT_SECONDS = 9.0  # room in the window for a kill and a restart before the payout
MOVES_BETWEEN_KILLS = 5  # acknowledged moves after a restart before a mid-round kill
THINK = (0.0, 0.05)
RUN_SECONDS = 240.0 + 30.0 * KILLS
POINTS = ("start", "mid_round", "between_rounds", "complaints", "payout")


def kill_plan(kills: int, rng: random.Random) -> dict[str, int]:
    """How many kills at each point: see the module's docstring."""
    plan = dict.fromkeys(POINTS, 0)
    if kills >= len(POINTS):
        plan.update(dict.fromkeys(POINTS, 1))
        plan["mid_round"] += kills - len(POINTS)
        return plan
    plan["mid_round"] = 1
    for point in rng.sample([p for p in POINTS if p != "mid_round"], kills - 1):
        plan[point] = 1
    return plan


class Run:
    """The people, their seat players, and the kills, driven by the tournament's Detail."""

    def __init__(
        self,
        server: ServerProcess,
        api: Api,
        tokens: dict[int, str],
        plan: dict[str, int],
        seed: int,
    ) -> None:
        self.server = server
        self.api = api
        self.tokens = tokens
        self.plan = plan
        self.rng = random.Random(seed)
        self.players: dict[tuple[int, int], SeatPlayer] = {}  # (table id, user) -> player
        self.tasks: list[asyncio.Task[None]] = []
        self.round_of: dict[int, int] = {}  # table id -> round
        self.kills: list[dict[str, Any]] = []
        self.acknowledged_at_restart = 0
        self.start_at = 0.0  # wall clock of the tournament's start
        self.payout_at: float | None = None  # wall clock of a payout kill, once known
        self.mid_in_first_round = (plan["mid_round"] + 1) // 2  # the rest in the final

    def acknowledged(self) -> int:
        return sum(len(p.acknowledged) for p in self.players.values())

    def seat(self, found: dict[str, Any]) -> None:
        """A seat player for each person at each table that is dealt."""
        users = {e["entry"]: e["user_id"] for e in found["entrants"]}
        for round_ in found["rounds"]:
            for table in round_["tables"]:
                table_id = table["table_id"]
                if table_id is None or table["state"] == "waiting":
                    continue
                self.round_of[table_id] = round_["round"]
                for entry in table["seats"]:
                    user = users.get(entry)
                    if user not in self.tokens or (table_id, user) in self.players:
                        continue
                    player = SeatPlayer(
                        self.server,
                        table_id,
                        self.tokens[user],
                        "konkan",
                        f"t{table_id}u{user}",
                        think=THINK,
                        rng=random.Random(self.rng.random()),
                    )
                    self.players[(table_id, user)] = player
                    self.tasks.append(asyncio.create_task(player.run(RUN_SECONDS)))

    def due(self, found: dict[str, Any] | None) -> str | None:
        """The point of a kill due now, if any."""
        now = time.time()
        if self.plan["start"] and now >= self.start_at:
            return "start"
        if found is None:
            return None
        state, rounds = found["state"], found["rounds"]
        if state == "running" and rounds:
            current = rounds[-1]["round"]
            playing = [p for (t, _u), p in self.players.items() if self.round_of[t] == current]
            if (
                self.plan["mid_round"]
                and (current > 1 or self.mid_in_first_round > 0)
                and any(not p.finished for p in playing)
                and self.acknowledged() - self.acknowledged_at_restart >= MOVES_BETWEEN_KILLS
            ):
                return "mid_round"
            first = {t["table_id"] for t in rounds[0]["tables"]}
            seated = [p for (t, _u), p in self.players.items() if t in first]
            if (
                self.plan["between_rounds"]
                and first <= set(self.round_of)
                and all(p.finished for p in seated)
            ):
                return "between_rounds"
        if state == "complaints" and self.plan["complaints"]:
            return "complaints"
        if self.plan["payout"] and state in ("complaints", "finished"):
            if self.payout_at is None:
                until = found["complaint_until"]
                assert until is not None, found
                ends = _timestamp(until)
                self.payout_at = ends + self.rng.uniform(-0.05, 0.25)
            if now >= self.payout_at:
                return "payout"
        return None

    async def kill(self, point: str, found: dict[str, Any] | None) -> None:
        started = time.monotonic()
        self.server.kill()  # SIGKILL: what is durable is all that survives
        await asyncio.sleep(self.rng.uniform(0.0, 0.3))
        await asyncio.to_thread(self.server.start, self.server.port)
        # on another port if another test's server took this one meanwhile
        self.api.http.base_url = httpx.URL(self.server.base_url)
        self.plan[point] -= 1
        if point == "mid_round" and self.round_of and max(self.round_of.values()) == 1:
            self.mid_in_first_round -= 1
        self.acknowledged_at_restart = self.acknowledged()
        self.kills.append(
            {
                "point": point,
                "state": found["state"] if found else None,
                "rounds": len(found["rounds"]) if found else None,
                "acknowledged_before": self.acknowledged_at_restart,
                "restart_seconds": round(time.monotonic() - started, 2),
            }
        )

    async def drive(self, tid: int) -> dict[str, Any]:
        """Until the tournament is finished and every planned kill done."""
        deadline = time.monotonic() + RUN_SECONDS
        found: dict[str, Any] | None = None
        while True:
            assert time.monotonic() < deadline, (found, self.kills, self.plan)
            try:
                found = await detail(self.api, tid)
            except (httpx.HTTPError, AssertionError):  # the server restarting
                found = None
            if found is not None:
                self.seat(found)
                if found["state"] == "cancelled":
                    raise AssertionError(f"the tournament was cancelled: {found}")
                if found["state"] == "finished" and not any(self.plan.values()):
                    return found
                if found["state"] == "finished" and self.plan["payout"] == 0:
                    left = {point: n for point, n in self.plan.items() if n}
                    raise AssertionError(f"finished before the kills {left}: {self.kills}")
            point = self.due(found)
            if point is not None:
                await self.kill(point, found)
                continue
            pause = 0.1
            if self.plan["payout"] and self.payout_at is not None:  # the kill on time
                pause = min(pause, max(0.0, self.payout_at - time.time()))
            await asyncio.sleep(pause)


def _timestamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


async def scenario(server: ServerProcess, database: str, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    plan = kill_plan(KILLS, rng)
    api = Api(server)
    try:
        people = [await api.account("fk") for _ in range(PEOPLE)]
        tokens = {user["id"]: token for token, user in people}
        made = await make_tournament(
            api,
            people[0][0],
            name="Fault cup",
            game="konkan",
            format="knockout",
            seats=SEATS,
            starts_at=iso_in(4),
            fee=FEE,
        )
        tid = made["id"]
        for token, _user in people:
            await register(api, token, tid)
        run = Run(server, api, tokens, plan, rng.randrange(2**32))
        run.start_at = _timestamp(made["starts_at"]) + rng.uniform(0.0, 0.4)
        started = time.monotonic()
        done = await run.drive(tid)
        await asyncio.gather(*run.tasks)
        seconds = time.monotonic() - started
    finally:
        await api.aclose()

    assert done["state"] == "finished", done
    rounds = sorted(run.round_of.values())
    assert rounds == [1, 1, 2], run.round_of  # two tables of 4, then the final
    records = await read_tables(database, sorted(run.round_of))
    totals = {"acknowledged": 0, "lost": 0, "doubled": 0, "unanswered_in_log": 0}
    for table_id, record in records.items():
        assert record.status == "finished", (table_id, record.status)
        seats = [p for (t, _u), p in run.players.items() if t == table_id]
        for key, value in check_log(record, seats).items():
            totals[key] += value
    assert totals["lost"] == 0 and totals["doubled"] == 0, totals
    assert totals["acknowledged"] > 0

    # the coins: the pool is the fees less the house's share (docs/tournaments.md
    # "Coins"), split over the standings' places by the rules' percentages
    paid = PEOPLE * FEE
    pool = paid - paid * HOUSE_PERMILLE // 1000
    assert done["pool"] == pool, done["pool"]
    standings = done["standings"]
    coins = split_prizes(pool, [line["place"] for line in standings])
    user_of = {e["entry"]: e["user_id"] for e in done["entrants"]}
    assert [line["prize"] for line in standings] == coins, standings
    won = {user_of[line["entry"]]: coins[i] for i, line in enumerate(standings)}
    await check_ledger(database, tid, FEE, list(tokens), pool, won, WELCOME)
    return {
        "tournament": tid,
        "kills": len(run.kills),
        "kills_detail": run.kills,
        "tables": len(records),
        "acknowledged_moves": totals["acknowledged"],
        "moves_lost": totals["lost"],
        "moves_doubled": totals["doubled"],
        "in_flight_at_a_kill_then_logged": totals["unanswered_in_log"],
        "connects": sum(p.connects for p in run.players.values()),
        "reconnects_resumed": sum(p.resumes for p in run.players.values()),
        "pool": pool,
        "prizes": coins,
        "seconds": round(seconds, 1),
    }


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_paid_tournament_survives_sigkills_at_every_stage(
    kind: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    start_server: Callable[..., ServerProcess],
) -> None:
    seed = env_seed("SAHRAT_TOURNAMENT_FAULT_SEED")
    print(f"\nSAHRAT_TOURNAMENT_FAULT_SEED={seed} SAHRAT_TOURNAMENT_KILLS={KILLS}")
    database = (
        request.getfixturevalue("sqlite_database")
        if kind == "sqlite"
        else request.getfixturevalue("postgres_database")
    )
    env = {
        **TOURNAMENT_ENV,
        "SAHRAT_TOURNAMENT_COMPLAINT_MINUTES": str(COMPLAINT_SECONDS / 60),
        # a seat is played by the timer only once its player is gone past a restart
        "SAHRAT_TURN_SECONDS_OVERRIDE": "10",
    }
    server = start_server(database, **env)
    results: dict[str, Any] = {"seed": seed}
    try:
        results.update(asyncio.run(scenario(server, database, seed)))
    except BaseException as error:
        results["failure"] = repr(error)[:2000]
        raise
    finally:
        write_results(f"tournament_faults_{kind}", results, request.node)
    assert results["kills"] == KILLS
