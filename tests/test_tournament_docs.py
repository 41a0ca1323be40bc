"""docs/tournaments.md's tables say what ``sahrat.tournaments`` does: the prize split,
the placement points, the rounds of a knock-out and the plan's error codes."""

from __future__ import annotations

import re
from pathlib import Path

from sahrat.tournaments import Plan, knockout_rounds
from sahrat.tournaments.payout import PERCENT_BY_PLACES
from sahrat.tournaments.results import table_points

DOC = (Path(__file__).parent.parent / "docs" / "tournaments.md").read_text(encoding="utf-8")


def rows(first_cell: str) -> list[list[str]]:
    """The cells of every markdown table row whose first cell matches ``first_cell``."""
    found = []
    for line in DOC.splitlines():
        if line.strip().startswith("|"):  # a table may stand in a list item, indented
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if re.fullmatch(first_cell, cells[0]):
                found.append(cells)
    return found


def test_the_prize_table_is_the_code() -> None:
    table = {
        int(cells[0]): tuple(int(c) for c in cells[1:] if c)
        for cells in rows(r"\d+")
        if len(cells) == 11
    }
    assert table == PERCENT_BY_PLACES


def test_the_placement_points_table_is_the_formula() -> None:
    table = {
        int(cells[0]): [c for c in cells[1:] if c] for cells in rows(r"[234]") if len(cells) == 5
    }
    for size, cells in table.items():
        written = [int(c.replace("−", "-").replace("+", "")) for c in cells]
        assert written == [table_points(size, p) for p in range(1, size + 1)]
    assert set(table) == {2, 3, 4}


def test_the_knockout_rounds_table_is_the_code() -> None:
    lines = {
        "Konkan, advance 2 (4 → 2)": ("konkan", 2),
        "Konkan, advance 1 (4 → 1)": ("konkan", 1),
        "Conquian (2 → 1)": ("conquian", 1),
    }
    for label, (game, advance) in lines.items():
        (cells,) = rows(re.escape(label))
        written = [int(cell.split()[0]) for cell in cells[1:]]
        plans = [Plan(game, "knockout", seats, 0, advance) for seats in (4, 8, 16, 32)]  # type: ignore[arg-type]
        assert written == [knockout_rounds(plan) for plan in plans], label


def test_the_plan_codes_are_documented() -> None:
    for code in ("game", "format", "seats", "advance", "rounds"):
        assert f"`tournament_{code}`" in DOC
    assert DOC.startswith("# Tournaments\n")
    assert "<!-- server sections below -->" in DOC
