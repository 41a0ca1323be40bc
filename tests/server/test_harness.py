"""The harness talks to the server it started, never to another test's.

Ports are picked free by the kernel and handed to ``sahrat serve``; between the two,
another test's server (another xdist worker) can take the same port. Ours then fails
to bind while theirs answers ``/readyz`` on it: a readiness answer taken from the
wrong process made a test check another server's settings (the public port answered
``/metrics`` because it was another server's public port).
"""

from __future__ import annotations

from pathlib import Path

import httpx

from .harness import ServerProcess


def test_a_server_started_on_a_taken_port_is_ready_on_its_own(tmp_path: Path) -> None:
    # The database plays no part here: SQLite alone.
    database = f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}"
    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
    first = ServerProcess(database, tmp_path / "first").start()
    # The second server is told to use the first one's port, as if the kernel had
    # handed the same free port to two workers.
    second = ServerProcess(database, tmp_path / "second")
    try:
        second.start(port=first.port)
        assert second.port != first.port
        assert second.proc is not None
        answer = httpx.get(f"{second.base_url}/readyz", timeout=5).json()
        assert answer == {"ready": True, "pid": second.proc.pid}
        assert first.proc is not None
        assert httpx.get(f"{first.base_url}/readyz", timeout=5).json()["pid"] == first.proc.pid
    finally:
        second.stop()
        first.stop()
