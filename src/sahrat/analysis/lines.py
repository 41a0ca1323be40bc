"""The moves weighed at a decision and their values on sampled deals.

A :class:`Position` is what one seat could see (its view) and the set of cards it could
not place (the other hands and the stock: a seat that remembers every discard knows
which cards these are, never where they are). A :class:`Line` is a move as the round
simulator plays it. :func:`evaluate` deals the unseen cards ``samples`` times with the
expert's sampler (an unopened seat holds no opening, an opened one no meld) and plays
every line on the same deals to the end of the round.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sahrat.bots import konkan_bot
from sahrat.bots.expert import konkan_discards
from sahrat.bots.konkan_expert import KonkanExpert, _take_to_open, face_of
from sahrat.bots.konkan_sim import Round
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules import konkan
from sahrat.rules.cards import Card, parse_card
from sahrat.rules.search import SearchResult, best_melds

DISCARDS = 3  # discards weighed for each way of playing the turn
# points of a round a decision must lose to be tagged (docs/analysis.md, "Tags")
THRESHOLDS = {"inaccuracy": 4.0, "mistake": 10.0, "blunder": 25.0}
INACCURACY = THRESHOLDS["inaccuracy"]
SIGNIFICANCE = 2.0  # standard errors a loss must exceed to count
# The expert's sampler and round simulator (its base round and its deals hold no state
# of the seat's: one serves every position).
ROLLOUTS = KonkanExpert(konkan_bot.KonkanBot(), 1)


@dataclass(frozen=True)
class Line:
    """``move``: draw, take, open, hand, wait or discard; ``card``: the discard."""

    move: str
    card: str | None = None

    def to_json(self, position: Position, *, melds: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"move": self.move}
        if self.card is not None:
            out["card"] = self.card
        if melds and self.move in ("open", "hand"):
            out["melds"] = position.opening_melds()
        return out


@dataclass
class Position:
    seat: int
    view: dict[str, Any]
    me: KonkanSeat
    hidden: list[Card]

    @classmethod
    def of(cls, state: konkan.KonkanState, seat: int) -> Position:
        view = konkan.view(state, seat)
        hidden = [
            card for other in range(state.players) if other != seat for card in state.hands[other]
        ]
        hidden += list(state.stock)
        # in a fixed order: where the unseen cards really are must not steer the samples
        hidden.sort(key=face_of)
        return cls(seat, view, KonkanSeat(view), hidden)

    @property
    def hand(self) -> list[Card]:
        return list(self.me.hand)

    @property
    def opened(self) -> bool:
        return bool(self.me.me_opened)

    @cached_property
    def found(self) -> SearchResult:
        """The search's best melds of the hand (asked for by several parts: once)."""
        return best_melds(self.me.hand, self.me.ace)

    @property
    def can_open(self) -> bool:
        if self.opened:
            return False
        return bool(self.found.melds) and self.found.value >= self.me.opening_target

    def opening_melds(self) -> list[list[str]]:
        return [[str(card) for card in meld] for meld in self.found.melds]

    def to_json(self) -> dict[str, Any]:
        me = self.me
        return {
            "hand": [str(card) for card in me.hand],
            "pile": None if me.top is None else str(me.top),
            "stock": me.stock_count,
            "hand_counts": list(me.hand_counts),
            "opened": list(me.opened),
            "melds": [[str(card) for card in table_meld.meld.cards] for table_meld in me.melds],
        }


def _sim_order(position: Position, after_lay: bool) -> list[str]:
    """The hand's real cards, most discardable first, as the simulator ranks them
    (after laying what it lays when ``after_lay``)."""
    game = ROLLOUTS.base_round(position.me)
    seat = position.seat
    if after_lay:
        game.lay_what_fits(seat)
    by_face: dict[int, str] = {}
    for card in position.me.hand:
        if not card.is_joker:
            by_face.setdefault(face_of(card), str(card))
    order = []
    while True:
        face = game.discard_choice(seat)
        if face < 0:
            break
        if face in by_face:
            order.append(by_face.pop(face))
        game.remove(seat, face)
    return order


def _strong_order(position: Position) -> list[str]:
    me = position.me
    memory = konkan_bot.Memory()
    first = konkan_bot.choose_discard(me, memory, position.found)
    if not isinstance(first, konkan.Discard):
        return []
    return [str(card) for card, _ in konkan_discards(me, memory, first.card, DISCARDS)]


def can_take(position: Position) -> bool:
    me = position.me
    if me.top is None or me.top.is_joker:
        return False
    if not me.me_opened:
        return _take_to_open(me) is not None
    if any(konkan_bot._fits(table_meld.meld, me.top) for table_meld in me.melds):
        return True
    found = best_melds([*me.hand, me.top], me.ace)
    return any(me.top in meld for meld in found.melds)


