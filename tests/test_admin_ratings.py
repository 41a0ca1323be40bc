"""Ratings over REST, in process (httpx against the ASGI app, a fresh SQLite file per
test): the leaderboard's rule, a player's public ratings, ``/api/me``, and the admin's
rating reset and cool-down view and lift (docs/rating.md). The rated play itself, over
the WebSocket, is tests/server/test_rated_play.py's."""

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
from sqlalchemy import insert

from sahrat.cli import create_admin
from sahrat.ratings import CooldownRule
from sahrat.server.app import create_app
from sahrat.settings import Settings
from sahrat.store import ratings
from sahrat.store.models import Rating, User

pytestmark = pytest.mark.asyncio

Auth = dict[str, str]
RULE = CooldownRule()  # the defaults: 5 minutes, times 3 per further leave


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

    async def rows(self, model: Any, rows: list[dict[str, Any]]) -> None:
        async with self.app.state.hub.sessions() as session, session.begin():
            await session.execute(insert(model), rows)

    async def rated_table(self) -> int:
        response = await self.client.post(
            "/api/admin/tables",
            json={"game": "konkan", "options": {"players": 2}, "rated": True},
            headers=self.admin,
        )
        assert response.status_code == 201, response.text
        assert response.json()["rated"] is True
        return int(response.json()["id"])


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}"
    password = await create_admin(url, "boss")
    app = create_app(Settings(database_url=url))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
            login = await client.post("/api/login", json={"name": "boss", "password": password})
            assert login.status_code == 200, login.text
            admin = {"Authorization": f"Bearer {login.json()['token']}"}
            yield Server(app, client, admin)


def rating(user_id: int, shown: int, **values: Any) -> dict[str, Any]:
    row = {
        "user_id": user_id,
        "pool": "konkan51",
        "mu": 30.0,
        "sigma": 3.0,
        "games": 20,
        "shown": shown,
        "provisional": False,
        "last_played_at": datetime.now(UTC) - timedelta(days=1),
    }
    return row | values


async def test_the_leaderboard_shows_settled_recent_accounts(server: Server) -> None:
    users = [
        {"id": 100 + i, "name": f"p{i}", "name_key": f"p{i}", "guest": i == 5} for i in range(8)
    ]
    await server.rows(User, users)
    await server.rows(
        Rating,
        [
            rating(100, 1900),
            rating(101, 2100),
            rating(102, 2100),  # a tie with 101: the same rank
            rating(103, 2500, provisional=True),  # not settled: not ranked
            rating(104, 2400, last_played_at=datetime.now(UTC) - timedelta(days=31)),  # stale
            rating(105, 2600),  # a guest
            rating(106, 1700),
            rating(107, 2300, pool="konkan71"),  # another pool
        ],
    )
    board = (await server.client.get("/api/ratings", params={"pool": "konkan51"})).json()
    assert [(r["rank"], r["user_id"], r["rating"]) for r in board] == [
        (1, 102, 2100),
        (1, 101, 2100),
        (3, 100, 1900),
        (4, 106, 1700),
    ]
    assert board[2] == {"rank": 3, "user_id": 100, "name": "p0", "rating": 1900, "games": 20}
    other = (await server.client.get("/api/ratings?pool=konkan71&limit=1")).json()
    assert [r["user_id"] for r in other] == [107]
    assert (await server.client.get("/api/ratings?pool=conquian")).json() == []
    for bad in ("pool=chess", "limit=0", "limit=201"):
        assert (await server.client.get(f"/api/ratings?{bad}")).status_code == 422, bad


async def test_a_new_player_shows_1500_provisional(server: Server) -> None:
    _auth, user_id = await server.guest()
    async with server.app.state.hub.sessions() as session:
        assert await ratings.shown_ratings(session, [user_id], "conquian") == {
            user_id: (1500, True)
        }
    profile = (await server.client.get(f"/api/users/{user_id}/ratings")).json()
    assert profile["user_id"] == user_id and profile["pools"] == []
    missing = await server.client.get("/api/users/99999/ratings")
    assert missing.status_code == 404
    assert missing.json()["detail"]["code"] == "no_such_player"


