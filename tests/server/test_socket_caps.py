"""Sockets on a live server: one account cannot hold more than its share of a
process's WebSockets, and a table takes only so many spectators — its players
always get in. (Each socket costs every other one at its table a message when it
comes and goes: unbounded, one guest's few hundred sockets took a core.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .harness import Api, ServerProcess, WireClient
from .sockets import greeting_or_close, socket_url

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "sockets are counted in each process's memory"


async def _per_account(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    host, _ = await api.guest()
    greedy, _ = await api.guest()
    tables = [(await api.create_table(host, "conquian", {}))["id"] for _ in range(2)]
    await api.aclose()
    kept: list[Any] = []
    # Three sockets over two tables: the account's share of this process.
    opened = [
        await greeting_or_close(await socket_url(server, tables[n % 2], greedy), kept)
        for n in range(3)
    ]
    fourth = await greeting_or_close(await socket_url(server, tables[1], greedy))
    others = await greeting_or_close(await socket_url(server, tables[0], host))
    await kept.pop().close()
    await asyncio.sleep(0.5)  # the server notices the close
    again = await greeting_or_close(await socket_url(server, tables[0], greedy), kept)
    for ws in kept:
        await ws.close()
    return {"opened": opened, "fourth": fourth, "others": others, "again": again}


def test_an_account_holds_only_so_many_sockets(start_server: Callable[..., ServerProcess]) -> None:
    result = asyncio.run(_per_account(start_server(SAHRAT_MAX_SOCKETS_PER_ACCOUNT="3")))
    assert result == {"opened": [None] * 3, "fourth": 4409, "others": None, "again": None}


async def _per_table(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    creator, _ = await api.guest()
    table_id = (await api.create_table(creator, "conquian", {}))["id"]
    watchers = [(await api.guest())[0] for _ in range(3)]
    player, _ = await api.guest()
    kept: list[Any] = []
    watching = [
        await greeting_or_close(await socket_url(server, table_id, token), kept)
        for token in watchers
    ]
    # A player who takes a seat gets in although the spectators are full (and a
    # spectator who sits down leaves room for another).
    await api.join(player, table_id)
    seated = await WireClient.connect(server, table_id, player, name="player")
    creator_in = await WireClient.connect(server, table_id, creator, name="creator")
    assert (seated.seat, creator_in.seat) in ((1, 0), (0, 1))
    await api.aclose()
    for ws in kept:
        await ws.close()
    await seated.close()
    await creator_in.close()
    return {"watching": watching}


def test_a_table_takes_only_so_many_spectators(start_server: Callable[..., ServerProcess]) -> None:
    result = asyncio.run(_per_table(start_server(SAHRAT_MAX_SPECTATORS_PER_TABLE="2")))
    assert result == {"watching": [None, None, 4410]}
