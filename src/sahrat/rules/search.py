"""Meld search over a Konkan hand: the best opening, and going out as a Hand or Konkan.

Enumerating every lay-down is exponential, so the engine validates what a
player proposes (:mod:`sahrat.rules.konkan`); this module is the helper that
bots and the browser use to *find* melds.

The search works on card faces, not card identities: a hand is encoded as
one integer with two bits per face (two decks: up to 2 copies of a face)
plus a joker count. A depth-first search takes the lowest face still in the
hand and either keeps one copy of it or puts it in a meld whose other real
cards are all higher faces — so every partition is seen once — with the
results memoised on the remaining hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .cards import SUITS, Card, Suit
from .melds import ACE_HIGH, AceValue, Meld, build_meld

JOKER = -1
NEG = -(10**9)


def face_index(card: Card) -> int:
    """0..51: suit-major, rank-minor (the ace is the lowest face of its suit)."""
    assert card.rank is not None and card.suit is not None
    return card.suit.index * 13 + int(card.rank) - 1


def _face_suit(face: int) -> int:
    return face // 13


def _face_rank(face: int) -> int:
    return face % 13 + 1


def _encode(cards: Sequence[Card]) -> tuple[int, int]:
    mask = 0
    jokers = 0
    for card in cards:
        if card.is_joker:
            jokers += 1
        else:
            mask += 1 << (2 * face_index(card))
    return mask, jokers


def _count(mask: int, face: int) -> int:
    return (mask >> (2 * face)) & 3


def _position_value(position: int, low_run: bool, ace: AceValue) -> int:
    if position in (1, ACE_HIGH):
        if ace is AceValue.ALWAYS_11:
            return 11
        return 1 if low_run else 10
    return min(position, 10)


def _face_at(suit: int, position: int) -> int:
    rank = 1 if position == ACE_HIGH else position
    return suit * 13 + rank - 1


# A candidate meld: (faces in table order with JOKER for the joker, value, jokers used).
Candidate = tuple[tuple[int, ...], int, int]


def _runs_from(mask: int, jokers: int, face: int, ace: AceValue) -> list[Candidate]:
    """Runs whose lowest real face is ``face`` (present in ``mask``), at most one joker.

    From a card at position P the run grows upward; a joker may stand below
    P, in one gap, or above the top. A real ace-high run is found from the
    ace itself (the lowest face of its suit), growing downward from 14.
    """
    suit = _face_suit(face)
    rank = _face_rank(face)
    out: list[Candidate] = []
    _windows_up(mask, jokers, suit, rank, ace, out)
    if rank == 1:
        _windows_down_from_ace(mask, jokers, suit, ace, out)
    return out


def _present(mask: int, suit: int, position: int) -> bool:
    return bool(_count(mask, _face_at(suit, position)))


def _candidate(suit: int, lo: int, hi: int, joker_at: int | None, ace: AceValue) -> Candidate:
    low_run = lo == 1
    faces = tuple(JOKER if p == joker_at else _face_at(suit, p) for p in range(lo, hi + 1))
    value = sum(_position_value(p, low_run, ace) for p in range(lo, hi + 1))
    return faces, value, 0 if joker_at is None else 1


def _windows_up(
    mask: int, jokers: int, suit: int, start: int, ace: AceValue, out: list[Candidate]
) -> None:
    top = 13  # a real high ace is never above a non-ace start (it is a lower face)
    missing: int | None = None
    for hi in range(start + 1, min(start + 12, top) + 1):
        if not _present(mask, suit, hi):
            if missing is not None or not jokers:
                break
            missing = hi
            continue
        length = hi - start + 1
        if missing is not None:
            if length >= 3:
                out.append(_candidate(suit, start, hi, missing, ace))
            continue
        if length >= 3:
            out.append(_candidate(suit, start, hi, None, ace))
            if jokers >= 2:
                # A joker may stand for a card the hand holds, freeing that card for
                # a meld that holds the other joker (5S 6S JK 8S beside 5S' JK' 7S 8S').
                # With one joker this is never needed: the freed card and the joker
                # can trade places, or the joker can stand at the run's end instead.
                for inner in range(start + 1, hi):
                    out.append(_candidate(suit, start, hi, inner, ace))
        if jokers and length + 1 <= 13:
            if start > 1:
                out.append(_candidate(suit, start - 1, hi, start - 1, ace))
            if hi + 1 <= 13 or (hi + 1 == ACE_HIGH and start > 1):
                out.append(_candidate(suit, start, hi + 1, hi + 1, ace))


def _windows_down_from_ace(
    mask: int, jokers: int, suit: int, ace: AceValue, out: list[Candidate]
) -> None:
    missing: int | None = None
    for lo in range(13, 1, -1):
        if not _present(mask, suit, lo):
            if missing is not None or not jokers:
                break
            missing = lo
            continue
        length = ACE_HIGH - lo + 1
        if missing is not None:
            if length >= 3:
                out.append(_candidate(suit, lo, ACE_HIGH, missing, ace))
            continue
        if length >= 3:
            out.append(_candidate(suit, lo, ACE_HIGH, None, ace))
            if jokers >= 2:
                for inner in range(lo + 1, ACE_HIGH):
                    out.append(_candidate(suit, lo, ACE_HIGH, inner, ace))
        if jokers and lo - 1 >= 2 and length + 1 <= 13:
            out.append(_candidate(suit, lo - 1, ACE_HIGH, lo - 1, ace))


def _sets_from(mask: int, jokers: int, face: int, ace: AceValue) -> list[Candidate]:
    """Sets whose lowest real face is ``face`` (the other suits are higher faces)."""
    rank = _face_rank(face)
    suit = _face_suit(face)
    card_value = (11 if ace is AceValue.ALWAYS_11 else 10) if rank == 1 else min(rank, 10)
    others = [(s * 13 + rank - 1) for s in range(suit + 1, 4) if _count(mask, s * 13 + rank - 1)]
    out: list[Candidate] = []
    n = len(others)
    for pick in range(1 << n):
        chosen = [others[i] for i in range(n) if pick >> i & 1]
        size = 1 + len(chosen)
        if 3 <= size <= 4:
            out.append(((face, *chosen), size * card_value, 0))
        if jokers and 2 <= size <= 3:
            out.append(((face, *chosen, JOKER), (size + 1) * card_value, 1))
    return out


_EVEN_BITS = int("01" * 13, 2)  # one bit per face of a suit: "is this face present"
# A candidate with the mask of the real cards it uses and their largest possible worth.
Entry = tuple[Candidate, int, int]
_CANDIDATE_CACHE: dict[tuple[int, int, int, AceValue], list[Entry]] = {}
JOKER_MAX = 11  # no card is worth more than 11 in a meld


def _face_max(face: int) -> int:
    rank = _face_rank(face)
    return 11 if rank == 1 else min(rank, 10)


def _upper_bound(mask: int, jokers: int) -> int:
    """No lay-down from these cards can be worth more than this."""
    total = jokers * JOKER_MAX
    face = 0
    while mask:
        count = mask & 3
        if count:
            total += count * _face_max(face)
        mask >>= 2
        face += 1
    return total


def _candidates(mask: int, jokers: int, face: int, ace: AceValue) -> list[Entry]:
    """Every run and set whose lowest real face is ``face``, most valuable first, each
    with the mask of the cards it uses. They depend only on which faces of that suit
    and that rank are present, so they are computed once per pattern and shared."""
    suit = face // 13
    counts = (mask >> (26 * suit)) & 0x3FFFFFF
    present = (counts | (counts >> 1)) & _EVEN_BITS
    rank_shift = 2 * (face % 13)
    for other in range(suit + 1, 4):  # lower suits are empty: ``face`` is the lowest card
        if (mask >> (26 * other + rank_shift)) & 3:
            present |= 1 << (26 + other)
    key = (present, face, jokers if jokers < 2 else 2, ace)
    found = _CANDIDATE_CACHE.get(key)
    if found is None:
        found = []
        for candidate in _runs_from(mask, jokers, face, ace) + _sets_from(mask, jokers, face, ace):
            reals = [f for f in candidate[0] if f != JOKER]
            delta = sum(1 << (2 * f) for f in reals)
            worth = sum(_face_max(f) for f in reals) + candidate[2] * JOKER_MAX
            found.append((candidate, delta, worth))
        found.sort(key=lambda entry: -entry[0][1])
        if len(_CANDIDATE_CACHE) > 200_000:
            _CANDIDATE_CACHE.clear()
        _CANDIDATE_CACHE[key] = found
    return found


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Melds found (as lists of the hand's own cards) and their total value."""

    melds: tuple[tuple[Card, ...], ...]
    value: int
    left: tuple[Card, ...]

    @property
    def cards_melded(self) -> int:
        return sum(len(meld) for meld in self.melds)