async def test_an_admin_resets_a_rating(server: Server) -> None:
    auth, user_id = await server.guest()
    await server.rows(Rating, [rating(user_id, 2050, games=40)])
    me = (await server.client.get("/api/me", headers=auth)).json()
    assert me["ratings"] == {"konkan51": {"rating": 2050, "provisional": False, "games": 40}}

    url = f"/api/admin/players/{user_id}/ratings/konkan51/reset"
    assert (await server.client.post(url, headers=auth)).status_code == 403  # not an admin
    response = await server.client.post(url, headers=server.admin)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["pools"][0] | {"history": None} == {
        "pool": "konkan51",
        "rating": 1500,
        "provisional": True,
        "games": 0,
        "history": None,
    }
    assert [(h["reason"], h["match_id"], h["rating"], h["place"]) for h in data["history"]] == [
        ("reset", None, 1500, None)
    ]
    assert data["history"][0]["mu"] == 25.0
    public = (await server.client.get(f"/api/users/{user_id}/ratings")).json()
    assert [(p["match_id"], p["rating"]) for p in public["pools"][0]["history"]] == [(None, 1500)]
    me = (await server.client.get("/api/me", headers=auth)).json()
    assert me["ratings"]["konkan51"] == {"rating": 1500, "provisional": True, "games": 0}

    bad_pool = await server.client.post(
        f"/api/admin/players/{user_id}/ratings/chess/reset", headers=server.admin
    )
    assert bad_pool.status_code == 422
    nobody = await server.client.post(
        "/api/admin/players/99999/ratings/konkan51/reset", headers=server.admin
    )
    assert nobody.status_code == 404 and nobody.json()["detail"]["code"] == "no_such_player"


async def test_leaves_escalate_and_an_admin_lifts_the_cool_down(server: Server) -> None:
    auth, user_id = await server.guest()
    table_id = await server.rated_table()
    now = datetime.now(UTC)
    async with server.app.state.hub.sessions() as session, session.begin():
        first = await ratings.record_leave(
            session, user_id, table_id=table_id, start_seq=1, reason="left", now=now, rule=RULE
        )
        again = await ratings.record_leave(
            session, user_id, table_id=table_id, start_seq=1, reason="forfeit", now=now, rule=RULE
        )
        second = await ratings.record_leave(
            session, user_id, table_id=table_id, start_seq=9, reason="forfeit", now=now, rule=RULE
        )
    assert first is not None and first.until == now + timedelta(minutes=5)
    assert again is None  # one match's leave counts once
    assert second is not None and second.until == now + timedelta(minutes=15)

    me = (await server.client.get("/api/me", headers=auth)).json()
    assert me["cooldown"] is not None and 14 * 60 < me["cooldown"]["seconds_left"] <= 15 * 60
    # barred from sitting down at a rated table
    other = await server.rated_table()
    barred = await server.client.post(f"/api/tables/{other}/join", json={}, headers=auth)
    assert barred.status_code == 403 and barred.json()["detail"]["code"] == "rated_cooldown"

    url = f"/api/admin/players/{user_id}/cooldown"
    seen = (await server.client.get(url, headers=server.admin)).json()
    assert seen["leaves"] == 2 and seen["score"] == pytest.approx(2.0, abs=1e-3)
    assert 14 * 60 < seen["seconds_left"] <= 15 * 60
    history = (
        await server.client.get(f"/api/admin/players/{user_id}/ratings", headers=server.admin)
    ).json()
    assert [(leave["start_seq"], leave["reason"]) for leave in history["leaves"]] == [
        (1, "left"),
        (9, "forfeit"),
    ] or [(leave["start_seq"], leave["reason"]) for leave in history["leaves"]] == [
        (9, "forfeit"),
        (1, "left"),
    ]  # both at the same moment: either order is newest first

    lifted = (await server.client.delete(url, headers=server.admin)).json()
    assert lifted["until"] is None and lifted["seconds_left"] == 0 and lifted["leaves"] == 2
    assert (await server.client.get("/api/me", headers=auth)).json()["cooldown"] is None
    joined = await server.client.post(f"/api/tables/{other}/join", json={}, headers=auth)
    assert joined.status_code == 200, joined.text
    # the score stays: a third leave now bars for the third step, 45 minutes
    later = datetime.now(UTC)
    async with server.app.state.hub.sessions() as session, session.begin():
        third = await ratings.record_leave(
            session, user_id, table_id=table_id, start_seq=20, reason="left", now=later, rule=RULE
        )
    assert third is not None and third.until == later + timedelta(minutes=45)

    nobody = await server.client.get("/api/admin/players/99999/cooldown", headers=server.admin)
    assert nobody.status_code == 404


async def test_only_an_admin_opens_a_rated_table_and_it_is_free(server: Server) -> None:
    auth, _user_id = await server.guest()
    refused = await server.client.post(
        "/api/tables", json={"game": "conquian", "rated": True}, headers=auth
    )
    assert refused.status_code == 403
    assert refused.json()["detail"]["code"] == "rated_by_queue"
    coins = await server.client.post(
        "/api/admin/tables",
        json={"game": "konkan", "options": {"stake": 100}, "rated": True},
        headers=server.admin,
    )
    assert coins.status_code == 422
    assert coins.json()["detail"][0]["loc"] == ["body", "options", "stake"]
    unrated = await server.client.post("/api/tables", json={"game": "conquian"}, headers=auth)
    assert unrated.status_code == 201 and unrated.json()["rated"] is False
    assert unrated.json()["seats"][0]["rating"] is None  # no rating at an unrated table
