"""The simple Konkan player: opens as soon as the meld search finds an opening,
goes out as a Hand when it can, lays off whatever fits, and discards its least
useful card. It sees only its seat's view (``konkan.view(state, seat)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sahrat.rules.cards import Card, parse_card, parse_cards
from sahrat.rules.konkan import (
    Action,
    Discard,
    Draw,
    EndTurn,
    LayDown,
    LayOff,
    TakeDiscard,
    hand_card_value,
)
from sahrat.rules.melds import AceValue, Meld, can_lay_off
from sahrat.rules.options import HandValues
from sahrat.rules.search import SearchResult, best_melds, hand_out, konkan_out


class KonkanView:
    """The parts of a seat's view the simple player uses, parsed once."""

    def __init__(self, view: dict[str, Any]) -> None:
        options = view["options"]
        self.seat: int = view["viewer"]
        self.phase: str = view["phase"]
        self.hand = parse_cards(view["hand"])
        self.opened: bool = view["opened"][self.seat]
        self.committed: bool = view["committed"][self.seat]
        self.top = parse_card(view["discard_top"]) if view["discard_top"] else None
        self.ace = AceValue(options["ace_value"])
        self.hand_values = HandValues(options["hand_values"])
        self.exempt: bool = options["hand_exempt_from_threshold"]
        required = options["threshold"]
        if options["escalating_opening"] and view["last_opening"]:
            required = max(required, view["last_opening"] + 1)
        self.required: int = required
        self.melds: list[tuple[int, Meld]] = [
            (m["id"], _table_meld(m["kind"], tuple(m["cards"]), tuple(m["joker_for"])))
            for m in view["melds"]
        ]


@lru_cache(maxsize=4096)
def _table_meld(kind: str, cards: tuple[str, ...], joker_for: tuple[str, ...]) -> Meld:
    """A meld of the view as it lies on the table (cached: tables repeat across turns)."""
    return Meld.from_json({"kind": kind, "cards": cards, "joker_for": joker_for})


def act(view: dict[str, Any]) -> Action:
    """The simple player's next action for the seat whose view this is."""
    me = KonkanView(view)
    if me.phase == "draw":
        return _draw_or_take(me)
    return _play(me)


def _with_card(result: SearchResult, card: Card) -> tuple[tuple[Card, ...], ...] | None:
    """The found melds, using exactly ``card`` (not its twin from the other deck), or None."""
    melds = [list(meld) for meld in result.melds]
    for meld in melds:
        if card in meld:
            return tuple(tuple(m) for m in melds)
    for meld in melds:
        for index, other in enumerate(meld):
            if other.face == card.face and not card.is_joker:
                meld[index] = card
                return tuple(tuple(m) for m in melds)
    return None


def _going_out(
    me: KonkanView, hand: Sequence[Card], *, konkan_only: bool = False
) -> SearchResult | None:
    """A Konkan (or, unless ``konkan_only``, a Hand) in ``hand`` that this table accepts."""
    found = konkan_out(hand, me.ace)
    if found is None and not konkan_only:
        found = hand_out(hand, me.ace)
    if found is None:
        return None
    if found.value >= me.required or me.exempt:
        return found
    return None


def _draw_or_take(me: KonkanView) -> Action:
    top = me.top
    if top is None or me.committed:
        return Draw(me.seat)
    hand = [*me.hand, top]
    if not me.opened:
        for found in (_going_out(me, hand), best_melds(hand, me.ace)):
            if found is None or found.value < me.required:
                continue
            melds = _with_card(found, top)
            if melds is not None:
                return TakeDiscard(me.seat, melds)
        return Draw(me.seat)
    found = best_melds(hand, me.ace)
    melds = _with_card(found, top) if found.melds else None
    if melds is not None:
        return TakeDiscard(me.seat, melds)
    if not any(not card.is_joker for card in me.hand):
        return Draw(me.seat)  # laying the card off would leave nothing to discard
    for meld_id, meld in me.melds:
        if not can_lay_off(meld, top):
            continue
        return TakeDiscard(me.seat, lay_offs=(LayOff(meld_id, (top,)),))
    return Draw(me.seat)


def _play(me: KonkanView) -> Action:
    hand = me.hand
    if me.committed:  # a committed seat may lay down only its Konkan
        konkan = _going_out(me, hand, konkan_only=True)
        if konkan is not None:
            return LayDown(me.seat, konkan.melds)
    elif not me.opened:
        out = _going_out(me, hand)
        if out is not None:
            return LayDown(me.seat, out.melds)
        found = best_melds(hand, me.ace)
        if found.melds and found.value >= me.required:
            return LayDown(me.seat, found.melds)
    else:
        found = best_melds(hand, me.ace)
        if found.melds:
            return LayDown(me.seat, found.melds)
        lay = _a_lay_off(me)
        if lay is not None:
            return LayDown(me.seat, lay_offs=(lay,))
    return _discard(me)


def _a_lay_off(me: KonkanView) -> LayOff | None:
    reals_left = sum(1 for card in me.hand if not card.is_joker)
    for card in sorted(me.hand, key=lambda c: c.is_joker):
        if not card.is_joker and reals_left <= 1:
            continue  # keep a card to discard
        for meld_id, meld in me.melds:
            if can_lay_off(meld, card):
                return LayOff(meld_id, (card,))
    return None


def usefulness(card: Card, hand: Sequence[Card]) -> int:
    """How much ``card`` helps the hand: set partners and near run neighbours."""
    score = 0
    for other in hand:
        if other is card or other.is_joker or other.face == card.face:
            continue
        if other.rank == card.rank:
            score += 2
        elif other.suit == card.suit and card.rank is not None and other.rank is not None:
            gap = abs(int(other.rank) - int(card.rank))
            if gap == 12:
                gap = 1  # K and A are neighbours in a high run
            if gap == 1:
                score += 2
            elif gap == 2:
                score += 1
    return score


def _discard(me: KonkanView) -> Action:
    candidates = [card for card in me.hand if not card.is_joker]
    if not candidates:
        return EndTurn(me.seat)
    worst = min(
        candidates,
        key=lambda c: (
            usefulness(c, me.hand),
            -hand_card_value(c, me.hand_values),
            c.sort_key,
        ),
    )
    return Discard(me.seat, worst)
