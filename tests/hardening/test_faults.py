"""Faults: the server SIGKILLed again and again while many tables are being played.

Tables of both games are played at once over WebSockets, on PostgreSQL: free tables
with one player and bots in the other seats (``start`` with bots, no bot delay),
free tables of two players, and coin tables of two players. Every player is a test
client playing the engine's simple player. Meanwhile the server is killed with
SIGKILL at random moments and started again on the same database, each time; the
clients reconnect with ``since`` and play on.

Afterwards, read from the database: every table finished its match (one match row,
its record holding every logged action), every command a client got an ``ok`` for
is in the event log exactly once, at the seq its reply named (no acknowledged move
lost or applied twice), the log's seqs run 1..n, each coin table took both stakes
and paid its pot once, and the coin ledger balances.

``SAHRAT_FAULT_TABLES`` (default 20) and ``SAHRAT_FAULT_KILLS`` (default 3) set the
size; the full run is ``SAHRAT_FAULT_TABLES=100 SAHRAT_FAULT_KILLS=10``.
``SAHRAT_FAULT_SEED`` replays a run's choices. Counts go to
``test-artifacts/hardening/faults_sigkill.json``.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from sahrat.store.ledger import payout_shares
from server.harness import ServerProcess, make_admin

from .conftest import env_count, env_seed, write_results
from .faults_support import SeatPlayer, check_log, read_tables

# make test: every kind of table twice and two kills; make hardening: 100 tables, 10 kills
TABLES = env_count("SAHRAT_FAULT_TABLES", 8)
KILLS = env_count("SAHRAT_FAULT_KILLS", 2)
STAKE = 10
TURN_SECONDS = 3.0  # the turn timer plays a seat whose player is still reconnecting
KILL_GAP = (0.5, 2.0)  # seconds of play between a restart and the next kill
THINK = (0.02, 0.12)  # a player's pause before each move: matches outlast the kills


@dataclass
class Plan:
    game: str
    options: dict[str, Any]
    humans: int
    coins: bool


def plan_for(index: int) -> Plan:
    """The mix: a quarter each of coin Conquian (2 players), Konkan with a bot, Conquian
    with a bot, and Konkan of two players."""
    kind = index % 4
    if kind == 0:
        return Plan("conquian", {"wins_needed": 2, "stake": STAKE}, 2, True)
    if kind == 1:
        return Plan("konkan", {"players": 2, "rounds": 3}, 1, False)
    if kind == 2:
        return Plan("conquian", {"wins_needed": 3}, 1, False)
    return Plan("konkan", {"players": 2, "rounds": 2}, 2, False)


@dataclass
class Table:
    id: int
    plan: Plan
    seats: list[SeatPlayer]


async def _login(http: httpx.AsyncClient, admin: tuple[str, str]) -> dict[str, str]:
    response = await http.post("/api/login", json={"name": admin[0], "password": admin[1]})
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


async def _guest(http: httpx.AsyncClient) -> dict[str, Any]:
    response = await http.post("/api/guests")
    assert response.status_code == 201, response.text
    return dict(response.json())


async def _set_table(
    server: ServerProcess,
    http: httpx.AsyncClient,
    boss: dict[str, str],
    index: int,
    rng: random.Random,
) -> Table:
    plan = plan_for(index)
    guests = [await _guest(http) for _ in range(plan.humans)]
    auth = [{"Authorization": f"Bearer {g['token']}"} for g in guests]
    if plan.coins:
        response = await http.post(
            "/api/admin/tables", json={"game": plan.game, "options": plan.options}, headers=boss
        )
        assert response.status_code == 201, response.text
        table_id = int(response.json()["id"])
        for headers in auth:
            joined = await http.post(f"/api/tables/{table_id}/join", json={}, headers=headers)
            assert joined.status_code == 200, joined.text
        info = joined.json()
    else:
        response = await http.post(
            "/api/tables", json={"game": plan.game, "options": plan.options}, headers=auth[0]
        )
        assert response.status_code == 201, response.text
        table_id = int(response.json()["id"])
        for headers in auth[1:]:
            joined = await http.post(f"/api/tables/{table_id}/join", json={}, headers=headers)
            assert joined.status_code == 200, joined.text
        if plan.humans < len(response.json()["seats"]):
            started = await http.post(
                f"/api/tables/{table_id}/start", json={"level": "simple"}, headers=auth[0]
            )
            assert started.status_code == 200, started.text
            info = started.json()
        else:
            info = joined.json()
    assert info["status"] == "playing", info
    token_of = {g["user"]["id"]: g["token"] for g in guests}
    seats = [
        SeatPlayer(
            server,
            table_id,
            token_of[seat["user_id"]],
            plan.game,
            f"t{table_id}s{seat['seat']}",
            think=THINK,
            rng=random.Random(rng.random()),
        )
        for seat in info["seats"]
        if seat["user_id"] in token_of
    ]
    return Table(table_id, plan, seats)


async def _kill_loop(
    server: ServerProcess, tables: list[Table], rng: random.Random, log: list[dict[str, Any]]
) -> None:
    """KILLS times: play for a random moment, SIGKILL, start again on the same port."""
    for _ in range(KILLS):
        await asyncio.sleep(rng.uniform(*KILL_GAP))
        playing = sum(not seat.finished for table in tables for seat in table.seats)
        started = time.monotonic()
        server.kill()
        await asyncio.sleep(rng.uniform(0.0, 0.3))  # down for a moment
        await asyncio.to_thread(server.start, server.port)
        log.append(
            {"seats_playing": playing, "restart_seconds": round(time.monotonic() - started, 2)}
        )


async def _run(server: ServerProcess, admin: tuple[str, str], database: str, seed: int) -> None:
    rng = random.Random(seed)
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:
        boss = await _login(http, admin)
        gate = asyncio.Semaphore(8)

        async def one(index: int) -> Table:
            async with gate:
                return await _set_table(server, http, boss, index, rng)

        tables = await asyncio.gather(*(one(i) for i in range(TABLES)))
    seats = [seat for table in tables for seat in table.seats]
    kills: list[dict[str, Any]] = []
    budget = 100.0 + 40.0 * KILLS + 1.5 * TABLES
    players = asyncio.gather(*(seat.run(budget) for seat in seats))
    await _kill_loop(server, tables, rng, kills)
    await players
    played = time.monotonic() - started

    records = await read_tables(database, [table.id for table in tables])
    totals = {"acknowledged": 0, "lost": 0, "doubled": 0, "unanswered_in_log": 0}
    for table in tables:
        record = records[table.id]
        assert record.status == "finished", (table.id, record.status)
        for key, value in check_log(record, table.seats).items():
            totals[key] += value
        if table.plan.coins:
            stakes = [e for e in record.ledger if e[0] == "stake"]
            payouts = [e for e in record.ledger if e[0] == "payout"]
            assert len(stakes) == 2, record.ledger
            # The winner takes the pot; a tied match (its last drawn deal allowed, equal
            # points: RULES.md §2.6) is split between the two.
            assert len(record.matches) == 1, record.matches
            shares = payout_shares(2 * STAKE, 2, None, record.matches[0]["winner_seat"])
            expected = sorted(amount for amount in shares.values() if amount > 0)
            assert sorted(amount for *_r, amount in payouts) == expected, record.ledger
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:
        boss = await _login(http, admin)
        check = (await http.get("/api/admin/ledger/check", headers=boss)).json()
    assert check["ok"] is True, check

    refusals: dict[str, int] = {}
    for seat in seats:
        for code, count in seat.refusals.items():
            refusals[code] = refusals.get(code, 0) + count
    results = {
        "seed": seed,
        "tables": TABLES,
        "tables_finished": sum(records[t.id].status == "finished" for t in tables),
        "coin_tables": sum(t.plan.coins for t in tables),
        "kills": len(kills),
        "kills_detail": kills,
        "acknowledged_moves": totals["acknowledged"],
        "moves_lost": totals["lost"],
        "moves_doubled": totals["doubled"],
        "in_flight_at_a_kill_then_logged": totals["unanswered_in_log"],
        "commands_sent": sum(len(seat.sent) for seat in seats),
        "log_entries": sum(len(records[t.id].entries) for t in tables),
        "connects": sum(seat.connects for seat in seats),
        "reconnects_resumed": sum(seat.resumes for seat in seats),
        "reconnects_given_a_snapshot": sum(seat.snapshots_after_since for seat in seats),
        "refusals": refusals,
        "ledger_check": check,
        "seconds": round(played, 1),
    }
    _RESULTS.update(results)
    assert len(kills) == KILLS
    assert all(kill["seats_playing"] > 0 for kill in kills), kills
    assert totals["lost"] == 0 and totals["doubled"] == 0, totals
    assert totals["acknowledged"] > 0


_RESULTS: dict[str, Any] = {}


def test_sigkill_during_play_loses_no_acknowledged_move(
    postgres_database: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seed = env_seed("SAHRAT_FAULT_SEED")
    print(f"SAHRAT_FAULT_SEED={seed}")
    admin = make_admin(postgres_database, "faults")
    server = ServerProcess(
        postgres_database,
        tmp_path,
        {
            "SAHRAT_BOT_DELAY_SECONDS": "0",
            "SAHRAT_BOT_LEVEL": "simple",
            "SAHRAT_GRACE_SECONDS": "600",
            "SAHRAT_ONE_ADDRESS_PER_COIN_TABLE": "0",  # both players connect from 127.0.0.1
            "SAHRAT_TURN_SECONDS_OVERRIDE": str(TURN_SECONDS),
        },
    )
    server.start()
    _RESULTS.clear()
    try:
        asyncio.run(_run(server, admin, postgres_database, seed))
    finally:
        server.stop()
        if _RESULTS:
            write_results("faults_sigkill", dict(_RESULTS), request.node)
