"""Deterministic, verifiable randomness for the engine.

The engine never touches the global random state. A match has one secret
seed (in production 256 bits from :mod:`secrets`; in tests any string). Each
round (a Konkan round, a Conquian deal) ``n`` has its own seed and salt
derived from it, ``SHA-256(match seed "/round/" n)`` and ``SHA-256(match seed
"/salt/" n)`` in hex, and its commitment ``SHA-256(salt ":" round seed)``
is published when the round is dealt; the round seed and salt are revealed
when the round ends, and reveal nothing about the match seed or any other
round (:class:`RoundSecret`). Every random choice of a round draws from a
stream of its round seed (``"deal", k`` or ``"reshuffle", k, r``); the first
dealer is drawn from the match seed (``"first_dealer"``).

The stream is SHA-256 in counter mode: block ``i`` of the stream for
``purpose`` is ``SHA-256(seed "/" purpose parts joined by "/" "#" i)``, read
as four big-endian 64-bit numbers. A number below ``n`` is taken by
rejection (``x < 2**64 - 2**64 % n`` then ``x % n``), so every value is
equally likely, and a shuffle is Fisher–Yates from the last position down.
This is the whole algorithm: anyone can re-implement it in a few lines of
any language to check a published match (``docs/fairness.md``). Knowing one
stream tells nothing about another, or about the seed.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

_LIMIT = 1 << 64


def new_seed() -> str:
    """A fresh unpredictable seed (256 bits, hex)."""
    return secrets.token_hex(32)


def seed_commitment(seed: str) -> str:
    """The SHA-256 of a seed: shown before play, checked against the seed revealed after."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def round_commitment(round_seed: str, salt: str) -> str:
    """The commitment of a round: ``SHA-256(salt ":" round seed)`` in hex."""
    return hashlib.sha256(f"{salt}:{round_seed}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class RoundSecret:
    """Round ``round``'s seed and salt (secret until the round ends) and their commitment
    (public from the deal on)."""

    round: int
    seed: str
    salt: str
    commitment: str


def round_secret(match_seed: str, round_number: int) -> RoundSecret:
    """Round ``round_number``'s (1, 2, 3…) seed, salt and commitment, from the match seed.

    SHA-256 is one-way, so revealing one round's seed and salt reveals nothing
    about the match seed or about any other round.
    """
    if round_number < 1:
        raise ValueError("rounds are numbered from 1")
    seed = hashlib.sha256(f"{match_seed}/round/{round_number}".encode()).hexdigest()
    salt = hashlib.sha256(f"{match_seed}/salt/{round_number}".encode()).hexdigest()
    return RoundSecret(round_number, seed, salt, round_commitment(seed, salt))


class SeedStream:
    """Uniform random numbers drawn from SHA-256 of (seed, purpose, counter)."""

    __slots__ = ("_block", "_counter", "_label", "_numbers")

    def __init__(self, seed: str, *purpose: object) -> None:
        self._label = "/".join([seed, *(str(part) for part in purpose)]).encode("utf-8")
        self._counter = 0
        self._numbers: list[int] = []

    def _next64(self) -> int:
        if not self._numbers:
            digest = hashlib.sha256(self._label + b"#" + str(self._counter).encode()).digest()
            self._counter += 1
            self._numbers = [int.from_bytes(digest[i : i + 8], "big") for i in range(24, -1, -8)]
        return self._numbers.pop()

    def randrange(self, n: int) -> int:
        """A number in ``0..n-1``, each equally likely."""
        if n <= 0:
            raise ValueError("randrange needs a positive bound")
        cutoff = _LIMIT - _LIMIT % n
        while True:
            x = self._next64()
            if x < cutoff:
                return x % n

    def shuffle(self, items: list[T]) -> None:
        """Fisher–Yates in place: for i from the last index down to 1, swap i with
        a uniform j in 0..i."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randrange(i + 1)
            items[i], items[j] = items[j], items[i]


def rng_for(seed: str, *purpose: object) -> SeedStream:
    """The stream for one purpose of one seed."""
    return SeedStream(seed, *purpose)
