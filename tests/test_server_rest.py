"""The REST API, in process: httpx against the ASGI app, a fresh SQLite file per test.

The app's lifespan runs as in production (Alembic migration, then the hub
loads the tables), so these tests also cover start-up and a restart.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI
from sqlalchemy import text

from sahrat import wire_schemas
from sahrat.cli import SCHEMA_MODELS, main
from sahrat.server.app import create_app
from sahrat.server.migrate import head_revision
from sahrat.settings import Settings
from sahrat.store.models import Match

pytestmark = pytest.mark.asyncio


@dataclass
class Server:
    app: FastAPI
    client: httpx.AsyncClient

    async def guest(self) -> dict[str, str]:
        """A fresh guest's authorization header."""
        response = await self.client.post("/api/guests")
        assert response.status_code == 201
        return {"Authorization": f"Bearer {response.json()['token']}"}

    async def table(self, auth: dict[str, str], **body: Any) -> dict[str, Any]:
        body.setdefault("game", "konkan")
        response = await self.client.post("/api/tables", json=body, headers=auth)
        assert response.status_code == 201, response.text
        data: dict[str, Any] = response.json()
        return data


def _settings(tmp_path: Path) -> Settings:
    # Every in-process client has one (unknown) address: the account limits are lifted,
    # the coin-table rules too (tests/server/test_farming.py tests them on a real server).
    return Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}",
        SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR=1_000_000,
        SAHRAT_LOGINS_PER_ADDRESS_MINUTE=1_000_000,
        SAHRAT_GUESTS_AT_COIN_TABLES=True,
        SAHRAT_COIN_TABLE_MIN_MATCHES=0,
    )


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    app = create_app(_settings(tmp_path))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
            yield Server(app, client)


def _code(response: httpx.Response) -> str:
    code: str = response.json()["detail"]["code"]
    return code


# --- health ------------------------------------------------------------------------------


async def test_readyz_is_503_until_the_app_has_started(tmp_path: Path) -> None:
    app = create_app(_settings(tmp_path))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
        assert (await client.get("/healthz")).json() == {"ok": True}
        response = await client.get("/readyz")
        assert response.status_code == 503
        assert response.json() == {"ready": False, "pid": os.getpid()}
        async with app.router.lifespan_context(app):
            response = await client.get("/readyz")
            assert response.status_code == 200
            assert response.json() == {"ready": True, "pid": os.getpid()}
            assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/readyz")).status_code == 503


async def test_start_up_migrates_the_database_to_head(server: Server) -> None:
    async with server.app.state.hub.sessions() as session:
        version = await session.scalar(text("SELECT version_num FROM alembic_version"))
    assert version == head_revision() is not None


# --- players -----------------------------------------------------------------------------


async def test_a_guest_gets_an_account_and_a_token(server: Server) -> None:
    response = await server.client.post("/api/guests")
    assert response.status_code == 201
    data = response.json()
    # a readable name (docs/social.md), in English when the page does not say
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+ [1-9][0-9]{2}", data["user"]["name"])
    assert data["user"]["guest"] is True
    me = await server.client.get("/api/me", headers={"Authorization": f"Bearer {data['token']}"})
    assert me.status_code == 200
    assert me.json() == {
        **data["user"],
        "balance": 1000,  # the welcome grant
        "is_admin": False,
        "suspended": False,
        "ratings": {},  # no rated match played (docs/rating.md)
        "cooldown": None,
    }
    other = await server.client.post("/api/guests")
    assert other.json()["user"]["id"] != data["user"]["id"]
    assert other.json()["token"] != data["token"]


async def test_sign_up_log_in_and_log_out(server: Server) -> None:
    client = server.client
    signed = await client.post("/api/users", json={"name": "layla", "password": "a secret!"})
    assert signed.status_code == 201
    user = signed.json()["user"]
    assert user["name"] == "layla" and user["guest"] is False

    logged = await client.post("/api/login", json={"name": "layla", "password": "a secret!"})
    assert logged.status_code == 200
    assert logged.json()["user"] == user
    token = logged.json()["token"]
    assert token != signed.json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert (await client.get("/api/me", headers=auth)).json().items() >= user.items()

    out = await client.post("/api/logout", headers=auth)
    assert out.status_code == 204
    after = await client.get("/api/me", headers=auth)
    assert after.status_code == 401 and _code(after) == "bad_token"
    # The sign-up token was not revoked with the other one.
    first = {"Authorization": f"Bearer {signed.json()['token']}"}
    assert (await client.get("/api/me", headers=first)).status_code == 200


