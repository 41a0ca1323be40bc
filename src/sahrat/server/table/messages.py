"""Every message the server sends, built here: one function per shape, each named
after the model of ``protocol.py`` that documents it (docs/protocol.md), so that each
shape is written once. What goes in a view is the engine's."""

from __future__ import annotations

from typing import Any, Literal

from sahrat.server.table.pacing import RoundBreak as Pause


def message(kind: str, seq: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A server message (``ServerMessage``): its type, the table's seq when it was
    sent, its payload."""
    return {"type": kind, "seq": seq, "payload": payload}


def refusal(cid: str, code: str, message: str) -> dict[str, Any]:
    """The payload of a ``reply`` refusing command ``cid`` (``Reply``)."""
    return {"cid": cid, "ok": False, "error": {"code": code, "message": message}}


def accepted(cid: str) -> dict[str, Any]:
    """The payload of a ``reply`` accepting command ``cid`` (``Reply``)."""
    return {"cid": cid, "ok": True}


def error_payload(code: str, message: str) -> dict[str, Any]:
    """The payload of an ``error`` (``ErrorInfo``)."""
    return {"code": code, "message": message}


def round_break_payload(pause: Pause | None) -> dict[str, Any] | None:
    """A round break as messages carry it (``RoundBreak``)."""
    return None if pause is None else {"until": pause.until, "waiting": sorted(pause.waiting)}


def seat_payload(
    seat: int,
    owner: int | None,
    name: str | None,
    *,
    connected: bool,
    away: bool,
    bot_level: str | None,
    left: bool,
    rating: tuple[int, bool] | Literal[False] | None = False,
) -> dict[str, Any]:
    """One seat of a ``table`` payload (``TableSeat``); ``rating`` (shown number and
    provisional flag, None for an empty seat) at a rated table only (False: not rated,
    no ``rating`` key)."""
    out: dict[str, Any] = {
        "seat": seat,
        "user_id": owner,
        "name": name,
        "connected": connected,
        "away": away,
        "bot": bot_level is not None,
        "bot_level": bot_level,
        "left": left,
    }
    if rating is not False:
        out["rating"] = None if rating is None else {"value": rating[0], "provisional": rating[1]}
    return out


def table_payload(
    *,
    table_id: int,
    game: str,
    options: dict[str, Any],
    private: bool,
    invite_code: str | None,
    status: str,
    coin_table: bool,
    creator_id: int,
    seats: list[dict[str, Any]],
    seq: int,
    seed_commitment: str | None,
    rematch: list[int],
    spectators: list[str],
    spectator_count: int,
    rated: bool = False,
    chat: bool = True,
    friends_watch: bool = False,
    spectator_delay: bool = False,
    tournament_id: int | None = None,
) -> dict[str, Any]:
    """The payload of a ``table`` message, and a snapshot's ``table`` (``TableInfo``)."""
    return {
        "id": table_id,
        "game": game,
        "options": options,
        "private": private,
        "invite_code": invite_code,
        "status": status,
        "coin_table": coin_table,
        "creator_id": creator_id,
        "seats": seats,
        "seq": seq,
        "seed_commitment": seed_commitment,
        "rematch": rematch,
        "spectators": spectators,
        "spectator_count": spectator_count,
        "rated": rated,
        "chat": chat,
        "friends_watch": friends_watch,
        "spectator_delay": spectator_delay,
        "tournament_id": tournament_id,
    }


def snapshot_payload(
    table: dict[str, Any],
    seat: int | None,
    view: dict[str, Any] | None,
    deadline: float | None,
    pause: Pause | None,
) -> dict[str, Any]:
    """The payload of a ``snapshot`` (``Snapshot``)."""
    return {
        "table": table,
        "seat": seat,
        "view": view,
        "deadline": deadline,
        "round_break": round_break_payload(pause),
    }


def update_payload(
    events: list[dict[str, Any]],
    by: str,
    *,
    view: dict[str, Any] | None = None,
    changes: tuple[dict[str, Any], list[str]] | None = None,
    deadline: float | None = None,
    pause: Pause | None = None,
) -> dict[str, Any]:
    """The payload of an ``update`` (``Update``): a step's events as one seat sees
    them, with what changed in that seat's view (``changes``: the changed fields and
    the gone ones) or, for a seat shown no view before, the whole ``view``;
    ``deadline`` and ``pause`` are the table's now. A resume's older steps have the
    events alone."""
    changed, gone = changes if changes is not None else (None, [])
    return {
        "events": events,
        "changes": changed,
        "gone": gone,
        "view": view,
        "deadline": deadline,
        "by": by,
        "round_break": round_break_payload(pause),
    }


def resume_payload(missed: list[dict[str, Any]], snapshot: dict[str, Any]) -> dict[str, Any]:
    """The payload of a ``resume`` (``Resume``): the missed updates, then a snapshot."""
    return {"missed": missed, "snapshot": snapshot}


def break_payload(pause: Pause | None, deadline: float | None) -> dict[str, Any]:
    """The payload of a ``break`` (``BreakInfo``)."""
    return {"round_break": round_break_payload(pause), "deadline": deadline}


def reaction_payload(
    seat: int | None, user_id: int, name: str | None, reaction: str
) -> dict[str, Any]:
    """The payload of a ``reaction`` (``Reaction``)."""
    return {"seat": seat, "user_id": user_id, "name": name, "reaction": reaction}


def ratings_payload(pool: str, changes: list[dict[str, Any]]) -> dict[str, Any]:
    """The payload of a ``ratings`` (``RatingsInfo``)."""
    return {"pool": pool, "changes": changes}


def hint_payload(action: dict[str, Any]) -> dict[str, Any]:
    """The payload of a ``hint`` (``HintInfo``): the action without its seat."""
    return {"action": {key: value for key, value in action.items() if key != "seat"}}


def error_message(seq: int, code: str, message: str) -> dict[str, Any]:
    """An ``error`` message: a client message refused (not a command with a ``cid``,
    which gets a ``reply``), or a table's news that something could not be done."""
    return {"type": "error", "seq": seq, "payload": {"code": code, "message": message}}
