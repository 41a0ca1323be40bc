"""``sahrat arena``: its report over a few seeded matches, its intervals and its CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sahrat import arena
from sahrat.bots import levels
from sahrat.cli import main


def test_wilson_interval() -> None:
    assert arena.wilson(0, 0) == (0.0, 1.0)
    low, high = arena.wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = arena.wilson(0, 20)
    assert low == 0.0 and high == pytest.approx(0.1611, abs=1e-4)
    assert arena.wilson(20, 20)[1] == 1.0


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert arena.percentile(values, 0.5) == 50.0
    assert arena.percentile(values, 0.99) == 99.0
    assert arena.percentile([], 0.99) == 0.0


def test_seats_rotate_every_match() -> None:
    seats = ["expert", "simple", "strong", "simple"]
    assert arena.seating(seats, 0) == seats
    assert arena.seating(seats, 1) == ["simple", "expert", "simple", "strong"]
    assert [arena.seating(seats, i).index("expert") for i in range(4)] == [0, 1, 2, 3]


def player(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in report["players"] if p["name"] == name)


def test_conquian_report_adds_up() -> None:
    report = arena.run_arena("conquian", ["strong", "simple"], 4, "t").to_json()
    strong, simple = player(report, "strong"), player(report, "simple")
    assert strong["matches"] == simple["matches"] == 4
    assert strong["matches_won"] + simple["matches_won"] <= 4
    assert strong["deals"] == simple["deals"] > 0
    assert strong["deals_drawn"] == simple["deals_drawn"]
    assert strong["deals_won"] + simple["deals_won"] == strong["deals_decided"]
    low, high = strong["match_win_ci95"]
    assert low <= strong["match_win_rate"] <= high
    assert strong["illegal_proposals"] == simple["illegal_proposals"] == 0
    assert strong["decisions"] > 0 and strong["decision_ms_p50"] <= strong["decision_ms_p99"]
    assert strong["decision_ms_p99"] <= strong["decision_ms_max"]


def test_konkan_report_counts_seats_of_one_level_together() -> None:
    report = arena.run_arena("konkan", ["strong", "simple", "simple"], 2, "t").to_json()
    strong, simple = player(report, "strong"), player(report, "simple")
    assert (strong["seats"], simple["seats"]) == (1, 2)
    assert simple["match_chance"] == pytest.approx(2 / 3, abs=1e-3)
    assert strong["matches_won"] + simple["matches_won"] == 2  # a Konkan match has a winner
    assert strong["rounds"] == simple["rounds"] >= 10
    decided = strong["rounds_won"] + simple["rounds_won"]
    assert decided == strong["rounds_decided"] == strong["rounds"] - strong["rounds_drawn"]
    assert strong["committed_konkans_not_laid"] == 0


def test_a_refused_or_crashing_move_is_an_illegal_proposal(monkeypatch: pytest.MonkeyPatch) -> None:
    from sahrat.rules import conquian

    calls = {"n": 0}

    def clumsy(game: str, seed: str) -> levels.Player:
        def act(view: dict[str, Any]) -> Any:
            calls["n"] += 1
            if calls["n"] % 2:
                raise RuntimeError("confused")
            return conquian.Discard(view["viewer"], conquian.DECK[0])  # rarely legal

        return act

    monkeypatch.setitem(levels.LEVELS, "clumsy", clumsy)
    report = arena.run_arena("conquian", ["clumsy", "simple"], 1, "t").to_json()
    assert player(report, "clumsy")["illegal_proposals"] >= calls["n"] // 2 > 0
    assert player(report, "simple")["illegal_proposals"] == 0


def test_workers_give_the_same_report() -> None:
    one = arena.run_arena("conquian", ["simple", "strong"], 3, "w").to_json()
    two = arena.run_arena("conquian", ["simple", "strong"], 3, "w", workers=2).to_json()
    for report in (one, two):
        for stats in report["players"]:
            for key in list(stats):
                if key.startswith(("decision_ms", "decision_cpu_ms")):
                    del stats[key]
        del report["seconds"]
    assert one == two


def test_cli_prints_the_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["arena", "--game", "conquian", "--seats", "expert,simple", "--matches", "1"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["matches"] == 1 and {p["name"] for p in report["players"]} == {
        "expert",
        "simple",
    }
    assert main(["arena", "--game", "conquian", "--seats", "simple,simple,simple"]) == 2
    assert main(["arena", "--game", "konkan", "--seats", "simple,grandmaster"]) == 2


def test_a_committed_konkan_left_in_hand_is_counted() -> None:
    from sahrat.bots.simple_konkan import act as simple
    from sahrat.rules import konkan
    from sahrat.rules.cards import parse_cards
    from sahrat.rules.options import KonkanOptions

    # seat 0 opens the last (only) round holding a Konkan that needs a joker as a stand-in
    hand = parse_cards("3C JK 7C 6C 4C' 2C 5C' 8C' QD AC' JC 9H TC 9C' JK'")
    order = konkan.stacked_deck({0: hand}, players=2, dealer=1)
    options = KonkanOptions.for_game("konkan", {"players": 2, "rounds": 1})

    def stubborn(view: dict[str, Any]) -> konkan.Action:
        if not view["committed"][0]:
            return konkan.Commit(0)
        return konkan.Discard(0, parse_cards("QD")[0])  # never lays the Konkan down

    def laying(view: dict[str, Any]) -> konkan.Action:
        return (
            konkan.Commit(0)
            if not view["committed"][0]
            else levels.bot_for("konkan", "expert")(view)
        )

    for first, missed in ((stubborn, 1), (laying, 0)):
        state = konkan.new_game(options, "committed", decks=[order], first_dealer=1)
        played = arena.play_out("konkan", state, [first, simple])
        assert played.konkans_missed[1] == 0
        assert (played.konkans_missed[0] >= 1) == (missed == 1)  # one per turn it is held
        assert (played.state.match_winner == 0) == (missed == 0)


def _without_times(report: dict[str, Any]) -> dict[str, Any]:
    report = dict(report)
    del report["seconds"]
    report["players"] = [
        {k: v for k, v in stats.items() if not k.startswith(("decision_ms", "decision_cpu_ms"))}
        for stats in report["players"]
    ]
    return report


def test_a_line_played_in_parts_is_the_line() -> None:
    # matches 0..2 in one run, and as match 0 then matches 1..2 (``first``): the same matches
    seats = ["strong", "simple", "simple"]
    whole = arena.run_arena("konkan", seats, 3, "p")
    parts: list[arena.MatchResult] = []
    arena.run_arena("konkan", seats, 1, "p", on_result=parts.append)
    arena.run_arena("konkan", seats, 2, "p", on_result=parts.append, first=1)
    assert [result.names for result in parts] == [arena.seating(seats, i) for i in range(3)]
    added = arena.ArenaReport(
        "konkan",
        seats,
        3,
        "p",
        0.0,
        {name: arena.PlayerStats(name, seats.count(name), 3) for name in ("strong", "simple")},
    )
    for result in parts:
        added.add(result)
    assert _without_times(added.to_json()) == _without_times(whole.to_json())
