"""The wire form of every record the controller publishes (``controller.events``): the type, the public payload and
the secret one of its ``DomainEvent`` (controller.domain), as the schemas (schemas/) describe them. The one place
that knows the shape of an event on the wire: the parts make records, the outbox numbers them and asks here.

Key order is part of the form: the journal and the seeded event streams compare payloads byte for byte.
"""

from __future__ import annotations

from typing import Any, Callable

from controller.events import HandEnded, HandStarted, Misdeal

Payload = dict[str, Any]
Wire = tuple[str, Payload, Payload]  # type, public, secret


def _hand_started(e: HandStarted) -> Wire:
    return "hand_started", {}, {}


def _hand_ended(e: HandEnded) -> Wire:
    public: Payload = {"board": list(e.board)}
    if len(e.boards) > 1:
        public["boards"] = [list(board) for board in e.boards]
    public["live_seats"] = list(e.live_seats)
    public["folded_seats"] = list(e.folded_seats)
    return "hand_ended", public, {"hole_cards": {str(seat): list(cards) for seat, cards in e.hole_cards}}


def _misdeal(e: Misdeal) -> Wire:
    public: Payload = {"reason": e.reason, "rules": list(e.rules), "irregularity": e.irregularity,
                       "button": e.button}
    if e.by is not None:
        public["by"] = e.by
    if e.note:
        public["note"] = e.note
    return "misdeal", public, {}


_FORMS: dict[type, Callable[[Any], Wire]] = {
    HandStarted: _hand_started, HandEnded: _hand_ended, Misdeal: _misdeal,
}


def wire(record: object) -> Wire:
    """The type and payloads ``record`` is published with."""
    return _FORMS[type(record)](record)
