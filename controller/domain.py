"""Domain events: what happened at the table, in poker terms."""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DomainEvent:
    """One thing that happened, numbered in the order it happened.

    ``public`` may be shown to anyone. ``secret`` holds what only the secure feed may carry (hole cards,
    burn cards, the identity of a card in the wrong place); it is kept apart so that a public payload
    cannot contain it by construction.

    ``t`` is table time (monotonic, what every rule measures intervals on); ``wall`` is the room's clock at that
    moment, stamped by the daemon (rfid_table.service.timebase). Subscribers see ``wall`` as ``t``; without a stamp
    (a bare controller in a test or a replay) they see the table time.
    """

    seq: int
    type: str
    t: float
    hand: int | None
    public: dict[str, Any] = field(default_factory=dict)
    secret: dict[str, Any] = field(default_factory=dict)
    wall: float | None = None
    # The record the controller's parts made it from (controller.events): what the parts read of each other's
    # events. Never published, not compared; None for an event made outside the controller (the journal's).
    record: object = field(default=None, compare=False, repr=False)

    def payload(self, secure: bool) -> dict[str, Any]:
        t = self.t if self.wall is None else self.wall
        body = {"seq": self.seq, "type": self.type, "t": round(t, 3), "hand": self.hand, **self.public}
        if secure:
            body.update(self.secret)
        return body
