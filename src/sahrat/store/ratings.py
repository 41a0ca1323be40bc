"""Ratings, their history and rated cool-downs in the database (docs/rating.md).

The arithmetic is ``sahrat.ratings``'s; this module reads and writes the rows. Every
function works inside a caller's session (and, for a write, its transaction), like
``tables.py``. A rated match's ratings are written by :func:`settle_match` in the
transaction of the match's own rows (``log.py``), so they are written exactly once,
whatever restarts or takeovers replay; a leave is written once per player and match
(:func:`record_leave`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from sahrat import ratings as model
from sahrat.ratings import BOT, Cooldown, CooldownRule, Rating

from .models import GameTable, Match, MatchPlayer, RatedCooldown, RatedLeave, RatingHistory, User
from .models import Rating as RatingRow

BOARD_DAYS = 30  # the leaderboard shows ratings played in the last 30 days
NEW_SHOWN = model.shown(Rating())


def aware(moment: datetime | None) -> datetime | None:
    """SQLite gives naive UTC datetimes (asyncpg aware ones)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


# --- reading ----------------------------------------------------------------------------


async def shown_ratings(
    session: AsyncSession, user_ids: Sequence[int], pool: str
) -> dict[int, tuple[int, bool]]:
    """Each user's shown number and provisional flag in ``pool`` (a user with no rating
    there yet has a new player's: 1500, provisional)."""
    found = {user_id: (NEW_SHOWN, True) for user_id in user_ids}
    if not found:
        return found
    rows = await session.execute(
        select(RatingRow.user_id, RatingRow.shown, RatingRow.provisional).where(
            RatingRow.pool == pool, RatingRow.user_id.in_(list(found))
        )
    )
    for user_id, shown, provisional in rows:
        found[int(user_id)] = (int(shown), bool(provisional))
    return found


async def ratings_of(session: AsyncSession, user_id: int) -> list[RatingRow]:
    """A user's ratings, one per pool they played rated (in the order of ``POOLS``)."""
    rows = (await session.scalars(select(RatingRow).where(RatingRow.user_id == user_id))).all()
    order = {pool: index for index, pool in enumerate(model.POOLS)}
    return sorted(rows, key=lambda row: order.get(row.pool, len(order)))


async def history_of(
    session: AsyncSession, user_id: int, pool: str | None = None, limit: int = 100
) -> list[RatingHistory]:
    """A user's latest rating changes (of one pool, if given), oldest first."""
    query = select(RatingHistory).where(RatingHistory.user_id == user_id)
    if pool is not None:
        query = query.where(RatingHistory.pool == pool)
    rows = (await session.scalars(query.order_by(RatingHistory.id.desc()).limit(limit))).all()
    return list(reversed(rows))


@dataclass(frozen=True)
class BoardRow:
    rank: int
    user_id: int
    name: str
    rating: int
    games: int


async def leaderboard(
    session: AsyncSession, pool: str, now: datetime, limit: int = 50
) -> list[BoardRow]:
    """The pool's settled ratings of accounts (guests excluded) played in the last
    ``BOARD_DAYS`` days, highest first; equal numbers share a rank. One range of
    ``ix_ratings_board``, read from the top."""
    since = now - timedelta(days=BOARD_DAYS)
    query = (
        select(RatingRow.user_id, User.name, RatingRow.shown, RatingRow.games)
        .join(User, User.id == RatingRow.user_id)
        .where(
            RatingRow.pool == pool,
            RatingRow.provisional.is_(False),
            RatingRow.last_played_at >= since,
            User.guest.is_(False),
        )
        .order_by(RatingRow.shown.desc(), RatingRow.user_id.desc())
        .limit(limit)
    )
    out: list[BoardRow] = []
    for index, (user_id, name, shown, games) in enumerate(await session.execute(query)):
        tied = out and out[-1].rating == shown
        rank = out[-1].rank if tied else index + 1
        out.append(BoardRow(rank, int(user_id), str(name), int(shown), int(games)))
    return out


# --- a rated match's end ------------------------------------------------------------------


@dataclass(frozen=True)
class RatedSeat:
    """A seat of a finished rated match: its person (None: a bot's own seat), the
    engine's place for it, and whether its player left it at the end."""

    seat: int
    user_id: int | None
    place: int | None
    left: bool
    own_turns: int = 0  # turns with a move of the player's own in this match


@dataclass
class RatedMatch:
    """What a rated match's end writes besides its rows; ``changes`` is filled by
    :func:`settle_match` (one per person: seat, user_id, before, after, provisional,
    unrated)."""

    pool: str
    table_id: int
    start_seq: int
    at: datetime
    seats: list[RatedSeat]
    # the counted-match rule's (docs/rating.md, "What a match is rated against"): the
    # match was really played; the own turns a person needs to count for the others;
    # rated matches two accounts may play together within repeat_hours that count
    played: bool = True
    min_turns: int = 0
    repeat_limit: int = 0
    repeat_hours: float = 24.0
    provisional_sigma: float = model.PROVISIONAL_SIGMA
    cooldown: CooldownRule = field(default_factory=CooldownRule)
    changes: list[dict[str, Any]] = field(default_factory=list)


