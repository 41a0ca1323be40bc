"""Deterministic randomness for the engine.

The engine never touches the global random state. A game has one seed (in
production drawn from :mod:`secrets` by the server; in tests any string), and
every shuffle draws from a generator derived from that seed and what the
shuffle is for (``"deal", round, redeal`` or ``"reshuffle", round, n``). The
derivation is SHA-256, so knowing one shuffle tells nothing about another,
and publishing the seed after a match lets anyone re-derive every shuffle.
"""

from __future__ import annotations

import hashlib
import random
import secrets


def new_seed() -> str:
    """A fresh unpredictable seed (256 bits, hex)."""
    return secrets.token_hex(32)


def rng_for(seed: str, *purpose: object) -> random.Random:
    """A generator that depends only on ``seed`` and ``purpose``."""
    label = "/".join([seed, *(str(part) for part in purpose)])
    return random.Random(hashlib.sha256(label.encode("utf-8")).digest())


def seed_commitment(seed: str) -> str:
    """The SHA-256 of a seed: shown before play, checked against the seed revealed after."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()
