"""Spectators are listed at the table: the ``table`` message names who is watching and
how many, without costing every socket a message per spectator who comes or goes
(a crowd of watchers is announced in batches, at most one every two seconds)."""

from __future__ import annotations

import asyncio
from typing import Any

from .harness import Api, ServerProcess, WireClient, seated_table

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "spectators are listed from the table's memory"

MODULE_SERVER_ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_TURN_SECONDS_OVERRIDE": "3600",
    "SAHRAT_MAX_SOCKETS_PER_ACCOUNT": "50",
}
CROWD = 12


def _tables(client: WireClient, after: int = 0) -> list[dict[str, Any]]:
    return [m["payload"] for m in client.messages[after:] if m["type"] == "table"]


async def _watching(server: ServerProcess) -> None:
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {}, 2)
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    crowd: list[WireClient] = []
    try:
        await seats[0].wait_until(lambda: seats[0].view is not None)
        # Nobody watches yet.
        info = await api.get(f"/api/tables/{table_id}")
        assert info["spectators"] == [] and info["spectator_count"] == 0, info
        names, crowd_tokens = [], []
        for _ in range(CROWD):
            token, user = await api.guest()
            names.append(user["name"])
            crowd_tokens.append(token)
        before = len(seats[0].messages)
        began = asyncio.get_running_loop().time()
        for index, token in enumerate(crowd_tokens):
            crowd.append(await WireClient.connect(server, table_id, token, name=f"watch{index}"))
        arriving = asyncio.get_running_loop().time() - began
        for client in crowd:
            assert client.seat is None  # spectators, not players

        def told_all() -> bool:
            tables = _tables(seats[0], before)
            return bool(tables) and tables[-1]["spectator_count"] == CROWD

        await seats[0].wait_until(told_all)
        latest = _tables(seats[0], before)[-1]
        assert latest["spectators"] == names, latest["spectators"]  # in the order they came
        # A crowd is announced in batches, at most one every 2 seconds (the first at
        # once, the last when its gap is over), not one per spectator.
        batches = len(_tables(seats[0], before))
        assert batches <= arriving / 2 + 2, (batches, arriving)
        # REST tells the same.
        info = await api.get(f"/api/tables/{table_id}")
        assert info["spectator_count"] == CROWD and info["spectators"] == names
        # One spectator's two sockets are one spectator.
        again = await WireClient.connect(server, table_id, crowd_tokens[0], name="watch0b")
        crowd.append(again)
        await asyncio.sleep(2.5)  # past a batch: still one spectator of that name
        info = await api.get(f"/api/tables/{table_id}")
        assert info["spectator_count"] == CROWD and info["spectators"] == names
        # They leave: the table hears of it.
        before = len(seats[0].messages)
        for client in crowd:
            await client.close()
        await seats[0].wait_until(
            lambda: (
                bool(_tables(seats[0], before))
                and _tables(seats[0], before)[-1]["spectator_count"] == 0
            )
        )
        assert _tables(seats[0], before)[-1]["spectators"] == []
    finally:
        for client in (*seats, *crowd):
            await client.close()
        await api.aclose()


def test_spectators_are_listed_in_batches(module_server: ServerProcess) -> None:
    asyncio.run(_watching(module_server))
