"""A table's sockets coming and going: a connection is greeted with a snapshot or
what it missed, a seat whose player's sockets are all gone gets a grace period, and
after it a bot plays the hand at a free table (the timer at a coin table) until the
player is back.
"""

from __future__ import annotations

import asyncio

from sahrat.server.table.base import Step, TableBase
from sahrat.server.table.connection import Connection


class Presence(TableBase):
    """Connections: connect, disconnect, and the grace period of an empty seat."""

    def connect(self, conn: Connection, since: int | None) -> None:
        """Register a connection and greet it: a snapshot, or the missed updates. The
        table is announced at once if a seat's presence changed; a spectator coming
        changes nothing in play and is announced with the next batch of spectators."""
        present = self.connected_seats()
        watching = len(self.spectators())
        retaken = False
        self.follow_seating(conn)
        self.connections[conn] = None
        seat = conn.seat
        if seat is not None:
            self.seating.away.discard(seat)
            task = self._grace.pop(seat, None)
            if task is not None:
                task.cancel()
            if self.status == "playing" and not self.seating.played_by_owner(seat):
                # Coming back to the table takes the seat over again, hand and all.
                self._set_controller(seat, None, left=False)
                retaken = True
        missed = self._missed_since(since) if since is not None else None
        if missed is not None and self.state is not None:
            updates = [self._update_for(step, conn.seat) for step in missed]
            conn.send(self._message("resume", {"missed": updates, "snapshot": self.snapshot(conn)}))
        else:
            conn.send(self._message("snapshot", self.snapshot(conn)))
        if retaken or self.connected_seats() != present:
            self.broadcast_table()
        elif len(self.spectators()) != watching:
            self._spectators_changed()

    def _missed_since(self, since: int) -> list[Step] | None:
        """The steps after ``since`` if all of them are still remembered, else None."""
        if since == self.seq:
            return []
        if since > self.seq or not self.recent:
            return None
        if self.recent[0].seq > since + 1:
            return None
        return [step for step in self.recent if step.seq > since]

    def disconnect(self, conn: Connection) -> None:
        present = self.connected_seats()  # before the close: a closed one is not present
        watching = len(self.spectators())
        conn.close()
        if conn not in self.connections:
            return
        self.connections.pop(conn, None)
        seat = conn.seat
        if seat is not None and seat not in self.connected_seats() and self.status == "playing":
            self._grace[seat] = asyncio.create_task(self._grace_period(seat))
            if self.round_break is not None and seat in self.round_break.waiting:
                self.round_break.waiting.discard(seat)  # nobody waits for an empty chair
                self._break_changed()
        if self.connected_seats() != present:
            self.broadcast_table()
        elif len(self.spectators()) != watching:
            self._spectators_changed()

    def expect_players(self) -> None:
        """After a restart or a takeover nobody is connected yet: each player's seat
        gets the grace period it would have had on a dropped connection."""
        if self.status != "playing":
            return
        for seat in range(self.players):
            if not self.seating.played_by_owner(seat):
                continue
            if seat not in self.connected_seats() and seat not in self._grace:
                self._grace[seat] = asyncio.create_task(self._grace_period(seat))

    async def _grace_period(self, seat: int) -> None:
        await asyncio.sleep(self.hub.settings.grace_seconds)
        if seat not in self.connected_seats() and self.status == "playing":
            self.seating.away.add(seat)
            self._grace.pop(seat, None)
            if self.bots_allowed:
                # At a free table a bot plays the hand until the player is back.
                self._set_controller(seat, self.bot_level, left=False)
            self.broadcast_table()

    def demote(self, user_id: int) -> None:
        """The user's connections here become a spectator's (a suspended player)."""
        self._reseat_connections()
