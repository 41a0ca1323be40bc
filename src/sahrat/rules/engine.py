"""What a game's engine is: the one interface the server, the bots, the simulator, the
arena and the game record drive a game through.

An engine is pure and deterministic: no I/O, no clock, no global random state. A
match's state comes only from :meth:`GameEngine.new_game` (its options, a seed, and
optionally stacked decks) and then from :meth:`GameEngine.apply`, which never changes the
state it is given but returns a new one. The same options, seed and actions give the
same states, views and events on every machine, which is what lets the server recover
a table from its event log and anyone replay a game record.

Each game is a module (:mod:`sahrat.rules.konkan`, :mod:`sahrat.rules.conquian`) that
satisfies :class:`GameEngine` structurally, with its own state, action and options
types; :mod:`sahrat.rules.record` is where mypy checks both modules against it, and
:func:`~sahrat.rules.record.engine_for` hands out a game's one as an :data:`Engine`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

from .cards import Card
from .errors import RuleError
from .events import Event


class MatchState(Protocol):
    """What code outside a game reads of any game's state (everything else is the
    game's own)."""

    @property
    def over(self) -> bool:
        """The match is finished: nobody is to act."""
        ...

    @property
    def players(self) -> int:
        """The number of seats, numbered from 0."""
        ...

    @property
    def seed(self) -> str:
        """The match seed every deal's shuffle derives from."""
        ...

    @property
    def dealer(self) -> int:
        """The seat dealing the current deal."""
        ...

    @property
    def hands(self) -> Sequence[Sequence[Card]]:
        """Every seat's hand, by seat (private: only views decide who sees what)."""
        ...


StateT = TypeVar("StateT", bound=MatchState)
ActionT = TypeVar("ActionT")
OptionsT_contra = TypeVar("OptionsT_contra", contravariant=True)


class GameEngine(Protocol[StateT, ActionT, OptionsT_contra]):
    """A game's rules, over its own state ``StateT``, actions ``ActionT`` and table
    options ``OptionsT_contra``: each game is checked against this with its own types.
    Code that serves any game holds an :data:`Engine`."""

    def new_game(
        self,
        options: OptionsT_contra | None = None,
        seed: str = "0",
        decks: Sequence[Sequence[Card]] = (),
        first_dealer: int | None = None,
    ) -> StateT:
        """A new match, dealt: from the seed, or from the stacked ``decks`` in order."""
        ...

    def apply(self, state: StateT, action: ActionT) -> tuple[StateT, list[Event]]:
        """The state after ``action`` and the events it caused; raises a
        :class:`~sahrat.rules.errors.RuleError` (leaving ``state`` as it was) if illegal."""
        ...

    def to_act(self, state: StateT) -> int | None:
        """The seat whose move it is, ``None`` once the match is over."""
        ...

    def simple_actions(self, state: StateT) -> list[ActionT]:
        """Legal moves of the seat to act that need no choice of cards to meld (draws,
        discards, passes...): enough to play a match out, not every legal move."""
        ...

    def check_action(self, state: StateT, action: ActionT) -> RuleError | None:
        """Why ``action`` is illegal now, or ``None`` if :meth:`apply` would accept it."""
        ...

    def timeout_action(self, state: StateT) -> ActionT:
        """The move the turn timer plays for a seat that did not move in time (always legal)."""
        ...

    def view(self, state: StateT, seat: int | None, *, history: bool = True) -> dict[str, Any]:
        """What ``seat`` may see (``None``: a spectator), as JSON; ``history`` adds the
        match's past rounds or deals."""
        ...

    def views(
        self, state: StateT, seats: Iterable[int | None], *, history: bool = True
    ) -> dict[int | None, dict[str, Any]]:
        """:meth:`view` for several seats at once, sharing the public part."""
        ...

    def check_invariants(self, state: StateT) -> list[str]:
        """What is wrong with ``state`` (a card lost or doubled...): empty when sound."""
        ...

    def action_from_json(self, data: Mapping[str, Any]) -> ActionT:
        """An action from its JSON form (the wire's and the game record's); raises a
        :class:`~sahrat.rules.errors.RuleError` if malformed."""
        ...

    def action_to_json(self, action: ActionT) -> dict[str, Any]:
        """The JSON form of an action, which :meth:`action_from_json` reads back."""
        ...

    def score_sheet(self, state: StateT) -> dict[str, Any]:
        """The match's scores round by round (or deal by deal) and in total, as JSON."""
        ...

    def describe(self, state: StateT) -> str:
        """A short dump of the state for a person: debugging and bug reports."""
        ...


Engine: TypeAlias = GameEngine[Any, Any, Any]
"""Any game's engine, as the server, the bots' callers, the simulator and the game
record hold one (:func:`sahrat.rules.record.engine_for`): its states and actions are
the game's own, opaque to them but for :class:`MatchState`."""

__all__ = ["ActionT", "Engine", "GameEngine", "MatchState", "OptionsT_contra", "StateT"]
