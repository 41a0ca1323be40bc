"""Who plays a seat: its player, a bot, or the turn timer. A seat changes hands when
its player leaves or comes back, when their grace period runs out, and when the timer
has played it too many turns in a row (a forfeit); a left seat's turn is hurried.

Functions of the :class:`Host` they act on (the ``Table``), like ``lifecycle.py``'s; the
plain ones run whole between two awaits, like the table's own plain methods."""

from __future__ import annotations

import asyncio

from sahrat.server.table.errors import TableError
from sahrat.server.table.host import Host, as_datetime
from sahrat.store.log import Append


def set_controller(
    table: Host, seat: int, bot_level: str | None, *, left: bool
) -> asyncio.Task[None]:
    """Hand a seat to a bot (or back to its player), remembered in the database; the
    task that writes it (awaited by a leave, whose answer says it is done)."""
    table.seating.control(seat, bot_level, left=left)
    table.bots.forget(seat)
    if bot_level is None and not left:
        table.match.tally.back(seat)  # back at the seat: idle turns start again
    elif table.pace.reader_done(seat):  # a bot reads no summary
        table.break_changed()
    owner = table.seating.seats[seat]
    task = asyncio.create_task(table.services.store_seat(table.id, seat, owner, bot_level, left))
    table.services.background(task)
    table.schedule_bot()
    return task


def retake(table: Host, seat: int) -> bool:
    """A socket of the seat's player is here during a match: coming back to the table
    takes the seat over again, hand and all, from a bot or the timer (True if so)."""
    if table.match.status != "playing" or table.seating.played_by_owner(seat):
        return False
    set_controller(table, seat, None, left=False)
    return True


def away(table: Host, seat: int) -> None:
    """A seat's grace period ran out with none of its player's sockets back: at a free
    table a bot plays the hand until the player is back (at a coin table the timer)."""
    if table.match.status != "playing":
        return
    table.seating.mark_away(seat)
    if table.bots_allowed:
        set_controller(table, seat, table.bot_level, left=False)
    table.audience.table_changed()


async def forfeit_idle_seats(table: Host) -> None:
    """A seat the timer played for ``timer_turns_to_forfeit`` turns in a row is
    forfeited like a player who left: a bot plays it at a free table, the timer at a
    coin table (at a left seat's pace), and its player may come back and take it over."""
    forfeited: list[int] = []
    seating = table.seating
    for seat in table.match.tally.idle(table.services.settings.timer_turns_to_forfeit):
        owner = seating.seats[seat]
        if seat not in seating.left and owner is not None:
            level = table.bot_level if table.bots_allowed else None
            set_controller(table, seat, level, left=True)
            forfeited.append(owner)
    if forfeited:
        if table.rated:  # a forfeit is a leave (docs/rating.md)
            for owner in forfeited:
                await record_leave(table, owner, "forfeit")
        table.audience.table_changed()
        await hurry_left_seat(table)


async def record_leave(table: Host, user_id: int, reason: str) -> None:
    """A rated match left (or forfeited): the player's cool-down, stored once per
    match. Not stored (the database failed): logged, and the leave stands anyway (the
    seat is last at the match's end all the same, being left)."""
    try:
        await table.services.record_rated_leave(
            user_id, table.id, table.match.start_seq or 0, reason
        )
    except Exception:
        table.log.exception("table %s: the rated leave of %s was not stored", table.id, user_id)


async def hurry_left_seat(table: Host) -> None:
    """The seat to act has just been left to the timer (its player left, was suspended,
    or forfeited it): its turn ends within the short time from now rather than at the
    table's deadline. The new deadline is stored as a step's is (a restart or a
    takeover keeps it) and shown to everyone in a fresh snapshot, the deadline having
    changed without a step. A player who comes back during that turn has what is left
    of it (coming and going gives no one more time)."""
    deadline = table.pace.hurried()
    if deadline is None:
        return
    match = table.match
    try:
        table.check_lease()
        await table.services.writer.append(
            Append(table.id, [], match.seq, match.status, as_datetime(deadline))
        )
    except TableError:
        return  # another process serves the table now; its restore shortens the turn
    except Exception:  # not stored: the restore shortens the turn again
        table.log.warning("table %s: a left seat's deadline was not stored", table.id)
    table.pace.hurry(deadline)
    table.arm()
    table.audience.send_snapshots()