# The melds of a solution as a linked list (candidate, rest): cheap to extend.
Chain = tuple[Candidate, "Chain"] | None
_FACE_MAX = [11 if face % 13 == 0 else min(face % 13 + 1, 10) for face in range(52)]


def _search(
    mask: int, jokers: int, kept: int, ace: AceValue, whole: bool
) -> tuple[int, tuple[Candidate, ...]]:
    """Best total value of melds from ``mask`` + ``jokers``; NEG when no valid finish.

    Depth-first over the lowest card: put it in a meld whose other cards are all
    higher, or keep it. Results are memoised on (cards left, jokers left, kept
    any). A branch whose upper bound cannot beat the best found so far at its
    node is skipped, which keeps every node's answer exact, so the memo is sound.
    ``whole`` asks for a Hand: exactly one card kept, a real one.
    """
    memo: dict[tuple[int, int, int], tuple[int, Chain]] = {}
    face_max = _FACE_MAX
    candidates = _candidates

    def best(mask: int, jokers: int, kept: int, bound: int) -> tuple[int, Chain]:
        if mask == 0:
            ok = (kept == 1 and jokers == 0) if whole else kept >= 1
            return (0, None) if ok else (NEG, None)
        key = (mask, jokers, kept)
        hit = memo.get(key)
        if hit is not None:
            return hit
        face = ((mask & -mask).bit_length() - 1) >> 1
        best_value = NEG
        best_chain: Chain = None
        for candidate, delta, worth in candidates(mask, jokers, face, ace):
            value = candidate[1]
            rest_bound = bound - worth
            if value + rest_bound <= best_value:
                continue
            sub_value, sub_chain = best(mask - delta, jokers - candidate[2], kept, rest_bound)
            if sub_value != NEG and sub_value + value > best_value:
                best_value, best_chain = sub_value + value, (candidate, sub_chain)
        keep_bound = bound - face_max[face]
        if not (whole and kept) and keep_bound > best_value:
            sub_value, sub_chain = best(mask - (1 << (2 * face)), jokers, 1, keep_bound)
            if sub_value > best_value:
                best_value, best_chain = sub_value, sub_chain
        memo[key] = (best_value, best_chain)
        return best_value, best_chain

    value, chain = best(mask, jokers, min(kept, 1), _upper_bound(mask, jokers))
    melds: list[Candidate] = []
    while chain is not None:
        melds.append(chain[0])
        chain = chain[1]
    return value, tuple(melds)


