"""A Konkan round in face masks, for rollouts: every seat plays the simple player's
policy (open as soon as the search finds the target, take the pile's card only to use
it at once, lay down and lay off whatever fits, throw the least useful card) until a
seat goes out, the stock runs dry or a turn cap is reached.

Cards are faces (0..51, suit-major as in :mod:`sahrat.rules.search`) and a joker
count: which of the two decks a card came from never matters to the play. A hand is
the search's encoding (two bits per face), so the meld value of a hand after each
draw is :func:`sahrat.bots.fastmelds.meld_value`, memoised, and it is asked only
when the card drawn or thrown can change it (a card with no partner in the hand can
join no meld). What is left out, for speed: joker swaps, the stock being reshuffled
(the round ends when it runs out, scored as the fourth exhaustion is), escalating
openings and Konkan commitments.
"""

from __future__ import annotations

from collections.abc import Sequence

from sahrat.bots.fastmelds import isolated, meld_value
from sahrat.rules.melds import AceValue
from sahrat.rules.search import JOKER, NEG, Candidate, _run_search

JOKER_FACE = 52
MAX_TURNS = 80  # turns of all seats after which a rollout stops (rounds last about 30)


def face_suit(face: int) -> int:
    return face // 13


def face_rank(face: int) -> int:
    return face % 13 + 1


def _weights() -> list[list[tuple[int, int]]]:
    """For each face, the other faces that help it and how much (the simple player's
    usefulness: a set partner or run neighbour 2, a run card two away 1)."""
    out: list[list[tuple[int, int]]] = []
    for face in range(52):
        suit, rank = face_suit(face), face_rank(face)
        row = []
        for other in range(52):
            if other == face:
                continue
            o_suit, o_rank = face_suit(other), face_rank(other)
            if o_rank == rank:
                row.append((other, 2))
            elif o_suit == suit:
                gap = abs(o_rank - rank)
                if gap == 12:
                    gap = 1
                if gap == 1:
                    row.append((other, 2))
                elif gap == 2:
                    row.append((other, 1))
        out.append(row)
    return out


WEIGHTS = _weights()
_LOW = sum(1 << (2 * face) for face in range(52))  # the low count bit of every face
_HIGH = _LOW << 1
CARD_VALUE_15 = [11 if face % 13 == 0 else min(face % 13 + 1, 10) for face in range(52)]


def _partner_masks() -> list[int]:
    """For each face, the mask of the faces it can meld with (both count bits): its rank
    in another suit, its suit within two ranks (the ace beside K and Q as well)."""
    out = []
    for face in range(52):
        total = 0
        for other in range(52):
            if other == face:
                continue
            single = 1 << (2 * other)
            if isolated(single + (1 << (2 * face))) == 0:
                total |= 3 * single
        out.append(total)
    return out


PARTNERS = _partner_masks()


def partnered(mask: int, face: int) -> bool:
    """Can ``face`` meld with the cards of ``mask`` (some card of its rank or near it)?"""
    return bool(mask & PARTNERS[face])


_RANK = {
    rank: sum(1 << (2 * (suit * 13 + rank - 1)) for suit in range(4)) for rank in (1, 2, 12, 13)
}
_SUIT_LOW = sum(1 << (2 * rank) for rank in range(13))


def useless(mask: int) -> int:
    """The cards the simple player counts no help to (its ``usefulness`` 0): no card of
    their rank in another suit, none of their suit one or two ranks away (K and A one
    apart)."""
    present = (mask | mask >> 1) & _LOW
    near = (
        (present << 2) & ~_RANK[1]
        | (present >> 2) & ~_RANK[13]
        | (present << 4) & ~(_RANK[1] | _RANK[2])
        | (present >> 4) & ~(_RANK[13] | _RANK[12])
        | (present >> 24) & _RANK[1]
        | (present << 24) & _RANK[13]
    )
    blocks = [(present >> (26 * suit)) & _SUIT_LOW for suit in range(4)]
    for suit in range(4):
        other = 0
        for t in range(4):
            if t != suit:
                other |= blocks[t]
        near |= other << (26 * suit)
    return mask & ((present & ~near & _LOW) * 3)


_MELDS: dict[tuple[int, int, AceValue], tuple[int, tuple[Candidate, ...]]] = {}


