"""The break between rounds (deals): once a round ends, its summary is read; the next
round's play starts when every player is done with it (or its time runs out:
``pace.py``). Functions of the :class:`Host` they act on (the ``Table``)."""

from __future__ import annotations

from sahrat.server.table.connection import Connection
from sahrat.server.table.host import Host
from sahrat.server.table.messages import break_payload


def continue_play(table: Host, conn: Connection) -> None:
    """A player is done with the round's summary; the last one starts the round (a
    late or a spectator's continue changes nothing)."""
    table.audience.follow(conn)
    if conn.seat is not None and table.pace.reader_done(conn.seat):
        changed(table)


def changed(table: Host) -> None:
    """Tell the table who is still reading; end the break once nobody is."""
    pause = table.pace.round_break
    if pause is None:
        return
    if pause.waiting:
        _send(table)
    else:
        end(table)


def end(table: Host) -> None:
    """The next round's play starts (everyone read the summary, or its time ran out):
    its first turn's clock, its bots."""
    if table.pace.end_break():
        _send(table)
        table.arm()
        table.schedule_bot()


def _send(table: Host) -> None:
    table.audience.send_all("break", break_payload(table.pace.round_break, table.pace.deadline))
