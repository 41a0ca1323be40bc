"""Coin tables under stress, on a real server (RULES.md §1.10, issue 5 item 6).

* Many short coin matches (Conquian heads-up, 3-player Konkan) played at once over
  WebSockets by the simple players, some players leaving mid-match (the turn timer
  plays their seat; some come back): afterwards the ledger invariant holds and every
  player's balance is exactly what they had − the stake + their share of the pot,
  computed from the finished matches' results.
* Concurrent joins racing for the last seat of a coin table (one wins, the others
  get 409), and one player racing for their last coins at two tables at once.
* A server SIGKILLed with a move in flight and right after the last move of a coin
  match was acknowledged: after each restart the pot is paid exactly once, and the
  match row and its payout are either both in the database or neither is.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from sahrat.store import ledger
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import GameTable, LedgerEntry, Match

from .harness import (
    Api,
    ServerProcess,
    WireClient,
    auth_headers,
    engine_and_player,
    make_admin,
    play,
    wire_action,
)

STAKE = 10
TURN_SECONDS = 0.15  # the turn timer plays a leaver's seat (and a slow player's)
# Coin matches played at once (make hardening: 33, every kind many times over).
STRESS_MATCHES = int(os.environ.get("SAHRAT_STRESS_MATCHES", "18"))
MATCH_SECONDS = 40.0  # a seat waits at most this long for its next turn or the match's end
# Replies a seat may get when the timer moved first: anything else is a failure.
RACED = {"stale", "not_playing", "round_break"}  # a move racing a round's end


# --- helpers ---------------------------------------------------------------------------


async def login(api: Api, admin: tuple[str, str]) -> dict[str, str]:
    response = await api.http.post("/api/login", json={"name": admin[0], "password": admin[1]})
    assert response.status_code == 200, response.text
    return auth_headers(response.json()["token"])


async def coin_table(api: Api, boss: dict[str, str], game: str, options: dict[str, Any]) -> int:
    created = await api.http.post(
        "/api/admin/tables", json={"game": game, "options": options}, headers=boss
    )
    assert created.status_code == 201, created.text
    assert created.json()["coin_table"] is True
    return int(created.json()["id"])


async def balance(api: Api, token: str) -> int:
    return int((await api.get("/api/me", token))["balance"])


async def ledger_check(api: Api, boss: dict[str, str]) -> dict[str, Any]:
    response = await api.http.get("/api/admin/ledger/check", headers=boss)
    assert response.status_code == 200, response.text
    check = dict(response.json())
    assert check["ok"] is True, check
    assert check["total"] == 0 and check["held"] == check["granted"], check
    return check


def paid_shares(game: str, players: int, match: dict[str, Any]) -> dict[int, int]:
    """Seat -> coins paid out of the pot, from the match's own result (not the ledger),
    by docs/economy.md: prizes by position (the pot with two players; 70 % and the rest
    with three or four), tied seats share the prizes of the positions their place
    covers, rounded down, the odd coins one each in seat order."""
    pot = STAKE * players
    if game == "conquian" or players == 2:
        winner = match["winner_seat"]
        if winner is not None:
            return {int(winner): pot}
        places = [1] * players  # a tie: the pot is shared
    else:
        places = list(match["score_sheet"]["places"])
    first = pot * 70 // 100
    prizes = [pot] if game == "conquian" or players == 2 else [first, pot - first]
    shares: dict[int, int] = {}
    for place in sorted(set(places)):
        tied = [seat for seat, p in enumerate(places) if p == place]
        covered = sum(prizes[place - 1 : place - 1 + len(tied)])
        for index, seat in enumerate(tied):
            share = covered // len(tied) + (1 if index < covered % len(tied) else 0)
            if share:
                shares[seat] = share
    return shares


@dataclass
class DbState:
    status: str
    matches: int
    payouts: list[tuple[str, int]]  # (credit account, amount)
    stakes: int


async def db_state(database: str, table_id: int) -> DbState:
    """What the database says about a table, read directly (no server involved)."""
    engine = make_engine(database)
    try:
        async with make_sessions(engine)() as session:
            status = await session.scalar(select(GameTable.status).where(GameTable.id == table_id))
            matches = (
                await session.scalars(select(Match.id).where(Match.table_id == table_id))
            ).all()
            entries = (
                await session.scalars(select(LedgerEntry).where(LedgerEntry.table_id == table_id))
            ).all()
            report = await ledger.check_invariant(session)
    finally:
        await engine.dispose()
    assert report.ok, report
    return DbState(
        status=str(status),
        matches=len(matches),
        payouts=sorted((e.credit_account, e.amount) for e in entries if e.reason == "payout"),
        stakes=sum(1 for e in entries if e.reason == "stake"),
    )


async def replay_payout(database: str, table_id: int, seats: list[int]) -> int:
    """Post the table's payout movements again, as a retried settlement would."""
    engine = make_engine(database)
    try:
        async with make_sessions(engine)() as session, session.begin():
            entries = (
                await session.scalars(
                    select(LedgerEntry).where(
                        LedgerEntry.table_id == table_id, LedgerEntry.reason == "payout"
                    )
                )
            ).all()
            assert entries
            start = entries[0].match_seq
            shares = {seats.index(ledger.user_of(e.credit_account)): e.amount for e in entries}
            movements = ledger.payout_movements(table_id, start, list(seats), shares)
            return await ledger.post_all(session, movements)
    finally:
        await engine.dispose()


