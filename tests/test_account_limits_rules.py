"""The rules of the account limits, without a server: a refused request takes nothing
from any bucket, one network takes at most its share of a server-wide bucket, and a
login from a network that signed in to the account before (or to an admin's) is
counted only by its own network's buckets. (The live attacks: tests/server/
test_login_flood.py and test_shared_limits.py.)"""

from __future__ import annotations

from sahrat.server.limits import AccountLimits, KnownNetworks, Throttle, admit, give_back
from sahrat.settings import Settings


def _limits(**env: int) -> AccountLimits:
    return AccountLimits(Settings(**{f"SAHRAT_{k.upper()}": v for k, v in env.items()}))


def test_a_refused_request_takes_nothing_from_any_bucket() -> None:
    own, everybody = Throttle(2, 3600.0), Throttle(3, 3600.0, max_keys=1)
    assert admit([(own, "a"), (everybody, "all")]) == 0
    assert admit([(own, "a"), (everybody, "all")]) == 0
    for _ in range(5):  # "a" is spent: refused, and everybody's bucket keeps its one
        assert admit([(own, "a"), (everybody, "all")]) > 0
    assert admit([(own, "b"), (everybody, "all")]) == 0
    assert admit([(own, "c"), (everybody, "all")]) > 0  # now everybody's is spent
    give_back([(own, "c"), (everybody, "all")])  # (a request not served gives back)
    assert admit([(own, "c"), (everybody, "all")]) == 0


def test_one_network_takes_only_its_share_of_the_sign_ups() -> None:
    limits = _limits(new_accounts_per_address_hour=1000, new_accounts_per_minute=60)
    made = sum(admit(limits.new_account("198.51.100.1")) == 0 for _ in range(100))
    assert made == 6  # ten percent of sixty (SAHRAT_NETWORK_SHARE_PERCENT)
    others = sum(admit(limits.new_account(f"192.0.2.{i}")) == 0 for i in range(1, 101))
    assert others == 54  # what the first left, taken by many networks


def test_a_share_is_at_least_one() -> None:
    limits = _limits(logins_per_minute=5, network_share_percent=1)
    assert admit(limits.login("198.51.100.1", "n", trusted=False)) == 0
    assert admit(limits.login("198.51.100.1", "m", trusted=False)) > 0


def test_strangers_spend_the_name_and_the_server_buckets_not_the_owners() -> None:
    limits = _limits(logins_per_name_hour=3, logins_per_minute=4, network_share_percent=100)
    limits.signed_in(7, "198.51.100.7")  # the owner's network
    for i in range(4):
        trusted = limits.trusts(7, False, f"203.0.113.{i}")
        assert not trusted
        admit(limits.login(f"203.0.113.{i}", "victim", trusted))
    assert admit(limits.login("203.0.113.9", "victim", trusted=False)) > 0
    assert limits.trusts(7, False, "198.51.100.7")
    assert admit(limits.login("198.51.100.7", "victim", trusted=True)) == 0
    assert limits.trusts(8, True, None)  # an admin, from anywhere


def test_known_networks_keep_the_latest_few_of_the_latest_accounts() -> None:
    known = KnownNetworks(per_account=2, max_accounts=2)
    for network in ("a", "b", "c"):
        known.add(1, network)
    assert not known.has(1, "a") and known.has(1, "b") and known.has(1, "c")
    known.add(2, "x")
    known.add(3, "y")
    assert not known.has(1, "c") and known.has(2, "x") and known.has(3, "y")
