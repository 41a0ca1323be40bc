"""Farming coins is pointless (docs/economy.md), attacked on a live server.

A farm makes throw-away accounts, each with its welcome coins, and has them lose coin
matches to the account it wants rich; or it sits accounts at tables and lets bots or
the turn timer play them. Here: a guest cannot sit at a coin table (neither join nor
create one); a registered account cannot either until it has enough counted matches
(docs/economy.md, "What counts") — a match its bot played for it does not count; and
the leaderboard ranks neither guests nor accounts without a counted match.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Callable
from typing import Any

import httpx

from .harness import Api, ServerProcess, WireClient, make_admin, play

RULES = {
    "SAHRAT_GUESTS_AT_COIN_TABLES": "false",
    "SAHRAT_COIN_TABLE_MIN_MATCHES": "1",
    # a one-deal match counts here (the minimums are test_real_play.py's)
    "SAHRAT_COUNTED_MIN_DEALS": "1",
    "SAHRAT_COUNTED_MIN_TURNS": "1",
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_BOT_LEVEL": "simple",
    "SAHRAT_GRACE_SECONDS": "0.5",  # a socket closed for good: a bot plays on soon
}
COIN = {"game": "conquian", "options": {"stake": 10}}
SHORT = {"game": "conquian", "options": {"wins_needed": 1}}
_hosts = itertools.count(1)


class Player:
    def __init__(self, http: httpx.AsyncClient, token: str, user: dict[str, Any]) -> None:
        self.http, self.token, self.id = http, token, int(user["id"])
        # a network address of its own (the server trusts 127.0.0.1 as its proxy)
        self.headers = {
            "Authorization": f"Bearer {token}",
            "X-Forwarded-For": f"198.51.100.{next(_hosts)}",
        }

    async def post(self, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        return await self.http.post(path, json=body or {}, headers=self.headers)


async def _sign_up(http: httpx.AsyncClient) -> Player:
    name = f"p{secrets.token_hex(4)}"
    made = await http.post("/api/users", json={"name": name, "password": "long enough"})
    assert made.status_code == 201, made.text
    return Player(http, made.json()["token"], made.json()["user"])


def _code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["detail"]["code"])


async def _finish(http: httpx.AsyncClient, table_id: int) -> None:
    for _ in range(600):
        if (await http.get(f"/api/tables/{table_id}/matches")).json():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"table {table_id}'s match did not finish")


async def _farm(server: ServerProcess, database: str) -> dict[str, Any]:
    api = Api(server)
    http = api.http
    name, password = make_admin(database)
    login = await http.post("/api/login", json={"name": name, "password": password})
    boss = {"Authorization": f"Bearer {login.json()['token']}"}
    coin_table = (await http.post("/api/admin/tables", json=COIN, headers=boss)).json()["id"]
    found: dict[str, Any] = {}
    try:
        token, user = await api.guest()
        guest = Player(http, token, user)
        found["guest_join"] = _code(await guest.post(f"/api/tables/{coin_table}/join"), 403)
        found["guest_create"] = _code(await guest.post("/api/tables", COIN), 403)

        a, b, idle = await _sign_up(http), await _sign_up(http), await _sign_up(http)
        found["fresh_join"] = _code(await a.post(f"/api/tables/{coin_table}/join"), 403)

        # The idle account sits at a free table against a bot, opens its socket and walks
        # away without a move: after the grace period a bot plays its seat to the end.
        table = (await idle.post("/api/tables", SHORT)).json()["id"]
        assert (await idle.post(f"/api/tables/{table}/start", {"level": "simple"})).is_success
        away = await WireClient.connect(server, table, idle.token, name="idle")
        await away.close()
        await _finish(http, table)
        found["idle_join"] = _code(await idle.post(f"/api/tables/{coin_table}/join"), 403)

        # a and b play a match themselves.
        table = (await a.post("/api/tables", SHORT)).json()["id"]
        assert (await b.post(f"/api/tables/{table}/join")).status_code == 200
        seats = [
            await WireClient.connect(server, table, p.token, name=f"seat{i}")
            for i, p in enumerate((a, b))
        ]
        await play("conquian", seats, until=lambda view: False)
        for seat in seats:
            await seat.close()
        await _finish(http, table)
        found["played_join"] = [
            (await p.post(f"/api/tables/{coin_table}/join")).status_code for p in (a, b)
        ]
        board = (await http.get("/api/leaderboard", params={"limit": 100})).json()
        found["ranked"] = {row["user_id"] for row in board}
        found["ids"] = {"a": a.id, "b": b.id, "idle": idle.id, "guest": guest.id}
    finally:
        await api.aclose()
    return found


def test_coin_tables_need_an_account_that_played(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    found = asyncio.run(_farm(start_server(**RULES), database))
    assert found["guest_join"] == "coin_table_needs_account"
    assert found["guest_create"] == "coin_table_needs_account"
    assert found["fresh_join"] == "coin_table_needs_matches"
    assert found["idle_join"] == "coin_table_needs_matches"  # its bot's match is not its own
    assert found["played_join"] == [200, 200]
    ids = found["ids"]
    assert {ids["a"], ids["b"]} <= found["ranked"]
    assert not {ids["idle"], ids["guest"]} & found["ranked"]
