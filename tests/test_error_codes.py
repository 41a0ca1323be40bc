"""Every refusal the server raises has its status at the edges (``server/errors.py``).

A table, the hub and the cluster refuse with a code; the HTTP and WebSocket edges look
the code up. A code raised but missing from the map would fall back to 409 unnoticed,
so the map must hold every code raised anywhere in the server.
"""

from __future__ import annotations

import ast
from pathlib import Path

from sahrat.server.errors import HTTP_STATUS, http_status, socket_close

SERVER = Path(__file__).resolve().parents[1] / "src" / "sahrat" / "server"


def raised_codes() -> dict[str, list[str]]:
    """Each literal code given to ``TableError(...)`` (a refusal below the edge) or to
    ``http_error(...)`` (the HTTP edge's own) in the server, with where."""
    found: dict[str, list[str]] = {}
    for path in SERVER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("TableError", "http_error")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                where = f"{path.relative_to(SERVER)}:{node.lineno}"
                found.setdefault(str(node.args[0].value), []).append(where)
    return found


def test_every_code_raised_has_a_status() -> None:
    codes = raised_codes()
    assert len(codes) >= 30, codes  # the scan finds the refusals
    assert {"seat_taken", "bad_login", "name_taken"} <= set(codes)  # of both kinds
    missing = {code: where for code, where in codes.items() if code not in HTTP_STATUS}
    assert not missing, f"codes without an HTTP status in server/errors.py: {missing}"


def test_a_refusal_takes_no_status_of_its_own() -> None:
    for path in SERVER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                "TableError",
                "http_error",
            ):
                assert len(node.args) <= 2 and not node.keywords, (
                    f"{path.relative_to(SERVER)}:{node.lineno}"
                )


def test_the_statuses_players_rely_on() -> None:
    # docs/protocol.md and the REST docs: a stranger's private table and a missing one
    # are the same 404; a full seat a 409; a coin table a guest may not join a 403; a
    # table between processes a 503 to retry.
    assert http_status("no_such_table") == 404
    assert http_status("seat_taken") == 409
    assert http_status("coin_table_needs_account") == 403
    assert http_status("no_such_seat") == 422
    assert http_status("unavailable") == 503
    assert http_status("bad_login") == 401  # with WWW-Authenticate: Bearer
    assert http_status("name_taken") == 409
    assert socket_close("no_such_table") == 4404
    assert socket_close("unavailable") == 4503