def _isolated(mask: int) -> int:
    """The cards (as a mask) that no meld can use: no card of the same rank in another
    suit, and no card of the same suit within two ranks (a joker fills one gap)."""
    out = 0
    for face in range(52):
        count = _count(mask, face)
        if not count:
            continue
        suit, rank = _face_suit(face), _face_rank(face)
        partner = any(_count(mask, s * 13 + rank - 1) for s in range(4) if s != suit)
        if not partner:
            for step in (-2, -1, 1, 2):
                other = rank + step
                if other == 0:
                    other = 13  # the ace's neighbours: 2 3 below, K Q above when high
                elif other == -1:
                    other = 12
                elif other in (14, 15):
                    other -= 13
                if 1 <= other <= 13 and other != rank and _count(mask, suit * 13 + other - 1):
                    partner = True
                    break
        if not partner:
            out += count << (2 * face)
    return out


def _run_search(
    mask: int, jokers: int, ace: AceValue, whole: bool
) -> tuple[int, tuple[Candidate, ...]]:
    """Search the cards that can meld; the others stay in the hand (and count as kept)."""
    isolated = _isolated(mask)
    kept = 0
    rest = isolated
    while rest:
        kept += rest & 3
        rest >>= 2
    if whole and kept > 1:
        return NEG, ()
    return _search(mask - isolated, jokers, kept, ace, whole)


def _materialise(
    hand: Sequence[Card], candidates: Sequence[Candidate]
) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    pools: dict[int, list[Card]] = {}
    jokers: list[Card] = []
    for card in sorted(hand, key=lambda c: c.sort_key):
        if card.is_joker:
            jokers.append(card)
        else:
            pools.setdefault(face_index(card), []).append(card)
    melds = []
    for faces, _value, _used in candidates:
        melds.append(tuple(jokers.pop(0) if f == JOKER else pools[f].pop(0) for f in faces))
    left = tuple(card for pool in pools.values() for card in pool) + tuple(jokers)
    return tuple(melds), left


def best_melds(hand: Sequence[Card], ace: AceValue = AceValue.ALWAYS_11) -> SearchResult:
    """The disjoint melds of highest total value that still leave a card to discard."""
    mask, jokers = _encode(hand)
    value, candidates = _run_search(mask, jokers, ace, whole=False)
    if value == NEG:
        return SearchResult((), 0, tuple(hand))
    melds, left = _materialise(hand, candidates)
    return SearchResult(melds, value, left)


