"""The server-test harness: a real ``sahrat serve`` process and real WebSocket clients.

``ServerProcess`` starts the CLI on a free port with its own environment, waits
for ``/readyz`` and is always killed at teardown (``conftest.py``). ``WireClient``
is one WebSocket connection that records every message it receives, tracks the
table seq and its latest view, and sends commands. ``play`` drives seated
clients with the engine's simple players, and ``assert_no_leaks`` checks, from
the recorded messages, that no connection ever saw a card in another seat's hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlencode

import httpx
import websockets
from websockets.exceptions import ConnectionClosed

from sahrat.bots import simple_conquian, simple_konkan
from sahrat.rules import conquian, konkan
from sahrat.rules.cards import conquian_deck, konkan_deck
from sahrat.view_changes import apply_update

REPO = Path(__file__).resolve().parents[2]
READY_SECONDS = 30.0
WAIT_SECONDS = 10.0
ALL_CARDS = frozenset(str(card) for card in [*konkan_deck(), *conquian_deck()])

Message = dict[str, Any]


# --- the server process --------------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on now (the kernel's choice; safe across xdist workers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sahrat_command() -> list[str]:
    script = Path(sys.executable).parent / "sahrat"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "sahrat.cli"]


# Test clients play as fast as the server answers, far beyond the rate limits meant
# for people; a test of the limits themselves sets its own (test_access.py).
MACHINE_SPEED = {
    "SAHRAT_MESSAGE_RATE": "1000000",
    "SAHRAT_MESSAGE_BURST": "1000000",
    "SAHRAT_ACCOUNT_RATE": "1000000",
    "SAHRAT_ACCOUNT_BURST": "1000000",
    "SAHRAT_ABUSE_LIMIT": "1000000",
    # ...and make accounts and log in from one address far faster than people do; their
    # guests sit at coin tables at once (tests/server/test_farming.py sets the real rules)
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "1000000",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "1000000",
    "SAHRAT_LOGINS_PER_ADDRESS_MINUTE": "1000000",
    "SAHRAT_LOGINS_PER_ADDRESS_NAME_HOUR": "1000000",
    "SAHRAT_LOGINS_PER_NAME_HOUR": "1000000",
    "SAHRAT_LOGINS_PER_MINUTE": "1000000",
    "SAHRAT_GUESTS_AT_COIN_TABLES": "true",
    "SAHRAT_COIN_TABLE_MIN_MATCHES": "0",
    # ...and take and give up seats over REST as often as a test needs
    "SAHRAT_SEAT_CHANGES_PER_MINUTE": "1000000",
}


class ServerProcess:
    """One ``sahrat serve`` subprocess on a database; start, SIGKILL, start again."""

    def __init__(
        self,
        database_url: str,
        log_dir: Path,
        env: Mapping[str, str] | None = None,
        *,
        socket_port: bool = False,
    ):
        """``socket_port``: the server also serves its table sockets on a port of their
        own (``SAHRAT_SOCKET_PORT``, a free one at each start), and the clients' URLs
        (``ws_url``) go there."""
        self.database_url = database_url
        self.log_dir = log_dir
        self.extra_env = dict(env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.own_socket_port = socket_port
        self.socket_port: int | None = None
        self.starts = 0
        self.log_path = log_dir / "server-0.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, table_id: int, token: str, since: int | None = None) -> str:
        """The URL a client with ``token`` opens: with a fresh one-time ticket for the
        table (none if the server refuses one: the socket then refuses with 4401)."""
        response = httpx.post(
            f"{self.base_url}{ticket_path(table_id)}", headers=auth_headers(token), timeout=10
        )
        return self._socket_url(table_id, response, since)

    async def ws_url_async(self, table_id: int, token: str, since: int | None = None) -> str:
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.post(
                f"{self.base_url}{ticket_path(table_id)}", headers=auth_headers(token)
            )
        return self._socket_url(table_id, response, since)

    def _socket_url(self, table_id: int, ticket: httpx.Response, since: int | None) -> str:
        query = {"ticket": ticket.json()["ticket"]} if ticket.status_code == 200 else {}
        if since is not None:
            query["since"] = str(since)
        url = f"ws://127.0.0.1:{self.socket_port or self.port}/ws/tables/{table_id}"
        return f"{url}?{urlencode(query)}" if query else url

    def start(self, port: int | None = None) -> ServerProcess:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SAHRAT_")}
        env.pop("DATABASE_URL", None)
        env.update({"DATABASE_URL": self.database_url, "PYTHONUNBUFFERED": "1"})
        env.update(MACHINE_SPEED)
        env.update(self.extra_env)
        problems = []
        for attempt in range(3):  # a port picked free can be taken before uvicorn binds it
            self.port = port if port is not None and attempt == 0 else free_port()
            if self.own_socket_port:
                self.socket_port = free_port()
                env["SAHRAT_SOCKET_PORT"] = str(self.socket_port)
            self.starts += 1
            self.log_path = self.log_dir / f"server-{self.starts}.log"
            with open(self.log_path, "wb") as out:
                self.proc = subprocess.Popen(
                    [*sahrat_command(), "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                    cwd=REPO,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            problem = self._wait_ready()
            if problem is None:
                return self
            problems.append(problem)
            self.stop()
        raise AssertionError("the server did not become ready:\n" + "\n\n".join(problems))

    def _wait_ready(self) -> str | None:
        assert self.proc is not None
        deadline = time.monotonic() + READY_SECONDS
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return f"exited with {self.proc.returncode}; log:\n{self.log_tail()}"
            try:
                response = httpx.get(f"{self.base_url}/readyz", timeout=1.0)
                # Only our own process's answer counts: when another test's server took
                # the port first, ours cannot bind (and exits), and theirs answers here.
                ours = response.json().get("pid") == self.proc.pid
                if response.status_code == 200 and response.json().get("ready") is True and ours:
                    return None
                last = f"{response.status_code} {response.text[:200]}"
            except (httpx.HTTPError, ValueError) as error:
                last = repr(error)
            time.sleep(0.05)
        return f"/readyz not ready after {READY_SECONDS}s ({last}); log:\n{self.log_tail()}"

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no flushing; what is durable is all that survives."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.kill()


# --- REST ---------------------------------------------------------------------------


class Api:
    """The few REST calls the tests need (async httpx)."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        # The server closes a connection idle for SAHRAT_KEEP_ALIVE_SECONDS (5 s), and
        # httpx keeps one for 5 s too: a request sent at that instant meets a closed
        # socket. A client lets go of idle connections first.
        self.http = httpx.AsyncClient(
            base_url=server.base_url, timeout=10.0, limits=httpx.Limits(keepalive_expiry=2.0)
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def guest(self) -> tuple[str, dict[str, Any]]:
        response = await self.http.post("/api/guests")
        assert response.status_code == 201, response.text
        data = response.json()
        assert data["user"]["guest"] is True
        return data["token"], data["user"]

    async def account(self, prefix: str = "p") -> tuple[str, dict[str, Any]]:
        """A registered account of its own (a random name), signed in."""
        name = f"{prefix}{secrets.token_hex(4)}"
        response = await self.http.post(
            "/api/users", json={"name": name, "password": "long enough"}
        )
        assert response.status_code == 201, response.text
        data = response.json()
        assert data["user"]["guest"] is False
        return data["token"], data["user"]

    async def create_table(self, token: str, game: str, options: dict[str, Any]) -> Message:
        response = await self.http.post(
            "/api/tables",
            json={"game": game, "options": options, "private": False},
            headers=auth_headers(token),
        )
        assert response.status_code == 201, response.text
        return dict(response.json())

    async def join(self, token: str, table_id: int) -> Message:
        response = await self.http.post(
            f"/api/tables/{table_id}/join", json={}, headers=auth_headers(token)
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def get(self, path: str, token: str | None = None) -> Any:
        response = await self.http.get(path, headers=auth_headers(token) if token else {})
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text}"
        return response.json()


def ticket_path(table_id: int) -> str:
    """Where a client trades its bearer token for a one-time WebSocket ticket."""
    return f"/api/tables/{table_id}/ticket"


def auth_headers(token: str) -> dict[str, str]:
    """The token, and a network address of the player's own: the server trusts
    ``X-Forwarded-For`` from 127.0.0.1 (uvicorn's default), and a coin table takes
    one account per address, so each test player comes from a different (documentation
    range, never contacted) address, as real players would."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    address = "2001:db8:" + ":".join(digest[i : i + 4] for i in range(0, 24, 4))
    return {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}


async def seated_table(
    api: Api, game: str, options: dict[str, Any], players: int
) -> tuple[int, list[str], Message]:
    """A table with ``players`` guests seated (creator first): its id, their tokens by
    seat, and the table info once full (the match starts when the last seat fills)."""
    guests = [await api.guest() for _ in range(players)]
    info = await api.create_table(guests[0][0], game, options)
    for token, _user in guests[1:]:
        info = await api.join(token, info["id"])
    assert info["status"] == "playing", info
    token_of = {user["id"]: token for token, user in guests}
    by_seat = [token_of[seat["user_id"]] for seat in sorted(info["seats"], key=lambda s: s["seat"])]
    return int(info["id"]), by_seat, info


# --- WebSocket clients ----------------------------------------------------------------

_cids = itertools.count(1)


class WireClient:
    """One WebSocket connection: records everything, tracks seq and view."""

    def __init__(self, name: str, ws: Any) -> None:
        self.name = name
        self.ws = ws
        self.messages: list[Message] = []
        # the seat's whole view after each message that changes or shows it (an update,
        # a snapshot, a resume, a reply with a snapshot), None after any other
        self.views: list[dict[str, Any] | None] = []
        self.seq: int | None = None
        self.view: dict[str, Any] | None = None
        self.seat: int | None = None
        self.closed = False
        self.continues = True  # press "continue" as soon as a round break begins
        self.round_break: dict[str, Any] | None = None  # the break as last heard of
        self._continuing: asyncio.Future[None] | None = None
        self._new = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls,
        server: ServerProcess,
        table_id: int,
        token: str,
        *,
        name: str,
        since: int | None = None,
    ) -> WireClient:
        url = await server.ws_url_async(table_id, token, since)
        ws = await websockets.connect(url, max_size=2**23, open_timeout=10)
        client = cls(name, ws)
        await client.wait_for(lambda m: m["type"] in ("snapshot", "resume"))
        return client

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                message = json.loads(text)
                self.messages.append(message)
                self.views.append(self._track(message))
                self._new.set()
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            self._new.set()

    def view_after(self, message: Message) -> dict[str, Any] | None:
        """The seat's whole view after ``message`` (one this client got), if it changed
        or showed the view."""
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index] is message:
                return self.views[index]
        raise ValueError("not a message of this client")

    def _track(self, message: Message) -> dict[str, Any] | None:
        """Follow the table's seq and the seat's view; the view if this message changed
        or showed it."""
        kind, payload = message["type"], message["payload"]
        snapshot = None
        if kind == "snapshot":
            snapshot = payload
        elif kind == "resume" or (kind == "reply" and payload.get("snapshot")):
            snapshot = payload["snapshot"]
        elif kind == "update":
            self.seq = message["seq"]
            self.view = apply_update(self.view, payload)
            self._read_summary(payload.get("round_break"))
            return self.view
        elif kind == "break":
            self.round_break = payload["round_break"]
        if snapshot is None:
            return None
        self.seq = snapshot["table"]["seq"]
        self.view = snapshot["view"]
        self.seat = snapshot["seat"]
        self._read_summary(snapshot.get("round_break"))
        return self.view

    @property
    def may_move(self) -> bool:
        """The view says it is this seat's turn, and no round break holds play."""
        view = self.view
        return (
            view is not None
            and not view["match_over"]
            and view["turn"] == self.seat
            and self.round_break is None
        )

    def _read_summary(self, pause: dict[str, Any] | None) -> None:
        """Between rounds, continue at once, as a player done reading the summary does
        (``continues=False`` leaves the break to the test)."""
        self.round_break = pause
        if self.continues and pause and self.seat in pause["waiting"]:
            self._continuing = asyncio.ensure_future(self.ws.send('{"type": "continue"}'))

    async def close(self) -> None:
        await self.ws.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._reader, 5)

    async def wait_closed(self, timeout: float = WAIT_SECONDS) -> None:
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)

    def of_type(self, kind: str) -> list[Message]:
        return [m for m in self.messages if m["type"] == kind]

    async def wait_for(
        self, pred: Callable[[Message], bool], *, after: int = 0, timeout: float = WAIT_SECONDS
    ) -> Message:
        """The first message from index ``after`` on that satisfies ``pred``."""
        index = after
        found: list[Message] = []

        def arrived() -> bool:
            nonlocal index
            while index < len(self.messages):
                if pred(self.messages[index]):
                    found.append(self.messages[index])
                    return True
                index += 1
            return False

        await self.wait_until(arrived, timeout)
        return found[0]

    async def wait_until(self, cond: Callable[[], bool], timeout: float = WAIT_SECONDS) -> None:
        """Until ``cond()`` holds, checked at once and after each message received."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            self._new.clear()
            if cond():
                return
            if self.closed:
                raise AssertionError(f"{self.name}: closed while waiting; last: {self.tail()}")
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"{self.name}: timed out waiting; last: {self.tail()}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new.wait(), remaining)

    async def wait_seq(self, seq: int, timeout: float = WAIT_SECONDS) -> None:
        await self.wait_for(lambda _m: self.seq is not None and self.seq >= seq, timeout=timeout)

    def tail(self, count: int = 3) -> str:
        return json.dumps(self.messages[-count:])[:2000]

    async def send(self, data: Any) -> int:
        """Send a message (text or bytes as is, anything else as JSON); returns the log index."""
        index = len(self.messages)
        await self.ws.send(data if isinstance(data, (str, bytes)) else json.dumps(data))
        return index

    async def command(
        self, action: dict[str, Any], *, seq: int | None = None, cid: str | None = None
    ) -> Message:
        """Send a command and return its reply (the message, type ``reply``)."""
        cid = cid or f"{self.name}-{next(_cids)}"
        assert self.seq is not None
        index = await self.send(
            {
                "type": "command",
                "cid": cid,
                "seq": self.seq if seq is None else seq,
                "action": action,
            }
        )
        return await self.wait_for(
            lambda m: m["type"] == "reply" and m["payload"]["cid"] == cid, after=index
        )

    async def roundtrip(self) -> int:
        """Ping and wait for the pong: everything sent before it has been answered."""
        index = await self.send({"type": "ping"})
        await self.wait_for(lambda m: m["type"] == "pong", after=index)
        return len(self.messages)


# --- playing -------------------------------------------------------------------------------


def engine_and_player(game: str) -> tuple[ModuleType, Callable[[dict[str, Any]], Any]]:
    if game == "conquian":
        return conquian, simple_conquian.act
    return konkan, simple_konkan.act


def wire_action(engine: ModuleType, action: Any) -> dict[str, Any]:
    data = dict(engine.action_to_json(action))
    data.pop("seat", None)
    return data


async def play(
    game: str,
    seats: list[WireClient],
    *,
    until: Callable[[dict[str, Any]], bool],
    watchers: Iterable[WireClient] = (),
    max_steps: int = 2000,
    patient: bool = False,
) -> int:
    """Play the seats' moves with the simple player until ``until(view)`` holds for the
    latest view (or the match is over). Every reply must be ok, and every connection
    must have seen each update before the next move. Returns the number of moves.

    ``patient``: at a server with people's real rate limits, a move refused
    ``rate_limited`` (nothing was done: slow down, docs/protocol.md) is sent again a
    moment later, as a client does; the seats otherwise play as fast as the server
    answers, which on a fast day is more than a person's 20 messages a second."""
    engine, player = engine_and_player(game)
    everyone = [*seats, *watchers]
    moves = 0
    while True:
        seq = max(c.seq or 0 for c in seats)
        for client in everyone:
            await client.wait_seq(seq)
        view = seats[0].view
        assert view is not None
        if view["match_over"] or until(view):
            return moves
        actor = seats[view["turn"]]
        await actor.wait_until(lambda a=actor: a.round_break is None)  # type: ignore[misc]
        assert actor.view is not None and actor.view["turn"] == actor.seat
        action = wire_action(engine, player(actor.view))
        reply = await actor.command(action)
        while patient and reply["payload"].get("error", {}).get("code") == "rate_limited":
            await asyncio.sleep(0.25)
            reply = await actor.command(action)
        assert reply["payload"] == {"cid": reply["payload"]["cid"], "ok": True}, (action, reply)
        assert reply["seq"] >= seq + 1, (seq, reply)
        moves += 1
        assert moves <= max_steps, "the match does not end"


