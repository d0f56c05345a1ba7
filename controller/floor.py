"""What waits for the floor, in one queue: the card controller's irregularities (``confirm``, ``override``,
``floor_pick``) and the rulings of the seat sensors, the action clock and the betting that need the floor
(``confirm``, ``override``). Each is kept under the ``seq`` of the event that reported it, with the part that answers
it (``CARDS`` or ``TABLE``), until the floor answers or its hand ends.

The part that answers a ruling queues it: the card controller's irregularities (``controller.irregularities``) with
what their rulings need (``data``: the candidates of a pick, the dead seats of a misdeal that comes too late); the
game and the chip layer their events that say ``needs_floor`` (``note``). ``hand`` is None for a ruling made outside
any hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.domain import DomainEvent

CARDS = "cards"  # answered by the card controller (controller.table)
TABLE = "table"  # answered by the game: the seat sensors, the clock and the betting (controller.game)


@dataclass
class Irregularity:
    """A ruling waiting for the floor."""

    id: int  # the seq of the event that reported it
    hand: int | None
    code: str
    ruling: str | None
    severity: str
    seats: list[int]
    rules: list[str]
    data: dict[str, Any] = field(default_factory=dict)
    answered_by: str = CARDS

    def public(self) -> dict[str, Any]:
        return {"irregularity": self.id, "hand": self.hand, "code": self.code, "severity": self.severity,
                "ruling": self.ruling, "seats": list(self.seats), "rules": list(self.rules)}


class FloorQueue:
    def __init__(self) -> None:
        self._waiting: dict[int, Irregularity] = {}  # by id, in the order they came

    def add(self, irregularity: Irregularity) -> None:
        self._waiting[irregularity.id] = irregularity

    def note(self, event: DomainEvent) -> None:
        """A ruling of the seat sensors, the clock or the betting was emitted: if it needs the floor, it waits,
        answered by the game (a later state of it, such as a breach that ended, does not)."""
        public = event.public
        if public.get("needs_floor") and public.get("state", "started") == "started":
            seat = public.get("seat")
            self.add(Irregularity(event.seq, event.hand, public.get("code", event.type), public.get("ruling"),
                                  public.get("severity", ""), [seat] if seat is not None else [],
                                  list(public.get("rules", [])), {"seat": seat, "rule": public.get("rule")},
                                  answered_by=TABLE))

    def get(self, ident: int, answered_by: str | None = None) -> Irregularity | None:
        irregularity = self._waiting.get(ident)
        if irregularity is None or (answered_by is not None and irregularity.answered_by != answered_by):
            return None
        return irregularity

    def pop(self, ident: int) -> Irregularity | None:
        return self._waiting.pop(ident, None)

    def drop(self, idents: list[int]) -> None:
        for ident in idents:
            self._waiting.pop(ident, None)

    def of(self, answered_by: str) -> dict[int, Irregularity]:
        """What the part ``answered_by`` answers, by id, oldest first."""
        return {i: w for i, w in self._waiting.items() if w.answered_by == answered_by}

    def of_hand(self, hand: int | None, answered_by: str) -> list[int]:
        return [i for i, w in self._waiting.items() if w.hand == hand and w.answered_by == answered_by]

    def waits_in(self, hand: int | None, answered_by: str) -> bool:
        """Whether anything of ``hand`` that the part ``answered_by`` answers waits (asked after every input)."""
        return bool(self._waiting) and any(w.hand == hand and w.answered_by == answered_by
                                           for w in self._waiting.values())

    def ids(self) -> list[int]:
        """Every ruling waiting for the floor, oldest first."""
        return sorted(self._waiting)

    def renumber(self, old: int, new: int) -> None:
        irregularity = self._waiting.pop(old, None)
        if irregularity is not None:
            irregularity.id = new
            self._waiting[new] = irregularity