def best_opening(
    hand: Sequence[Card], threshold: int, ace: AceValue = AceValue.ALWAYS_11
) -> SearchResult | None:
    """The highest-valued lay-down that meets ``threshold``, or ``None``."""
    result = best_melds(hand, ace)
    if not result.melds or result.value < threshold:
        return None
    return result


def hand_out(hand: Sequence[Card], ace: AceValue = AceValue.ALWAYS_11) -> SearchResult | None:
    """Melds using every card but one real card (to discard): going out as a Hand, or None."""
    mask, jokers = _encode(hand)
    if len(hand) < 4:
        return None
    value, candidates = _run_search(mask, jokers, ace, whole=True)
    if value == NEG:
        return None
    melds, left = _materialise(hand, candidates)
    return SearchResult(melds, value, left)


def konkan_out(hand: Sequence[Card], ace: AceValue = AceValue.ALWAYS_11) -> SearchResult | None:
    """The most valuable Konkan in a 15-card hand — a 10-run + 4-set or an 11-run +
    3-set, one real card left to discard — or None.

    Every run window of every suit is tried with its joker (a meld holds at most
    one) on each position, also on a position whose card the hand holds: that
    card may be the one the set needs (AC…8C JK TC JC beside 9H 9C' JK')."""
    if len(hand) != 15:
        return None
    jokers = [card for card in hand if card.is_joker]
    per_suit = Counter(card.suit for card in hand if not card.is_joker)
    held: dict[tuple[Suit, int], Card] = {}
    for card in hand:
        if card.suit is not None and card.rank is not None:
            held.setdefault((card.suit, int(card.rank)), card)
    best: SearchResult | None = None
    for run_length, set_size in ((10, 4), (11, 3)):
        for suit in SUITS:
            if per_suit[suit] + min(len(jokers), 1) < run_length:
                continue
            for start in range(1, ACE_HIGH - run_length + 2):
                for run in _konkan_runs(held, jokers, suit, start, run_length):
                    found = _konkan_with_run(hand, run, set_size, ace)
                    if found is not None and (best is None or found.value > best.value):
                        best = found
    return best


def _konkan_runs(
    held: dict[tuple[Suit, int], Card], jokers: Sequence[Card], suit: Suit, start: int, length: int
) -> list[list[Card]]:
    """The ways to fill the run ``start``..``start + length - 1`` of ``suit`` (table order)
    from the cards ``held`` (one per face) and at most one joker."""
    real: dict[int, Card] = {}
    for index in range(length):
        position = start + index
        card = held.get((suit, 1 if position == ACE_HIGH else position))
        if card is not None:
            real[index] = card
    missing = [index for index in range(length) if index not in real]
    if len(missing) > 1 or (missing and not jokers):
        return []
    # The joker fills the gap; with none, it stands nowhere or for a card the hand
    # holds, which frees that card for the set.
    places: list[int | None] = list(missing) if missing else [None]
    if jokers and not missing:
        places += range(length)
    return [[jokers[0] if i == place else real[i] for i in range(length)] for place in places]


def _konkan_with_run(
    hand: Sequence[Card], run: list[Card], set_size: int, ace: AceValue
) -> SearchResult | None:
    """The run with a set of ``set_size`` from the other cards and one real card left."""
    in_run = set(run)
    rest = [card for card in hand if card not in in_run]
    if sum(1 for card in rest if card.is_joker) > 1:
        return None  # a meld holds one joker, and a joker is never the card discarded
    for discard in rest:
        if discard.is_joker:
            continue
        cards = [card for card in rest if card is not discard]
        reals = [card for card in cards if not card.is_joker]
        if len(cards) != set_size or len(reals) < 2:
            return None
        one_rank = len({card.rank for card in reals}) == 1
        if not one_rank or len({card.suit for card in reals}) < len(reals):
            continue  # not a set: try another card to discard
        try:
            run_meld = build_meld(run, joker_low=run[0].is_joker)
            set_meld = build_meld(cards)
        except ValueError:
            return None
        value = run_meld.value(ace) + set_meld.value(ace)
        melds = (tuple(run_meld.cards), tuple(set_meld.cards))
        return SearchResult(melds, value, (discard,))
    return None


def meld_value(cards: Sequence[Card], ace: AceValue = AceValue.ALWAYS_11) -> int:
    """The threshold value of a proposed meld (raises InvalidMeld if it is not one)."""
    meld: Meld = build_meld(cards)
    return meld.value(ace)
