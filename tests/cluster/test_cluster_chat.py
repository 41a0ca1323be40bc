"""Table chat when the players reached different processes of a cluster: a socket held
by another process than the table's has its chat checked and kept where the table is
served, and gets everyone's messages; its history comes with its greeting; a report
sent to another process finds the message at the table's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from server.harness import Api, Message, ServerProcess, WireClient, auth_headers


async def _say(client: WireClient, payload: dict[str, Any]) -> Message:
    index = await client.send({"type": "chat", "payload": payload})
    return await client.wait_for(lambda m: m["type"] in ("chat", "error"), after=index)


async def _chat_across(p1: ServerProcess, p2: ServerProcess) -> None:
    api1, api2 = Api(p1), Api(p2)
    try:
        first, _ = await api1.guest()
        info = await api1.create_table(first, "conquian", {})  # served by process 1
        table_id = int(info["id"])
        second, second_user = await api2.guest()
        joined = await api2.join(second, table_id)  # forwarded to process 1
        assert joined["status"] == "playing", joined
        here = await WireClient.connect(p1, table_id, first, name="here")
        there = await WireClient.connect(p2, table_id, second, name="there")  # forwarded
        watcher, _ = await api2.guest()
        watching = await WireClient.connect(p2, table_id, watcher, name="watching")
        assert (here.seat, there.seat, watching.seat) == (0, 1, None)

        # Through process 2 to the table's process and back to everyone.
        said = await _say(there, {"text": "هلا، from the other server"})
        assert said["type"] == "chat", said
        assert said["payload"]["user_id"] == second_user["id"]
        assert said["payload"]["seat"] == 1
        for client in (here, watching):
            got = await client.wait_for(lambda m: m["type"] == "chat")
            assert got["payload"] == said["payload"]
        reply = await _say(here, {"phrase": "nice"})
        await there.wait_for(lambda m: m["type"] == "chat" and m["payload"]["phrase"] == "nice")
        # The limits hold where the table is: the forwarded socket's sixth is refused.
        for _ in range(4):
            assert (await _say(there, {"phrase": "yalla"}))["type"] == "chat"
        refused = await _say(there, {"phrase": "hurry"})
        assert refused["type"] == "error" and refused["payload"]["code"] == "chat_too_fast"

        # A spectator connecting through process 2 gets the history with its greeting.
        late, _ = await api2.guest()
        later = await WireClient.connect(p2, table_id, late, name="later")
        history = await later.wait_for(lambda m: m["type"] == "chat_history")
        kept = [m["id"] for m in history["payload"]["messages"]]
        assert kept[:2] == [said["payload"]["id"], reply["payload"]["id"]] and len(kept) == 6

        # A report through process 2: the message is found at process 1's table.
        reported = await api2.http.post(
            f"/api/tables/{table_id}/chat/{said['payload']['id']}/report",
            headers=auth_headers(first),
        )
        assert reported.status_code == 201, reported.text
        for client in (here, there, watching, later):
            await client.close()
    finally:
        await api1.aclose()
        await api2.aclose()


def test_chat_between_players_on_two_processes(start_node: Callable[..., ServerProcess]) -> None:
    p1, p2 = start_node(), start_node()
    asyncio.run(_chat_across(p1, p2))
