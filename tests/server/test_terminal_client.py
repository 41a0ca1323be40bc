"""``sahrat play`` against a live server: alone with bots it plays a whole match and
ends by naming the match and how to verify its shuffles; on a table already playing it
watches as a spectator."""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import Callable

from sahrat.rules.record import GameRecord, replay

from .harness import Api, ServerProcess, sahrat_command

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = (
    "the terminal client sees the protocol only (the matches' storage is test_recovery's)"
)


def _play(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*sahrat_command(), "play", "--server", server.base_url, *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_play_alone_with_bots_to_the_end(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(SAHRAT_BOT_DELAY_SECONDS="0")
    done = _play(
        server,
        "--game",
        "conquian",
        "--options",
        '{"wins_needed": 2}',
        "--bots",
        "simple",
        "--auto",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"match (\d+) is over", done.stdout)
    assert found, done.stdout[-2000:]
    assert "sahrat verify match.json" in done.stdout

    async def record() -> GameRecord:
        api = Api(server)
        try:
            match = await api.get(f"/api/matches/{found.group(1)}")
        finally:
            await api.aclose()
        return GameRecord.from_json(match["record"])

    assert replay(asyncio.run(record())).ok


def test_play_watches_a_table_already_playing(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(SAHRAT_BOT_DELAY_SECONDS="0.5")

    async def playing_table() -> int:
        api = Api(server)
        try:
            token, _ = await api.guest()
            info = await api.create_table(token, "konkan", {"players": 2})
            response = await api.http.post(
                f"/api/tables/{info['id']}/start",
                json={"bots": True, "level": "simple"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status_code == 200, response.text
            return int(info["id"])
        finally:
            await api.aclose()

    table_id = asyncio.run(playing_table())
    watcher = subprocess.Popen(
        [*sahrat_command(), "play", "--server", server.base_url, "--table", str(table_id)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watcher.stdin is not None and watcher.stdout is not None
    lines: list[str] = []
    try:
        # Read until the table is drawn (the bots keep playing, so lines keep coming).
        while not any(line.startswith("round ") for line in lines):
            line = watcher.stdout.readline()
            assert line, f"the client ended: {''.join(lines)[-1500:]}"
            lines.append(line)
        watcher.stdin.write("quit\n")
        watcher.stdin.flush()
        watcher.wait(timeout=30)
    finally:
        watcher.kill()
    out = "".join(lines)
    assert "watching as a spectator" in out, out[-1500:]
    assert "your hand" not in out  # a spectator sees no hand
