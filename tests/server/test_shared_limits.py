"""No single network can use up a limit shared by everybody: a live server, flooded by
one actor as fast as it can, still lets a newcomer from another network in while the
flood goes on.

* Sign-ups with the real limits: one IPv4 address and one IPv6 /56 (from as many /64s
  as it likes) each get at most their ten accounts an hour, and a newcomer signs up.
* With the per-network limit raised far above the server-wide one (as a site whose
  players share a few big networks would set it), one network still takes only its
  share of the server-wide bucket, and a newcomer signs up.
* The same for the server-wide login bucket: a flood of logins from one network takes
  its share, and a player signing in from another network gets in.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Awaitable, Callable

import httpx

from .harness import ServerProcess

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "the shared limits are buckets in each process's memory (Redis in a cluster)"

REAL_SIGN_UP_LIMITS = {
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "10",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "60",
    "SAHRAT_NETWORK_SHARE_PERCENT": "10",
}
NEWCOMER = "192.0.2.200"
MAX_TRIES = 400  # a flood that is never refused stops here (and fails the test)
WORKERS = 4  # requests each flood keeps in flight


def _from(address: str) -> dict[str, str]:
    """As the trusted proxy (127.0.0.1) sends a request of a client at ``address``."""
    return {"X-Forwarded-For": address}


async def _flooding(
    send: Callable[[], Awaitable[int]], statuses: list[int], stop: asyncio.Event
) -> None:
    """Send, each time the previous answer came, until told to stop."""
    while not stop.is_set() and len(statuses) < MAX_TRIES:
        statuses.append(await send())


async def _during_floods(
    floods: list[Callable[[], Awaitable[int]]], newcomer: Callable[[], Awaitable[httpx.Response]]
) -> tuple[list[list[int]], httpx.Response]:
    """Each flood's statuses, and the newcomer's answer, sent once every flood has been
    refused at least once (it has used up what it may) and while they all go on."""
    stop = asyncio.Event()
    found: list[list[int]] = [[] for _ in floods]
    tasks = [
        asyncio.create_task(_flooding(send, statuses, stop))
        for send, statuses in zip(floods, found, strict=True)
        for _ in range(WORKERS)
    ]
    while not all(429 in statuses or len(statuses) >= MAX_TRIES for statuses in found):
        await asyncio.sleep(0.02)
    try:
        answer = await newcomer()
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    return found, answer


def _guests(http: httpx.AsyncClient, addresses: list[str]) -> Callable[[], Awaitable[int]]:
    """A guest from each address in turn."""
    turn = itertools.cycle(addresses)

    async def send() -> int:
        return (await http.post("/api/guests", headers=_from(next(turn)))).status_code

    return send


async def _sign_ups(server: ServerProcess, floods: list[list[str]]) -> tuple[list[list[int]], int]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:

        async def newcomer() -> httpx.Response:
            body = {"name": f"new-{secrets.token_hex(3)}", "password": "a newcomer's password"}
            return await http.post("/api/users", json=body, headers=_from(NEWCOMER))

        found, answer = await _during_floods([_guests(http, a) for a in floods], newcomer)
    assert answer.status_code in (201, 429), answer.text
    return found, answer.status_code


def test_one_network_cannot_use_up_the_sign_ups_of_everybody(
    start_server: Callable[..., ServerProcess],
) -> None:
    one_address = ["198.51.100.7"]
    one_slash_56 = [f"2001:db8:0:{i:x}::1" for i in range(1, 256)]  # its /64s, in turn
    made, newcomer = asyncio.run(
        _sign_ups(start_server(**REAL_SIGN_UP_LIMITS), [one_address, one_slash_56])
    )
    assert newcomer == 201
    for statuses in made:
        # six at once (a tenth of the sixty a minute), and never more than ten an hour
        assert 6 <= statuses.count(201) <= 10 and set(statuses) == {201, 429}, statuses


def test_one_network_takes_only_its_share_of_the_server_wide_sign_ups(
    start_server: Callable[..., ServerProcess],
) -> None:
    env = {**REAL_SIGN_UP_LIMITS, "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "1000"}
    (statuses,), newcomer = asyncio.run(_sign_ups(start_server(**env), [["198.51.100.8"]]))
    assert newcomer == 201
    # a tenth of the sixty a minute (and the one each ten seconds of refill may add)
    assert 6 <= statuses.count(201) <= 10 and set(statuses) == {201, 429}, statuses


async def _logins(server: ServerProcess) -> tuple[list[int], int]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        name, password = f"p-{secrets.token_hex(3)}", "a player's password"
        made = await http.post(
            "/api/users", json={"name": name, "password": password}, headers=_from("192.0.2.9")
        )
        assert made.status_code == 201, made.text

        async def guess() -> int:  # a name and a password from a leaked list
            body = {"name": f"n{secrets.token_hex(4)}", "password": "guess"}
            response = await http.post("/api/login", json=body, headers=_from("198.51.100.9"))
            return response.status_code

        async def player() -> httpx.Response:  # from a network they never signed in from
            body = {"name": name, "password": password}
            return await http.post("/api/login", json=body, headers=_from(NEWCOMER))

        (flood,), answer = await _during_floods([guess], player)
    assert answer.status_code in (200, 429), answer.text
    return flood, answer.status_code


def test_one_network_cannot_use_up_the_logins_of_everybody(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(
        SAHRAT_LOGINS_PER_ADDRESS_MINUTE="1000",
        SAHRAT_LOGINS_PER_ADDRESS_NAME_HOUR="1000",
        SAHRAT_LOGINS_PER_NAME_HOUR="1000",
        SAHRAT_LOGINS_PER_MINUTE="10",
        SAHRAT_NETWORK_SHARE_PERCENT="10",
    )
    flood, player = asyncio.run(_logins(server))
    assert player == 200
    # a tenth of the ten a minute (and the one a minute's refill may add)
    assert 1 <= flood.count(401) <= 2 and set(flood) == {401, 429}, flood
