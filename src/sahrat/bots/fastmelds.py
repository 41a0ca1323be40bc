"""A fast meld value for Konkan hands, for rollouts: the value :func:`best_melds` finds,
without the melds themselves.

The engine's search (:mod:`sahrat.rules.search`) walks the whole hand card by card.
Here the hand is split the way melds split it: a set lies across suits within one
rank, a run within one suit. So the search first chooses, rank by rank, which cards
go into sets (few ranks can make one), and then every suit's leftover cards are
searched for runs on their own. A suit's leftover pattern (two bits per face, 26
bits) recurs from hand to hand and from turn to turn of a rollout, so the runs of a
pattern are memoised for good (:data:`_RUNS`), and so is the whole hand
(:data:`_HANDS`): adding or removing one card re-searches only what changed.

The answer is the best total meld value that leaves at least one real card to
discard, the same number as ``best_melds(hand, ace).value`` (the tests compare the
two on many random hands). The score is kept as ``value * 64 - cards used``, so
that among the best solutions the one using the fewest cards is seen: if even that
one uses every real card, the engine's search answers instead (a rare hand).

Pure functions of the hand; the memo tables only remember answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from sahrat.rules.cards import Card
from sahrat.rules.melds import AceValue
from sahrat.rules.search import best_melds

SCALE = 64  # score = value * SCALE - real cards used (a hand has at most 30 real cards)
_MEMO_LIMIT = 400_000
_RUNS: dict[tuple[int, int, int, int, bool], int] = {}
_HANDS: dict[tuple[int, int, bool], int] = {}
_SUIT_BITS = (1 << 26) - 1
NEG = -(10**9)


def encode(cards: Sequence[Card]) -> tuple[int, int]:
    """(face mask with two bits per face, jokers): the encoding of the engine's search."""
    mask = 0
    jokers = 0
    for card in cards:
        if card.is_joker:
            jokers += 1
        else:
            mask += 1 << (2 * (card.key % 52))
    return mask, jokers


def _position_value(position: int, low_run: bool, ace_11: bool) -> int:
    if position in (1, 14):
        return 11 if ace_11 else (1 if low_run else 10)
    return min(position, 10)


def _count(pattern: int, position: int, high: int) -> int:
    """Copies at a run position of one suit (position 14 is the ace moved high)."""
    if position == 14:
        return high
    return (pattern >> (2 * (position - 1))) & 3


def _runs(pattern: int, high: int, jokers: int, free: bool, ace_11: bool) -> int:
    """The best score of runs from one suit's cards: ``pattern`` holds positions 1..13
    (the ace low), ``high`` the aces already moved to position 14. ``free``: a joker
    may stand for a card the suit holds (only worth it with two jokers in the hand)."""
    if pattern == 0:
        return 0
    key = (pattern, high, jokers, ace_11, free)
    hit = _RUNS.get(key)
    if hit is not None:
        return hit
    low_bit = pattern & -pattern
    p = (low_bit.bit_length() - 1) // 2 + 1  # the lowest position held
    one = 1 << (2 * (p - 1))
    best = _runs(pattern - one, high, jokers, free, ace_11)  # keep it in the hand
    if p == 1:
        best = max(best, _runs(pattern - one, high + 1, jokers, free, ace_11))  # ace high
    starts = [p]
    if jokers and p >= 2:
        starts.append(p - 1)  # a joker just below
    for lo in starts:
        joker_at = lo if lo < p else 0
        used_mask = 0 if lo < p else one
        used_high = 0
        value = _position_value(lo, lo == 1, ace_11)
        reals = 0 if lo < p else 1
        for q in range(lo + 1, min(lo + 12, 14) + 1):
            held = _count(pattern - used_mask, q, high - used_high) > 0
            step = _position_value(q, lo == 1, ace_11)
            if held:
                if q == 14:
                    used_high += 1
                else:
                    used_mask += 1 << (2 * (q - 1))
                value += step
                reals += 1
                length = q - lo + 1
                if length >= 3:
                    score = value * SCALE - reals
                    best = max(
                        best,
                        score
                        + _runs(
                            pattern - used_mask,
                            high - used_high,
                            jokers - bool(joker_at),
                            free,
                            ace_11,
                        ),
                    )
                    if free and jokers and not joker_at:
                        # the joker stands for a card of the run the hand holds (its top
                        # too), freeing that card for a meld with the other joker
                        for inner in range(lo + 1, q + 1):
                            bit = 0 if inner == 14 else 1 << (2 * (inner - 1))
                            best = max(
                                best,
                                score
                                + 1
                                + _runs(
                                    pattern - used_mask + bit,
                                    high - used_high + (inner == 14),
                                    jokers - 1,
                                    free,
                                    ace_11,
                                ),
                            )
                continue
            if joker_at or not jokers:
                break
            joker_at = q
            value += step
            if q - lo + 1 >= 3:
                score = value * SCALE - reals
                best = max(
                    best,
                    score + _runs(pattern - used_mask, high - used_high, jokers - 1, free, ace_11),
                )
    if len(_RUNS) > _MEMO_LIMIT:
        _RUNS.clear()
    _RUNS[key] = best
    return best


