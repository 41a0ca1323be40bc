"""Errors raised by the rules engine.

Every refusal is a :class:`RuleError`, a ``ValueError`` with a stable
machine-readable ``code`` (clients translate it; it never changes once
published) and a message in plain English naming what was wrong. An action
that raises leaves the game exactly as it was.
"""

from __future__ import annotations

from typing import ClassVar


class RuleError(ValueError):
    """Base of every refusal by the engine."""

    code: ClassVar[str] = "rule_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


# --- input that is not well formed -------------------------------------------


class BadCard(RuleError):
    code = "bad_card"


class BadAction(RuleError):
    """An action that is malformed or unknown for this game."""

    code = "bad_action"


class BadOption(RuleError):
    """A table option that is unknown or out of range; the message names it."""

    code = "bad_option"

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"option {option!r}: {message}")
        self.option = option
        self.reason = message


class BadRecord(RuleError):
    code = "bad_record"


# --- whose turn, which step ---------------------------------------------------


class GameOver(RuleError):
    code = "game_over"


class NotYourTurn(RuleError):
    code = "not_your_turn"


class WrongPhase(RuleError):
    """The action is not allowed at this step of the turn (e.g. discarding before drawing)."""

    code = "wrong_phase"


# --- cards and melds ----------------------------------------------------------


class CardNotInHand(RuleError):
    code = "card_not_in_hand"


class DuplicateCard(RuleError):
    """The same card was named twice in one action."""

    code = "duplicate_card"


class InvalidMeld(RuleError):
    code = "invalid_meld"


class NoSuchMeld(RuleError):
    code = "no_such_meld"


class InvalidLayOff(RuleError):
    code = "invalid_lay_off"


class InvalidSwap(RuleError):
    code = "invalid_swap"


# --- Konkan turn rules --------------------------------------------------------


class BelowThreshold(RuleError):
    """A first lay-down that does not reach the opening threshold."""

    code = "below_threshold"


class NotOpened(RuleError):
    """Lay-offs and joker swaps need the player to have opened."""

    code = "not_opened"


class DiscardNotUsed(RuleError):
    """The discard-pile card must be used on the table in the same action."""

    code = "discard_not_used"


class JokerDiscard(RuleError):
    code = "joker_discard"


class MustKeepDiscard(RuleError):
    """A lay-down must leave a card that can be discarded: going out ends with a discard."""

    code = "must_keep_discard"


class SwappedJokerNotLaid(RuleError):
    code = "swapped_joker_not_laid"


class CommitRefused(RuleError):
    code = "commit_refused"


class CommittedOnly(RuleError):
    """A player committed to Konkan may lay down nothing but the complete Konkan."""

    code = "committed_konkan_only"


class RedealRefused(RuleError):
    code = "redeal_refused"


# --- Conquian turn rules ------------------------------------------------------


class NoFaceUpCard(RuleError):
    code = "no_face_up_card"


class TakenCardNotMelded(RuleError):
    """The taken face-up card must end in one of the player's melds."""

    code = "taken_card_not_melded"


class MeldCardsChanged(RuleError):
    """Open cards never return to the hand and no meld of the opponent may be touched."""

    code = "meld_cards_changed"


class CannotForce(RuleError):
    code = "cannot_force"
