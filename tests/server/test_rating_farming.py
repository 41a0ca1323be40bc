"""Farming ratings is pointless (docs/rating.md, "What a match is rated against"),
attacked on a live server (SQLite, then PostgreSQL) over the WebSocket.

A farm feeds one account's rating from accounts it throws matches with: the same
partner again and again, fresh guests, a seat that leaves at once, or a match cut as
short as the table allows. Each is tried here: the farmed rating does not move, and
every rating that does move is openskill's own update against the opponents that
count.
"""

from __future__ import annotations

import asyncio
from typing import Any

from openskill.models import PlackettLuce

from .harness import Api, ServerProcess, WireClient, make_admin, play_seat
from .test_rated_play import (
    PLAYED_ENV,
    engine_places,
    expected_after,
    finished_match,
    join,
    login,
    ratings_message,
)

MODULE_SERVER_ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "100",
    "SAHRAT_RATED_REPEAT_LIMIT": "1",  # one rated match a day between two accounts counts
    **PLAYED_ENV,
}


async def _rated_table(api: Api, boss: str, options: dict[str, Any]) -> int:
    response = await api.http.post(
        "/api/admin/tables",
        json={"game": "konkan", "options": options, "rated": True},
        headers={"Authorization": f"Bearer {boss}"},
    )
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


async def _play(
    server: ServerProcess, api: Api, boss: str, tokens: list[str], options: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The accounts ``tokens`` (seats in that order) play a whole rated match; its row
    and the ``ratings`` message's changes."""
    table_id = await _rated_table(api, boss, {"players": len(tokens), **options})
    for token in tokens:
        await join(api, token, table_id)  # the last one fills the table: dealt
    clients = [
        await WireClient.connect(server, table_id, token, name=f"seat {seat}")
        for seat, token in enumerate(tokens)
    ]
    try:
        await asyncio.gather(*(play_seat(client, "konkan") for client in clients))
        match = await finished_match(api, table_id)
        return match, (await ratings_message(clients[0]))["changes"]
    finally:
        for client in clients:
            await client.close()


async def _pool(api: Api, user_id: int) -> dict[str, Any] | None:
    pools = (await api.get(f"/api/users/{user_id}/ratings"))["pools"]
    return pools[0] if pools else None


async def _repeat_partner(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    try:
        boss = await login(api, admin)
        (farmer, me), (partner, _), (stranger, _) = [await api.account() for _ in range(3)]
        one_round = {"rounds": 1}
        # the first match of the two: both rated, openskill's update of the two
        match, changes = await _play(server, api, boss, [farmer, partner], one_round)
        want = expected_after(engine_places(match), bots=set())
        assert [(c["after"], c["unrated"]) for c in changes] == [
            (want[0][0], None),
            (want[1][0], None),
        ]
        first = await _pool(api, int(me["id"]))
        assert first is not None and first["games"] == 1

        # the same two again within the day: nobody's rating moves, nothing is stored
        _, changes = await _play(server, api, boss, [farmer, partner], one_round)
        assert [(c["before"] == c["after"], c["unrated"]) for c in changes] == [
            (True, "repeat"),
            (True, "repeat"),
        ]
        again = await _pool(api, int(me["id"]))
        assert again == first  # same rating, games and history

        # three at a table, the partner among them: neither the farmer nor the partner
        # is rated, not even against the stranger; the stranger (new) against both
        before = [await _last_rating(api, boss, int(change["user_id"])) for change in changes]
        match, changes = await _play(server, api, boss, [farmer, partner, stranger], one_round)
        places = engine_places(match)
        ranks = [1 + sum(other < place for other in places) for place in places]
        new = (25.0, 25.0 / 3)
        assert [(c["before"] == c["after"], c["unrated"]) for c in changes[:2]] == [
            (True, "repeat"),
            (True, "repeat"),
        ]
        assert (changes[2]["after"], changes[2]["unrated"]) == (
            _shown_after([new, *before], ranks[2:] + ranks[:2]),
            None,
        )
        assert await _pool(api, int(me["id"])) == first
    finally:
        await api.aclose()


async def _last_rating(api: Api, boss: str, user_id: int) -> tuple[float, float]:
    """A player's mu and sigma now, from the admins' view of their history."""
    history = (await api.get(f"/api/admin/players/{user_id}/ratings", boss))["history"]
    return float(history[-1]["mu"]), float(history[-1]["sigma"])


def _shown_after(ratings: list[tuple[float, float] | None], ranks: list[int]) -> int:
    """The first player's shown number after openskill's update of these one-player
    teams (mu, sigma) by ``ranks``."""
    model = PlackettLuce()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]  # type: ignore[misc]
    return round(1500 + 40 * (model.rate(teams, ranks=ranks)[0][0].mu - 25))


def test_the_same_partner_feeds_a_rating_once_a_day(module_server: ServerProcess) -> None:
    asyncio.run(_repeat_partner(module_server, make_admin(module_server.database_url)))


async def _guests(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    try:
        boss = await login(api, admin)
        farmer, me = await api.account()
        for _ in range(2):  # a fresh guest each time, who plays the whole match
            guest, _ = await api.guest()
            match, changes = await _play(server, api, boss, [farmer, guest], {"rounds": 1})
            want = expected_after(engine_places(match), bots=set())
            # the guest is rated against the account; the account against nobody
            assert [(c["before"], c["after"], c["unrated"]) for c in changes] == [
                (1500, 1500, "no_opponent"),
                (1500, want[1][0], None),
            ]
        assert await _pool(api, int(me["id"])) is None  # no rating stored, no games
    finally:
        await api.aclose()


def test_guests_feed_nobody(module_server: ServerProcess) -> None:
    asyncio.run(_guests(module_server, make_admin(module_server.database_url)))
