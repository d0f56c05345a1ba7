"""What waits for the floor, in one queue: the card controller's irregularities (``confirm``, ``override``,
``floor_pick``) and the rulings of the seat sensors, the action clock and the betting that need the floor
(``confirm``, ``override``). Each is kept under the ``seq`` of the event that reported it, with the part that answers
it (``CARDS`` or ``TABLE``), until the floor answers or it lapses (``lapses``).

The part that answers a ruling queues it: the card controller's irregularities (``controller.irregularities``) with
what their rulings need (``data``: the candidates of a pick, the dead seats of a misdeal that comes too late); the
game and the chip layer their events whose records ask the floor (``note``: the record's ``floor_question``), with
how long each may wait. ``hand`` is
None for a ruling made outside any hand.

How long a ruling waits (docs/events.md, "How long a ruling waits"): a ruling on the hand lapses when the hand ends
(``HAND_END``); a hand's reading until the next hand begins (``NEXT_HAND``: TDA 20-6, AC 17, CA Actions 9); a pot
error until substantial action in a later hand (``NEXT_HAND_ACTION``: TDA 20-6) or the next hand, by the house; a
penalty on the player until the floor answers (``NEVER``: AC 50, CA GR 5). A ruling that lapses unanswered is
published as ``irregularity_resolved`` with the reason (``lapse``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from controller.commands import Refusal
from controller.domain import DomainEvent
from controller.events import IrregularityResolved, MayAskTheFloor
from controller.outbox import CURRENT, Outbox

CARDS = "cards"  # answered by the card controller (controller.table)
TABLE = "table"  # answered by the game: the seat sensors, the clock and the betting (controller.game)

# When a ruling that waits lapses unanswered (the snapshot's ``lapses``)
HAND_END = "hand_end"  # its hand ends, or is void (a misdeal)
NEXT_HAND = "next_hand"  # the next hand begins
NEXT_HAND_ACTION = "next_hand_action"  # substantial action takes place in a later hand
NEVER = "never"  # it waits until the floor answers
LAPSES = (HAND_END, NEXT_HAND, NEXT_HAND_ACTION, NEVER)

FLOOR_DECIDES = "floor_decides"  # the ruling of a waiting event that proposes none (a bet ruling, a chip count)


def not_waiting(ident: int) -> Refusal:
    """The refusal of an answer (``confirm``, ``override``, ``floor_pick``) to what does not wait for the floor."""
    return Refusal(f"no irregularity {ident} waits for the floor")


@dataclass
class Irregularity:
    """A ruling waiting for the floor."""

    id: int  # the seq of the event that reported it
    hand: int | None
    code: str
    ruling: str
    severity: str
    seats: list[int]
    rules: list[str]
    data: dict[str, Any] = field(default_factory=dict)
    answered_by: str = CARDS
    type: str = "irregular_card"  # the type of the event that reported it
    lapses: str = HAND_END

    def answers(self) -> list[str]:
        """The commands that answer it: a pick of the burn card is ``floor_pick``, not ``confirm``."""
        return ["floor_pick", "override"] if "candidates" in self.data else ["confirm", "override"]

    def public(self) -> dict[str, Any]:
        return {"irregularity": self.id, "hand": self.hand, "type": self.type, "code": self.code,
                "severity": self.severity, "ruling": self.ruling, "seats": list(self.seats), "rules": list(self.rules),
                "answers": self.answers(), "lapses": self.lapses}

    def secure(self) -> dict[str, Any]:
        """``public`` and the cards a pick of the burn card is made from (not public: the fourth card of a
        four-card flop may be the burn card)."""
        body = self.public()
        if "candidates" in self.data:
            body["candidates"] = list(self.data["candidates"])
        return body

    def state(self) -> dict[str, Any]:
        """As JSON, for a checkpoint (only the game's rulings outlive a hand: their ``data`` is JSON)."""
        return asdict(self)

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Irregularity:
        return cls(**{**state, "seats": list(state["seats"]), "rules": list(state["rules"]),
                      "data": dict(state["data"])})


class FloorQueue:
    def __init__(self) -> None:
        self._waiting: dict[int, Irregularity] = {}  # by id, in the order they came

    def add(self, irregularity: Irregularity) -> None:
        self._waiting[irregularity.id] = irregularity

    def note(self, event: DomainEvent, lapses: str = HAND_END, ruling: str | None = None) -> None:
        """An event of the seat sensors, the clock or the betting was published: if its record asks the floor
        (``MayAskTheFloor.floor_question``), the ruling waits, answered by the game, until it ``lapses``.
        ``ruling``: what a confirm does, for a question that names none (default: the floor decides)."""
        record = event.record
        question = record.floor_question if isinstance(record, MayAskTheFloor) else None
        if question is None:
            return
        seat = question.seat
        self.add(Irregularity(event.seq, event.hand, question.code or event.type,
                              question.ruling or ruling or FLOOR_DECIDES, "stop", [seat] if seat is not None else [],
                              list(question.rules), {"seat": seat, "rule": question.rule}, answered_by=TABLE,
                              type=event.type, lapses=lapses))

    def get(self, ident: int, answered_by: str | None = None) -> Irregularity | None:
        irregularity = self._waiting.get(ident)
        if irregularity is None or (answered_by is not None and irregularity.answered_by != answered_by):
            return None
        return irregularity

    def answered(self, ident: int) -> Irregularity:
        """The ruling an answer the check allowed names (it waits: the check said so)."""
        return self._waiting[ident]

    def pop(self, ident: int) -> Irregularity | None:
        return self._waiting.pop(ident, None)

    def drop(self, idents: list[int]) -> None:
        for ident in idents:
            self._waiting.pop(ident, None)

    def lapse(self, ident: int, resolution: str, out: Outbox, t: float | None = None) -> None:
        """``ident`` waits no more, unanswered: ``irregularity_resolved`` says why (``resolution``), in its hand."""
        irregularity = self._waiting.pop(ident)
        out.publish(IrregularityResolved(ident, irregularity.code, resolution),
                    t=t, hand=irregularity.hand if irregularity.hand is not None else CURRENT)

    def lapsing(self, lapses: str, answered_by: str = TABLE) -> list[Irregularity]:
        """What the part ``answered_by`` answers that lapses so, oldest first (asked often: cheap when empty)."""
        if not self._waiting:
            return []
        return [w for w in self._waiting.values() if w.lapses == lapses and w.answered_by == answered_by]

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

    def waiting(self) -> list[Irregularity]:
        """Every ruling waiting for the floor, oldest first."""
        return [self._waiting[i] for i in sorted(self._waiting)]

    def state(self) -> list[dict[str, Any]]:
        """What waits, as JSON (a checkpoint between hands: what outlives its hand)."""
        return [w.state() for w in self.waiting()]

    def restore(self, state: list[dict[str, Any]]) -> None:
        self._waiting = {item["id"]: Irregularity.from_state(item) for item in state}
