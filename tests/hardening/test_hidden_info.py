"""Hidden information never leaves the server: a scan of whole matches.

``SAHRAT_LEAK_MATCHES`` matches (default 12; the full run is 500,
``docs/hardening.md``) are played on a live server with bots that move at once
(``SAHRAT_BOT_DELAY_SECONDS=0``): one person (the simple player of the harness)
against bots in every other seat (Konkan with 2, 3 and 4 seats, Konkan 71,
Conquian), and two people at a two-seat table, each with a spectator connected
and a poller fetching the table over REST meanwhile (with the player's token and
without) and asking for analyses (``GET`` and ``POST /api/matches/{id}/analysis``) of
the matches over so far and of the next ids: a match in play has no match row, so its
own id is a 404 until it is over. Afterwards the match's game record is replayed
through the engine, giving the true hidden state after every step: each seat's hand, the stock in
order, Conquian's face-down dead pile, the match seed and the round's secret.

Every message a connection received at seq ``n`` is checked against the state
after step ``n``: it names no card then in another seat's hand, in the stock or
in the dead pile (cards face up on the table just before or after the step, and
the hands a Konkan round end reveals, excepted — with two decks a card's twin
may be public), carries no ``stock``/``deck``/``dead`` list, and never the seed
before the match is over nor the current round's secret; a spectator never gets
a hand. The REST bodies fetched during play name no card at all (an analysis of
another, finished match excepted: its cards are no secret any more). The harness's
``assert_no_leaks`` (hands from the seats' own views) runs on the two-person
tables too. The people and the spectator chat all along (quick phrases and words): the
chat messages are scanned as every other message. Results go to
``test-artifacts/hardening/hidden_info.json``.

Seats change hands before every match (seat churn): a "ghost" takes the seat
the match will deal to someone else, opens a socket and leaves; the ghost's
socket stays open through the match and is scanned as a spectator's. At the
two-person tables the second person watches before taking the seat, so their
socket is scanned as a spectator's until the deal and as the seat's after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from sahrat.rules.record import GameRecord, engine_for, replay
from server.harness import (
    ALL_CARDS,
    PUBLIC_KEYS,
    Api,
    Message,
    ServerProcess,
    WireClient,
    _has_hand,
    _scrub_reveals,
    _split_at_deal,
    _strings,
    assert_no_leaks,
    engine_and_player,
    own_cards,
    play,
    visible_cards,
)

from .conftest import NO_RATE_LIMITS, env_count, env_seed, write_results

CONCURRENT = 3  # matches played at the same time
POLL_SECONDS = 0.05
SECRET_KEYS = ("stock", "deck", "decks", "dead")

# (game, options, people): the other seats are bots.
KINDS: list[tuple[str, dict[str, Any], int]] = [
    ("konkan", {"players": 4, "rounds": 2}, 1),
    ("conquian", {"wins_needed": 2}, 1),
    ("konkan71", {"players": 3, "rounds": 1}, 1),
    ("konkan", {"players": 2, "rounds": 2}, 1),
    ("conquian", {"wins_needed": 2}, 2),
    ("konkan", {"players": 2, "rounds": 1}, 2),
]


@dataclass
class Hidden:
    """What nobody but its owner may know after one step."""

    hands: list[set[str]]
    stock: list[str]
    dead: list[str]
    public: set[str]  # face up on the table
    secrets: set[str]  # the current round's secret texts (revealed when it ends)


@dataclass
class Scan:
    matches: int = 0
    messages: int = 0
    chat_messages: int = 0  # of them, chat and chat_history messages
    rest_bodies: int = 0
    analyses_refused_in_play: int = 0  # a match's own analysis asked for during its play
    steps: int = 0
    leaks: list[str] = field(default_factory=list)
    unreplayable_records: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)


def _cards(cards: Any) -> list[str]:
    return [str(card) for card in cards]


def _secret_texts(state: Any) -> set[str]:
    secret = getattr(state, "secret", None)
    texts = {getattr(secret, name, None) for name in ("seed", "salt")} if secret else set()
    return {text for text in texts if isinstance(text, str) and len(text) >= 8}


def hidden_states(record: GameRecord) -> list[Hidden]:
    """The hidden state after the deal (index 0) and after each action (index k)."""
    engine = engine_for(record.game)
    out: list[Hidden] = []

    def on_step(state: Any, _action: Any) -> None:
        view = engine.view(state, None)
        public = {s for key in PUBLIC_KEYS for s in _strings(view.get(key))} & ALL_CARDS
        out.append(
            Hidden(
                hands=[set(_cards(hand)) for hand in state.hands],
                stock=_cards(state.stock),
                dead=_cards(getattr(state, "dead", [])),
                public=public,
                secrets=set() if state.over else _secret_texts(state),
            )
        )

    result = replay(record, on_step=on_step)
    assert result.ok, result.error
    return out


def _forbidden(hidden: Hidden, seat: int | None) -> set[str]:
    cards = {c for other, hand in enumerate(hidden.hands) if other != seat for c in hand}
    return cards | set(hidden.stock) | set(hidden.dead)


def _secret_lists(value: Any) -> Iterator[str]:
    """Keys that would carry the stock, a deck or the dead pile, with cards in them."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in SECRET_KEYS and isinstance(item, (list, str)) and item:
                yield key
            yield from _secret_lists(item)
    elif isinstance(value, list):
        for item in value:
            yield from _secret_lists(item)


