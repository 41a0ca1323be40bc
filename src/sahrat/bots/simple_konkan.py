"""The simple Konkan player: opens as soon as the meld search finds an opening,
goes out as a Hand when it can, lays off whatever fits, and discards its least
useful card. It sees only its seat's view (``konkan.view(state, seat)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules.cards import Card
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
from sahrat.rules.melds import can_lay_off
from sahrat.rules.search import SearchResult, best_melds, hand_out, konkan_out


def act(view: dict[str, Any]) -> Action:
    """The simple player's next action for the seat whose view this is."""
    me = KonkanSeat(view)
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
    me: KonkanSeat, hand: Sequence[Card], *, konkan_only: bool = False
) -> SearchResult | None:
    """A Konkan (or, unless ``konkan_only``, a Hand) in ``hand`` that this table accepts."""
    found = konkan_out(hand, me.ace)
    if found is None and not konkan_only:
        found = hand_out(hand, me.ace)
    if found is None:
        return None
    if found.value >= me.opening_target or me.exempt:
        return found
    return None


def _draw_or_take(me: KonkanSeat) -> Action:
    top = me.top
    if top is None or me.me_committed:
        return Draw(me.seat)
    hand = [*me.hand, top]
    if not me.me_opened:
        for found in (_going_out(me, hand), best_melds(hand, me.ace)):
            if found is None or found.value < me.opening_target:
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
    for table_meld in me.melds:
        if not can_lay_off(table_meld.meld, top):
            continue
        return TakeDiscard(me.seat, lay_offs=(LayOff(table_meld.id, (top,)),))
    return Draw(me.seat)


def _play(me: KonkanSeat) -> Action:
    hand = me.hand
    if me.me_committed:  # a committed seat may lay down only its Konkan
        konkan = _going_out(me, hand, konkan_only=True)
        if konkan is not None:
            return LayDown(me.seat, konkan.melds)
    elif not me.me_opened:
        out = _going_out(me, hand)
        if out is not None:
            return LayDown(me.seat, out.melds)
        found = best_melds(hand, me.ace)
        if found.melds and found.value >= me.opening_target:
            return LayDown(me.seat, found.melds)
    else:
        found = best_melds(hand, me.ace)
        if found.melds:
            return LayDown(me.seat, found.melds)
        lay = _a_lay_off(me)
        if lay is not None:
            return LayDown(me.seat, lay_offs=(lay,))
    return _discard(me)


def _a_lay_off(me: KonkanSeat) -> LayOff | None:
    reals_left = sum(1 for card in me.hand if not card.is_joker)
    for card in sorted(me.hand, key=lambda c: c.is_joker):
        if not card.is_joker and reals_left <= 1:
            continue  # keep a card to discard
        for table_meld in me.melds:
            if can_lay_off(table_meld.meld, card):
                return LayOff(table_meld.id, (card,))
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


def _discard(me: KonkanSeat) -> Action:
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
