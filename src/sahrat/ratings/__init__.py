"""Rated play's arithmetic (docs/rating.md): pools, the rating update, the number shown,
and the cool-down of a player who leaves rated matches.

Pure: no I/O, no clock (every moment is passed in), so the store (``store/ratings.py``),
the tables and the matchmaking queue all compute the same thing.

* A **pool** is one rating: Konkan to 51 (2, 3 or 4 seats share it), Konkan to 71,
  Conquian (:func:`pool_of`).
* A match moves its players' ratings by the Plackett–Luce model of the ``openskill``
  package (Weng & Lin 2011), from the final places (ties share a place; a seat whose
  player left or was forfeited is last, shared by every such seat): :func:`rate`.
  Bots take part with a fixed rating (:data:`BOT`) that no match changes.
* The **shown number** is the rating's mean ``mu`` scaled so that a new player, and a
  settled player who wins as often as they lose, shows 1500 (as lichess shows a Glicko
  rating): playing more does not raise it, only winning does. A rating is
  **provisional** (shown with a "?") while its ``sigma`` is above a threshold, and
  only settled ratings are ranked. (The ordinal ``mu - 3 sigma`` would rise with the
  number of matches played at an even record: a farmer's number, not a player's.)
* **Who counts** (:func:`rate_each`): a rating moves only from a match that was really
  played, and only against the opponents that count for it: bots, and people who
  really played the match; a guest counts for guests only; and nobody is rated in a
  match with an opponent met too often lately. A seat its player hardly played and a
  guest (for an account) are left out of the update, so no throwaway account, no seat
  left at once and no partner met again and again can feed an account's rating
  (docs/rating.md, "What a match is rated against").
* A **cool-down** (modeled on lichess's playban): each leave of a rated match adds one to
  a player's leave score and bars them from rated play for a while that grows with the
  score; the score shrinks with time and with rated matches played to the end.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from openskill.models import PlackettLuce

POOLS = ("konkan51", "konkan71", "conquian")

# openskill's defaults: a new rating is mu 25, sigma 25/3; beta (the spread of one
# match's performance) 25/6; tau (the drift added to sigma at each match) 25/300.
MODEL = PlackettLuce()
NEW_MU = float(MODEL.mu)
NEW_SIGMA = float(MODEL.sigma)

SHOWN_NEW = 1500  # a new player's shown number
SHOWN_SCALE = 40.0  # shown points per unit of mu: a new sigma (8.33) is about 333 points
PROVISIONAL_SIGMA = 6.0  # about ten two-seat matches bring a new sigma below this


def pool_of(game: str, options: Mapping[str, Any]) -> str:
    """The rating pool of a table's game and options."""
    if game == "conquian":
        return "conquian"
    threshold = options.get("threshold", 71 if game == "konkan71" else 51)
    return "konkan71" if threshold == 71 else "konkan51"


@dataclass(frozen=True)
class Rating:
    """One player's rating in one pool: the model's mean and uncertainty."""

    mu: float = NEW_MU
    sigma: float = NEW_SIGMA


BOT = Rating(NEW_MU, NEW_SIGMA)  # a bot plays as a newcomer who never learns


def shown(rating: Rating) -> int:
    """The number a player sees: ``mu`` scaled, 1500 when new (or even)."""
    return round(SHOWN_NEW + SHOWN_SCALE * (rating.mu - NEW_MU))


def provisional(rating: Rating, threshold: float = PROVISIONAL_SIGMA) -> bool:
    """Whether the rating is still uncertain (shown with a "?")."""
    return rating.sigma > threshold


def final_ranks(places: Sequence[int | None], left: Sequence[bool]) -> list[int]:
    """Each seat's place for the update, 1 the best and ties equal (one more than the
    seats strictly ahead): by the engine's places for the seats played to the end (a
    seat the engine gave no place comes after the placed ones), then every left or
    forfeited seat, sharing the last place."""
    if len(places) != len(left):
        raise ValueError("one left flag per place")
    unplaced = max((p for p in places if p is not None), default=0) + 1
    keys = [
        (1, 0) if gone else (0, unplaced if place is None else place)
        for place, gone in zip(places, left, strict=True)
    ]
    return [1 + sum(other < key for other in keys) for key in keys]


def rate(ratings: Sequence[Rating], ranks: Sequence[int], fixed: Sequence[bool]) -> list[Rating]:
    """The ratings after one match: openskill's Plackett–Luce update of one-player
    teams by ``ranks`` (lower is better, equal is a tie). A ``fixed`` seat (a bot's)
    takes part as it is and keeps its rating."""
    if not len(ratings) == len(ranks) == len(fixed):
        raise ValueError("one rank and one fixed flag per rating")
    if len(ratings) < 2:
        return list(ratings)
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    new = MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return [
        old if keep else Rating(float(team[0].mu), float(team[0].sigma))
        for old, team, keep in zip(ratings, new, fixed, strict=True)
    ]


# --- who a match is rated against -------------------------------------------------------

# Why a person's rating did not move (docs/rating.md, "What a match is rated against").
SHORT = "short"  # the match was not really played (too few rounds or deals won)
REPEAT = "repeat"  # an opponent at the table was met too often lately
NO_OPPONENT = "no_opponent"  # nobody at the table counted as an opponent


