"""What a table refuses with.

A refusal has a code (a word a client can act on) and a message (a sentence a player
can read). It has no HTTP status or close code: the edges choose those, from the
code, in ``sahrat.server.errors``.
"""

from __future__ import annotations


class TableError(Exception):
    """A refused table operation (join a full seat, leave a running match...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