async def test_a_name_is_taken_once(server: Server) -> None:
    body = {"name": "نجمة_7", "password": "long enough"}
    assert (await server.client.post("/api/users", json=body)).status_code == 201
    again = await server.client.post("/api/users", json={**body, "password": "another one"})
    assert again.status_code == 409
    assert _code(again) == "name_taken"


async def test_wrong_logins_are_refused_alike(server: Server) -> None:
    client = server.client
    await client.post("/api/users", json={"name": "omar", "password": "right password"})
    guest = (await client.post("/api/guests")).json()["user"]["name"]
    for name, password in [
        ("omar", "wrong password"),
        ("nobody", "right password"),
        (guest, "any password"),  # a guest has no password to log in with
    ]:
        response = await client.post("/api/login", json={"name": name, "password": password})
        assert response.status_code == 401, name
        assert _code(response) == "bad_login"


@pytest.mark.parametrize(
    "body",
    [
        {"name": "ab", "password": "long enough"},
        {"name": "x" * 41, "password": "long enough"},
        {"name": " ab ", "password": "long enough"},  # trimmed: two letters are too few
        {"name": "semi;colon", "password": "long enough"},
        {"name": "fine_name", "password": "short"},
        {"name": "fine_name"},
    ],
)
async def test_sign_up_checks_the_name_and_password(server: Server, body: dict[str, str]) -> None:
    response = await server.client.post("/api/users", json=body)
    assert response.status_code == 422


async def test_missing_and_bad_tokens_are_401(server: Server) -> None:
    client = server.client
    for method, path in [
        ("GET", "/api/me"),
        ("POST", "/api/logout"),
        ("POST", "/api/tables"),
        ("POST", "/api/tables/1/join"),
        ("POST", "/api/tables/1/leave"),
        ("POST", "/api/tables/join"),
    ]:
        missing = await client.request(method, path, json={"game": "konkan"})
        assert missing.status_code == 401, path
        assert _code(missing) == "no_token"
        assert missing.headers["www-authenticate"] == "Bearer"
        bad = await client.request(
            method, path, json={"game": "konkan"}, headers={"Authorization": "Bearer nonsense"}
        )
        assert bad.status_code == 401, path
        assert _code(bad) == "bad_token"
    basic = await client.get("/api/me", headers={"Authorization": "Basic dXNlcjpwdw=="})
    assert _code(basic) == "no_token"


# --- tables ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "options", "name"),
    [
        ("konkan", {"players": 7}, "players"),
        ("konkan", {"colour": "red"}, "colour"),
        ("konkan", {"rounds": "five"}, "rounds"),
        ("conquian", {"players": 3}, "players"),
    ],
)
async def test_a_bad_option_is_a_422_naming_it(
    server: Server, game: str, options: dict[str, Any], name: str
) -> None:
    auth = await server.guest()
    response = await server.client.post(
        "/api/tables", json={"game": game, "options": options}, headers=auth
    )
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "options", name]
    assert problem["type"] == "bad_option"
    assert name in problem["msg"]
    assert (await server.client.get("/api/tables")).json() == []


async def test_an_unknown_game_is_a_422_on_the_game(server: Server) -> None:
    auth = await server.guest()
    response = await server.client.post("/api/tables", json={"game": "poker"}, headers=auth)
    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "game"]
    assert problem["type"] == "bad_option"


async def test_create_list_and_get_a_table(server: Server) -> None:
    auth = await server.guest()
    me = (await server.client.get("/api/me", headers=auth)).json()
    table = await server.table(auth, options={"players": 3, "threshold": 51})
    assert table["status"] == "waiting"
    assert table["game"] == "konkan"
    assert table["options"]["players"] == 3
    assert table["creator_id"] == me["id"]
    assert table["invite_code"] is None
    assert [seat["user_id"] for seat in table["seats"]] == [me["id"], None, None]
    assert table["seats"][0]["name"] == me["name"]

    listed = (await server.client.get("/api/tables")).json()
    assert [t["id"] for t in listed] == [table["id"]]
    got = await server.client.get(f"/api/tables/{table['id']}")
    assert got.status_code == 200
    assert got.json() == table

    missing = await server.client.get("/api/tables/999")
    assert missing.status_code == 404
    assert _code(missing) == "no_such_table"