async def play_seat(
    client: WireClient,
    game: str,
    *,
    raced: Iterable[str] = ("stale", "round_break"),
    timeout: float = WAIT_SECONDS,
) -> None:
    """Play one seat with the simple player until the match is over, among bots or
    timers that may move first (then the reply is one of ``raced``: nothing applied)."""
    engine, player = engine_and_player(game)
    while True:
        await client.wait_until(
            lambda: client.view is not None and (client.view["match_over"] or client.may_move),
            timeout=timeout,
        )
        view = client.view
        assert view is not None
        if view["match_over"]:
            return
        reply = await client.command(wire_action(engine, player(view)))
        error = reply["payload"].get("error")
        assert reply["payload"]["ok"] or error["code"] in raced, reply


def assert_seqs_consecutive(client: WireClient) -> None:
    """Updates carry seq+1 each, from the snapshot's seq; replies never run ahead."""
    expected: int | None = None
    for message in client.messages:
        kind = message["type"]
        if kind in ("snapshot", "resume"):
            snap = message["payload"] if kind == "snapshot" else message["payload"]["snapshot"]
            assert message["seq"] == snap["table"]["seq"]
            expected = message["seq"]
        elif kind == "update":
            assert expected is not None, f"{client.name}: update before any snapshot"
            assert message["seq"] == expected + 1, (client.name, expected, message["seq"])
            expected = message["seq"]
        elif kind == "reply" and message["payload"]["ok"]:
            assert message["seq"] == expected, (client.name, expected, message)


