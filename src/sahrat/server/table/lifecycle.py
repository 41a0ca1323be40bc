"""A table's seats and matches: joining and leaving, options while it waits, the start
of a match (with the stakes of a coin table), the rematch, and closing (who plays a
seat, its player, a bot or the timer, is ``seat_control.py``).

These are the table's own operations, written as functions of the :class:`Host` they
act on (the ``Table``), because each one changes several of its parts together. The
coroutines run under the table's lock (the table's public methods take it and call
them).

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

import sahrat.server.table.seat_control as seat_control
from sahrat.rules.record import options_for
from sahrat.rules.rng import new_seed
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.host import Host, as_datetime
from sahrat.server.table.messages import error_message, error_payload
from sahrat.store import ledger
from sahrat.store.log import Append

# --- seats ---------------------------------------------------------------------------------


async def join(table: Host, user_id: int, seat: int | None, address: str | None) -> None:
    seating, match, services = table.seating, table.match, table.services
    mine = seating.seat_of(user_id)
    if match.status == "playing" and mine is not None:
        if not seating.played_by_owner(mine):
            await services.check_can_sit(user_id, 0)
            seat_control.set_controller(table, mine, None, left=False)
            table.audience.table_changed()
            return
        raise TableError("already_seated", "you already have a seat at this table")
    if match.status != "waiting":
        raise TableError("table_started", "the match has started; watch as a spectator")
    if mine is not None:
        raise TableError("already_seated", "you already have a seat at this table")
    free = seating.free()
    if not free:
        raise TableError("table_full", "every seat is taken")
    if seat is None:
        seat = free[0]
    elif not 0 <= seat < table.players:
        raise TableError("no_such_seat", f"seat {seat} is not a seat at this table")
    elif seat not in free:
        raise TableError("seat_taken", f"seat {seat} is taken")
    options = match.options
    if options.coin_table and services.settings.one_address_per_coin_table:
        seating.check_address(address)
    await services.check_can_sit(user_id, options.stake)
    if table.rated:  # a player in a cool-down may not sit down to rated play
        await services.check_rated(user_id)
        table.ratings.update(await services.seat_ratings([user_id], table.pool))
    await services.store_seat(table.id, seat, user_id, None, False, address)
    seating.sit(seat, user_id, address)
    await _start_if_full(table)
    table.audience.table_changed()
    if seating.seat_of(user_id) is None:  # the match could not start: not enough coins
        raise TableError(
            "not_enough_coins",
            f"you cannot cover this table's stake of {options.stake}",
        )


async def start_with_bots(table: Host, user_id: int, level: str | None) -> None:
    """The creator starts a free table now, bots in the empty seats; they play at
    ``level`` if given, else at the table's ``bot_level`` option."""
    level = level or table.match.options.bot_level
    if user_id != table.creator_id:
        raise TableError("not_creator", "only the table's creator can start it")
    if table.match.status != "waiting":
        raise TableError("table_started", "the match has already started")
    if not table.bots_allowed:
        raise TableError("no_bots_at_coin_tables", "bots never sit at coin tables")
    if table.seating.seat_of(user_id) is None:
        raise TableError("not_seated", "take a seat before starting with bots")
    for seat in table.seating.free():
        await table.services.store_seat(table.id, seat, None, level, False)
        table.seating.control(seat, level, left=False)
    await start_match(table)
    table.audience.table_changed()


async def leave(table: Host, user_id: int) -> None:
    seating = table.seating
    seat = seating.seat_of(user_id)
    if seat is None:
        raise TableError("not_seated", "you have no seat at this table")
    if table.match.status == "playing":
        # Leaving never redeals: at a free table a bot plays on with the same hand, at
        # a coin table the turn timer does; the player may come back.
        level = table.bot_level if table.bots_allowed else None
        stored = seat_control.set_controller(table, seat, level, left=True)
        # Stored before the answer (a restart must know the seat was left); a failure
        # is logged by the task itself.
        await asyncio.wait([stored])
        if table.rated:
            await seat_control.record_leave(table, user_id, "left")
        if seating.only_bots_play(table.bots_allowed):
            await _abandon(table)
            return
        table.audience.table_changed()
        await seat_control.hurry_left_seat(table)  # a coin table's timer: a left seat's pace
        return
    await table.services.remove_seat(table.id, seat)
    seating.unseat(seat)  # leaving a finished table declines its rematch
    table.audience.table_changed()


async def update_options(table: Host, options: dict[str, Any]) -> None:
    """Change some options of a waiting table (raises BadOption naming a bad one): the
    seats follow ``players``, and a table shrunk to exactly its players starts."""
    match = table.match
    if match.status == "playing":
        raise TableError(
            "match_in_progress",
            "a match is in progress at this table; change its options when it is over",
        )
    if match.status != "waiting":
        raise TableError("table_finished", f"the table is {match.status}")
    parsed = options_for(table.game, {**match.options.to_json(), **options})
    taken = [seat for seat, owner in enumerate(table.seating.seats) if owner is not None]
    if taken and max(taken) >= int(parsed.players):
        raise TableError("seats_taken", f"seat {max(taken)} is taken; cannot shrink the table")
    stored = parsed.to_json()
    await table.services.store_options(table.id, stored)
    match.set_options(stored)
    if table.rated:  # the pool may have changed (Konkan to 51 or to 71)
        owners = [owner for owner in table.seating.seats if owner is not None]
        table.ratings.clear()
        table.ratings.update(await table.services.seat_ratings(owners, table.pool))
    table.seating.resize(table.players)
    if any(owner is not None for owner in table.seating.seats):
        await _start_if_full(table)
    table.audience.table_changed()