async def test_list_filters_by_game_and_status(server: Server) -> None:
    auth = await server.guest()
    konkan = await server.table(auth, options={"players": 2})
    conquian = await server.table(await server.guest(), game="conquian")
    joined = await server.client.post(
        f"/api/tables/{konkan['id']}/join", headers=await server.guest()
    )
    assert joined.json()["status"] == "playing"

    async def ids(**params: str) -> list[int]:
        response = await server.client.get("/api/tables", params=params)
        assert response.status_code == 200
        return [t["id"] for t in response.json()]

    assert await ids() == [konkan["id"], conquian["id"]]
    assert await ids(game="conquian") == [conquian["id"]]
    assert await ids(status="playing") == [konkan["id"]]
    assert await ids(status="waiting") == [conquian["id"]]
    assert await ids(game="konkan71") == []
    bad = await server.client.get("/api/tables", params={"status": "sleeping"})
    assert bad.status_code == 422


async def test_join_and_leave(server: Server) -> None:
    client = server.client
    owner, other, third = await server.guest(), await server.guest(), await server.guest()
    table = await server.table(owner, options={"players": 3})
    path = f"/api/tables/{table['id']}"

    taken = await client.post(f"{path}/join", json={"seat": 0}, headers=other)
    assert taken.status_code == 409 and _code(taken) == "seat_taken"
    twice = await client.post(f"{path}/join", headers=owner)
    assert twice.status_code == 409 and _code(twice) == "already_seated"
    nowhere = await client.post(f"{path}/join", json={"seat": 5}, headers=other)
    assert nowhere.status_code == 422 and _code(nowhere) == "no_such_seat"
    not_seated = await client.post(f"{path}/leave", headers=other)
    assert not_seated.status_code == 409 and _code(not_seated) == "not_seated"

    joined = await client.post(f"{path}/join", json={"seat": 2}, headers=other)
    assert joined.status_code == 200
    other_id = (await client.get("/api/me", headers=other)).json()["id"]
    assert joined.json()["seats"][2]["user_id"] == other_id
    assert joined.json()["status"] == "waiting"

    left = await client.post(f"{path}/leave", headers=other)
    assert left.status_code == 200
    assert left.json()["seats"][2]["user_id"] is None
    assert (await client.get(path)).json()["seats"][2]["user_id"] is None

    # The creator may leave a table that has not started, too.
    assert (await client.post(f"{path}/leave", headers=owner)).status_code == 200
    assert (await client.post(f"{path}/join", headers=third)).json()["seats"][0]["user_id"] == (
        await client.get("/api/me", headers=third)
    ).json()["id"]

    missing = await client.post("/api/tables/999/join", headers=other)
    assert missing.status_code == 404 and _code(missing) == "no_such_table"


async def test_the_match_starts_when_the_last_seat_fills(server: Server) -> None:
    client = server.client
    players = [await server.guest() for _ in range(4)]
    table = await server.table(players[0], options={"players": 4})
    path = f"/api/tables/{table['id']}"
    for auth in players[1:3]:
        response = await client.post(f"{path}/join", headers=auth)
        assert response.json()["status"] == "waiting"
        assert response.json()["seq"] == 0
    last = await client.post(f"{path}/join", headers=players[3])
    assert last.status_code == 200
    info = last.json()
    assert info["status"] == "playing"
    assert info["seq"] == 1
    assert info["seed_commitment"] is not None and len(info["seed_commitment"]) == 64
    assert all(seat["user_id"] is not None for seat in info["seats"])

    late = await client.post(f"{path}/join", headers=await server.guest())
    assert late.status_code == 409 and _code(late) == "table_started"
    # RULES §1.10: leaving a free table mid-match never redeals; a bot plays on with
    # the same hand, and the player (only that player) may come back.
    running = await client.post(f"{path}/leave", headers=players[1])
    assert running.status_code == 200
    after = (await client.get(path)).json()
    assert after["status"] == "playing"
    seat = next(s for s in after["seats"] if s["user_id"] == info["seats"][1]["user_id"])
    assert seat["bot"] is True and seat["left"] is True
    back = await client.post(f"{path}/join", headers=players[1])
    assert back.status_code == 200
    seat = next(s for s in back.json()["seats"] if s["user_id"] == info["seats"][1]["user_id"])
    assert seat["bot"] is False and seat["left"] is False


