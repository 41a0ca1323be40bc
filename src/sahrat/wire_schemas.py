"""Typed models of what the rules engines put on the wire, and their JSON schemas.

The engines build their views and events as plain dicts (``konkan.view``,
``conquian.view``, :meth:`sahrat.rules.events.Event.for_seat`); this module
describes those dicts exactly, as TypedDicts validated by pydantic, without
changing what the engines or the server emit:

* ``KonkanView`` (Konkan and Konkan 71 tables) and ``ConquianView``;
* ``KonkanEvent`` and ``ConquianEvent``: every event type of each game, told
  apart by ``type``;
* ``KonkanAction`` and ``ConquianAction``: the JSON form of an action, as a
  view's ``simple_actions`` lists it and a command or a hint carries it;
* ``KonkanServerMessage`` and ``ConquianServerMessage``: every server message
  of ``sahrat.server.table.protocol`` with its payload typed for that game (the
  view, the events), every object closed.

``python -m sahrat.wire_schemas [--out docs/schemas]`` writes one JSON schema
per name in :data:`SCHEMAS` (``docs/schemas/<Name>.json``); the protocol's own
message schemas are written by ``sahrat schemas``. ``tests/test_wire_schemas.py``
checks that the files are what this code generates, and that real views and
events of whole matches validate against them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from sahrat.rules import conquian, konkan
from sahrat.rules.melds import MeldKind
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.server.table import protocol

# Closed objects: a key the model does not name is refused (``additionalProperties:
# false``), and no value is coerced (a ``"3"`` is not a seat, a ``true`` not a number).
CLOSED = ConfigDict(extra="forbid", strict=True)

# --- scalars ---------------------------------------------------------------------------

KonkanCard = Annotated[
    str,
    Field(
        pattern=r"^(?:[A2-9TJQK][SHDC]|JK)'?$",
        description="a card: rank A 2-9 T J Q K and suit S H D C (7H, TS), or JK a joker; "
        "a trailing ' marks the second deck's copy (7H', JK')",
    ),
]
Face = Annotated[
    str,
    Field(
        pattern=r"^[A2-9TJQK][SHDC]$",
        description="a card's face, without the copy mark: what a joker stands for",
    ),
]
ConquianCard = Annotated[
    str,
    Field(
        pattern=r"^[A2-7JQK][SHDC]$",
        description="a card of the 40-card Conquian deck: rank A 2-7 J Q K, suit S H D C",
    ),
]
Seat = Annotated[int, Field(ge=0, le=3, description="a seat, 0 first")]
ConquianSeat = Annotated[int, Field(ge=0, le=1, description="a seat, 0 or 1")]
Count = Annotated[int, Field(ge=0)]
Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Commitment = Annotated[
    Hex64 | None,
    Field(
        description="SHA-256 of salt:round_seed in hex, published when the round (deal) is "
        "dealt; null for a stacked test deck (docs/fairness.md)"
    ),
]
Revealed = Annotated[
    Hex64 | None,
    Field(description="revealed now that the round (deal) is over; null for a stacked deck"),
]


# --- table options (from the engines' option dataclasses) -------------------------------


def _options_model(options: type[Any], title: str) -> type[BaseModel]:
    """A closed model with one required field per field of an options dataclass: a view
    carries every option, defaults filled in."""
    hints = typing.get_type_hints(options)
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(options):
        default = field.default
        shown = default.value if hasattr(default, "value") else default
        fields[field.name] = (
            hints[field.name],
            Field(description=f"default {json.dumps(shown)}"),
        )
    return create_model(
        title,
        __config__=ConfigDict(extra="forbid", strict=True, title=title),
        __doc__=f"The table's options (sahrat.rules.options.{options.__name__}).",
        **fields,
    )


KonkanOptionsModel = _options_model(KonkanOptions, "KonkanOptions")
ConquianOptionsModel = _options_model(ConquianOptions, "ConquianOptions")


# --- Konkan actions ----------------------------------------------------------------------

ActionSeat = Annotated[
    Seat,
    Field(
        description="the acting seat: always in a view's simple_actions; left out of a "
        "command's and a hint's action (the server adds the connection's seat)"
    ),
]
KonkanMeldCards = Annotated[list[KonkanCard], Field(min_length=1)]


@with_config(CLOSED)
class LayOffJson(TypedDict):
    """Cards laid off on a meld already on the table."""

    meld: Annotated[int, Field(ge=0, description="the meld's id")]
    cards: list[KonkanCard]
    joker_low: NotRequired[
        Annotated[bool, Field(description="a joker laid at a run's end stands below it")]
    ]


@with_config(CLOSED)
class KonkanDraw(TypedDict):
    """Draw the top card of the stock."""

    type: Literal["draw"]
    seat: NotRequired[ActionSeat]


@with_config(CLOSED)
class KonkanTakeDiscard(TypedDict):
    """Take the top of the discard pile with the lay-down that uses it (a committed
    player may take it alone)."""

    type: Literal["take_discard"]
    seat: NotRequired[ActionSeat]
    melds: NotRequired[list[KonkanMeldCards]]
    lay_offs: NotRequired[list[LayOffJson]]


@with_config(CLOSED)
class KonkanLayDown(TypedDict):
    """New melds and/or lay-offs in one action (a first lay-down reaches the threshold)."""

    type: Literal["lay_down"]
    seat: NotRequired[ActionSeat]
    melds: NotRequired[list[KonkanMeldCards]]
    lay_offs: NotRequired[list[LayOffJson]]


@with_config(CLOSED)
class KonkanSwapJoker(TypedDict):
    """Take the joker of meld ``meld`` by giving the card(s) it stands for, then
    optionally lay down (where the joker may go)."""

    type: Literal["swap_joker"]
    seat: NotRequired[ActionSeat]
    meld: Annotated[int, Field(ge=0, description="the meld's id")]
    cards: list[KonkanCard]
    melds: NotRequired[list[KonkanMeldCards]]
    lay_offs: NotRequired[list[LayOffJson]]


@with_config(CLOSED)
class KonkanDiscard(TypedDict):
    """Discard a card (not a joker): ends the turn, or the round with the last card."""

    type: Literal["discard"]
    seat: NotRequired[ActionSeat]
    card: KonkanCard


@with_config(CLOSED)
class KonkanCommit(TypedDict):
    """Commit to Konkan (last round, not opened, at the start of the turn)."""

    type: Literal["commit"]
    seat: NotRequired[ActionSeat]


@with_config(CLOSED)
class KonkanClaimRedeal(TypedDict):
    """Claim a redeal (option redeal, before the first action of the round)."""

    type: Literal["claim_redeal"]
    seat: NotRequired[ActionSeat]


@with_config(CLOSED)
class KonkanEndTurn(TypedDict):
    """End the turn without a discard: only with a hand of jokers alone."""

    type: Literal["end_turn"]
    seat: NotRequired[ActionSeat]


KonkanAction = Annotated[
    KonkanDraw
    | KonkanTakeDiscard
    | KonkanLayDown
    | KonkanSwapJoker
    | KonkanDiscard
    | KonkanCommit
    | KonkanClaimRedeal
    | KonkanEndTurn,
    Field(discriminator="type"),
]


# --- Konkan view -------------------------------------------------------------------------


@with_config(CLOSED)
class KonkanTableMeld(TypedDict):
    """A meld on the table."""

    id: Annotated[
        int, Field(ge=0, description="the meld's id in this round (lay-offs and swaps name it)")
    ]
    owner: Annotated[Seat, Field(description="the seat that laid it")]
    kind: MeldKind
    cards: Annotated[
        list[KonkanCard],
        Field(description="table order: a run from its low end up, a set by suit, joker last"),
    ]
    joker_for: Annotated[
        list[Face],
        Field(
            description="what its joker stands for (two faces in a 3-card set), empty "
            "without a joker"
        ),
    ]


@with_config(CLOSED)
class KonkanRoundResult(TypedDict):
    """A finished round: the view's ``scores`` entries and the ``round_end`` event."""

    round: Annotated[int, Field(ge=1)]
    finish: Annotated[
        konkan.Finish, Field(description="how the round ended (void: nobody went out)")
    ]
    winner: Annotated[Seat | None, Field(description="who went out; null for a void round")]
    scores: Annotated[list[int], Field(description="each seat's score for the round (low is good)")]
    hands: Annotated[
        list[list[KonkanCard]], Field(description="every seat's hand as the round ended")
    ]
    reshuffles: Count
    round_commitment: Commitment
    round_seed: Revealed
    round_salt: Revealed


