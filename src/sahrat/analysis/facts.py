"""What the revealed deck shows (docs/analysis.md, "What the revealed deck shows"):
exact facts about a round, read from the replayed states once every card is known.

These are read from the whole state (every hand), which the match being over allows;
the decisions' values (:mod:`sahrat.analysis.lines`) never are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sahrat.analysis.lines import Line, Position
from sahrat.rules import konkan
from sahrat.rules.cards import Card, parse_card
from sahrat.rules.search import best_melds, konkan_out

OPENING_MOVES = ("open", "hand")


def draw_facts(position: Position, played: Line) -> list[dict[str, Any]]:
    me = position.me
    if not position.opened and played.move == "draw" and me.top is not None:
        return [{"kind": "could_take_to_open", "card": str(me.top)}]
    return []


def _hand_in_reach(position: Position) -> list[list[str]] | None:
    me = position.me
    found = position.found
    left = list(found.left)
    exempt = bool(position.view.get("options", {}).get("hand_exempt_from_threshold"))
    if len(left) != 1 or left[0].is_joker or not found.melds:
        return None
    if found.value < me.opening_target and not exempt:
        return None
    return [[str(card) for card in meld] for meld in found.melds]


def _konkan_in_reach(position: Position) -> list[list[str]] | None:
    """The two melds of a Konkan (a 10-card run and a 4-card set, or 11 and 3) the hand
    held with one card to spare, if it held one (§1.7)."""
    me = position.me
    if len(me.hand) != 15:
        return None
    found = konkan_out(me.hand, me.ace)
    exempt = bool(position.view.get("options", {}).get("hand_exempt_from_threshold"))
    if found is None or (found.value < me.opening_target and not exempt):
        return None
    return [[str(card) for card in meld] for meld in found.melds]


def opens(hand: Sequence[Card], card: Card, target: int, ace: Any) -> bool:
    """Would ``card`` give ``hand`` an opening it does not hold already?"""
    before = best_melds(list(hand), ace)
    if before.melds and before.value >= target:
        return False
    after = best_melds([*hand, card], ace)
    return bool(after.melds) and after.value >= target and any(card in m for m in after.melds)


def _next_turn(steps: Sequence[Any], end: int, seat: int) -> list[Any]:
    """The actions of the turn that follows the discard at ``end`` (that seat's)."""
    out = []
    for later in range(end + 1, len(steps) - 1):
        action = steps[later].action
        if getattr(action, "seat", None) != seat:
            break
        out.append(action)
    return out


def play_facts(
    steps: Sequence[Any],
    index: int,
    end: int,
    position: Position,
    played: Line,
    decision: dict[str, Any],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not position.opened and position.can_open and played.move not in OPENING_MOVES:
        out.append({"kind": "could_open", "value": position.found.value})
    if not position.opened and played.move != "hand":
        konkan = _konkan_in_reach(position)
        if konkan is not None:
            out.append({"kind": "konkan_in_reach", "melds": konkan})
        melds = _hand_in_reach(position)
        if melds is not None and konkan is None:
            out.append({"kind": "hand_in_reach", "melds": melds})
    out += feeding(steps, end, position, played.card)
    return out


def feeding(
    steps: Sequence[Any], end: int, position: Position, card_text: str | None
) -> list[dict[str, Any]]:
    """Did the discard ``card_text`` at ``end`` give the next seat its opening, or its
    way out? (From the next seat's revealed hand.)"""
    if card_text is None or end + 1 >= len(steps):
        return []
    after = steps[end + 1].state
    if after.results and len(after.results) > len(steps[end].state.results):
        return []  # the discard ended the round
    nxt = after.turn
    turn = _next_turn(steps, end, nxt)
    took = bool(turn) and isinstance(turn[0], konkan.TakeDiscard)
    out: list[dict[str, Any]] = []
    if opens_next(steps, end, position, card_text):
        out.append({"kind": "fed_opening", "card": card_text, "next": nxt, "took": took})
    end_state = steps[-1].state
    last = end + len(turn)
    if (
        took
        and last + 1 >= len(steps) - 1
        and end_state.results
        and end_state.results[-1].winner == nxt
    ):
        out.append({"kind": "fed_out", "card": card_text, "next": nxt})
    return out


def hindsight(decision: dict[str, Any], steps: Sequence[Any], end: int, position: Position) -> None:
    """A discard the next seat took to open or go out with is a mistake in hindsight;
    the better move is then the best-valued line weighed that would not have fed it."""
    fed = [
        fact
        for fact in decision["facts"]
        if (fact["kind"] == "fed_opening" and fact["took"]) or fact["kind"] == "fed_out"
    ]
    if not fed or decision["tag"] in ("mistake", "blunder"):
        return
    best: tuple[float, Line] | None = None
    for candidate in decision["candidates"]:
        line = Line(candidate["move"], candidate.get("card"))
        if line.card is None or line.card == decision["played"].get("card"):
            continue
        if opens_next(steps, end, position, line.card):
            continue
        if best is None or candidate["value"] > best[0]:
            best = (candidate["value"], line)
    if best is None:
        return
    value, line = best
    decision.update(
        best=line.to_json(position),
        best_value=value,
        lost=round(max(0.0, value - decision["value"]), 1),
        tag="mistake",
        by="hindsight",
    )


def opens_next(steps: Sequence[Any], end: int, position: Position, card_text: str) -> bool:
    """Would ``card_text``, thrown at ``end``, have opened the next seat (its revealed
    hand holding the rest of an opening it did not hold)?"""
    after = steps[end + 1].state
    nxt = after.turn
    me = position.me
    if after.opened[nxt]:
        return False
    return opens(after.hands[nxt], parse_card(card_text), me.opening_target, me.ace)


def round_facts(
    steps: Sequence[Any], decisions: Sequence[dict[str, Any]], result: Any
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    final = steps[-2].state  # before the action that ended the round
    for seat, hand in enumerate(result.hands):
        if final.opened[seat] and any(card.is_joker for card in hand):
            out.append({"kind": "joker_kept", "seat": seat})
    for seat in range(final.players):
        chance: int | None = None
        opened: int | None = None
        for decision in decisions:
            if decision["seat"] != seat or decision["position"]["opened"][seat]:
                continue
            moves = {decision["played"]["move"]}
            kinds = {fact["kind"] for fact in decision["facts"]}
            could = kinds & {"could_open", "could_take_to_open", "hand_in_reach"}
            did = bool(moves & {"open", "hand"}) or (decision["kind"] == "draw" and "take" in moves)
            if (could or did) and chance is None:
                chance = decision["turn"]
            if did and opened is None:
                opened = decision["turn"]
        if chance is not None:
            out.append(
                {"kind": "first_open_chance", "seat": seat, "turn": chance, "opened_turn": opened}
            )
    return out
