"""A private table in a cluster: the process that forwards to the table's owner
admits exactly whom the owner would (a stranger gets 404 and 4404, an invite holder
watches), and a socket to an id out of range is a 4404 on every process, never a
database error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from server.harness import Api, ServerProcess, auth_headers
from server.sockets import greeting_or_close, socket_url

pytestmark = pytest.mark.cluster


async def _private(p1: ServerProcess, p2: ServerProcess) -> dict[str, Any]:
    api1, api2 = Api(p1), Api(p2)
    creator, _ = await api1.guest()
    stranger, _ = await api2.guest()
    holder, _ = await api2.guest()
    created = await api1.http.post(
        "/api/tables",
        json={"game": "conquian", "options": {}, "private": True},
        headers=auth_headers(creator),
    )
    assert created.status_code == 201, created.text
    table_id, code = created.json()["id"], created.json()["invite_code"]
    found: dict[str, Any] = {}
    # Through process 2, which does not serve the table.
    response = await api2.http.get(f"/api/tables/{table_id}", headers=auth_headers(stranger))
    found["get"] = response.status_code
    response = await api2.http.post(
        f"/api/tables/{table_id}/join", json={}, headers=auth_headers(stranger)
    )
    found["join"] = response.status_code
    found["socket"] = await greeting_or_close(await socket_url(p2, table_id, stranger))
    found["holder"] = await greeting_or_close(await socket_url(p2, table_id, holder, invite=code))
    found["creator"] = await greeting_or_close(await socket_url(p2, table_id, creator))
    # (an old client's token in the URL too: the id is refused before anything else)
    found["out of range"] = [
        await greeting_or_close(
            f"ws://127.0.0.1:{server.port}/ws/tables/{2**31}?ticket=x&token={stranger}"
        )
        for server in (p1, p2)
    ]
    await api1.aclose()
    await api2.aclose()
    return found


def test_a_private_table_is_private_through_every_process(
    start_node: Callable[..., ServerProcess],
) -> None:
    p1, p2 = start_node(), start_node()
    assert asyncio.run(_private(p1, p2)) == {
        "get": 404,
        "join": 404,
        "socket": 4404,
        "holder": None,
        "creator": None,
        "out of range": [4404, 4404],
    }
