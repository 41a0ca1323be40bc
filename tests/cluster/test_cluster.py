"""Two server processes sharing PostgreSQL and Redis (the topology of
docker-compose.yml, without Docker): a table is served by one process, its
players connect to either, and when the serving process is killed the other one
takes the table over from the event log and the round finishes with no
acknowledged move lost."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from sahrat.store.models import LogEntry
from server.harness import (
    Api,
    ServerProcess,
    WireClient,
    assert_no_leaks,
    assert_seqs_consecutive,
    engine_and_player,
    play,
    wire_action,
)

WAIT = 30.0  # the longest a client waits for the cluster to settle (lease time is 3 s)


async def _table_on(
    owner_api: Api, other_api: Api, game: str, options: dict[str, Any]
) -> tuple[int, list[str], dict[str, Any]]:
    """A two-seat table created through ``owner_api`` (so its process serves it), the
    second seat taken through the other process (a forwarded join)."""
    first, _ = await owner_api.guest()
    second, _ = await other_api.guest()
    info = await owner_api.create_table(first, game, options)
    info = await other_api.join(second, info["id"])
    assert info["status"] == "playing", info
    tokens = {first: 0, second: 0}
    for seat in info["seats"]:
        for token in (first, second):
            user = (await owner_api.get("/api/me", token))["id"]
            if seat["user_id"] == user:
                tokens[token] = seat["seat"]
    by_seat = sorted(tokens, key=lambda token: tokens[token])
    return int(info["id"]), by_seat, info


async def _two_processes(p1: ServerProcess, p2: ServerProcess) -> None:
    api1, api2 = Api(p1), Api(p2)
    table_id, tokens, info = await _table_on(api1, api2, "conquian", {"wins_needed": 1})
    spectator, _ = await api2.guest()

    # Both processes answer for the table: the other one forwards to its owner.
    seen_from_2 = await api2.get(f"/api/tables/{table_id}")
    assert seen_from_2["seq"] == info["seq"] and seen_from_2["status"] == "playing"

    servers = [p1, p2]
    seats = [
        await WireClient.connect(servers[seat], table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    watcher = await WireClient.connect(p2, table_id, spectator, name="watcher")
    assert [client.seat for client in seats] == [0, 1]
    moves = await play("conquian", seats, watchers=[watcher], until=lambda view: False)
    assert moves > 0
    last = max(client.seq or 0 for client in seats)
    for client in [*seats, watcher]:
        await client.wait_seq(last)
        assert client.view is not None and client.view["match_over"]
        assert_seqs_consecutive(client)
    assert_no_leaks(seats, [watcher])

    # The finished match is the same through either process.
    for api in (api1, api2):
        matches = await api.get(f"/api/tables/{table_id}/matches")
        assert len(matches) == 1
    for client in [*seats, watcher]:
        await client.close()
    await api1.aclose()
    await api2.aclose()


def test_players_on_two_processes_see_every_move(
    start_node: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_two_processes(start_node(), start_node()))


# --- failover -------------------------------------------------------------------------


async def _connect_until_greeted(
    server: ServerProcess, table_id: int, token: str, name: str, since: int | None
) -> WireClient:
    """Connect (again) until greeted: while the dead owner's lease runs, a connection
    may be forwarded to it and closed with 4503 once the lease is taken over."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return await WireClient.connect(server, table_id, token, name=name, since=since)
        except (OSError, AssertionError, TimeoutError, Exception):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


