"""The deals of the Konkan cards a seat cannot see, in the round simulator's face masks.

:func:`base_round` is the round as the seat sees it; :func:`sample` deals the other hands
and the stock at random from the cards the seat could not place, and deals a seat's hand
again when it contradicts what the seat did (an unopened seat would have opened with an
opening in hand; an opened one lays every meld it holds), up to a few tries. The
expert's search and the post-match analysis play their lines on these deals. Nothing
here reads another seat's cards.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from sahrat.bots.fastmelds import encode, meld_value
from sahrat.bots.konkan_sim import JOKER_FACE, Round, meld_to_sim
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules.cards import Card
from sahrat.rules.melds import MeldKind
from sahrat.rules.options import HandValues

REDEAL_TRIES = 4  # redeals of one seat's hand that contradicts what it did


def face_of(card: Card) -> int:
    return JOKER_FACE if card.is_joker else card.key % 52


def table_melds(me: KonkanSeat) -> list[list[int]]:
    out = []
    for table_meld in me.melds:
        meld = table_meld.meld
        reals = [(c.suit.index, int(c.rank)) for c in meld.real_cards if c.suit and c.rank]
        kind = "set" if meld.kind is MeldKind.SET else "run"
        out.append(meld_to_sim(kind, reals, meld.start, meld.joker is not None))
    return out


def base_round(me: KonkanSeat) -> Round:
    """The round as the seat sees it, in face masks: its own hand, the table's melds
    and the pile's card; the other hands and the stock still empty."""
    hands = [0] * me.players
    jokers = [0] * me.players
    hands[me.seat], jokers[me.seat] = encode(me.hand)
    top = -1 if me.top is None else face_of(me.top)
    joker_cost = 15 if me.hand_values is HandValues.JOKER_15_ACE_11 else 10
    return Round(
        hands,
        jokers,
        list(me.opened),
        table_melds(me),
        [],
        top,
        me.seat,
        me.opening_target,
        me.ace,
        joker_cost,
    )


def sample(me: KonkanSeat, base: Round, hidden: Sequence[Card], rng: random.Random) -> Round:
    """``base`` with the other hands and the stock dealt at random from ``hidden``, a
    seat's hand dealt again (up to :data:`REDEAL_TRIES` times) when it contradicts what
    the seat did."""
    pool = [face_of(card) for card in hidden]
    rng.shuffle(pool)
    world = base.copy()
    for seat in range(me.players):
        if seat == me.seat:
            continue
        count = me.hand_counts[seat]
        hand = pool[:count]
        for _ in range(REDEAL_TRIES):
            if _consistent(me, world, seat, hand):
                break
            # deal this seat again from the cards not yet dealt
            rng.shuffle(pool)
            hand = pool[:count]
        del pool[:count]
        world.hands[seat], world.hand_jokers[seat] = masked(hand)
    world.stock = pool[: me.stock_count]
    return world


def _consistent(me: KonkanSeat, world: Round, seat: int, hand: Sequence[int]) -> bool:
    """Could ``seat`` hold ``hand`` after the turns it played? An unopened seat holds no
    opening (it would have laid it), an opened one no meld (it lays every one)."""
    value = meld_value(*masked(hand), me.ace)
    if me.opened[seat]:
        return value == 0
    return value < me.opening_target


def masked(faces: Sequence[int]) -> tuple[int, int]:
    """(the face mask, the jokers) of a hand given as faces."""
    mask = 0
    jokers = 0
    for face in faces:
        if face == JOKER_FACE:
            jokers += 1
        else:
            mask += 1 << (2 * face)
    return mask, jokers