# --- hidden information --------------------------------------------------------------------


# Keys whose texts name card faces (what a joker stands for), not physical cards.
FACE_KEYS = frozenset({"joker_for"})


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key not in FACE_KEYS:
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def visible_cards(message: Message) -> set[str]:
    """The card texts in a message, apart from the viewer's own hand and the hands a
    Konkan round end or redeal reveals to everyone (public by the rules)."""
    payload = json.loads(json.dumps(message["payload"]))

    def scrub_view(view: Any) -> None:
        if isinstance(view, dict):
            view.pop("hand", None)
            view.pop("drawn", None)  # the viewer's own drawn card, also in its hand
            view.pop("simple_actions", None)  # the viewer's own possible moves
            for result in view.get("scores") or []:
                if isinstance(result, dict):
                    result.pop("hands", None)

    def scrub_events(events: Any) -> None:
        for event in events or []:
            if event.get("type") in ("round_end", "redeal"):
                event.pop("hands", None)
                event.pop("hand", None)

    kind = message["type"]
    snaps = []
    if kind == "update":
        scrub_view(payload.get("view"))
        scrub_view(payload.get("changes"))
        scrub_events(payload.get("events"))
    elif kind == "snapshot":
        snaps.append(payload)
    elif kind == "resume":
        snaps.append(payload["snapshot"])
        for update in payload["missed"]:
            scrub_events(update.get("events"))
            scrub_view(update.get("view"))
    elif kind == "reply" and payload.get("snapshot"):
        snaps.append(payload["snapshot"])
    for snap in snaps:
        scrub_view(snap.get("view"))
    return {s for s in _strings(payload) if s in ALL_CARDS}