# --- a match's start -----------------------------------------------------------------------


async def _start_if_full(table: Host) -> None:
    if not table.seating.free():
        await start_match(table)


async def start_match(table: Host) -> bool:
    """Deal a new match. At a coin table every seat's stake moves into the match's pot
    in the same transaction as the ``start`` entry; a player who cannot cover it any
    more loses the seat and the table keeps waiting (False). Once the entry is durable
    the match is the table's, and everyone gets its first snapshot."""
    match, seats, options = table.match, table.seating.seats, table.match.options
    seed = new_seed()
    state = table.engine.new_game(options, seed)
    seq = match.seq + 1
    deadline = table.pace.turn_deadline(state)
    entry = {
        "seq": seq,
        "kind": "start",
        "seat": None,
        "client_id": None,
        "data": {"seed": seed, "seats": list(seats), "first_dealer": state.dealer},
    }
    stakes: list[ledger.Movement] = []
    if options.coin_table:
        owners = [owner for owner in seats if owner is not None]
        have = await table.services.coin_balances(owners)
        short = [owner for owner in owners if have[owner] < options.stake]
        if short:
            await _unseat_short(table, short)
            return False
        stakes = ledger.stake_movements(table.id, seq, seats, options.stake)
    table.check_lease()
    try:
        await table.services.writer.append(
            Append(table.id, [entry], seq, "playing", as_datetime(deadline), ledger=stakes)
        )
    except ledger.Overdraft as error:  # the balance changed since we looked
        owner = ledger.user_of(error.account)
        await _unseat_short(table, [owner] if owner is not None else [])
        return False
    match.start(state, seed, seq)
    table.pace.start(deadline)
    table.audience.send_snapshots()
    table.arm()
    table.schedule_bot()
    return True


async def _unseat_short(table: Host, user_ids: list[int]) -> None:
    """Free the seats of players who cannot cover the stake, and tell the table."""
    for user_id in user_ids:
        seat = table.seating.seat_of(user_id)
        if seat is None:
            continue
        await table.services.remove_seat(table.id, seat)
        table.seating.unseat(seat)
    table.audience.reseat()
    names = ", ".join(table.services.names.get(u, f"player {u}") for u in user_ids)
    text = (
        f"the match could not start: {names} cannot cover the stake of "
        f"{table.match.options.stake} coins; the table waits for players"
    )
    table.audience.send_all("error", error_payload("not_enough_coins", text))


# --- a rematch ------------------------------------------------------------------------------


async def ask_rematch(table: Host, conn: Connection) -> None:
    """A seated player asks for another match at the same seats; the last one to ask
    starts it (bots' seats are in the list from the match's end). At a free table a seat
    whose player left the match goes to a bot; at a coin table everyone must still be
    there (and pay again). Asking again changes nothing and sends nothing."""
    table.audience.follow(conn)
    problem = _rematch_problem(table, conn.seat)
    if problem is not None:
        conn.send(error_message(table.match.seq, *problem))
        return
    assert conn.seat is not None
    seating = table.seating
    if not seating.ask_rematch(conn.seat):
        return  # asked already: nobody is told anything new
    if len(seating.rematch_seats(table.bots_allowed)) < table.players:
        table.audience.table_changed()
        return
    await _rematch(table)


def _rematch_problem(table: Host, seat: int | None) -> tuple[str, str] | None:
    seating = table.seating
    if table.match.status != "finished":
        return "not_finished", "a rematch is asked for once the match is over"
    if table.rated:
        return "rated_no_rematch", "a rated table plays one match: ask for a new rated game"
    if seat is None:
        return "spectator", "spectators cannot ask for a rematch"
    if seat in seating.left:
        return "left", "you left this match"
    if seating.free():
        return "seat_empty", "a player left the table: open a new one"
    if not table.bots_allowed and seating.left:
        return "seat_empty", "a player left this coin match: open a new table"
    return None


async def _rematch(table: Host) -> None:
    """Everyone asked: leavers' seats go to bots, and a new match is dealt."""
    level = table.bot_level
    seating = table.seating
    for seat in sorted(seating.left):
        await table.services.store_seat(table.id, seat, None, level, False)
        seating.give_to_bot(seat, level)
    seating.new_match()
    table.match.reopen()
    if not await start_match(table):  # a stake nobody can cover any more
        await table.services.store_status(table.id, "waiting")
    table.audience.table_changed()


# --- closing --------------------------------------------------------------------------------


async def _abandon(table: Host) -> None:
    """The last person left a free match of bots: the match is abandoned unfinished (no
    match row, nothing earned, nothing in anyone's history), the table is closed and
    leaves memory, and its sockets are closed."""
    await table.services.store_closed(table.id, False)
    closed(table, free_seats=False)
    table.services.forget_closed(table.id)


async def close_down(table: Host, unless: Callable[[], bool] | None) -> bool:
    """Close the table for good (not while it plays, nor when ``unless`` says no once
    the lock is held): stored, a waiting table's seats freed, everyone told, every
    socket closed. False if it stays open."""
    status = table.match.status
    if status == "playing":
        raise TableError("match_in_progress", "the table's match is in progress; close it after")
    if unless is not None and unless():
        return False
    await table.services.store_closed(table.id, status == "waiting")
    closed(table, free_seats=status == "waiting")
    return True


def closed(table: Host, *, free_seats: bool) -> None:
    """The table was closed (its row says so): a waiting table's seats are freed,
    everyone is told, then every socket closes."""
    table.match.close()
    if free_seats:
        table.seating.free_all()
    table.audience.send_table()  # now: the sockets close right after it
    table.close()