# --- a seat that plays, and maybe walks away ----------------------------------------


@dataclass
class Plan:
    leave_after: int | None = None  # leave after this many own moves
    back_after: int | None = None  # come back after the timer played this many turns


async def seat_loop(
    api: Api, table_id: int, token: str, client: WireClient, game: str, plan: Plan
) -> dict[str, int]:
    """Play one seat with the simple player until the match is over; leave and come
    back as planned. The timer may beat a seat to its move: then the reply is stale."""
    engine, player = engine_and_player(game)
    stats = {"moves": 0, "raced": 0, "timer_turns": 0, "back": 0}
    acted_at: int | None = None
    away = False
    seat = client.seat
    assert seat is not None

    def ready(_m: Any) -> bool:
        view = client.view
        return view is not None and (
            view["match_over"] or (client.may_move and client.seq != acted_at)
        )

    while True:
        await client.wait_for(ready, timeout=MATCH_SECONDS)
        view = client.view
        assert view is not None
        if view["match_over"]:
            return stats
        if not away and plan.leave_after is not None and stats["moves"] >= plan.leave_after:
            response = await api.http.post(
                f"/api/tables/{table_id}/leave", headers=auth_headers(token)
            )
            if response.status_code == 409:  # the match ended meanwhile
                assert response.json()["detail"]["code"] == "not_seated", response.text
                continue
            assert response.status_code == 200, response.text
            away = True
            plan.leave_after = None
        if away:
            acted_at = client.seq  # the timer's turn: just watch it go by
            stats["timer_turns"] += 1
            if plan.back_after is not None and stats["timer_turns"] > plan.back_after:
                # wait for the timer to play this turn, then sit down again
                at = client.seq
                await client.wait_for(
                    lambda _m, at=at: (
                        client.seq != at or bool(client.view and client.view["match_over"])
                    ),
                    timeout=MATCH_SECONDS,
                )
                back = await api.http.post(
                    f"/api/tables/{table_id}/join",
                    json={},
                    headers=auth_headers(token),
                )
                if back.status_code == 200:
                    away = False
                    stats["back"] += 1
                    plan.back_after = None
                else:  # the match (and so the table) is over
                    assert back.status_code == 409, back.text
                    assert back.json()["detail"]["code"] == "table_started", back.text
                    plan.back_after = None
            continue
        acted_at = client.seq
        action = wire_action(engine, player(view))
        reply = (await client.command(action))["payload"]
        if reply["ok"]:
            stats["moves"] += 1
        else:
            assert reply["error"]["code"] in RACED, (action, reply)
            stats["raced"] += 1


@dataclass
class Result:
    table_id: int
    game: str
    users: list[int]  # by seat
    tokens: list[str]
    before: dict[int, int]
    shares: dict[int, int]
    stats: list[dict[str, int]]


async def coin_match(
    server: ServerProcess,
    api: Api,
    boss: dict[str, str],
    game: str,
    options: dict[str, Any],
    plans: list[Plan],
) -> Result:
    players = len(plans)
    table_id = await coin_table(api, boss, game, options)
    guests = [await api.guest() for _ in range(players)]
    before = {user["id"]: await balance(api, token) for token, user in guests}
    assert all(value >= STAKE for value in before.values()), before
    info: dict[str, Any] = {}
    for token, _user in guests:
        info = await api.join(token, table_id)
    assert info["status"] == "playing", info
    token_of = {user["id"]: token for token, user in guests}
    users = [s["user_id"] for s in sorted(info["seats"], key=lambda s: s["seat"])]
    tokens = [token_of[u] for u in users]
    clients = [
        await WireClient.connect(server, table_id, token, name=f"t{table_id}s{seat}")
        for seat, token in enumerate(tokens)
    ]
    try:
        stats = await asyncio.gather(
            *(
                seat_loop(api, table_id, tokens[seat], clients[seat], game, plans[seat])
                for seat in range(players)
            )
        )
    finally:
        for client in clients:
            await client.close()
    matches = await api.get(f"/api/tables/{table_id}/matches")
    assert len(matches) == 1, matches
    return Result(
        table_id, game, users, tokens, before, paid_shares(game, players, matches[0]), stats
    )


