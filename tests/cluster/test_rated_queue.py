"""Rated quick play's queue across two server processes: the queue is in the shared
database, so players who queued on different processes are seated at one rated table
(formed by one process's wave, never two tables for one entry), and each process's
GET /api/queue says where they sit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from server.harness import Api, ServerProcess, auth_headers

pytestmark = pytest.mark.cluster

QUEUE = {
    "SAHRAT_QUEUE_WAVE_SECONDS": "0.2",
    "SAHRAT_QUEUE_BOT_WAIT_SECONDS": "600",  # people only: no table of bots
}
SEATED_WITHIN = 20.0


async def _seated(api: Api, token: str) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + SEATED_WITHIN
    while True:
        response = await api.http.get("/api/queue", headers=auth_headers(token))
        assert response.status_code == 200, response.text
        found = dict(response.json())
        if found["status"] == "seated":
            return found
        assert found["status"] == "waiting", found
        assert asyncio.get_running_loop().time() < deadline, f"not seated: {found}"
        await asyncio.sleep(0.1)


async def _four_players(p1: ServerProcess, p2: ServerProcess) -> dict[str, Any]:
    api1, api2 = Api(p1), Api(p2)
    try:
        players = [(api, *(await api.guest())) for api in (api1, api2, api1, api2)]
        body = {"game": "konkan", "threshold": 51, "players": 4, "speed": "normal"}
        for api, token, _user in players:
            joined = await api.http.post("/api/queue", json=body, headers=auth_headers(token))
            assert joined.status_code == 200, joined.text
        seats = [await _seated(api, token) for api, token, _user in players]
        table_ids = {seat["table_id"] for seat in seats}
        (table_id,) = table_ids
        # the other process answers the same (the queue is the database's)
        others = [
            (await (api2 if api is api1 else api1).get("/api/queue", token))["table_id"]
            for api, token, _user in players
        ]
        infos = [await api.get(f"/api/tables/{table_id}", players[0][1]) for api in (api1, api2)]
        return {
            "one_table": len(table_ids),
            "others": others == [table_id] * 4,
            "rated": [info["rated"] for info in infos],
            "status": [info["status"] for info in infos],
            "people": [
                sorted(s["user_id"] for s in info["seats"] if s["user_id"] is not None)
                for info in infos
            ],
            "expected": sorted(user["id"] for _api, _token, user in players),
        }
    finally:
        await api1.aclose()
        await api2.aclose()


def test_players_on_two_processes_meet_at_one_rated_table(
    start_node: Callable[..., ServerProcess],
) -> None:
    p1, p2 = start_node(**QUEUE), start_node(**QUEUE)
    found = asyncio.run(_four_players(p1, p2))
    expected = found.pop("expected")
    assert found == {
        "one_table": 1,
        "others": True,
        "rated": [True, True],
        "status": ["playing", "playing"],
        "people": [expected, expected],
    }
