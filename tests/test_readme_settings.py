"""README.md's table of settings is the settings the server has: every variable of
``sahrat.settings.Settings`` (and every other ``SAHRAT_*`` variable the code reads) has
one row with its default as ``Settings`` has it, and the table names nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sahrat.settings import Settings

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SOURCE = REPO / "src" / "sahrat"


def shown(default: object) -> str:
    """A default as the README's table writes it."""
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return "`true`" if default else "`false`"
    if isinstance(default, float) and default.is_integer():
        default = int(default)
    if default == "":
        return '`""`'
    return f"`{default}`"


def settings_table(text: str) -> dict[str, tuple[str, str]]:
    """The rows of the table under ``## Settings``: variable -> (default, meaning)."""
    section = re.search(r"^## Settings\n(.*?)(?=^## )", text, re.M | re.S)
    assert section is not None, "README.md has no '## Settings' section"
    rows: dict[str, tuple[str, str]] = {}
    for line in section.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or cells[0] in ("Variable", "---"):
            continue
        assert len(cells) == 3, f"not a row of three cells: {line}"
        name = re.fullmatch(r"`([A-Z][A-Z0-9_]*)`", cells[0])
        assert name is not None, f"not a variable: {cells[0]}"
        assert name.group(1) not in rows, f"{name.group(1)} twice"
        rows[name.group(1)] = (cells[1], cells[2])
    return rows


def documented() -> dict[str, str]:
    """Every setting of ``Settings``: variable -> default, as the table must show it."""
    return {
        (field.alias or name.upper()): shown(field.default)
        for name, field in Settings.model_fields.items()
    }


def read_elsewhere() -> set[str]:
    """``SAHRAT_*`` variables the code names outside ``Settings`` (read from os.environ)."""
    names: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        names |= set(re.findall(r"\bSAHRAT_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    return names - set(documented())


def check(text: str) -> None:
    table = settings_table(text)
    wanted = documented()
    missing = sorted(set(wanted) - set(table))
    assert not missing, f"settings missing from README.md's table: {missing}"
    for name, default in wanted.items():
        assert table[name][0] == default, f"{name}: README says {table[name][0]}, not {default}"
    others = read_elsewhere()
    assert not sorted(others - set(table)), f"variables missing: {sorted(others - set(table))}"
    unknown = sorted(set(table) - set(wanted) - others)
    assert not unknown, f"README.md's table names settings the server lacks: {unknown}"
    for name, (_, meaning) in table.items():
        assert meaning, f"{name} has no meaning"


def test_the_readme_lists_every_setting_with_its_default() -> None:
    check(README.read_text(encoding="utf-8"))


def test_every_sahrat_setting_is_in_the_table() -> None:
    table = settings_table(README.read_text(encoding="utf-8"))
    assert {name for name in documented() if name.startswith("SAHRAT_")} <= set(table)
    assert "SAHRAT_STATIC_DIR" in table and "SAHRAT_MIGRATIONS" in table  # read by the code


# The check fails when the README and settings.py drift apart, each way:


def _row(name: str, text: str) -> str:
    found = re.search(rf"^\| `{name}` \|.*\n", text, re.M)
    assert found is not None
    return found.group(0)


def test_a_setting_missing_from_the_readme_is_caught() -> None:
    text = README.read_text(encoding="utf-8")
    with pytest.raises(AssertionError, match="SAHRAT_HASH_QUEUE"):
        check(text.replace(_row("SAHRAT_HASH_QUEUE", text), ""))


def test_a_renamed_setting_is_caught() -> None:
    text = README.read_text(encoding="utf-8")
    row = _row("SAHRAT_LEASE_SECONDS", text)
    renamed = row.replace("SAHRAT_LEASE_SECONDS", "SAHRAT_LEASE_TIME")
    with pytest.raises(AssertionError, match="SAHRAT_LEASE_SECONDS"):
        check(text.replace(row, renamed))


def test_a_changed_default_is_caught() -> None:
    text = README.read_text(encoding="utf-8")
    row = _row("SAHRAT_GRACE_SECONDS", text)
    with pytest.raises(AssertionError, match="SAHRAT_GRACE_SECONDS"):
        check(text.replace(row, row.replace("| `60` |", "| `90` |")))


def test_a_row_for_a_setting_the_server_lacks_is_caught() -> None:
    text = README.read_text(encoding="utf-8")
    row = _row("SAHRAT_PORT", text)
    extra = row.replace("SAHRAT_PORT", "SAHRAT_PORTS")
    with pytest.raises(AssertionError, match="SAHRAT_PORTS"):
        check(text.replace(row, row + extra))


def test_the_defaults_are_written_as_the_table_writes_them() -> None:
    assert shown(None) == "unset"
    assert shown(True) == "`true`" and shown(False) == "`false`"
    assert shown(60.0) == "`60`" and shown(0.8) == "`0.8`"
    assert shown("") == '`""`' and shown("text") == "`text`"
