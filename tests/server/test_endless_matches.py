"""Every coin match ends and pays its pot out, even when nobody plays (docs/rules.md
§1.9 and §2.6, docs/economy.md).

The attack: join a coin table and walk away (or get everybody to). The turn timer
plays every seat that is gone: nobody opens in Konkan, every round is void, the
totals stay tied, and extra rounds used to follow one another forever, the stakes
locked in the pot; two leavers at a 3-seat table tied for second place forever; in
Conquian every deal was drawn. Now the extra rounds and the drawn deals are bounded,
then tied places share their prizes, and the ledger balances.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from sahrat.store.ledger import payout_shares

from .harness import (
    Api,
    ServerProcess,
    WireClient,
    auth_headers,
    make_admin,
    play_seat,
)

STAKE = 10
# The table's own bounds are left at their defaults (3 extra rounds, 5 drawn deals):
# these options are valid on a server without them, where the match never ends.
KONKAN = {"players": 3, "rounds": 1, "max_reshuffles": 0}
CONQUIAN = {"wins_needed": 1}
MATCH_SECONDS = 240.0  # far more than a bounded match takes here (10–20 s)
# Replies a live seat may get when the timer moved first.
RACED = {"stale", "not_playing", "not_your_turn", "round_break"}


async def _login(api: Api, admin: tuple[str, str]) -> dict[str, str]:
    response = await api.http.post("/api/login", json={"name": admin[0], "password": admin[1]})
    assert response.status_code == 200, response.text
    return auth_headers(response.json()["token"])


async def _finished(api: Api, table_id: int, timeout: float) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        matches = await api.get(f"/api/tables/{table_id}/matches")
        if matches:
            return dict(matches[0])
        await asyncio.sleep(0.2)
    table = await api.get(f"/api/tables/{table_id}")
    raise AssertionError(f"table {table_id} did not finish in {timeout} s: {table}")


async def _play_seat(client: WireClient, game: str) -> None:
    """One seat played by the simple player until the match is over."""
    await play_seat(client, game, raced=RACED, timeout=120)


async def _abandoned_match(
    server: ServerProcess, admin: tuple[str, str], game: str, live_seats: int
) -> None:
    api = Api(server)
    try:
        boss = await _login(api, admin)
        options = {**(KONKAN if game == "konkan" else CONQUIAN), "stake": STAKE}
        created = await api.http.post(
            "/api/admin/tables", json={"game": game, "options": options}, headers=boss
        )
        assert created.status_code == 201, created.text
        table_id = int(created.json()["id"])
        players = 3 if game == "konkan" else 2
        guests = [await api.guest() for _ in range(players)]
        before = {
            user["id"]: (await api.get("/api/me", token))["balance"] for token, user in guests
        }
        for token, _user in guests:
            info = await api.join(token, table_id)
        assert info["status"] == "playing", info
        token_of = {user["id"]: token for token, user in guests}
        users = [s["user_id"] for s in sorted(info["seats"], key=lambda s: s["seat"])]

        # The first ``live_seats`` seats play; everybody else is gone from the start.
        clients = [
            await WireClient.connect(server, table_id, token_of[users[seat]], name=f"s{seat}")
            for seat in range(live_seats)
        ]
        playing = asyncio.gather(*(_play_seat(client, game) for client in clients))
        await asyncio.wait_for(playing, timeout=MATCH_SECONDS)
        match = await _finished(api, table_id, MATCH_SECONDS)

        pot = STAKE * players
        sheet = match["score_sheet"]
        if game == "konkan":  # 1 round and at most 3 extra rounds
            assert 1 <= len(sheet["rounds"]) <= 4, sheet
        else:  # wins needed 1: one won deal, or at most 5 drawn deals
            assert 1 <= len(sheet["deals"]) <= 5, sheet
        places = sheet.get("places") or None
        shares = payout_shares(pot, players, places, match["winner_seat"])
        assert sum(shares.values()) == pot
        if live_seats == 0:  # nobody played: all tied, every stake comes back
            assert match["winner_seat"] is None
            assert shares == dict.fromkeys(range(players), STAKE)
        if game == "konkan" and places == [1, 2, 2]:  # the leavers share second prize
            assert shares == {0: 21, 1: 5, 2: 4}
        for seat, user_id in enumerate(users):
            balance = (await api.get("/api/me", token_of[user_id]))["balance"]
            assert balance == before[user_id] - STAKE + shares.get(seat, 0), (seat, match)

        check = await api.http.get("/api/admin/ledger/check", headers=boss)
        assert check.status_code == 200 and check.json()["ok"] is True, check.text
        for client in clients:
            await client.close()
    finally:
        await api.aclose()


@pytest.mark.parametrize(
    ("game", "live_seats"),
    [("konkan", 0), ("konkan", 1), ("conquian", 0)],
    ids=["konkan-nobody", "konkan-two-leavers", "conquian-nobody"],
)
def test_an_abandoned_coin_match_ends_and_pays_out(
    module_servers: Callable[..., ServerProcess], game: str, live_seats: int
) -> None:
    # The timer plays absent seats fast (every round of these matches is the timer's
    # turns until the stock runs out), but gives a live seat time to answer; a move
    # the timer made first is one of RACED. The two matches nobody plays share a
    # server: each has its own table, players and admin.
    server = module_servers(SAHRAT_TURN_SECONDS_OVERRIDE="0.05" if live_seats else "0.02")
    admin = make_admin(server.database_url)
    asyncio.run(_abandoned_match(server, admin, game, live_seats))
