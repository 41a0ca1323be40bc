"""A socket's seat follows the table's seating, whatever the order of joins, leaves
and connections: a socket never keeps a seat its user gave up, never sees the hand of
the player who took that seat and never plays for them; a spectator's socket of a
user who sits down becomes that seat's.

The attack: A takes seat 1 and opens the table's socket, leaves, and a victim takes
seat 1; when the match starts, A's old socket must be a spectator's. Then the same
checks over seeded random orders of joins, leaves, re-joins and connections, before
and during the match (``SAHRAT_CHURN_ORDERS``, ``SAHRAT_CHURN_SEED``)."""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any

import pytest

from .harness import Api, ServerProcess, WireClient, auth_headers

MODULE_SERVER_ENV = {"SAHRAT_BOT_DELAY_SECONDS": "0", "SAHRAT_GRACE_SECONDS": "600"}


async def _leave(api: Api, token: str, table_id: int) -> dict[str, Any]:
    response = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(token))
    assert response.status_code == 200, response.text
    return dict(response.json())


def _hand(client: WireClient) -> list[str] | None:
    return None if client.view is None else client.view.get("hand")


async def _settled(clients: list[WireClient]) -> None:
    """Every socket has received everything the server sent before now."""
    for client in clients:
        await client.roundtrip()


async def _the_victim_case(server: ServerProcess, game: str, options: dict[str, Any]) -> None:
    api = Api(server)
    try:
        creator, _ = await api.guest()
        attacker, attacker_user = await api.guest()
        victim, victim_user = await api.guest()
        info = await api.create_table(creator, game, options)
        table_id = int(info["id"])
        await _leave(api, creator, table_id)  # every seat free: the creator sits last
        info = await api.join(attacker, table_id)
        seat = next(s["seat"] for s in info["seats"] if s["user_id"] == attacker_user["id"])
        stale = await WireClient.connect(server, table_id, attacker, name="stale")
        assert stale.seat == seat
        await _leave(api, attacker, table_id)
        info = await api.join(victim, table_id)  # the victim gets the freed seat
        taken = next(s["seat"] for s in info["seats"] if s["user_id"] == victim_user["id"])
        assert taken == seat
        while info["status"] == "waiting":  # fill the table: the match starts
            filler, _ = await api.guest()
            info = await api.join(filler, table_id)
        assert info["status"] == "playing", info
        mine = await WireClient.connect(server, table_id, victim, name="victim")
        await _settled([stale, mine])
        assert stale.seat is None, stale.tail()
        assert _hand(stale) is None, "the old socket sees the victim's hand"
        assert mine.seat == seat and _hand(mine)
        victim_cards = set(_hand(mine) or [])
        for message, view in zip(stale.messages, stale.views, strict=True):
            assert not (view and view.get("hand")), f"a hand reached the old socket: {message}"
        # Its commands are a spectator's, whatever seat they name.
        for action in ({"type": "draw"}, {"type": "refuse"}, {"type": "draw", "seat": seat}):
            reply = await stale.command(action)
            assert reply["payload"]["ok"] is False, reply
            assert reply["payload"]["error"]["code"] in ("spectator", "not_your_seat"), reply
        await mine.roundtrip()
        assert set(_hand(mine) or []) == victim_cards  # nothing was played for the victim
    finally:
        await api.aclose()


@pytest.mark.parametrize(
    ("game", "options"), [("conquian", {}), ("konkan", {"players": 3, "rounds": 1})]
)
def test_a_socket_loses_the_seat_its_user_left(
    module_server: ServerProcess, game: str, options: dict[str, Any]
) -> None:
    asyncio.run(_the_victim_case(module_server, game, options))


async def _watch_then_sit(server: ServerProcess) -> None:
    api = Api(server)
    try:
        creator, _ = await api.guest()
        second, second_user = await api.guest()
        table_id = int((await api.create_table(creator, "conquian", {}))["id"])
        watching = await WireClient.connect(server, table_id, second, name="watching")
        assert watching.seat is None
        info = await api.join(second, table_id)
        seat = next(s["seat"] for s in info["seats"] if s["user_id"] == second_user["id"])
        await watching.wait_until(lambda: watching.seat == seat and bool(_hand(watching)))
        reference = await WireClient.connect(server, table_id, second, name="reference")
        assert _hand(watching) == _hand(reference)
    finally:
        await api.aclose()


def test_a_spectator_socket_becomes_the_seat_its_user_takes(
    module_server: ServerProcess,
) -> None:
    asyncio.run(_watch_then_sit(module_server))


