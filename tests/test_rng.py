"""The shuffle is the documented one (docs/fairness.md), deterministic and uniform."""

from __future__ import annotations

import hashlib
from collections import Counter

from sahrat.rules.rng import new_seed, rng_for, seed_commitment


def reference_shuffle(seed: str, purpose: list[str], items: list[int]) -> list[int]:
    """docs/fairness.md, written again from the text alone."""
    label = "/".join([seed, *purpose])
    numbers: list[int] = []
    counter = 0

    def next64() -> int:
        nonlocal counter
        if not numbers:
            digest = hashlib.sha256(f"{label}#{counter}".encode()).digest()
            counter += 1
            numbers.extend(int.from_bytes(digest[k : k + 8], "big") for k in (0, 8, 16, 24))
        return numbers.pop(0)

    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        while True:
            x = next64()
            if x < 2**64 - 2**64 % n:
                j = x % n
                break
        out[i], out[j] = out[j], out[i]
    return out


def test_shuffle_follows_the_published_algorithm() -> None:
    for seed in ("sahrat", "0", new_seed()):
        items = list(range(106))
        rng_for(seed, "deal", 3).shuffle(items)
        assert items == reference_shuffle(seed, ["deal", "3"], list(range(106)))


def test_streams_are_deterministic_and_independent() -> None:
    a, b, c = list(range(52)), list(range(52)), list(range(52))
    rng_for("s", "deal", 0).shuffle(a)
    rng_for("s", "deal", 0).shuffle(b)
    rng_for("s", "deal", 1).shuffle(c)
    assert a == b
    assert a != c


def test_every_order_of_three_is_equally_likely() -> None:
    counts = Counter()
    trials = 60_000
    for i in range(trials):
        items = [0, 1, 2]
        rng_for("uniform", i).shuffle(items)
        counts[tuple(items)] += 1
    assert len(counts) == 6
    expected = trials / 6
    chi_square = sum((n - expected) ** 2 / expected for n in counts.values())
    assert chi_square < 20.5  # p ≈ 0.001 for 5 degrees of freedom


def test_seed_commitment_is_sha256() -> None:
    assert seed_commitment("abc") == hashlib.sha256(b"abc").hexdigest()
    assert len(new_seed()) == 64 and new_seed() != new_seed()
