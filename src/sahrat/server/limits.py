"""Rate limits on what a WebSocket sends, per connection and per account.

A token bucket per connection and one per account (over all the account's
connections to this process): a message beyond either is answered with a
``rate_limited`` error — the connection stays open, nothing else happens.
Only abuse that persists (``abuse_limit`` refused messages within a minute)
closes the connection, with code 4429.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

ABUSE_WINDOW = 60.0
MAX_ACCOUNTS = 100_000  # buckets kept for the most recent accounts only


@dataclass
class Bucket:
    rate: float
    burst: float
    tokens: float = -1.0
    stamp: float = field(default_factory=time.monotonic)

    def take(self, now: float) -> bool:
        if self.tokens < 0:
            self.tokens = self.burst
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class Limits:
    """The buckets of one process."""

    def __init__(
        self, rate: float, burst: int, account_rate: float, account_burst: int, abuse: int
    ) -> None:
        self.rate, self.burst = rate, burst
        self.account_rate, self.account_burst = account_rate, account_burst
        self.abuse = abuse
        self._accounts: OrderedDict[int, Bucket] = OrderedDict()

    def connection(self, user_id: int) -> ConnectionLimit:
        return ConnectionLimit(self, user_id)

    def account(self, user_id: int) -> Bucket:
        bucket = self._accounts.get(user_id)
        if bucket is None:
            bucket = self._accounts[user_id] = Bucket(self.account_rate, self.account_burst)
            while len(self._accounts) > MAX_ACCOUNTS:
                self._accounts.popitem(last=False)
        else:
            self._accounts.move_to_end(user_id)
        return bucket


class ConnectionLimit:
    """One connection's bucket, its account's, and its recent refusals."""

    def __init__(self, limits: Limits, user_id: int) -> None:
        self.limits = limits
        self.user_id = user_id
        self.bucket = Bucket(limits.rate, limits.burst)
        self.refused: deque[float] = deque()

    def allow(self) -> bool:
        now = time.monotonic()
        # Both buckets pay only when both allow: a refused message costs nothing.
        account = self.limits.account(self.user_id)
        if self.bucket.take(now):
            if account.take(now):
                return True
            self.bucket.tokens += 1.0
        self.refused.append(now)
        while self.refused and self.refused[0] < now - ABUSE_WINDOW:
            self.refused.popleft()
        return False

    @property
    def abusive(self) -> bool:
        return len(self.refused) >= self.limits.abuse


class Throttle:
    """``count`` requests per ``window`` seconds for each key (a network, a name, or
    one key for everybody): a token bucket per key, kept for the most recent keys.
    The buckets are this process's own: N processes behind a load balancer let up
    to N times as many through."""

    def __init__(self, count: int, window: float, max_keys: int = MAX_ACCOUNTS) -> None:
        self.rate, self.burst = count / window, float(count)
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, Bucket] = OrderedDict()

    def wait(self, key: str) -> float:
        """Take one request for ``key``: 0 if it may go on, else the seconds until it
        may (and nothing is taken)."""
        now = time.monotonic()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(self.rate, self.burst)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        if bucket.take(now):
            return 0.0
        return (1.0 - bucket.tokens) / self.rate


class AccountLimits:
    """How fast accounts may be made and signed in to: per network, per name, overall."""

    def __init__(
        self,
        new_per_network_hour: int,
        new_per_minute: int,
        logins_per_network_minute: int,
        logins_per_name_hour: int,
        logins_per_minute: int,
    ) -> None:
        self.new_per_network = Throttle(new_per_network_hour, 3600.0)
        self.new_overall = Throttle(new_per_minute, 60.0, max_keys=1)
        self.logins_per_network = Throttle(logins_per_network_minute, 60.0)
        self.logins_per_name = Throttle(logins_per_name_hour, 3600.0)
        self.logins_overall = Throttle(logins_per_minute, 60.0, max_keys=1)