async def test_a_private_table_is_joined_by_its_invite_code(server: Server) -> None:
    client = server.client
    owner, friend, stranger = await server.guest(), await server.guest(), await server.guest()
    table = await server.table(owner, options={"players": 3}, private=True)
    code = table["invite_code"]
    assert table["private"] is True and code

    assert (await client.get("/api/tables")).json() == []
    # Only seated players and the creator see the code; a stranger, not even the table.
    seen = await client.get(f"/api/tables/{table['id']}", headers=stranger)
    assert seen.status_code == 404 and _code(seen) == "no_such_table"
    assert (await client.get(f"/api/tables/{table['id']}")).status_code == 404
    mine = await client.get(f"/api/tables/{table['id']}", headers=owner)
    assert mine.json()["invite_code"] == code

    joined = await client.post("/api/tables/join", json={"invite_code": code}, headers=friend)
    assert joined.status_code == 200
    assert joined.json()["id"] == table["id"]
    assert joined.json()["invite_code"] == code
    assert joined.json()["seats"][1]["user_id"] is not None
    # The link opened again leads back to the same seat, for the friend and the owner.
    for who, seat in ((friend, 1), (owner, 0)):
        again = await client.post("/api/tables/join", json={"invite_code": code}, headers=who)
        assert again.status_code == 200, again.text
        assert again.json()["id"] == table["id"]
        assert [s["user_id"] is not None for s in again.json()["seats"]] == [True, True, False]
        assert again.json()["seats"][seat]["user_id"] == joined.json()["seats"][seat]["user_id"]

    wrong = await client.post("/api/tables/join", json={"invite_code": "nope"}, headers=stranger)
    assert wrong.status_code == 404 and _code(wrong) == "bad_invite"


async def test_the_creator_starts_a_free_table_with_bots(server: Server) -> None:
    auth = await server.guest()
    other = await server.guest()
    table = await server.table(auth, options={"players": 3})
    path = f"/api/tables/{table['id']}/start"
    refused = await server.client.post(path, json={"bots": True}, headers=other)
    assert refused.status_code == 403 and _code(refused) == "not_creator"
    response = await server.client.post(path, json={"bots": True, "level": "simple"}, headers=auth)
    assert response.status_code == 200
    info = response.json()
    assert info["status"] == "playing"
    assert [seat["bot"] for seat in info["seats"]] == [False, True, True]
    assert info["seats"][1]["bot_level"] == "simple"
    coin = await server.table(auth, options={"players": 2, "stake": 10})
    no_bots = await server.client.post(
        f"/api/tables/{coin['id']}/start", json={"bots": True}, headers=auth
    )
    assert no_bots.status_code == 409 and _code(no_bots) == "no_bots_at_coin_tables"
    missing = await server.client.post("/api/tables/999/start", json={"bots": True}, headers=auth)
    assert missing.status_code == 404


