"""Access to a live server: pages from other origins cannot open a table's WebSocket,
tokens that expire or are revoked close the sockets opened with them, messages beyond
the rate limits are answered (not disconnected) until the abuse persists, and a coin
table takes one account per network address. (Acting for another seat, from a
spectator's connection or on an admin endpoint is refused: test_commands.py,
test_coins.py and the hardening fuzz.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from .harness import Api, ServerProcess, WireClient, auth_headers, make_admin, seated_table


async def _close_code(url: str, origin: str | None = None) -> int | None:
    """Open a socket and read until the server closes it; its close code (None if the
    server greeted and kept it open)."""
    try:
        async with websockets.connect(url, origin=origin) as ws:  # type: ignore[arg-type]
            try:
                await asyncio.wait_for(ws.recv(), 5)
            except ConnectionClosed:
                return ws.close_code
            return None
    except InvalidStatus as error:  # pragma: no cover - the server accepts, then closes
        raise AssertionError(f"refused at the HTTP level: {error}") from error


async def _origins(server: ServerProcess, allowed: str) -> dict[str, int | None]:
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    await api.aclose()
    own = f"http://127.0.0.1:{server.port}"
    codes: dict[str, int | None] = {}
    for name, origin in (
        ("own", own),
        ("foreign", "https://evil.example"),
        ("listed", "https://cards.example"),
        ("none", None),
    ):
        url = await server.ws_url_async(info["id"], token)  # a ticket opens one socket
        codes[name] = await _close_code(url, origin)
    return {**codes, "allowed": allowed}  # type: ignore[dict-item]


def test_only_allowed_origins_may_open_a_socket(
    module_servers: Callable[..., ServerProcess],
) -> None:
    default = asyncio.run(_origins(module_servers(), ""))
    assert default["own"] is None  # the server's own pages play
    assert default["none"] is None  # a program sends no Origin
    assert default["foreign"] == 4403
    assert default["listed"] == 4403
    listed = asyncio.run(
        _origins(module_servers(SAHRAT_ALLOWED_ORIGINS="https://cards.example"), "listed")
    )
    assert listed["listed"] is None
    assert listed["foreign"] == 4403
    assert listed["none"] is None


async def _tokens(server: ServerProcess) -> None:
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {}, 2)
    first = await WireClient.connect(server, table_id, tokens[0], name="first")
    second = await WireClient.connect(server, table_id, tokens[1], name="second")
    # Logging out revokes the token: its open socket closes with 4401, and it opens no more.
    response = await api.http.post("/api/logout", headers=auth_headers(tokens[0]))
    assert response.status_code == 204, response.text
    await first.wait_closed()
    assert first.ws.close_code == 4401
    assert await _close_code(server.ws_url(table_id, tokens[0])) == 4401
    assert (await api.http.get("/api/me", headers=auth_headers(tokens[0]))).status_code == 401
    # The other player's socket is untouched.
    await second.roundtrip()
    assert not second.closed
    await second.close()
    await api.aclose()


def test_a_revoked_token_closes_its_sockets(
    module_servers: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_tokens(module_servers()))


async def _expiry(server: ServerProcess) -> None:
    api = Api(server)
    token, _ = await api.guest()  # lives SAHRAT_TOKEN_HOURS = 3 seconds
    info = await api.create_table(token, "conquian", {})
    client = await WireClient.connect(server, info["id"], token, name="brief")
    await client.wait_closed(timeout=15)
    assert client.ws.close_code == 4401
    assert await _close_code(server.ws_url(info["id"], token)) == 4401
    assert (await api.http.get("/api/me", headers=auth_headers(token))).status_code == 401
    await api.aclose()


def test_an_expired_token_closes_its_socket(start_server: Callable[..., ServerProcess]) -> None:
    asyncio.run(_expiry(start_server(SAHRAT_TOKEN_HOURS=str(3 / 3600))))


async def _rates(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {}, 2)
    await api.aclose()
    client = await WireClient.connect(server, table_id, tokens[0], name="flood")
    seq = client.seq
    # 30 commands at once: the burst (10) is answered as usual (here: not the seat's
    # turn, or a bad action), the rest `rate_limited` — each with its own reply.
    start = len(client.messages)
    for index in range(30):
        await client.send(
            {"type": "command", "cid": f"f{index}", "seq": seq, "action": {"type": "nonsense"}}
        )
    await client.wait_until(
        lambda: (
            len({m["payload"]["cid"] for m in client.messages[start:] if m["type"] == "reply"})
            == 30
        )
    )
    replies = [m["payload"] for m in client.messages[start:] if m["type"] == "reply"]
    limited = [r for r in replies if not r["ok"] and r["error"]["code"] == "rate_limited"]
    # Still connected: after a pause a ping is answered.
    await asyncio.sleep(1.5)
    await client.roundtrip()
    assert not client.closed
    # Abuse that persists closes the connection (SAHRAT_ABUSE_LIMIT = 50 refusals).
    for index in range(200):
        try:
            await client.send({"type": "ping", "n": index})
        except ConnectionClosed:
            break
    await client.wait_closed()
    return {
        "replies": len(replies),
        "limited": len(limited),
        "close_code": client.ws.close_code,
    }


def test_rate_limits_answer_then_disconnect_persistent_abuse(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(
        SAHRAT_MESSAGE_RATE="5",
        SAHRAT_MESSAGE_BURST="10",
        SAHRAT_ACCOUNT_RATE="100",
        SAHRAT_ACCOUNT_BURST="100",
        SAHRAT_ABUSE_LIMIT="50",
    )
    result = asyncio.run(_rates(server))
    assert result["replies"] == 30  # every command had exactly one reply
    assert 15 <= result["limited"] <= 20, result  # 10 from the burst, ~1 refilled
    assert result["close_code"] == 4429


async def _one_address(server: ServerProcess) -> list[int]:
    name, password = make_admin(server.database_url)
    api = Api(server)
    login = await api.http.post("/api/login", json={"name": name, "password": password})
    boss = auth_headers(login.json()["token"])
    created = await api.http.post(
        "/api/admin/tables",
        json={"game": "conquian", "options": {"stake": 10}},
        headers=boss,
    )
    assert created.status_code == 201, created.text
    table_id = created.json()["id"]
    statuses = []
    for _ in range(2):
        token, _ = await api.guest()
        headers = {**auth_headers(token), "X-Forwarded-For": "2001:db8::77"}  # one household
        response = await api.http.post(f"/api/tables/{table_id}/join", json={}, headers=headers)
        statuses.append(response.status_code)
        if response.status_code == 409:
            assert response.json()["detail"]["code"] == "same_address", response.text
    await api.aclose()
    return statuses


@pytest.mark.parametrize("rule_on", [True, False])
def test_a_coin_table_takes_one_account_per_address(
    module_servers: Callable[..., ServerProcess], rule_on: bool
) -> None:
    env = {} if rule_on else {"SAHRAT_ONE_ADDRESS_PER_COIN_TABLE": "false"}
    statuses = asyncio.run(_one_address(module_servers(**env)))
    assert statuses == ([200, 409] if rule_on else [200, 200])


def test_the_codes_used_here_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    for code in ("4401", "4403", "4429", "4503", "`rate_limited`", "`same_address`"):
        assert code in doc, code