# --- (a) many matches, random leavers ----------------------------------------------


CONQUIAN = ("conquian", {"wins_needed": 1, "stake": STAKE})
KONKAN = ("konkan", {"players": 3, "rounds": 1, "stake": STAKE})


def plans_for(rng: random.Random, players: int, index: int) -> list[Plan]:
    plans = [Plan() for _ in range(players)]
    if index % 3 == 0:  # a leaver in every third match; every other leaver comes back
        leaver = rng.randrange(players)
        plans[leaver].leave_after = rng.randint(0, 4)
        if index % 2 == 0:
            plans[leaver].back_after = rng.randint(1, 3)
    return plans


async def _many_matches(server: ServerProcess, admin: tuple[str, str], count: int) -> None:
    rng = random.Random(20251129)
    api = Api(server)
    try:
        boss = await login(api, admin)
        before_check = await ledger_check(api, boss)
        gate = asyncio.Semaphore(12)

        async def one(index: int) -> Result:
            game, options = CONQUIAN if index % 3 != 2 else KONKAN
            plans = plans_for(rng, 3 if game == "konkan" else 2, index)
            async with gate:
                return await coin_match(server, api, boss, game, options, plans)

        results = await asyncio.gather(*(one(i) for i in range(count)))

        left = sum(s["timer_turns"] > 0 for r in results for s in r.stats)
        back = sum(s["back"] for r in results for s in r.stats)
        assert left >= count // 6 and back >= 1, ("too few leavers", left, back)
        for result in results:
            for seat, user_id in enumerate(result.users):
                expected = result.before[user_id] - STAKE + result.shares.get(seat, 0)
                got = await balance(api, result.tokens[seat])
                assert got == expected, (result.game, result.table_id, seat, result.shares)
            book = await api.get("/api/me/ledger", result.tokens[0])
            entries = book["entries"] if isinstance(book, dict) else book
            payouts = [e for e in entries if e["reason"] == "payout"]
            assert len(payouts) == (1 if 0 in result.shares else 0), entries
        check = await ledger_check(api, boss)
        # No coin is created by a coin match: only new accounts' welcome grants.
        welcomed = sum(sum(r.before.values()) for r in results)
        assert check["granted"] == before_check["granted"] + welcomed, (before_check, check)
    finally:
        await api.aclose()


