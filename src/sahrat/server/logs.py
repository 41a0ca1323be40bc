"""The server's logs: plain text or one JSON object per line, never a token.

With ``SAHRAT_LOG_FORMAT=json`` every record (uvicorn's too) is written as
JSON by python-json-logger, with the fields a record carries as ``extra``
(``table_id``, ``seat``) as keys of their own — what a log collector needs
to follow one table across processes.

No secret belongs in a URL: the WebSocket opens with a one-time ticket and
refuses ``?token=``. Still, a URL's query is whatever the client sent, and
uvicorn logs each request's path with its query. This filter masks, in every
log record of uvicorn's loggers, the value of each query parameter whose name,
once percent-decoded (``%74oken`` is ``token``), is a secret's: a token, a
ticket, an invite code.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote_plus

SECRET_NAMES = frozenset({"token", "access_token", "ticket", "invite", "invite_code"})
REDACTED = "[redacted]"
_QUERY = re.compile(r"\?([^\s\"'#]+)")  # a URL's query, up to a space or a quote
_SECRET = re.compile(r"(?:^|[^a-z_])(?:access_token|token|ticket|invite(?:_code)?)\s*=", re.I)


def _decoded(text: str) -> str:
    """Percent-decoded until nothing changes (a name encoded twice is decoded twice)."""
    for _ in range(4):
        once = unquote_plus(text)
        if once == text:
            break
        text = once
    return text


def _redact_query(found: re.Match[str]) -> str:
    parts = []
    for part in found.group(1).split("&"):
        name, eq, _value = part.partition("=")
        if eq and _decoded(name).strip().lower() in SECRET_NAMES:
            part = f"{name}={REDACTED}"
        elif _SECRET.search(_decoded(part)):  # an encoded '=' or '&' inside the part
            part = REDACTED
        parts.append(part)
    return "?" + "&".join(parts)


def redact(text: str) -> str:
    """``text`` with the secrets of every URL query in it masked."""
    return _QUERY.sub(_redact_query, text)


class RedactTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


def install(log_format: str = "text") -> None:
    """Mask tokens in uvicorn's own logs and in its access log; with ``json``, write
    every record as one JSON object per line."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
    if log_format == "json":
        _install_json()


def _install_json() -> None:
    from pythonjsonlogger.json import JsonFormatter

    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        )
    )
    handler.addFilter(RedactTokens())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.INFO)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