@with_config(CLOSED)
class KonkanView(TypedDict):
    """What one seat (or a spectator) of a Konkan or Konkan 71 table may know:
    ``sahrat.rules.konkan.view``. No other hand, no stock order."""

    game: Annotated[
        Literal["konkan"],
        Field(description='"konkan" at Konkan 71 tables too: options.threshold tells them apart'),
    ]
    viewer: Annotated[
        Seat | None, Field(description="the seat this view is for; null: a spectator")
    ]
    round: Annotated[
        int, Field(ge=1, description="the round, from 1 (extra rounds go past options.rounds)")
    ]
    last_round: Annotated[
        bool, Field(description="the table's last round or an extra one: commit is possible")
    ]
    dealer: Seat
    turn: Annotated[Seat | None, Field(description="the seat to act; null once the match is over")]
    phase: Annotated[
        konkan.Phase,
        Field(description="draw: the turn starts; play: after drawing (or the opener); over"),
    ]
    hand_counts: Annotated[list[Count], Field(description="cards in each seat's hand")]
    opened: Annotated[list[bool], Field(description="each seat has laid its first lay-down")]
    committed: Annotated[list[bool], Field(description="each seat is committed to Konkan")]
    melds: list[KonkanTableMeld]
    discard_top: Annotated[KonkanCard | None, Field(description="the discard pile's top card")]
    discard_count: Count
    stock_count: Count
    reshuffles: Annotated[Count, Field(description="reshuffles of the discard pile this round")]
    round_commitment: Commitment
    last_opening: Annotated[
        Count, Field(description="the value of the last opening laid this round (0: none)")
    ]
    opening_target: Annotated[
        Count,
        Field(
            description="the total a first lay-down must reach now: options.threshold, "
            "or with options.escalating_opening at least last_opening + 1"
        ),
    ]
    totals: Annotated[list[int], Field(description="each seat's total over the finished rounds")]
    match_over: bool
    winner: Annotated[
        Seat | None,
        Field(description="the match's winner; null before the end or for a shared first place"),
    ]
    places: Annotated[
        list[Annotated[int, Field(ge=1)]],
        Field(
            description="each seat's place once the match is over (ties share a place: "
            "[1, 2, 2]); empty before"
        ),
    ]
    options: NotRequired[
        Annotated[KonkanOptionsModel, Field(description="left out of replay steps")]  # type: ignore[valid-type]
    ]
    scores: NotRequired[
        Annotated[
            list[KonkanRoundResult],
            Field(description="the finished rounds, oldest first; left out of replay steps"),
        ]
    ]
    hand: NotRequired[
        Annotated[list[KonkanCard], Field(description="the viewer's hand; absent for a spectator")]
    ]
    drawn: NotRequired[
        Annotated[
            KonkanCard | None,
            Field(description="only for the seat to act: the card it drew (or took) this turn"),
        ]
    ]
    simple_actions: NotRequired[
        Annotated[
            list[KonkanAction],
            Field(
                description="only for the seat to act: its legal actions that need no meld "
                "choice (with their seat); lay-downs are checked when sent"
            ),
        ]
    ]