class Match:
    """One match's connections, REST bodies and, once over, its hidden states."""

    def __init__(self, index: int, game: str, options: dict[str, Any], people: int) -> None:
        self.index = index
        self.game = game
        self.options = options
        self.people = people
        self.table_id = 0
        self.seats: list[WireClient] = []  # the people, by their seat
        self.spectator: WireClient | None = None
        self.ghosts: list[WireClient] = []  # sockets of players who left before the deal
        self.rest: list[tuple[str, Any]] = []
        self.match_id = 0  # once it is over
        self.over: list[int] = []  # the ids of the matches over so far (shared)
        self.analyses: list[tuple[int, str, int, Any]] = []  # (id, method, status, body)

    @property
    def kind(self) -> str:
        players = self.options.get("players", 2)
        return f"{self.game}/{players} seats/{self.people} people"

    def clients(self) -> list[tuple[int | None, WireClient]]:
        out: list[tuple[int | None, WireClient]] = [(c.seat, c) for c in self.seats]
        if self.spectator is not None:
            out.append((None, self.spectator))
        out.extend((None, ghost) for ghost in self.ghosts)
        return out


async def _poll(api: Api, match: Match, token: str, stop: asyncio.Event) -> None:
    """Fetch what a player may fetch during play, until told to stop."""
    while not stop.is_set():
        for path, auth in (
            (f"/api/tables/{match.table_id}", token),
            (f"/api/tables/{match.table_id}", None),
            (f"/api/tables?game={match.game}", None),
            (f"/api/tables/{match.table_id}/matches", token),
        ):
            headers = {"Authorization": f"Bearer {auth}"} if auth else {}
            response = await _get(api, path, headers)
            assert response.status_code == 200, (path, response.text)
            match.rest.append((path, response.json()))
        # Analyses: of a match over (in turn), and of the next ids, one of which is the
        # match in play's (the matches played at once take the next ones).
        last = max(match.over, default=0)
        ids = list(range(last + 1, last + 1 + CONCURRENT))
        if match.over:
            ids.append(match.over[len(match.analyses) % len(match.over)])
        for match_id in ids:
            for method in ("GET", "POST"):
                path = f"/api/matches/{match_id}/analysis"
                response = await _get(api, path, {"Authorization": f"Bearer {token}"}, method)
                match.analyses.append((match_id, method, response.status_code, response.json()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), POLL_SECONDS)


# What the people at the table say meanwhile: quick phrases and words (never a card's
# text: a message is scanned as everything else, and its words are its sender's).
CHAT_LINES: list[dict[str, str]] = [
    {"phrase": "yalla"},
    {"text": "يلا يا شباب، good luck"},
    {"phrase": "hurry"},
    {"text": "who holds the jokers? 🤔"},
]
CHAT_SECONDS = 1.0  # one message a second, people taking turns: within the chat's rate


async def _chatter(clients: list[WireClient], stop: asyncio.Event) -> int:
    """The players and the spectator talk in turn until told to stop; how many spoke."""
    said = 0
    while not stop.is_set():
        client = clients[said % len(clients)]
        if not client.closed:
            with contextlib.suppress(Exception):  # a socket closing at the match's end
                await client.send({"type": "chat", "payload": CHAT_LINES[said % len(CHAT_LINES)]})
        said += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), CHAT_SECONDS)
    return said


