"""A terminal client: ``sahrat play``. Sign in as a guest, create or join a table,
and play it over the WebSocket protocol — by typing moves, or with ``--auto``
letting the simple player move for you.

Typed moves (Konkan): ``draw``, ``discard 7H``, ``lay 7H 8H 9H / 2S 3S 4S``,
``take 7H 8H 9H`` (take the discard with the meld that uses it),
``layoff 3 TH`` (on meld 3), ``swap 2 6H`` (take meld 2's joker), ``commit``,
``end``. Conquian: ``take 4H 5H 6H / ...`` (your whole new arrangement),
``refuse``, ``pass``, ``discard QS``, ``force``, ``decline``. Anything starting
with ``{`` is sent as a raw action. ``quit`` leaves.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import httpx
import websockets

from sahrat.rules.record import engine_for
from sahrat.view_changes import apply_update


def parse_move(text: str, game: str) -> dict[str, Any]:
    """A typed move as an action (without its seat); raises ValueError when unclear."""
    text = text.strip()
    if text.startswith("{"):
        action: dict[str, Any] = json.loads(text)
        return action
    word, _, rest = text.partition(" ")
    word = word.lower()
    groups = [group.split() for group in rest.split("/") if group.split()]
    simple = {
        "draw": "draw",
        "commit": "commit",
        "end": "end_turn",
        "refuse": "refuse",
        "pass": "pass",
        "force": "force",
        "decline": "decline_force",
        "redeal": "claim_redeal",
    }
    if word in simple and not rest.strip():
        return {"type": simple[word]}
    if word == "discard" and len(rest.split()) == 1:
        return {"type": "discard", "card": rest.strip()}
    if word == "lay" and groups:
        return {"type": "lay_down", "melds": groups}
    if word == "take":
        if game == "conquian":
            return {"type": "take", "melds": groups}
        return {"type": "take_discard", "melds": groups}
    if word == "layoff":
        meld, *cards = rest.split()
        return {"type": "lay_down", "lay_offs": [{"meld": int(meld), "cards": cards}]}
    if word == "swap":
        meld, *cards = rest.split()
        return {"type": "swap_joker", "meld": int(meld), "cards": cards}
    raise ValueError(f"cannot read {text!r}; see `sahrat play --help`")


def describe_view(view: dict[str, Any] | None, seat: int | None) -> str:
    if view is None:
        return "waiting for players…"
    lines = []
    if view.get("game") == "konkan":
        lines.append(
            f"round {view['round']}  turn: seat {view['turn']}  phase: {view['phase']}  "
            f"stock {view['stock_count']}  discard top: {view['discard_top']}"
        )
        for meld in view["melds"]:
            joker = f" (JK={'/'.join(meld['joker_for'])})" if meld["joker_for"] else ""
            lines.append(
                f"  meld {meld['id']} of seat {meld['owner']}: {' '.join(meld['cards'])}{joker}"
            )
        lines.append(f"  totals {view['totals']}  hand sizes {view['hand_counts']}")
    else:
        lines.append(
            f"turn: seat {view.get('turn')}  phase: {view.get('phase')}  "
            f"face up: {view.get('face_up')}"
        )
        for owner, melds in enumerate(view.get("melds", [])):
            lines.append(f"  seat {owner} melds: {' | '.join(' '.join(m) for m in melds)}")
    if seat is not None and "hand" in view:
        lines.append(f"your hand (seat {seat}): {' '.join(view['hand'])}")
    if view.get("match_over") or view.get("over"):
        lines.append("the match is over")
    return "\n".join(lines)


async def play(
    server: str,
    game: str,
    table: int | None,
    invite: str | None,
    options: dict[str, Any],
    auto: bool,
    bots: str | None = None,
) -> int:
    """Play one table to the end of its match (or watch it, when it has started)."""
    async with httpx.AsyncClient(base_url=server, timeout=10) as http:
        guest = (await http.post("/api/guests")).json()
        headers = {"Authorization": f"Bearer {guest['token']}"}
        print(f"signed in as {guest['user']['name']}")
        if invite:
            response = await http.post(
                "/api/tables/join", json={"invite_code": invite}, headers=headers
            )
        elif table is not None:
            response = await http.post(f"/api/tables/{table}/join", json={}, headers=headers)
        else:
            response = await http.post(
                "/api/tables", json={"game": game, "options": options}, headers=headers
            )
        detail = response.json().get("detail") if response.status_code >= 400 else None
        if (
            table is not None
            and isinstance(detail, dict)
            and detail.get("code")
            in (
                "table_started",
                "table_full",
            )
        ):
            print(f"table {table} is playing: watching as a spectator")
            response = await http.get(f"/api/tables/{table}", headers=headers)
            detail = response.json().get("detail") if response.status_code >= 400 else None
        if detail is not None:
            print(f"refused: {detail}", file=sys.stderr)
            return 1
        info = response.json()
        if bots and table is None and invite is None:
            started = await http.post(
                f"/api/tables/{info['id']}/start",
                json={"bots": True, "level": bots},
                headers=headers,
            )
            if started.status_code >= 400:
                print(f"refused: {started.json().get('detail')}", file=sys.stderr)
                return 1
        # The socket opens with a one-time ticket: the token never goes in a URL.
        ticket = await http.post(f"/api/tables/{info['id']}/ticket", headers=headers)
        if ticket.status_code >= 400:
            print(f"refused: {ticket.json().get('detail')}", file=sys.stderr)
            return 1
    game = info["game"]
    print(f"table {info['id']} ({game}); others join with: sahrat play --table {info['id']}")
    ws_url = (
        server.replace("http", "ws", 1)
        + f"/ws/tables/{info['id']}?ticket={ticket.json()['ticket']}"
    )
    engine = engine_for(game)
    async with websockets.connect(ws_url, max_size=2**22) as socket:
        state: dict[str, Any] = {"seq": 0, "view": None, "seat": None, "pause": None}
        loop = asyncio.get_running_loop()

        async def send(action: dict[str, Any]) -> None:
            message = {
                "type": "command",
                "cid": uuid.uuid4().hex,
                "seq": state["seq"],
                "action": action,
            }
            await socket.send(json.dumps(message))

        async def reader() -> None:
            async for raw in socket:
                message = json.loads(raw)
                state["seq"] = message["seq"]
                payload = message["payload"]
                kind = message["type"]
                if kind in ("snapshot", "resume"):
                    snap = payload if kind == "snapshot" else payload["snapshot"]
                    state["seat"], state["view"] = snap["seat"], snap["view"]
                    state["pause"] = snap.get("round_break")
                    print(describe_view(state["view"], state["seat"]))
                elif kind == "update":
                    state["view"] = apply_update(state["view"], payload)
                    state["pause"] = payload.get("round_break")
                    for event in payload["events"]:
                        print("  ·", json.dumps(event, ensure_ascii=False))
                    print(describe_view(state["view"], state["seat"]))
                elif kind == "break":
                    state["pause"] = payload["round_break"]
                    if state["pause"] is None:
                        print("the next round is on")
                pause = state["pause"]
                if pause and state["seat"] in pause["waiting"] and kind != "break":
                    if auto:
                        await socket.send('{"type": "continue"}')
                    else:
                        print("the round is over: type `continue` to play the next one")
                elif kind == "reply" and not payload["ok"]:
                    print(f"refused: {payload['error']['code']}: {payload['error']['message']}")
                elif kind == "error":
                    print(f"error: {payload['code']}: {payload['message']}")
                view = state["view"]
                if view and (view.get("match_over") or view.get("over")) and auto:
                    return
                if (
                    auto
                    and view
                    and view.get("turn") == state["seat"]
                    and state["pause"] is None
                    and kind in ("snapshot", "update", "resume", "break")
                ):
                    from sahrat.simulate import bot_for

                    action = engine.action_to_json(bot_for(game)(view))
                    action.pop("seat", None)
                    await send(action)

        reading = asyncio.create_task(reader())
        if auto:
            await reading
            await _tell_the_record(server, info["id"])
            return 0
        while not reading.done():
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or line.strip() == "quit":
                break
            if not line.strip():
                continue
            if line.strip() == "continue":
                await socket.send('{"type": "continue"}')
                continue
            try:
                await send(parse_move(line, game))
            except (ValueError, json.JSONDecodeError) as error:
                print(error)
        reading.cancel()
    view = state["view"]
    if view and (view.get("match_over") or view.get("over")):
        await _tell_the_record(server, info["id"])
    return 0


async def _tell_the_record(server: str, table_id: int) -> None:
    """Where the finished match is kept, and how to check its shuffles."""
    async with httpx.AsyncClient(base_url=server, timeout=10) as http:
        response = await http.get(f"/api/tables/{table_id}/matches")
        matches = response.json() if response.status_code == 200 else []
    if not matches:
        return
    match_id = matches[-1]["id"]
    print(f"match {match_id} is over; its record: {server}/api/matches/{match_id}")
    print(f"check its shuffles: curl -s {server}/api/matches/{match_id} > match.json")
    print("                    sahrat verify match.json")
