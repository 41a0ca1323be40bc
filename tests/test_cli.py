"""The ``sahrat`` command line: replay a record, simulate matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sahrat.cli import main

SCENARIOS = Path(__file__).parent / "scenarios" / "konkan"


def test_replay_reports_the_first_illegal_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "game": "konkan",
        "options": {"players": 2},
        "seed": "cli",
        "first_dealer": 1,
        "actions": [
            {"seat": 0, "type": "draw"},  # the opener has 15 cards and does not draw
        ],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False
    assert out["error"]["index"] == 0
    assert out["error"]["code"] == "wrong_phase"
    assert out["applied"] == 0
    assert out["state"]["hand_counts"] == [15, 14]


def test_replay_prints_the_final_state_and_score_sheet(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", str(SCENARIOS / "opening_64_accepted.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True
    assert out["applied"] == 2
    assert out["state"]["discard_top"] == "5D"
    assert len(out["state"]["hands"][0]) == 7
    assert out["score_sheet"]["rounds"] == []


def test_replay_of_a_file_that_is_not_a_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nonsense.json"
    path.write_text("{not json")
    assert main(["replay", str(path), "--json"]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_simulate_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "simulate",
                "--game",
                "konkan",
                "--players",
                "4",
                "--matches",
                "3",
                "--seed",
                "1",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["matches"] == 3
    assert out["invariant_violations"] == 0
    assert out["rounds"] >= 15
    for key in ("hands", "konkans", "void_rounds"):
        assert isinstance(out[key], int)


def test_simulate_conquian_counts_deals_draws_and_forces(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--game", "conquian", "--matches", "10", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches"] == 10
    assert out["invariant_violations"] == 0
    assert out["deals"] == out["won_deals"] + out["drawn_deals"]
    assert out["won_deals"] >= 30  # a match needs 3 won deals
    assert isinstance(out["forced_takes"], int)
