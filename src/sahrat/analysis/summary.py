"""The rounds' results put together: numbered decisions, the puzzles, each seat's
figures per round (worth, result, luck) and each player's accuracy."""

from __future__ import annotations

from typing import Any

from sahrat.analysis.lines import INACCURACY, THRESHOLDS

FORMAT = 1  # of the analysis (docs/analysis.md, "The format")
PUZZLES_PER_PLAYER = 5


def round_points(scores: list[int], seat: int) -> float:
    """A round's result on the decisions' scale: the others' average less one's own."""
    others = [score for other, score in enumerate(scores) if other != seat]
    return sum(others) / len(others) - scores[seat]


def summarise(plan: Any, rounds: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    decisions: list[dict[str, Any]] = []
    out_rounds: list[dict[str, Any]] = []
    players = rounds[0]["players"] if rounds else len(plan.seats)
    for entry in rounds:
        for decision in entry["decisions"]:
            decision["id"] = len(decisions)
            decisions.append(decision)
        seats = []
        for seat in range(players):
            mine = [d for d in entry["decisions"] if d["seat"] == seat]
            result = round_points(entry["scores"], seat)
            lost = sum(d["lost"] for d in mine)
            worth = mine[0]["best_value"] if mine else None
            seats.append(
                {
                    "seat": seat,
                    "worth": worth,
                    "result": round(result, 1),
                    "lost": round(lost, 1),
                    "luck": None if worth is None else round(result - worth + lost, 1),
                    "curve": [[d["step"], d["value"]] for d in mine],
                }
            )
        out_rounds.append(
            {
                "round": entry["round"],
                "first_step": entry["first_step"],
                "last_step": entry["last_step"],
                "scores": entry["scores"],
                "seats": seats,
                "facts": entry["facts"],
            }
        )
    for seat in range(players):
        offered = sorted(
            (d for d in decisions if d["seat"] == seat and "grid" in d), key=lambda d: -d["lost"]
        )
        for decision in offered[:PUZZLES_PER_PLAYER]:
            decision["puzzle"] = True
        for decision in offered[PUZZLES_PER_PLAYER:]:
            del decision["grid"]
    summary_players = []
    count = max(1, len(rounds))
    for seat in range(players):
        mine = [d for d in decisions if d["seat"] == seat]
        lost = sum(d["lost"] for d in mine)
        good = sum(1 for d in mine if d["lost"] < INACCURACY)
        summary_players.append(
            {
                "seat": seat,
                "name": plan.seats[seat] if seat < len(plan.seats) else f"seat {seat}",
                "decisions": len(mine),
                "accuracy": round(100.0 * good / len(mine), 1) if mine else None,
                "lost": round(lost, 1),
                "lost_per_round": round(lost / count, 1),
                "inaccuracies": sum(1 for d in mine if d["tag"] == "inaccuracy"),
                "mistakes": sum(1 for d in mine if d["tag"] == "mistake"),
                "blunders": sum(1 for d in mine if d["tag"] == "blunder"),
            }
        )
    return {
        "format": FORMAT,
        "game": plan.record.get("game", "konkan"),
        "seats": list(plan.seats),
        "samples": plan.jobs[0].samples if plan.jobs else 0,
        "thresholds": dict(THRESHOLDS),
        "seconds": round(seconds, 1),
        "players": summary_players,
        "rounds": out_rounds,
        "decisions": decisions,
    }
