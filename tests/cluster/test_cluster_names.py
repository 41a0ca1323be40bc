"""A rename in a cluster reaches the process that serves the table: every process
updates the name it shows, every socket at the player's tables hears the new name
(in a ``table`` message), and a newcomer who registers the old name is never shown
in the renamed player's seat."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from server.harness import Api, Message, ServerProcess, WireClient, auth_headers

pytestmark = pytest.mark.cluster

HEARD_SECONDS = 10.0  # a table message about the rename arrives well within this


async def _register(api: Api, name: str) -> tuple[str, int]:
    response = await api.http.post("/api/users", json={"name": name, "password": "long enough!"})
    assert response.status_code == 201, response.text
    data = response.json()
    return data["token"], int(data["user"]["id"])


def _seat_name(info: dict[str, Any], user_id: int) -> str | None:
    name = next(seat["name"] for seat in info["seats"] if seat["user_id"] == user_id)
    return None if name is None else str(name)


async def _name_heard(client: WireClient, user_id: int, name: str, after: int) -> str | None:
    """The name the socket's first table message after ``after`` that names ``name``
    shows for the player (None: no such message came)."""

    def names_it(message: Message) -> bool:
        if message["type"] == "table":
            info = message["payload"]
        elif message["type"] == "snapshot":
            info = message["payload"]["table"]
        else:
            return False
        return _seat_name(info, user_id) == name

    try:
        await client.wait_for(names_it, after=after, timeout=HEARD_SECONDS)
    except AssertionError:
        return None
    return name


async def _rename_at_a_table(p1: ServerProcess, p2: ServerProcess) -> dict[str, Any]:
    api1, api2 = Api(p1), Api(p2)
    old, new = f"amira{secrets.token_hex(3)}", f"noura{secrets.token_hex(3)}"
    token, user_id = await _register(api1, old)
    info = await api1.create_table(token, "conquian", {})  # served by process 1
    table_id = int(info["id"])
    assert _seat_name(info, user_id) == old
    watcher, _ = await api2.guest()
    sockets = {
        "player through 2": await WireClient.connect(p2, table_id, token, name="via2"),
        "player through 1": await WireClient.connect(p1, table_id, token, name="via1"),
        "watcher through 2": await WireClient.connect(p2, table_id, watcher, name="watcher"),
    }
    marks = {label: len(client.messages) for label, client in sockets.items()}

    renamed = await api2.http.patch("/api/me", json={"name": new}, headers=auth_headers(token))
    assert renamed.status_code == 200, renamed.text
    found: dict[str, Any] = {
        label: await _name_heard(client, user_id, new, marks[label])
        for label, client in sockets.items()
    }
    # The old name is free again: a newcomer takes it, through the table's own process.
    _, newcomer = await _register(api1, old)
    for number, api in ((1, api1), (2, api2)):
        seen = await api.get(f"/api/tables/{table_id}")
        found[f"GET through {number}"] = _seat_name(seen, user_id)
        found[f"old name seated through {number}"] = any(
            seat["name"] == old for seat in seen["seats"]
        )
    found["newcomer seated"] = any(seat["user_id"] == newcomer for seat in seen["seats"])
    for client in sockets.values():
        await client.close()
    await api1.aclose()
    await api2.aclose()
    found["new"] = new
    return found


def test_a_rename_through_another_process_is_shown_at_the_table(
    start_node: Callable[..., ServerProcess],
) -> None:
    p1, p2 = start_node(), start_node()
    found = asyncio.run(_rename_at_a_table(p1, p2))
    new = found.pop("new")
    assert found == {
        "player through 2": new,
        "player through 1": new,
        "watcher through 2": new,
        "GET through 1": new,
        "GET through 2": new,
        "old name seated through 1": False,
        "old name seated through 2": False,
        "newcomer seated": False,
    }
