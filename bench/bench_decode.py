"""Decoding and checking one client message: the old path against the socket's decoder.

    .venv/bin/python bench/bench_decode.py                  # 100,000 messages, 5 runs
    .venv/bin/python bench/bench_decode.py --messages 20000 --runs 3

The old path is what ``socket/dispatch.py`` did before ``socket/decode.py``:
``orjson.loads`` of the text, then the pydantic model's ``model_validate``. The new
one is ``decode.decode``: one msgspec decode into the tagged union of structs, plus
its check that orjson reads the action the same way. Each decodes the same typical
command texts (a discard, a draw, a lay-down with a lay-off, each with its own cid)
``--messages`` times per run, the two paths in turn; printed: the median over
``--runs`` runs of the time per message, with the fastest and slowest run, and the
ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import orjson

from sahrat.server.socket import decode
from sahrat.server.table.protocol import Command

TEXTS = [
    orjson.dumps({"type": "command", "cid": f"c-{n}", "seq": 40 + n, "action": action}).decode()
    for n, action in enumerate(
        [
            {"type": "discard", "card": "7H"},
            {"type": "draw"},
            {
                "type": "lay_down",
                "melds": [["7H", "8H", "9H"], ["QS", "QD", "QC"]],
                "lay_offs": [{"meld": 3, "cards": ["2C"]}],
            },
        ]
    )
]


def old(text: str) -> object:
    return Command.model_validate(orjson.loads(text))


def new(text: str) -> object:
    return decode.decode(text)


def run(path: Callable[[str], object], messages: int) -> float:
    """Seconds per message over one run of ``messages`` decodes."""
    texts = (TEXTS * (messages // len(TEXTS) + 1))[:messages]
    started = time.perf_counter()
    for text in texts:
        path(text)
    return (time.perf_counter() - started) / messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for text in TEXTS:  # both read the same command
        before, now = old(text), new(text)
        assert isinstance(now, decode.Command) and isinstance(before, Command)
        assert (now.cid, now.seq, now.action) == (before.cid, before.seq, before.action)
    paths = {"orjson + pydantic": old, "msgspec (decode.py)": new}
    runs: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(args.runs):  # the two in turn, so a busy moment slows both alike
        for name, path in paths.items():
            runs[name].append(run(path, args.messages) * 1e6)
    medians = {name: statistics.median(times) for name, times in runs.items()}
    for name, times in runs.items():
        print(
            f"{name:20} {medians[name]:6.2f} µs/message "
            f"[{min(times):.2f}–{max(times):.2f}] over {args.runs} runs of {args.messages}"
        )
    before, now = medians.values()
    print(
        f"the decoder takes {now / before:.0%} of the old path's time ({before / now:.1f}× faster)"
    )


if __name__ == "__main__":
    main()