# --- Konkan events -----------------------------------------------------------------------

NoSeat = Annotated[None, Field(description="no seat: a table event")]


@with_config(CLOSED)
class KonkanDealEvent(TypedDict):
    """A round (or a redeal) is dealt; the ``dealt`` events follow."""

    type: Literal["deal"]
    seat: NoSeat
    round: Annotated[int, Field(ge=1)]
    dealer: Seat
    opener: Annotated[
        Seat, Field(description="the dealer's next seat: 15 cards, plays first without drawing")
    ]
    hand_counts: list[Count]
    stock_count: Count
    round_commitment: Commitment


@with_config(CLOSED)
class KonkanDealtEvent(TypedDict):
    """A seat's hand was dealt."""

    type: Literal["dealt"]
    seat: Seat
    count: Count
    cards: NotRequired[
        Annotated[list[KonkanCard], Field(description="only in the event sent to that seat")]
    ]


@with_config(CLOSED)
class KonkanCommitEvent(TypedDict):
    type: Literal["commit"]
    seat: Seat


@with_config(CLOSED)
class KonkanRedealEvent(TypedDict):
    """A redeal was claimed; its hand is shown to everyone. A ``deal`` follows."""

    type: Literal["redeal"]
    seat: Seat
    hand: list[KonkanCard]