_EVEN = sum(1 << (2 * face) for face in range(52))
_AT_RANK = {
    rank: sum(1 << (2 * (suit * 13 + rank - 1)) for suit in range(4)) for rank in range(1, 14)
}
_SUIT_EVEN = sum(1 << (2 * rank) for rank in range(13))


def isolated(mask: int) -> int:
    """The cards (as a mask) no meld can use: no card of their rank in another suit and
    none of their suit within two ranks (the ace next to K and Q too); the engine's
    ``search._isolated`` in shifts instead of a loop over the faces."""
    present = (mask | mask >> 1) & _EVEN
    near = (
        (present << 2) & ~_AT_RANK[1]
        | (present >> 2) & ~_AT_RANK[13]
        | (present << 4) & ~(_AT_RANK[1] | _AT_RANK[2])
        | (present >> 4) & ~(_AT_RANK[13] | _AT_RANK[12])
        | ((present >> 24) | (present >> 22)) & _AT_RANK[1]
        | (present << 24) & _AT_RANK[13]
        | (present << 22) & _AT_RANK[12]
    )
    blocks = [(present >> (26 * suit)) & _SUIT_EVEN for suit in range(4)]
    for suit in range(4):
        other = 0
        for t in range(4):
            if t != suit:
                other |= blocks[t]
        near |= other << (26 * suit)
    alone = present & ~near & _EVEN
    return mask & (alone * 3)


_SET_OPTIONS: dict[tuple[int, tuple[int, ...], int, bool], list[tuple[int, int, int]]] = {}


def _set_options(mask: int, rank: int, jokers: int, ace_11: bool) -> list[tuple[int, int, int]]:
    """Ways to lay sets of ``rank`` (1..13) from the hand: (cards used as a mask, jokers
    used, score). One or two sets (two decks), each of distinct suits, a joker each at most."""
    shifts = [2 * (s * 13 + rank - 1) for s in range(4)]
    counts = [(mask >> shift) & 3 for shift in shifts]
    key = (rank, tuple(counts), jokers, ace_11)
    found = _SET_OPTIONS.get(key)
    if found is None:
        found = _SET_OPTIONS[key] = _new_set_options(shifts, counts, rank, jokers, ace_11)
    return found


def _new_set_options(
    shifts: list[int], counts: list[int], rank: int, jokers: int, ace_11: bool
) -> list[tuple[int, int, int]]:
    card_value = (11 if ace_11 else 10) if rank == 1 else min(rank, 10)
    singles: list[tuple[int, int, int]] = []  # (suit bits, jokers, size)
    for suits in range(1, 16):
        if any(suits >> s & 1 and not counts[s] for s in range(4)):
            continue
        n = suits.bit_count()
        if n >= 3:
            singles.append((suits, 0, n))
        if jokers and 2 <= n <= 3:
            singles.append((suits, 1, n + 1))
    out: list[tuple[int, int, int]] = []

    def as_mask(suits: int) -> int:
        return sum(1 << shifts[s] for s in range(4) if suits >> s & 1)

    for index, (suits, joker, size) in enumerate(singles):
        reals = size - joker
        score = size * card_value * SCALE - reals
        out.append((as_mask(suits), joker, score))
        for suits2, joker2, size2 in singles[index:]:
            if joker + joker2 > jokers:
                continue
            if any(suits >> s & 1 and suits2 >> s & 1 and counts[s] < 2 for s in range(4)):
                continue
            reals2 = size2 - joker2
            out.append(
                (
                    as_mask(suits) + as_mask(suits2),
                    joker + joker2,
                    score + size2 * card_value * SCALE - reals2,
                )
            )
    return out


