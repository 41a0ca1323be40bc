"""An ``update`` carries what changed in a seat's view, not the whole view.

A view is the engine's picture of the table for one seat: a flat object whose
top-level fields (``turn``, ``hand``, ``melds``, ``discard_top``...) are replaced
whole when they change. An update says which fields changed (``changes``, their new
values) and which are no longer there (``gone``: ``drawn`` and ``simple_actions``
once the turn has passed); a client applies it to the view it holds with
:func:`apply_changes`, the same two lines in every client (docs/protocol.md,
"Updates"). No client computes anything a rule decides: every value is the engine's.

The server compares each seat's new view with the one that seat was last shown
(:func:`diff_views`): the public part once (the spectators' view), then each seat's
own fields (its hand, its possible moves).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

View = dict[str, Any]
Changes = tuple[dict[str, Any], list[str]]  # the changed fields' new values, the gone ones


def changes_of(old: Mapping[str, Any], new: Mapping[str, Any]) -> Changes:
    """What turns ``old`` into ``new``: the fields new or changed, and the fields gone."""
    changed = {key: value for key, value in new.items() if key not in old or old[key] != value}
    gone = [key for key in old if key not in new]
    return changed, gone


def diff_views(
    new: Mapping[int | None, View], old: Mapping[int | None, View]
) -> dict[int | None, Changes | None]:
    """Each seat's changes from ``old[seat]`` to ``new[seat]`` (None: that seat has no
    old view, and must be sent the whole one). Every old view must be of one state,
    and every new view of one state.

    The spectator's views (seat None, in both) are the public part: they are compared
    once, and a seat's own fields are those whose value is not the spectator's own
    object (views built together share it) — only those are compared per seat. Two
    views of one state agree on every public field, so the public changes hold for
    every seat. Without both spectator views each seat is compared whole."""
    public_new, public_old = new.get(None), old.get(None)
    if public_new is None or public_old is None:
        return {
            seat: None if old.get(seat) is None else changes_of(old[seat], view)
            for seat, view in new.items()
        }
    public = changes_of(public_old, public_new)
    out: dict[int | None, Changes | None] = {None: public}
    for seat, view in new.items():
        if seat is None:
            continue
        before = old.get(seat)
        if before is None:
            out[seat] = None
            continue
        own = [k for k, v in view.items() if k not in public_new or v is not public_new[k]]
        mine = {k: view[k] for k in own if k not in before or before[k] != view[k]}
        gone = [k for k in before if k not in view]
        if not mine and gone == public[1]:
            out[seat] = public  # the same object: the same text as the spectators'
        else:
            out[seat] = {**public[0], **mine}, gone
    return out


def apply_changes(view: Mapping[str, Any], changes: Mapping[str, Any], gone: list[str]) -> View:
    """The view after an update: ``view`` with ``changes`` laid over it and ``gone``
    removed (a new object; ``view`` is left as it was)."""
    out = {**view, **changes}
    for key in gone:
        out.pop(key, None)
    return out


def apply_update(view: Mapping[str, Any] | None, update: Mapping[str, Any]) -> View | None:
    """The view after an ``update`` payload (docs/protocol.md, "Updates"): its whole
    ``view`` when it carries one, else its ``changes`` and ``gone`` applied to ``view``.
    An update with neither (an item of a resume's ``missed``) leaves the view as it is:
    the resume's snapshot follows."""
    whole = update.get("view")
    if whole is not None:
        return dict(whole)
    changes = update.get("changes")
    if changes is None or view is None:
        return None if view is None else dict(view)
    return apply_changes(view, changes, update.get("gone") or [])
