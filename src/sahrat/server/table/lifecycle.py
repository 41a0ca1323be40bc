"""A table's seats and matches: joining and leaving, options while it waits, the
start of a match (with the stakes of a coin table), the rematch, and closing.

What a leaver's table becomes (docs/protocol.md, "Leaving a match"): leaving a match in
progress keeps the seat, played by a bot at a free table and by the turn timer at a
coin table, and the player may come back; but a free match whose last person leaves
while bots alone play on is abandoned at once: the table closes, the match is not
finished and is nobody's (no match row, no earnings, no history), and the table no
longer counts among its creator's open tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from sahrat.rules.record import options_for
from sahrat.rules.rng import new_seed
from sahrat.server.table.base import TableBase, as_datetime
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.settlement import PlayTally
from sahrat.store import ledger
from sahrat.store.log import Append


class Lifecycle(TableBase):
    """Seats and matches, each operation under the table's lock."""

    # --- seats -------------------------------------------------------------------------

    @property
    def in_lobby(self) -> bool:
        """Whether the lobby lists the table: it waits for players (anyone may sit
        down), or its match has a person playing in it, to watch (a seat whose player
        dropped counts: they may be back). A match its every person left is not shown."""
        if self.status == "waiting":
            return True
        return self.status == "playing" and any(
            owner is not None and seat not in self.seating.left
            for seat, owner in enumerate(self.seats)
        )

    async def join(self, user_id: int, seat: int | None, address: str | None = None) -> None:
        async with self.lock:
            mine = self.seat_of(user_id)
            if self.status == "playing" and mine is not None:
                if not self.seating.played_by_owner(mine):
                    await self.hub.check_can_sit(user_id, 0)
                    self._set_controller(mine, None, left=False)
                    self.broadcast_table()
                    return
                raise TableError("already_seated", "you already have a seat at this table")
            if self.status != "waiting":
                raise TableError("table_started", "the match has started; watch as a spectator")
            if mine is not None:
                raise TableError("already_seated", "you already have a seat at this table")
            free = self.seating.free()
            if not free:
                raise TableError("table_full", "every seat is taken")
            if seat is None:
                seat = free[0]
            elif not 0 <= seat < self.players:
                raise TableError("no_such_seat", f"seat {seat} is not a seat at this table")
            elif seat not in free:
                raise TableError("seat_taken", f"seat {seat} is taken")
            if self.options.coin_table and self.hub.settings.one_address_per_coin_table:
                self.seating.check_address(address)
            await self.hub.check_can_sit(user_id, self.options.stake)
            await self.hub.store_seat(self.id, seat, user_id, None, False, address)
            self.seating.sit(seat, user_id, address)
            await self._start_if_full()
            self.broadcast_table()
            if self.seat_of(user_id) is None:  # the match could not start: not enough coins
                raise TableError(
                    "not_enough_coins",
                    f"you cannot cover this table's stake of {self.options.stake}",
                )

    async def start_with_bots(self, user_id: int, level: str | None = None) -> None:
        """The creator starts a free table now, bots in the empty seats; they play at
        ``level`` if given, else at the table's ``bot_level`` option."""
        level = level or self.options.bot_level
        async with self.lock:
            if user_id != self.creator_id:
                raise TableError("not_creator", "only the table's creator can start it")
            if self.status != "waiting":
                raise TableError("table_started", "the match has already started")
            if not self.bots_allowed:
                raise TableError("no_bots_at_coin_tables", "bots never sit at coin tables")
            if self.seat_of(user_id) is None:
                raise TableError("not_seated", "take a seat before starting with bots")
            for seat in self.seating.free():
                await self.hub.store_seat(self.id, seat, None, level, False)
                self.seating.bots[seat] = level
            await self._start_match()
            self.broadcast_table()

    async def leave(self, user_id: int) -> None:
        async with self.lock:
            seat = self.seat_of(user_id)
            if seat is None:
                raise TableError("not_seated", "you have no seat at this table")
            if self.status == "playing":
                # Leaving never redeals: at a free table a bot plays on with the same
                # hand, at a coin table the turn timer does; the player may come back.
                level = self.bot_level if self.bots_allowed else None
                stored = self._set_controller(seat, level, left=True)
                # Stored before the answer (a restart must know the seat was left); a
                # failure is logged by the task itself.
                await asyncio.wait([stored])
                if self._only_bots_play():
                    await self._abandon()
                    return
                self.broadcast_table()
                await self._hurry_left_seat()  # a coin table's timer: a left seat's pace
                return
            await self.hub.remove_seat(self.id, seat)
            self.seating.unseat(seat)
            self.rematch.discard(seat)  # leaving a finished table declines its rematch
            self.broadcast_table()

    async def update_options(self, options: dict[str, Any]) -> None:
        """Change some options of a waiting table (raises BadOption naming a bad one);
        a table shrunk to exactly its players starts."""
        async with self.lock:
            if self.status == "playing":
                raise TableError(
                    "match_in_progress",
                    "a match is in progress at this table; change its options when it is over",
                )
            if self.status != "waiting":
                raise TableError("table_finished", f"the table is {self.status}")
            parsed = options_for(self.game, {**self.options.to_json(), **options})
            taken = [seat for seat, owner in enumerate(self.seats) if owner is not None]
            if taken and max(taken) >= int(parsed.players):
                raise TableError(
                    "seats_taken", f"seat {max(taken)} is taken; cannot shrink the table"
                )
            stored = parsed.to_json()
            await self.hub.store_options(self.id, stored)
            await self.change_options(stored)

    async def change_options(self, options: dict[str, Any]) -> None:
        """New (validated, stored) options for a waiting table (caller holds the lock):
        the seats follow ``players``, and a table shrunk to exactly its players starts."""
        self.options = options_for(self.game, options)
        self.seating.resize(self.players)
        if any(owner is not None for owner in self.seats):
            await self._start_if_full()
        self.broadcast_table()

    # --- a match's start ------------------------------------------------------------------

    async def _start_if_full(self) -> None:
        if not self.seating.free():
            await self._start_match()

    async def _start_match(self) -> bool:
        """Deal a new match (caller holds the lock). At a coin table every seat's stake
        moves into the match's pot in the same transaction as the ``start`` entry; a
        player who cannot cover it any more loses the seat and the table keeps waiting
        (False)."""
        seed = new_seed()
        state = self.engine.new_game(self.options, seed)
        seq = self.seq + 1
        deadline = self._new_deadline(state)
        entry = {
            "seq": seq,
            "kind": "start",
            "seat": None,
            "client_id": None,
            "data": {"seed": seed, "seats": list(self.seats), "first_dealer": state.dealer},
        }
        stakes: list[ledger.Movement] = []
        if self.options.coin_table:
            owners = [owner for owner in self.seats if owner is not None]
            have = await self.hub.coin_balances(owners)
            short = [owner for owner in owners if have[owner] < self.options.stake]
            if short:
                await self._unseat_short(short)
                return False
            stakes = ledger.stake_movements(self.id, seq, self.seats, self.options.stake)
        self._check_lease()
        try:
            await self.hub.writer.append(
                Append(self.id, [entry], seq, "playing", as_datetime(deadline), ledger=stakes)
            )
        except ledger.Overdraft as error:  # the balance changed since we looked
            owner = ledger.user_of(error.account)
            await self._unseat_short([owner] if owner is not None else [])
            return False
        self.start_seq = seq
        self.first_dealer = int(state.dealer)
        self.state, self.seed, self.seq, self.status = state, seed, seq, "playing"
        self.actions = []
        self.tally = PlayTally()
        self.deadline = deadline
        self.recent.clear()
        for conn in list(self.connections):
            conn.send(self._message("snapshot", self.snapshot(conn)))
        self._arm_timer()
        self._schedule_bot()
        return True

    async def _unseat_short(self, user_ids: list[int]) -> None:
        """Free the seats of players who cannot cover the stake, and tell the table."""
        for user_id in user_ids:
            seat = self.seat_of(user_id)
            if seat is None:
                continue
            await self.hub.remove_seat(self.id, seat)
            self.seating.unseat(seat)
        self._reseat_connections()
        names = ", ".join(self.hub.names.get(u, f"player {u}") for u in user_ids)
        text = (
            f"the match could not start: {names} cannot cover the stake of "
            f"{self.options.stake} coins; the table waits for players"
        )
        self._send_all("error", {"code": "not_enough_coins", "message": text})

    # --- a rematch ----------------------------------------------------------------------

    async def ask_rematch(self, conn: Connection) -> None:
        """A seated player asks for another match at the same seats; the last one to ask
        starts it (bots' seats are in the list from the match's end). At a free table a
        seat whose player left the match goes to a bot; at a coin table everyone must
        still be there (and pay again). Asking again changes nothing and sends nothing."""
        async with self.lock:
            self.follow_seating(conn)
            problem = self._rematch_problem(conn.seat)
            if problem is not None:
                code, text = problem
                conn.send(self._message("error", {"code": code, "message": text}))
                return
            assert conn.seat is not None
            if conn.seat in self.rematch:
                return  # asked already: nobody is told anything new
            self.rematch.add(conn.seat)
            if len(self.rematch_seats()) < self.players:
                self.broadcast_table()
                return
            await self._rematch()

    def _rematch_problem(self, seat: int | None) -> tuple[str, str] | None:
        if self.status != "finished":
            return "not_finished", "a rematch is asked for once the match is over"
        if seat is None:
            return "spectator", "spectators cannot ask for a rematch"
        if seat in self.seating.left:
            return "left", "you left this match"
        if self.seating.free():
            return "seat_empty", "a player left the table: open a new one"
        if not self.bots_allowed and self.seating.left:
            return "seat_empty", "a player left this coin match: open a new table"
        return None

    async def _rematch(self) -> None:
        """Everyone asked: leavers' seats go to bots, and a new match is dealt."""
        level = self.bot_level
        seating = self.seating
        for seat in sorted(seating.left):
            await self.hub.store_seat(self.id, seat, None, level, False)
            seating.seats[seat], seating.bots[seat] = None, level
        seating.left.clear()
        seating.away.clear()
        self.rematch.clear()
        self.status = "waiting"
        if not await self._start_match():  # a stake nobody can cover any more
            await self.hub.store_status(self.id, "waiting")
        self.broadcast_table()

    # --- closing ----------------------------------------------------------------------

    def _only_bots_play(self) -> bool:
        """A free match whose every person has left it: bots alone play on, for nobody."""
        if not self.bots_allowed:
            return False
        return all(
            owner is None or seat in self.seating.left for seat, owner in enumerate(self.seats)
        )

    async def _abandon(self) -> None:
        """The last person left a free match of bots (caller holds the lock): the match
        is abandoned unfinished (no match row, nothing earned, nothing in anyone's
        history), the table is closed and leaves memory, and its sockets are closed."""
        await self.hub.store_closed(self.id, False)
        self.closed(free_seats=False)
        self.hub.forget_closed(self.id)

    async def close_down(self, unless: Callable[[], bool] | None = None) -> bool:
        """Close the table for good (not while it plays, nor when ``unless`` says no
        once the lock is held): stored, a waiting table's seats freed, everyone told,
        every socket closed. False if it stays open."""
        async with self.lock:
            if self.status == "playing":
                raise TableError(
                    "match_in_progress", "the table's match is in progress; close it after"
                )
            if unless is not None and unless():
                return False
            free_seats = self.status == "waiting"
            await self.hub.store_closed(self.id, free_seats)
            self.closed(free_seats=free_seats)
            return True

    async def hand_over(self, code: int, reason: str) -> None:
        """This process stops serving the table: once the step in progress is done,
        every socket is told (``code``) to reconnect, to whoever serves it next."""
        async with self.lock:
            self.close(code, reason)

    def closed(self, *, free_seats: bool) -> None:
        """The table was closed (its row says so): a waiting table's seats are freed,
        everyone is told, then every socket closes."""
        self.status = "closed"
        if free_seats:
            self.seating.seats = [None] * self.players
        self._reseat_connections()
        self._send_table()  # now: the sockets close right after it
        self.close()