def own_cards(message: Message, seat: int) -> set[str]:
    """The viewer's own cards in an update: the private parts of its own events
    (the card it drew, the hand it was dealt) may name them."""
    cards: set[str] = set()
    if message["type"] == "update":
        for event in message["payload"]["events"]:
            if event.get("seat") == seat:
                cards |= {s for s in _strings(event) if s in ALL_CARDS}
    return cards


def hands_by_seq(seats: list[WireClient]) -> dict[int, dict[int, set[str]]]:
    """Each seat's hand after each seq, from that seat's own updates and snapshots."""
    hands: dict[int, dict[int, set[str]]] = {}
    for seat, client in enumerate(seats):
        for message, view in zip(client.messages, client.views, strict=True):
            if view is not None and "hand" in view:
                hands.setdefault(message["seq"], {})[seat] = set(view["hand"])
    return hands


PUBLIC_KEYS = ("melds", "discard_top", "face_up")


def public_by_seq(clients: Iterable[WireClient]) -> dict[int, set[str]]:
    """The cards face up on the table after each seq: melds, the discard top, the face-up
    card (from the views' public fields only)."""
    public: dict[int, set[str]] = {}
    for client in clients:
        for message, view in zip(client.messages, client.views, strict=True):
            if view is not None:
                cards = {s for key in PUBLIC_KEYS for s in _strings(view.get(key))}
                public.setdefault(message["seq"], set()).update(cards & ALL_CARDS)
    return public


