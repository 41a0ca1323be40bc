"""A match's end: the rows its last append writes (the match, its players, the coins,
and at a rated table the ratings, in the one transaction of the last step), and what
the table does once they are durable.

Functions of the :class:`Host` they act on (the ``Table``), like ``lifecycle.py``'s."""

from __future__ import annotations

from typing import Any

from sahrat.server.table.host import Host
from sahrat.server.table.messages import ratings_payload
from sahrat.server.table.moves import Steps
from sahrat.server.table.rated import rated_match
from sahrat.store import ledger
from sahrat.store.ratings import RatedMatch

Rows = tuple[dict[str, Any], list[dict[str, Any]], list[ledger.Movement], RatedMatch | None]


def rows(table: Host, final_state: Any, steps: Steps) -> Rows:
    """What the append of the match's last ``steps`` writes besides them: the match's
    row, its players' rows, the coins, and a rated table's ratings."""
    match, players, coins = table.match.settle(
        final_state, steps, table_id=table.id, seating=table.seating, services=table.services
    )
    rated = (
        rated_match(
            game=table.game,
            options=table.match.options.to_json(),
            row=match,
            players=players,
            seating=table.seating,
            table_id=table.id,
            start_seq=table.match.start_seq or 0,
            settings=table.services.settings,
        )
        if table.rated
        else None
    )
    return match, players, coins, rated


def ended(table: Host, rated: RatedMatch | None) -> None:
    """The match's end is durable: no clock runs, a rated match's new ratings are told
    (stored with the match: now everyone may know; and kept for a page opened later),
    the table is announced, and it is forgotten once nobody watches."""
    table.match.finish()
    table.pace.close()
    if rated is not None:
        for change in rated.changes:
            table.ratings[change["user_id"]] = (change["after"], change["provisional"])
        table.rating_changes = ratings_payload(rated.pool, rated.changes)
        table.audience.send_all("ratings", table.rating_changes)
    table.audience.table_changed()
    table.services.forget_later(table.id)
