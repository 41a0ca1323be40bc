"""The table option ``bot_level`` on a live server: the bots that fill the free seats
(``POST /api/tables/{id}/start``) and the bot that takes over a leaver's seat play at
the table's level (``expert`` by default); a ``level`` named in the start request
overrides it for that match; a bad level is a 422 naming the option and makes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from .harness import Api, ServerProcess, auth_headers


async def _start(api: Api, token: str, table_id: int, body: dict[str, Any]) -> dict[str, Any]:
    started = await api.http.post(
        f"/api/tables/{table_id}/start", json=body, headers=auth_headers(token)
    )
    assert started.status_code == 200, started.text
    info = dict(started.json())
    assert info["status"] == "playing"
    return info


def _bot_levels(info: dict[str, Any]) -> list[str | None]:
    return [seat["bot_level"] for seat in info["seats"]]


async def _bots_at_start(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, _ = await api.guest()
        simple = await api.create_table(token, "konkan", {"players": 4, "bot_level": "simple"})
        assert simple["options"]["bot_level"] == "simple"
        info = await _start(api, token, simple["id"], {"bots": True})
        assert _bot_levels(info) == [None, "simple", "simple", "simple"]

        default = await api.create_table(token, "conquian", {})
        assert default["options"]["bot_level"] == "expert"
        info = await _start(api, token, default["id"], {})
        assert _bot_levels(info) == [None, "expert"]

        # A level named in the request overrides the table's option.
        named = await api.create_table(token, "konkan", {"players": 3, "bot_level": "simple"})
        info = await _start(api, token, named["id"], {"bots": True, "level": "strong"})
        assert _bot_levels(info) == [None, "strong", "strong"]
    finally:
        await api.aclose()


def test_bots_filling_free_seats_play_at_the_tables_level(module_server: ServerProcess) -> None:
    asyncio.run(_bots_at_start(module_server))


async def _leaver_seat(server: ServerProcess, game: str, options: dict[str, Any]) -> str | None:
    """Two guests fill a two-seat table (the match starts), the second leaves: the
    level of the bot that takes over the seat."""
    api = Api(server)
    try:
        first, _ = await api.guest()
        second, _ = await api.guest()
        made = await api.create_table(first, game, options)
        joined = await api.join(second, made["id"])
        seat = next(s["seat"] for s in joined["seats"] if s["user_id"] != made["creator_id"])
        assert joined["status"] == "playing" and _bot_levels(joined) == [None, None]
        left = await api.http.post(f"/api/tables/{made['id']}/leave", headers=auth_headers(second))
        assert left.status_code == 200, left.text
        taken = left.json()["seats"][seat]
        assert taken["bot"] is True and taken["left"] is True
        return str(taken["bot_level"])
    finally:
        await api.aclose()


def test_a_leavers_seat_is_taken_by_the_tables_level(module_server: ServerProcess) -> None:
    simple = {"players": 2, "bot_level": "simple"}
    assert asyncio.run(_leaver_seat(module_server, "konkan", simple)) == "simple"
    strong = {"bot_level": "strong"}
    assert asyncio.run(_leaver_seat(module_server, "conquian", strong)) == "strong"
    assert asyncio.run(_leaver_seat(module_server, "conquian", {})) == "expert"


async def _refused(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, user = await api.guest()
        bad = await api.http.post(
            "/api/tables",
            json={"game": "konkan", "options": {"bot_level": "grandmaster"}},
            headers=auth_headers(token),
        )
        assert bad.status_code == 422, bad.text
        [error] = bad.json()["detail"]
        assert error["loc"] == ["body", "options", "bot_level"]
        assert "grandmaster" in error["msg"] and "'expert'" in error["msg"]
        mine = [t for t in await api.get("/api/tables") if t["creator_id"] == user["id"]]
        assert mine == [], "a refused table was made"

        table = await api.create_table(token, "konkan", {"players": 2})
        wrong = await api.http.post(
            f"/api/tables/{table['id']}/start",
            json={"bots": True, "level": "grandmaster"},
            headers=auth_headers(token),
        )
        assert wrong.status_code == 422, wrong.text
        info = await api.get(f"/api/tables/{table['id']}")
        assert info["status"] == "waiting" and _bot_levels(info) == [None, None]
    finally:
        await api.aclose()


def test_a_bad_level_is_refused_naming_the_option(module_server: ServerProcess) -> None:
    asyncio.run(_refused(module_server))
