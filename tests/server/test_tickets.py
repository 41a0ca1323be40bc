"""No secret in a WebSocket's URL: the socket takes a one-time ticket, never the bearer
token, and the server's log shows neither, however the client spells the parameter.

Attacks on a live server: a token in the URL (as every client sent it before), a
ticket used twice, used late, used for another table, used after its token was
revoked; and URLs whose secret is percent-encoded so that a mask looking for
``token=`` misses it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import websockets
from websockets.exceptions import ConnectionClosed

from .harness import Api, ServerProcess, WireClient, auth_headers, ticket_path


async def _close(url: str) -> tuple[int | None, str]:
    """Open a socket and read until the server closes it: its close code and reason
    (None if the server greeted and kept it open)."""
    async with websockets.connect(url, open_timeout=10) as ws:
        try:
            await asyncio.wait_for(ws.recv(), 10)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None
            return closed.rcvd.code, closed.rcvd.reason
        return None, ""


async def _ticket(api: Api, token: str, table_id: int) -> str:
    response = await api.http.post(ticket_path(table_id), headers=auth_headers(token))
    assert response.status_code == 200, response.text
    data = response.json()
    assert 0 < data["expires_in"] <= 60
    return str(data["ticket"])


async def _tickets(server: ServerProcess) -> None:
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    table_id = info["id"]
    socket = f"ws://127.0.0.1:{server.port}/ws/tables"
    # The bearer token in the URL is refused, and the reason names the way in.
    code, reason = await _close(f"{socket}/{table_id}?token={token}")
    assert code == 4401 and "ticket" in reason, (code, reason)
    # A ticket opens the socket once; the same ticket again is refused.
    ticket = await _ticket(api, token, table_id)
    assert ticket != token and token not in ticket
    assert (await _close(f"{socket}/{table_id}?ticket={ticket}"))[0] is None
    assert (await _close(f"{socket}/{table_id}?ticket={ticket}"))[0] == 4401
    # Two sockets racing with one ticket: exactly one gets in.
    ticket = await _ticket(api, token, table_id)
    raced = await asyncio.gather(
        *(_close(f"{socket}/{table_id}?ticket={ticket}") for _ in range(4))
    )
    assert sorted(code is None for code, _ in raced) == [False, False, False, True], raced
    # A ticket is for its table only (and is used up by the attempt).
    other = await api.create_table(token, "conquian", {})
    ticket = await _ticket(api, token, table_id)
    assert (await _close(f"{socket}/{other['id']}?ticket={ticket}"))[0] == 4401
    assert (await _close(f"{socket}/{table_id}?ticket={ticket}"))[0] == 4401
    # A made-up ticket, and none at all.
    assert (await _close(f"{socket}/{table_id}?ticket=made-up"))[0] == 4401
    assert (await _close(f"{socket}/{table_id}"))[0] == 4401
    # Only a valid bearer token gets a ticket.
    bad = await api.http.post(ticket_path(table_id), headers=auth_headers("not-a-token"))
    assert bad.status_code == 401
    # A ticket outlives neither its expiry (SAHRAT_TICKET_SECONDS=1 here)...
    ticket = await _ticket(api, token, table_id)
    await asyncio.sleep(1.5)
    assert (await _close(f"{socket}/{table_id}?ticket={ticket}"))[0] == 4401
    # ...nor its token: logging out voids the tickets issued with the token.
    ticket = await _ticket(api, token, table_id)
    assert (await api.http.post("/api/logout", headers=auth_headers(token))).status_code == 204
    assert (await _close(f"{socket}/{table_id}?ticket={ticket}"))[0] == 4401
    await api.aclose()


def test_a_socket_takes_a_one_time_ticket_not_a_token(
    module_servers: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_tickets(module_servers(SAHRAT_TICKET_SECONDS="1")))


async def _revocation_through_a_ticket(server: ServerProcess) -> None:
    """A socket opened with a ticket still closes when the token behind it is revoked."""
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    client = await WireClient.connect(server, info["id"], token, name="ticketed")
    assert (await api.http.post("/api/logout", headers=auth_headers(token))).status_code == 204
    await client.wait_closed()
    assert client.ws.close_code == 4401
    await api.aclose()


def test_a_ticketed_socket_closes_when_its_token_is_revoked(
    module_servers: Callable[..., ServerProcess],
) -> None:
    # (on the server of the ticket test: ticket lifetime plays no part here)
    asyncio.run(_revocation_through_a_ticket(module_servers(SAHRAT_TICKET_SECONDS="1")))


SECRET_SPELLINGS = (
    "token={}",
    "%74oken={}",  # 't' percent-encoded: a mask looking for "token=" misses it
    "%2574oken={}",
    "TOKEN={}",
    "since=1&%54%4f%4b%45%4e={}",
    "x%26token%3D{}=1",  # the whole pair encoded inside another parameter's name
    "ticket={}",
)


async def _secrets_in_urls(server: ServerProcess) -> list[str]:
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    secrets = []
    for index, spelling in enumerate(SECRET_SPELLINGS):
        secret = f"{token[:8]}SECRET{index}x{token[-8:]}"
        secrets.append(secret)
        query = spelling.format(secret)
        await _close(f"ws://127.0.0.1:{server.port}/ws/tables/{info['id']}?{query}")
        await api.http.get(f"/api/tables?{query}")
    ticket = await _ticket(api, token, info["id"])
    await _close(f"ws://127.0.0.1:{server.port}/ws/tables/{info['id']}?ticket={ticket}")
    await api.aclose()
    return [*secrets, ticket, token]


def test_the_log_never_shows_a_secret_of_a_url(
    start_server: Callable[..., ServerProcess],
) -> None:
    for log_format in ("text", "json"):
        server = start_server(SAHRAT_LOG_FORMAT=log_format)
        secrets = asyncio.run(_secrets_in_urls(server))
        deadline = time.monotonic() + 5
        log = ""
        while time.monotonic() < deadline:  # the access log of the last request
            log = server.log_path.read_text(errors="replace")
            if log.count("/api/tables?") >= len(SECRET_SPELLINGS):
                break
            time.sleep(0.1)
        assert "[redacted]" in log
        for secret in secrets:
            assert secret not in log, (log_format, secret, log[-3000:])
        server.stop()


async def _ids_out_of_range(server: ServerProcess) -> dict[int, tuple[int, int]]:
    """The ticket route's answer for ids no table can have, beside the table route's."""
    api = Api(server)
    token, _ = await api.guest()
    answers = {}
    for table_id in (2**31, 2**63 - 1, 0, 2**31 - 1):
        ticket = await api.http.post(ticket_path(table_id), headers=auth_headers(token))
        table = await api.http.get(f"/api/tables/{table_id}", headers=auth_headers(token))
        answers[table_id] = (ticket.status_code, table.status_code)
    await api.aclose()
    return answers


def test_the_ticket_route_takes_the_ids_every_route_takes(
    module_servers: Callable[..., ServerProcess],
) -> None:
    """Ids are 1 to 2^31-1 on every route (a 422 beyond): a ticket is not issued for an
    id no table can have. Within range, whether the user may see the table is decided
    when the socket opens (a ticket for an id nobody has is issued; its socket 4404s)."""
    answers = asyncio.run(_ids_out_of_range(module_servers(SAHRAT_TICKET_SECONDS="1")))
    assert answers == {
        2**31: (422, 422),
        2**63 - 1: (422, 422),
        0: (422, 422),
        2**31 - 1: (200, 404),
    }
