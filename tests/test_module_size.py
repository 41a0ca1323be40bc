"""The server stays in small modules: none passes 450 lines (a module that grows past it
holds two concerns; split it by responsibility, as ``server/table/`` is split)."""

from __future__ import annotations

from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "src" / "sahrat" / "server"
MOST_LINES = 450


def test_no_server_module_passes_450_lines() -> None:
    long = {
        str(path.relative_to(SERVER)): lines
        for path in sorted(SERVER.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not long, f"server modules over {MOST_LINES} lines: {long}"
