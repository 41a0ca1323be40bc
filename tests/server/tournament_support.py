"""What the tournament tests share (docs/tournaments.md): a server that plays short
tournament matches, making and registering over REST, a driver that plays every
entrant who comes to their tables over real WebSockets (one may drop out, one may never
come), and reading the tournament's ledger entries from the database.

Short matches: Konkan tables of one round (``SAHRAT_TOURNAMENT_KONKAN_ROUNDS=1``),
Conquian tables of one deal won (``SAHRAT_TOURNAMENT_CONQUIAN_WINS=1``); bots move at
once (``SAHRAT_BOT_DELAY_SECONDS=0``); the runner looks every 0.2 s; a seat nobody plays
is played by the timer after ``TURN_SECONDS`` and forfeited to a bot after two timer
turns in a row; the complaint window lasts ``COMPLAINT_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from .harness import Api, ServerProcess, WireClient, auth_headers, engine_and_player, wire_action

TURN_SECONDS = 4
COMPLAINT_SECONDS = 3
TOURNAMENT_ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_TOURNAMENT_TICK_SECONDS": "0.2",
    "SAHRAT_TOURNAMENT_KONKAN_ROUNDS": "1",
    "SAHRAT_TOURNAMENT_CONQUIAN_WINS": "1",
    "SAHRAT_TOURNAMENT_COMPLAINT_MINUTES": str(COMPLAINT_SECONDS / 60),
    "SAHRAT_TOURNAMENT_HOUSE_PERMILLE": "100",
    "SAHRAT_TURN_SECONDS_OVERRIDE": str(TURN_SECONDS),
    # two: a turn the timer plays for a player while the server restarts forfeits nothing
    "SAHRAT_TIMER_TURNS_TO_FORFEIT": "2",
    "SAHRAT_GRACE_SECONDS": "30",
}
RUN_SECONDS = 300.0  # a whole small tournament, restart included


def iso_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


async def make_tournament(api: Api, token: str, **body: Any) -> dict[str, Any]:
    response = await api.http.post("/api/tournaments", json=body, headers=auth_headers(token))
    assert response.status_code == 201, response.text
    return dict(response.json())


async def register(api: Api, token: str, tournament_id: int) -> dict[str, Any]:
    response = await api.http.post(
        f"/api/tournaments/{tournament_id}/entries", headers=auth_headers(token)
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def detail(api: Api, tournament_id: int, token: str | None = None) -> dict[str, Any]:
    return dict(await api.get(f"/api/tournaments/{tournament_id}", token))


async def wait_state(
    api: Api, tournament_id: int, states: Collection[str], timeout: float = RUN_SECONDS
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await detail(api, tournament_id)
        if found["state"] in states:
            return found
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.2)


@dataclass
class Driver:
    """Plays the people entered in a tournament at each of their tables, each seat
    over its own WebSocket with the simple player, until the tournament is past its
    tables. ``absent``: users who never come; ``leave_after``: users who leave their
    first table after that many moves of their own (a bot finishes it). A connection
    the server drops (a restart) is opened again while the table plays."""

    server: ServerProcess
    api: Api
    game: str
    tokens: Mapping[int, str]  # user id -> token
    absent: Collection[int] = ()
    leave_after: Mapping[int, int] = field(default_factory=dict)
    tasks: dict[tuple[int, int], asyncio.Task[None]] = field(default_factory=dict)
    left: set[int] = field(default_factory=set)
    played: dict[int, list[int]] = field(default_factory=dict)  # table id -> users who moved

    async def run(
        self,
        tournament_id: int,
        until: Collection[str] = ("complaints", "finished", "cancelled"),
        during: Callable[[dict[str, Any]], Any] | None = None,
    ) -> dict[str, Any]:
        """Drive until the tournament is in a state of ``until``; ``during(detail)`` is
        awaited at every look (a test's restart)."""
        deadline = asyncio.get_running_loop().time() + RUN_SECONDS
        try:
            while True:
                try:
                    found = await detail(self.api, tournament_id)
                except httpx.HTTPError:  # the server restarting
                    await asyncio.sleep(0.2)
                    continue
                if found["state"] in until:
                    return found
                self._seat_everyone(found)
                if during is not None:
                    await during(found)
                assert asyncio.get_running_loop().time() < deadline, found
                await asyncio.sleep(0.2)
        finally:
            for task in self.tasks.values():
                task.cancel()
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def _seat_everyone(self, found: dict[str, Any]) -> None:
        users = {e["entry"]: e["user_id"] for e in found["entrants"]}
        for round_ in found["rounds"]:
            for table in round_["tables"]:
                if table["state"] == "finished" or table["table_id"] is None:
                    continue
                for entry in table["seats"]:
                    user = users.get(entry)
                    if user is None or user in self.absent or user in self.left:
                        continue
                    key = (table["table_id"], user)
                    task = self.tasks.get(key)
                    if task is None or (task.done() and not self._table_done(task)):
                        self.tasks[key] = asyncio.create_task(self._play(*key))

    @staticmethod
    def _table_done(task: asyncio.Task[None]) -> bool:
        return not task.cancelled() and task.exception() is None

    async def _play(self, table_id: int, user: int) -> None:
        """Play one seat until the match is over (or leave, for a drop-out)."""
        engine, player = engine_and_player(self.game)
        token = self.tokens[user]
        client = await WireClient.connect(self.server, table_id, token, name=f"u{user}")
        moves = 0
        try:
            while True:
                await client.wait_until(
                    lambda: (
                        client.closed
                        or (
                            client.view is not None
                            and (client.view["match_over"] or client.may_move)
                        )
                    ),
                    timeout=60,
                )
                if client.closed:
                    raise ConnectionError("the server closed the socket")
                view = client.view
                assert view is not None
                if view["match_over"]:
                    return
                if user in self.leave_after and moves >= self.leave_after[user]:
                    response = await self.api.http.post(
                        f"/api/tables/{table_id}/leave", headers=auth_headers(token)
                    )
                    assert response.status_code == 200, response.text
                    self.left.add(user)
                    return
                reply = await client.command(wire_action(engine, player(view)))
                error = reply["payload"].get("error")
                assert reply["payload"].get("ok") or error["code"] in ("stale", "round_break"), (
                    reply
                )
                if reply["payload"].get("ok"):
                    moves += 1
                    self.played.setdefault(table_id, []).append(user)
        finally:
            with contextlib.suppress(Exception):
                await client.close()


# --- the ledger, read from the database --------------------------------------------------


@dataclass(frozen=True)
class Movement:
    key: str
    debit: str
    credit: str
    amount: int
    reason: str


async def tournament_ledger(database: str, tournament_id: int) -> list[Movement]:
    """Every ledger entry of a tournament (its keys are ``tournament:<id>:...``), in the
    order they were posted."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT idempotency_key, debit_account, credit_account, amount, reason "
                    "FROM ledger_entries WHERE idempotency_key LIKE :prefix ORDER BY id"
                ),
                {"prefix": f"tournament:{tournament_id}:%"},
            )
            return [Movement(str(k), str(d), str(c), int(a), str(r)) for k, d, c, a, r in rows]
    finally:
        await engine.dispose()


async def balances(database: str, accounts: Collection[str]) -> dict[str, int]:
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT account_id, balance FROM balances"),
            )
            found = {str(a): int(b) for a, b in rows}
    finally:
        await engine.dispose()
    return {account: found.get(account, 0) for account in accounts}


async def first_match(database: str, table_id: int) -> dict[str, Any]:
    """The first finished match of a game table: its score sheet and seats' users."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            row = (
                await conn.execute(
                    text(
                        "SELECT id, score_sheet, players FROM matches WHERE table_id = :t "
                        "ORDER BY id LIMIT 1"
                    ),
                    {"t": table_id},
                )
            ).first()
    finally:
        await engine.dispose()
    assert row is not None, f"table {table_id} has no finished match"
    sheet, players = row[1], row[2]
    if isinstance(sheet, str):
        sheet, players = json.loads(sheet), json.loads(players)
    return {"id": int(row[0]), "score_sheet": sheet, "players": players}
