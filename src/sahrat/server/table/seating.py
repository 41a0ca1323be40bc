"""Who sits where at a table: the only truth about who plays which seat.

A seat has an owner (a player's id, or none for a free seat or a bot's own), may be
played by a bot (its level), and its owner may have left the match or be away; once a
match is over, its player may have asked for a rematch. The table changes the seating
under its lock, only through the methods here, and announces every change; a
connection's seat is always read from here (``Audience.follow``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sahrat.server.addresses import network_key
from sahrat.server.table.errors import TableError


@dataclass
class Seating:
    seats: list[int | None]  # owners: a player's id, or None (a free seat or a bot's own)
    bots: list[str | None]  # the level of a bot playing each seat, or None
    left: set[int] = field(default_factory=set)  # seats whose owner walked away from the match
    away: set[int] = field(default_factory=set)  # seats whose player's grace period ran out
    addresses: dict[int, str] = field(default_factory=dict)  # where each seat joined from
    rematch: set[int] = field(default_factory=set)  # once the match is over: seats that asked

    def seat_of(self, user_id: int) -> int | None:
        for seat, owner in enumerate(self.seats):
            if owner == user_id:
                return seat
        return None

    def free(self) -> list[int]:
        """Seats nobody owns and no bot plays."""
        return [
            seat
            for seat, owner in enumerate(self.seats)
            if owner is None and self.bots[seat] is None
        ]

    def played_by_owner(self, seat: int) -> bool:
        """The seat's own player plays it (not a bot, not the timer for a leaver)."""
        return self.seats[seat] is not None and self.bots[seat] is None and seat not in self.left

    def bot_level(self, option: str) -> str:
        """The level of a bot that takes over a seat: the level of the bots already at
        the table (a ``start`` that named its level overrides the option for the whole
        match), else the table's ``bot_level`` ``option``."""
        started = next((level for level in self.bots if level is not None), None)
        return started or option

    def person_in_match(self) -> bool:
        """A person owns a seat and has not left the match (they may be away)."""
        return any(
            owner is not None and seat not in self.left for seat, owner in enumerate(self.seats)
        )

    def timer_plays(self, seat: int) -> bool:
        """The seat's player left the match and no bot plays it: only the timer moves."""
        return seat in self.left and self.bots[seat] is None

    def only_bots_play(self, bots_allowed: bool) -> bool:
        """A free match whose every person has left it: bots alone play on, for nobody."""
        if not bots_allowed:
            return False
        return all(owner is None or seat in self.left for seat, owner in enumerate(self.seats))

    def readers(self, connected: set[int]) -> set[int]:
        """Of the ``connected`` seats, those whose own player is there to read a round's
        summary and press "continue"."""
        return {seat for seat in connected if self.bots[seat] is None and seat not in self.left}

    def rematch_seats(self, bots_allowed: bool) -> set[int]:
        """Once the match is over, the seats that want another: those whose player asked,
        and from the start every seat a bot will play (a bot's own seat, and at a free
        table a leaver's, which a bot takes in the rematch)."""
        automatic = {
            seat
            for seat, owner in enumerate(self.seats)
            if (owner is None and self.bots[seat] is not None)
            or (seat in self.left and bots_allowed)
        }
        return self.rematch | automatic

    # --- changes (the table's, under its lock) -------------------------------------------

    def control(self, seat: int, bot_level: str | None, *, left: bool) -> None:
        """Who plays the seat now: a bot of ``bot_level``, or (None) its owner or the
        timer; ``left``: its owner walked away from the match."""
        self.bots[seat] = bot_level
        if left:
            self.left.add(seat)
        else:
            self.left.discard(seat)

    def give_to_bot(self, seat: int, bot_level: str) -> None:
        """A leaver's seat becomes a bot's own (a rematch at a free table)."""
        self.seats[seat], self.bots[seat] = None, bot_level

    def new_match(self) -> None:
        """A rematch is dealt: nobody has left it, is away or asks for another yet."""
        self.left.clear()
        self.away.clear()
        self.rematch.clear()

    def mark_away(self, seat: int) -> None:
        """The seat's player's grace period ran out."""
        self.away.add(seat)

    def back(self, seat: int) -> None:
        """A socket of the seat's player is here again."""
        self.away.discard(seat)

    def ask_rematch(self, seat: int) -> bool:
        """The seat's player asks for a rematch; False if they had asked already."""
        if seat in self.rematch:
            return False
        self.rematch.add(seat)
        return True

    def free_all(self) -> None:
        """Every seat is given up (a waiting table closed)."""
        self.seats = [None] * len(self.seats)

    def resize(self, players: int) -> None:
        self.seats = (self.seats + [None] * players)[:players]
        self.bots = (self.bots + [None] * players)[:players]

    def sit(self, seat: int, user_id: int, address: str | None) -> None:
        self.seats[seat] = user_id
        if address is not None:
            self.addresses[seat] = address

    def unseat(self, seat: int) -> None:
        self.seats[seat] = None
        self.addresses.pop(seat, None)
        self.rematch.discard(seat)  # leaving a finished table declines its rematch

    def check_address(self, address: str | None) -> None:
        """One account per network address (a coin table's rule, against collusion):
        two accounts of one household or one player's two accounts cannot share a pot.
        One network, not one text: an IPv6 subscriber picks any address in its /56."""
        mine = network_key(address) if address is not None else None
        if mine is None:
            return
        for seat, other in self.addresses.items():
            if network_key(other) == mine and self.seats[seat] is not None:
                raise TableError(
                    "same_address",
                    "another player at this coin table joined from your network address; "
                    "a coin table takes one account per address",
                )
