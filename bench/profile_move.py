"""Where a move's CPU goes inside the server, without the database or the sockets.

Not a test. Plays ``--moves`` moves through ``Table.command`` — the path a player's
command takes after the socket's text is parsed: the checks, the engine, the log
append (here a writer that completes at once: the database's cost is measured by
``bench_server.py``), the deadline, and one update text per seat — at ``--tables``
two-seat Conquian (or Konkan) tables with a spectator each, under cProfile, and prints
the move's mean CPU cost and the top entries.

    .venv/bin/python bench/profile_move.py
    .venv/bin/python bench/profile_move.py --game konkan --players 4 --top 30
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import time
from types import SimpleNamespace
from typing import Any

import orjson

from sahrat.bots.levels import bot_for
from sahrat.rules.record import options_for
from sahrat.server.table.connection import Connection
from sahrat.server.table.protocol import Command
from sahrat.server.table.services import ServerDefaults
from sahrat.server.table.table import Table
from sahrat.settings import Settings
from sahrat.store.log import Append


class InstantWriter:
    """A log writer whose appends are durable at once (no database)."""

    def __init__(self) -> None:
        self.entries = 0

    async def append(self, item: Append) -> None:
        self.entries += len(item.entries)


def services() -> Any:
    settings = Settings.model_validate(
        {"SAHRAT_TURN_SECONDS_OVERRIDE": 3600, "SAHRAT_BOT_DELAY_SECONDS": 3600}
    )
    return SimpleNamespace(
        settings=settings,
        defaults=ServerDefaults(0, 0, 30, 0),
        writer=InstantWriter(),
        names={},
        suspended=set(),
        may_write=lambda table_id: True,
        background=lambda task: None,
        forget_later=lambda table_id: None,
        store_seat=None,
    )


def new_table(host: Any, table_id: int, game: str, players: int, seed: str) -> Table:
    options = {"players": players} if game != "conquian" else {}
    table = Table(
        host,
        table_id=table_id,
        game=game,
        options=options_for(game, options).to_json(),
        private=False,
        invite_code=None,
        creator_id=1,
        status="playing",
        seq=1,
        seats=list(range(1, players + 1)),
        deadline=time.time() + 3600,
    )
    start = SimpleNamespace(kind="start", seq=1, data={"seed": seed}, seat=None, client_id=None)
    table.restore([start])  # the match dealt from ``seed``, as a restart reads it back
    return table


async def play(game: str, players: int, tables: int, moves: int) -> tuple[int, float, int]:
    host = services()
    made = [new_table(host, i + 1, game, players, f"profile-{i}") for i in range(tables)]
    conns = {}
    for table in made:
        for user in [*range(1, players + 1), 1000 + table.id]:  # the seats and a spectator
            conn = Connection(user_id=user)
            table.connect(conn, None)
            conns[(table.id, user)] = conn
    bots = {(t.id, s): bot_for(game, "simple") for t in made for s in range(players)}
    played = accepted = 0
    cpu = 0.0
    sent = 0  # bytes of the texts the table's connections were given
    while played < moves:
        for table in made:
            if table.match.state.over:
                continue
            if table.pace.round_break is not None:  # everyone has read the summary
                for user in range(1, players + 1):
                    table.continue_play(conns[(table.id, user)])
            seat = table.engine.to_act(table.match.state)
            view = table.engine.view(table.match.state, seat)
            action = dict(table.engine.action_to_json(bots[(table.id, seat)](view)))
            action.pop("seat", None)
            command = Command(type="command", cid=f"c{table.seq}", seq=table.seq, action=action)
            started = time.process_time()
            before = table.seq
            await table.command(conns[(table.id, seat + 1)], command)
            cpu += time.process_time() - started
            played += 1
            accepted += table.seq > before
            for (table_id, _user), conn in conns.items():  # the sockets take their texts
                if table_id == table.id:
                    while not conn.outbox.empty():
                        text = conn.outbox.get_nowait()
                        if isinstance(text, str):
                            sent += len(text.encode())
                            orjson.loads(text) if played % 1000 == 0 else None
        if all(table.match.state.over for table in made):
            break
    for table in made:
        table.close()
    assert accepted == played, f"{played - accepted} of {played} moves refused"
    return played, cpu, sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="conquian", choices=["conquian", "konkan", "konkan71"])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--moves", type=int, default=20000)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    played, cpu, sent = asyncio.run(play(args.game, args.players, args.tables, args.moves))
    print(f"{played} moves at {args.tables} {args.game} tables of {args.players}")
    print(f"Table.command CPU per move: {cpu / max(played, 1) * 1e6:.0f} µs")
    per_move = sent / max(played, 1)
    print(f"sent per move, to all {args.players + 1} connections: {per_move:.0f} bytes")
    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(play(args.game, args.players, args.tables, args.moves))
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).sort_stats("tottime")
    stats.print_stats(args.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
