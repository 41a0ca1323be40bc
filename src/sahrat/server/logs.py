"""The server's logs: plain text or one JSON object per line, never a token.

With ``SAHRAT_LOG_FORMAT=json`` every record (uvicorn's too) is written as
JSON by python-json-logger, with the fields a record carries as ``extra``
(``table_id``, ``seat``) as keys of their own — what a log collector needs
to follow one table across processes.

Browsers cannot set headers on a WebSocket, so the token travels in the
query string (``/ws/tables/1?token=…``), and uvicorn logs each WebSocket's
path with its query. This filter masks the token in every log record of
uvicorn's loggers before it is written anywhere.
"""

from __future__ import annotations

import logging
import re

_TOKEN = re.compile(r"(token=)[^&\s\"']+")


def redact(text: str) -> str:
    return _TOKEN.sub(r"\1[redacted]", text)


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
