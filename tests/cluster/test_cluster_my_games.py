"""My games in a cluster: a player asks a process that does not serve their tables and
gets them all, private ones included, with whose turn it is as the serving process
knows it; a stranger asking either process gets nothing of them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from server.harness import Api, ServerProcess, WireClient, auth_headers

pytestmark = pytest.mark.cluster


async def _my_games(p1: ServerProcess, p2: ServerProcess) -> None:
    api1, api2 = Api(p1), Api(p2)
    try:
        creator, creator_user = await api1.guest()
        friend, _ = await api2.guest()
        stranger, _ = await api2.guest()
        # One private table and one public table, both opened on process 1.
        made = await api1.http.post(
            "/api/tables",
            json={"game": "konkan", "options": {"players": 2}, "private": True},
            headers=auth_headers(creator),
        )
        assert made.status_code == 201, made.text
        private_id, code = made.json()["id"], made.json()["invite_code"]
        public = await api1.create_table(creator, "conquian", {})
        joined = await api2.http.post(
            "/api/tables/join", json={"invite_code": code}, headers=auth_headers(friend)
        )
        assert joined.status_code == 200 and joined.json()["status"] == "playing", joined.text

        # Process 2 lists them all: the playing one first, then the waiting one.
        mine: list[Any] = await api2.get("/api/me/tables", creator)
        assert [line["table"]["id"] for line in mine] == [private_id, public["id"]]
        assert [line["table"]["status"] for line in mine] == ["playing", "waiting"]
        assert mine[0]["table"]["private"] is True
        assert mine[1]["turn"] is None and mine[1]["yours"] is False
        assert mine == await api1.get("/api/me/tables", creator)
        # Whose turn: the table's own socket (through process 2) shows the same seat.
        client = await WireClient.connect(p2, private_id, creator, name="creator")
        try:
            assert client.view is not None
            assert mine[0]["turn"] == client.view["turn"]
            assert mine[0]["yours"] is (client.view["turn"] == mine[0]["seat"])
            assert mine[0]["table"]["seats"][mine[0]["seat"]]["user_id"] == creator_user["id"]
        finally:
            await client.close()
        friend_lines = await api1.get("/api/me/tables", friend)
        assert [line["table"]["id"] for line in friend_lines] == [private_id]
        for api in (api1, api2):
            assert await api.get("/api/me/tables", stranger) == []
    finally:
        await api1.aclose()
        await api2.aclose()


def test_my_games_through_a_process_that_does_not_serve_them(
    start_node: Callable[..., ServerProcess],
) -> None:
    p1, p2 = start_node(), start_node()
    asyncio.run(_my_games(p1, p2))