def _suits_best(mask: int, jokers: int, free: bool, ace_11: bool) -> int:
    """Runs in every suit, the jokers shared out between the suits."""
    if not jokers:
        total = 0
        for suit in range(4):
            pattern = (mask >> (26 * suit)) & _SUIT_BITS
            if pattern:
                total += _runs(pattern, 0, 0, free, ace_11)
        return total
    best = [0] * (jokers + 1)  # best[j]: score of the suits so far with at most j jokers
    for suit in range(4):
        pattern = (mask >> (26 * suit)) & _SUIT_BITS
        if not pattern:
            continue
        mine = [_runs(pattern, 0, j, free, ace_11) for j in range(jokers + 1)]
        if jokers == 1:
            best = [best[0] + mine[0], max(best[1] + mine[0], best[0] + mine[1])]
        else:
            best = [max(best[j - k] + mine[k] for k in range(j + 1)) for j in range(jokers + 1)]
    return best[jokers]


def _score(mask: int, jokers: int, ace_11: bool) -> int:
    """The best score (value * SCALE - cards used) of melds from these cards."""
    jokers = min(jokers, 2)  # a third joker could never meld: one per meld, two reals each
    present = (mask | mask >> 1) & _EVEN
    b0, b1, b2, b3 = ((present >> (26 * suit)) & _SUIT_EVEN for suit in range(4))
    if jokers:  # two suits of a rank and a joker make a set
        rich = b0 & (b1 | b2 | b3) | b1 & (b2 | b3) | b2 & b3
    else:
        rich = b0 & b1 & (b2 | b3) | (b0 | b1) & b2 & b3
    ranks = [rank for rank in range(1, 14) if rich >> (2 * (rank - 1)) & 1]
    free = jokers >= 2
    best = NEG

    def choose(index: int, mask: int, jokers: int, score: int) -> None:
        nonlocal best
        if index == len(ranks):
            best = max(best, score + _suits_best(mask, jokers, free, ace_11))
            return
        choose(index + 1, mask, jokers, score)
        for used, joker, gained in _set_options(mask, ranks[index], jokers, ace_11):
            choose(index + 1, mask - used, jokers - joker, score + gained)

    choose(0, mask, jokers, 0)
    return best


def meld_value(mask: int, jokers: int, ace: AceValue = AceValue.ALWAYS_11) -> int:
    """``best_melds(hand, ace).value`` for the hand encoded as (``mask``, ``jokers``)."""
    ace_11 = ace is AceValue.ALWAYS_11
    key = (mask, jokers, ace_11)
    hit = _HANDS.get(key)
    if hit is not None:
        return hit
    alone = isolated(mask)  # cards no meld can use stay in the hand
    score = _score(mask - alone, jokers, ace_11)
    reals = _real_count(mask)
    used = -score % SCALE if score > 0 else 0
    if score <= 0:
        value = 0
    elif used < reals:
        value = (score + used) // SCALE
    else:  # every real card melded: the best lay-down that keeps one back
        value = best_melds(decode(mask, jokers), ace).value
    if len(_HANDS) > _MEMO_LIMIT:
        _HANDS.clear()
    _HANDS[key] = value
    return value


def _real_count(mask: int) -> int:
    return (mask & _EVEN).bit_count() + 2 * (mask & _EVEN << 1).bit_count()


def decode(mask: int, jokers: int) -> list[Card]:
    """Cards with these faces (first-deck copies first) and jokers."""
    from sahrat.rules.cards import konkan_deck

    deck = konkan_deck()
    cards: list[Card] = []
    for face in range(52):
        count = (mask >> (2 * face)) & 3
        cards.extend(deck[face + 52 * copy] for copy in range(count))
    cards.extend(deck[104 + j] for j in range(jokers))
    return cards


def hand_value(cards: Sequence[Card], ace: AceValue = AceValue.ALWAYS_11) -> int:
    """``best_melds(cards, ace).value``, fast."""
    mask, jokers = encode(cards)
    return meld_value(mask, jokers, ace)
