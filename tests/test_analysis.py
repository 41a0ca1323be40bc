"""Post-match analysis on stacked deals whose better move is known (docs/analysis.md).

Each match is one round of two seats: the deal and the first moves are written here,
then two simple players finish the round. What the rules make of the moves written
here (RULES.md §1.5, §1.6, §1.8) decides the expected verdict, not the analysis.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sahrat.analysis import NotAnalysable, analyse_record
from sahrat.bots.levels import bot_for
from sahrat.cli import main as cli_main
from sahrat.rules import konkan
from sahrat.rules.record import GameRecord, engine_for, start


def finished(
    hands: dict[str, list[str]], moves: list[dict[str, Any]], stock: list[str] | None = None
) -> dict[str, Any]:
    """A one-round, two-seat record: seat 1 opens (seat 0 deals), ``moves`` are played,
    then simple players finish the round."""
    record: dict[str, Any] = {
        "format": 1,
        "game": "konkan",
        "options": {"players": 2, "rounds": 1},
        "seats": ["Noura", "Faisal"],
        "first_dealer": 0,
        "decks": [{"hands": hands, **({"stock": stock} if stock else {})}],
        "actions": list(moves),
    }
    parsed = GameRecord.from_json(record)
    engine = engine_for("konkan")
    state = start(parsed)
    for raw in moves:
        state, _ = engine.apply(state, engine.action_from_json(raw))
    bots = [bot_for("konkan", "simple", seed=f"finish-{seat}") for seat in range(2)]
    while not state.over:
        seat = konkan.to_act(state)
        assert seat is not None
        action = bots[seat](konkan.view(state, seat))
        state, _ = konkan.apply(state, action)
        record["actions"].append(konkan.action_to_json(action))
    return record


def decision(analysis: dict[str, Any], seat: int, kind: str, turn: int) -> dict[str, Any]:
    found = [
        d
        for d in analysis["decisions"]
        if d["seat"] == seat and d["kind"] == kind and d["turn"] == turn
    ]
    assert len(found) == 1, [(d["seat"], d["kind"], d["turn"]) for d in analysis["decisions"]]
    return found[0]


RUNS_13 = [["4S", "5S", "6S", "7S"], ["4H", "5H", "6H"], ["4D", "5D", "6D"], ["4C", "5C", "6C"]]
THIRTEEN = [card for run in RUNS_13 for card in run]


def test_a_missed_opening_is_a_mistake_and_opening_the_better_move() -> None:
    # Seat 1 opens with four runs (13 cards, 66 ≥ 51) and keeps one card: every 3 or 8
    # of spades and 3 or 7 of the other suits now lays off, so it can go out on any turn
    # (§1.5, §1.6). Seat 0 holds K K K and Q Q Q (60 ≥ 51) and keeps them back: if seat 1
    # goes out first, seat 0 pays 100 (§1.8) instead of the sum of its hand.
    hands = {
        "1": [*THIRTEEN, "TC", "2D"],
        "0": ["KS", "KD", "KC", "QS", "QD", "QC", "2C", "9C", "JD", "8D", "TS", "AS", "JH", "9S"],
    }
    moves = [
        {"seat": 1, "type": "lay_down", "melds": RUNS_13},
        {"seat": 1, "type": "discard", "card": "2D"},
        {"seat": 0, "type": "draw"},
        {"seat": 0, "type": "discard", "card": "2C"},
    ]
    analysis = analyse_record(finished(hands, moves))
    missed = decision(analysis, 0, "play", 1)
    assert missed["played"] == {"move": "wait", "card": "2C"}
    assert missed["best"]["move"] == "open", missed
    assert missed["tag"] in ("mistake", "blunder"), missed
    assert any(fact["kind"] == "could_open" and fact["value"] >= 60 for fact in missed["facts"])


def test_a_hand_in_reach_is_a_blunder_when_the_seat_opens_instead() -> None:
    # Seat 1 holds 14 cards in melds and one more: laying all at once is a Hand (−60,
    # the other seat's score doubled, §1.6, §1.8). It opens with two of its three melds
    # instead and keeps 7 7 7 back.
    run = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S"]
    kings = ["KH", "KD", "KC"]
    sevens = ["7H", "7D", "7C"]
    hands = {
        "1": [*run, *kings, *sevens, "5D"],
        "0": ["AS", "AH", "3C", "4D", "6C", "8D", "TS", "JC", "QD", "2D", "9D", "JS", "5C", "6H"],
    }
    moves = [
        {"seat": 1, "type": "lay_down", "melds": [run, kings]},
        {"seat": 1, "type": "discard", "card": "5D"},
    ]
    analysis = analyse_record(finished(hands, moves))
    opened = decision(analysis, 1, "play", 1)
    assert opened["played"] == {"move": "open", "card": "5D"}
    assert opened["best"]["move"] == "hand" and opened["best"]["card"] == "5D", opened
    assert opened["tag"] == "blunder", opened
    assert any(fact["kind"] == "hand_in_reach" for fact in opened["facts"])


def test_a_konkan_in_reach_is_named_and_laying_it_is_the_better_move() -> None:
    # A 10-card run and a 4-card set and one card more: a Konkan (§1.7), which scores as a
    # Hand (§1.8). Seat 1 lays the run alone (64 ≥ 51) and keeps the kings.
    run = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS"]
    kings = ["KS", "KH", "KD", "KC"]
    hands = {
        "1": [*run, *kings, "5D"],
        "0": ["AS", "AH", "3C", "4D", "6C", "8D", "TH", "JC", "QD", "2D", "9D", "JH", "5C", "6H"],
    }
    moves = [
        {"seat": 1, "type": "lay_down", "melds": [run]},
        {"seat": 1, "type": "discard", "card": "5D"},
    ]
    opened = decision(analyse_record(finished(hands, moves)), 1, "play", 1)
    assert opened["played"] == {"move": "open", "card": "5D"}
    assert opened["best"]["move"] == "hand" and opened["best"]["card"] == "5D", opened
    assert opened["tag"] == "blunder", opened
    reach = [fact for fact in opened["facts"] if fact["kind"] == "konkan_in_reach"]
    assert reach and sorted(map(len, reach[0]["melds"])) == [4, 10]


# Seat 1 (to open, 15 cards) holds no opening; seat 0 holds K K and Q Q Q.
FEED_HANDS = {
    "1": [
        "KC",
        "2D",
        "4D",
        "6D",
        "8D",
        "TD",
        "3C",
        "5C",
        "7C",
        "9C",
        "JC",
        "2H",
        "6H",
        "TH",
        "AS",
    ],
    "0": ["KS", "KD", "QS", "QD", "QC", "2S", "4S", "6S", "8S", "3H", "5H", "7H", "9H", "JH"],
}


def test_a_discard_that_opens_the_next_seat_is_a_mistake_with_another_discard_better() -> None:
    # Seat 0 holds K K and Q Q Q: the third king opens it (60 ≥ 51). Seat 1, which cannot
    # open, throws that king; seat 0 takes it and opens with it (§1.3, §1.5).
    moves = [
        {"seat": 1, "type": "discard", "card": "KC"},
        {"seat": 0, "type": "take_discard", "melds": [["KS", "KD", "KC"], ["QS", "QD", "QC"]]},
    ]
    analysis = analyse_record(finished(FEED_HANDS, moves))
    fed = decision(analysis, 1, "play", 1)
    assert fed["played"] == {"move": "discard", "card": "KC"}
    assert fed["tag"] in ("mistake", "blunder"), fed
    assert fed["best"]["card"] != "KC"
    assert {"kind": "fed_opening", "card": "KC", "next": 0, "took": True} in fed["facts"]


def test_each_seat_sees_only_its_own_cards() -> None:
    # The values of seat 0's decisions do not change when seat 1's hand is dealt otherwise
    # (the unseen cards are sampled; their true places are never read for the values).
    base = {
        "0": ["KS", "KD", "KC", "QS", "QD", "QC", "2C", "9C", "JD", "8D", "TS", "AS", "JH", "9S"],
    }
    one = {**base, "1": [*THIRTEEN, "TC", "2D"]}
    moves = [
        {"seat": 1, "type": "lay_down", "melds": RUNS_13},
        {"seat": 1, "type": "discard", "card": "2D"},
        {"seat": 0, "type": "draw"},
        {"seat": 0, "type": "discard", "card": "2C"},
    ]
    # other cards in seat 1's hand (and so in the stock, under the card seat 0 draws)
    two = {**base, "1": [*THIRTEEN, "3H", "2D"]}
    first = decision(analyse_record(finished(one, moves)), 0, "play", 1)
    second = decision(analyse_record(finished(two, moves)), 0, "play", 1)
    assert first["candidates"] == second["candidates"]


def test_conquian_is_refused_by_name() -> None:
    record = {"format": 1, "game": "conquian", "seed": "x", "actions": []}
    with pytest.raises(NotAnalysable, match="Conquian"):
        analyse_record(record)


def test_the_command_line_prints_each_player(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moves = [{"seat": 1, "type": "discard", "card": "KC"}]
    path = tmp_path / "match.json"
    path.write_text(json.dumps({"record": finished(FEED_HANDS, moves)}))
    assert cli_main(["analyse", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in out["players"]] == ["Noura", "Faisal"]
    assert cli_main(["analyse", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Noura" in text and "accuracy" in text