def _melds_of(mask: int, jokers: int, ace: AceValue) -> tuple[int, tuple[Candidate, ...]]:
    """The engine's search for the melds themselves (to lay them), memoised: the lines
    of one decision meet the same hands on the same deals."""
    key = (mask, jokers, ace)
    found = _MELDS.get(key)
    if found is None:
        if len(_MELDS) > 100_000:
            _MELDS.clear()
        found = _MELDS[key] = _run_search(mask, jokers, ace, False)
    return found


# A hand's discard, memoised: the lines and deals of a decision meet the same hands.
_DISCARDS: dict[int, int] = {}


def least_useful(mask: int) -> int:
    """The least useful real card of ``mask`` (the highest on ties): the simple player's
    discard; -1 for a hand of jokers only."""
    alone = useless(mask)
    if alone:  # useless cards first: the highest of them, the lowest face on ties
        best, best_value = -1, -1
        face = 0
        while alone:
            if alone & 3 and CARD_VALUE_15[face] > best_value:
                best, best_value = face, CARD_VALUE_15[face]
            alone >>= 2
            face += 1
        return best
    best, best_key = -1, (10**6, 0)
    face = 0
    rest = mask
    while rest:
        if rest & 3:
            use = 0
            for other, weight in WEIGHTS[face]:
                c = (mask >> (2 * other)) & 3
                if c:
                    use += weight * c
            key = (use, -CARD_VALUE_15[face])
            if key < best_key:
                best, best_key = face, key
        rest >>= 2
        face += 1
    return best


