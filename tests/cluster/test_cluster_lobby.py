"""The lobby in a cluster, where it comes from the database: what others can join or
watch a person play, and not a bot game its only person left (closed, through any
process, and let go by the process that served it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from server.harness import Api, ServerProcess, auth_headers

pytestmark = pytest.mark.cluster


async def _lobby(p1: ServerProcess, p2: ServerProcess) -> dict[str, Any]:
    api1, api2 = Api(p1), Api(p2)
    try:
        host, _ = await api1.guest()
        waiting = int((await api1.create_table(host, "konkan", {"players": 4}))["id"])
        # Two people at a free table; one leaves: the other still plays there.
        first, _ = await api1.guest()
        second, _ = await api2.guest()
        shared = int((await api1.create_table(first, "conquian", {}))["id"])
        await api2.join(second, shared)
        left_one = await api2.http.post(f"/api/tables/{shared}/leave", headers=auth_headers(second))
        # A bot game its only person leaves, through the process that does not serve it.
        alone, _ = await api1.guest()
        bot_game = int((await api1.create_table(alone, "conquian", {}))["id"])
        started = await api1.http.post(
            f"/api/tables/{bot_game}/start", json={"bots": True}, headers=auth_headers(alone)
        )
        assert started.status_code == 200, started.text
        abandoned = await api2.http.post(
            f"/api/tables/{bot_game}/leave", headers=auth_headers(alone)
        )
        listed = {
            name: [t["id"] for t in await api.get("/api/tables?limit=200")]
            for name, api in (("p1", api1), ("p2", api2))
        }
        return {
            "left_one": (left_one.status_code, left_one.json()["status"]),
            "abandoned": (abandoned.status_code, abandoned.json()["status"]),
            "listed": {
                name: [t in ids for t in (waiting, shared, bot_game)]
                for name, ids in listed.items()
            },
            "looked_up": [
                (await api.http.get(f"/api/tables/{bot_game}")).status_code for api in (api1, api2)
            ],
            "another": (
                await api1.http.post(
                    "/api/tables",
                    json={"game": "conquian", "options": {}, "private": False},
                    headers=auth_headers(alone),
                )
            ).status_code,
        }
    finally:
        await api1.aclose()
        await api2.aclose()


def test_the_lobby_lists_what_people_play_in_a_cluster(
    start_node: Callable[..., ServerProcess],
) -> None:
    p1, p2 = (
        start_node(SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT="1"),
        start_node(SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT="1"),
    )
    assert asyncio.run(_lobby(p1, p2)) == {
        "left_one": (200, "playing"),
        "abandoned": (200, "closed"),
        "listed": {"p1": [True, True, False], "p2": [True, True, False]},
        "looked_up": [404, 404],
        "another": 201,  # the abandoned table no longer counts among the open ones
    }