def weighed_lines(position: Position, kind: str) -> list[Line]:
    if kind == "draw":
        return [Line("draw"), Line("take")] if can_take(position) else []
    lines: list[Line] = []
    if position.can_open:
        rest = _sim_order(position, True)
        if len(rest) <= 1 and len(position.hand) > 1:
            lines += [Line("hand", card) for card in rest]
        else:
            lines += [Line("open", card) for card in rest[:DISCARDS]]
        lines += [Line("wait", card) for card in _strong_order(position)[:DISCARDS]]
    elif position.opened:
        lines += [Line("discard", card) for card in _sim_order(position, True)[:DISCARDS]]
    else:
        lines += [Line("discard", card) for card in _strong_order(position)[:DISCARDS]]
    return list(dict.fromkeys(lines))


def grid_lines(position: Position, kind: str) -> list[Line]:
    """Every answer to the decision (for a puzzle)."""
    if kind == "draw":
        return [Line("draw"), Line("take")] if can_take(position) else []
    faces = list(dict.fromkeys(str(card) for card in position.hand if not card.is_joker))
    if position.opened:
        return [Line("discard", card) for card in _sim_order(position, True)]
    if not position.can_open:
        return [Line("discard", card) for card in faces]
    rest = _sim_order(position, True)
    laid = "hand" if len(rest) <= 1 and len(position.hand) > 1 else "open"
    return [*(Line(laid, card) for card in rest), *(Line("wait", card) for card in faces)]


def _face(text: str | None) -> int:
    return -1 if text is None else face_of(parse_card(text))


def _play(position: Position, game: Round, line: Line, from_played: bool) -> float:
    seat = position.seat
    opened_before = position.opened
    face = _face(line.card)
    if from_played:  # the real state before the discard: its lay-downs are made
        game.finish_turn(seat, face, opened_before)
    elif line.move == "draw":
        if not game.stock:
            return 0.0
        game.add(seat, game.stock.pop())
        if not game.opened[seat] and game.value(seat) >= game.target:
            game.lay_down(seat)
            game.opened[seat] = True
        elif game.opened[seat] and game.value(seat) > 0:
            game.lay_down(seat)
        if game.opened[seat]:
            game.lay_offs(seat)
        game.finish_turn(seat, -1, opened_before)
    elif line.move == "take":
        game.add(seat, game.top)
        game.top = -1
        game.lay_down(seat)
        game.opened[seat] = True
        game.lay_offs(seat)
        game.finish_turn(seat, -1, opened_before)
    elif line.move in ("open", "hand") or (line.move == "discard" and opened_before):
        game.lay_what_fits(seat)
        game.finish_turn(seat, face, opened_before)
    else:  # wait, or a discard before opening
        game.finish_turn(seat, face, False)
    game.run()
    return round_value(game.scores(), seat)


def round_value(scores: Sequence[int], seat: int) -> float:
    """A round's points on the analysis's scale: the others' average less the seat's own
    (higher is better). Unlike the expert's, no weight for winning the match: a value
    is points of a round, and the match's ±60 would only add spread to every sample."""
    others = [score for other, score in enumerate(scores) if other != seat]
    return sum(others) / len(others) - scores[seat]


def evaluate(
    position: Position,
    played: Line,
    played_from: Position | None,
    others: Sequence[Line],
    samples: int,
    rng: random.Random,
    most: int | None = None,
) -> tuple[list[float], list[float]]:
    """The mean value of ``played`` (from ``played_from``, the state before its discard,
    when given) and of each of ``others`` on the same deals, and the standard error of
    each one's paired difference with ``played`` (0 for ``played`` itself).

    ``samples`` deals first; while the best line beats ``played`` by more than the
    inaccuracy threshold yet by no more than :data:`SIGNIFICANCE` standard errors, more
    deals are played, ``samples`` at a time, up to ``most``: the deals go where the
    verdict is in doubt."""
    base = ROLLOUTS.base_round(position.me)
    base_played = ROLLOUTS.base_round(played_from.me) if played_from is not None else base
    results: list[list[float]] = [[] for _ in range(len(others) + 1)]
    limit = most if most is not None else samples
    while True:
        for _ in range(samples):
            world = ROLLOUTS.sample(position.me, base, position.hidden, rng)
            game = base_played.copy()
            for seat in range(game.players):
                if seat != position.seat:
                    game.hands[seat] = world.hands[seat]
                    game.hand_jokers[seat] = world.hand_jokers[seat]
                    game.values[seat] = -1
            game.stock = list(world.stock)
            results[0].append(_play(position, game, played, played_from is not None))
            for index, line in enumerate(others, 1):
                results[index].append(_play(position, world.copy(), line, False))
        means, errors = _means(results)
        best = max(range(len(means)), key=lambda i: means[i])
        lost = means[best] - means[0]
        doubtful = INACCURACY < lost <= SIGNIFICANCE * errors[best]
        if not doubtful or len(results[0]) >= limit:
            return means, errors


def _means(results: list[list[float]]) -> tuple[list[float], list[float]]:
    means = [sum(values) / len(values) for values in results]
    errors = [0.0]
    for values in results[1:]:
        diffs = [a - b for a, b in zip(values, results[0], strict=True)]
        mean = sum(diffs) / len(diffs)
        spread = sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1)
        errors.append((spread / len(diffs)) ** 0.5)
    return means, errors
