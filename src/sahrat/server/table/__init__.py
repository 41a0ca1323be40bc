"""A live table: one actor per table, the one writer of its match.

A ``Table`` holds its parts; each owns its fields and its tasks, and none holds the
table or calls into it. Where a part needs the table to act later (the timer's move
when a turn runs out, a bot's move after its pause, a seat's grace period running
out) it is handed a callable, and every move comes back through the table's one
entry. The map of the package, one module each:

``table.py``
    ``Table``: the lock, the parts, the surface the hub and the transports use, and
    the path of a move (below).
``lifecycle.py``
    the table's operations on seats and matches: joining and leaving, options while
    it waits, a match's start with its stakes, the rematch, closing. Functions of the
    table (``host.py``'s ``Host``: what they use of it), since each changes several
    parts together; the table's methods take the lock and call them. Beside it, as
    functions of the table too: ``seat_control.py`` (who plays a seat: its player, a
    bot, the timer; forfeits and a left seat's hurried turn), ``round_break.py`` (the
    break between rounds) and ``ending.py`` (a match's end: the rows its last append
    writes, what the table does once they are durable).
``match.py``
    ``Match``, the play: the options, the status, the log's seq, the current match
    (state, seed, start, actions, turns per seat) and the answers to recent commands;
    a match starts in one place, a step is adopted in one place, and a restore replays
    the log through those same two.
``pace.py``
    ``Pace``: the turn's deadline, the round break, the clock; plans the deadline of
    the steps about to be written, arms the clock, and makes the timer's move.
``audience.py``
    ``Audience``: the connections, what each is shown (info, snapshot, updates, drawn
    from the parts as they are when sent), merged ``table`` messages, reactions and
    the grace period of a seat whose sockets are gone.
``bots.py``
    ``BotDriver``: the bots' players, the one pending bot turn, and hints.
``moves.py``
    ``Step`` (an accepted action and what it caused), ``Position`` and the types of
    a move nobody typed.
``seating.py`` (who sits where, the only truth of it), ``pacing.py`` (``Clock``,
``RoundBreak``), ``autoplay.py`` (bots think off the event loop), ``settlement.py``
(what a finished match writes: rows, coins, whether it counted), ``protocol.py``
(the wire's shapes: every message a client sends and every one the server sends),
``messages.py`` (the server's messages built, one function per shape), ``chat.py``
(the table's chat, its rules ``server/social/chat.py``),
``connection.py`` (a socket's outgoing queue), ``services.py`` (``TableServices``:
all a table needs from its process, so nothing here imports the hub), ``errors.py``
(``TableError``: a code and a message).

**The path of a move.** A command (``Table.command``) is checked (seat, duplicate,
status, break, seq), the engine applies it, and ``Table._commit`` plans the pace, adds
the match's rows and coins if it ends, appends the steps to the event log and awaits
them until durable; only then are they adopted (``Match.adopt``), published (one text
per seat, ``Audience.publish``) and the clock and bots armed for the next turn. The
timer's move (``Pace``) and a bot's (``BotDriver``) are handed to ``Table.submit``,
which plays them under the lock from the table's position then, through the same
``_commit``; a move asked for at one seq is never played at another.

Why the status and the seq live in ``Match`` and not on the table: each of their
changes is a change of the play (a start, a step, a match's end, a rematch's wait,
the close), and the parts that act on where the play is read them there without
asking the table.
"""

from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.messages import refusal
from sahrat.server.table.moves import Step
from sahrat.server.table.services import ServerDefaults, TableServices
from sahrat.server.table.table import Table

__all__ = [
    "Connection",
    "ServerDefaults",
    "Step",
    "Table",
    "TableError",
    "TableServices",
    "refusal",
]
