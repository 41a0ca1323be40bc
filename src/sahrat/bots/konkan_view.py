"""A Konkan seat's view as the bots read it: parsed once per decision into cards,
melds and the table's options, the same way for every Konkan player (simple, strong,
expert). The bots see nothing else: this is ``konkan.view(state, seat)`` and no more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sahrat.rules.cards import Card, parse_card, parse_cards
from sahrat.rules.konkan import hand_card_value
from sahrat.rules.melds import AceValue, Meld
from sahrat.rules.options import HandValues

View = Mapping[str, Any]


@lru_cache(maxsize=8192)
def _table_meld(kind: str, cards: tuple[str, ...], joker_for: tuple[str, ...]) -> Meld:
    """A meld of the view exactly as it lies on the table, the joker where it stands
    (cached: the same melds lie on the table turn after turn)."""
    return Meld.from_json({"kind": kind, "cards": cards, "joker_for": joker_for})


@dataclass(frozen=True, slots=True)
class TableMeld:
    """A meld on the table: its id (for lay-offs and swaps), who laid it, the meld."""

    id: int
    owner: int
    meld: Meld


class KonkanSeat:
    """The parts of a seat's Konkan view a player uses."""

    def __init__(self, view: View) -> None:
        options = view["options"]
        self.seat: int = view["viewer"]
        self.players: int = len(view["hand_counts"])
        self.phase: str = view["phase"]
        self.hand: list[Card] = parse_cards(view["hand"])
        self.opened: list[bool] = list(view["opened"])
        self.committed: list[bool] = list(view["committed"])
        self.hand_counts: list[int] = list(view["hand_counts"])
        self.top = parse_card(view["discard_top"]) if view.get("discard_top") else None
        self.discard_count: int = view.get("discard_count", 0)
        self.stock_count: int = view.get("stock_count", 0)
        self.drawn: str | None = view.get("drawn")
        self.totals: list[int] = list(view.get("totals") or [0] * self.players)
        self.last_round: bool = bool(view.get("last_round"))
        self.ace = AceValue(options["ace_value"])
        self.hand_values = HandValues(options["hand_values"])
        self.exempt: bool = options["hand_exempt_from_threshold"]
        self.must_lay_swapped: bool = options.get("swapped_joker_must_be_laid", False)
        self.opening_target: int = view["opening_target"]  # any seat's next opening
        self.melds = [
            TableMeld(
                m["id"],
                m["owner"],
                _table_meld(m["kind"], tuple(m["cards"]), tuple(m.get("joker_for") or ())),
            )
            for m in view["melds"]
        ]
        self.simple = {a.get("type") for a in view.get("simple_actions") or ()}

    @property
    def me_opened(self) -> bool:
        return self.opened[self.seat]

    @property
    def me_committed(self) -> bool:
        return self.committed[self.seat]

    @property
    def next_seat(self) -> int:
        return (self.seat + 1) % self.players

    def others(self) -> list[int]:
        return [s for s in range(self.players) if s != self.seat]

    def value(self, card: Card) -> int:
        """What ``card`` costs if still in hand when the round ends."""
        return hand_card_value(card, self.hand_values)
