"""``sahrat simulate`` shows a progress bar on stderr when stderr is a terminal, and not
otherwise or with ``--no-progress``; stdout holds the summary alone either way."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from sahrat.cli import build_parser, main

# one short Conquian match: the summary comes back in well under a second
RUN = ["simulate", "--game", "conquian", "--matches", "2", "--seed", "progress"]
BAR = "conquian matches"  # tqdm's description of the bar


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_progress_options_parse() -> None:
    parser = build_parser()
    assert parser.parse_args(RUN).progress is None  # decided by stderr
    assert parser.parse_args([*RUN, "--progress"]).progress is True
    assert parser.parse_args([*RUN, "--no-progress"]).progress is False
    with pytest.raises(SystemExit) as exited:
        parser.parse_args([*RUN, "--progress=yes"])
    assert exited.value.code == 2


def test_no_bar_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*RUN, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    summary = json.loads(captured.out)  # stdout is the JSON summary and nothing else
    assert summary["matches"] == 2


def test_a_bar_by_default_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([*RUN, "--json"]) == 0
    assert BAR in terminal.getvalue() and "2/2" in terminal.getvalue()
    assert json.loads(capsys.readouterr().out)["matches"] == 2


def test_no_progress_turns_the_bar_off_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([*RUN, "--no-progress"]) == 0
    assert terminal.getvalue() == ""
    assert "matches: 2" in capsys.readouterr().out


def test_progress_forces_the_bar_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*RUN, "--json", "--progress"]) == 0
    captured = capsys.readouterr()
    assert BAR in captured.err
    assert json.loads(captured.out)["matches"] == 2


def test_the_command_on_a_real_terminal(tmp_path: Path) -> None:
    """The installed command, its stderr a pseudo-terminal: the bar is drawn there."""
    script = Path(sys.executable).parent / "sahrat"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "sahrat.cli"]
    controller, terminal = pty.openpty()
    # 24 rows of 80 columns, as a terminal window has (a new pty has 0 columns)
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        result = subprocess.run(
            [*command, *RUN, "--json"],
            stdout=subprocess.PIPE,
            stderr=terminal,
            stdin=subprocess.DEVNULL,
            check=False,
            cwd=tmp_path,
            timeout=120,
        )
        os.close(terminal)
        terminal = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if terminal >= 0:
            os.close(terminal)
        os.close(controller)
    assert result.returncode == 0
    assert json.loads(result.stdout)["matches"] == 2
    assert BAR.encode() in drawn