@with_config(CLOSED)
class KonkanStockExhaustedEvent(TypedDict):
    """A draw from an empty stock with no reshuffle left: the round ends void."""

    type: Literal["stock_exhausted"]
    seat: Annotated[Seat, Field(description="the seat that tried to draw")]
    reshuffles: Count


@with_config(CLOSED)
class KonkanReshuffleEvent(TypedDict):
    """The discard pile but its top card became the stock."""

    type: Literal["reshuffle"]
    seat: NoSeat
    reshuffles: Annotated[int, Field(ge=1, description="reshuffles this round, this one included")]
    stock_count: Count


@with_config(CLOSED)
class KonkanDrawEvent(TypedDict):
    type: Literal["draw"]
    seat: Seat
    source: Literal["stock"]
    stock_count: Count
    card: NotRequired[
        Annotated[KonkanCard, Field(description="only in the event sent to the drawing seat")]
    ]


@with_config(CLOSED)
class KonkanTakeDiscardEvent(TypedDict):
    """The discard pile's top card was taken (its lay-down follows)."""

    type: Literal["take_discard"]
    seat: Seat
    card: KonkanCard


@with_config(CLOSED)
class KonkanOpenEvent(TypedDict):
    """A first lay-down: the seat has opened."""

    type: Literal["open"]
    seat: Seat
    total: Annotated[Count, Field(description="the opening's value")]


@with_config(CLOSED)
class KonkanMeldEvent(TypedDict):
    """A new meld on the table."""

    type: Literal["meld"]
    seat: Seat
    id: Annotated[int, Field(ge=0)]
    kind: MeldKind
    cards: list[KonkanCard]
    joker_for: list[Face]


@with_config(CLOSED)
class KonkanLayOffEvent(TypedDict):
    """Cards laid off on meld ``id``; ``kind``, ``cards``, ``joker_for``: the meld now."""

    type: Literal["lay_off"]
    seat: Seat
    id: Annotated[int, Field(ge=0)]
    added: list[KonkanCard]
    kind: MeldKind
    cards: list[KonkanCard]
    joker_for: list[Face]


@with_config(CLOSED)
class KonkanSwapJokerEvent(TypedDict):
    """The joker of meld ``id`` taken for ``given``; the meld now."""

    type: Literal["swap_joker"]
    seat: Seat
    id: Annotated[int, Field(ge=0)]
    given: list[KonkanCard]
    joker: KonkanCard
    kind: MeldKind
    cards: list[KonkanCard]
    joker_for: list[Face]


@with_config(CLOSED)
class KonkanDiscardEvent(TypedDict):
    type: Literal["discard"]
    seat: Seat
    card: KonkanCard


@with_config(CLOSED)
class KonkanEndTurnEvent(TypedDict):
    type: Literal["end_turn"]
    seat: Seat


@with_config(CLOSED)
class KonkanTurnLimitEvent(TypedDict):
    """The round reached max_round_turns: it ends void (a ``round_end`` follows)."""

    type: Literal["turn_limit"]
    seat: NoSeat
    turns: Count


@with_config(CLOSED)
class KonkanRoundEndEvent(KonkanRoundResult):
    """A round ended; its seed and salt are revealed. A ``deal`` or ``match_end`` follows."""

    type: Literal["round_end"]
    seat: Annotated[Seat | None, Field(description="who went out (as winner); null: void")]


@with_config(CLOSED)
class KonkanMatchEndEvent(TypedDict):
    """The match is over; its seed is revealed."""

    type: Literal["match_end"]
    seat: NoSeat
    winner: Annotated[Seat | None, Field(description="null for a shared first place")]
    places: list[Annotated[int, Field(ge=1)]]
    totals: list[int]
    seed: Annotated[
        str, Field(description="the match seed (SHA-256 of it: TableInfo.seed_commitment)")
    ]