async def _current(session: AsyncSession, user_ids: list[int], pool: str) -> dict[int, RatingRow]:
    if not user_ids:
        return {}
    query = select(RatingRow).where(RatingRow.pool == pool, RatingRow.user_id.in_(user_ids))
    # populate_existing: a batch may end two matches of one player (rows updated above)
    query = query.with_for_update().execution_options(populate_existing=True)
    rows = (await session.scalars(query)).all()
    return {row.user_id: row for row in rows}


async def leavers_of(session: AsyncSession, table_id: int, start_seq: int) -> set[int]:
    """The users who left (or were forfeited from) this match at some point."""
    rows = await session.scalars(
        select(RatedLeave.user_id).where(
            RatedLeave.table_id == table_id, RatedLeave.start_seq == start_seq
        )
    )
    return {int(user_id) for user_id in rows}


async def met_lately(
    session: AsyncSession, user_ids: Sequence[int], since: datetime, match_id: int
) -> dict[frozenset[int], int]:
    """How many finished rated matches (other than ``match_id``) each pair of these
    users played together since ``since``: every such match, whether it moved their
    ratings or not."""
    if len(user_ids) < 2:
        return {}
    one, two = aliased(MatchPlayer), aliased(MatchPlayer)
    query = (
        select(one.user_id, two.user_id, func.count())
        .join(two, and_(two.match_id == one.match_id, two.user_id > one.user_id))
        .join(Match, Match.id == one.match_id)
        .join(GameTable, GameTable.id == Match.table_id)
        .where(
            one.user_id.in_(list(user_ids)),
            two.user_id.in_(list(user_ids)),
            GameTable.rated.is_(True),
            Match.finished_at >= since,
            Match.id != match_id,
        )
        .group_by(one.user_id, two.user_id)
    )
    return {frozenset((int(a), int(b))): int(n) for a, b, n in await session.execute(query)}


async def _contenders(
    session: AsyncSession, rated: RatedMatch, match_id: int, current: dict[int, RatingRow]
) -> tuple[list[model.Contender], set[frozenset[int]], list[bool]]:
    """The seats as the update sees them (docs/rating.md, "What a match is rated
    against"), the seat pairs met too often lately, and who left at some point."""
    people = [seat.user_id for seat in rated.seats if seat.user_id is not None]
    guests = set(
        (await session.scalars(select(User.id).where(User.id.in_(people), User.guest))).all()
    )
    gone_ever = await leavers_of(session, rated.table_id, rated.start_seq)
    left = [seat.left or seat.user_id in gone_ever for seat in rated.seats]
    ranks = model.final_ranks([seat.place for seat in rated.seats], left)
    seats = []
    for seat, rank in zip(rated.seats, ranks, strict=True):
        if seat.user_id is None:
            seats.append(model.Contender(BOT, rank, bot=True))
            continue
        row = current.get(seat.user_id)
        before = Rating(row.mu, row.sigma) if row is not None else Rating()
        played, guest = seat.own_turns >= rated.min_turns, seat.user_id in guests
        seats.append(model.Contender(before, rank, played=played, guest=guest))
    repeats: set[frozenset[int]] = set()
    if rated.repeat_limit > 0:
        since = rated.at - timedelta(hours=rated.repeat_hours)
        met = await met_lately(session, people, since, match_id)
        by_user = {seat.user_id: seat.seat for seat in rated.seats if seat.user_id is not None}
        repeats = {
            frozenset(by_user[user] for user in pair)
            for pair, times in met.items()
            if times >= rated.repeat_limit
        }
    return seats, repeats, left


async def settle_match(session: AsyncSession, match_id: int, rated: RatedMatch) -> None:
    """Move the ratings of a finished rated match's people, in the caller's transaction
    (the one writing the match's rows): places from the engine, a seat left at the end
    or left at any time during the match last; bots at their fixed rating; each person
    rated against the opponents that count for them (``sahrat.ratings.rate_each``). A
    history row per rating moved; a person who played a match that moved their rating
    to the end shrinks their leave score. ``rated.changes`` gets one entry per person,
    moved or not (``unrated``: why not)."""
    pool, at = rated.pool, rated.at
    people = [seat.user_id for seat in rated.seats if seat.user_id is not None]
    current = await _current(session, people, pool)
    seats, repeats, left = await _contenders(session, rated, match_id, current)
    outcomes = model.rate_each(seats, played=rated.played, repeats=repeats)
    rated.changes = []
    for seat, contender, outcome, gone in zip(rated.seats, seats, outcomes, left, strict=True):
        if seat.user_id is None:
            continue
        old, new = contender.rating, outcome.rating
        shown = model.shown(new)
        provisional = model.provisional(new, rated.provisional_sigma)
        rated.changes.append(
            {
                "seat": seat.seat,
                "user_id": seat.user_id,
                "before": model.shown(old),
                "after": shown,
                "provisional": provisional,
                "unrated": outcome.unrated,
            }
        )
        if outcome.unrated is not None:
            continue
        values = {
            "mu": new.mu,
            "sigma": new.sigma,
            "shown": shown,
            "provisional": provisional,
            "last_played_at": at,
        }
        if seat.user_id not in current:
            await session.execute(
                insert(RatingRow).values(user_id=seat.user_id, pool=pool, games=1, **values)
            )
        else:
            await session.execute(
                update(RatingRow)
                .where(RatingRow.user_id == seat.user_id, RatingRow.pool == pool)
                .values(games=RatingRow.games + 1, **values)
            )
        await session.execute(
            insert(RatingHistory).values(
                user_id=seat.user_id,
                pool=pool,
                match_id=match_id,
                mu=new.mu,
                sigma=new.sigma,
                shown=shown,
                provisional=provisional,
                place=contender.rank,
                reason="match",
                at=at,
            )
        )
        if not gone:
            await _completed(session, seat.user_id, at, rated.cooldown)


