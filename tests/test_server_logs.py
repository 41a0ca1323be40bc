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


def test_secrets_are_masked_however_the_query_spells_them() -> None:
    """The mask reads the query as the server does (names percent-decoded), so an
    encoded name hides nothing; tickets are masked too, other parameters kept."""
    from sahrat.server.logs import redact

    for query in (
        "token=S3CR3T&since=4",
        "%74oken=S3CR3T&since=4",
        "%2574oken=S3CR3T&since=4",
        "TOKEN=S3CR3T&since=4",
        "ticket=S3CR3T&since=4",
        "since=4&%74%69%63%6b%65%74=S3CR3T",
        "a%26token%3DS3CR3T=1&since=4",
        "+token=S3CR3T&since=4",
    ):
        text = redact(f'127.0.0.1:5000 - "GET /ws/tables/3?{query} HTTP/1.1" 101')
        assert "S3CR3T" not in text, (query, text)
        assert "since=4" in text and "[redacted]" in text, (query, text)
    assert redact("GET /api/tables?page=2&game=konkan") == "GET /api/tables?page=2&game=konkan"


def test_nginx_logs_paths_without_their_query() -> None:
    """nginx's default log format writes ``$request`` (with the query): the deployed
    one writes ``$uri`` instead, and its access log uses it."""
    import re
    from pathlib import Path

    conf = (Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf").read_text()
    found = re.search(r"log_format\s+(\w+)\s+(.*?);", conf, re.S)
    assert found is not None, "no log_format"
    name, fmt = found.groups()
    assert "$uri" in fmt
    for leaky in ("$request ", '$request"', "$request_uri", "$args", "$query_string", "$arg_"):
        assert leaky not in fmt, leaky
    assert re.search(rf"access_log\s+\S+\s+{name}\s*;", conf)
