"""Table spam on a live server: an account may have only so many open tables, a
waiting table that nobody watches and nobody joins is closed after a while, and the
lobby's list comes a bounded page at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .harness import Api, ServerProcess, WireClient, auth_headers


async def _create(api: Api, token: str, private: bool = False) -> tuple[int, Any]:
    response = await api.http.post(
        "/api/tables",
        json={"game": "conquian", "options": {}, "private": private},
        headers=auth_headers(token),
    )
    body = response.json()
    return response.status_code, body["id"] if response.status_code == 201 else body


async def _creation_cap(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    spammer, _ = await api.guest()
    other, _ = await api.guest()
    made = [await _create(api, spammer, private=n % 2 == 1) for n in range(2)]
    refused = await _create(api, spammer)
    other_made = await _create(api, other)
    # Leaving a waiting table does not free the account's share: the table is still
    # open (it closes when nobody watches it for a while).
    left = await api.http.post(f"/api/tables/{made[0][1]}/leave", headers=auth_headers(spammer))
    after_leaving = await _create(api, spammer)
    await api.aclose()
    return {
        "made": [status for status, _ in made],
        "refused": refused,
        "other": other_made[0],
        "left": left.status_code,
        "after_leaving": after_leaving[0],
    }


def test_an_account_has_only_so_many_open_tables(
    module_servers: Callable[..., ServerProcess],
) -> None:
    result = asyncio.run(_creation_cap(module_servers(SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT="2")))
    refused = result.pop("refused")
    assert refused[0] == 409 and refused[1]["detail"]["code"] == "too_many_tables", refused
    assert result == {"made": [201, 201], "other": 201, "left": 200, "after_leaving": 409}


async def _closed(api: Api, table_id: int, seconds: float = 15.0) -> int:
    """The table's status code once it is gone (404), or after ``seconds`` if never."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        status = (await api.http.get(f"/api/tables/{table_id}")).status_code
        if status == 404 or loop.time() > deadline:
            return status
        await asyncio.sleep(0.1)


async def _expiry(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    creator, _ = await api.guest()
    watcher, _ = await api.guest()
    forgotten = (await _create(api, creator))[1]
    watched = (await _create(api, creator))[1]
    client = await WireClient.connect(server, watched, watcher, name="watcher")
    # SAHRAT_WAITING_TABLE_SECONDS = 1, checked every 0.25 s
    forgotten_now = await _closed(api, forgotten)
    await asyncio.sleep(1.5)  # the watched table is now past its waiting time too
    listed = [t["id"] for t in await api.get("/api/tables")]
    # Once nobody watches it either, the other one goes the same way.
    await client.close()
    watched_now = await _closed(api, watched)
    # Both closed: the creator may open tables again.
    again = await _create(api, creator)
    await api.aclose()
    return {
        "forgotten": forgotten_now,
        "listed": [forgotten in listed, watched in listed],
        "watched": watched_now,
        "again": again[0],
    }


def test_a_waiting_table_nobody_watches_is_closed(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(SAHRAT_WAITING_TABLE_SECONDS="1", SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT="2")
    result = asyncio.run(_expiry(server))
    assert result == {"forgotten": 404, "listed": [False, True], "watched": 404, "again": 201}


async def _paging(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    ids = []
    for _ in range(7):
        token, _ = await api.guest()
        ids.append((await _create(api, token))[1])
    pages: list[list[int]] = []
    after = ids[0] - 1  # the PostgreSQL database may hold earlier tests' tables
    for _ in range(5):  # (a server that ignores the page would repeat it for ever)
        page = [t["id"] for t in await api.get(f"/api/tables?limit=3&after={after}")]
        pages.append(page)
        if len(page) < 3:
            break
        after = page[-1]
    too_big = await api.http.get("/api/tables?limit=100000")
    await api.aclose()
    return {"ids": ids, "pages": pages, "too_big": too_big.status_code}


def test_the_table_list_comes_a_page_at_a_time(
    module_servers: Callable[..., ServerProcess],
) -> None:
    # (on the server of the creation cap: each table here is a new account's first)
    result = asyncio.run(_paging(module_servers(SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT="2")))
    ids = result["ids"]
    assert result["pages"] == [ids[0:3], ids[3:6], ids[6:7]]
    assert result["too_big"] == 422
