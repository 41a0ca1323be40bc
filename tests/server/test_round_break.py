"""The break between rounds (deals): once a round ends, nobody moves and no turn timer
runs until every connected player has continued or ``break_seconds`` have passed, and a
restart in the middle of it keeps it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from .harness import Api, ServerProcess, WireClient, play, seated_table

MODULE_SERVER_ENV = {"SAHRAT_BOT_DELAY_SECONDS": "0"}
OPTIONS = {"wins_needed": 3, "break_seconds": 4, "turn_seconds": 10}


async def _to_first_break(
    server: ServerProcess, options: dict[str, Any] = OPTIONS
) -> tuple[Api, int, list[str], list[WireClient]]:
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", options, 2)
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    for client in seats:
        client.continues = False  # the test decides when each player is done reading
    await play("conquian", seats, until=lambda view: view["deal"] >= 2)
    for client in seats:
        await client.wait_until(lambda c=client: _pause(c) is not None)
    return api, table_id, tokens, seats


def _pause(client: WireClient) -> dict[str, Any] | None:
    """The round break as the client last heard of it."""
    for message in reversed(client.messages):
        payload = message["payload"]
        if message["type"] == "break":
            return payload["round_break"]  # type: ignore[no-any-return]
        if message["type"] == "update":
            return payload.get("round_break")  # type: ignore[no-any-return]
        if message["type"] == "snapshot":
            return payload.get("round_break")  # type: ignore[no-any-return]
    return None


async def _everyone_continues(server: ServerProcess) -> None:
    api, _table_id, _tokens, seats = await _to_first_break(server)
    try:
        pause = _pause(seats[0])
        assert pause is not None and sorted(pause["waiting"]) == [0, 1]
        view = seats[0].view
        assert view is not None
        actor = seats[view["turn"]]
        reply = await actor.command({"type": "refuse"})
        assert reply["payload"]["error"]["code"] == "round_break", reply
        await seats[0].send({"type": "continue"})
        await seats[1].wait_until(lambda: (_pause(seats[1]) or {}).get("waiting") == [1])
        started = time.time()
        await seats[1].send({"type": "continue"})
        for client in seats:
            await client.wait_until(lambda c=client: _pause(c) is None)
        ended = [m for m in seats[0].messages if m["type"] == "break"][-1]["payload"]
        # The turn's clock starts when play does, not when the round ended.
        assert ended["deadline"] >= started + OPTIONS["turn_seconds"] - 1, ended
        for client in seats:
            client.continues = True
        await play("conquian", seats, until=lambda view: view["deal"] >= 3)
    finally:
        for client in seats:
            await client.close()
        await api.aclose()


def test_the_next_round_waits_until_everyone_continues(module_server: ServerProcess) -> None:
    asyncio.run(_everyone_continues(module_server))


async def _break_runs_out(server: ServerProcess) -> None:
    api, _table_id, _tokens, seats = await _to_first_break(server)
    try:
        pause = _pause(seats[0])
        assert pause is not None
        seq = seats[0].seq
        # Nobody continues: the break ends by itself at its deadline, and nothing was
        # played meanwhile (no timer ran during it).
        for client in seats:
            await client.wait_until(lambda c=client: _pause(c) is None, timeout=30)
        assert time.time() >= pause["until"] - 0.5
        assert seats[0].seq == seq
    finally:
        for client in seats:
            await client.close()
        await api.aclose()


def test_a_break_ends_by_itself(module_server: ServerProcess) -> None:
    asyncio.run(_break_runs_out(module_server))


async def _break_survives_a_restart(server: ServerProcess) -> None:
    long_break = {**OPTIONS, "break_seconds": 120}
    api, table_id, tokens, seats = await _to_first_break(server, long_break)
    try:
        pause = _pause(seats[0])
        assert pause is not None
        for client in seats:
            await client.close()
        server.kill()
        server.start()
        again = await WireClient.connect(server, table_id, tokens[0], name="again")
        again.continues = False
        snapshot = again.of_type("snapshot")[-1]["payload"]
        assert snapshot["round_break"] is not None, snapshot
        assert abs(snapshot["round_break"]["until"] - pause["until"]) < 1, snapshot
        await again.send({"type": "continue"})
        await again.roundtrip()
        await again.close()
    finally:
        await api.aclose()


def test_a_break_survives_a_restart(start_server: Callable[..., ServerProcess]) -> None:
    # (a server of its own: it is killed and started again)
    asyncio.run(_break_survives_a_restart(start_server(**MODULE_SERVER_ENV)))
