"""Who is told: a table's connections, players' and spectators', and how messages
reach them.

A connection is greeted with a snapshot or what it missed; it always plays and sees
the seat the seating gives its user now (:meth:`Audience.follow`). A durable step goes
out as one text per seat, spectators sharing one. ``table`` messages are merged: at
most one every ``TABLE_MESSAGE_GAP`` seconds, whoever causes the changes. A seat whose
player's sockets are all gone during a match gets a grace period; when it runs out the
audience says so (``on_away``) and the table decides what becomes of the seat.

What each one is shown is drawn here from the other parts as they are when it is sent
(the seating, the match, the pace); what a view holds is the engine's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from sahrat.rules.engine import Engine
from sahrat.rules.rng import seed_commitment
from sahrat.server.table.connection import Connection
from sahrat.server.table.match import Match
from sahrat.server.table.messages import (
    error_message,
    message,
    reaction_payload,
    resume_payload,
    seat_payload,
    snapshot_payload,
    table_payload,
    update_payload,
)
from sahrat.server.table.moves import Step
from sahrat.server.table.pace import Pace
from sahrat.server.table.rated import seat_rating
from sahrat.server.table.seating import Seating
from sahrat.server.table.services import TableServices
from sahrat.view_changes import diff_views

REACTION_GAP = 1.0
SPECTATORS_SHOWN = 50  # names of spectators in the table's info; the count is complete
# A table's `table` messages: at most one every 2 s (docs/protocol.md). The first change
# after a quiet spell goes at once; the changes within the gap go as one message later.
TABLE_MESSAGE_GAP = 2.0

Presence = tuple[set[int], int]  # the seats with a socket, and how many users watch


class Audience:
    """The connections of a table, the grace periods of its empty seats, and its
    merged ``table`` messages."""

    def __init__(
        self,
        services: TableServices,
        engine: Engine,
        seating: Seating,
        match: Match,
        pace: Pace,
        *,
        table_id: int,
        game: str,
        private: bool,
        invite_code: str | None,
        creator_id: int,
        on_away: Callable[[int], None],
        rated: bool = False,
        ratings: dict[int, tuple[int, bool]] | None = None,
        chat: bool = True,
        friends_watch: bool = False,
        spectator_delay: bool = False,
        tournament_id: int | None = None,
    ) -> None:
        self._services = services
        self._engine = engine
        self._seating = seating
        self._match = match
        self._pace = pace
        self._table_id = table_id
        self._game = game
        self._private = private
        self._invite_code = invite_code
        self._creator_id = creator_id
        self._on_away = on_away  # a seat's grace period ran out
        self._rated = rated
        self._chat = chat  # the table's chat is on (table/chat.py)
        self.friends_watch = friends_watch  # the creator's friends may watch it (private)
        # spectators see each round (deal) once it is over (a prize tournament's table)
        self.spectator_delay = spectator_delay
        self.tournament_id = tournament_id  # the tournament whose round it plays, if any
        self._ratings = ratings if ratings is not None else {}  # the table's, kept current
        self.connections: dict[Connection, None] = {}  # a set that keeps arrival order
        self._grace: dict[int, asyncio.Task[None]] = {}
        self._table_message: asyncio.TimerHandle | None = None  # the next, merged one
        self._table_told = -TABLE_MESSAGE_GAP  # (loop time) when the last one was sent
        # The view each seat (None: spectators) was last shown, and the state it is of:
        # a step's update carries what changed since (view_changes.py).
        self._shown: dict[int | None, dict[str, Any]] = {}
        self._shown_of: Any = None

    # --- who sits where ----------------------------------------------------------------

    def seat_for(self, user_id: int) -> int | None:
        """The seat a connection of ``user_id`` plays and sees: the user's seat at this
        table now (none for a suspended player, who may only watch)."""
        if user_id in self._services.suspended:
            return None
        return self._seating.seat_of(user_id)

    def follow(self, conn: Connection) -> bool:
        """Give ``conn`` its user's seat as the table seats them now; True if it changed.

        The seating is the only truth about who plays where: a connection's seat is a
        copy of it, refreshed here before the connection is shown a view or its command
        is played. Seats change under the table's lock, and every change is announced
        through :meth:`table_changed`, which re-seats every connection first (and
        sends a fresh snapshot to those whose seat changed)."""
        seat = self.seat_for(conn.user_id)
        if seat == conn.seat:
            return False
        conn.seat = seat
        return True

    def reseat(self) -> None:
        """Every connection follows the seating; one whose seat changed gets a snapshot."""
        for conn in list(self.connections):
            if self.follow(conn):
                conn.send(message("snapshot", self._match.seq, self.snapshot(conn)))

    def connected_seats(self) -> set[int]:
        return {c.seat for c in self.connections if c.seat is not None and not c.closed}

    def spectators(self) -> list[int]:
        """The users watching (a connection with no seat), in the order they came."""
        seen: dict[int, None] = {}
        for conn in self.connections:
            if conn.seat is None and not conn.closed:
                seen.setdefault(conn.user_id)
        return list(seen)

    def presence(self) -> Presence:
        return self.connected_seats(), len(self.spectators())

    def held_back(self, seat: int | None) -> bool:
        """Whether a connection at ``seat`` is shown nothing of the round (deal) in play:
        a spectator of a table with ``spectator_delay`` while a round is played. Between
        rounds and once the match is over it sees the table as everyone does; so the
        round just ended is the latest it can pass on to a player, and that round's
        cards are public by then (a round's end shows its hands)."""
        return (
            seat is None
            and self.spectator_delay
            and self._match.playing
            # the match's last step is published before the table is marked finished
            and not (self._match.state is not None and self._match.state.over)
            and self._pace.round_break is None
        )

    # --- what each connection is shown ----------------------------------------------------

    def info(self, viewer: int | None = None) -> dict[str, Any]:
        """The ``table`` payload as ``viewer`` sees it."""
        seating, match, names = self._seating, self._match, self._services.names
        options = match.options
        connected = self.connected_seats()
        watching = self.spectators()
        finished = match.status == "finished"
        return table_payload(
            table_id=self._table_id,
            game=self._game,
            options=options.to_json(),
            private=self._private,
            invite_code=self._invite_code if self.shows_invite_code(viewer) else None,
            status=match.status,
            coin_table=options.coin_table,
            creator_id=self._creator_id,
            seats=[
                seat_payload(
                    seat,
                    owner,
                    names.get(owner) if owner is not None else None,
                    connected=seat in connected,
                    away=seat in seating.away,
                    bot_level=seating.bots[seat],
                    left=seat in seating.left,
                    rating=seat_rating(seating, seat, self._ratings) if self._rated else False,
                )
                for seat, owner in enumerate(seating.seats)
            ],
            seq=match.seq,
            seed_commitment=seed_commitment(match.seed) if match.seed else None,
            rematch=(
                sorted(seating.rematch_seats(not options.coin_table))
                if finished and not self._rated
                else []
            ),
            spectators=[names.get(user, f"player {user}") for user in watching[:SPECTATORS_SHOWN]],
            spectator_count=len(watching),
            rated=self._rated,
            chat=self._chat,
            friends_watch=self.friends_watch,
            spectator_delay=self.spectator_delay,
            tournament_id=self.tournament_id,
        )

    def shows_invite_code(self, viewer: int | None) -> bool:
        """Only the creator and the seated see a private table's invite code (the one
        part of the ``table`` payload that differs between viewers)."""
        return viewer is not None and (viewer in self._seating.seats or viewer == self._creator_id)

    def snapshot(self, conn: Connection) -> dict[str, Any]:
        """The ``snapshot`` payload for ``conn``, at its user's seat now."""
        self.follow(conn)
        state, pace = self._match.state, self._pace
        if self.held_back(conn.seat):  # a delayed table's spectator: nothing of this round
            return snapshot_payload(self.info(conn.user_id), None, None, None, None)
        view = self._engine.view(state, conn.seat) if state is not None else None
        if view is not None:
            self._shows(conn.seat, view)
        return snapshot_payload(
            self.info(conn.user_id), conn.seat, view, pace.deadline, pace.round_break
        )

    def _updates(self, step: Step, before: Any, seats: set[int | None]) -> dict[int | None, str]:
        """A durable step as each of ``seats`` sees it: its events and what changed in
        the seat's view since the one it was shown at ``before`` (the state before the
        step), or its whole view when it was shown none there (view_changes.py). Seats
        that see the same events and the same changes share one text: usually one for
        the seat that moved, one for the seat to move next and one for everyone else."""
        state = self._match.state
        views = self._engine.views(state, seats | {None})  # the spectators': the public part
        shown = self._shown if self._shown_of is before else {}
        diffs = diff_views(views, shown)
        self._shown, self._shown_of = views, state
        seq, deadline, pause = self._match.seq, self._pace.deadline, self._pace.round_break
        texts: dict[int | None, str] = {}
        shared: dict[tuple[Any, ...], str] = {}
        for seat in seats:
            diff = diffs[seat]
            private = tuple(e.seat == seat and e.private is not None for e in step.events)
            # the same changes object (the spectators'), the same events: the same text
            key = (private, seat if diff is None else id(diff))
            text = shared.get(key)
            if text is None:
                events = [event.for_seat(seat) for event in step.events]
                whole = views[seat] if diff is None else None
                payload = update_payload(
                    events, step.by, view=whole, changes=diff, deadline=deadline, pause=pause
                )
                text = shared[key] = _text("update", seq, payload)
            texts[seat] = text
        return texts

    def _shows(self, seat: int | None, view: dict[str, Any]) -> None:
        """A snapshot showed ``seat`` the view of the state now: the next step's changes
        for that seat are counted from it (and from the spectators' view of the same
        state, the public part)."""
        state = self._match.state
        if self._shown_of is not state:
            self._shown, self._shown_of = {}, state
        self._shown[seat] = view
        if None not in self._shown:
            self._shown[None] = self._engine.view(state, None)

    # --- connections coming and going ----------------------------------------------------

    def add(self, conn: Connection) -> None:
        """Register a connection at its user's seat: a seat's player is back (its grace
        period, if any, ends)."""
        self.follow(conn)
        self.connections[conn] = None
        if conn.seat is not None:
            self._seating.back(conn.seat)
            task = self._grace.pop(conn.seat, None)
            if task is not None:
                task.cancel()

    def greet(self, conn: Connection, missed: list[Step] | None) -> None:
        """Send a new connection the table: the ``missed`` steps and a snapshot, or (none
        missed known) a snapshot alone."""
        seq, snapshot = self._match.seq, self.snapshot(conn)
        delayed = conn.seat is None and self.spectator_delay  # no steps: they are held back
        if missed is None or self._match.state is None or delayed:
            conn.send(message("snapshot", seq, snapshot))
            return
        updates = [
            update_payload([event.for_seat(conn.seat) for event in step.events], step.by)
            for step in missed
        ]
        conn.send(message("resume", seq, resume_payload(updates, snapshot)))

    def remove(self, conn: Connection, *, playing: bool) -> int | None:
        """Close and forget a connection; if that was the last socket of a seat during
        a match, the seat's grace period starts, and the seat is returned."""
        conn.close()
        if conn not in self.connections:
            return None
        self.connections.pop(conn, None)
        seat = conn.seat
        if seat is None or seat in self.connected_seats() or not playing:
            return None
        self._start_grace(seat)
        return seat

    def expect(self, seats: Iterable[int]) -> None:
        """Nobody is connected yet (after a restart or a takeover): each of ``seats``
        without a socket gets the grace period it would have had on a dropped one."""
        for seat in seats:
            if seat not in self.connected_seats() and seat not in self._grace:
                self._start_grace(seat)

    def _start_grace(self, seat: int) -> None:
        self._grace[seat] = asyncio.create_task(self._grace_period(seat))

    async def _grace_period(self, seat: int) -> None:
        await asyncio.sleep(self._services.settings.grace_seconds)
        self._grace.pop(seat, None)
        if seat not in self.connected_seats():
            self._on_away(seat)

    def announce(self, before: Presence, *, seats_changed: bool = False) -> None:
        """Tell the table what changed since ``before``: at once if a seat's presence
        changed (or ``seats_changed``), with the next merged message if only spectators
        came or went (they come and go in crowds)."""
        connected, watching = self.presence()
        if seats_changed or connected != before[0]:
            self.table_changed()
        elif watching != before[1]:
            self._merge_table_message()

    # --- messages --------------------------------------------------------------------------

    def table_changed(self) -> None:
        """Announce a change of the table (seats, presence, the rematch list, its
        status): every connection follows the seating at once, so a seat taken or given
        up re-seats its user's sockets (each with a snapshot) before anything else; the
        ``table`` message itself is merged with the others of its gap."""
        self.reseat()
        self._merge_table_message()

    def _merge_table_message(self) -> None:
        """At most one ``table`` message every ``TABLE_MESSAGE_GAP`` seconds whoever
        causes the changes (a crowd of spectators, one account taking and giving up a
        seat again and again): the first change after a quiet spell goes at once, and
        every later one within the gap is merged into one message sent when the gap is
        over, with the table as it is then. Nothing play depends on waits for it: a
        seat's own sockets get their snapshot at once, a match's start and every step
        come as snapshots and updates."""
        if self._table_message is not None:
            return  # a message is due: it will show this change too
        loop = asyncio.get_running_loop()
        wait = self._table_told + TABLE_MESSAGE_GAP - loop.time()
        if wait <= 0:
            self.send_table()
        else:
            self._table_message = loop.call_later(wait, self.send_table)

    def send_table(self) -> None:
        """Send the ``table`` message now (the one due, if any, goes with it)."""
        if self._table_message is not None:
            self._table_message.cancel()
            self._table_message = None
        self._table_told = asyncio.get_running_loop().time()
        self.reseat()
        texts: dict[bool, str] = {}  # one text for those who see the invite code, one not
        for conn in list(self.connections):
            shown = self.shows_invite_code(conn.user_id)
            text = texts.get(shown)
            if text is None:
                text = texts[shown] = _text("table", self._match.seq, self.info(conn.user_id))
            conn.send_text(text)

    def send_all(self, kind: str, payload: dict[str, Any]) -> None:
        """One message, the same for everyone: serialised once."""
        text = _text(kind, self._match.seq, payload)
        for conn in list(self.connections):
            conn.send_text(text)

    def send_snapshots(self) -> None:
        """A fresh snapshot to every connection (a match starts; a deadline changed
        without a step)."""
        for conn in list(self.connections):
            conn.send(message("snapshot", self._match.seq, self.snapshot(conn)))

    def publish(self, step: Step, before: Any) -> None:
        """Send a durable step, ``before`` the state it was played from: one JSON text
        per audience (seats that see the same share one), not per connection."""
        receivers: list[Connection] = []
        pictured: list[Connection] = []  # shown the table whole instead
        for conn in list(self.connections):
            if self.follow(conn):  # re-seated: a whole new picture, not a step
                pictured.append(conn)
            elif conn.seat is None and self.spectator_delay:
                # A delayed table's spectator gets no step: nothing while a round is
                # played, and the table as it is (a snapshot) when the round is over.
                if not self.held_back(None):
                    pictured.append(conn)
            else:
                receivers.append(conn)
        if receivers:  # first, while the views shown are those of ``before``
            texts = self._updates(step, before, {conn.seat for conn in receivers})
            for conn in receivers:
                conn.send_text(texts[conn.seat])
        for conn in pictured:
            conn.send(message("snapshot", self._match.seq, self.snapshot(conn)))

    def react(self, conn: Connection, reaction: str) -> None:
        """Pass a preset reaction on to the table, at most one per connection a second."""
        now = time.monotonic()
        if now - conn.last_reaction < REACTION_GAP:
            seq = self._match.seq
            conn.send(error_message(seq, "too_many_reactions", "one reaction a second at most"))
            return
        conn.last_reaction = now
        name = self._services.names.get(conn.user_id)
        self.send_all("reaction", reaction_payload(conn.seat, conn.user_id, name, reaction))

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop the audience's timers and close every connection (with ``code``)."""
        if self._table_message is not None:
            self._table_message.cancel()
            self._table_message = None
        for task in self._grace.values():
            task.cancel()
        for conn in list(self.connections):
            conn.close(code, reason)


def _text(kind: str, seq: int, payload: dict[str, Any]) -> str:
    """A message serialised once, to be sent as it is to many connections."""
    return orjson.dumps(message(kind, seq, payload)).decode()