KonkanEvent = Annotated[
    KonkanDealEvent
    | KonkanDealtEvent
    | KonkanCommitEvent
    | KonkanRedealEvent
    | KonkanStockExhaustedEvent
    | KonkanReshuffleEvent
    | KonkanDrawEvent
    | KonkanTakeDiscardEvent
    | KonkanOpenEvent
    | KonkanMeldEvent
    | KonkanLayOffEvent
    | KonkanSwapJokerEvent
    | KonkanDiscardEvent
    | KonkanEndTurnEvent
    | KonkanTurnLimitEvent
    | KonkanRoundEndEvent
    | KonkanMatchEndEvent,
    Field(discriminator="type"),
]


# --- Conquian actions --------------------------------------------------------------------

ConquianActionSeat = Annotated[
    ConquianSeat,
    Field(
        description="the acting seat: always in a view's simple_actions; left out of a "
        "command's and a hint's action (the server adds the connection's seat)"
    ),
]
ConquianMelds = Annotated[
    list[Annotated[list[ConquianCard], Field(min_length=1)]],
    Field(description="melds, each a list of cards"),
]


@with_config(CLOSED)
class ConquianTake(TypedDict):
    """Take the face-up card: ``melds`` is the whole arrangement afterwards."""

    type: Literal["take"]
    seat: NotRequired[ConquianActionSeat]
    melds: ConquianMelds


@with_config(CLOSED)
class ConquianRefuse(TypedDict):
    type: Literal["refuse"]
    seat: NotRequired[ConquianActionSeat]


@with_config(CLOSED)
class ConquianPass(TypedDict):
    type: Literal["pass"]
    seat: NotRequired[ConquianActionSeat]


@with_config(CLOSED)
class ConquianDiscard(TypedDict):
    type: Literal["discard"]
    seat: NotRequired[ConquianActionSeat]
    card: ConquianCard


@with_config(CLOSED)
class ConquianForce(TypedDict):
    type: Literal["force"]
    seat: NotRequired[ConquianActionSeat]


@with_config(CLOSED)
class ConquianDeclineForce(TypedDict):
    type: Literal["decline_force"]
    seat: NotRequired[ConquianActionSeat]


ConquianAction = Annotated[
    ConquianTake
    | ConquianRefuse
    | ConquianPass
    | ConquianDiscard
    | ConquianForce
    | ConquianDeclineForce,
    Field(discriminator="type"),
]


# --- Conquian view -----------------------------------------------------------------------


@with_config(CLOSED)
class ConquianDealResult(TypedDict):
    """A finished deal: the view's ``results`` entries (and the start of ``deal_end``)."""

    deal: Annotated[int, Field(ge=1)]
    dealer: ConquianSeat
    finish: conquian.Finish
    winner: Annotated[ConquianSeat | None, Field(description="null for a drawn deal")]
    points: Annotated[Count, Field(description="scored by the winner (0 for a draw)")]
    round_commitment: Commitment
    round_seed: Revealed
    round_salt: Revealed


@with_config(CLOSED)
class ConquianQuestion(TypedDict):
    """In the force phase: whose refusal or pass the seat to act may force."""

    about: ConquianSeat
    after: Literal["refuse", "pass"]


@with_config(CLOSED)
class ConquianView(TypedDict):
    """What one seat (or a spectator) of a Conquian table may know:
    ``sahrat.rules.conquian.view``. No other hand, no stock or dead-pile order."""

    game: Literal["conquian"]
    viewer: Annotated[ConquianSeat | None, Field(description="null: a spectator")]
    deal: Annotated[int, Field(ge=1, description="the deal, from 1")]
    dealer: ConquianSeat
    deal_value: Annotated[
        int,
        Field(
            ge=1, description="points this deal is worth (2 after a draw with double_after_draw)"
        ),
    ]
    round_commitment: Commitment
    turn: Annotated[ConquianSeat | None, Field(description="the seat to act; null once over")]
    phase: Annotated[
        conquian.Phase,
        Field(
            description="choose: take or refuse the opponent's card; turned_up: take or pass "
            "your own; force: force or decline; forced: take; discard; over"
        ),
    ]
    hand_counts: list[Count]
    melds: Annotated[
        list[list[list[ConquianCard]]],
        Field(description="per seat, its melds in table order, each a list of cards"),
    ]
    face_up: Annotated[
        ConquianCard | None, Field(description="the face-up card; null in the discard phase")
    ]
    face_up_from: Annotated[
        ConquianSeat | None, Field(description="who discarded, passed or turned it up")
    ]
    face_up_how: conquian.FaceUp | None
    stock_count: Count
    dead_count: Annotated[Count, Field(description="refused cards, face down")]
    points: Annotated[list[Count], Field(description="each seat's points toward wins_needed")]
    match_over: bool
    winner: Annotated[
        ConquianSeat | None, Field(description="null before the end, or a tied match")
    ]
    options: NotRequired[
        Annotated[ConquianOptionsModel, Field(description="left out of replay steps")]  # type: ignore[valid-type]
    ]
    results: NotRequired[
        Annotated[
            list[ConquianDealResult],
            Field(description="the finished deals, oldest first; left out of replay steps"),
        ]
    ]
    question: NotRequired[Annotated[ConquianQuestion, Field(description="only in the force phase")]]
    hand: NotRequired[
        Annotated[
            list[ConquianCard], Field(description="the viewer's hand; absent for a spectator")
        ]
    ]
    simple_actions: NotRequired[
        Annotated[
            list[ConquianAction],
            Field(
                description="only for the seat to act: refuse, pass, force or decline, each "
                "discard, and the forced take with open cards only (with their seat)"
            ),
        ]
    ]


