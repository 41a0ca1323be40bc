"""Helpers for the fault tests: seat players that survive a dead server, a TCP proxy
that can cut the database off, and what the database says about a table.

``SeatPlayer`` plays one seat of one table with the engine's simple player over a
WebSocket. When the connection drops (the server was SIGKILLed) it reconnects with
``since`` (its last seen seq) until the server is back, and plays on. It keeps every
command it sent and every reply it got, so the test can check each acknowledged
command against the event log.

``DbProxy`` forwards TCP connections to PostgreSQL; ``cut()`` closes every open
connection and refuses new ones (accepted, then closed at once) until ``restore()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import select
from websockets.exceptions import ConnectionClosed, WebSocketException

from sahrat.store import ledger
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import GameTable, LedgerEntry, LogEntry, Match
from server.harness import ServerProcess, WireClient, engine_and_player, wire_action

# Refusals a seat may get from a correct server in these tests: the timer (or the
# other seat) moved first, the match ended meanwhile, the database was unreachable.
TOLERATED = {"stale", "not_playing", "unavailable", "round_break"}


class Disconnected(Exception):
    """The connection went away under a seat player."""


@dataclass
class Sent:
    cid: str
    seq: int  # the seq the command was sent at
    reply: dict[str, Any] | None = None  # the reply message, if one came


@dataclass
class SeatPlayer:
    """One seat of one table, played until the match is over, across server deaths."""

    server: ServerProcess
    table_id: int
    token: str
    game: str
    name: str
    think: tuple[float, float] = (0.0, 0.0)  # seconds before each move (random in range)
    rng: random.Random = field(default_factory=random.Random)
    sent: list[Sent] = field(default_factory=list)
    seen: int | None = None  # the latest seq this seat saw
    connects: int = 0
    resumes: int = 0  # reconnects answered with a resume (the missed steps)
    snapshots_after_since: int = 0  # reconnects with ``since`` answered with a snapshot
    finished: bool = False
    refusals: dict[str, int] = field(default_factory=dict)

    @property
    def acknowledged(self) -> list[Sent]:
        return [s for s in self.sent if s.reply is not None and s.reply["payload"]["ok"]]

    async def run(self, timeout: float) -> None:
        """Play to the end of the match (reconnecting as needed) within ``timeout``."""
        await asyncio.wait_for(self._run(), timeout)

    async def _run(self) -> None:
        while not self.finished:
            client = await self._connect()
            if client is None:
                continue
            try:
                await self._play(client)
            except Disconnected:
                pass
            finally:
                with contextlib.suppress(Exception):
                    await client.close()

    async def _connect(self) -> WireClient | None:
        """A connection (resuming from ``seen``), or None after a failed try (the server
        is down or restarting; or the table is over and no longer served)."""
        try:
            client = await WireClient.connect(
                self.server, self.table_id, self.token, name=self.name, since=self.seen
            )
        # refused, reset, a handshake cut short by a kill, or closed at once (4404)
        except (OSError, WebSocketException, TimeoutError, httpx.HTTPError):  # down, or killed
            await asyncio.sleep(self.rng.uniform(0.1, 0.4))
            return None
        except AssertionError:  # answered, then closed: a finished table is not served
            if await self._match_recorded():
                self.finished = True
            else:
                await asyncio.sleep(self.rng.uniform(0.1, 0.4))
            return None
        self.connects += 1
        if client.messages[0]["type"] == "resume":
            self.resumes += 1
        elif self.seen is not None:
            self.snapshots_after_since += 1
        return client

    async def _match_recorded(self) -> bool:
        """The table's match is in the database (a finished table is not served)."""
        try:
            async with httpx.AsyncClient(base_url=self.server.base_url, timeout=5) as http:
                response = await http.get(f"/api/tables/{self.table_id}/matches")
        except httpx.HTTPError:
            return False
        return response.status_code == 200 and bool(response.json())

    async def _play(self, client: WireClient) -> None:
        engine, player = engine_and_player(self.game)
        acted_at: int | None = None
        seat = client.seat
        assert seat is not None, f"{self.name}: not seated"

        def ready(_m: Any) -> bool:
            view = client.view
            return view is not None and (
                view["match_over"] or (client.may_move and client.seq != acted_at)
            )

        while True:
            await self._wait(client, ready)
            view = client.view
            assert view is not None
            self.seen = client.seq
            if view["match_over"]:
                self.finished = True
                return
            low, high = self.think
            if high > 0:
                await asyncio.sleep(self.rng.uniform(low, high))
                if client.seq != self.seen:
                    continue  # the timer moved meanwhile: look again
            acted_at = client.seq
            assert client.seq is not None
            sent = Sent(f"{self.name}-{len(self.sent)}", client.seq)
            self.sent.append(sent)
            try:
                index = await client.send(
                    {
                        "type": "command",
                        "cid": sent.cid,
                        "seq": sent.seq,
                        "action": wire_action(engine, player(view)),
                    }
                )
            except ConnectionClosed as error:
                raise Disconnected from error

            def answer(message: dict[str, Any], cid: str = sent.cid) -> bool:
                return bool(message["type"] == "reply" and message["payload"]["cid"] == cid)

            sent.reply = await self._wait(client, answer, after=index)
            self.seen = client.seq
            payload = sent.reply["payload"]
            if not payload["ok"]:
                code = payload["error"]["code"]
                assert code in TOLERATED, (self.name, view, sent.reply)
                self.refusals[code] = self.refusals.get(code, 0) + 1
                if code == "unavailable":
                    acted_at = None  # nothing was played: try again
                    await asyncio.sleep(0.2)

    async def _wait(
        self, client: WireClient, pred: Callable[[dict[str, Any]], bool], after: int = 0
    ) -> dict[str, Any]:
        try:
            return await client.wait_for(pred, after=after, timeout=120)
        except AssertionError as error:
            if client.closed:
                raise Disconnected from error
            raise


