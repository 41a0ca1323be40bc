"""``sahrat analyse match.json``: the analysis of a finished match from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

TOP = 5  # worst decisions printed per player


def add_command(commands: Any) -> None:
    ana = commands.add_parser(
        "analyse",
        help="analyse a finished Konkan match decision by decision (docs/analysis.md)",
        description="analyse MATCH.json: a game record, or a match saved from "
        "GET /api/matches/{id}.",
    )
    ana.add_argument("file")
    ana.add_argument("--json", action="store_true", help="print the whole analysis as JSON")
    ana.add_argument("--samples", type=int, default=None, help="deals per decision (default 32)")
    ana.set_defaults(run=run)


def _describe(move: dict[str, Any]) -> str:
    card = move.get("card")
    return f"{move['move']} {card}" if card else str(move["move"])


def run(args: argparse.Namespace) -> int:
    """0 when analysed, 2 when the file is not a finished match this version analyses."""
    # here, not at the top: every other command of ``sahrat`` starts without the bots
    # (this module stands outside the package, whose import brings them)
    from sahrat.analysis.report import NotAnalysable, analyse_record

    try:
        with open(args.file, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    if not isinstance(data, dict):
        print(f"cannot read {args.file}: not a JSON object", file=sys.stderr)
        return 2
    progress = None
    if not args.json and sys.stderr.isatty():

        def progress(done: int, total: int) -> None:
            print(f"\rround {done}/{total}", end="", file=sys.stderr, flush=True)

    try:
        kwargs = {} if args.samples is None else {"samples": max(1, args.samples)}
        analysis = analyse_record(data, progress=progress, **kwargs)
    except NotAnalysable as error:
        print(f"cannot analyse {args.file}: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(analysis, ensure_ascii=False))
        return 0
    rounds, decisions = len(analysis["rounds"]), len(analysis["decisions"])
    print(f"{rounds} rounds, {decisions} decisions, {analysis['seconds']} s")
    for player in analysis["players"]:
        print(
            f"{player['name']}: accuracy {player['accuracy']} %,"
            f" lost {player['lost_per_round']} a round"
            f" ({player['inaccuracies']} inaccuracies, {player['mistakes']} mistakes,"
            f" {player['blunders']} blunders)"
        )
        worst = sorted(
            (d for d in analysis["decisions"] if d["seat"] == player["seat"] and d["tag"]),
            key=lambda d: -d["lost"],
        )
        for decision in worst[:TOP]:
            where = f"round {decision['round']} turn {decision['turn']}"
            better = f"better {_describe(decision['best'])}"
            verdict = f"({decision['tag']}, {decision['lost']} points)"
            print(f"  {where}: {_describe(decision['played'])}, {better} {verdict}")
    return 0