def assert_no_leaks(seats: list[WireClient], spectators: Iterable[WireClient] = ()) -> int:
    """No message a connection got names a card then in another seat's hand (as that
    seat's own view at the same seq shows it) — unless the card was face up on the table
    just before or after that step (a refused card dealt again in the same step, a taken
    discard). Spectators never get a hand. Returns the number of messages checked."""
    spectators = list(spectators)
    hands = hands_by_seq(seats)
    public = public_by_seq([*seats, *spectators])
    checked = 0
    for seat, client in [*enumerate(seats), *((None, s) for s in spectators)]:
        who = "a spectator" if seat is None else f"seat {seat}"
        for message in client.messages:
            if seat is None:
                assert not _has_hand(message["payload"]), f"spectator got a hand: {message}"
            n = message["seq"]
            at = hands.get(n)
            if not at:
                continue
            if message["type"] == "update":
                message, earlier = _split_at_deal(message)
                _check_old_deal(earlier, seat, hands.get(n - 1, {}), who, n)
            seen = visible_cards(message) - public.get(n, set()) - public.get(n - 1, set())
            if seat is not None:
                seen -= own_cards(message, seat)
            for other, hand in at.items():
                if other != seat:
                    leaked = seen & hand
                    assert not leaked, (
                        f"{who} was shown {sorted(leaked)} from seat {other}'s hand "
                        f"at seq {n}: {json.dumps(message)[:1500]}"
                    )
            checked += 1
    return checked


