"""Friends over real HTTP and sockets (docs/social.md, "Friends"): a request sent by
name, accepted, refused and removed; guests have no friends; a block ends the
friendship and stops the blocked player's requests, invitations and chat messages; an
invitation seats a friend at a private table; a table's ``friends_watch`` lets the
creator's friends watch it while a stranger is still told it does not exist; the
friends list says who is online and at which table, when that table is open to me.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from .harness import Api, ServerProcess, WireClient, auth_headers


def _code(response: httpx.Response) -> str:
    return str(response.json()["detail"]["code"])


async def _post(api: Api, path: str, token: str, body: Any = None) -> httpx.Response:
    return await api.http.post(path, json=body, headers=auth_headers(token))


async def _befriend(api: Api, asker: str, asked: str, asked_id: int) -> None:
    """``asker`` asks ``asked`` (by id), who accepts."""
    sent = await _post(api, "/api/friends/requests", asker, {"user_id": asked_id})
    assert sent.status_code == 201, sent.text
    accepted = await _post(api, f"/api/friends/requests/{sent.json()['id']}/accept", asked)
    assert accepted.status_code == 200, accepted.text


async def _private(api: Api, token: str, players: int = 3, **extra: Any) -> dict[str, Any]:
    made = await _post(
        api,
        "/api/tables",
        token,
        {"game": "konkan", "options": {"players": players}, "private": True, **extra},
    )
    assert made.status_code == 201, made.text
    return dict(made.json())


async def _requests(server: ServerProcess) -> None:
    api = Api(server)
    try:
        (a_token, a), (b_token, b), (c_token, _c) = [await api.account() for _ in range(3)]
        # By name, in another case and with stray spaces: the name's key finds them.
        asked = await _post(
            api, "/api/friends/requests", a_token, {"name": f"  {b['name'].upper()} "}
        )
        assert asked.status_code == 201, asked.text
        assert asked.json()["user_id"] == b["id"] and asked.json()["status"] == "pending"
        again = await _post(api, "/api/friends/requests", a_token, {"user_id": b["id"]})
        assert again.status_code == 200 and again.json()["id"] == asked.json()["id"]

        mine = await api.get("/api/friends", a_token)
        assert [r["user_id"] for r in mine["outgoing"]] == [b["id"]]
        assert mine["friends"] == [] and mine["incoming"] == []
        theirs = await api.get("/api/friends", b_token)
        assert [(r["id"], r["user_id"]) for r in theirs["incoming"]] == [
            (asked.json()["id"], a["id"])
        ]

        # Only the one asked may accept.
        wrong = await _post(api, f"/api/friends/requests/{asked.json()['id']}/accept", a_token)
        assert wrong.status_code == 404 and _code(wrong) == "no_such_request"
        ok = await _post(api, f"/api/friends/requests/{asked.json()['id']}/accept", b_token)
        assert ok.status_code == 200 and ok.json()["status"] == "accepted"
        for token, other in ((a_token, b), (b_token, a)):
            listed = await api.get("/api/friends", token)
            assert [f["user_id"] for f in listed["friends"]] == [other["id"]]
            assert listed["incoming"] == [] and listed["outgoing"] == []
        dup = await _post(api, "/api/friends/requests", b_token, {"user_id": a["id"]})
        assert dup.status_code == 409 and _code(dup) == "already_friends"

        # Refused: the request goes, nobody is a friend.
        c_asks = await _post(api, "/api/friends/requests", c_token, {"user_id": b["id"]})
        assert c_asks.status_code == 201
        refused = await _post(api, f"/api/friends/requests/{c_asks.json()['id']}/refuse", b_token)
        assert refused.status_code == 204
        assert (await api.get("/api/friends", c_token))["outgoing"] == []
        assert [f["user_id"] for f in (await api.get("/api/friends", b_token))["friends"]] == [
            a["id"]
        ]

        # Removed, by either of the two.
        gone = await api.http.delete(f"/api/friends/{a['id']}", headers=auth_headers(b_token))
        assert gone.status_code == 204
        assert (await api.get("/api/friends", a_token))["friends"] == []
        none = await api.http.delete(f"/api/friends/{a['id']}", headers=auth_headers(b_token))
        assert none.status_code == 404 and _code(none) == "no_such_request"

        # Guests have no friends, either way; nobody is their own friend.
        g_token, g = await api.guest()
        as_guest = await _post(api, "/api/friends/requests", g_token, {"user_id": a["id"]})
        assert as_guest.status_code == 403 and _code(as_guest) == "friends_need_account"
        to_guest = await _post(api, "/api/friends/requests", a_token, {"user_id": g["id"]})
        assert to_guest.status_code == 409 and _code(to_guest) == "friend_is_guest"
        selfish = await _post(api, "/api/friends/requests", a_token, {"name": a["name"]})
        assert selfish.status_code == 409 and _code(selfish) == "friend_self"
        nobody = await _post(api, "/api/friends/requests", a_token, {"name": "no such one here"})
        assert nobody.status_code == 404 and _code(nobody) == "no_such_player"
    finally:
        await api.aclose()


def test_friend_requests_accepted_refused_and_removed(start_server: Any) -> None:
    asyncio.run(_requests(start_server()))


async def _blocking(server: ServerProcess) -> None:
    api = Api(server)
    clients: list[WireClient] = []
    try:
        (a_token, a), (b_token, b), (c_token, _c) = [await api.account() for _ in range(3)]
        await _befriend(api, a_token, b_token, b["id"])
        table = await _private(api, a_token, players=4)
        invited = await _post(
            api, f"/api/tables/{table['id']}/invite", a_token, {"user_id": b["id"]}
        )
        assert invited.status_code == 201, invited.text
        assert len(await api.get("/api/me/invitations", b_token)) == 1

        # B blocks A: the friendship and the invitation go.
        blocked = await _post(api, "/api/blocks", b_token, {"user_id": a["id"]})
        assert blocked.status_code == 201, blocked.text
        assert [x["user_id"] for x in await api.get("/api/blocks", b_token)] == [a["id"]]
        assert (await api.get("/api/friends", a_token))["friends"] == []
        assert await api.get("/api/me/invitations", b_token) == []
        # A can neither ask again nor invite; B is told to unblock first.
        ask = await _post(api, "/api/friends/requests", a_token, {"user_id": b["id"]})
        assert ask.status_code == 403 and _code(ask) == "blocked_by_player"
        invite = await _post(
            api, f"/api/tables/{table['id']}/invite", a_token, {"user_id": b["id"]}
        )
        assert invite.status_code == 403 and _code(invite) == "blocked_by_player"
        back = await _post(api, "/api/friends/requests", b_token, {"user_id": a["id"]})
        assert back.status_code == 409 and _code(back) == "player_blocked"
        me = await _post(api, "/api/blocks", b_token, {"user_id": b["id"]})
        assert me.status_code == 409 and _code(me) == "block_self"

        # At a public table, A's chat messages reach C but never B.
        public = await api.create_table(a_token, "konkan", {"players": 4})
        await api.join(b_token, public["id"])
        await api.join(c_token, public["id"])
        for token, name in ((a_token, "a"), (b_token, "b"), (c_token, "c")):
            clients.append(await WireClient.connect(server, public["id"], token, name=name))
        sender, blocker, other = clients
        await sender.send({"type": "chat", "payload": {"text": "from a"}})
        await other.wait_for(lambda m: m["type"] == "chat" and m["payload"]["text"] == "from a")
        await other.send({"type": "chat", "payload": {"text": "from c"}})
        await blocker.wait_for(lambda m: m["type"] == "chat" and m["payload"]["text"] == "from c")
        await blocker.roundtrip()
        said = [m["payload"]["text"] for m in blocker.of_type("chat")]
        assert said == ["from c"], blocker.tail()
        # A reconnection's history leaves A's messages out too.
        await blocker.close()
        again = await WireClient.connect(server, public["id"], b_token, name="b2")
        clients.append(again)
        history = await again.wait_for(lambda m: m["type"] == "chat_history")
        assert [m["text"] for m in history["payload"]["messages"]] == ["from c"]

        # Unblocked: A's next messages reach B again (the friendship is not back).
        lifted = await api.http.delete(f"/api/blocks/{a['id']}", headers=auth_headers(b_token))
        assert lifted.status_code == 204
        await sender.send({"type": "chat", "payload": {"text": "again a"}})
        await again.wait_for(lambda m: m["type"] == "chat" and m["payload"]["text"] == "again a")
        assert (await api.get("/api/friends", b_token))["friends"] == []
    finally:
        for client in clients:
            await client.close()
        await api.aclose()


def test_a_block_stops_requests_invitations_and_chat(start_server: Any) -> None:
    asyncio.run(_blocking(start_server()))


async def _invitation(server: ServerProcess) -> None:
    api = Api(server)
    try:
        (a_token, a), (b_token, b), (c_token, c) = [await api.account() for _ in range(3)]
        await _befriend(api, a_token, b_token, b["id"])
        table = await _private(api, a_token)
        table_id = table["id"]
        # Not a friend, or not seated there: refused.
        stranger = await _post(api, f"/api/tables/{table_id}/invite", a_token, {"user_id": c["id"]})
        assert stranger.status_code == 403 and _code(stranger) == "not_friends"
        await _befriend(api, c_token, b_token, b["id"])
        outside = await _post(api, f"/api/tables/{table_id}/invite", c_token, {"user_id": b["id"]})
        assert outside.status_code == 404 and _code(outside) == "no_such_table"  # private

        sent = await _post(api, f"/api/tables/{table_id}/invite", a_token, {"user_id": b["id"]})
        assert sent.status_code == 201, sent.text
        waiting = await api.get("/api/me/invitations", b_token)
        assert [(i["table_id"], i["inviter_name"], i["private"]) for i in waiting] == [
            (table_id, a["name"], True)
        ]
        assert await api.get("/api/me/invitations", c_token) == []
        # Another's invitation is not mine to take.
        theft = await _post(api, f"/api/me/invitations/{waiting[0]['id']}/accept", c_token)
        assert theft.status_code == 404 and _code(theft) == "no_such_invitation"

        seated = await _post(api, f"/api/me/invitations/{waiting[0]['id']}/accept", b_token)
        assert seated.status_code == 200, seated.text
        seats = {s["user_id"] for s in seated.json()["seats"]}
        assert {a["id"], b["id"]} <= seats
        assert await api.get("/api/me/invitations", b_token) == []
        # Seated, the friend opens the private table without its code.
        assert (await api.get(f"/api/tables/{table_id}", b_token))["id"] == table_id
        used = await _post(api, f"/api/me/invitations/{waiting[0]['id']}/accept", b_token)
        assert used.status_code == 404
    finally:
        await api.aclose()


def test_an_invitation_seats_a_friend_at_a_private_table(start_server: Any) -> None:
    asyncio.run(_invitation(start_server()))


async def _watching(server: ServerProcess) -> None:
    api = Api(server)
    clients: list[WireClient] = []
    try:
        (a_token, a), (b_token, b), (c_token, _c) = [await api.account() for _ in range(3)]
        await _befriend(api, a_token, b_token, b["id"])
        open_to_friends = await _private(api, a_token, friends_watch=True)
        assert open_to_friends["friends_watch"] is True
        closed = await _private(api, a_token)
        assert closed["friends_watch"] is False

        # The friend watches the first (REST and socket), not the second; a stranger
        # watches neither; watching is no seat.
        assert (await api.get(f"/api/tables/{open_to_friends['id']}", b_token))["id"]
        for token in (c_token, b_token):
            hidden = await api.http.get(f"/api/tables/{closed['id']}", headers=auth_headers(token))
            assert hidden.status_code == 404 and _code(hidden) == "no_such_table"
        stranger = await api.http.get(
            f"/api/tables/{open_to_friends['id']}", headers=auth_headers(c_token)
        )
        assert stranger.status_code == 404 and _code(stranger) == "no_such_table"
        watcher = await WireClient.connect(server, open_to_friends["id"], b_token, name="b")
        clients.append(watcher)
        assert watcher.seat is None
        snapshot = watcher.of_type("snapshot")[0]["payload"]
        assert snapshot["table"]["invite_code"] is None
        sit = await _post(api, f"/api/tables/{open_to_friends['id']}/join", b_token, {})
        assert sit.status_code == 404 and _code(sit) == "no_such_table"

        # The friends list: A is online (A just asked), at a table B may see.
        listed = (await api.get("/api/friends", b_token))["friends"]
        assert [(f["user_id"], f["online"], f["at_table"]) for f in listed] == [
            (a["id"], True, True)
        ]
        assert listed[0]["table_id"] == open_to_friends["id"]
        # A seated only at the closed one: at a table, which one not said.
        await _post(api, f"/api/tables/{open_to_friends['id']}/leave", a_token)
        listed = (await api.get("/api/friends", b_token))["friends"]
        assert listed[0]["at_table"] is True and listed[0]["table_id"] is None, listed
    finally:
        for client in clients:
            await client.close()
        await api.aclose()


def test_friends_watch_lets_a_friend_watch_and_not_a_stranger(start_server: Any) -> None:
    asyncio.run(_watching(start_server()))
