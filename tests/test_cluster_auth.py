"""The signatures of the cluster's batches (``server/cluster/auth.py``): a batch is taken
only from a holder of the secret, on the channel it was signed for, once, and while
it is fresh; everything else is refused with its reason."""

from __future__ import annotations

import secrets

import pytest

from sahrat.server.cluster import auth as cluster_auth
from sahrat.server.cluster.auth import MAC_BYTES, MAX_AGE_SECONDS, Refused, Signer

KEY = secrets.token_bytes(32)
CHANNEL = "sahrat:to:b"
MESSAGES = [{"k": "cmd", "c": "c1", "o": "a", "x": '{"type": "ping"}'}]


def _reason(receiver: Signer, data: bytes, channel: str = CHANNEL) -> str:
    with pytest.raises(Refused) as refused:
        receiver.open(channel, data)
    return refused.value.reason


def test_a_signed_batch_is_taken_once() -> None:
    sender, receiver = Signer(KEY, "a"), Signer(KEY, "b")
    first, second = sender.seal(CHANNEL, MESSAGES), sender.seal(CHANNEL, [])
    assert receiver.open(CHANNEL, first) == ("a", MESSAGES)
    assert _reason(receiver, first) == "replayed"
    assert receiver.open(CHANNEL, second) == ("a", [])
    assert _reason(receiver, first) == "replayed"  # an older one, after a newer one


def test_unsigned_forged_and_altered_batches_are_refused() -> None:
    receiver = Signer(KEY, "b")
    signed = Signer(KEY, "a").seal(CHANNEL, MESSAGES)
    body = signed[MAC_BYTES:]
    assert _reason(receiver, body) == "bad_mac"  # the body alone
    assert _reason(receiver, b"") == "bad_mac"
    assert _reason(receiver, Signer(secrets.token_bytes(32), "a").seal(CHANNEL, MESSAGES)) == (
        "bad_mac"
    )
    altered = signed.replace(b'"c1"', b'"c2"')
    assert altered != signed and _reason(receiver, altered) == "bad_mac"


def test_a_batch_published_on_another_channel_is_refused() -> None:
    signed = Signer(KEY, "a").seal(CHANNEL, MESSAGES)
    assert _reason(Signer(KEY, "c"), signed, "sahrat:to:c") == "wrong_channel"
    assert _reason(Signer(KEY, "c"), signed, "other:to:b") == "wrong_channel"


def test_an_old_batch_is_refused_by_a_receiver_that_never_heard_its_sender(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = cluster_auth.time.time()
    monkeypatch.setattr(cluster_auth.time, "time", lambda: now - MAX_AGE_SECONDS - 1)
    old = Signer(KEY, "a").seal(CHANNEL, MESSAGES)
    monkeypatch.setattr(cluster_auth.time, "time", lambda: now + MAX_AGE_SECONDS + 1)
    ahead = Signer(KEY, "a2").seal(CHANNEL, MESSAGES)
    monkeypatch.undo()
    assert _reason(Signer(KEY, "b"), old) == "stale"
    assert _reason(Signer(KEY, "b"), ahead) == "stale"


def test_a_signed_batch_that_is_not_one_is_refused() -> None:
    receiver = Signer(KEY, "b")
    keyed = Signer(KEY, "x")
    for body in (b"[1, 2]", b"{}", b"not json", b'{"f": "a", "t": "x", "ts": "x", "n": 1}'):
        assert _reason(receiver, keyed._mac(body) + body) == "malformed"


def test_quiet_senders_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    receiver = Signer(KEY, "b")
    receiver.open(CHANNEL, Signer(KEY, "a").seal(CHANNEL, MESSAGES))
    receiver.forget_quiet()
    assert "a" in receiver._heard  # heard just now
    later = cluster_auth.time.monotonic() + 2 * MAX_AGE_SECONDS + 1
    monkeypatch.setattr(cluster_auth.time, "monotonic", lambda: later)
    receiver.forget_quiet()
    assert "a" not in receiver._heard


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Signer(b"x" * 31, "a")
