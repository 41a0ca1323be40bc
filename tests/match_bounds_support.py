"""Whole matches played by a mix of turn timers and simple players, measured against the
bounds of docs/rules.md (§1.3 and §1.9 for Konkan, §2.6 for Conquian), and paid out.

A seat is either the turn timer (``engine.timeout_action``: what the server plays for a
seat whose player is gone or idle) or the simple player of ``sahrat.bots``. Used by
``tests/test_match_bounds.py`` and, at larger counts, ``tests/hardening/test_endless_matches.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sahrat.bots.levels import bot_for
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.rules.record import engine_for, options_for
from sahrat.store.ledger import payout_shares

# A Konkan turn: commit, redeal, draw (or take the discard), discard (or end the turn),
# and at most 17 lay-downs or swaps, each moving at least one of the hand's (at most
# 15) cards or 2 jokers to the table.
KONKAN_ACTIONS_PER_TURN = 21
# A Conquian deal: 20 stock cards and at most 22 cards laid, each turned up, discarded
# or passed at most once, with at most one forcing question each.
CONQUIAN_ACTIONS_PER_DEAL = 200


@dataclass
class Played:
    game: str
    options: KonkanOptions | ConquianOptions
    timers: list[bool]
    actions: int = 0
    rounds: int = 0  # Konkan rounds or Conquian deals
    most_round_actions: int = 0
    most_round_turns: int = 0
    over: bool = False
    winner: int | None = None
    places: list[int] | None = None
    shares: dict[int, int] = field(default_factory=dict)
    pot: int = 0

    def bound(self) -> int:
        """The most actions the rules allow this match (docs/rules.md)."""
        if isinstance(self.options, KonkanOptions):
            o = self.options
            return (o.rounds + o.max_extra_rounds) * o.max_round_turns * KONKAN_ACTIONS_PER_TURN
        return self.most_deals() * CONQUIAN_ACTIONS_PER_DEAL

    def most_rounds(self) -> int:
        if isinstance(self.options, KonkanOptions):
            return self.options.rounds + self.options.max_extra_rounds
        return self.most_deals()

    def most_deals(self) -> int:
        assert isinstance(self.options, ConquianOptions)
        return 2 * self.options.wins_needed - 1 + self.options.max_drawn_deals


def play(game: str, values: dict[str, Any], seed: str, timers: list[bool]) -> Played:
    """Play one match to its end (or past its bound, which the caller reports)."""
    engine = engine_for(game)
    options = options_for(game, values)
    state = engine.new_game(options, seed)
    bots = [bot_for(game, "simple") for _ in range(state.players)]
    played = Played(game, options, timers)
    limit = played.bound() + 1
    round_actions = round_turns = 0
    current = len(state.results)
    while not state.over and played.actions < limit:
        seat = engine.to_act(state)
        action = None if timers[seat] else bots[seat](engine.view(state, seat))
        if action is None or engine.check_action(state, action) is not None:
            action = engine.timeout_action(state)
        state, events = engine.apply(state, action)
        played.actions += 1
        round_actions += 1
        round_turns += sum(e.type in ("discard", "end_turn", "redeal") for e in events)
        if len(state.results) != current:
            current = len(state.results)
            played.most_round_actions = max(played.most_round_actions, round_actions)
            played.most_round_turns = max(played.most_round_turns, round_turns)
            round_actions = round_turns = 0
    played.over = state.over
    played.rounds = len(state.results)
    played.winner = state.match_winner
    places = getattr(state, "places", None)
    played.places = list(places) if places else None
    played.pot = options.stake * state.players
    if state.over:
        played.shares = payout_shares(played.pot, state.players, played.places, played.winner)
    return played


def problems(played: Played) -> list[str]:
    """What broke a bound or the payout (empty when the match kept every rule)."""
    out = []
    if not played.over:
        out.append(f"not over after {played.actions} actions (bound {played.bound()})")
    if played.rounds > played.most_rounds():
        out.append(f"{played.rounds} rounds, more than {played.most_rounds()}")
    if isinstance(played.options, KonkanOptions):
        if played.most_round_turns > played.options.max_round_turns:
            out.append(f"a round of {played.most_round_turns} turns")
        cap = played.options.max_round_turns * KONKAN_ACTIONS_PER_TURN
    else:
        cap = CONQUIAN_ACTIONS_PER_DEAL
    if played.most_round_actions > cap:
        out.append(f"a round or deal of {played.most_round_actions} actions, over {cap}")
    if played.over and sum(played.shares.values()) != played.pot:
        out.append(f"shares {played.shares} do not add up to the pot {played.pot}")
    if any(amount < 0 for amount in played.shares.values()):
        out.append(f"a negative share: {played.shares}")
    return out
