"""Keep bearer tokens out of the logs.

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


def install() -> None:
    """Mask tokens in uvicorn's own logs and in its access log."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
