"""A local ``sahrat serve`` for the benchmarks: started from a given ``src`` (this
checkout's, or another's for a before/after) on a free port of 127.0.0.1 with its own
SQLite database in a temporary folder, which ``stop()`` removes — or on a database the
caller gives (``database_url``), which outlives it (``kill()`` to crash it, then a new
``LocalServer`` on the same database)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

TICKS = os.sysconf("SC_CLK_TCK")
READY_SECONDS = 120.0  # a loaded machine starts slowly
IDLE_LIMIT_SECONDS = 30.0  # waiting for the server to finish its work


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class LocalServer:
    """``sahrat serve`` from ``src`` on a fresh SQLite database; stop() cleans up."""

    def __init__(
        self,
        src: Path,
        env: dict[str, str],
        serve_args: tuple[str, ...] = (),
        database_url: str | None = None,
    ) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="sahrat_bench_"))
        self.port = free_port()
        base = {k: v for k, v in os.environ.items() if not k.startswith("SAHRAT_")}
        base.update(
            DATABASE_URL=database_url or f"sqlite+aiosqlite:///{self.folder / 'sahrat.db'}",
            PYTHONPATH=str(src),
            **env,
        )
        cmd = [sys.executable, "-m", "sahrat.cli", "serve", "--host", "127.0.0.1"]
        cmd += ["--port", str(self.port), *serve_args]
        with open(self.folder / "server.log", "wb") as log:
            self.proc = subprocess.Popen(
                cmd, env=base, cwd=src.parent, stdout=log, stderr=subprocess.STDOUT
            )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the server did not become ready")

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    def wait_idle(self) -> None:
        """Until the process used under 20 ms of CPU in half a second (bounded)."""
        deadline = time.monotonic() + IDLE_LIMIT_SECONDS
        last = self.cpu()
        while time.monotonic() < deadline:
            time.sleep(0.5)
            now = self.cpu()
            if now - last < 0.02:
                return
            last = now

    def rss_kib(self) -> int:
        """The server process's resident memory (``VmRSS`` of ``/proc/PID/status``), KiB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS: the server exited")

    def kill(self) -> None:
        """SIGKILL: a crash, with no shutdown at all (the folder and its log stay)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def log_tail(self) -> str:
        return (self.folder / "server.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def run_alternating(
    runs: int, codes: list[tuple[str, Path]], names: list[str], one: Any
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``one(src, name)`` for every run, code (before/after alternate within a run) and
    scenario name; each result is printed to stderr as it comes, and all are returned
    by (code, name). A SIGTERM unwinds like Ctrl-C, so that servers and folders go too."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in range(runs):
        for code, src in codes:
            for name in names:
                out = one(src, name)
                results.setdefault((code, name), []).append(out)
                print(
                    f"run {run + 1}/{runs} {code}, {name}: {json.dumps(out)}",
                    file=sys.stderr,
                    flush=True,
                )
    return results
