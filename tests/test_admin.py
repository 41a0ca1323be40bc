"""Admin REST, coin tables and the player coin endpoints, in process (httpx against the
ASGI app, a fresh SQLite file per test)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI

from sahrat.cli import create_admin
from sahrat.server.app import create_app
from sahrat.settings import Settings
from sahrat.store import ledger

pytestmark = pytest.mark.asyncio

Auth = dict[str, str]


@dataclass
class Server:
    app: FastAPI
    client: httpx.AsyncClient
    admin: Auth

    async def guest(self) -> tuple[Auth, int]:
        response = await self.client.post("/api/guests")
        assert response.status_code == 201
        data = response.json()
        return {"Authorization": f"Bearer {data['token']}"}, data["user"]["id"]

    async def coin_table(self, players: int = 2, stake: int = 100, **options: Any) -> int:
        response = await self.client.post(
            "/api/admin/tables",
            json={"game": "konkan", "options": {"players": players, "stake": stake, **options}},
            headers=self.admin,
        )
        assert response.status_code == 201, response.text
        table_id: int = response.json()["id"]
        return table_id

    async def me(self, auth: Auth) -> dict[str, Any]:
        data: dict[str, Any] = (await self.client.get("/api/me", headers=auth)).json()
        return data

    async def invariant(self) -> ledger.InvariantReport:
        async with self.app.state.hub.sessions() as session:
            report: ledger.InvariantReport = await ledger.check_invariant(session)
        assert report.ok, report
        return report


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}"
    password = await create_admin(url, "boss")
    # In process, every client has one address: the one-account-per-address rule of coin
    # tables is off here (tests/server/test_access.py tests it on a real server), and so
    # are the account rules of coin tables (tests/server/test_farming.py).
    app = create_app(
        Settings(
            database_url=url,
            SAHRAT_ONE_ADDRESS_PER_COIN_TABLE=False,
            SAHRAT_GUESTS_AT_COIN_TABLES=True,
            SAHRAT_COIN_TABLE_MIN_MATCHES=0,
        )
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
            login = await client.post("/api/login", json={"name": "boss", "password": password})
            assert login.status_code == 200, login.text
            admin = {"Authorization": f"Bearer {login.json()['token']}"}
            yield Server(app, client, admin)


ADMIN_CALLS = [
    ("POST", "/api/admin/tables", {"game": "konkan", "options": {}}),
    ("GET", "/api/admin/tables", None),
    ("PATCH", "/api/admin/tables/1", {"options": {"rounds": 3}}),
    ("DELETE", "/api/admin/tables/1", None),
    ("GET", "/api/admin/settings", None),
    ("PATCH", "/api/admin/settings", {"welcome_grant": 500}),
    ("GET", "/api/admin/players", None),
    ("GET", "/api/admin/players/1", None),
    ("GET", "/api/admin/players/1/ledger", None),
    ("POST", "/api/admin/players/2/suspend", {"suspended": False}),
    ("GET", "/api/admin/ledger/check", None),
    ("GET", "/api/admin/players/2/ratings", None),
    ("POST", "/api/admin/players/2/ratings/konkan51/reset", None),
    ("GET", "/api/admin/players/2/cooldown", None),
    ("DELETE", "/api/admin/players/2/cooldown", None),
    ("GET", "/api/admin/chat/reports", None),
]
# (method, route, path called, body, what an admin gets): tournament 1 is made by the admin
# before the calls; complaint 1 does not exist, so an admin reaches the lookup and no further
SCHEDULE = {
    "name": "Daily cup",
    "game": "konkan",
    "format": "knockout",
    "seats": 4,
    "first_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
    "every_minutes": 1440,
}
TOURNAMENT_CALLS = [
    ("POST", "/api/admin/tournament-schedules", "", SCHEDULE, 201),
    ("GET", "/api/admin/tournament-schedules", "", None, 200),
    ("DELETE", "/api/admin/tournament-schedules/{schedule_id}", "/1", None, 204),
    ("GET", "/api/admin/tournaments/{tournament_id}/complaints", "", None, 200),
    (
        "POST",
        "/api/admin/tournaments/{tournament_id}/complaints/{complaint_id}",
        "",
        {"decision": "dismissed"},
        404,
    ),
    ("POST", "/api/admin/tournaments/{tournament_id}/cancel", "", None, 200),
]


def tournament_path(route: str, tail: str) -> str:
    path = route.replace("{tournament_id}", "1").replace("{complaint_id}", "1")
    return path.replace("/{schedule_id}", tail)


async def test_every_admin_endpoint_needs_an_admin(server: Server) -> None:
    player, _ = await server.guest()
    schema = (await server.client.get("/openapi.json")).json()
    admin_paths = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if "admin" in op["tags"]
    }
    called = {(method, path.replace("/1", "/{table_id}", 1)) for method, path, _ in ADMIN_CALLS}
    called = {
        (
            m,
            p.replace("players/{table_id}", "players/{player_id}")
            .replace("/2/", "/{player_id}/")
            .replace("/konkan51/", "/{pool}/"),
        )
        for m, p in called
    }
    called |= {(method, route) for method, route, _, _, _ in TOURNAMENT_CALLS}
    assert admin_paths == called, admin_paths ^ called
    made = await server.client.post(
        "/api/tournaments",
        json={
            "name": "Admin's cup",
            "game": "konkan",
            "format": "knockout",
            "seats": 4,
            "starts_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
        },
        headers=server.admin,
    )
    assert made.status_code == 201 and made.json()["id"] == 1, made.text
    tournament_calls = [
        (method, tournament_path(route, tail), body, wanted)
        for method, route, tail, body, wanted in TOURNAMENT_CALLS
    ]
    plain_calls = [(method, path, body, None) for method, path, body in ADMIN_CALLS]
    for method, path, body, wanted in plain_calls + tournament_calls:
        none = await server.client.request(method, path, json=body)
        assert none.status_code == 401, (method, path, none.text)
        bad = await server.client.request(
            method, path, json=body, headers={"Authorization": "Bearer nope"}
        )
        assert bad.status_code == 401, (method, path)
        forbidden = await server.client.request(method, path, json=body, headers=player)
        assert forbidden.status_code == 403, (method, path, forbidden.text)
        assert forbidden.json()["detail"]["code"] == "not_admin"
        allowed = await server.client.request(method, path, json=body, headers=server.admin)
        if wanted is None:
            assert allowed.status_code in (200, 201), (method, path, allowed.text)
        else:
            assert allowed.status_code == wanted, (method, path, allowed.text)


async def test_tables_are_created_updated_and_closed(server: Server) -> None:
    client, admin = server.client, server.admin
    table_id = await server.coin_table(players=3, stake=50)
    info = (await client.get(f"/api/tables/{table_id}")).json()
    assert info["coin_table"] is True and info["options"]["stake"] == 50
    assert all(seat["user_id"] is None for seat in info["seats"])  # the admin does not sit

    bad = await client.patch(
        f"/api/admin/tables/{table_id}", json={"options": {"threshold": -3}}, headers=admin
    )
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "options", "threshold"]
    unknown = await client.patch(
        f"/api/admin/tables/{table_id}", json={"options": {"colour": 1}}, headers=admin
    )
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"][-1] == "colour"
    bad_new = await client.post(
        "/api/admin/tables", json={"game": "konkan", "options": {"stake": -1}}, headers=admin
    )
    assert bad_new.status_code == 422
    assert bad_new.json()["detail"][0]["loc"] == ["body", "options", "stake"]

    good = await client.patch(
        f"/api/admin/tables/{table_id}",
        json={"options": {"players": 2, "rounds": 2}},
        headers=admin,
    )
    assert good.status_code == 200, good.text
    assert good.json()["options"]["players"] == 2 and good.json()["options"]["stake"] == 50
    assert len(good.json()["seats"]) == 2

    # A running match's options cannot change.
    for _ in range(2):
        auth, _ = await server.guest()
        assert (await client.post(f"/api/tables/{table_id}/join", headers=auth)).status_code == 200
    assert (await client.get(f"/api/tables/{table_id}")).json()["status"] == "playing"
    refused = await client.patch(
        f"/api/admin/tables/{table_id}", json={"options": {"rounds": 1}}, headers=admin
    )
    assert refused.status_code == 409
    assert refused.json()["detail"]["code"] == "match_in_progress"
    assert "in progress" in refused.json()["detail"]["message"]
    closing = await client.delete(f"/api/admin/tables/{table_id}", headers=admin)
    assert closing.status_code == 409

    other = await server.coin_table()
    closed = await client.delete(f"/api/admin/tables/{other}", headers=admin)
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    assert (await client.get(f"/api/tables/{other}")).status_code == 404
    listed = (await client.get("/api/admin/tables", headers=admin)).json()
    assert [t["id"] for t in listed] == [table_id]


async def test_a_coin_table_takes_the_stakes_into_the_pot(server: Server) -> None:
    client = server.client
    table_id = await server.coin_table(players=2, stake=300)
    a, a_id = await server.guest()
    b, b_id = await server.guest()
    assert (await server.me(a))["balance"] == 1000
    assert (await client.post(f"/api/tables/{table_id}/join", headers=a)).status_code == 200
    assert (await client.post(f"/api/tables/{table_id}/join", headers=b)).status_code == 200
    assert (await client.get(f"/api/tables/{table_id}")).json()["status"] == "playing"
    assert (await server.me(a))["balance"] == 700
    assert (await server.me(b))["balance"] == 700
    mine = (await client.get("/api/me/ledger", headers=a)).json()
    assert mine["balance"] == 700
    assert [(e["reason"], e["amount"]) for e in mine["entries"]] == [
        ("stake", -300),
        ("welcome", 1000),
    ]
    assert mine["entries"][0]["counterparty"] == f"pot:{table_id}:1"
    report = await server.invariant()
    assert report.granted == 2000
    async with server.app.state.hub.sessions() as session:
        assert await ledger.balance(session, ledger.pot_account(table_id, 1)) == 600

    # Not enough coins for a 1000 stake any more: refused at the join.
    rich = await server.coin_table(players=2, stake=1000)
    poor = await client.post(f"/api/tables/{rich}/join", headers=a)
    assert poor.status_code == 409 and poor.json()["detail"]["code"] == "not_enough_coins"
    # A player cannot use one stake twice: the second table cannot start.
    t1, t2 = await server.coin_table(stake=600), await server.coin_table(stake=600)
    c, _ = await server.guest()
    d, _ = await server.guest()
    assert (await client.post(f"/api/tables/{t1}/join", headers=c)).status_code == 200
    assert (await client.post(f"/api/tables/{t2}/join", headers=c)).status_code == 200
    assert (await client.post(f"/api/tables/{t1}/join", headers=d)).status_code == 200
    assert (await server.me(c))["balance"] == 400
    e, _ = await server.guest()
    late = await client.post(f"/api/tables/{t2}/join", headers=e)
    assert late.status_code == 200  # e keeps the seat; c lost it, the table waits
    info = (await client.get(f"/api/tables/{t2}")).json()
    assert info["status"] == "waiting"
    assert [s["user_id"] for s in info["seats"]].count(None) == 1
    assert (await server.me(e))["balance"] == 1000
    await server.invariant()
    del a_id, b_id


async def test_server_defaults_apply_to_new_accounts(server: Server) -> None:
    client, admin = server.client, server.admin
    got = (await client.get("/api/admin/settings", headers=admin)).json()
    assert got == {
        "welcome_grant": 1000,
        "free_table_earnings": 10,
        "default_turn_seconds": 30,
        "free_table_earnings_per_day": 200,
    }
    changed = await client.patch(
        "/api/admin/settings",
        json={"welcome_grant": 250, "default_turn_seconds": 45, "free_table_earnings_per_day": 50},
        headers=admin,
    )
    assert changed.json()["welcome_grant"] == 250
    assert changed.json()["free_table_earnings_per_day"] == 50
    assert server.app.state.hub.defaults.free_table_earnings_per_day == 50  # what tables read
    bad = await client.patch("/api/admin/settings", json={"balance": 5}, headers=admin)
    assert bad.status_code == 422
    auth, _ = await server.guest()
    assert (await server.me(auth))["balance"] == 250
    table = await client.post("/api/tables", json={"game": "konkan"}, headers=auth)
    assert table.json()["options"]["turn_seconds"] == 45
    zero = await client.patch("/api/admin/settings", json={"welcome_grant": 0}, headers=admin)
    assert zero.status_code == 200
    poor, _ = await server.guest()
    assert (await server.me(poor))["balance"] == 0
    await server.invariant()


async def test_players_their_ledgers_and_suspension(server: Server) -> None:
    client, admin = server.client, server.admin
    a, a_id = await server.guest()
    b, b_id = await server.guest()
    players = (await client.get("/api/admin/players", headers=admin)).json()
    assert [p["id"] for p in players][-2:] == [a_id, b_id]
    assert players[0]["is_admin"] is True
    one = (await client.get(f"/api/admin/players/{a_id}", headers=admin)).json()
    assert one["balance"] == 1000 and one["suspended"] is False
    book = (await client.get(f"/api/admin/players/{a_id}/ledger", headers=admin)).json()
    assert book["balance"] == 1000 and book["entries"][0]["reason"] == "welcome"
    missing = await client.get("/api/admin/players/999/ledger", headers=admin)
    assert missing.status_code == 404

    # A suspended player cannot sit; their seat in a running match is left.
    table_id = await server.coin_table(players=2, stake=100)
    assert (await client.post(f"/api/tables/{table_id}/join", headers=a)).status_code == 200
    assert (await client.post(f"/api/tables/{table_id}/join", headers=b)).status_code == 200
    done = await client.post(
        f"/api/admin/players/{a_id}/suspend", json={"suspended": True}, headers=admin
    )
    assert done.status_code == 200 and done.json()["suspended"] is True
    info = (await client.get(f"/api/tables/{table_id}")).json()
    seat = next(s for s in info["seats"] if s["user_id"] == a_id)
    assert seat["left"] is True and seat["bot"] is False  # the turn timer plays it
    back = await client.post(f"/api/tables/{table_id}/join", headers=a)
    assert back.status_code == 403 and back.json()["detail"]["code"] == "suspended"
    free = await client.post("/api/tables", json={"game": "konkan"}, headers=a)
    assert free.status_code == 403
    assert (await server.me(a))["suspended"] is True
    lifted = await client.post(
        f"/api/admin/players/{a_id}/suspend", json={"suspended": False}, headers=admin
    )
    assert lifted.json()["suspended"] is False
    back = await client.post(f"/api/tables/{table_id}/join", headers=a)
    assert back.status_code == 200, back.text
    mine = (await client.get("/api/admin/ledger/check", headers=admin)).json()
    assert mine["ok"] is True and mine["granted"] == 2000


async def test_leaderboard_and_my_matches(server: Server) -> None:
    client = server.client
    a, a_id = await server.guest()
    table_id = await server.coin_table(players=2, stake=400)
    b, b_id = await server.guest()
    await client.post(f"/api/tables/{table_id}/join", headers=a)
    await client.post(f"/api/tables/{table_id}/join", headers=b)
    _, c_id = await server.guest()
    board = (await client.get("/api/leaderboard", params={"by": "coins"})).json()
    # Guests, and accounts without a finished match of their own, are not ranked
    # (tests/server/test_farming.py ranks registered players).
    assert not {a_id, b_id, c_id} & {row["user_id"] for row in board}
    wins = (await client.get("/api/leaderboard", params={"by": "wins"})).json()
    assert all(row["wins"] == 0 for row in wins)
    assert (await client.get("/api/leaderboard", params={"by": "luck"})).status_code == 422
    assert (await client.get("/api/me/matches", headers=a)).json() == []
    assert (await client.get("/api/me/matches")).status_code == 401
    assert (await client.get("/api/me/ledger")).status_code == 401
