"""A live table: the one writer of its match.

Every operation on a table (a command, a join, a timer expiry, a bot's move) runs
under the table's lock, one at a time, so the table is an actor. The path of a move
reads top to bottom in this module: a command is checked, the engine applies it, the
step is appended to the event log and awaited until durable, and only then is anyone
told — one reply to the sender, one update text per seat. The server never decides a
rule: it asks the engine (``apply``, ``view``, ``timeout_action``).

The table's other concerns are its parts, each in its own module over the state they
share (``table_base.py``): seats and matches (``lifecycle.py``), sockets coming and
going (``presence.py``), the turn timer and the round break (``turn_timer.py``), and
bots and hints (``bot_turns.py``). Beside them: who sits where (``seating.py``), the
clock (``pacing.py``), bots' thinking (``autoplay.py``) and what a finished match
writes (``settlement.py``). What a table needs from its process is the
``TableServices`` protocol (``services.py``), so nothing here imports the hub.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy.exc import IntegrityError

from sahrat.rules.errors import RuleError
from sahrat.server import metrics
from sahrat.server.table.base import DEDUPE_SIZE, Step, TableBase, as_datetime
from sahrat.server.table.bot_turns import BotTurns
from sahrat.server.table.connection import Connection, refusal
from sahrat.server.table.errors import TableError
from sahrat.server.table.lifecycle import Lifecycle
from sahrat.server.table.pacing import ends_round
from sahrat.server.table.presence import Presence
from sahrat.server.table.protocol import Command
from sahrat.server.table.settlement import (
    CountingRule,
    PlayTally,
    match_players,
    match_row,
    settlement,
)
from sahrat.server.table.turn_timer import TurnTimer
from sahrat.store import ledger
from sahrat.store.log import Append

__all__ = ["Connection", "Step", "Table", "TableError", "refusal"]


class Table(Lifecycle, Presence, TurnTimer, BotTurns, TableBase):
    """A table and its current match, kept in memory by the process that serves it."""

    # --- the move: command → engine → durable log → updates ---------------------------

    async def command(self, conn: Connection, command: Command) -> None:
        """Answer one command: exactly one reply, after any update it caused."""
        started = time.perf_counter()
        async with self.lock:
            try:
                reply = await self._command(conn, command)
            except TableError as error:  # this process no longer serves the table
                reply = refusal(command.cid, error.code, error.message)
            except IntegrityError:  # another process wrote this seq: it owns the table now
                self.log.warning("table %s: another process wrote its log; letting go", self.id)
                self.hub.drop(self.id, "this table moved to another server; reconnect")
                reply = refusal(
                    command.cid, "unavailable", "the table moved to another server; send it again"
                )
            except Exception:  # the log could not be written: nothing was applied
                self.log.exception("table %s: command %s not saved", self.id, command.cid)
                reply = refusal(
                    command.cid,
                    "unavailable",
                    "the move could not be saved and was not played; send it again",
                )
        conn.send(self._message("reply", reply))
        problem = reply.get("error")
        (metrics.COMMANDS.labels(problem["code"]) if problem else metrics.COMMANDS_OK).inc()
        metrics.COMMAND_SECONDS.observe(time.perf_counter() - started)

    async def _command(self, conn: Connection, command: Command) -> dict[str, Any]:
        """Check a command, play it through the engine, and commit the step."""
        if self.follow_seating(conn):  # cannot happen while every seating change re-seats
            reply = refusal(
                command.cid, "seat_changed", "your seat at this table changed; look again"
            )
            reply["snapshot"] = self.snapshot(conn)
            return reply
        seat = conn.seat
        if seat is None:
            return refusal(command.cid, "spectator", "spectators cannot play")
        earlier = self.replies.get((seat, command.cid))
        if earlier is not None:
            return earlier  # a duplicate gets its earlier answer
        if self.status != "playing" or self.state is None:
            return refusal(command.cid, "not_playing", f"the table is {self.status}, not playing")
        if self.round_break is not None:
            return refusal(
                command.cid,
                "round_break",
                "the next round starts when every player has continued, or when the break ends",
            )
        if not self.seating.played_by_owner(seat):
            # Playing at your own seat is coming back to it, as reconnecting is.
            self._set_controller(seat, None, left=False)
            self.broadcast_table()
        if command.seq != self.seq:
            reply = refusal(
                command.cid,
                "stale",
                f"the table is at seq {self.seq}; your command was sent at seq {command.seq}",
            )
            reply["snapshot"] = self.snapshot(conn)
            return reply
        if command.action.get("seat", seat) != seat:
            return refusal(command.cid, "not_your_seat", "you can only play for your own seat")
        try:
            action = self.engine.action_from_json({**command.action, "seat": seat})
            state, events = self.engine.apply(self.state, action)
        except RuleError as error:
            return refusal(command.cid, error.code, error.message)
        except (TypeError, ValueError, AttributeError) as error:
            return refusal(command.cid, "bad_action", f"not an action: {error}")
        step = Step(
            self.seq + 1, self.engine.action_to_json(action), events, "player", seat, command.cid
        )
        await self._commit([(step, state)])
        reply = {"cid": command.cid, "ok": True}
        self._remember(seat, command.cid, reply)
        return reply

    def _remember(self, seat: int, cid: str, reply: dict[str, Any]) -> None:
        self.replies[(seat, cid)] = reply
        while len(self.replies) > DEDUPE_SIZE:
            self.replies.popitem(last=False)

    async def _commit(self, steps: list[tuple[Step, Any]]) -> None:
        """Make ``steps`` durable, then adopt the new state and tell every connection.

        The steps are appended to the log (with the match's row and coins if they end
        it) and awaited until durable; nothing is adopted or sent before that, so a
        step anyone has seen survives any crash."""
        self._check_lease()
        final_state = steps[-1][1]
        over = bool(final_state.over)
        round_ended = not over and ends_round(
            event.type for step, _ in steps for event in step.events
        )
        pause = self._new_break() if round_ended else None
        if over:
            deadline = None
        elif pause is not None:
            deadline = pause.until
        elif round_ended or self.engine.to_act(final_state) != self.engine.to_act(self.state):
            deadline = self._new_deadline(final_state)
        else:
            deadline = self.deadline
        match, players, coins = self._match_end(final_state, steps) if over else (None, [], [])
        entries = [
            {
                "seq": step.seq,
                "kind": "action",
                "seat": step.seat,
                "client_id": step.cid,
                "data": {"action": step.action, "by": step.by},
            }
            for step, _ in steps
        ]
        status = "finished" if over else "playing"
        last_seq = steps[-1][0].seq
        await self.hub.writer.append(
            Append(
                self.id,
                entries,
                last_seq,
                status,
                as_datetime(deadline),
                match=match,
                match_players=players,
                ledger=coins,
            )
        )
        self.round_break = pause
        for step, state in steps:
            self.state = state
            self.seq = step.seq
            self.actions.append(step.action)
            self.recent.append(step)
            self.tally.count(step.by, step.seat, ends_round=_ends_round(step))
            self.deadline = deadline
            self._publish(step)
        self.status = status
        if over:
            self.clock.cancel()
            self.broadcast_table()
            self.hub.forget_later(self.id)
        else:
            await self._forfeit_idle_seats()
            self._arm_timer()
            self._schedule_bot()

    def _publish(self, step: Step) -> None:
        """Send a durable step: one JSON text per seat (spectators share one), not per
        connection, from views whose common part the engine builds once."""
        receivers: list[Connection] = []
        for conn in list(self.connections):
            if self.follow_seating(conn):  # re-seated: a whole new picture, not a step
                conn.send(self._message("snapshot", self.snapshot(conn)))
            else:
                receivers.append(conn)
        if not receivers:
            return
        views = self.engine.views(self.state, {conn.seat for conn in receivers})
        texts = {
            seat: orjson.dumps(self._message("update", self._update_for(step, seat, view))).decode()
            for seat, view in views.items()
        }
        for conn in receivers:
            conn.send_text(texts[conn.seat])

    def _match_end(
        self, final_state: Any, steps: list[tuple[Step, Any]]
    ) -> tuple[dict[str, Any], list[dict[str, Any]], list[ledger.Movement]]:
        """The match row, its players' rows and the coins written with a match's last
        step. Whether the match counts for each player (``settlement.counted``) is
        decided here, from the engine's final state and this match's own turns."""
        assert self.seed is not None
        tally = self.tally.copy()  # with the steps that end the match
        for step, _ in steps:
            tally.count(step.by, step.seat, ends_round=_ends_round(step))
        row = match_row(
            self.engine,
            final_state,
            game=self.game,
            options=self.options,
            seats=self.seats,
            names=self.hub.names,
            seed=self.seed,
            first_dealer=self.first_dealer,
            actions=self.actions + [step.action for step, _ in steps],
        )
        players = match_players(
            self.game,
            final_state,
            row["score_sheet"],
            seats=self.seats,
            in_seat={seat for seat in range(self.players) if self.seating.played_by_owner(seat)},
            own_turns=tally.own_turns,
            addresses=self.seating.addresses,
            rule=CountingRule.of(self.hub.settings),
        )
        coins = settlement(
            final_state,
            table_id=self.id,
            start_seq=self.start_seq if self.start_seq is not None else 0,
            options=self.options,
            seats=self.seats,
            counted_seats={play.seat for play in players if play.counted},
            free_table_earnings=self.hub.defaults.free_table_earnings,
            earnings_per_day=self.hub.defaults.free_table_earnings_per_day,
        )
        return row, [play.to_row() for play in players], coins

    # --- a restore ---------------------------------------------------------------------

    def restore(self, entries: Sequence[Any]) -> None:
        """Rebuild the match from its log entries: its start, then its actions (the
        hub reads a table's log from its current match's start)."""
        for entry in entries:
            if entry.kind == "start":
                self.start_seq = entry.seq
                self.seed = entry.data["seed"]
                self.state = self.engine.new_game(
                    self.options, self.seed, (), entry.data.get("first_dealer")
                )
                self.first_dealer = int(self.state.dealer)
                self.actions = []
                self.tally = PlayTally()
                self.replies.clear()
                self.recent.clear()  # as a live table forgets them at a start
            elif entry.kind == "action" and self.state is not None:
                action = self.engine.action_from_json(entry.data["action"])
                self.state, events = self.engine.apply(self.state, action)
                self.actions.append(entry.data["action"])
                step = Step(
                    entry.seq,
                    entry.data["action"],
                    events,
                    entry.data.get("by", "player"),
                    entry.seat,
                    entry.client_id,
                )
                self.recent.append(step)
                self.tally.count(step.by, step.seat, ends_round=_ends_round(step))
                if entry.client_id is not None and entry.seat is not None:
                    self._remember(
                        entry.seat, entry.client_id, {"cid": entry.client_id, "ok": True}
                    )
        if self.status == "playing":
            self._resume_break()
            self._restored_left_seat()
            self._arm_timer()
            self._schedule_bot()


def _ends_round(step: Step) -> bool:
    return ends_round(event.type for event in step.events)
