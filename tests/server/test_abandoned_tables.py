"""What a leaver's table becomes (docs/protocol.md, "Leaving a match").

A bot game (a free table where the only person plays against bots) that its person
leaves during the match used to play on, bots alone: it stayed in the lobby, it was
one of the three open tables its creator may have (after three such leaves the next
table was refused, ``too_many_tables``), and its match, finished by bots, later came
into the leaver's history. Now the match is abandoned at once: the table is closed,
leaves the lobby, no longer counts among its creator's open tables, and no match of
it is written. A table where another person still plays keeps today's rule: a bot
plays the leaver's hand and the leaver may come back.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from .harness import Api, ServerProcess, WireClient, auth_headers

# The real cap on open tables, and bots that move at once (a match of bots that played
# on would be over, and written, within moments).
MODULE_SERVER_ENV = {"SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT": "3", "SAHRAT_BOT_DELAY_SECONDS": "0"}


async def _bot_game(api: Api, token: str) -> tuple[int, int]:
    """A bot game as the client's quick play opens it: its id and the creator's response
    status (201)."""
    response = await api.http.post(
        "/api/tables",
        json={"game": "conquian", "options": {"wins_needed": 1}, "private": False},
        headers=auth_headers(token),
    )
    if response.status_code != 201:
        return 0, response.status_code
    table_id = int(response.json()["id"])
    started = await api.http.post(
        f"/api/tables/{table_id}/start", json={"bots": True}, headers=auth_headers(token)
    )
    assert started.status_code == 200 and started.json()["status"] == "playing", started.text
    return table_id, response.status_code


async def _leave_three_bot_games(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    try:
        token, _ = await api.guest()
        left = []
        sockets = []
        for _ in range(3):
            table_id, _status = await _bot_game(api, token)
            sockets.append(await WireClient.connect(server, table_id, token, name="me"))
            response = await api.http.post(
                f"/api/tables/{table_id}/leave", headers=auth_headers(token)
            )
            assert response.status_code == 200, response.text
            left.append((table_id, response.json()["status"]))
        ids = [table_id for table_id, _ in left]
        listed = [t["id"] for t in await api.get("/api/tables?limit=200")]
        after = {
            table_id: (await api.http.get(f"/api/tables/{table_id}")).status_code
            for table_id in ids
        }
        # Gone from memory: no process plays these matches any more, so none is written.
        matches = await api.get("/api/me/matches", token)
        of_tables = [len(await api.get(f"/api/tables/{table_id}/matches")) for table_id in ids]
        _fourth, created = await _bot_game(api, token)
        for client in sockets:  # the closed table closed its sockets (told it first)
            with contextlib.suppress(TimeoutError):
                await client.wait_closed()
        return {
            "sockets": [
                (client.closed, client.of_type("table")[-1]["payload"]["status"])
                for client in sockets
            ],
            "statuses": [status for _, status in left],
            "listed": [table_id for table_id in ids if table_id in listed],
            "looked_up": sorted(set(after.values())),
            "my_matches": len(matches),
            "their_matches": of_tables,
            "fourth": created,
        }
    finally:
        await api.aclose()


def test_a_bot_game_its_only_person_leaves_is_closed(module_server: ServerProcess) -> None:
    result = asyncio.run(_leave_three_bot_games(module_server))
    assert result == {
        "sockets": [(True, "closed")] * 3,
        "statuses": ["closed"] * 3,
        "listed": [],
        "looked_up": [404],
        "my_matches": 0,
        "their_matches": [0, 0, 0],
        "fourth": 201,
    }, result


async def _leave_with_a_person_still_there(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    try:
        first, _ = await api.guest()
        second, _ = await api.guest()
        info = await api.create_table(first, "konkan", {"players": 3})
        await api.join(second, info["id"])
        table_id = int(info["id"])
        started = await api.http.post(
            f"/api/tables/{table_id}/start", json={"bots": True}, headers=auth_headers(first)
        )
        assert started.status_code == 200, started.text
        left = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(second))
        assert left.status_code == 200, left.text
        seat = next(s for s in left.json()["seats"] if s["user_id"] is not None and s["left"])
        listed = [t["id"] for t in await api.get("/api/tables?limit=200")]
        # The leaver may come back: a join takes the seat over again.
        back = await api.http.post(
            f"/api/tables/{table_id}/join", json={}, headers=auth_headers(second)
        )
        return {
            "status": left.json()["status"],
            "bot_plays": seat["bot"],
            "listed": table_id in listed,
            "back": back.status_code,
            "back_seat": back.json()["seats"][seat["seat"]]["left"],
        }
    finally:
        await api.aclose()


def test_a_leaver_among_people_keeps_the_seat(module_server: ServerProcess) -> None:
    assert asyncio.run(_leave_with_a_person_still_there(module_server)) == {
        "status": "playing",
        "bot_plays": True,
        "listed": True,
        "back": 200,
        "back_seat": False,
    }
