"""Every refusal's code, and what each edge makes of it.

A table, the hub and the cluster refuse an operation with a
:class:`~sahrat.server.table.errors.TableError` that carries a code and a message,
never a transport's status: the same refusal reaches a player as an HTTP error
(``api/``), as a WebSocket close (``socket/``) or across processes (``cluster/``),
and each edge reads its number here. The HTTP edge's own refusals (a wrong password,
a taken name...) take their status here too (``api/deps.http_error``); only a rate
limit's 429, with its Retry-After, is the limit's own. A code missing from
:data:`HTTP_STATUS` is a bug (``tests/test_error_codes.py`` reads every code raised
in the server).
"""

from __future__ import annotations

HTTP_STATUS: dict[str, int] = {
    # 400: a request the server cannot read as an operation
    "bad_operation": 400,
    # 401: who is asking is not known (the HTTP edge's own refusals)
    "bad_login": 401,
    "bad_token": 401,
    "no_token": 401,
    # 403: this account may not do this
    "coin_table_needs_account": 403,
    "coin_table_needs_matches": 403,
    "blocked_by_player": 403,
    "friends_need_account": 403,
    "not_friends": 403,
    "not_admin": 403,
    "not_creator": 403,
    "rated_by_queue": 403,
    "rated_cooldown": 403,
    "suspended": 403,
    "tournament_needs_account": 403,
    "tournament_not_entrant": 403,
    "tournament_table": 403,
    # 404: nothing of that name (a private table a stranger may not see included)
    "bad_invite": 404,
    "no_such_message": 404,
    "no_such_invitation": 404,
    "no_such_request": 404,
    "no_such_match": 404,
    "no_such_player": 404,
    "no_such_table": 404,
    "no_such_tournament": 404,
    "no_such_complaint": 404,
    "no_such_schedule": 404,
    # 409: the table's state refuses it now
    "already_seated": 409,
    "chat_own_message": 409,
    "already_friends": 409,
    "block_self": 409,
    "friend_is_guest": 409,
    "friend_self": 409,
    "player_blocked": 409,
    "match_in_progress": 409,
    "name_taken": 409,
    "no_bots_at_coin_tables": 409,
    "not_enough_coins": 409,
    "not_seated": 409,
    "not_replayable": 409,
    "not_analysable": 409,
    "rated_no_rematch": 409,
    "queue_forming": 409,
    "queue_in_match": 409,
    "same_address": 409,
    "seat_taken": 409,
    "seats_empty": 409,
    "seats_taken": 409,
    "self_suspend": 409,
    "table_finished": 409,
    "table_full": 409,
    "table_started": 409,
    "too_many_tables": 409,
    "tournament_started": 409,
    "tournament_full": 409,
    "tournament_registered": 409,
    "tournament_not_registered": 409,
    "tournament_no_window": 409,
    "tournament_complaint_open": 409,
    "tournament_complaint_decided": 409,
    "tournament_ended": 409,
    "tournament_too_many": 409,
    # 422: a well-formed request that names what does not exist
    "name_hidden_chars": 422,
    "name_mixes_scripts": 422,
    "bad_friend_request": 422,
    "no_such_seat": 422,
    "queue_bad_game": 422,
    "queue_bad_players": 422,
    "queue_bad_speed": 422,
    "queue_bad_threshold": 422,
    "queue_unknown_field": 422,
    # ...a tournament's body: the code names the field (docs/tournaments.md, "REST")
    "tournament_unknown_field": 422,
    "tournament_name": 422,
    "tournament_game": 422,
    "tournament_format": 422,
    "tournament_seats": 422,
    "tournament_rounds": 422,
    "tournament_advance": 422,
    "tournament_starts_at": 422,
    "tournament_fee": 422,
    "tournament_min_fill": 422,
    "tournament_first_at": 422,
    "tournament_every_minutes": 422,
    "tournament_open_minutes": 422,
    "tournament_complaint_text": 422,
    "tournament_decision": 422,
    "tournament_bad_state": 422,
    # 500: a bug, reported by another process of the cluster
    "server_error": 500,
    # 503: try again (the table moves between processes, or its process is stopping, or
    # no free guest name was drawn)
    "busy": 503,
    "analysis_busy": 503,
    "unavailable": 503,
}

# A socket that cannot be opened: 4404 when there is nothing to open, otherwise 4503
# ("reconnect": the table may be back, or served by another process, in a moment).
SOCKET_CLOSE: dict[str, int] = {code: 4404 for code, status in HTTP_STATUS.items() if status == 404}


def http_status(code: str) -> int:
    """The HTTP status of a refusal with ``code``."""
    return HTTP_STATUS.get(code, 409)


def socket_close(code: str) -> int:
    """The WebSocket close code for a socket refused with ``code``."""
    return SOCKET_CLOSE.get(code, 4503)
