"""A private table on a live server: a stranger who knows (or guesses) its id is told,
on every route and on the WebSocket, exactly what they would be told for an id that
does not exist; its creator, its players and a holder of its invite code get in."""

from __future__ import annotations

import asyncio
from typing import Any

from .harness import Api, ServerProcess, auth_headers
from .sockets import greeting_or_close, socket_url

MISSING = 2_000_000_000  # an id in range that no table has


async def _stranger_sees(api: Api, table_id: int, token: str) -> list[tuple[str, int, Any]]:
    """What a stranger gets from every route of a table: (route, status, error code)."""
    headers = auth_headers(token)
    calls = [
        ("get", api.http.get(f"/api/tables/{table_id}")),
        ("get as a player", api.http.get(f"/api/tables/{table_id}", headers=headers)),
        ("join", api.http.post(f"/api/tables/{table_id}/join", json={}, headers=headers)),
        (
            "join seat 1",
            api.http.post(f"/api/tables/{table_id}/join", json={"seat": 1}, headers=headers),
        ),
        ("leave", api.http.post(f"/api/tables/{table_id}/leave", headers=headers)),
        ("start", api.http.post(f"/api/tables/{table_id}/start", json={}, headers=headers)),
        ("matches", api.http.get(f"/api/tables/{table_id}/matches", headers=headers)),
        ("matches without token", api.http.get(f"/api/tables/{table_id}/matches")),
        ("wrong code", api.http.get(f"/api/tables/{table_id}?invite=nope", headers=headers)),
        ("non-ASCII code", api.http.get(f"/api/tables/{table_id}?invite=%C3%A9", headers=headers)),
    ]
    seen = []
    for route, call in calls:
        response = await call
        body = response.json()
        code = body["detail"]["code"] if response.status_code == 404 else body
        seen.append((route, response.status_code, code))
    return seen


async def _private_table(server: ServerProcess) -> None:
    api = Api(server)
    creator, _ = await api.guest()
    stranger, _ = await api.guest()
    holder, holder_user = await api.guest()
    friend, _ = await api.guest()
    created = await api.http.post(
        "/api/tables",
        json={"game": "konkan", "options": {"players": 3}, "private": True},
        headers=auth_headers(creator),
    )
    assert created.status_code == 201, created.text
    table_id, code = created.json()["id"], created.json()["invite_code"]
    assert code

    # A stranger learns nothing: every answer is the one for a table that does not exist.
    assert await _stranger_sees(api, table_id, stranger) == [
        (route, 404, "no_such_table")
        for route, _, _ in await _stranger_sees(api, MISSING, stranger)
    ]
    assert table_id not in [t["id"] for t in await api.get("/api/tables?limit=200")]
    assert await greeting_or_close(await socket_url(server, table_id, stranger)) == 4404
    wrong = await socket_url(server, table_id, stranger, invite="nope")
    assert await greeting_or_close(wrong) == 4404

    # The creator sees it; the invite code lets its holder watch, then sit down.
    seen = await api.get(f"/api/tables/{table_id}", creator)
    assert seen["invite_code"] == code
    seen = await api.get(f"/api/tables/{table_id}?invite={code}", holder)
    assert seen["invite_code"] is None  # shown only to the creator and the seated
    watch = await socket_url(server, table_id, holder, invite=code)
    assert await greeting_or_close(watch) is None
    joined = await api.http.post(
        f"/api/tables/{table_id}/join", json={"invite_code": code}, headers=auth_headers(holder)
    )
    assert joined.status_code == 200, joined.text
    assert holder_user["id"] in [seat["user_id"] for seat in joined.json()["seats"]]
    assert joined.json()["invite_code"] == code
    # Seated, the holder needs the code no more: the table, its socket, its matches.
    await api.get(f"/api/tables/{table_id}", holder)
    assert await greeting_or_close(await socket_url(server, table_id, holder)) is None
    assert await api.get(f"/api/tables/{table_id}/matches", holder) == []
    # The invite route seats the last player; the match starts, still private.
    by_invite = await api.http.post(
        "/api/tables/join", json={"invite_code": code}, headers=auth_headers(friend)
    )
    assert by_invite.status_code == 200, by_invite.text
    assert by_invite.json()["status"] == "playing"
    assert [status for _, status, _ in await _stranger_sees(api, table_id, stranger)] == [404] * 10
    assert await greeting_or_close(await socket_url(server, table_id, stranger)) == 4404
    await api.aclose()


def test_a_private_table_is_a_404_to_strangers(module_server: ServerProcess) -> None:
    asyncio.run(_private_table(module_server))


async def _ids_out_of_range(server: ServerProcess) -> list[int | None]:
    api = Api(server)
    token, _ = await api.guest()
    await api.aclose()
    codes = []
    for table_id in (2**31, 0, 10**30):
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?ticket=x&token={token}"
        codes.append(await greeting_or_close(url))
    return codes


def test_a_socket_to_an_id_out_of_range_is_a_4404(module_server: ServerProcess) -> None:
    assert asyncio.run(_ids_out_of_range(module_server)) == [4404, 4404, 4404]
