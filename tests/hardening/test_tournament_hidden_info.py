"""Hidden information never leaves the server at a tournament's tables either.

``SAHRAT_LEAK_TOURNAMENTS`` paid knock-outs (default 1; the full run is 6,
``docs/hardening.md``) are played to their end on a live server: Konkan of 8 seats
(6 people, 2 bot entrants; tables of two rounds) and, every second one, Conquian of 4
seats (3 people, 1 bot entrant; tables of two deals won). The people are driven over
their own WebSockets (the simple player); every table of every round is watched by
two spectators: one from the moment the table exists, one who comes in the middle of
the round with ``since`` (a reconnection). Meanwhile the tournament's REST routes
(``GET /api/tournaments``, ``?state=running``, ``/api/tournaments/{id}`` with and
without a token) and each table's own (as ``test_hidden_info.py`` polls them) are
fetched again and again.

Each table's match is then scanned as ``test_hidden_info.py`` scans a match (its
``scan_match``: every message of every seat and spectator against the replayed hidden
state after each step). A tournament with prizes delays its spectators
(docs/protocol.md "Delayed spectators"), so on top of that each spectator's messages
are checked against the rule: no ``update`` and no ``resume`` ever; a ``snapshot``
either has ``view``, ``deadline`` and ``round_break`` null (a round is being played)
or is at a step that ended a round (deal) or the match (the replay says which); its
``table`` says ``spectator_delay``. The tournament bodies fetched during play name no
card and no match's seed. Results go to
``test-artifacts/hardening/tournament_hidden_info.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from sahrat.rules.record import GameRecord, replay
from server.harness import (
    ALL_CARDS,
    Api,
    Message,
    ServerProcess,
    WireClient,
    _strings,
    engine_and_player,
    wire_action,
)
from server.tournament_support import (
    TOURNAMENT_ENV,
    Driver,
    detail,
    iso_in,
    make_tournament,
    register,
    wait_state,
)

from .conftest import NO_RATE_LIMITS, env_count, write_results
from .test_hidden_info import Match, Scan, _poll, scan_match, self_check

FEE = 50
LATE_AFTER_MOVES = 6  # the second spectator comes once the people made this many moves


@dataclass
class Kind:
    game: str
    seats: int
    people: int
    table_players: int  # seats at each table of the first round


KINDS = [Kind("konkan", 8, 6, 4), Kind("conquian", 4, 3, 2)]


@dataclass
class Delay:
    """What the delayed spectators were shown."""

    held_back: int = 0  # snapshots without a view while a round was played
    round_ends: int = 0  # snapshots with a view at a round's (deal's) end
    match_ends: int = 0  # ... at the match's end
    messages: int = 0
    faults: list[str] = field(default_factory=list)


@dataclass
class RecordingDriver(Driver):
    """The tournament support's driver, keeping each seat's socket (and its messages)
    for the scan: one connection per seat, played to the end of the table's match."""

    clients: dict[int, list[WireClient]] = field(default_factory=dict)  # table id -> seats

    async def _play(self, table_id: int, user: int, round_no: int = 1) -> None:
        engine, player = engine_and_player(self.game)
        client = await WireClient.connect(
            self.server, table_id, self.tokens[user], name=f"t{table_id}u{user}"
        )
        self.clients.setdefault(table_id, []).append(client)
        try:
            while True:
                await client.wait_until(
                    lambda: (
                        client.view is not None and (client.view["match_over"] or client.may_move)
                    ),
                    timeout=60,
                )
                assert client.view is not None
                if client.view["match_over"]:
                    return
                reply = await client.command(wire_action(engine, player(client.view)))
                if reply["payload"]["ok"]:
                    self.played.setdefault(table_id, []).append(user)
                else:  # a bot moved in between: only a stale seq
                    assert reply["payload"]["error"]["code"] in ("stale", "round_break"), reply
        finally:
            with contextlib.suppress(Exception):
                await client.close()