@dataclass(frozen=True)
class Contender:
    """A seat of a finished rated match, as the update sees it: its rating before, its
    final rank (:func:`final_ranks`), whether it is a bot's own seat, whether its
    person really played it (``played``: enough turns of their own), and whether that
    person is a guest."""

    rating: Rating
    rank: int
    bot: bool = False
    played: bool = True
    guest: bool = False

    def counts_for(self, other: Contender) -> bool:
        """Whether this seat is an opponent in ``other``'s update: a bot always; a
        person who really played, and, if a guest, only for another guest."""
        return self.bot or (self.played and (not self.guest or other.guest))


@dataclass(frozen=True)
class Outcome:
    """A seat's rating after the match, and why it did not move (None: it moved)."""

    rating: Rating
    unrated: str | None = None


def rate_each(
    seats: Sequence[Contender], *, played: bool, repeats: Collection[frozenset[int]] = ()
) -> list[Outcome]:
    """Each seat's rating after a match, each person rated against the opponents that
    count for them.

    A person's update is openskill's Plackett–Luce update of the person (at their
    rating) and every other seat that counts for them (:meth:`Contender.counts_for`:
    bots at their fixed rating, people who really played). The ranks are the seats'
    final ranks among those taking part. Nobody's rating moves when the match was not
    really ``played``; a person with no opponent keeps theirs; so does a person of a
    pair in ``repeats`` (two seats whose people met too often lately): whole, since a
    partner who throws a match at a table with bots feeds the farmer the bots' places
    too. When every seat counts and no pair
    repeats, this is exactly one joint update of the whole table (each seat's new
    rating depends on the others' ratings before the match only). A bot's seat keeps
    its rating."""
    out: list[Outcome] = []
    for me, seat in enumerate(seats):
        if seat.bot:
            out.append(Outcome(seat.rating))
            continue
        if not played:
            out.append(Outcome(seat.rating, SHORT))
            continue
        if any(me in pair for pair in repeats):
            out.append(Outcome(seat.rating, REPEAT))
            continue
        field = [other for other, them in enumerate(seats) if other != me and them.counts_for(seat)]
        if not field:
            out.append(Outcome(seat.rating, NO_OPPONENT))
            continue
        taking_part = [me, *field]
        new = rate(
            [seats[i].rating for i in taking_part],
            [seats[i].rank for i in taking_part],
            [i != me for i in taking_part],
        )
        out.append(Outcome(new[0]))
    return out


# --- the cool-down of a leaver ------------------------------------------------------------


@dataclass(frozen=True)
class CooldownRule:
    """How long a leave bars a player from rated play (docs/rating.md, "Cool-downs").

    The n-th leave counted (the leave score rounded up) bars for ``base_minutes`` times
    ``growth`` to the power n-1, at most ``max_minutes``. The score loses one every
    ``decay_hours`` and one for every ``forgive_matches`` rated matches played to the
    end."""

    base_minutes: float = 5.0
    growth: float = 3.0
    max_minutes: float = 24 * 60.0
    decay_hours: float = 24.0
    forgive_matches: int = 3


@dataclass(frozen=True)
class Cooldown:
    """A player's leave record: the score, the end of the bar (if any), and when the
    score was last brought up to date."""

    score: float = 0.0
    until: datetime | None = None
    changed_at: datetime | None = None
    leaves: int = 0  # every leave ever counted (for admins; never decays)


def decayed(state: Cooldown, now: datetime, rule: CooldownRule) -> Cooldown:
    """The record at ``now``: the score less what the time since its last change took."""
    if state.changed_at is None or now <= state.changed_at:
        return replace(state, changed_at=state.changed_at or now)
    hours = (now - state.changed_at).total_seconds() / 3600.0
    lost = hours / rule.decay_hours if rule.decay_hours > 0 else 0.0
    return replace(state, score=max(0.0, state.score - lost), changed_at=now)


def cooldown_minutes(score: float, rule: CooldownRule) -> float:
    """The bar a leave that brings the score to ``score`` gives."""
    if score <= 0:
        return 0.0
    count = max(1, math.ceil(score - 1e-9))
    return min(rule.max_minutes, rule.base_minutes * rule.growth ** (count - 1))


def after_leave(state: Cooldown, now: datetime, rule: CooldownRule) -> Cooldown:
    """A leave at ``now``: the score grows by one and the bar it brings starts now
    (an earlier bar that ends later stays)."""
    current = decayed(state, now, rule)
    score = current.score + 1.0
    until = now + timedelta(minutes=cooldown_minutes(score, rule))
    if current.until is not None and current.until > until:
        until = current.until
    return Cooldown(score, until, now, current.leaves + 1)


def after_completed(state: Cooldown, now: datetime, rule: CooldownRule) -> Cooldown:
    """A rated match played to the end at ``now``: the score shrinks (the bar stays)."""
    current = decayed(state, now, rule)
    step = 1.0 / rule.forgive_matches if rule.forgive_matches > 0 else 0.0
    return replace(current, score=max(0.0, current.score - step))


def seconds_left(state: Cooldown, now: datetime) -> float:
    """How long the player is still barred from rated play at ``now`` (0: not)."""
    if state.until is None:
        return 0.0
    return max(0.0, (state.until - now).total_seconds())
