"""Events: what an accepted action changed, split into what everyone may see
and what only the acting seat may see."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened. ``public`` goes to every seat and spectator;
    ``private`` adds details only ``seat`` may know (the card it drew)."""

    type: str
    seat: int | None = None
    public: dict[str, Any] = field(default_factory=dict)
    private: dict[str, Any] | None = None

    def for_seat(self, viewer: int | None) -> dict[str, Any]:
        """The event as ``viewer`` (a seat, or ``None`` for a spectator) may see it."""
        out: dict[str, Any] = {"type": self.type, "seat": self.seat, **self.public}
        if self.private is not None and viewer is not None and viewer == self.seat:
            out.update(self.private)
        return out
