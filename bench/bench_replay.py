"""What a replay costs against the length of the match (``GET /api/matches/{id}/replay``).

A long Konkan match is what a hostile table makes: two seats that only draw and
discard (the turn timer's move), ``max_reshuffles`` 10, so that every round runs
through its stock eleven times. Each length is measured in a fresh process (peak
memory is the process's): the CPU time to the first page (the whole match replayed
once, then one page), the CPU time to read every page in order, and the peak resident
memory. CPU time, not wall time: on a shared machine it is what the server pays.

    .venv/bin/python bench/bench_replay.py                        # 1k to 66k actions
    .venv/bin/python bench/bench_replay.py --before /tmp/old/src  # and another checkout's

``--before`` runs the same measure with another checkout's ``src`` (an older one
that answered the whole replay in one response: its single response is both times).
Each checkout plays its own match, so a length its engine no longer allows comes out
shorter (the "actions" column): the engine now ends every round and every match.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

LENGTHS = (1_000, 5_000, 20_000, 40_000, 66_000)


def long_record(actions: int) -> dict[str, object]:
    """A 2-seat Konkan match of ``actions`` timer moves, or fewer if it ends first: each
    checkout makes its own (its engine bounds a match's length, or not)."""
    from dataclasses import fields

    from sahrat.rules import konkan
    from sahrat.rules.options import KonkanOptions
    from sahrat.rules.record import record_of

    values = {"players": 2, "rounds": 20, "max_reshuffles": 10}
    if "max_extra_rounds" in {f.name for f in fields(KonkanOptions)}:
        values["max_extra_rounds"] = 5  # the longest match the engine allows
    first = state = konkan.new_game(KonkanOptions.for_game("konkan", values), "b" * 64)
    moves = []
    while len(moves) < actions and not state.over:
        move = konkan.timeout_action(state)
        state, _ = konkan.apply(state, move)
        moves.append(move)
    return record_of("konkan", first, moves, ["a", "b"]).to_json()


def measure(length: int) -> dict[str, float]:
    """Run in a fresh process: replay a match of ``length`` actions as the route does."""
    try:  # the replay route's module: api/matches.py, once api/routes.py
        from sahrat.server.api import matches as routes
    except ImportError:
        from sahrat.server.api import routes  # type: ignore[no-redef]

    record = json.loads(json.dumps(long_record(length)))  # as read from the database
    actions = len(record["actions"])
    began = time.process_time()
    size = 0
    if not hasattr(routes, "Replayer"):  # the old route: every step in one response
        size = len(routes.ReplayOut(steps=routes.replay_steps(record)).model_dump_json())
        first = every = time.process_time() - began
    else:
        from sahrat.rules.record import GameRecord

        replayer = routes.Replayer(GameRecord.from_json(record))
        start: int | None = 0
        first = 0.0
        while start is not None:
            steps = routes.replay_page(replayer, start, routes.REPLAY_PAGE_MAX)
            end = start + len(steps)
            page = routes.ReplayOut.model_validate(
                {"from": start, "total": replayer.steps, "next": None, "steps": steps}
            )
            size += len(page.model_dump_json(by_alias=True))
            first = first or time.process_time() - began
            start = end if end < replayer.steps else None
        every = time.process_time() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "actions": actions,
        "first_page_s": first,
        "all_pages_s": every,
        "peak_mb": peak,
        "bytes": size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    parser.add_argument("--before", help="the src folder of the code to compare with")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    src = str(Path(__file__).resolve().parent.parent / "src")
    codes = [("before", args.before), ("after", src)] if args.before else [("now", src)]
    print(
        "| actions asked | code | actions | first page (CPU s) | every page (CPU s) "
        "| peak (MB) | bytes |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for length in map(int, args.lengths.split(",")):
        for name, code in codes:
            env = {**os.environ, "PYTHONPATH": code}
            run = [sys.executable, __file__, "--measure", str(length)]
            done = subprocess.run(run, env=env, capture_output=True, text=True)
            if done.returncode:
                print(f"| {length} | {name} | failed: {done.stderr.strip()[-200:]} |||||")
                continue
            out = json.loads(done.stdout)
            print(
                f"| {length} | {name} | {out['actions']} | {out['first_page_s']:.2f} "
                f"| {out['all_pages_s']:.2f} | {out['peak_mb']:.0f} | {out['bytes']:,} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
