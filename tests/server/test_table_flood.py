"""A table's viewers are not flooded with ``table`` messages by one account.

The attack, on a live server with the real rate limits: an account seated at a
finished table asks for a rematch as fast as its socket may send, and at a waiting
table takes a seat and gives it up again over REST, as fast as the server answers,
for a few seconds. Each request used to send every viewer of the table a ``table``
message (60 to 100 a second). Now a rematch asked again changes nothing and sends
nothing; a table's ``table`` messages go out at most one per
``TABLE_MESSAGE_GAP`` (the first change after a quiet spell at once, the later ones
merged into one message with the latest state); and seat changes over REST are
limited per account (429 ``too_many_seat_changes`` with Retry-After). Legitimate
play goes on: the rematch starts when the last seat asks, and a join is shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from .harness import Api, ServerProcess, WireClient, auth_headers, play, seated_table

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "table messages are merged in the table's memory"

FLOOD_SECONDS = 3.0
TABLE_MESSAGE_GAP = 2.0  # docs/protocol.md: at most one `table` message every 2 seconds
SEAT_CHANGES = 20  # SAHRAT_SEAT_CHANGES_PER_MINUTE's default
# The real limits of people's clients, not the harness's machine speed.
REAL_LIMITS = {
    "SAHRAT_MESSAGE_RATE": "20",
    "SAHRAT_MESSAGE_BURST": "40",
    "SAHRAT_ACCOUNT_RATE": "40",
    "SAHRAT_ACCOUNT_BURST": "80",
    "SAHRAT_ABUSE_LIMIT": "200",
    "SAHRAT_SEAT_CHANGES_PER_MINUTE": str(SEAT_CHANGES),
    "SAHRAT_BOT_DELAY_SECONDS": "0",
}


def _tables(client: WireClient, after: int = 0) -> list[dict[str, Any]]:
    return [m["payload"] for m in client.messages[after:] if m["type"] == "table"]


async def _quiet(client: WireClient, heard: Callable[[dict[str, Any]], bool]) -> int:
    """Wait until a ``table`` message that ``heard`` accepts has come, then for a spell
    with none (so that what follows is counted from a quiet table); the log index."""
    await client.wait_until(lambda: any(heard(info) for info in _tables(client)))
    while True:
        before = len(_tables(client))
        await asyncio.sleep(TABLE_MESSAGE_GAP + 0.5)
        if len(_tables(client)) == before:
            return len(client.messages)


async def _ask_rematch_again_and_again(attacker: WireClient, until: float) -> int:
    """As fast as the socket's rate limit lets through (30 a second: under the
    abuse limit, so the socket stays open); the number sent."""
    sent = 0
    loop = asyncio.get_running_loop()
    while loop.time() < until:
        await attacker.send({"type": "rematch"})
        sent += 1
        await asyncio.sleep(1 / 30)
    return sent


async def _join_and_leave(
    api: Api, token: str, table_id: int, until: float
) -> list[httpx.Response]:
    """Take a seat and give it up, over and over, as fast as the server answers (and at
    least a few times more than the limit allows, however slowly it answers)."""
    answers: list[httpx.Response] = []
    loop = asyncio.get_running_loop()
    headers = auth_headers(token)
    while loop.time() < until or len(answers) < SEAT_CHANGES + 4:
        for what in ("join", "leave"):
            answers.append(
                await api.http.post(f"/api/tables/{table_id}/{what}", json={}, headers=headers)
            )
    return answers


async def _flood(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    clients: list[WireClient] = []
    try:
        # A finished table of two people, and a spectator watching it.
        finished_id, tokens, _ = await seated_table(api, "conquian", {"wins_needed": 1}, 2)
        seats = [
            await WireClient.connect(server, finished_id, token, name=f"seat{seat}")
            for seat, token in enumerate(tokens)
        ]
        clients += seats
        await play("conquian", seats, until=lambda view: False, patient=True)
        attacker, victim = seats
        await victim.wait_until(lambda: bool(victim.view and victim.view["match_over"]))
        watcher_token, _ = await api.guest()
        watcher = await WireClient.connect(server, finished_id, watcher_token, name="watcher")
        clients.append(watcher)
        # A waiting table of four seats: its creator watches it; the attacker comes and goes.
        host_token, _ = await api.guest()
        attacker_token = tokens[0]
        waiting_id = int((await api.create_table(host_token, "konkan", {"players": 4}))["id"])
        host = await WireClient.connect(server, waiting_id, host_token, name="host")
        clients.append(host)

        watched_from, hosted_from = await asyncio.gather(
            _quiet(watcher, lambda info: info["spectator_count"] == 1),
            _quiet(host, lambda info: info["seats"][0]["connected"]),
        )

        loop = asyncio.get_running_loop()
        began = loop.time()
        until = began + FLOOD_SECONDS
        asked, answers = await asyncio.gather(
            _ask_rematch_again_and_again(attacker, until),
            _join_and_leave(api, attacker_token, waiting_id, until),
        )
        flooded = loop.time() - began
        await asyncio.sleep(TABLE_MESSAGE_GAP + 0.5)  # a last merged message may follow
        await watcher.roundtrip()
        await host.roundtrip()
        at_finished = _tables(watcher, watched_from)
        at_waiting = _tables(host, hosted_from)
        refused = [a for a in answers if a.status_code == 429]

        # Legitimate play still works: the rematch starts when the last seat asks...
        await victim.send({"type": "rematch"})
        await victim.wait_until(lambda: bool(victim.view and not victim.view["match_over"]))
        # ...and a player who joins the waiting table is shown there.
        newcomer_token, newcomer = await api.guest()
        joined = await api.http.post(
            f"/api/tables/{waiting_id}/join", json={}, headers=auth_headers(newcomer_token)
        )
        assert joined.status_code == 200, joined.text
        await host.wait_until(
            lambda: any(
                newcomer["id"] in [s["user_id"] for s in info["seats"]] for info in _tables(host)
            )
        )
        return {
            "seconds": flooded,
            "rematch_asks": asked,
            "rematch_table_messages": len(at_finished),
            "rematch_list": at_finished[-1]["rematch"] if at_finished else None,
            "seat_requests": len(answers),
            "seat_changes": sum(a.status_code == 200 for a in answers),
            "refused": len(refused),
            "refusals": sorted(
                {(a.json()["detail"]["code"], a.headers.get("retry-after", "")) for a in refused}
            ),
            "join_leave_table_messages": len(at_waiting),
        }
    finally:
        for client in clients:
            await client.close()
        await api.aclose()


def test_one_account_cannot_flood_a_table_with_table_messages(
    module_servers: Callable[..., ServerProcess],
) -> None:
    result = asyncio.run(_flood(module_servers(**REAL_LIMITS)))
    seconds = result["seconds"]
    per_second = {
        "rematch": result["rematch_table_messages"] / seconds,
        "join/leave": result["join_leave_table_messages"] / seconds,
    }
    print(f"table messages a viewer got per second of the flood: {per_second}; {result}")
    # The first ask is news (the list shows it); every ask after it changes nothing.
    assert result["rematch_list"] == [0], result
    assert result["rematch_table_messages"] == 1, result
    # However many seats change, the viewers hear of it at most once per gap (and once
    # more for the changes of the last gap).
    assert result["join_leave_table_messages"] <= seconds / TABLE_MESSAGE_GAP + 3, result
    # Seat changes over REST are limited per account, with the time to wait.
    assert result["seat_changes"] <= SEAT_CHANGES + seconds * SEAT_CHANGES / 60 + 1, result
    assert result["refused"] > 0, result
    for code, retry_after in result["refusals"]:
        assert code == "too_many_seat_changes" and int(retry_after) >= 1, result