# --- Conquian events ---------------------------------------------------------------------


@with_config(CLOSED)
class ConquianDealEvent(TypedDict):
    """A deal; two ``dealt`` events and the first ``turn_up`` follow."""

    type: Literal["deal"]
    seat: NoSeat
    deal: Annotated[int, Field(ge=1)]
    dealer: ConquianSeat
    value: Annotated[int, Field(ge=1, description="points the deal is worth")]
    stock_count: Count
    round_commitment: Commitment


@with_config(CLOSED)
class ConquianDealtEvent(TypedDict):
    type: Literal["dealt"]
    seat: ConquianSeat
    count: Count
    cards: NotRequired[
        Annotated[list[ConquianCard], Field(description="only in the event sent to that seat")]
    ]


@with_config(CLOSED)
class ConquianTurnUpEvent(TypedDict):
    """The seat turned up the stock's top card (automatic)."""

    type: Literal["turn_up"]
    seat: ConquianSeat
    card: ConquianCard
    stock_count: Count


@with_config(CLOSED)
class ConquianTakeEvent(TypedDict):
    """The face-up card was taken; ``melds``: the seat's whole arrangement now."""

    type: Literal["take"]
    seat: ConquianSeat
    card: ConquianCard
    forced: bool
    laid: Annotated[list[ConquianCard], Field(description="hand cards laid with it")]
    melds: list[list[ConquianCard]]
    hand_count: Count


@with_config(CLOSED)
class ConquianRefuseEvent(TypedDict):
    type: Literal["refuse"]
    seat: ConquianSeat
    card: ConquianCard


@with_config(CLOSED)
class ConquianPassEvent(TypedDict):
    type: Literal["pass"]
    seat: ConquianSeat
    card: ConquianCard


@with_config(CLOSED)
class ConquianForceQuestionEvent(TypedDict):
    """The refused or passed card fits ``player``'s melds: ``seat`` (the opponent, now to
    act) is asked whether to force it."""

    type: Literal["force_question"]
    seat: Annotated[ConquianSeat, Field(description="the seat asked (not the one that acted)")]
    card: ConquianCard
    player: Annotated[ConquianSeat, Field(description="the seat that refused or passed")]
    after: Literal["refuse", "pass"]


@with_config(CLOSED)
class ConquianStockExhaustedEvent(TypedDict):
    """A card refused with the stock empty: the deal is drawn (a ``deal_end`` follows)."""

    type: Literal["stock_exhausted"]
    seat: ConquianSeat
    card: Annotated[ConquianCard, Field(description="the refused card")]


@with_config(CLOSED)
class ConquianForceEvent(TypedDict):
    type: Literal["force"]
    seat: ConquianSeat
    card: ConquianCard
    forced: Annotated[ConquianSeat, Field(description="the seat that must take it")]


@with_config(CLOSED)
class ConquianDeclineForceEvent(TypedDict):
    type: Literal["decline_force"]
    seat: ConquianSeat
    card: ConquianCard


@with_config(CLOSED)
class ConquianDiscardEvent(TypedDict):
    type: Literal["discard"]
    seat: ConquianSeat
    card: ConquianCard
    hand_count: Count