async def _get(api: Api, path: str, headers: dict[str, str], method: str = "GET") -> httpx.Response:
    """GET (or ``method``), tried again when a kept-alive connection was closed under the
    request (uvicorn closes idle ones after 5 s; the race is the client's, not the server's)."""
    for attempt in range(3):
        try:
            return await api.http.request(method, path, headers=headers)
        except (httpx.ReadError, httpx.RemoteProtocolError):
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def _my_turn_or_over(client: WireClient) -> dict[str, Any]:
    def ready() -> bool:
        view = client.view
        return view is not None and (view["match_over"] or client.may_move)

    await client.wait_until(ready, timeout=60)
    assert client.view is not None
    return client.view


async def _ghost(server: ServerProcess, api: Api, match: Match, creator: str) -> None:
    """Seat churn: the creator steps out, a ghost takes the freed seat, opens a socket
    and leaves, and the creator sits again. The ghost's socket, kept open, must see
    only what anyone may; the creator's socket, open throughout, is the seat's again."""
    token, _user = await api.guest()

    async def leave(who: str) -> None:
        response = await api.http.post(
            f"/api/tables/{match.table_id}/leave", headers={"Authorization": f"Bearer {who}"}
        )
        assert response.status_code == 200, response.text

    await leave(creator)
    await api.join(token, match.table_id)
    ghost = await WireClient.connect(
        server, match.table_id, token, name=f"m{match.index}ghost{len(match.ghosts)}"
    )
    assert ghost.seat == 0, ghost.tail()
    await leave(token)
    info = await api.join(creator, match.table_id)
    assert info["status"] == "waiting", info
    match.ghosts.append(ghost)