def test_many_coin_matches_with_leavers_keep_the_ledger_balanced(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    admin = make_admin(database, "stress")
    server = start_server(SAHRAT_TURN_SECONDS_OVERRIDE=str(TURN_SECONDS))
    # Every match must end: a seat's wait for its next turn (or the end) is bounded by
    # MATCH_SECONDS without progress; the length of a match, by RULES.md's bounds
    # (tests/server/test_endless_matches.py). No assertion on the run's speed.
    asyncio.run(_many_matches(server, admin, STRESS_MATCHES))


# --- (b) races for the last seat and for the last coins ------------------------------


async def _join_race(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    try:
        boss = await login(api, admin)
        table_id = await coin_table(api, boss, *KONKAN)
        first = [await api.guest() for _ in range(2)]
        for token, _user in first:
            await api.join(token, table_id)
        racers = [await api.guest() for _ in range(8)]
        before = [await balance(api, token) for token, _user in racers]
        answers = await asyncio.gather(
            *(
                api.http.post(
                    f"/api/tables/{table_id}/join",
                    json={},
                    headers=auth_headers(token),
                )
                for token, _user in racers
            )
        )
        codes = [a.status_code for a in answers]
        assert sorted(codes) == [200] + [409] * (len(racers) - 1), [a.text for a in answers]
        for answer in answers:
            if answer.status_code == 409:
                assert answer.json()["detail"]["code"] in ("table_full", "table_started")
        winner = codes.index(200)
        info = await api.get(f"/api/tables/{table_id}")
        assert info["status"] == "playing"
        seated = {s["user_id"] for s in info["seats"]}
        assert seated == {u["id"] for _t, u in first} | {racers[winner][1]["id"]}
        for i, (token, _user) in enumerate(racers):
            assert await balance(api, token) == before[i] - (STAKE if i == winner else 0)

        # One player, two coin tables at once, each for all of their coins.
        rich, rich_user = await api.guest()
        everything = await balance(api, rich)
        tables = []
        for _ in range(2):
            tid = await coin_table(api, boss, "conquian", {"wins_needed": 1, "stake": everything})
            other, _ = await api.guest()
            await api.join(other, tid)
            tables.append(tid)
        answers = await asyncio.gather(
            *(
                api.http.post(f"/api/tables/{tid}/join", json={}, headers=auth_headers(rich))
                for tid in tables
            )
        )
        assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
        lost = next(a for a in answers if a.status_code == 409)
        assert lost.json()["detail"]["code"] == "not_enough_coins", lost.text
        assert await balance(api, rich) == 0
        statuses = sorted([(await api.get(f"/api/tables/{tid}"))["status"] for tid in tables])
        assert statuses == ["playing", "waiting"]
        for tid in tables:
            info = await api.get(f"/api/tables/{tid}")
            mine = [s for s in info["seats"] if s["user_id"] == rich_user["id"]]
            assert len(mine) == (1 if info["status"] == "playing" else 0), info
        await ledger_check(api, boss)
    finally:
        await api.aclose()


def test_joins_race_for_the_last_seat_and_the_last_coins(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    admin = make_admin(database, "stress")
    server = start_server()
    asyncio.run(_join_race(server, admin))


# --- (c) killed around the last move -----------------------------------------------------


async def _connect_all(server: ServerProcess, table_id: int, tokens: list[str]) -> list[WireClient]:
    return [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]


async def _killed_around_the_end(
    server: ServerProcess, admin: tuple[str, str], database: str
) -> None:
    game, options = CONQUIAN
    api = Api(server)
    boss = await login(api, admin)
    table_id = await coin_table(api, boss, game, options)
    guests = [await api.guest() for _ in range(2)]
    before = {user["id"]: await balance(api, token) for token, user in guests}
    info: dict[str, Any] = {}
    for token, _user in guests:
        info = await api.join(token, table_id)
    token_of = {user["id"]: token for token, user in guests}
    users = [s["user_id"] for s in sorted(info["seats"], key=lambda s: s["seat"])]
    tokens = [token_of[u] for u in users]
    clients = await _connect_all(server, table_id, tokens)

    # 1. A few moves, then a move sent and the server killed before it is answered.
    steps = iter(range(7))
    await play(game, clients, until=lambda _view: next(steps, 6) >= 6)
    engine, player = engine_and_player(game)
    view = clients[0].view
    assert view is not None
    if not view["match_over"]:
        actor = clients[view["turn"]]
        assert actor.view is not None
        await actor.send(
            {
                "type": "command",
                "cid": "in-flight",
                "seq": actor.seq,
                "action": wire_action(engine, player(actor.view)),
            }
        )
    server.kill()
    await api.aclose()
    for client in clients:
        await client.close()
    state = await db_state(database, table_id)
    assert state.stakes == 2
    assert (state.matches, len(state.payouts)) in ((0, 0), (1, 1)), state

    # 2. Restarted: the match goes on from what was durable, to its last move; the
    # server is killed as soon as that move is acknowledged.
    server.start()
    clients = await _connect_all(server, table_id, tokens)
    await play(game, clients, until=lambda view: False)
    server.kill()
    for client in clients:
        await client.close()
    state = await db_state(database, table_id)
    # The last move was acknowledged: it is durable, and with it the match and its payout.
    assert state.status == "finished" and state.matches == 1, state
    assert len(state.payouts) == 1 and state.payouts[0][1] == 2 * STAKE, state

    # 3. Restarted again: nothing is paid twice; replaying the settlement is a no-op.
    server.start()
    api = Api(server)
    try:
        boss = await login(api, admin)
        assert await replay_payout(database, table_id, users) == 0
        again = await db_state(database, table_id)
        assert again == state
        matches = await api.get(f"/api/tables/{table_id}/matches")
        assert len(matches) == 1
        shares = paid_shares(game, 2, matches[0])
        assert state.payouts == [(ledger.user_account(users[s]), a) for s, a in shares.items()]
        for seat, user_id in enumerate(users):
            expected = before[user_id] - STAKE + shares.get(seat, 0)
            assert await balance(api, tokens[seat]) == expected
        await ledger_check(api, boss)
    finally:
        await api.aclose()


def test_a_server_killed_around_the_last_move_pays_exactly_once(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    admin = make_admin(database, "stress")
    server = start_server()
    asyncio.run(_killed_around_the_end(server, admin, database))