@with_config(CLOSED)
class ConquianDealEndEvent(ConquianDealResult):
    """A deal ended; its seed and salt are revealed. A ``deal`` or ``match_end`` follows."""

    type: Literal["deal_end"]
    seat: Annotated[ConquianSeat | None, Field(description="the winner; null: a drawn deal")]
    totals: Annotated[list[Count], Field(description="each seat's points after this deal")]


@with_config(CLOSED)
class ConquianDrawLimitEvent(TypedDict):
    """The max_drawn_deals-th drawn deal: the match ends (``match_end`` follows)."""

    type: Literal["draw_limit"]
    seat: NoSeat
    draws: Count


@with_config(CLOSED)
class ConquianMatchEndEvent(TypedDict):
    type: Literal["match_end"]
    seat: NoSeat
    winner: Annotated[ConquianSeat | None, Field(description="null: a tied match")]
    totals: list[Count]
    seed: Annotated[str, Field(description="the match seed, revealed")]


ConquianEvent = Annotated[
    ConquianDealEvent
    | ConquianDealtEvent
    | ConquianTurnUpEvent
    | ConquianTakeEvent
    | ConquianRefuseEvent
    | ConquianPassEvent
    | ConquianForceQuestionEvent
    | ConquianStockExhaustedEvent
    | ConquianForceEvent
    | ConquianDeclineForceEvent
    | ConquianDiscardEvent
    | ConquianDealEndEvent
    | ConquianDrawLimitEvent
    | ConquianMatchEndEvent,
    Field(discriminator="type"),
]


# --- server messages, typed per game -------------------------------------------------------


def _closed(
    model: type[BaseModel], name: str, retyped: dict[str, Any] | None = None
) -> type[BaseModel]:
    """``model`` (a protocol model) closed, with some fields given a narrower type; every
    other field, its description and default, is the protocol model's own."""
    fields: dict[str, Any] = {}
    for field_name, annotation in (retyped or {}).items():
        fields[field_name] = (annotation, model.model_fields[field_name])
    closed = type(name, (model,), {"model_config": CLOSED, "__doc__": model.__doc__})
    return create_model(name, __base__=closed, **fields)


RoundBreakModel = _closed(protocol.RoundBreak, "RoundBreak")
SeatRatingModel = _closed(protocol.SeatRating, "SeatRating")
TableSeatModel = _closed(protocol.TableSeat, "TableSeat", {"rating": SeatRatingModel | None})
ErrorInfoModel = _closed(protocol.ErrorInfo, "ErrorInfo")
BreakInfoModel = _closed(protocol.BreakInfo, "BreakInfo", {"round_break": RoundBreakModel | None})
ReactionModel = _closed(protocol.Reaction, "Reaction")
ChatInfoModel = _closed(protocol.ChatInfo, "ChatInfo")
ChatHistoryModel = _closed(
    protocol.ChatHistory,
    "ChatHistory",
    {"messages": list[ChatInfoModel]},  # type: ignore[valid-type]
)
RatingChangeModel = _closed(protocol.RatingChange, "RatingChange")
RatingsInfoModel = _closed(
    protocol.RatingsInfo,
    "RatingsInfo",
    {"changes": list[RatingChangeModel]},  # type: ignore[valid-type]
)


def _view_changes(view: Any, name: str) -> tuple[Any, Any]:
    """An update's ``changes`` of ``view`` (any of its fields, each typed as in the view)
    and its ``gone`` (a list of the view's field names)."""
    hints = typing.get_type_hints(view, include_extras=True)
    fields = {key: _optional(hint) for key, hint in hints.items()}
    changes = with_config(CLOSED)(TypedDict(name, fields, total=False))  # type: ignore[operator]
    changes.__doc__ = f"Fields of a {view.__name__} that a step changed, with their new values."
    gone = list[Literal[tuple(hints)]]  # type: ignore[misc,valid-type]
    return changes, gone


def _optional(hint: Any) -> Any:
    """A field's type without its ``NotRequired`` (every field of the changes is)."""
    return typing.get_args(hint)[0] if typing.get_origin(hint) is NotRequired else hint