async def play_match(server: ServerProcess, api: Api, match: Match, level: str) -> None:
    stop = asyncio.Event()
    if match.people == 1:
        token, _user = await api.guest()
        info = await api.create_table(token, match.game, match.options)
        match.table_id = int(info["id"])
        me = await WireClient.connect(server, match.table_id, token, name=f"m{match.index}s0")
        await _ghost(server, api, match, token)
        watcher_token, _ = await api.guest()
        match.spectator = await WireClient.connect(
            server, match.table_id, watcher_token, name=f"m{match.index}spec"
        )
        poller = asyncio.create_task(_poll(api, match, token, stop))
        chatter = asyncio.create_task(_chatter([me, match.spectator], stop))
        response = await api.http.post(
            f"/api/tables/{match.table_id}/start",
            json={"bots": True, "level": level},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200, response.text
        await me.wait_until(lambda: me.view is not None)
        match.seats = [me]
        engine, player = engine_and_player(match.game)
        for _ in range(3000):
            view = await _my_turn_or_over(me)
            if view["match_over"]:
                break
            action = dict(engine.action_to_json(player(view)))
            action.pop("seat", None)
            reply = await me.command(action)
            if not reply["payload"]["ok"]:  # a bot moved in between: only a stale seq
                assert reply["payload"]["error"]["code"] in ("stale", "round_break"), reply
    else:
        token, _user = await api.guest()
        info = await api.create_table(token, match.game, match.options)
        table_id = match.table_id = int(info["id"])
        first = await WireClient.connect(server, table_id, token, name=f"m{match.index}s0")
        await _ghost(server, api, match, token)
        # The second person watches first; taking the seat makes that socket the seat's.
        second_token, _ = await api.guest()
        second = await WireClient.connect(server, table_id, second_token, name=f"m{match.index}s1")
        info = await api.join(second_token, table_id)
        assert info["status"] == "playing", info
        await second.wait_until(lambda: second.seat == 1 and second.view is not None)
        match.seats = [first, second]
        tokens = [token, second_token]
        watcher_token, _ = await api.guest()
        match.spectator = await WireClient.connect(
            server, table_id, watcher_token, name=f"m{match.index}spec"
        )
        poller = asyncio.create_task(_poll(api, match, tokens[0], stop))
        chatter = asyncio.create_task(_chatter([first, match.spectator, second], stop))
        await play(match.game, match.seats, until=lambda _v: False, watchers=[match.spectator])
    stop.set()
    await poller
    await chatter
    final = match.seats[0].seq
    for _seat, client in match.clients():
        await client.wait_until(lambda c=client: c.seq == final and c.view is not None)
        assert client.view is not None and client.view["match_over"], client.name
        await client.close()


def _no_match_body(match_id: int) -> dict[str, Any]:
    return {"detail": {"code": "no_such_match", "message": f"there is no match {match_id}"}}


def scan_match(match: Match, record: GameRecord, scan: Scan) -> None:
    """Check every message and REST body of a finished match against its hidden states."""
    hidden = hidden_states(record)
    final = match.seats[0].seq
    assert final is not None
    start = final - len(record.actions)
    seed = record.seed

    def at(n: int) -> Hidden | None:
        return hidden[n - start] if 0 <= n - start < len(hidden) else None

    def leak(where: str, detail: str, message: Any) -> None:
        scan.leaks.append(f"match {match.index} ({match.kind}) {where}: {detail}: "[:400])
        scan.leaks[-1] += json.dumps(message)[:800]

    for seat, client in match.clients():
        who = f"seat {seat}" if seat is not None else "spectator"
        for message in client.messages:
            scan.messages += 1
            scan.chat_messages += message["type"] in ("chat", "chat_history")
            n = message["seq"]
            text = json.dumps(message)
            if n < final and seed in text:
                leak(who, "the match seed before the end", message)
            keys = list(_secret_lists(message["payload"]))
            if keys:
                leak(who, f"a list under {keys}", message)
            if seat is None and _has_hand(message["payload"]):
                leak(who, "a hand sent to a spectator", message)
            now = at(n)
            if now is None:  # before the deal: no card at all
                if visible_cards(message):
                    leak(who, f"cards before the deal at seq {n}", message)
                continue
            if any(secret in text for secret in now.secrets):
                leak(who, "the current round's secret", message)
            body, earlier = message, []
            if message["type"] == "update":
                body, earlier = _split_at_deal(message)
            before = at(n - 1)
            if earlier and before is not None:  # events of a deal that ended in this step
                allowed = before.public | (at(n - 2) or before).public
                for event in _scrub_reveals(earlier):
                    seen = {s for s in _strings(event) if s in ALL_CARDS} - allowed
                    owners = {seat, event.get("seat")}
                    bad = seen & {
                        c for o, hand in enumerate(before.hands) if o not in owners for c in hand
                    }
                    bad |= seen & (set(before.stock) | set(before.dead))
                    if bad:
                        leak(who, f"{sorted(bad)} hidden before seq {n}", message)
            seen = visible_cards(body) - now.public - (before.public if before else set())
            if seat is not None:
                seen -= own_cards(body, seat)
            bad = seen & _forbidden(now, seat)
            if bad:
                leak(who, f"{sorted(bad)} hidden at seq {n}", message)
    for path, body in match.rest:
        scan.rest_bodies += 1
        text = json.dumps(body)
        if path.endswith("/matches"):
            if body and "seed" in text and body[0]["score_sheet"].get("over") is not True:
                leak(f"GET {path}", "a record before the end", body)
            continue
        cards = {s for s in _strings(body) if s in ALL_CARDS}
        if cards:
            leak(f"GET {path}", f"cards {sorted(cards)}", body)
        if seed in text:
            leak(f"GET {path}", "the match seed", body)
    for asked, method, code, body in match.analyses:
        scan.rest_bodies += 1
        where = f"{method} /api/matches/{asked}/analysis"
        if asked != match.match_id:  # another match's: over (no secret now), or no row yet
            if code not in (200, 202, 404, 409, 503):
                leak(where, f"status {code}", body)
            continue
        # Its own: a 404 while in play; the poller's last requests may come just after
        # the end (no analysis yet, or a queued one), and hold no card or seed either way.
        scan.analyses_refused_in_play += code == 404
        if code not in (200, 202, 404, 409, 503):
            leak(where, f"status {code} during play", body)
        if code == 404 and body != _no_match_body(asked):
            leak(where, "a 404 that is not no_such_match", body)
        cards = {s for s in _strings(body) if s in ALL_CARDS}
        if cards:
            leak(where, f"cards {sorted(cards)}", body)
        if seed in json.dumps(body):
            leak(where, "the match seed", body)
    if match.people == 2 and [client.seat for client in match.seats] == [0, 1]:
        assert_no_leaks(match.seats, [match.spectator] if match.spectator else [])
    scan.steps += len(record.actions)
    scan.matches += 1
    scan.by_kind[match.kind] = scan.by_kind.get(match.kind, 0) + 1


async def run(server: ServerProcess, count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    scan = Scan()
    api = Api(server)
    started = time.monotonic()
    queue = list(range(count))
    last: list[tuple[Match, GameRecord]] = []
    over: list[int] = []

    async def worker() -> None:
        while queue:
            index = queue.pop(0)
            game, options, people = KINDS[index % len(KINDS)]
            match = Match(index, game, options, people)
            match.over = over
            await play_match(server, api, match, rng.choice(["simple", "strong"]))
            matches = await api.get(f"/api/tables/{match.table_id}/matches")
            assert len(matches) == 1, matches
            match.match_id = int(matches[0]["id"])
            over.append(match.match_id)
            full = await api.get(f"/api/matches/{matches[0]['id']}")
            record = GameRecord.from_json(full["record"])
            if record.seats and len(record.seats) != len(full["players"]):
                # The served record names only the people's seats (a known server bug,
                # docs/hardening.md); the names play no part in the deal.
                scan.unreplayable_records += 1
                record.seats = []
            scan_match(match, record, scan)
            last.append((match, record))

    try:
        await asyncio.gather(*(worker() for _ in range(min(CONCURRENT, count))))
    finally:
        await api.aclose()
    self_check(*last[-1])
    return {
        "seed": seed,
        "matches_requested": count,
        "matches_scanned": scan.matches,
        "messages_scanned": scan.messages,
        "chat_messages_scanned": scan.chat_messages,
        "rest_bodies_scanned": scan.rest_bodies,
        "analyses_refused_in_play": scan.analyses_refused_in_play,
        "steps": scan.steps,
        "leaks": len(scan.leaks),
        "records_without_bot_seats": scan.unreplayable_records,
        "first_leaks": scan.leaks[:5],
        "by_kind": scan.by_kind,
        "seconds": round(time.monotonic() - started, 1),
    }


def self_check(match: Match, record: GameRecord) -> None:
    """The scan finds planted leaks: a card of another hand, the stock, the seed."""
    hidden = hidden_states(record)
    final = match.seats[0].seq
    assert final is not None and match.spectator is not None
    start = final - len(record.actions)
    n, state = next(
        (start + k, h) for k, h in enumerate(hidden) if h.hands[0] - h.public - set(h.stock)
    )
    card = sorted(state.hands[0] - state.public - set(state.stock))[0]
    plants: list[Message] = [
        {"type": "update", "seq": n, "payload": {"events": [{"type": "x", "card": card}]}},
        {"type": "table", "seq": n, "payload": {"stock": state.stock}},
        {"type": "reaction", "seq": start, "payload": {"name": record.seed}},
        {"type": "chat", "seq": start, "payload": {"id": "x", "text": record.seed}},
        {"type": "chat_history", "seq": n, "payload": {"messages": [{"text": card}]}},
        {"type": "update", "seq": n, "payload": {"events": [], "view": {"hand": [card]}}},
    ]
    for plant in plants:
        planted = Match(match.index, match.game, match.options, 1)
        planted.seats = match.seats
        planted.spectator = WireClient.__new__(WireClient)
        planted.spectator.messages = [plant]
        planted.spectator.name = "planted"
        scan = Scan()
        scan_match(planted, record, scan)
        assert scan.leaks, f"the scan missed a planted leak: {plant}"


def test_hidden_information_never_sent(start_server: Any, request: pytest.FixtureRequest) -> None:
    count = env_count("SAHRAT_LEAK_MATCHES", len(KINDS))  # make hardening: 500
    seed = env_seed("SAHRAT_LEAK_SEED")
    print(f"\nhidden-information scan: {count} matches, SAHRAT_LEAK_SEED={seed}")
    server = start_server(
        SAHRAT_BOT_DELAY_SECONDS="0",
        SAHRAT_TURN_SECONDS_OVERRIDE="600",
        SAHRAT_GRACE_SECONDS="600",
        **NO_RATE_LIMITS,
    )
    results: dict[str, Any] = {"seed": seed, "leaks": None}
    try:
        results = asyncio.run(run(server, count, seed))
    except BaseException as error:
        results["failure"] = repr(error)[:2000]
        raise
    finally:
        write_results("hidden_info", results, request.node)
    assert results["matches_scanned"] == count
    assert results["leaks"] == 0, results["first_leaks"]
    assert results["chat_messages_scanned"] > 0  # the people talked, and it was scanned
    assert results["analyses_refused_in_play"] > 0  # a match's own analysis was asked for


def test_a_bot_match_record_replays(start_server: Any) -> None:
    """``GET /api/matches/{id}`` gives a record ``sahrat replay`` accepts, bots or not."""
    server = start_server(SAHRAT_BOT_DELAY_SECONDS="0", **NO_RATE_LIMITS)

    async def go() -> None:
        api = Api(server)
        try:
            match = Match(0, "conquian", {"wins_needed": 1}, 1)
            await play_match(server, api, match, "simple")
            matches = await api.get(f"/api/tables/{match.table_id}/matches")
            full = await api.get(f"/api/matches/{matches[0]['id']}")
            assert replay(GameRecord.from_json(full["record"])).ok
        finally:
            await api.aclose()

    asyncio.run(go())
