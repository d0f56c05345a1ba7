"""The wire form of every record the controller publishes (``controller.events``): the type, the public payload and
the secret one of its ``DomainEvent`` (controller.domain), as the schemas (schemas/) describe them. The one place
that knows the shape of an event on the wire: the parts make records, the outbox numbers them and asks here.

Key order is part of the form: the journal and the seeded event streams compare payloads byte for byte.
"""

from __future__ import annotations

from typing import Any, Callable

from controller.events import BoardCard, BoardCorrected, Burn, CardDealt, Folded, HandEnded, HandStarted, Misdeal

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


def _card_dealt(e: CardDealt) -> Wire:
    return "card_dealt", {"seat": e.seat, "count": e.count}, {"card": e.card}


def _board_card(e: BoardCard) -> Wire:
    public: Payload = {"card": e.card, "street": e.street, "position": e.position}
    if e.board_number is not None:
        public["board_number"] = e.board_number
    if e.reshuffled:
        public["reshuffled"] = True
    return "board_card", public, {}


def _burn(e: Burn) -> Wire:
    return "burn", {"count": e.count}, {"card": e.card}


def _folded(e: Folded) -> Wire:
    return "fold", {"seat": e.seat}, {"cards": list(e.cards)}


def _board_corrected(e: BoardCorrected) -> Wire:
    public: Payload = {"irregularity": e.irregularity, "code": e.code, "board": list(e.board)}
    if e.by is not None:
        public["by"] = e.by
    return "board_corrected", public, {"card": e.burn}


_FORMS: dict[type, Callable[[Any], Wire]] = {
    HandStarted: _hand_started, HandEnded: _hand_ended, Misdeal: _misdeal, CardDealt: _card_dealt,
    BoardCard: _board_card, Burn: _burn, Folded: _folded, BoardCorrected: _board_corrected,
}


def wire(record: object) -> Wire:
    """The type and payloads ``record`` is published with."""
    return _FORMS[type(record)](record)
