"""The outbox: where every part of the controller puts the events it makes, numbered in the order they happen.

One outbox per table. Each entry point of the controller begins an input with its time (``begin``: table time never
goes back, so ``now`` is the latest input's time); the card controller sets the hand the events belong to
(``hand``) as hands start; every ``publish`` of a part's record (``controller.events``) then makes the next
``DomainEvent`` (``seq`` one higher than the last), in its wire form (``controller.wire``), and the input's caller
takes the events out (``take``). Because every part emits into the same outbox, the stream has one ``seq``
and the order of the events is the order in which the parts acted. What waits for the floor is not the outbox's
business: the part that answers a ruling puts it in the floor queue (``controller.floor``) itself.

A command is checked before it is applied (``controller.commands``), and a refused one must leave no trace: no
number used, no event, no ruling queued for the floor. The outbox makes the mistake impossible rather than merely
absent: while an input is being checked (``checking``) an emission raises, and a refusal given while events wait to
be taken (``refused``) raises too — a refusal never comes after an emission.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.domain import DomainEvent
from controller.wire import wire

if TYPE_CHECKING:
    from controller.commands import Refusal

CURRENT = object()  # ``publish(hand=CURRENT)``: the outbox's hand


class EmittedWhileChecking(RuntimeError):
    """A part emitted an event while an input was being checked, or refused an input after emitting: a bug in the
    controller (a check must have no side effect), never a state of the table."""


class Outbox:
    def __init__(self) -> None:
        self.seq = 0  # the number of the latest event
        self.now = 0.0  # the table time of the input being handled (monotonic, docs/events.md)
        self.hand: int | None = None  # the hand the events belong to (None between the table's first hands)
        self._events: list[DomainEvent] = []
        self._started = False  # no input yet: the first one sets the time, whatever the clock's origin
        self._checking = False  # an input is being checked: nothing may be emitted

    def begin(self, t: float) -> None:
        """An input at table time ``t`` is being handled: its events are stamped with it (table time never goes back,
        as an input stamped before the latest one is still handled after it)."""
        # Table time is the monotonic clock plus an offset (docs/service.md, two clocks) and may well be
        # negative, so the first input is not compared with the 0 the outbox starts from.
        if t > self.now or not self._started:
            self.now = t
        self._started = True

    def restore(self, seq: int, hand: int | None, now: float) -> None:
        """Continue the numbering, hand and time of a checkpoint."""
        self.seq, self.hand, self.now = seq, hand, now
        self._started = True

    def publish(self, record: object, *, t: float | None = None, hand: Any = CURRENT) -> DomainEvent:
        """Number and keep the event a part's record (controller.events) is, in its wire form (controller.wire);
        ``t`` and ``hand`` default to the input's."""
        if self._checking:
            raise EmittedWhileChecking(f"{type(record).__name__} emitted while an input was being checked")
        type_, public, secret = wire(record)
        self.seq += 1
        event = DomainEvent(self.seq, type_, self.now if t is None else t, self.hand if hand is CURRENT else hand,
                            public, secret, record=record)
        self._events.append(event)
        return event

    def numbered(self, type_: str, t: float, public: dict[str, Any], secret: dict[str, Any] | None = None
                 ) -> DomainEvent:
        """An event the service raises (the journal's state, an equity result), numbered in the table's sequence
        and given back at once rather than kept for ``take``."""
        if self._checking:
            raise EmittedWhileChecking(f"{type_} emitted while an input was being checked")
        self.seq += 1
        return DomainEvent(self.seq, type_, t, self.hand, public, secret or {})

    def stamped(self, t: float | None = None, hand: Any = CURRENT) -> "_Stamped":
        """Emit with another time or hand for a while (``with out.stamped(t, hand):``): what one input makes of an
        event of the hand it ended belongs to that hand, and a ruling belongs to the moment it was made."""
        return _Stamped(self, t, hand)

    def take(self) -> list[DomainEvent]:
        """The events emitted since the last ``take``, oldest first."""
        events, self._events = self._events, []
        return events

    def checking(self) -> "_Checking":
        """Check an input (``with out.checking():``): an emission raises until the check is over."""
        return _Checking(self)

    def refused(self, refusal: "Refusal") -> "Refusal":
        """The input being handled is refused: nothing of it may have been emitted (its events would be lost, their
        numbers with them, and a ruling they queued for the floor would wait unannounced)."""
        if self._events:
            raise EmittedWhileChecking(f"refused after emitting {[e.type for e in self._events]}: {refusal}")
        return refusal


class _Checking:
    """The context of :meth:`Outbox.checking`."""

    __slots__ = ("out",)

    def __init__(self, out: Outbox):
        self.out = out

    def __enter__(self) -> None:
        self.out._checking = True

    def __exit__(self, *exc: object) -> None:
        self.out._checking = False


class _Stamped:
    """The context of :meth:`Outbox.stamped` (a class rather than a generator: it runs for every card event)."""

    __slots__ = ("out", "t", "hand", "saved")

    def __init__(self, out: Outbox, t: float | None, hand: Any):
        self.out, self.t, self.hand = out, t, hand

    def __enter__(self) -> None:
        out = self.out
        self.saved = (out.now, out.hand)
        if self.t is not None:
            out.now = self.t
        if self.hand is not CURRENT:
            out.hand = self.hand

    def __exit__(self, *exc: object) -> None:
        self.out.now, self.out.hand = self.saved
