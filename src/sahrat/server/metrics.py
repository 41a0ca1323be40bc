"""Prometheus metrics of this process, served at ``/metrics``.

Each server process has its own registry (prometheus-client's default); with
several processes, Prometheus scrapes each one and sums them.
"""

from __future__ import annotations

import asyncio

from prometheus_client import Counter, Gauge, Histogram

_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

CONNECTIONS = Gauge("sahrat_connections", "Open WebSocket connections to this process")
LIVE_TABLES = Gauge("sahrat_live_tables", "Tables this process serves (owns)")
COMMANDS = Counter(
    "sahrat_commands_total", "Commands answered by this process, by result", ["result"]
)
COMMANDS_OK = COMMANDS.labels("ok")  # looked up once: nearly every command is one
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
CLUSTER_REFUSED = Counter(
    "sahrat_cluster_refused_total",
    "Batches read from Redis and refused, by reason (bad_mac, malformed, wrong_channel, "
    "stale, replayed): written by someone without the cluster's secret, or copied",
    ["reason"],
)
EVENT_LOOP_LAG_SECONDS = Histogram(
    "sahrat_event_loop_lag_seconds",
    "How late the event loop ran a callback due now (a probe every quarter second): "
    "the wait of every message and timer behind a busy loop",
    buckets=_FAST,
)
LAG_PROBE_SECONDS = 0.25


def watch_event_loop(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Measure the running loop's lag for as long as it runs: a callback asks to run
    every ``LAG_PROBE_SECONDS`` and records how late it ran. A timer callback, not a
    task: nothing to cancel, it ends with its loop."""
    loop = loop or asyncio.get_running_loop()

    def probe(due: float) -> None:
        now = loop.time()
        EVENT_LOOP_LAG_SECONDS.observe(max(0.0, now - due))
        loop.call_at(now + LAG_PROBE_SECONDS, probe, now + LAG_PROBE_SECONDS)

    start = loop.time() + LAG_PROBE_SECONDS
    loop.call_at(start, probe, start)
