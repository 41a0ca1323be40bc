"""Rate limits: on what a WebSocket sends, and on requests per key.

A WebSocket has a token bucket per connection and one per account (over all the
account's connections to this process): a message beyond either is answered with a
``rate_limited`` error — the connection stays open, nothing else happens. Only abuse
that persists (``abuse_limit`` refused messages within a minute) closes the
connection, with code 4429.

REST requests are counted by :class:`Throttle` (a bucket per key: a network, a name,
an account), several at once through :func:`admit`, which takes from all of them or
from none: a request one bucket refuses costs the others nothing. Sign-ups and logins
(:class:`AccountLimits`) are limited so that no network can use up what everybody
shares, and no stranger can use up what an account's owner needs.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from sahrat.settings import Settings

ABUSE_WINDOW = 60.0
MAX_ACCOUNTS = 100_000  # buckets kept for the most recent accounts only


@dataclass
class Bucket:
    rate: float
    burst: float
    tokens: float = -1.0
    stamp: float = field(default_factory=time.monotonic)

    def refill(self, now: float) -> None:
        if self.tokens < 0:
            self.tokens = self.burst
        elapsed = max(0.0, now - self.stamp)  # a clock read before the bucket was made
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
        self.stamp = max(now, self.stamp)

    def take(self, now: float) -> bool:
        self.refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def give_back(self) -> None:
        self.tokens = min(self.burst, self.tokens + 1.0)


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

    def _bucket(self, key: str, now: float) -> Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(self.rate, self.burst, stamp=now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        bucket.refill(now)
        return bucket

    def waiting(self, key: str) -> float:
        """Seconds until ``key`` may make a request (0: now); nothing is taken."""
        bucket = self._bucket(key, time.monotonic())
        return 0.0 if bucket.tokens >= 1.0 else (1.0 - bucket.tokens) / self.rate

    def take(self, key: str) -> None:
        """One request for ``key`` (which ``waiting`` allowed)."""
        self._bucket(key, time.monotonic()).tokens -= 1.0

    def give_back(self, key: str) -> None:
        """Undo a ``take``: the request it paid for was not served."""
        self._bucket(key, time.monotonic()).give_back()

    def wait(self, key: str) -> float:
        """Take one request for ``key``: 0 if it may go on, else the seconds until it
        may (and nothing is taken)."""
        return admit([(self, key)])


Check = tuple[Throttle, str]  # a bucket, and whose
EVERYBODY = "all"  # the one key of a server-wide throttle


def waiting(checks: Sequence[Check]) -> float:
    """Seconds until every bucket of ``checks`` has a request to give (0: now)."""
    return max((throttle.waiting(key) for throttle, key in checks), default=0.0)


def admit(checks: Sequence[Check]) -> float:
    """One request from each bucket of ``checks`` if every one has it (0), else the
    longest wait and nothing taken from any: a refused request costs nothing, so that
    nobody's refused flood drains a bucket that others share."""
    wait = waiting(checks)
    if wait == 0.0:
        for throttle, key in checks:
            throttle.take(key)
    return wait


def give_back(checks: Sequence[Check]) -> None:
    """Undo ``admit``: the server could not serve the request it let through."""
    for throttle, key in checks:
        throttle.give_back(key)


class KnownNetworks:
    """The networks each account has proved itself from (signed up, signed in or used
    its token), the latest few, for the most recent accounts: this process's memory,
    which a restart empties and a signed-in client refills at its next request."""

    def __init__(self, per_account: int = 8, max_accounts: int = MAX_ACCOUNTS) -> None:
        self.per_account, self.max_accounts = per_account, max_accounts
        self._networks: OrderedDict[int, list[str]] = OrderedDict()

    def add(self, user_id: int, network: str) -> None:
        networks = self._networks.pop(user_id, [])
        if network in networks:
            networks.remove(network)
        self._networks[user_id] = [network, *networks][: self.per_account]
        while len(self._networks) > self.max_accounts:
            self._networks.popitem(last=False)

    def has(self, user_id: int, network: str) -> bool:
        return network in self._networks.get(user_id, ())


class AccountLimits:
    """How fast accounts may be made and signed in to (docs/operations.md).

    New accounts: per network, and from everybody together, of which one network may
    take only its share (``SAHRAT_NETWORK_SHARE_PERCENT``). Logins: per network, per
    network and name together, and — unless the network has signed in to that account
    before, or the account is an admin's — per name and from everybody (a network's
    share again). A stranger's flood therefore spends the stranger's own buckets and
    the ones shared with other strangers, never what the owner's network needs: the
    owner, from a network they have used, and an admin, from anywhere, are refused
    only by their own network's buckets."""

    def __init__(self, settings: Settings) -> None:
        share = settings.network_share_percent
        self.new_per_network = Throttle(settings.new_accounts_per_address_hour, 3600.0)
        self.new_overall, self.new_share = _shared(settings.new_accounts_per_minute, share)
        self.logins_per_network = Throttle(settings.logins_per_address_minute, 60.0)
        self.logins_per_network_name = Throttle(settings.logins_per_address_name_hour, 3600.0)
        self.logins_per_name = Throttle(settings.logins_per_name_hour, 3600.0)
        self.logins_overall, self.login_share = _shared(settings.logins_per_minute, share)
        self.known = KnownNetworks()

    def new_account(self, network: str) -> list[Check]:
        """The buckets a new account from ``network`` takes from (its own first)."""
        return [
            (self.new_per_network, network),
            (self.new_share, network),
            (self.new_overall, EVERYBODY),
        ]

    def own_logins(self, network: str, name: str) -> list[Check]:
        """The buckets a login takes from that only its network can empty."""
        return [
            (self.logins_per_network, network),
            (self.logins_per_network_name, f"{network} {name}"),
        ]

    def login(self, network: str, name: str, trusted: bool) -> list[Check]:
        """The buckets a login to ``name`` from ``network`` takes from: its own only if
        ``trusted`` (see :meth:`trusts`), else also the name's and everybody's."""
        own = self.own_logins(network, name)
        if trusted:
            return own
        return [
            *own,
            (self.logins_per_name, name),
            (self.login_share, network),
            (self.logins_overall, EVERYBODY),
        ]

    def trusts(self, user_id: int, is_admin: bool, network: str | None) -> bool:
        """Whether a login to this account from ``network`` skips the shared buckets:
        the network has signed in to it before, or the account is an admin's (whose
        password ``sahrat admin create`` draws: 144 random bits, beyond guessing)."""
        return is_admin or (network is not None and self.known.has(user_id, network))

    def signed_in(self, user_id: int, network: str | None) -> None:
        """``network`` proved to be the account's own (a password or a token)."""
        if network is not None:
            self.known.add(user_id, network)


def _shared(count: int, percent: int) -> tuple[Throttle, Throttle]:
    """A server-wide throttle of ``count`` a minute, and one network's share of it:
    ``percent`` of it (at least one a minute)."""
    return Throttle(count, 60.0, max_keys=1), Throttle(max(1, count * percent // 100), 60.0)
