"""A forwarded connection never skips an update silently: an update whose seq is not
the next one closes the client with 4503 (reconnect with ``since`` to catch up), and a
repeated one is not delivered twice."""

from __future__ import annotations

import asyncio
import json

from sahrat.server.cluster.placement import MOVED, Link
from sahrat.server.table.table import Connection


def _message(kind: str, seq: int) -> str:
    return json.dumps({"type": kind, "seq": seq, "payload": {}})


def _delivered(conn: Connection) -> list[tuple[str, int]]:
    out = []
    while not conn.outbox.empty():
        text = conn.outbox.get_nowait()
        if text is not None:
            data = json.loads(text)
            out.append((data["type"], data["seq"]))
    return out


def _link() -> tuple[Link, Connection]:
    conn = Connection(user_id=7, seat=0)
    return Link("c1", 1, "owner", conn, 7), conn


def test_consecutive_updates_pass_and_a_repeat_is_dropped() -> None:
    async def run() -> None:
        link, conn = _link()
        for kind, seq in [("snapshot", 5), ("update", 6), ("reply", 6), ("update", 6)]:
            link.deliver(_message(kind, seq))
        link.deliver(_message("update", 7))
        assert _delivered(conn) == [("snapshot", 5), ("update", 6), ("reply", 6), ("update", 7)]
        assert not conn.closed

    asyncio.run(run())


def test_a_gap_closes_the_client_with_reconnect() -> None:
    async def run() -> None:
        link, conn = _link()
        link.deliver(_message("snapshot", 5))
        link.deliver(_message("update", 6))
        link.deliver(_message("update", 8))  # 7 never came
        assert conn.closed and conn.close_code == MOVED == 4503
        assert _delivered(conn) == [("snapshot", 5), ("update", 6)]  # 8 is not passed on

    asyncio.run(run())


def test_a_resume_sets_where_updates_continue() -> None:
    async def run() -> None:
        link, conn = _link()
        link.deliver(_message("resume", 12))
        link.deliver(_message("update", 13))
        assert not conn.closed
        assert _delivered(conn) == [("resume", 12), ("update", 13)]

    asyncio.run(run())
