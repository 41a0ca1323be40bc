"""The moves weighed at a Konkan decision, and each one played out on a sampled deal.

A :class:`Position` is what one seat could see (its view) and the set of cards it could
not place (the other hands and the stock: a seat that remembers every discard knows
which cards these are, never where they are). A :class:`Line` is a move as the round
simulator plays it. :func:`weighed_lines` gives the moves worth weighing at a decision;
:func:`play_line` plays one on a deal of the unseen cards (dealt by
:func:`sahrat.bots.konkan_deals.sample`: an unopened seat holds no opening, an opened
one no meld), every seat then playing the simulator's policy to the end of the round, or for
``horizon`` turns after which the seats' rounds are valued by
:func:`sahrat.bots.konkan_value.scores`. The expert plays with a horizon, the post-match
analysis (:mod:`sahrat.analysis.lines`) to the end of the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sahrat.bots import konkan_bot, konkan_value
from sahrat.bots.konkan_deals import base_round, face_of
from sahrat.bots.konkan_sim import Round
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules import konkan
from sahrat.rules.cards import Card, parse_card
from sahrat.rules.konkan import TakeDiscard
from sahrat.rules.search import SearchResult, best_melds

DISCARDS = 3  # discards weighed for each way of playing the turn


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
    game = base_round(position.me)
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
        return take_to_open(me) is not None
    if any(konkan_bot._fits(table_meld.meld, me.top) for table_meld in me.melds):
        return True
    found = best_melds([*me.hand, me.top], me.ace)
    return any(me.top in meld for meld in found.melds)


def weighed_lines(position: Position, kind: str) -> list[Line]:
    """The moves worth weighing at a ``kind`` decision (draw or play)."""
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


def play_line(
    position: Position,
    game: Round,
    line: Line,
    from_played: bool,
    horizon: int = 0,
) -> float:
    """``line`` played on ``game`` (a deal of the position), then the simulator's policy
    for every seat, to the end of the round or for ``horizon`` turns; the round's value
    for the seat (:func:`round_value`). With ``from_played``, ``game`` is the real state
    just before the line's discard (its lay-downs are made)."""
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
    if horizon:
        game.run(horizon)
        return round_value(konkan_value.scores(game), seat)
    game.run()
    return round_value(game.scores(), seat)


def round_value(scores: Sequence[float], seat: int) -> float:
    """A round's points on the analysis's scale: the others' average less the seat's own
    (higher is better). Unlike the expert's, no weight for winning the match: a value
    is points of a round, and the match's ±60 would only add spread to every sample."""
    others = [score for other, score in enumerate(scores) if other != seat]
    return sum(others) / len(others) - scores[seat]


def konkan_discards(
    me: KonkanSeat, memory: konkan_bot.Memory, first: Card, count: int = DISCARDS
) -> list[tuple[Card, float]]:
    """The strong player's best discards with its cost of each (lower is better to throw),
    its own choice first."""
    found = best_melds(me.hand, me.ace)
    melded = {card for meld in found.melds for card in meld}
    reals = [card for card in me.hand if not card.is_joker]
    pool = [card for card in me.hand if card not in melded]
    candidates = [card for card in reals if card not in melded] or reals
    dead = konkan_bot._dead_faces(me, memory)
    weight = konkan_bot.value_weight(me)

    def cost(card: Card) -> float:
        keep = konkan_bot.keep_value(card, pool, dead)
        danger = konkan_bot.discard_danger(me, memory, card)
        return keep + danger - weight * me.value(card)

    others = {c.face: c for c in candidates if c.face != first.face}.values()
    ordered = sorted(others, key=lambda card: (cost(card), card.sort_key))
    return [(card, cost(card)) for card in [first, *ordered[: count - 1]]]


def take_to_open(me: KonkanSeat) -> TakeDiscard | None:
    """Taking the pile's card to open with it now, if the search finds that opening."""
    assert me.top is not None
    top = me.top
    hand = [*me.hand, top]
    out = konkan_bot.going_out(me, hand)
    if out is not None:
        melds = konkan_bot._with_card(out.melds, top)
        if melds is not None:
            return TakeDiscard(me.seat, melds)
    found = best_melds(hand, me.ace)
    if not found.melds or found.value < me.opening_target:
        return None
    melds = konkan_bot._with_card(found.melds, top)
    return None if melds is None else TakeDiscard(me.seat, melds)