def _split_at_deal(message: Message) -> tuple[Message, list[dict[str, Any]]]:
    """An update whose step ended a deal and dealt the next: the events about the
    previous deal are separated (the new hands may hold cards they name)."""
    events = message["payload"]["events"]
    deals = [i for i, event in enumerate(events) if event.get("type") == "deal"]
    if not deals:
        return message, []
    cut = deals[-1]
    payload = {**message["payload"], "events": events[cut:]}
    return {**message, "payload": payload}, events[:cut]


def _check_old_deal(
    events: list[dict[str, Any]], viewer: int | None, hands: dict[int, set[str]], who: str, n: int
) -> None:
    """Events of a deal that ended in this step, against the hands before the step:
    an event may name its own seat's cards (a discard) but no one else's."""
    for event in _scrub_reveals(events):
        seen = {s for s in _strings(event) if s in ALL_CARDS}
        for other, hand in hands.items():
            if other not in (viewer, event.get("seat")):
                leaked = seen & hand
                assert not leaked, f"{who} was shown {sorted(leaked)} of seat {other} at {n}"


def _scrub_reveals(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        if event.get("type") in ("round_end", "redeal"):
            event = {k: v for k, v in event.items() if k not in ("hands", "hand")}
        out.append(event)
    return out


def _has_hand(value: Any) -> bool:
    """A ``hand`` (or a dealt ``cards``) field with cards in it, anywhere."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            # (a redeal claim shows the claimant's hand to everyone)
            if key == "hand" and isinstance(item, list) and item and value.get("type") != "redeal":
                return True
            if key == "cards" and value.get("type") == "dealt":
                return True
            if _has_hand(item):
                return True
    elif isinstance(value, list):
        return any(_has_hand(item) for item in value)
    return False


def assert_public_parts_agree(seats: list[WireClient], spectator: WireClient) -> int:
    """A seat's update shows another seat's events exactly as a spectator sees them,
    and the same view apart from its own hand and moves."""
    public = {
        m["seq"]: (m["payload"], view)
        for m, view in zip(spectator.messages, spectator.views, strict=True)
        if m["type"] == "update"
    }
    compared = 0
    for seat, client in enumerate(seats):
        for message, view in zip(client.messages, client.views, strict=True):
            if message["type"] != "update" or message["seq"] not in public:
                continue
            (theirs, their_whole), mine = public[message["seq"]], message["payload"]
            assert len(mine["events"]) == len(theirs["events"])
            for event, seen in zip(mine["events"], theirs["events"], strict=True):
                if event.get("seat") != seat:
                    assert event == seen, (seat, message["seq"], event, seen)
            strip = {"hand", "drawn", "simple_actions", "viewer"}
            assert view is not None and their_whole is not None
            mine_view = {k: v for k, v in view.items() if k not in strip}
            their_view = {k: v for k, v in their_whole.items() if k not in strip}
            assert mine_view == their_view, (seat, message["seq"])
            compared += 1
    return compared


def make_admin(database: str, prefix: str = "boss") -> tuple[str, str]:
    """``sahrat admin create`` on the test database: the admin's name and password."""
    name = f"{prefix}-{secrets.token_hex(3)}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAHRAT_")}
    env["DATABASE_URL"] = database
    out = subprocess.run(
        [*sahrat_command(), "admin", "create", name],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = re.search(r"password.*: (\S+)$", out.stdout.strip())
    assert found, out.stdout
    return name, found.group(1)
