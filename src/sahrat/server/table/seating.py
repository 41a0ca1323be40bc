"""Who sits where at a table: the only truth about who plays which seat.

A seat has an owner (a player's id, or none for a free seat or a bot's own), may be
played by a bot (its level), and its owner may have left the match or be away. The
table changes the seating under its lock and announces every change; a connection's
seat is always read from here (``Table.follow_seating``).
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
