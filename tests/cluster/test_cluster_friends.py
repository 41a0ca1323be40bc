"""Friends across two processes of a cluster (docs/social.md, "Friends"): a request sent
through one process is accepted through the other, presence is read from the shared
database, a friend watches a private table that the other process serves (REST and a
forwarded socket), and a block made through one process keeps the blocked player's
chat away from the blocker at a table the other process serves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from server.harness import Api, ServerProcess, WireClient, auth_headers


async def _friends_across(p1: ServerProcess, p2: ServerProcess) -> None:
    api1, api2 = Api(p1), Api(p2)
    clients: list[WireClient] = []
    try:
        a_token, a = await api1.account()
        b_token, b = await api2.account()
        c_token, _ = await api1.account()
        sent = await api1.http.post(
            "/api/friends/requests", json={"name": b["name"]}, headers=auth_headers(a_token)
        )
        assert sent.status_code == 201, sent.text
        accepted = await api2.http.post(
            f"/api/friends/requests/{sent.json()['id']}/accept", headers=auth_headers(b_token)
        )
        assert accepted.status_code == 200, accepted.text
        # A was seen by process 1 only: process 2 reads it from the database.
        listed = (await api2.get("/api/friends", b_token))["friends"]
        assert [(f["user_id"], f["online"]) for f in listed] == [(a["id"], True)]

        # A private table served by process 1, open to the creator's friends.
        made = await api1.http.post(
            "/api/tables",
            json={
                "game": "konkan",
                "options": {"players": 3},
                "private": True,
                "friends_watch": True,
            },
            headers=auth_headers(a_token),
        )
        assert made.status_code == 201, made.text
        private_id = made.json()["id"]
        assert (await api2.get(f"/api/tables/{private_id}", b_token))["id"] == private_id
        stranger = await api2.http.get(f"/api/tables/{private_id}", headers=auth_headers(c_token))
        assert stranger.status_code == 404
        watcher = await WireClient.connect(p2, private_id, b_token, name="watcher")  # forwarded
        clients.append(watcher)
        assert watcher.seat is None
        assert (await api2.get("/api/friends", b_token))["friends"][0]["table_id"] == private_id

        # A public table served by process 1; B blocks A through process 2.
        public = await api1.create_table(a_token, "konkan", {"players": 4})
        await api2.join(b_token, public["id"])
        await api1.join(c_token, public["id"])
        sender = await WireClient.connect(p1, public["id"], a_token, name="a")
        blocker = await WireClient.connect(p2, public["id"], b_token, name="b")
        third = await WireClient.connect(p1, public["id"], c_token, name="c")
        clients += [sender, blocker, third]
        blocked = await api2.http.post(
            "/api/blocks", json={"user_id": a["id"]}, headers=auth_headers(b_token)
        )
        assert blocked.status_code == 201, blocked.text
        # A rename through process 2, broadcast after the block on the same ordered bus:
        # once process 1's table shows it, process 1 has the block too.
        new_name = f"b{b['id']}x{public['id']}"
        renamed = await api2.http.patch(
            "/api/me", json={"name": new_name}, headers=auth_headers(b_token)
        )
        assert renamed.status_code == 200, renamed.text
        await third.wait_for(
            lambda m: (
                m["type"] == "table" and any(s["name"] == new_name for s in m["payload"]["seats"])
            )
        )
        await sender.send({"type": "chat", "payload": {"text": "from a"}})
        await third.wait_for(lambda m: m["type"] == "chat" and m["payload"]["text"] == "from a")
        await third.send({"type": "chat", "payload": {"text": "from c"}})
        await blocker.wait_for(lambda m: m["type"] == "chat" and m["payload"]["text"] == "from c")
        await blocker.roundtrip()
        assert [m["payload"]["text"] for m in blocker.of_type("chat")] == ["from c"]
    finally:
        for client in clients:
            await client.close()
        await api1.aclose()
        await api2.aclose()


def test_friends_and_blocks_across_two_processes(
    start_node: Callable[..., ServerProcess],
) -> None:
    p1, p2 = start_node(), start_node()
    asyncio.run(_friends_across(p1, p2))