class Round:
    """The simulated round: hands, table melds, the stock (top last) and the pile top."""

    __slots__ = (
        "ace",
        "fit",
        "hand_jokers",
        "hands",
        "joker_cost",
        "melds",
        "opened",
        "out",
        "out_by_hand",
        "players",
        "stock",
        "target",
        "top",
        "turn",
        "values",
    )

    def __init__(
        self,
        hands: list[int],
        jokers: list[int],
        opened: list[bool],
        melds: list[list[int]],
        stock: list[int],
        top: int,
        turn: int,
        target: int,
        ace: AceValue,
        joker_cost: int,
    ) -> None:
        self.hands = hands
        self.hand_jokers = jokers
        self.opened = opened
        self.melds = melds
        self.stock = stock
        self.top = top  # face on top of the pile (-1: none)
        self.turn = turn
        self.target = target
        self.ace = ace
        self.joker_cost = joker_cost
        self.players = len(hands)
        self.out: int | None = None
        self.out_by_hand = False
        self.values: list[int] = [-1] * self.players  # meld value of each hand, once known
        self.fit = -1  # the faces that lay off on the table's melds, once known

    def copy(self) -> Round:
        new = Round(
            list(self.hands),
            list(self.hand_jokers),
            list(self.opened),
            [list(m) for m in self.melds],
            list(self.stock),
            self.top,
            self.turn,
            self.target,
            self.ace,
            self.joker_cost,
        )
        new.values = list(self.values)
        new.fit = self.fit
        return new

    # --- the hand ---------------------------------------------------------------------

    def value(self, seat: int) -> int:
        known = self.values[seat]
        if known < 0:
            known = self.values[seat] = meld_value(
                self.hands[seat], self.hand_jokers[seat], self.ace
            )
        return known

    def add(self, seat: int, face: int) -> None:
        if face == JOKER_FACE:
            self.hand_jokers[seat] += 1
            self.values[seat] = -1
            return
        if self.values[seat] >= 0 and not partnered(self.hands[seat], face):
            self.hands[seat] += 1 << (2 * face)  # it joins no meld: the value stays
            return
        self.hands[seat] += 1 << (2 * face)
        self.values[seat] = -1

    def remove(self, seat: int, face: int) -> None:
        had_partner = partnered(self.hands[seat] - (1 << (2 * face)), face)
        self.hands[seat] -= 1 << (2 * face)
        if had_partner:
            self.values[seat] = -1

    def cards(self, seat: int) -> int:
        mask = self.hands[seat]
        return (mask & _LOW).bit_count() + 2 * (mask & _HIGH).bit_count() + self.hand_jokers[seat]

    def points(self, seat: int) -> int:
        """What the hand costs if the round ends now."""
        mask = self.hands[seat]
        total = self.hand_jokers[seat] * self.joker_cost
        face = 0
        while mask:
            count = mask & 3
            if count:
                total += count * CARD_VALUE_15[face]
            mask >>= 2
            face += 1
        return total

    # --- melds on the table -----------------------------------------------------------

    def fits(self, meld: list[int], face: int) -> int:
        """Where ``face`` lays off on ``meld``: 1 (a run's low end or a set), 2 (high), 0."""
        if face == JOKER_FACE:
            if meld[0] == 0 and not meld[4] and meld[3] - meld[2] < 12:
                return 2 if meld[3] < 14 else 1 if meld[2] > 1 else 0
            if meld[0] == 1 and not meld[4] and meld[3] < 4:
                return 1
            return 0
        suit, rank = face_suit(face), face_rank(face)
        if meld[0] == 1:
            return int(meld[1] == rank and not meld[2] >> suit & 1 and meld[3] < 4)
        if meld[1] != suit or meld[3] - meld[2] >= 12:
            return 0
        if meld[2] == rank + 1:
            return 1
        high = 14 if rank == 1 else rank
        if meld[3] + 1 == high and not (rank == 1 and meld[2] == 1):
            return 2
        return 0

    def lay(self, meld: list[int], face: int, where: int) -> None:
        self.fit = -1
        if face == JOKER_FACE:
            meld[4] = 1
            if meld[0] == 1 or where == 2:
                meld[3] += 1
            else:
                meld[2] -= 1
            return
        if meld[0] == 1:
            meld[2] |= 1 << face_suit(face)
            meld[3] += 1
        elif where == 1:
            meld[2] -= 1
        else:
            meld[3] += 1

    def lay_down(self, seat: int) -> int:
        """Lay the melds the search finds; the value laid."""
        value, candidates = _melds_of(self.hands[seat], self.hand_jokers[seat], self.ace)
        if value == NEG or not candidates:
            return 0
        self.fit = -1
        for faces, _value, used in candidates:
            reals = [f for f in faces if f != JOKER]
            for f in reals:
                self.hands[seat] -= 1 << (2 * f)
            self.hand_jokers[seat] -= used
            first = next(i for i, f in enumerate(faces) if f != JOKER)
            if len({face_rank(f) for f in reals}) == 1 and (
                len(reals) < 2 or face_suit(reals[0]) != face_suit(reals[1])
            ):
                suits = 0
                for f in reals:
                    suits |= 1 << face_suit(f)
                self.melds.append([1, face_rank(reals[0]), suits, len(faces), used])
            else:
                rank = face_rank(faces[first])
                position = 14 if rank == 1 and first > 0 else rank
                low = position - first
                self.melds.append([0, face_suit(reals[0]), low, low + len(faces) - 1, used])
        self.values[seat] = -1
        return value

    def lay_what_fits(self, seat: int) -> None:
        """The policy's lay-down: every meld the search finds (the opening, for a seat
        that has not opened: the caller has checked that it reaches the target), then
        every card that lays off."""
        if not self.opened[seat]:
            self.lay_down(seat)
            self.opened[seat] = True
        elif self.value(seat) > 0:
            self.lay_down(seat)
        self.lay_offs(seat)

    def fit_mask(self) -> int:
        """The faces (both count bits) that lay off on some table meld."""
        if self.fit >= 0:
            return self.fit
        total = 0
        for meld in self.melds:
            if meld[0] == 1:
                if meld[3] < 4:
                    for suit in range(4):
                        if not meld[2] >> suit & 1:
                            total |= 3 << (2 * (suit * 13 + meld[1] - 1))
            elif meld[3] - meld[2] < 12:
                base = meld[1] * 13
                if meld[2] > 1:
                    total |= 3 << (2 * (base + meld[2] - 2))
                if (meld[3] < 14 and meld[2] > 1) or meld[3] < 13:
                    high = meld[3] + 1
                    total |= 3 << (2 * (base + (0 if high == 14 else high - 1)))
        self.fit = total
        return total

    def lay_offs(self, seat: int) -> None:
        """Lay off every card that fits (keeping a real card to discard)."""
        changed = True
        while changed:
            changed = False
            fitting = self.hands[seat] & self.fit_mask()
            reals = self.cards(seat) - self.hand_jokers[seat]
            face = 0
            while fitting and reals > 1:
                if fitting & 3:
                    for meld in self.melds:
                        where = self.fits(meld, face)
                        if where:
                            self.lay(meld, face, where)
                            self.hands[seat] -= 1 << (2 * face)
                            reals -= 1
                            changed = True
                            break
                fitting >>= 2
                face += 1
            if self.hand_jokers[seat] and reals >= 1:
                for meld in self.melds:
                    where = self.fits(meld, JOKER_FACE)
                    if where:
                        self.lay(meld, JOKER_FACE, where)
                        self.hand_jokers[seat] -= 1
                        changed = True
                        break
        self.values[seat] = -1

    # --- the policy -------------------------------------------------------------------

    def discard_choice(self, seat: int) -> int:
        """The least useful real card (the highest on ties): the simple player's."""
        mask = self.hands[seat]
        face = _DISCARDS.get(mask)
        if face is None:
            if len(_DISCARDS) > 200_000:
                _DISCARDS.clear()
            face = _DISCARDS[mask] = least_useful(mask)
        return face

    def wants_top(self, seat: int) -> bool:
        top = self.top
        if top < 0:
            return False
        if not partnered(self.hands[seat], top):
            if not self.opened[seat]:
                return False
            return bool(self.fit_mask() >> (2 * top) & 3) and self.cards(seat) > 1
        before = self.value(seat)
        after = meld_value(self.hands[seat] + (1 << (2 * top)), self.hand_jokers[seat], self.ace)
        if self.opened[seat]:
            return after > before or bool(self.fit_mask() >> (2 * top) & 3)
        return after >= self.target and after > before

    def play_turn(self, seat: int, *, draw: bool = True, discard: int = -1) -> None:
        """One turn of the policy for ``seat`` (``draw`` False: the opener's first turn)."""
        opened_before = self.opened[seat]
        if draw:
            if self.wants_top(seat):
                self.add(seat, self.top)
                self.top = -1
            else:
                if not self.stock:
                    self.turn = -1  # the stock ran out: the round ends, nobody out
                    return
                self.add(seat, self.stock.pop())
        if not self.opened[seat]:
            if self.value(seat) >= self.target:
                self.lay_down(seat)
                self.opened[seat] = True
        elif self.value(seat) > 0:
            self.lay_down(seat)
        if self.opened[seat]:
            self.lay_offs(seat)
        self.finish_turn(seat, discard, opened_before)

    def finish_turn(self, seat: int, discard: int, opened_before: bool) -> None:
        if discard < 0 or not (self.hands[seat] >> (2 * discard)) & 3:
            discard = self.discard_choice(seat)
        if discard >= 0:
            self.remove(seat, discard)
            self.top = discard
        if self.hands[seat] == 0 and self.hand_jokers[seat] == 0:
            self.out = seat
            self.out_by_hand = not opened_before
            self.turn = -1
            return
        self.turn = (seat + 1) % self.players

    def run(self, turns: int = MAX_TURNS) -> None:
        while self.turn >= 0 and turns > 0:
            self.play_turn(self.turn)
            turns -= 1

    def scores(self) -> list[int]:
        """The round's scores as §1.8 gives them (a cut-off round: as if it ended now)."""
        out = []
        double = 2 if self.out_by_hand else 1
        for seat in range(self.players):
            if seat == self.out:
                out.append(-60 if self.out_by_hand else -30)
            elif not self.opened[seat]:
                out.append(100 * double)
            else:
                out.append(self.points(seat) * double)
        return out


def meld_to_sim(
    kind: str, cards: Sequence[tuple[int, int]], start: int, has_joker: bool
) -> list[int]:
    """A table meld as the simulator keeps it; ``cards``: (suit, rank) of its real cards."""
    if kind == "set":
        suits = 0
        for suit, _rank in cards:
            suits |= 1 << suit
        return [1, cards[0][1], suits, len(cards) + has_joker, int(has_joker)]
    length = len(cards) + has_joker
    return [0, cards[0][0], start, start + length - 1, int(has_joker)]