async def test_tables_and_seats_survive_a_restart(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    first = create_app(settings)
    async with first.router.lifespan_context(first):
        transport = httpx.ASGITransport(app=first)
        async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
            server = Server(first, client)
            owner, other = await server.guest(), await server.guest()
            waiting = await server.table(owner, options={"players": 3})
            await client.post(f"/api/tables/{waiting['id']}/join", headers=other)
            playing = await server.table(owner, options={"players": 2})
            await client.post(f"/api/tables/{playing['id']}/join", headers=other)
            before = [
                (await client.get(f"/api/tables/{t['id']}")).json() for t in (waiting, playing)
            ]
    second = create_app(settings)
    async with second.router.lifespan_context(second):
        transport = httpx.ASGITransport(app=second)
        async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
            after = [
                (await client.get(f"/api/tables/{t['id']}")).json() for t in (waiting, playing)
            ]
            assert after == before
            assert after[1]["status"] == "playing"
            # The tokens were stored, too.
            assert (await client.get("/api/me", headers=owner)).status_code == 200


# --- matches -----------------------------------------------------------------------------


async def test_finished_matches_of_a_table(server: Server) -> None:
    auth = await server.guest()
    table = await server.table(auth, options={"players": 2})
    path = f"/api/tables/{table['id']}/matches"
    assert (await server.client.get(path)).json() == []
    missing = await server.client.get("/api/tables/999/matches")
    assert missing.status_code == 404 and _code(missing) == "no_such_table"

    record = {"game": "konkan", "options": {"players": 2}, "seed": "s", "actions": []}
    async with server.app.state.hub.sessions() as session, session.begin():
        row = Match(
            table_id=table["id"],
            game="konkan",
            winner_seat=1,
            players=[1, 2],
            score_sheet={"rounds": [[0, 51]], "totals": [0, 51]},
            record=record,
        )
        session.add(row)
    [summary] = (await server.client.get(path)).json()
    assert summary["id"] == row.id
    assert summary["winner_seat"] == 1
    assert summary["players"] == [1, 2]
    assert summary["score_sheet"]["totals"] == [0, 51]
    assert "record" not in summary
    assert summary["finished_at"]

    detail = await server.client.get(f"/api/matches/{row.id}")
    assert detail.status_code == 200
    assert detail.json() == {**summary, "record": record}
    gone = await server.client.get("/api/matches/999")
    assert gone.status_code == 404 and _code(gone) == "no_such_match"


# --- the API's description ---------------------------------------------------------------


async def test_the_openapi_schema_lists_every_endpoint(server: Server) -> None:
    schema = (await server.client.get("/openapi.json")).json()
    paths = schema["paths"]
    expected = {
        "/healthz": {"get"},
        "/readyz": {"get"},
        "/api/guests": {"post"},
        "/api/users": {"post"},
        "/api/login": {"post"},
        "/api/logout": {"post"},
        "/api/me": {"get"},
        "/api/tables": {"get", "post"},
        "/api/tables/join": {"post"},
        "/api/tables/{table_id}": {"get"},
        "/api/tables/{table_id}/join": {"post"},
        "/api/tables/{table_id}/leave": {"post"},
        "/api/tables/{table_id}/start": {"post"},
        "/api/tables/{table_id}/ticket": {"post"},
        "/api/tables/{table_id}/matches": {"get"},
        "/api/matches/{match_id}": {"get"},
        "/api/me/ledger": {"get"},
        "/api/me/matches": {"get"},
        "/api/leaderboard": {"get"},
        "/api/ratings": {"get"},
        "/api/users/{user_id}/ratings": {"get"},
        "/api/admin/tables": {"get", "post"},
        "/api/admin/tables/{table_id}": {"patch", "delete"},
        "/api/admin/settings": {"get", "patch"},
        "/api/admin/players": {"get"},
        "/api/admin/players/{player_id}": {"get"},
        "/api/admin/players/{player_id}/ledger": {"get"},
        "/api/admin/players/{player_id}/suspend": {"post"},
        "/api/admin/players/{player_id}/ratings": {"get"},
        "/api/admin/players/{player_id}/ratings/{pool}/reset": {"post"},
        "/api/admin/players/{player_id}/cooldown": {"get", "delete"},
        "/api/queue": {"get", "post", "delete"},
    }
    for path, methods in expected.items():
        assert path in paths, path
        assert methods <= set(paths[path]), path
    tags = {tag for item in paths.values() for op in item.values() for tag in op["tags"]}
    assert tags == {"players", "tables", "matches", "health", "admin"}
    assert "TableInfo" in schema["components"]["schemas"]


async def test_schemas_command_writes_one_file_per_model(tmp_path: Path) -> None:
    # async only because of the module's asyncio mark
    out = tmp_path / "schemas"
    assert main(["schemas", "--out", str(out)]) == 0
    files = sorted(path.name for path in out.iterdir())
    # the protocol's messages, and each game's views, events, actions and messages
    assert files == sorted(f"{name}.json" for name in [*SCHEMA_MODELS, *wire_schemas.SCHEMAS])
    for path in out.iterdir():
        content = path.read_text(encoding="utf-8")
        assert content.endswith("}\n")
        data = json.loads(content)
        assert content == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    command = json.loads((out / "Command.json").read_text())
    assert set(command["required"]) == {"type", "cid", "seq", "action"}