class Seat:
    """A seated player who keeps playing through disconnections: it reconnects with
    ``since`` and resends an unanswered command with the same cid."""

    _cids = itertools.count(1)

    def __init__(self, seat: int, token: str, table_id: int, server: ServerProcess) -> None:
        self.seat, self.token, self.table_id, self.server = seat, token, table_id, server
        self.client: WireClient | None = None
        self.pending: tuple[str, dict[str, Any]] | None = None
        self.acknowledged: list[str] = []
        self.reconnects = 0

    async def ensure_connected(self, survivor: ServerProcess) -> WireClient:
        if self.client is not None and not self.client.closed:
            return self.client
        since = self.client.seq if self.client is not None else None
        if self.client is not None:
            self.reconnects += 1
            self.server = survivor
        self.client = await _connect_until_greeted(
            self.server, self.table_id, self.token, f"seat{self.seat}", since
        )
        return self.client

    async def move(self, action: dict[str, Any]) -> str:
        """Send (or resend) this seat's command; 'ok', 'retry' or the refusal code."""
        assert self.client is not None
        if self.pending is None:
            self.pending = (f"seat{self.seat}-{next(self._cids)}", action)
        cid, wire = self.pending
        try:
            reply = await asyncio.wait_for(self.client.command(wire, cid=cid), 5)
        except (AssertionError, TimeoutError, Exception):
            return "retry"  # the connection dropped: reconnect and resend the same cid
        payload = reply["payload"]
        if payload["ok"]:
            self.acknowledged.append(cid)
            self.pending = None
            return "ok"
        code = str(payload["error"]["code"])
        if code in ("stale", "round_break"):  # not applied: the view moved on (or paused)
            self.pending = None
        return code


async def _failover(p1: ServerProcess, p2: ServerProcess, database: str) -> dict[str, Any]:
    api1, api2 = Api(p1), Api(p2)
    table_id, tokens, info = await _table_on(api1, api2, "conquian", {"wins_needed": 2})
    await api1.aclose()
    await api2.aclose()
    engine, player = engine_and_player("conquian")
    seats = [Seat(0, tokens[0], table_id, p1), Seat(1, tokens[1], table_id, p2)]
    killed_at: float | None = None
    first_after_kill: float | None = None
    deal_at_kill = None
    moves = 0
    while True:
        clients = [await seat.ensure_connected(p2) for seat in seats]
        newest = max(clients, key=lambda c: c.seq or 0)
        view = newest.view
        assert view is not None
        if killed_at is not None and (view["match_over"] or view["deal"] > deal_at_kill):
            break  # the round that was being played when the owner died has finished
        if view["match_over"]:
            raise AssertionError("the match ended before the owner could be killed")
        actor = seats[view["turn"]]
        client = clients[view["turn"]]
        if (client.seq or 0) < (newest.seq or 0):
            with contextlib.suppress(AssertionError):
                await client.wait_seq(newest.seq or 0, timeout=2)
            continue
        assert client.view is not None
        action = actor.pending[1] if actor.pending else wire_action(engine, player(client.view))
        outcome = await actor.move(action)
        if outcome == "ok":
            moves += 1
            if killed_at is not None and first_after_kill is None:
                first_after_kill = time.monotonic()
        elif outcome in ("retry", "unavailable", "stale", "round_break"):
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"refused: {outcome} for {action}")
        if killed_at is None and moves == 12:
            deal_at_kill = view["deal"]
            p1.kill()  # SIGKILL: the owner dies mid-round
            killed_at = time.monotonic()
        assert moves < 3000, "the match does not end"
    assert killed_at is not None and first_after_kill is not None
    assert seats[0].reconnects >= 1  # its process died under it

    # Every acknowledged move is in the event log, exactly once.
    acknowledged = [cid for seat in seats for cid in seat.acknowledged]
    db = create_async_engine(database)
    try:
        async with db.connect() as conn:
            logged = (
                (
                    await conn.execute(
                        select(LogEntry.client_id).where(
                            LogEntry.table_id == table_id, LogEntry.client_id.is_not(None)
                        )
                    )
                )
                .scalars()
                .all()
            )
    finally:
        await db.dispose()
    for cid in acknowledged:
        assert logged.count(cid) == 1, cid
    # The survivor serves the table now, and says so: in its metrics, and in its JSON
    # log, a line naming the table.
    metrics = httpx.get(f"{p2.base_url}/metrics", timeout=5).text
    assert 'sahrat_lease_changes_total{change="acquired"}' in metrics
    records = [
        json.loads(line) for line in p2.log_path.read_text().splitlines() if line.startswith("{")
    ]
    assert any(r.get("table_id") == table_id and "took table" in r["message"] for r in records), (
        records[-5:]
    )
    for seat in seats:
        if seat.client is not None:
            assert_seqs_consecutive(seat.client)
            await seat.client.close()
    return {
        "moves": moves,
        "acknowledged": len(acknowledged),
        "failover_seconds": first_after_kill - killed_at,
        "info_seq": info["seq"],
    }


