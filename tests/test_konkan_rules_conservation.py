"""RULES.md §1.2: every card is conserved; stock + discard pile + hands + melds
= the 106 cards at every moment. Checked after every action of every Konkan
scenario, refused actions included (they change nothing)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sahrat.rules.cards import konkan_deck
from sahrat.rules.konkan import KonkanState
from sahrat.rules.record import GameRecord, replay
from scenario_runner import scenario_files

FILES = scenario_files("konkan")
DECK = Counter(konkan_deck())


def _cards(state: KonkanState) -> Counter[Any]:
    cards = [card for hand in state.hands for card in hand]
    cards += state.stock + state.discard
    cards += [card for meld in state.melds for card in meld.meld.cards]
    return Counter(cards)


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_cards_conserved(path: Path) -> None:
    record = GameRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
    steps = 0

    def check(state: KonkanState, action: object) -> None:
        nonlocal steps
        steps += 1
        assert sum(_cards(state).values()) == 106
        assert _cards(state) == DECK, f"after action {steps - 1}: {action!r}"

    result = replay(record, on_step=check)
    assert _cards(result.state) == DECK
