"""A simple Conquian player that sees only its seat's view (``conquian.view``).

* Facing a card (its own, the opponent's, or forced on it) it takes it whenever the
  card can be melded, laying as many hand cards as it can (so a possible win is
  always taken); otherwise it refuses or passes. A card that only joins its open
  melds is let go when every hand card still has a partner (the discard would
  break up a meld in the making); the opponent may then force it.
* Asked whether to force, it forces when that hurts: the opponent must then lay the
  card and discard from a hand of two or more. It never forces a card that would give
  the opponent the win or leave them with 10 down, and it lets a passed card come to
  it when it can take that card itself.
* It discards its least useful card: few partners in the hand (its rank, or its suit
  within two ranks), not laid-able on its own melds, and not a card the opponent could
  lay; ties go to the higher rank, then the later suit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sahrat.rules.cards import CONQUIAN_RANKS, SUITS, Card, parse_card, parse_cards
from sahrat.rules.conquian import (
    Action,
    DeclineForce,
    Discard,
    Force,
    Pass,
    Refuse,
    Take,
    best_take,
    fits_melds,
    partners,
)
from sahrat.rules.errors import BadAction

_POS = {rank: i for i, rank in enumerate(CONQUIAN_RANKS)}
_SUIT = {suit: i for i, suit in enumerate(SUITS)}


def act(view: Mapping[str, Any]) -> Action:
    """The move for the seat whose view this is; it must be that seat's move."""
    seat = view.get("viewer")
    if seat is None or view.get("turn") != seat:
        raise BadAction("the simple player moves only when it is its seat's turn")
    phase = view["phase"]
    hand = parse_cards(view["hand"])
    mine = [parse_cards(meld) for meld in view["melds"][seat]]
    theirs = [parse_cards(meld) for meld in view["melds"][1 - seat]]
    face_up = parse_card(view["face_up"]) if view.get("face_up") else None
    if phase in ("choose", "turned_up", "forced"):
        assert face_up is not None
        arrangement = best_take(mine, hand, face_up)
        if arrangement is not None and (
            phase == "forced" or _worth_taking(arrangement, mine, hand)
        ):
            return Take(seat, arrangement)
        if phase == "forced":  # cannot happen: a forced card fits the open melds
            raise BadAction(f"{face_up} was forced but does not fit")
        return Refuse(seat) if phase == "choose" else Pass(seat)
    if phase == "force":
        assert face_up is not None
        return Force(seat) if _should_force(view, seat, hand, mine, face_up) else DeclineForce(seat)
    if phase == "discard":
        return Discard(seat, least_useful(hand, mine, theirs))
    raise BadAction(f"nothing to do in phase {phase!r}")


def _worth_taking(
    arrangement: Sequence[Sequence[Card]], mine: Sequence[Sequence[Card]], hand: Sequence[Card]
) -> bool:
    """Take unless the card only joins the open melds, does not win, and every hand card
    still has a partner: then the discard it costs would break up a meld in the making,
    so the card is let go (and the opponent may force it)."""
    laid = sum(len(meld) for meld in arrangement)
    if laid >= 11 or laid > sum(len(meld) for meld in mine) + 1:
        return True
    return any(partners(card, hand) == 0 for card in hand)


def _should_force(
    view: Mapping[str, Any],
    seat: int,
    hand: Sequence[Card],
    mine: Sequence[Sequence[Card]],
    card: Card,
) -> bool:
    their_hand = view["hand_counts"][1 - seat]
    if their_hand < 2:
        return False  # 0: forcing gives them 11; 1: it leaves them 10 down, one card away
    was_passed = view.get("question", {}).get("after") == "pass"
    return not (was_passed and best_take(mine, hand, card) is not None)


def _pos(card: Card) -> int:
    assert card.rank is not None
    return _POS[card.rank]


def least_useful(
    hand: Sequence[Card], mine: Sequence[Sequence[Card]], theirs: Sequence[Sequence[Card]]
) -> Card:
    """The card to discard: lowest usefulness, then the higher rank, then the later suit."""

    def usefulness(card: Card) -> tuple[int, int, int]:
        score = 2 * partners(card, hand)
        if fits_melds(mine, card):
            score += 3  # it can join our melds with the next card we take
        if fits_melds(theirs, card):
            score += 4  # discarding it hands the opponent a card they can lay
        assert card.suit is not None
        return (score, -_pos(card), -_SUIT[card.suit])

    return min(hand, key=usefulness)
