"""The play of a table: the options its matches are played by, its status, its log's
seq, and the current match (its state, seed and start, its actions so far, who played
which turns), with the answers to recent commands and the recent steps.

The status and the seq live here, not on the table, because each of their changes is a
change of the play: a match starts, a step is adopted, a match ends, a finished table
waits for its rematch, the table closes. The parts that act on where the play is (the
pace, the bots, the audience) read them here.

A match begins in one place, :meth:`Match.start`, whether it is dealt now or read back
from its log; each accepted step is adopted in one place, :meth:`Match.adopt`, whether
it was just made durable or is replayed by :meth:`Match.restore`. So a table rebuilt
from its log is the table that wrote it.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import Any

from sahrat.rules.engine import Engine
from sahrat.rules.record import options_for
from sahrat.server.table.messages import accepted
from sahrat.server.table.moves import Position, Step, Steps
from sahrat.server.table.seating import Seating
from sahrat.server.table.services import TableServices
from sahrat.server.table.settlement import (
    CountingRule,
    PlayTally,
    match_players,
    match_row,
    settlement,
)
from sahrat.store import ledger

DEDUPE_SIZE = 2048  # a resent command is a recent one (docs/protocol.md promises 2048)
RECENT_SIZE = 256  # steps kept for reconnects; a client further behind gets a snapshot


class Match:
    """A table's play: its options and status, its seq, the current match (none before
    the first start) and the table's recent answers."""

    def __init__(self, engine: Engine, game: str, options: Any, status: str, seq: int) -> None:
        self._engine = engine
        self._game = game
        self.options = options  # the table's (``sahrat.rules.options``), validated
        self.status = status  # waiting, playing, finished or closed
        self.seq = seq  # the seq of the last entry of the table's log
        self.state: Any = None
        self.seed: str | None = None
        self.start_seq: int | None = None  # the seq of the current match's start entry
        self.first_dealer = 0  # who dealt the current match's first round (for its record)
        self.actions: list[dict[str, Any]] = []
        self.tally = PlayTally()
        # Answers to commands, per table rather than per match (docs/protocol.md,
        # "De-duplication"), and the steps a reconnecting client may have missed.
        self._replies: OrderedDict[tuple[int, str], dict[str, Any]] = OrderedDict()
        self.recent: deque[Step] = deque(maxlen=RECENT_SIZE)

    @property
    def playing(self) -> bool:
        return self.status == "playing"

    def position(self, paused: bool) -> Position:
        """Where the play is, for a move nobody typed (``paused``: in a round break)."""
        return Position(self.seq, self.playing, self.state, paused)

    def set_options(self, options: dict[str, Any]) -> None:
        """New (validated, stored) options, for a waiting table's next match."""
        self.options = options_for(self._game, options)

    def start(self, state: Any, seed: str, seq: int) -> None:
        """A new match, dealt from ``seed``, whose start entry is ``seq``: the last
        match's actions, turns and steps are forgotten."""
        self.status = "playing"
        self.seq = seq
        self.state = state
        self.seed = seed
        self.start_seq = seq
        self.first_dealer = int(state.dealer)
        self.actions = []
        self.tally = PlayTally()
        self.recent.clear()

    def adopt(self, step: Step, state: Any) -> Any:
        """A durable step: its seq is the table's, its state the match's. Returns the
        state it was played from (an update says what changed since)."""
        before = self.state
        self.seq = step.seq
        self.state = state
        self.actions.append(step.action)
        self.recent.append(step)
        self.tally.count(step.by, step.seat, ends_round=step.ends_round)
        return before

    def finish(self) -> None:
        """The match's last step is adopted: the table is finished."""
        self.status = "finished"

    def reopen(self) -> None:
        """A finished table waits again, for its rematch's start."""
        self.status = "waiting"

    def close(self) -> None:
        """The table is closed for good."""
        self.status = "closed"

    def tally_with(self, steps: Steps) -> PlayTally:
        """The turns of the match as they will be once ``steps`` are adopted."""
        tally = self.tally.copy()
        for step, _ in steps:
            tally.count(step.by, step.seat, ends_round=step.ends_round)
        return tally

    def settle(
        self,
        final_state: Any,
        steps: Steps,
        *,
        table_id: int,
        seating: Seating,
        services: TableServices,
    ) -> tuple[dict[str, Any], list[dict[str, Any]], list[ledger.Movement]]:
        """The match row, its players' rows and the coins written with the ``steps``
        that end the match. Whether the match counts for each player
        (``settlement.counted``) is decided here, from the engine's final state and
        this match's own turns."""
        assert self.seed is not None
        seats = seating.seats
        row = match_row(
            self._engine,
            final_state,
            game=self._game,
            options=self.options,
            seats=seats,
            names=services.names,
            seed=self.seed,
            first_dealer=self.first_dealer,
            actions=self.actions + [step.action for step, _ in steps],
        )
        players = match_players(
            self._game,
            final_state,
            row["score_sheet"],
            seats=seats,
            in_seat={seat for seat in range(len(seats)) if seating.played_by_owner(seat)},
            own_turns=self.tally_with(steps).own_turns,
            addresses=seating.addresses,
            rule=CountingRule.of(services.settings),
        )
        coins = settlement(
            final_state,
            table_id=table_id,
            start_seq=self.start_seq if self.start_seq is not None else 0,
            options=self.options,
            seats=seats,
            counted_seats={play.seat for play in players if play.counted},
            free_table_earnings=services.defaults.free_table_earnings,
            earnings_per_day=services.defaults.free_table_earnings_per_day,
        )
        return row, [play.to_row() for play in players], coins

    # --- answers and missed steps --------------------------------------------------------

    def answer(self, seat: int, cid: str) -> dict[str, Any] | None:
        """The answer already given to the seat's command ``cid``, if it was accepted."""
        return self._replies.get((seat, cid))

    def remember(self, seat: int, cid: str, reply: dict[str, Any]) -> None:
        self._replies[(seat, cid)] = reply
        while len(self._replies) > DEDUPE_SIZE:
            self._replies.popitem(last=False)

    def missed_since(self, since: int) -> list[Step] | None:
        """The steps after ``since`` if all of them are still remembered, else None."""
        if since == self.seq:
            return []
        if since > self.seq or not self.recent:
            return None
        if self.recent[0].seq > since + 1:
            return None
        return [step for step in self.recent if step.seq > since]

    def round_just_ended(self) -> bool:
        """The last step ended a round (deal): the table may be in the break after it."""
        return bool(self.recent) and self.recent[-1].ends_round

    # --- a restore -----------------------------------------------------------------------

    def restore(self, entries: Sequence[Any]) -> None:
        """Rebuild the match from its log entries: its start, then its actions (the
        table's log is read from its current match's start)."""
        engine = self._engine
        for entry in entries:
            if entry.kind == "start":
                seed = entry.data["seed"]
                state = engine.new_game(self.options, seed, (), entry.data.get("first_dealer"))
                self.start(state, seed, entry.seq)
            elif entry.kind == "action" and self.state is not None:
                action = engine.action_from_json(entry.data["action"])
                state, events = engine.apply(self.state, action)
                step = Step(
                    entry.seq,
                    entry.data["action"],
                    events,
                    entry.data.get("by", "player"),
                    entry.seat,
                    entry.client_id,
                )
                self.adopt(step, state)
                if entry.client_id is not None and entry.seat is not None:
                    self.remember(entry.seat, entry.client_id, accepted(entry.client_id))
