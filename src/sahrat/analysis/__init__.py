"""Post-match analysis of Konkan matches (docs/analysis.md): each decision of each seat
valued from that seat's view by the expert's sampled play-outs, and the facts the
revealed deck shows.

The work is split by rounds so that a caller can run the rounds in worker processes
and report progress: :func:`plan` replays the record (cheap) and cuts it into
:class:`RoundJob` values, :func:`analyse_round` does one round's work (the cost) and
:func:`assemble` puts the rounds' results together. :func:`analyse_record` does all
three in this process.
"""

from __future__ import annotations

from sahrat.analysis.report import (
    AnalysisPlan,
    NotAnalysable,
    RoundJob,
    analyse_record,
    analyse_round,
    assemble,
    plan,
)

__all__ = [
    "AnalysisPlan",
    "NotAnalysable",
    "RoundJob",
    "analyse_record",
    "analyse_round",
    "assemble",
    "plan",
]
