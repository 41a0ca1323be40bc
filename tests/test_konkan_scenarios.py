"""Every rule of RULES.md Part 1 as a readable scenario (tests/scenarios/konkan/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenario_runner import run_scenario, scenario_files

FILES = scenario_files("konkan")


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 1


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_scenario(path: Path) -> None:
    problems = run_scenario(path)
    assert not problems, "\n".join(problems)
