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


def _finished_match(seed: str) -> dict[str, object]:
    from sahrat.rules import conquian
    from sahrat.rules.errors import RuleError
    from sahrat.rules.record import record_of
    from sahrat.simulate import bot_for

    bot = bot_for("conquian")
    state = state0 = conquian.new_game(seed=seed)
    actions = []
    while not state.over:
        action = bot(conquian.view(state, state.turn))
        try:
            state, _ = conquian.apply(state, action)
        except RuleError:
            action = conquian.timeout_action(state)
            state, _ = conquian.apply(state, action)
        actions.append(action)
    return record_of("conquian", state0, actions).to_json()


def test_verify_a_finished_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    record = _finished_match("cli-verify")
    path = tmp_path / "match.json"
    path.write_text(json.dumps({"id": 1, "record": record}))  # as GET /api/matches/1 returns it
    salt = hashlib.sha256(b"cli-verify/salt/1").hexdigest()
    seed = hashlib.sha256(b"cli-verify/round/1").hexdigest()
    seen = hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest()
    assert main(["verify", str(path), "--commitment", f"1={seen}"]) == 0
    out = capsys.readouterr().out
    assert f"round 1: ok commitment {seen}" in out
    assert out.strip().endswith("verified")

    assert main(["verify", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    assert report["rounds"][0]["round_seed"] == seed


def test_verify_fails_on_a_tampered_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _finished_match("cli-tamper")
    record["seed"] = "cli-tampered"
    path = tmp_path / "match.json"
    path.write_text(json.dumps(record))
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out
    assert "mismatch: round " in out and " is refused (" in out
    assert out.strip().endswith("NOT verified")

    other = tmp_path / "other.json"
    other.write_text(json.dumps(_finished_match("cli-other")))
    assert main(["verify", str(other), "--match-commitment", "00" * 32]) == 1
    assert "match commitment mismatch" in capsys.readouterr().out


def test_verify_of_a_file_that_is_not_a_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nonsense.json"
    path.write_text("{not json")
    assert main(["verify", str(path)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main(["verify"]) == 2


def test_verify_one_round(capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    seed = hashlib.sha256(b"x/round/1").hexdigest()
    salt = hashlib.sha256(b"x/salt/1").hexdigest()
    commitment = hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest()
    base = ["verify", "--game", "konkan", "--round-seed", seed, "--salt", salt]
    assert main([*base, "--commitment", commitment, "--dealer", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["deck"]) == 106
    opener = report["hands"]["1"]
    assert opener == report["deck"][:15]
    hand = ["--hand", "1=" + " ".join(opener)]
    assert main([*base, "--commitment", commitment, "--dealer", "0", *hand]) == 0
    capsys.readouterr()
    wrong = ["--hand", "2=" + " ".join(opener[:14])]  # seat 2 is dealt other cards
    assert main([*base, "--commitment", commitment, "--dealer", "0", *wrong]) == 1
    assert "mismatch: deck mismatch: the seed deals seat 2" in capsys.readouterr().out
    capsys.readouterr()
    other = salt[:-1] + ("1" if salt[-1] == "0" else "0")
    bad_salt = ["verify", "--round-seed", seed, "--salt", other, "--commitment", commitment]
    assert main(bad_salt) == 1
    assert "mismatch: commitment mismatch" in capsys.readouterr().out