async def _rejoin_elsewhere(server: ServerProcess) -> None:
    """One account, two seats over time: the socket follows it to its new seat and
    never shows the old seat's new owner's hand."""
    api = Api(server)
    try:
        creator, _ = await api.guest()
        attacker, attacker_user = await api.guest()
        victim, _ = await api.guest()
        table_id = int((await api.create_table(creator, "konkan", {"players": 3}))["id"])
        await api.join(attacker, table_id)  # seat 1
        stale = await WireClient.connect(server, table_id, attacker, name="stale")
        await _leave(api, attacker, table_id)
        await api.join(victim, table_id)  # seat 1
        info = await api.join(attacker, table_id)  # seat 2: the match starts
        assert info["status"] == "playing"
        now = next(s["seat"] for s in info["seats"] if s["user_id"] == attacker_user["id"])
        reference = await WireClient.connect(server, table_id, attacker, name="reference")
        await _settled([stale, reference])
        assert stale.seat == now == reference.seat
        assert _hand(stale) == _hand(reference)
    finally:
        await api.aclose()


def test_a_socket_follows_its_user_to_another_seat(
    module_server: ServerProcess,
) -> None:
    asyncio.run(_rejoin_elsewhere(module_server))


# --- every order ------------------------------------------------------------------------


async def _churn(server: ServerProcess, rng: random.Random) -> list[str]:
    """Play a random order of joins, leaves and connections on a waiting table, fill
    it, then churn during the match; every socket must end up as a fresh socket of the
    same user sees the table. Returns the steps taken (for the failure message)."""
    api = Api(server)
    steps: list[str] = []
    sockets: list[tuple[int, WireClient]] = []
    try:
        game, options, players = rng.choice(
            [
                ("conquian", {}, 2),
                ("konkan", {"players": 3, "rounds": 1}, 3),
                ("konkan", {"players": 4, "rounds": 1}, 4),
            ]
        )
        users = [await api.guest() for _ in range(players + 2)]
        token = {user["id"]: tok for tok, user in users}
        table_id = int((await api.create_table(users[0][0], game, options))["id"])
        steps.append(f"{game}/{players}: user {users[0][1]['id']} creates and sits")
        seated: set[int] = {users[0][1]["id"]}

        async def connect(uid: int) -> None:
            client = await WireClient.connect(
                server, table_id, token[uid], name=f"u{uid}.{len(sockets)}"
            )
            sockets.append((uid, client))
            steps.append(f"user {uid} connects")

        async def join(uid: int) -> dict[str, Any]:
            info = await api.join(token[uid], table_id)
            seated.add(uid)
            steps.append(f"user {uid} joins")
            return info

        async def leave(uid: int) -> None:
            await _leave(api, token[uid], table_id)
            seated.discard(uid)
            steps.append(f"user {uid} leaves")

        status = "waiting"
        for _ in range(rng.randint(3, 10)):
            uid = rng.choice(list(token))
            move = rng.choice(["connect", "seat", "seat"])
            if move == "connect":
                await connect(uid)
            elif uid in seated and len(seated) > 1:
                await leave(uid)
            elif uid not in seated and len(seated) < players - 1:
                await join(uid)
        for uid in list(token):  # fill the table: the last join starts the match
            if status == "waiting" and uid not in seated:
                status = (await join(uid))["status"]
        assert status == "playing"
        for _ in range(rng.randint(0, 4)):  # during the match: leave, come back, watch
            uid = rng.choice(list(token))
            if rng.random() < 0.5:
                await connect(uid)
            elif uid in seated:
                await leave(uid)
                seated.discard(uid)  # still the seat's owner, but walked away
                await join(uid)  # and back
        info = await api.get(f"/api/tables/{table_id}")
        seat_of = {s["user_id"]: s["seat"] for s in info["seats"] if s["user_id"] is not None}
        references = {
            uid: await WireClient.connect(server, table_id, token[uid], name=f"ref{uid}")
            for uid in {uid for uid, _ in sockets}
        }
        await _settled([client for _, client in sockets] + list(references.values()))
        for uid, client in sockets:
            expected = seat_of.get(uid)
            where = f"{client.name} (user {uid}, seat {expected}) after {steps}"
            assert client.seat == expected == references[uid].seat, where
            assert _hand(client) == _hand(references[uid]), where
            reply = await client.command({"type": "discard", "card": "XX"}, cid=None)
            code = reply["payload"]["error"]["code"]
            if expected is None:
                assert code == "spectator", (where, reply)
            else:
                assert code not in ("spectator", "seat_changed"), (where, reply)
        return steps
    finally:
        for _, client in sockets:
            await client.close()
        await api.aclose()


def test_every_order_of_joins_leaves_and_sockets(
    module_server: ServerProcess,
) -> None:
    orders = int(os.environ.get("SAHRAT_CHURN_ORDERS", "6"))
    seed = int(os.environ.get("SAHRAT_CHURN_SEED", random.randrange(2**31)))
    print(f"\nseat churn: {orders} orders, SAHRAT_CHURN_SEED={seed}")
    server = module_server
    rng = random.Random(seed)

    async def go() -> None:
        for _ in range(orders):
            await _churn(server, rng)

    asyncio.run(go())
