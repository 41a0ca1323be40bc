"""Bearer tokens never reach the logs (the WebSocket carries one in its query)."""

from __future__ import annotations


def test_tokens_never_reach_the_logs() -> None:
    import logging

    from sahrat.server.logs import RedactTokens

    record = logging.LogRecord(
        "uvicorn.error",
        logging.INFO,
        __file__,
        1,
        '%s - "WebSocket %s" %s',
        (("127.0.0.1", 5000), "/ws/tables/3?token=s3cr3t-TOKEN_x&since=4", "[accepted]"),
        None,
    )
    RedactTokens().filter(record)
    text = record.getMessage()
    assert "s3cr3t" not in text
    assert "token=[redacted]&since=4" in text
