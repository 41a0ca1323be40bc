"""Every bad message gets the right answer, and nothing is applied: duplicate
command ids, stale seqs, moves out of turn, malformed or oversized messages,
a spectator's command, illegal moves; and the WebSocket's refusal codes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from sahrat.bots import simple_conquian
from sahrat.rules import conquian

from .harness import Api, ServerProcess, WireClient, seated_table, wire_action

ENGINE_CODES = {"not_your_turn", "wrong_phase", "card_not_in_hand", "invalid_meld", "bad_card"}


class Table:
    def __init__(self, seats: list[WireClient], watcher: WireClient) -> None:
        self.seats = seats
        self.watcher = watcher
        self.everyone = [*seats, watcher]

    @property
    def seq(self) -> int:
        assert self.seats[0].seq is not None
        return self.seats[0].seq

    @property
    def actor(self) -> WireClient:
        view = self.seats[0].view
        assert view is not None
        return self.seats[view["turn"]]

    @property
    def waiter(self) -> WireClient:
        return self.seats[1 - self.everyone.index(self.actor)]

    async def nothing_applied(self, seq: int, marks: list[int]) -> None:
        """After a round trip on every connection: no update since ``marks``, same seq."""
        for client, mark in zip(self.everyone, marks, strict=True):
            await client.roundtrip()
            updates = [m for m in client.messages[mark:] if m["type"] == "update"]
            assert not updates, (client.name, updates)
            assert client.seq == seq, (client.name, client.seq, seq)

    def marks(self) -> list[int]:
        return [len(client.messages) for client in self.everyone]

    async def refused(
        self, client: WireClient, action: Any, code: str, *, seq: int | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Send a command that must be refused with ``code``; check nothing happened."""
        before, marks = self.seq, self.marks()
        reply = await client.command(action, seq=seq, **kw)
        payload = reply["payload"]
        assert payload["ok"] is False and payload["error"]["code"] == code, reply
        assert payload["error"]["message"]
        assert reply["seq"] == before
        await self.nothing_applied(before, marks)
        return dict(payload)

    async def error(self, client: WireClient, raw: Any, code: str) -> dict[str, Any]:
        """Send a non-command message that must get an ``error`` with ``code``."""
        before, marks = self.seq, self.marks()
        index = await client.send(raw)
        message = await client.wait_for(lambda m: m["type"] == "error", after=index)
        assert message["payload"]["code"] == code, message
        assert message["seq"] == before
        replies = [m for m in client.messages[index:] if m["type"] == "reply"]
        assert not replies, replies
        await self.nothing_applied(before, marks)
        return dict(message["payload"])


