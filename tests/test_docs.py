"""The documents say what the code does: their examples are run here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sahrat.rules import konkan
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import GameRecord, replay

DOCS = Path(__file__).parent.parent / "docs"


def code_blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_fairness_check_in_the_docs_reproduces_a_deal() -> None:
    seed = "4b1d9e0c2f"
    snippet = code_blocks(DOCS / "fairness.md", "python")[0]
    printed: list[object] = []
    exec(snippet, {"seed": seed, "print": printed.append})
    state = konkan.new_game(KonkanOptions(players=4), seed)
    opener = (state.dealer + 1) % 4
    assert printed == [[str(card) for card in state.hands[opener]]]
    assert len(state.hands[opener]) == 15


def test_game_record_example_replays() -> None:
    example = json.loads(code_blocks(DOCS / "game-record.md", "json")[0])
    result = replay(GameRecord.from_json(example))
    assert result.ok
    assert result.state.turn == 1
    assert result.state.discard[-1].face == "5D"
    assert result.state.opened == [True, False]


def test_protocol_schemas_in_the_docs_match_the_code(tmp_path: Path) -> None:
    from sahrat.cli import write_schemas

    for fresh in write_schemas(tmp_path):
        published = DOCS / "schemas" / fresh.name
        assert published.is_file(), f"docs/schemas/{fresh.name} is missing: run sahrat schemas"
        assert published.read_text() == fresh.read_text(), f"{fresh.name}: run sahrat schemas"


def test_bare_messages_are_their_type_alone_in_the_schemas() -> None:
    """The server checks these messages by their keys; their pydantic models say the same."""
    from sahrat.server.socket.dispatch import BARE_MESSAGES
    from sahrat.server.table import protocol

    models = {"ping": protocol.Ping, "continue": protocol.Continue}
    models |= {"hint": protocol.Hint, "rematch": protocol.Rematch, "resync": protocol.Resync}
    assert set(models) == set(BARE_MESSAGES)
    for kind, model in models.items():
        assert list(model.model_fields) == ["type"], kind
        assert model.model_config.get("extra") == "forbid", kind
        model.model_validate({"type": kind})