def test_killing_the_owner_hands_its_table_to_the_other_process(
    start_node: Callable[..., ServerProcess], cluster_database: str
) -> None:
    p1, p2 = start_node(), start_node(SAHRAT_LOG_FORMAT="json")
    result = asyncio.run(_failover(p1, p2, cluster_database))
    print(f"failover: {result}")
    assert result["acknowledged"] == result["moves"]


# --- graceful shutdown -----------------------------------------------------------------


async def _graceful(p1: ServerProcess, p2: ServerProcess) -> None:
    api1, api2 = Api(p1), Api(p2)
    table_id, tokens, _info = await _table_on(api1, api2, "conquian", {"wins_needed": 1})
    await api1.aclose()
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, (server, token) in enumerate(zip([p1, p2], tokens, strict=True))
    ]
    await play("conquian", seats, until=lambda view: (seats[0].seq or 0) >= 6)
    before = seats[0].seq
    assert before is not None

    p1.stop()  # SIGTERM: the owner hands the table over, then exits
    for client in seats:
        await client.wait_closed()
        # both the owner's own client and the forwarded one are told to reconnect
        assert client.ws.close_code == 4503, (client.name, client.ws.close_code)
    again = [
        await _connect_until_greeted(p2, table_id, token, f"again{seat}", before)
        for seat, token in enumerate(tokens)
    ]
    for client in again:
        assert client.seq == before  # nothing was lost in the hand-over
    moves = await play("conquian", again, until=lambda view: False)
    assert moves > 0
    for client in again:
        assert client.view is not None and client.view["match_over"]
        assert_seqs_consecutive(client)
        await client.close()
    info = await api2.get(f"/api/tables/{table_id}")
    assert info["status"] == "finished"
    await api2.aclose()


def test_a_graceful_shutdown_hands_tables_over_and_asks_clients_to_reconnect(
    start_node: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_graceful(start_node(), start_node()))


# --- seating through a forwarded socket -------------------------------------------------


async def _forwarded_socket_loses_the_seat(p1: ServerProcess, p2: ServerProcess) -> None:
    """The seat hijack through a forwarded socket: A's socket on process 2 (the table
    lives on process 1) must stop being seat 1's once A leaves and a victim sits."""
    api1, api2 = Api(p1), Api(p2)
    try:
        creator, _ = await api1.guest()
        attacker, _ = await api2.guest()
        victim, _ = await api2.guest()
        table_id = int((await api1.create_table(creator, "conquian", {}))["id"])

        async def leave(api: Api, token: str) -> None:
            response = await api.http.post(
                f"/api/tables/{table_id}/leave", headers={"Authorization": f"Bearer {token}"}
            )
            assert response.status_code == 200, response.text

        await leave(api1, creator)  # every seat free: the creator sits last
        await api2.join(attacker, table_id)
        stale = await WireClient.connect(p2, table_id, attacker, name="stale")
        assert stale.seat == 0
        await leave(api2, attacker)
        await api2.join(victim, table_id)  # the victim takes seat 0
        info = await api1.join(creator, table_id)
        assert info["status"] == "playing"
        mine = await WireClient.connect(p2, table_id, victim, name="victim")
        await stale.wait_until(lambda: stale.view is not None and stale.seat is None)
        await stale.roundtrip()
        assert mine.seat == 0 and mine.view is not None and mine.view.get("hand")
        assert stale.seat is None and stale.view is not None and not stale.view.get("hand")
        reply = await stale.command({"type": "refuse"})
        assert reply["payload"]["error"]["code"] == "spectator", reply
        for client in (stale, mine):
            await client.close()
    finally:
        await api1.aclose()
        await api2.aclose()


def test_a_forwarded_socket_loses_the_seat_its_user_left(
    start_node: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_forwarded_socket_loses_the_seat(start_node(), start_node()))
