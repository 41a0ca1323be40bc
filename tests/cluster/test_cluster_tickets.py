"""A WebSocket ticket in a cluster: issued by one process, taken by the other (tickets
live in the shared database), still only once; and the socket it opened, forwarded to
the table's owner, closes when the token behind the ticket is revoked anywhere."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from server.harness import Api, ServerProcess, WireClient, auth_headers, ticket_path

pytestmark = pytest.mark.cluster


async def _ticket(api: Api, token: str, table_id: int) -> str:
    response = await api.http.post(ticket_path(table_id), headers=auth_headers(token))
    assert response.status_code == 200, response.text
    return str(response.json()["ticket"])


async def _greeted(server: ServerProcess, table_id: int, ticket: str) -> dict[str, object]:
    url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?ticket={ticket}"
    async with websockets.connect(url, open_timeout=10) as ws:
        try:
            return {"type": "greeted", "first": await asyncio.wait_for(ws.recv(), 10)}
        except ConnectionClosed as closed:
            return {"type": "closed", "code": closed.rcvd.code if closed.rcvd else None}


async def _across(p1: ServerProcess, p2: ServerProcess) -> None:
    api1, api2 = Api(p1), Api(p2)
    token, _ = await api1.guest()
    info = await api1.create_table(token, "conquian", {})  # served by process 1
    table_id = info["id"]
    # Issued by 1, taken by 2 (a forwarded socket); then refused on either.
    ticket = await _ticket(api1, token, table_id)
    assert (await _greeted(p2, table_id, ticket))["type"] == "greeted"
    assert await _greeted(p1, table_id, ticket) == {"type": "closed", "code": 4401}
    assert await _greeted(p2, table_id, ticket) == {"type": "closed", "code": 4401}
    # Issued by 2, taken by 1; one ticket raced on both processes opens one socket.
    ticket = await _ticket(api2, token, table_id)
    raced = await asyncio.gather(*(_greeted(p, table_id, ticket) for p in (p1, p2, p1, p2)))
    assert sorted(r["type"] for r in raced) == ["closed", "closed", "closed", "greeted"]
    # A forwarded socket opened with a ticket closes when its token is revoked on 1.
    client = await WireClient.connect(p2, table_id, token, name="forwarded")
    assert (await api1.http.post("/api/logout", headers=auth_headers(token))).status_code == 204
    await client.wait_closed(timeout=15)
    assert client.ws.close_code == 4401
    await api1.aclose()
    await api2.aclose()


def test_a_ticket_from_one_process_opens_a_socket_on_the_other_once(
    start_node: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_across(start_node(), start_node()))
