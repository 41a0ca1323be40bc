"""Rated quick play: the time from the tap to a dealt hand.

A local ``sahrat serve`` (``local_server.py``, SQLite, the default wave of
``SAHRAT_QUEUE_WAVE_SECONDS``; bots never join: ``SAHRAT_QUEUE_BOT_WAIT_SECONDS`` is
long). Each run makes ``players`` guests, each from a network of its own
(``X-Forwarded-For``, trusted from 127.0.0.1). All but one tap quick play
(``POST /api/queue``) and wait; then the last one taps, the moment ``t0`` from which
everything is measured: the queue can form the table only then. Every player does
what the browser client does: polls ``GET /api/queue`` every ``poll`` seconds (the
client polls about once a second), and once seated fetches a socket ticket, opens the
table's WebSocket and reads the snapshot, which must show the player's own hand. The
POST answers after the wave it starts, so the tap that fills a table is answered
``seated`` at once; the others learn it at their next poll.

Reported per number of players (2 and 4) and poll interval (the client's 1 s, and
0.1 s to show what the server itself takes), over the runs: the last tapper's time
from ``t0`` to their dealt hand ("last tap") and the slowest player's ("all dealt"),
median [min–max], in milliseconds.

    .venv/bin/python bench/bench_queue.py --runs 7
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

from local_server import LocalServer

SRC = Path(__file__).resolve().parent.parent / "src"
ENV = {
    "SAHRAT_QUEUE_BOT_WAIT_SECONDS": "600",
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "1000000",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "1000000",
    "SAHRAT_NETWORK_SHARE_PERCENT": "100",
    "SAHRAT_SEAT_CHANGES_PER_MINUTE": "1000000",
}
WAIT_BEFORE_LAST = 0.5  # the others are in the queue, polling, when the last one taps


def headers(token: str) -> dict[str, str]:
    digest = hashlib.sha256(token.encode()).hexdigest()
    address = "2001:db8:" + ":".join(digest[i : i + 4] for i in range(0, 24, 4))
    return {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}


async def dealt(
    http: httpx.AsyncClient,
    url: str,
    token: str,
    poll: float,
    t0: list[float],
    answer: dict[str, Any],
) -> float:
    """From the POST's answer, poll until seated (as the client, a poll every ``poll``
    seconds), open the table's socket, read the hand: seconds after t0."""
    found = answer
    while found["status"] != "seated":
        assert found["status"] == "waiting", found
        await asyncio.sleep(poll)
        found = (await http.get("/api/queue", headers=headers(token))).json()
    table_id = found["table_id"]
    ticket = (await http.post(f"/api/tables/{table_id}/ticket", headers=headers(token))).json()
    ws_url = url.replace("http", "ws") + f"/ws/tables/{table_id}?ticket={ticket['ticket']}"
    async with websockets.connect(ws_url, max_size=2**23) as ws:
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "snapshot":
                assert message["payload"]["view"]["hand"], "no hand in the snapshot"
                return time.perf_counter() - t0[0]


async def one_run(url: str, players: int, poll: float) -> dict[str, float]:
    body = {"game": "konkan", "threshold": 51, "players": players, "speed": "normal"}
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        tokens = [(await http.post("/api/guests")).json()["token"] for _ in range(players)]
        t0 = [0.0]
        waiters = []
        for token in tokens[:-1]:
            answer = await http.post("/api/queue", json=body, headers=headers(token))
            assert answer.status_code == 200, answer.text
            waiters.append(asyncio.create_task(dealt(http, url, token, poll, t0, answer.json())))
        await asyncio.sleep(WAIT_BEFORE_LAST)
        t0[0] = time.perf_counter()
        answer = await http.post("/api/queue", json=body, headers=headers(tokens[-1]))
        assert answer.status_code == 200, answer.text
        last = await dealt(http, url, tokens[-1], poll, t0, answer.json())
        others = await asyncio.gather(*waiters)
    return {"last_tap_ms": last * 1000, "all_dealt_ms": max([last, *others]) * 1000}


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}–{max(values):,.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--polls", default="1.0,0.1", help="poll intervals, seconds")
    args = parser.parse_args()
    polls = [float(p) for p in args.polls.split(",")]
    server = LocalServer(SRC, ENV)
    results: dict[tuple[int, float], list[dict[str, float]]] = {}
    try:
        server.wait_ready()
        asyncio.run(one_run(server.url, 2, 0.1))  # unmeasured: imports and caches settle
        for run in range(args.runs):
            for players in (2, 4):
                for poll in polls:
                    out = asyncio.run(one_run(server.url, players, poll))
                    results.setdefault((players, poll), []).append(out)
                    print(f"run {run + 1}: {players} players, poll {poll}s: {out}", file=sys.stderr)
    finally:
        server.stop()
    print("| waiting players | poll | last tap → hand (ms) | all hands dealt (ms) |")
    print("| ---: | ---: | ---: | ---: |")
    for (players, poll), outs in sorted(results.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
        last = spread([o["last_tap_ms"] for o in outs])
        every = spread([o["all_dealt_ms"] for o in outs])
        print(f"| {players} | {poll:g} s | {last} | {every} |")


if __name__ == "__main__":
    main()