def _game_messages(game: str, view: Any, event: Any, action: Any, options: Any) -> Any:
    """Every server message of ``game``'s tables, told apart by ``type``."""
    title = game.capitalize()
    changes, gone = _view_changes(view, f"{title}ViewChanges")
    table = _closed(
        protocol.TableInfo,
        f"{title}TableInfo",
        {"seats": list[TableSeatModel], "options": options},  # type: ignore[valid-type]
    )
    hint = _closed(protocol.HintInfo, f"{title}HintInfo", {"action": action})
    snapshot = _closed(
        protocol.Snapshot,
        f"{title}Snapshot",
        {"table": table, "view": view | None, "round_break": RoundBreakModel | None},
    )
    update = _closed(
        protocol.Update,
        f"{title}Update",
        {
            "events": list[event],
            "changes": changes | None,
            "gone": gone,
            "view": view | None,
            "round_break": RoundBreakModel | None,
        },
    )
    reply = _closed(
        protocol.Reply,
        f"{title}Reply",
        {"error": ErrorInfoModel | None, "snapshot": snapshot | None},
    )
    missed: Any = list[update]  # type: ignore[valid-type]
    resume = _closed(protocol.Resume, f"{title}Resume", {"missed": missed, "snapshot": snapshot})
    payloads: dict[str, Any] = {
        "snapshot": snapshot,
        "update": update,
        "reply": reply,
        "resume": resume,
        "table": table,
        "break": BreakInfoModel,
        "hint": hint,
        "reaction": ReactionModel,
        "chat": ChatInfoModel,
        "chat_history": ChatHistoryModel,
        "ratings": RatingsInfoModel,
        "error": ErrorInfoModel,
        "bye": ErrorInfoModel,
    }
    missing = set(protocol.MESSAGE_PAYLOADS) - set(payloads) - {"pong"}
    if missing:  # a message type added to the protocol must be typed here too
        raise RuntimeError(f"untyped server messages: {sorted(missing)}")
    payloads["pong"] = create_model("Empty", __config__=CLOSED, __doc__="an empty object")
    seq = (int, Field(ge=0, description="the table's seq (see docs/protocol.md, Envelope)"))
    variants: list[Any] = []
    for kind, payload in payloads.items():
        fields: dict[str, Any] = {
            "type": (Literal[kind], ...),
            "seq": seq,
            "payload": (payload, ...),
        }
        variants.append(
            create_model(
                f"{title}{kind.title().replace('_', '')}Message", __config__=CLOSED, **fields
            )
        )
    union: Any = typing.Union[tuple(variants)]  # noqa: UP007 (a union built at run time)
    return Annotated[union, Field(discriminator="type")]


KonkanServerMessage = _game_messages(
    "konkan", KonkanView, KonkanEvent, KonkanAction, KonkanOptionsModel
)
ConquianServerMessage = _game_messages(
    "conquian", ConquianView, ConquianEvent, ConquianAction, ConquianOptionsModel
)


# --- the schemas ------------------------------------------------------------------------------

SCHEMAS: dict[str, Any] = {
    "KonkanView": KonkanView,
    "KonkanEvent": KonkanEvent,
    "KonkanAction": KonkanAction,
    "KonkanServerMessage": KonkanServerMessage,
    "ConquianView": ConquianView,
    "ConquianEvent": ConquianEvent,
    "ConquianAction": ConquianAction,
    "ConquianServerMessage": ConquianServerMessage,
}

_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def adapter(name: str) -> TypeAdapter[Any]:
    """The validator of schema ``name`` (validate the JSON text: strict, as on the wire)."""
    found = _ADAPTERS.get(name)
    if found is None:
        found = _ADAPTERS[name] = TypeAdapter(SCHEMAS[name])
    return found


def schema(name: str) -> dict[str, Any]:
    """The JSON schema of ``name``, titled by its name."""
    generated = adapter(name).json_schema()
    generated.setdefault("title", name)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **generated}


def schema_text(name: str) -> str:
    """The file ``docs/schemas/<name>.json`` as it should read."""
    return json.dumps(schema(name), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(out: Path) -> list[Path]:
    """Write every schema of :data:`SCHEMAS` to ``out/<name>.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMAS:
        path = out / f"{name}.json"
        path.write_text(schema_text(name), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sahrat.wire_schemas",
        description="write the JSON schemas of the games' views, events and actions",
    )
    parser.add_argument("--out", default="docs/schemas", help="folder (default: docs/schemas)")
    args = parser.parse_args(argv)
    for path in write(Path(args.out)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