# --- cool-downs ---------------------------------------------------------------------------


def _state(row: RatedCooldown | None) -> Cooldown:
    if row is None:
        return Cooldown()
    return Cooldown(row.score, aware(row.until), aware(row.changed_at), row.leaves)


async def _write_state(session: AsyncSession, user_id: int, state: Cooldown, exists: bool) -> None:
    values = {
        "score": state.score,
        "leaves": state.leaves,
        "until": state.until,
        "changed_at": state.changed_at,
    }
    if exists:
        await session.execute(
            update(RatedCooldown).where(RatedCooldown.user_id == user_id).values(**values)
        )
    else:
        await session.execute(insert(RatedCooldown).values(user_id=user_id, **values))


async def cooldown_of(session: AsyncSession, user_id: int) -> Cooldown:
    """A user's leave record as stored (no record: a clean one)."""
    return _state(await session.get(RatedCooldown, user_id))


async def cooldown_left(session: AsyncSession, user_id: int, now: datetime) -> float:
    """Seconds the user is still barred from rated play at ``now`` (0: not barred)."""
    return model.seconds_left(await cooldown_of(session, user_id), now)


async def _completed(session: AsyncSession, user_id: int, at: datetime, rule: CooldownRule) -> None:
    row = await session.get(RatedCooldown, user_id, with_for_update=True, populate_existing=True)
    if row is None or row.score <= 0:
        return  # a clean record stays clean: no row is written for it
    await _write_state(session, user_id, model.after_completed(_state(row), at, rule), True)


async def record_leave(
    session: AsyncSession,
    user_id: int,
    *,
    table_id: int,
    start_seq: int,
    reason: str,
    now: datetime,
    rule: CooldownRule,
) -> Cooldown | None:
    """A player left a rated match (``reason`` "left") or the timer forfeited their
    seat ("forfeit"): counted once per player and match. The new record, or None if
    this match's leave was counted already."""
    key = {"user_id": user_id, "table_id": table_id, "start_seq": start_seq}
    if await session.get(RatedLeave, key) is not None:
        return None
    session.add(RatedLeave(**key, reason=reason, at=now))
    row = await session.get(RatedCooldown, user_id, with_for_update=True, populate_existing=True)
    state = model.after_leave(_state(row), now, rule)
    await _write_state(session, user_id, state, row is not None)
    await session.flush()
    return state


async def leaves_of(session: AsyncSession, user_id: int, limit: int = 100) -> list[RatedLeave]:
    """The rated matches a user left or was forfeited from, newest first."""
    query = (
        select(RatedLeave)
        .where(RatedLeave.user_id == user_id)
        .order_by(RatedLeave.at.desc())
        .limit(limit)
    )
    return list((await session.scalars(query)).all())


async def lift_cooldown(session: AsyncSession, user_id: int, now: datetime) -> Cooldown:
    """An admin ends a user's bar now (the leave score stays: a next leave escalates)."""
    row = await session.get(RatedCooldown, user_id, with_for_update=True, populate_existing=True)
    if row is None:
        return Cooldown()
    state = Cooldown(row.score, None, aware(row.changed_at), row.leaves)
    await _write_state(session, user_id, state, True)
    return state


# --- an admin's reset ---------------------------------------------------------------------


async def reset_rating(session: AsyncSession, user_id: int, pool: str, now: datetime) -> None:
    """An admin puts a user's rating in ``pool`` back to a new player's (its games too),
    with a history row saying so. The row stays (a reset, not a deletion)."""
    new = Rating()
    shown, provisional = model.shown(new), model.provisional(new)
    await session.execute(
        delete(RatingRow).where(RatingRow.user_id == user_id, RatingRow.pool == pool)
    )
    await session.execute(
        insert(RatingRow).values(
            user_id=user_id,
            pool=pool,
            mu=new.mu,
            sigma=new.sigma,
            games=0,
            shown=shown,
            provisional=provisional,
            last_played_at=None,
        )
    )
    await session.execute(
        insert(RatingHistory).values(
            user_id=user_id,
            pool=pool,
            match_id=None,
            mu=new.mu,
            sigma=new.sigma,
            shown=shown,
            provisional=provisional,
            place=None,
            reason="reset",
            at=now,
        )
    )
