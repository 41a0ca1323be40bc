"""Prometheus metrics of this process, served at ``/metrics``.

Each server process has its own registry (prometheus-client's default); with
several processes, Prometheus scrapes each one and sums them.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

CONNECTIONS = Gauge("sahrat_connections", "Open WebSocket connections to this process")
LIVE_TABLES = Gauge("sahrat_live_tables", "Tables this process serves (owns)")
COMMANDS = Counter(
    "sahrat_commands_total", "Commands answered by this process, by result", ["result"]
)
COMMAND_SECONDS = Histogram(
    "sahrat_command_seconds",
    "From a command's arrival at the table to its reply (durable log write included)",
    buckets=_FAST,
)
LOG_WRITE_SECONDS = Histogram(
    "sahrat_log_write_seconds", "One group commit of the event log", buckets=_FAST
)
BOT_DECISION_SECONDS = Histogram(
    "sahrat_bot_decision_seconds", "A bot choosing its move (thinking only)", buckets=_FAST
)
LEASE_CHANGES = Counter(
    "sahrat_lease_changes_total", "Table leases acquired, released or lost", ["change"]
)
GAPS = Counter(
    "sahrat_forwarded_gaps_total",
    "Forwarded connections told to reconnect because updates were missed",
)
