"""Who sits with whom: the queue's waiting entries and the time now in, the tables
to form out. Pure: no I/O, no clock of its own, no randomness; the same entries at
the same moment always give the same tables (docs/rating.md, "Pairing").

An entry waits for a table of one shape: its game, rating pool, number of seats and
speed; only entries of one shape sit together. Within a shape:

* Ratings close enough sit together. How close is each entry's *window*, which
  widens the longer it waits: ``base_window`` points at first, ``widen_per_second``
  more each second, at most ``max_window``. A table's players all lie within the
  narrowest window among them (max minus min rating), so that the wait of one does
  not drag a newcomer into a match far from their level: both have to accept.
* Never two entries of one network at one table (``addresses.network_key``; an
  unknown network is a network of its own, shared with nobody): two accounts of one
  household must not meet in a rated match, where one could feed the other points.
* The longest-waiting entry picks first: the others closest to its rating that fit
  the window, then the next closest, until the table is full; a full table forms at
  once. Players it met too often lately (``repeats``: a match with them would move
  neither rating, docs/rating.md) come after everyone else who fits: two who are alone
  in the queue still meet, but a fresh opponent is found when there is one.
* An entry that has waited ``bot_wait`` seconds is seated with whoever fits so far
  and bots in the seats left (a bot's seat has the fixed bot rating and counts for
  nobody's rating: ``sahrat.ratings``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

# The speeds a player may ask for, as the table option turn_seconds (RULES.md allows
# 10 to 300): fast for a quick match on a phone, normal the server's default table,
# slow for those who like to think.
SPEEDS: dict[str, int] = {"fast": 15, "normal": 30, "slow": 60}


@dataclass(frozen=True, slots=True)
class Entry:
    """One waiting player, as the pairing sees them."""

    user_id: int
    game: str  # "konkan" or "conquian"
    pool: str  # sahrat.ratings.pool_of(game, options)
    players: int  # seats at the table
    speed: str  # a key of SPEEDS
    rating: int  # the shown rating when they joined
    network: str | None  # addresses.network_key of the request that queued them
    joined_at: float  # seconds (a Unix time, or any clock the caller's ``now`` shares)

    @property
    def shape(self) -> tuple[str, str, int, str]:
        """What a table must be for this entry: only entries of one shape sit together."""
        return (self.game, self.pool, self.players, self.speed)


@dataclass(frozen=True, slots=True)
class Rules:
    """How close ratings must be, and how long a player waits for people."""

    bot_wait: float = 30.0  # seconds before the seats nobody fits go to bots
    base_window: float = 100.0  # rating points apart at first
    widen_per_second: float = 10.0  # ...and this much more for each second waited
    max_window: float = 600.0  # ...but never more

    def window(self, entry: Entry, now: float) -> float:
        waited = max(0.0, now - entry.joined_at)
        return min(self.max_window, self.base_window + self.widen_per_second * waited)


@dataclass(frozen=True, slots=True)
class Formation:
    """A table to form: its players, oldest entry first, and how many seats go to bots."""

    entries: tuple[Entry, ...]
    bots: int

    @property
    def shape(self) -> tuple[str, str, int, str]:
        return self.entries[0].shape


def fits(group: Sequence[Entry], rules: Rules, now: float) -> bool:
    """Whether these entries may share a table: every rating within the narrowest
    window among them, and no network twice (an unknown one is never shared)."""
    ratings = [entry.rating for entry in group]
    if max(ratings) - min(ratings) > min(rules.window(entry, now) for entry in group):
        return False
    networks = [entry.network for entry in group if entry.network is not None]
    users = [entry.user_id for entry in group]
    return len(set(networks)) == len(networks) and len(set(users)) == len(users)


def pair(
    entries: Iterable[Entry],
    now: float,
    rules: Rules | None = None,
    repeats: Collection[frozenset[int]] = (),
) -> list[Formation]:
    """The tables to form now from the waiting ``entries`` (each entry in at most one).
    Entries of no formation keep waiting. ``repeats``: pairs of user ids met too often
    lately, each the other's last choice."""
    rules = rules or Rules()
    shapes: dict[tuple[str, str, int, str], list[Entry]] = defaultdict(list)
    seen: set[int] = set()
    for entry in sorted(entries, key=lambda e: (e.joined_at, e.user_id)):
        if entry.user_id not in seen:  # one entry per player (the oldest)
            seen.add(entry.user_id)
            shapes[entry.shape].append(entry)
    formed: list[Formation] = []
    for shape in sorted(shapes):
        formed.extend(_pair_shape(shapes[shape], now, rules, repeats))
    return formed


def _pair_shape(
    waiting: list[Entry], now: float, rules: Rules, repeats: Collection[frozenset[int]]
) -> list[Formation]:
    """Entries of one shape, oldest first: each in turn, if still free, gathers the
    free entries closest to its rating that fit, and forms a table when it is full or
    when it has waited long enough for bots."""
    seats = waiting[0].players
    free = list(waiting)
    formed: list[Formation] = []
    for anchor in waiting:
        if anchor not in free:
            continue
        group = [anchor]
        others = sorted(
            (entry for entry in free if entry is not anchor),
            key=lambda e: (
                frozenset((anchor.user_id, e.user_id)) in repeats,
                abs(e.rating - anchor.rating),
                e.joined_at,
                e.user_id,
            ),
        )
        for other in others:
            if len(group) == seats:
                break
            if fits([*group, other], rules, now):
                group.append(other)
        if len(group) == seats or now - anchor.joined_at >= rules.bot_wait:
            formed.append(Formation(tuple(group), seats - len(group)))
            free = [entry for entry in free if entry not in group]
    return formed
