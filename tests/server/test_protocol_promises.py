"""What docs/protocol.md promises, held against a live server: a command resent
long after it was accepted (up to the 2048 remembered per table) gets its first
answer again, not ``stale``; the view a client builds from 300 updates' changes is the
server's (a ``resync``'s snapshot); a ``ping`` carries nothing but its type."""

from __future__ import annotations

import asyncio

from .harness import Api, ServerProcess, WireClient, engine_and_player, seated_table, wire_action

REMEMBERED = 2048  # docs/protocol.md, "Commands"
LATER = 300  # accepted commands between the first one and its resend


async def _late_resend(server: ServerProcess) -> None:
    api = Api(server)
    try:
        options = {"players": 2, "rounds": 20, "break_seconds": 0}
        table_id, tokens, _info = await seated_table(api, "konkan", options, 2)
        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{seat}")
            for seat, token in enumerate(tokens)
        ]
        engine, player = engine_and_player("konkan")
        first: tuple[WireClient, str, int] | None = None
        accepted = 0
        while accepted <= LATER:
            seq = max(client.seq or 0 for client in seats)
            for client in seats:
                await client.wait_seq(seq)
            view = seats[0].view
            assert view is not None and not view["match_over"], "the match ended too soon"
            actor = seats[view["turn"]]
            assert actor.view is not None
            cid = f"move-{accepted}"
            reply = await actor.command(wire_action(engine, player(actor.view)), cid=cid)
            assert reply["payload"] == {"cid": cid, "ok": True}, reply
            if first is None:
                first = (actor, cid, seq)
            accepted += 1
        assert first is not None and LATER < REMEMBERED
        client, cid, seq = first
        reply = await client.command({"type": "draw"}, seq=seq, cid=cid)
        assert reply["payload"] == {"cid": cid, "ok": True}, reply
        for seat in seats:  # docs/protocol.md, "Updates": the changes add up to the view
            held, after = seat.view, len(seat.messages)
            await seat.send({"type": "resync"})
            snapshot = await seat.wait_for(lambda m: m["type"] == "snapshot", after=after)
            assert snapshot["payload"]["view"] == held, seat.name
            assert sum(m["payload"]["view"] is not None for m in seat.of_type("update")) == 0
        for seat in seats:
            await seat.close()
    finally:
        await api.aclose()


def test_a_late_resend_gets_its_first_answer(module_server: ServerProcess) -> None:
    asyncio.run(_late_resend(module_server))


async def _pings(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, _ = await api.guest()
        info = await api.create_table(token, "conquian", {})
        client = await WireClient.connect(server, info["id"], token, name="pinger")
        index = await client.send({"type": "ping", "extra": 1})
        answer = await client.wait_for(lambda m: m["type"] in ("pong", "error"), after=index)
        assert answer["type"] == "error" and answer["payload"]["code"] == "bad_message", answer
        index = await client.send({"type": "ping"})
        answer = await client.wait_for(lambda m: m["type"] in ("pong", "error"), after=index)
        assert answer["type"] == "pong", answer
        await client.close()
    finally:
        await api.aclose()


def test_a_ping_is_its_type_only(module_server: ServerProcess) -> None:
    asyncio.run(_pings(module_server))
