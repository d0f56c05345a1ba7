"""A collecting ``publish`` for the rule sets under test (``controller.conduct.ConductRules``,
``controller.clock.ActionClock``): their events come out through the ``publish`` they are given, and only there."""

from dataclasses import dataclass
from typing import Any

from controller.wire import wire


@dataclass(frozen=True)
class Seen:
    """One published event as a subscriber reads it: its type and public payload (``controller.wire``), its time
    and hand as the rules gave them, and the record it was made of."""

    type: str
    t: float
    public: dict[str, Any]
    hand: int | None
    record: object


class Published:
    """Every event published to it, in order (``events``). ``of(call)``: what was published since the previous
    ``of`` — written around the call that should have published it, ``published.of(rules.folded(3, 15.0))``, it
    also checks that the call itself returned nothing."""

    def __init__(self):
        self.events = []
        self._read = 0

    def __call__(self, event):
        type_, public, _ = wire(event.record)
        self.events.append(Seen(type_, event.t, public, event.hand, event.record))

    def of(self, returned=None):
        assert returned is None, f"events come out through publish only, but the call returned {returned!r}"
        new, self._read = self.events[self._read:], len(self.events)
        return new
