"""Faults: the database unreachable for a few seconds while a match is being played.

The server talks to PostgreSQL through a TCP proxy in this test's event loop
(``DATABASE_URL`` points at the proxy). Mid-match the proxy cuts every open
connection and refuses new ones for ``SAHRAT_OUTAGE_SECONDS`` (default 3), then
lets them through again. The machine's PostgreSQL itself is never touched.

What must hold:

* during the outage every move is answered at once with ``unavailable`` (the move
  was not played): the log writer cannot commit, and a move is never acknowledged
  before it is durable, so the server refuses it rather than keep the player waiting;
  the WebSocket stays open and the process stays up;
* nothing acknowledged is lost: every ``ok`` command is in the event log exactly
  once, and no command answered ``unavailable`` is in it;
* when the database is back, the next legal move succeeds within a few seconds with
  no restart (the pool's pre-ping replaces the dead connections), and the match
  plays on to its end with consecutive seqs.

Counts go to ``test-artifacts/hardening/db_outage.json``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from server.harness import (
    Api,
    ServerProcess,
    WireClient,
    assert_seqs_consecutive,
    engine_and_player,
    play,
    seated_table,
    wire_action,
)

from .conftest import env_count, write_results
from .faults_support import DbProxy, read_tables

OUTAGE_SECONDS = env_count("SAHRAT_OUTAGE_SECONDS", 3)
RECOVERY_SECONDS = 10.0  # a legal move must succeed this soon after the database is back
REPLY_SECONDS = 10.0  # any reply, during the outage too


async def _move(client: WireClient, game: str) -> tuple[dict[str, Any], float]:
    """The seat's simple-player move; its reply and how long it took."""
    engine, player = engine_and_player(game)
    assert client.view is not None
    started = time.monotonic()
    reply = await asyncio.wait_for(
        client.command(wire_action(engine, player(client.view))), REPLY_SECONDS
    )
    return reply, time.monotonic() - started


async def _status(api: Api, path: str, token: str) -> int | str:
    """A REST call's status during the outage."""
    try:
        response = await api.http.get(path, headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError as error:
        return type(error).__name__
    return response.status_code


def _actor(seats: list[WireClient]) -> WireClient:
    view = seats[0].view
    assert view is not None and not view["match_over"]
    return seats[view["turn"]]


async def _outage(database: str, tmp_path: Path) -> dict[str, Any]:
    url = make_url(database)
    proxy = await DbProxy(url.host or "127.0.0.1", url.port or 5432).start()
    proxied = url.set(host="127.0.0.1", port=proxy.listen_port)
    server = ServerProcess(proxied.render_as_string(hide_password=False), tmp_path, {})
    await asyncio.to_thread(server.start)  # its migrations go through the proxy too
    api = Api(server)
    try:
        game = "conquian"
        # Two players, the default 30 s turn: only their moves write during the test.
        table_id, tokens, _info = await seated_table(api, game, {"wins_needed": 1}, 2)
        me = tokens[0]
        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{seat}")
            for seat, token in enumerate(tokens)
        ]
        start_seq = seats[0].seq or 0
        await play(game, seats, until=lambda _view: (seats[0].seq or 0) >= start_seq + 6)

        # --- the database goes away -----------------------------------------------
        proxy.cut()
        cut_at = time.monotonic()
        during: list[dict[str, Any]] = []
        rest: dict[str, int] = {}
        while time.monotonic() - cut_at < OUTAGE_SECONDS:
            actor = _actor(seats)
            seq_before = actor.seq
            reply, took = await _move(actor, game)
            payload = reply["payload"]
            during.append({"ok": payload["ok"], "seconds": round(took, 3), **payload})
            assert not payload["ok"], ("a move was acknowledged with no database", reply)
            assert payload["error"]["code"] == "unavailable", reply
            assert actor.seq == seq_before, "a refused move changed the table"
            for path in ("/healthz", "/api/me", f"/api/tables/{table_id}"):
                rest[path] = await _status(api, path, me)
            await asyncio.sleep(0.3)
        assert not any(client.closed for client in seats), "a connection was dropped"
        assert server.proc is not None and server.proc.poll() is None, "the server died"
        assert rest["/healthz"] == 200, rest
        assert rest["/api/me"] == 503, rest  # needs the database: "try again", not a 500
        outage = time.monotonic() - cut_at

        # --- it comes back: the next legal move succeeds, with no restart ------------
        proxy.restore()
        back_at = time.monotonic()
        after: list[str] = []
        while True:
            reply, _took = await _move(_actor(seats), game)
            payload = reply["payload"]
            if payload["ok"]:
                break
            after.append(payload["error"]["code"])
            assert payload["error"]["code"] == "unavailable", reply
            assert time.monotonic() - back_at < RECOVERY_SECONDS, ("no recovery", after)
            await asyncio.sleep(0.2)
        recovered = time.monotonic() - back_at
        rest_after = (
            await api.http.get("/api/me", headers={"Authorization": f"Bearer {me}"})
        ).status_code
        assert rest_after == 200

        # --- and the match plays on to its end --------------------------------------
        await play(game, seats, until=lambda _view: False)
        for client in seats:
            assert_seqs_consecutive(client)
        replies = [
            m["payload"] | {"seq": m["seq"]} for client in seats for m in client.of_type("reply")
        ]
        for client in seats:
            await client.close()
    finally:
        await api.aclose()
        server.stop()
        await proxy.stop()

    # What the database kept: every acknowledged move once, no refused one.
    record = (await read_tables(database, [table_id]))[table_id]
    assert record.status == "finished" and len(record.matches) == 1, record
    logged: dict[str, list[int]] = {}
    for seq, _kind, _seat, cid in record.entries:
        if cid is not None:
            logged.setdefault(cid, []).append(seq)
    acknowledged = [r for r in replies if r["ok"]]
    refused = [r for r in replies if not r["ok"]]
    lost = [r for r in acknowledged if logged.get(r["cid"]) != [r["seq"]]]
    assert not lost, lost
    assert not [r for r in refused if r["cid"] in logged], "a refused move was played"
    return {
        "outage_seconds": round(outage, 2),
        "moves_tried_during_outage": len(during),
        "unavailable_replies": sum(1 for d in during if not d["ok"]),
        "slowest_reply_during_outage_seconds": max(d["seconds"] for d in during),
        "rest_status_during_outage": rest,
        "recovery_seconds": round(recovered, 2),
        "refusals_after_restore": len(after),
        "acknowledged_moves": len(acknowledged),
        "moves_lost": len(lost),
        "proxy_connections_refused": proxy.refused,
    }


def test_database_outage_refuses_moves_then_recovers(
    postgres_database: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    results = asyncio.run(_outage(postgres_database, tmp_path))
    write_results("db_outage", results, request.node)
    assert results["unavailable_replies"] >= 1
    assert results["moves_lost"] == 0