@dataclass
class Watch:
    """The spectators of each table of a tournament, and the REST bodies fetched."""

    server: ServerProcess
    api: Api
    driver: RecordingDriver
    viewer: str  # an entrant's token, for the polls that take one
    spectators: dict[int, list[WireClient]] = field(default_factory=dict)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    rest: dict[int, list[tuple[str, Any]]] = field(default_factory=dict)  # table -> bodies
    tournament_rest: list[tuple[str, Any]] = field(default_factory=list)
    stops: dict[int, asyncio.Event] = field(default_factory=dict)

    async def __call__(self, found: dict[str, Any]) -> None:
        for round_ in found["rounds"]:
            for table in round_["tables"]:
                table_id = table["table_id"]
                if table_id is None or table_id in self.spectators or table["state"] == "finished":
                    continue
                self.spectators[table_id] = []
                self.tasks.append(asyncio.create_task(self._watch(table_id)))

    async def _watch(self, table_id: int) -> None:
        """Two guests watch the table: one now, one with ``since`` mid-round; the
        table's REST is polled until its match is over."""
        first = await self._spectate(table_id, f"t{table_id}spec")
        if first is None:
            return
        match = Match(table_id, self.driver.game, {}, 1)
        match.table_id = table_id
        stop = self.stops[table_id] = asyncio.Event()
        poller = asyncio.create_task(_poll(self.api, match, self.viewer, stop))
        try:
            await _until(
                lambda: (
                    len(self.driver.played.get(table_id, [])) >= LATE_AFTER_MOVES or _over(first)
                )
            )
            if not _over(first):
                since = max(c.seq or 0 for c in self.driver.clients.get(table_id, [first]))
                await self._spectate(table_id, f"t{table_id}late", since=since)
            for client in self.spectators[table_id]:
                await client.wait_until(functools.partial(_over, client), timeout=120)
        finally:
            stop.set()
            await poller
            self.rest[table_id] = match.rest
            for client in self.spectators[table_id]:
                await client.close()

    async def _spectate(
        self, table_id: int, name: str, since: int | None = None
    ) -> WireClient | None:
        token, _user = await self.api.guest()
        try:
            client = await WireClient.connect(self.server, table_id, token, name=name, since=since)
        except AssertionError:  # closed at once: the table finished before we came
            return None
        self.spectators[table_id].append(client)
        return client

    async def poll_tournament(self, tournament_id: int, stop: asyncio.Event) -> None:
        """The tournament's routes, with the entrant's token and without, until told."""
        paths = ["/api/tournaments", "/api/tournaments?state=running"]
        paths.append(f"/api/tournaments/{tournament_id}")
        while not stop.is_set():
            for path in paths:
                for token in (None, self.viewer):
                    self.tournament_rest.append((path, await self.api.get(path, token)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)


async def _until(cond: Callable[[], bool], timeout: float = 120.0) -> None:
    """Until ``cond()`` holds, looked at every 0.05 s (a delayed spectator's socket is
    quiet while a round is played, so its messages cannot wake the wait)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.05)


def _over(client: WireClient) -> bool:
    return client.view is not None and bool(client.view["match_over"])


def round_end_seqs(record: GameRecord, start: int) -> tuple[set[int], int]:
    """The seqs of the steps that ended a round (a deal), and the match's last seq."""
    ends: set[int] = set()
    results = [0]
    steps = [start - 1]

    def on_step(state: Any, _action: Any) -> None:
        steps[0] += 1
        if len(state.results) > results[0] or state.over:
            ends.add(steps[0])
        results[0] = len(state.results)

    outcome = replay(record, on_step=on_step)
    assert outcome.ok, outcome.error
    return ends, steps[0]


def check_delayed(
    table_id: int, spectators: list[WireClient], record: GameRecord, final: int, delay: Delay
) -> None:
    """A delayed spectator is shown nothing of a round while it is played: no update,
    no resume, and a view only at a step that ended a round or the match."""
    start = final - len(record.actions)
    ends, last = round_end_seqs(record, start)
    assert last == final, (table_id, last, final)

    def fault(who: str, what: str, message: Message) -> None:
        delay.faults.append(f"table {table_id} {who}: {what}: {json.dumps(message)[:600]}")

    for client in spectators:
        for message in client.messages:
            delay.messages += 1
            kind, payload, n = message["type"], message["payload"], message["seq"]
            if kind in ("update", "resume"):
                fault(client.name, f"a {kind} to a delayed spectator", message)
            if kind == "table" and payload["spectator_delay"] is not True:
                fault(client.name, "a paid tournament's table not delayed", message)
            if kind != "snapshot":
                continue
            if payload["table"]["spectator_delay"] is not True:
                fault(client.name, "a snapshot of a table not delayed", message)
            if payload["view"] is None:
                if payload["deadline"] is not None or payload["round_break"] is not None:
                    fault(client.name, "a held-back snapshot with the round's pace", message)
                delay.held_back += n >= start
                continue
            if n not in ends:
                fault(client.name, f"a view at seq {n}, in the middle of a round", message)
            elif payload["view"]["match_over"]:
                delay.match_ends += 1
            else:
                delay.round_ends += 1


def scan_rest(bodies: list[tuple[str, Any]], seeds: set[str], scan: Scan) -> None:
    """The tournament bodies fetched during play: no card, no match's seed."""
    for path, body in bodies:
        scan.rest_bodies += 1
        cards = {s for s in _strings(body) if s in ALL_CARDS}
        if cards:
            scan.leaks.append(f"GET {path}: cards {sorted(cards)}: {json.dumps(body)[:600]}")
        text = json.dumps(body)
        if any(seed in text for seed in seeds):
            scan.leaks.append(f"GET {path}: a match's seed: {text[:600]}")


async def play_tournament(
    server: ServerProcess, api: Api, index: int, scan: Scan, delay: Delay
) -> dict[str, Any]:
    kind = KINDS[index % len(KINDS)]
    people = [await api.account("hid") for _ in range(kind.people)]
    tokens = {user["id"]: token for token, user in people}
    made = await make_tournament(
        api,
        people[0][0],
        name=f"Hidden cup {index}",
        game=kind.game,
        format="knockout",
        seats=kind.seats,
        starts_at=iso_in(3),
        fee=FEE,
    )
    tid = made["id"]
    for token, _user in people:
        await register(api, token, tid)
    driver = RecordingDriver(server, api, kind.game, tokens)
    watch = Watch(server, api, driver, people[0][0])
    await wait_state(api, tid, ("running",), timeout=60)
    stop = asyncio.Event()
    poller = asyncio.create_task(watch.poll_tournament(tid, stop))
    try:
        done = await driver.run(tid, until=("complaints", "finished"), during=watch)
    finally:
        stop.set()
        await poller
        await asyncio.gather(*watch.tasks)
    assert done["state"] in ("complaints", "finished"), done
    tables = [t for round_ in done["rounds"] for t in round_["tables"]]
    seeds: set[str] = set()
    for table in tables:
        table_id = table["table_id"]
        seats = sorted(driver.clients.get(table_id, []), key=lambda c: c.seat or 0)
        assert seats, f"table {table_id}: nobody played it"
        matches = await api.get(f"/api/tables/{table_id}/matches")
        assert len(matches) == 1, matches
        full = await api.get(f"/api/matches/{matches[0]['id']}")
        record = GameRecord.from_json(full["record"])
        if record.seats and len(record.seats) != len(full["players"]):
            scan.unreplayable_records += 1  # as test_hidden_info.py: names play no part
            record.seats = []
        seeds.add(record.seed)
        match = Match(table_id, kind.game, {"players": len(table["seats"])}, len(seats))
        match.table_id = table_id
        match.seats = seats
        spectators = watch.spectators.get(table_id, [])
        if spectators:
            match.spectator, match.ghosts = spectators[0], spectators[1:]
        match.rest = watch.rest.get(table_id, [])
        scan_match(match, record, scan)
        final = seats[0].seq
        assert final is not None
        check_delayed(table_id, spectators, record, final, delay)
        if match.spectator is not None and table is tables[-1]:
            self_check(match, record)  # the scans find what they look for
            self_check_delay(match.spectator, record, final)
    scan_rest(watch.tournament_rest, seeds, scan)
    found = await detail(api, tid)
    return {
        "tournament": tid,
        "kind": f"{kind.game}/{kind.seats} seats/{kind.people} people",
        "tables": len(tables),
        "spectators": sum(len(s) for s in watch.spectators.values()),
        "state": found["state"],
    }


def self_check_delay(spectator: WireClient, record: GameRecord, final: int) -> None:
    """The delay check finds what it looks for: an update, a view mid-round."""
    start = final - len(record.actions)
    ends, _last = round_end_seqs(record, start)
    middle = next(n for n in range(start + 1, final) if n not in ends)
    table = {"spectator_delay": True}
    plants: list[Message] = [
        {"type": "update", "seq": middle, "payload": {"events": [], "view": None}},
        {"type": "resume", "seq": middle, "payload": {"missed": [], "snapshot": {}}},
        {
            "type": "snapshot",
            "seq": middle,
            "payload": {"table": table, "view": {"match_over": False}, "round_break": None},
        },
        {
            "type": "snapshot",
            "seq": middle,
            "payload": {"table": table, "view": None, "deadline": 1.0, "round_break": None},
        },
        {"type": "table", "seq": middle, "payload": {"spectator_delay": False}},
    ]
    for plant in plants:
        planted = WireClient.__new__(WireClient)
        planted.messages, planted.name = [plant], "planted"
        delay = Delay()
        check_delayed(0, [planted], record, final, delay)
        assert delay.faults, f"the delay check missed {plant}"


async def run(server: ServerProcess, count: int) -> dict[str, Any]:
    scan, delay = Scan(), Delay()
    api = Api(server)
    started = time.monotonic()
    played = []
    try:
        for index in range(count):
            played.append(await play_tournament(server, api, index, scan, delay))
    finally:
        await api.aclose()
    return {
        "tournaments": played,
        "tables_scanned": scan.matches,
        "messages_scanned": scan.messages,
        "rest_bodies_scanned": scan.rest_bodies,
        "steps": scan.steps,
        "leaks": len(scan.leaks),
        "first_leaks": scan.leaks[:5],
        "records_without_bot_seats": scan.unreplayable_records,
        "delayed_messages": delay.messages,
        "held_back_snapshots": delay.held_back,
        "round_end_snapshots": delay.round_ends,
        "match_end_snapshots": delay.match_ends,
        "delay_faults": len(delay.faults),
        "first_delay_faults": delay.faults[:5],
        "by_kind": scan.by_kind,
        "seconds": round(time.monotonic() - started, 1),
    }


def test_tournament_tables_and_delayed_spectators_keep_hidden_information(
    start_server: Any, request: pytest.FixtureRequest
) -> None:
    count = env_count("SAHRAT_LEAK_TOURNAMENTS", 1)  # make hardening: 6
    print(f"\ntournament hidden-information scan: {count} tournaments")
    server = start_server(
        **{
            **TOURNAMENT_ENV,
            "SAHRAT_TOURNAMENT_KONKAN_ROUNDS": "2",  # a round's end inside each table
            "SAHRAT_TOURNAMENT_CONQUIAN_WINS": "2",
            "SAHRAT_TURN_SECONDS_OVERRIDE": "600",
            "SAHRAT_GRACE_SECONDS": "600",
        },
        **NO_RATE_LIMITS,
    )
    results: dict[str, Any] = {"leaks": None}
    try:
        results = asyncio.run(run(server, count))
    except BaseException as error:
        results["failure"] = repr(error)[:2000]
        raise
    finally:
        write_results("tournament_hidden_info", results, request.node)
    assert len(results["tournaments"]) == count
    assert results["leaks"] == 0, results["first_leaks"]
    assert results["delay_faults"] == 0, results["first_delay_faults"]
    # the delay was seen at work: views held back in play, shown at rounds' and matches' ends
    assert results["held_back_snapshots"] > 0
    assert results["round_end_snapshots"] > 0 and results["match_end_snapshots"] > 0
