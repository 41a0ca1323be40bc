"""docs/operations.md lists every setting and every metric the server has."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import REGISTRY

from sahrat.server import metrics  # noqa: F401  (registers the metrics
from sahrat.settings import Settings

DOC = (Path(__file__).parent.parent / "docs" / "operations.md").read_text(encoding="utf-8")


def test_every_setting_is_documented() -> None:
    for name, field in Settings.model_fields.items():
        variable = field.alias or name.upper()
        assert f"`{variable}`" in DOC, variable


def test_every_sahrat_metric_is_documented() -> None:
    names = {metric.name for metric in REGISTRY.collect() if metric.name.startswith("sahrat_")}
    assert names, "no metric registered"
    for name in names:
        assert f"`{name}" in DOC, name