async def _bad_commands(server: ServerProcess) -> None:
    api = Api(server)
    try:
        table_id, tokens, _info = await seated_table(api, "conquian", {"wins_needed": 1}, 2)
        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{seat}")
            for seat, token in enumerate(tokens)
        ]
        watcher_token, _ = await api.guest()
        watcher = await WireClient.connect(server, table_id, watcher_token, name="watcher")
        t = Table(seats, watcher)
        actor, waiter = t.actor, t.waiter
        assert actor.view is not None
        good = wire_action(conquian, simple_conquian.act(actor.view))

        # Out of turn: the other seat plays the actor's move.
        await t.refused(waiter, good, "not_your_turn")
        # Stale: a seq behind or ahead gets the current snapshot.
        for wrong in (t.seq - 1, t.seq + 5):
            payload = await t.refused(actor, good, "stale", seq=wrong)
            snapshot = payload["snapshot"]
            assert snapshot["table"]["seq"] == t.seq
            assert snapshot["seat"] == actor.seat
            assert snapshot["view"]["hand"] == actor.view["hand"]
        # A spectator's command.
        await t.refused(watcher, good, "spectator")
        # Playing for another seat, an unknown action, an illegal move.
        await t.refused(actor, {**good, "seat": waiter.seat}, "not_your_seat")
        await t.refused(actor, {"type": "fly"}, "bad_action")
        assert actor.view["phase"] != "discard"
        await t.refused(actor, {"type": "discard", "card": actor.view["hand"][0]}, "wrong_phase")
        await t.refused(actor, {"type": "force"}, "cannot_force")
        # Not commands at all.
        await t.error(actor, "{not json", "bad_json")
        await t.error(actor, json.dumps({"type": "dance"}), "bad_message")
        await t.error(actor, json.dumps([1, 2, 3]), "bad_message")
        await t.error(
            actor, json.dumps({"type": "command", "seq": t.seq, "action": {}}), "bad_command"
        )
        # Missing fields with a cid: a reply to that cid.
        for raw in (
            {"type": "command", "cid": "no-seq", "action": good},
            {"type": "command", "cid": "no-action", "seq": t.seq},
            {"type": "command", "cid": "text-action", "seq": t.seq, "action": "pass"},
        ):
            before, marks = t.seq, t.marks()
            index = await actor.send(raw)
            reply = await actor.wait_for(
                lambda m, cid=raw["cid"]: m["type"] == "reply" and m["payload"]["cid"] == cid,
                after=index,
            )
            assert reply["payload"]["ok"] is False
            assert reply["payload"]["error"]["code"] == "bad_command", reply
            await t.nothing_applied(before, marks)
        # Too large: refused, and the connection stays open.
        big = {
            "type": "command",
            "cid": "big",
            "seq": t.seq,
            "action": {**good, "padding": "x" * 17_000},
        }
        assert len(json.dumps(big)) > 16_384
        await t.error(actor, json.dumps(big), "message_too_large")
        assert not actor.closed
        assert not [
            m for m in actor.messages if m["type"] == "reply" and m["payload"]["cid"] == "big"
        ]

        # Duplicate cid: the earlier reply again, applied once.
        seq = t.seq
        first = await actor.command(good, cid="dup-1")
        assert first["payload"] == {"cid": "dup-1", "ok": True}
        for client in t.everyone:
            await client.wait_seq(seq + 1)
        marks = t.marks()
        again = await actor.command(good, cid="dup-1", seq=seq)
        assert again["payload"] == first["payload"]
        assert again["seq"] == seq + 1
        await t.nothing_applied(seq + 1, marks)
        updates = [m for m in actor.messages if m["type"] == "update"]
        assert [m["seq"] for m in updates] == [seq + 1]

        # A command id is the sender's: the same cid from the other seat is a new command.
        view = t.seats[0].view
        assert view is not None
        mover = t.actor
        assert mover.view is not None
        move = wire_action(conquian, simple_conquian.act(mover.view))
        if mover is not actor:
            reply = await mover.command(move, cid="dup-1")
            assert reply["payload"] == {"cid": "dup-1", "ok": True}
            for client in t.everyone:
                await client.wait_seq(seq + 2)
        for client in t.everyone:
            await client.close()
    finally:
        await api.aclose()


def test_bad_commands_are_answered_and_not_applied(module_server: ServerProcess) -> None:
    asyncio.run(_bad_commands(module_server))


async def _refusals(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, _ = await api.guest()
        info = await api.create_table(token, "conquian", {})
        for url, code in (
            (server.ws_url(info["id"], "not-a-token"), 4401),
            (server.ws_url(10_000_000, token), 4404),
        ):
            try:
                async with websockets.connect(url, open_timeout=5) as ws:
                    with pytest.raises(ConnectionClosed) as closed:
                        await asyncio.wait_for(ws.recv(), 5)
                    assert closed.value.rcvd is not None
                    assert closed.value.rcvd.code == code, closed.value
            except InvalidStatus as error:
                pytest.fail(
                    f"{url}: the handshake was refused with HTTP "
                    f"{error.response.status_code} instead of close code {code}"
                )
        # While waiting for players, a seated client sees no view yet.
        client = await WireClient.connect(server, info["id"], token, name="alone")
        assert client.seat == 0 and client.view is None
        reply = await client.command({"type": "pass"})
        assert reply["payload"]["error"]["code"] == "not_playing"
        await client.close()
    finally:
        await api.aclose()


def test_websocket_refusals(module_server: ServerProcess) -> None:
    asyncio.run(_refusals(module_server))


async def _binary_frame(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, _ = await api.guest()
        info = await api.create_table(token, "conquian", {})
        client = await WireClient.connect(server, info["id"], token, name="binary")
        index = await client.send(b'{"type": "ping"}')
        message = await client.wait_for(lambda m: m["type"] in ("error", "pong"), after=index)
        assert message["type"] == "error"
        assert message["payload"]["code"] in ("bad_message", "bad_json")
        await client.roundtrip()  # still open
        await client.close()
    finally:
        await api.aclose()


def test_binary_frame_is_answered_not_fatal(module_server: ServerProcess) -> None:
    asyncio.run(_binary_frame(module_server))
