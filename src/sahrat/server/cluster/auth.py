"""Signed batches between the processes of a cluster.

Redis carries every message between the processes (``bus.py``), and anyone who
can reach Redis can publish on its channels. So a process signs each batch it
publishes with HMAC-SHA256 under the cluster's shared secret
(``SAHRAT_CLUSTER_SECRET``), and the receiver refuses a batch whose MAC is missing or
wrong before it reads a byte of it: a message nobody with the secret wrote never
attaches a socket, plays a move or changes a setting.

A batch on the wire is ``MAC (32 bytes) || body``, the body the JSON object
``{"f": sender, "t": channel, "ts": unix time, "n": sequence, "m": [messages]}``.
One MAC covers the whole batch (a flush sends one batch per channel), so signing
costs one HMAC per round trip, not one per message.

Replays. A signed batch copied from Redis and published again would be accepted by
its MAC alone, and some messages do harm twice (a ``leave`` call after the player
sat down again, an old ``suspend`` after the account was restored). So the signed
body names the channel it was published on (a copy published on another channel,
or in another cluster sharing Redis and secret, is refused), its sender's sequence
number, which only grows (each receiver keeps the last one of every sender it has
heard in the last ``2 * MAX_AGE_SECONDS``; a batch at or below it is refused), and
the time it was signed: a batch older than ``MAX_AGE_SECONDS`` is refused, so that
a receiver that never heard the sender (it started later, or forgot a quiet
sender) cannot be fed the sender's old batches either. The sequence alone stops a
replay at once; the clock only bounds what a receiver with no memory of the
sender accepts, so the processes' clocks need only agree within that bound (NTP
keeps them within milliseconds).

What signing does not do: hide what Redis carries (the hands travel in it, so
whoever reads Redis reads them), or stop whoever can write Redis from deleting
leases and heartbeats (tables move, forwarded sockets reconnect). Redis stays on
the private network with a password (docs/operations.md).
"""

from __future__ import annotations

import hmac
import time
from typing import Any

import orjson

from sahrat.settings import MIN_CLUSTER_SECRET_BYTES as MIN_SECRET_BYTES

DIGEST = "sha256"
MAC_BYTES = 32  # SHA-256; the key is at least as long (settings.py)
MAX_AGE_SECONDS = 10.0  # a batch signed longer ago (or as far ahead) is refused


class Refused(Exception):
    """A batch that was not written, or not just now, by a process of this cluster."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason  # the metric's label: bad_mac, malformed, wrong_channel...
        self.detail = detail


class Signer:
    """Signs this process's batches and checks everyone's (one per process)."""

    def __init__(self, secret: bytes, node: str) -> None:
        if len(secret) < MIN_SECRET_BYTES:
            raise ValueError(f"the cluster secret must be at least {MIN_SECRET_BYTES} bytes")
        self._keyed = hmac.new(secret, digestmod=DIGEST)  # copied for each MAC: the key's
        # padding is hashed once, not per batch (a third of a small batch's cost)
        self.node = node
        self._sent = 0  # the sequence number of this process's last batch
        self._heard: dict[str, tuple[int, float]] = {}  # sender -> last seq, when (monotonic)

    def seal(self, channel: str, messages: list[dict[str, Any]]) -> bytes:
        """One batch of messages for ``channel``, signed."""
        self._sent += 1
        body = orjson.dumps(
            {"f": self.node, "t": channel, "ts": time.time(), "n": self._sent, "m": messages}
        )
        return self._mac(body) + body

    def open(self, channel: str, data: bytes) -> tuple[str, list[dict[str, Any]]]:
        """The sender and messages of a batch received on ``channel``; raises Refused
        if it is unsigned, forged, meant for another channel, old, or seen before."""
        if len(data) <= MAC_BYTES:
            raise Refused("bad_mac", "a batch with no MAC")
        mac, body = data[:MAC_BYTES], data[MAC_BYTES:]
        if not hmac.compare_digest(mac, self._mac(body)):
            raise Refused("bad_mac", "a batch with a wrong MAC")
        try:
            batch = orjson.loads(body)
            sender, target, signed_at = str(batch["f"]), str(batch["t"]), float(batch["ts"])
            seq, messages = int(batch["n"]), list(batch["m"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise Refused("malformed", f"a signed batch that is not one ({error})") from None
        if target != channel:
            raise Refused("wrong_channel", f"a batch for {target!r} published on {channel!r}")
        age = time.time() - signed_at
        if abs(age) > MAX_AGE_SECONDS:
            raise Refused("stale", f"a batch from {sender} signed {age:.1f} s ago")
        last = self._heard.get(sender)
        if last is not None and seq <= last[0]:
            raise Refused("replayed", f"batch {seq} from {sender} again (last was {last[0]})")
        self._heard[sender] = (seq, time.monotonic())
        return sender, messages

    def _mac(self, body: bytes) -> bytes:
        mac = self._keyed.copy()
        mac.update(body)
        return mac.digest()

    def forget_quiet(self) -> None:
        """Forget senders not heard for ``2 * MAX_AGE_SECONDS``: their old batches are
        refused as stale by now, so their sequence numbers are no longer needed."""
        cutoff = time.monotonic() - 2 * MAX_AGE_SECONDS
        for sender in [s for s, (_, heard) in self._heard.items() if heard < cutoff]:
            del self._heard[sender]