# --- what the database says ---------------------------------------------------------------


@dataclass
class TableRecord:
    status: str
    entries: list[tuple[int, str, int | None, str | None]]  # seq, kind, seat, client_id
    matches: list[dict[str, Any]]
    ledger: list[tuple[str, str, int]]  # reason, credit account, amount


async def read_tables(database: str, table_ids: list[int]) -> dict[int, TableRecord]:
    """Every table's log, match rows and coin movements, read directly."""
    engine = make_engine(database)
    found: dict[int, TableRecord] = {}
    try:
        async with make_sessions(engine)() as session:
            statuses = dict(
                (
                    await session.execute(
                        select(GameTable.id, GameTable.status).where(GameTable.id.in_(table_ids))
                    )
                ).all()
            )
            for table_id in table_ids:
                found[table_id] = TableRecord(str(statuses.get(table_id)), [], [], [])
            rows = await session.execute(
                select(
                    LogEntry.table_id,
                    LogEntry.seq,
                    LogEntry.kind,
                    LogEntry.seat,
                    LogEntry.client_id,
                ).where(LogEntry.table_id.in_(table_ids))
            )
            for table_id, seq, kind, seat, client_id in rows.all():
                found[table_id].entries.append((seq, kind, seat, client_id))
            for match in (
                await session.scalars(select(Match).where(Match.table_id.in_(table_ids)))
            ).all():
                found[match.table_id].matches.append(
                    {
                        "winner_seat": match.winner_seat,
                        "players": match.players,
                        "actions": len(match.record.get("actions", [])),
                    }
                )
            for entry in (
                await session.scalars(
                    select(LedgerEntry).where(LedgerEntry.table_id.in_(table_ids))
                )
            ).all():
                assert entry.table_id is not None
                found[entry.table_id].ledger.append(
                    (entry.reason, entry.credit_account, entry.amount)
                )
            report = await ledger.check_invariant(session)
    finally:
        await engine.dispose()
    assert report.ok, report
    for record in found.values():
        record.entries.sort()
    return found


def check_log(record: TableRecord, seats: list[SeatPlayer]) -> dict[str, int]:
    """One table's log against its seat players: seqs 1..n once each, every
    acknowledged command exactly once at the seq its reply named, and the match row's
    record holding every action. Returns counts (acknowledged, lost, doubled...)."""
    seqs = [seq for seq, *_ in record.entries]
    assert seqs == list(range(1, len(seqs) + 1)), f"log seqs not 1..n: {seqs[:20]}..."
    by_cid: dict[str, list[tuple[int, int | None]]] = {}
    for seq, _kind, seat, cid in record.entries:
        if cid is not None:
            by_cid.setdefault(cid, []).append((seq, seat))
    counts = {"acknowledged": 0, "lost": 0, "doubled": 0, "unanswered_in_log": 0}
    for player in seats:
        for sent in player.sent:
            logged = by_cid.get(sent.cid, [])
            if len(logged) > 1:
                counts["doubled"] += 1
            if sent.reply is None:
                counts["unanswered_in_log"] += len(logged)  # killed in flight: either way
                continue
            payload = sent.reply["payload"]
            if payload["ok"]:
                counts["acknowledged"] += 1
                if [seq for seq, _seat in logged] != [sent.reply["seq"]]:
                    counts["lost"] += 1
            elif payload["error"]["code"] == "unavailable":
                # "not played": it must not be in the log
                assert not logged, (player.name, sent, logged)
    actions = sum(1 for _seq, kind, *_ in record.entries if kind == "action")
    assert len(record.matches) == 1, record.matches
    assert record.matches[0]["actions"] == actions, (record.matches[0], actions)
    return counts


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# --- a database that goes away --------------------------------------------------------------


class DbProxy:
    """A TCP proxy in front of PostgreSQL, in the test's event loop. ``cut()`` closes
    every open connection and refuses new ones (accepted, then closed at once) until
    ``restore()``: to the server, the database is unreachable."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.listen_port = 0
        self.open = True
        self.refused = 0  # connections refused while cut
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> DbProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.listen_port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        self.open = False
        for writer in list(self._writers):
            writer.transport.abort()  # a reset, as a dead host or network would leave
        self._writers.clear()

    def restore(self) -> None:
        self.open = True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.open:
            self.refused += 1
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            for end in (writer, up_writer):
                self._writers.discard(end)
                end.transport.abort()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while self.open:
                data = await reader.read(65536)
                if not data or not self.open:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()
