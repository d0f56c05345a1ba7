"""The card controller's irregularities: each published as an ``irregular_card`` event with its code, severity,
ruling and the rules cited (``controller.dealing.CODES``), and those that need the floor kept until a ``confirm``,
``override`` or ``floor_pick`` answers them, or their hand ends (``resolved``): in the table's one floor queue
(``controller.floor``), as the card controller's (``CARDS``)."""

from __future__ import annotations

from typing import Any, Sequence

from controller.dealing import CODES, NO_RULING, severity_of
from controller.events import IrregularCard, IrregularityResolved
from controller.floor import CARDS, FloorQueue, Irregularity
from controller.outbox import Outbox
from controller.rules import RuleProfile


class Irregularities:
    """Publishes irregularities into the outbox and keeps those that wait for the floor."""

    def __init__(self, out: Outbox, floor: FloorQueue, profile: RuleProfile):
        self.out = out
        self.floor = floor
        self.profile = profile
        self.reported: dict[int, tuple[str, list[str]]] = {}  # this hand's irregularities: id → code, rules

    def new_hand(self) -> None:
        self.reported = {}

    def report(self, code: str, ruling: str, *, seats: Sequence[int], cards: Sequence[str] = (),
               zone: str | None = None, needs_floor: bool = False, rules: Sequence[str] = (),
               extra: dict | None = None, data: dict | None = None, public: dict | None = None,
               secret: dict | None = None) -> int:
        """Publish one irregularity; return its id (its seq). With ``needs_floor`` it waits for the floor."""
        info = CODES[code]
        cited = list(dict.fromkeys([*info.rules, *(r for r in rules if r)]))
        severity = severity_of(code, ruling, needs_floor)
        details = dict(public) if public is not None else {"code": code, **({"zone": zone} if zone else {})}
        details.update(extra or {})
        hidden = dict(secret) if secret is not None else ({"cards": list(cards)} if cards else {})
        ident = self.out.publish(IrregularCard(code, ruling, severity, tuple(seats), tuple(cited), needs_floor,
                                               self.profile.name, details, hidden)).seq
        self.reported[ident] = (code, cited)
        if needs_floor:
            self.floor.add(Irregularity(ident, self.out.hand, code, ruling, severity, list(seats), cited,
                                        dict(data or {})))
        return ident

    def irregular(self, code: str, zone: str, card: str, public_card: bool = False, ruling: str = NO_RULING,
                  rules: Sequence[str] = (), **where: Any) -> int:
        """One of the codes the controller always had: ``zone``, ``seat``/``from_seat`` and ``card`` as before,
        with the ruling added."""
        public: dict[str, Any] = {"code": code, "zone": zone, **where}
        if public_card:
            public["card"] = card
        seats = [s for s in (where.get("seat"), where.get("from_seat")) if s is not None]
        return self.report(code, ruling, seats=seats, public=public, secret={} if public_card else {"card": card},
                           rules=rules)

    def waiting(self, ident: int | None) -> Irregularity | None:
        """The card controller's irregularity ``ident`` if it waits for the floor."""
        return self.floor.get(ident, CARDS) if ident is not None else None

    def add_card(self, ident: int, card: str) -> None:
        """One more card belongs to the waiting irregularity ``ident`` (premature board cards turned together)."""
        irregularity = self.waiting(ident)
        if irregularity is not None:
            irregularity.data["cards"].append(card)

    def answered(self, ident: int) -> None:
        """The floor answered ``ident``: it waits no more."""
        self.floor.pop(ident)

    def resolved(self, ident: int, resolution: str, seats: list[int] | None = None) -> None:
        """``seats``: the hands a ``dead_hand`` resolution kills (the betting layer folds them)."""
        self.floor.pop(ident)
        code = self.reported.get(ident, ("wrong_card_count", []))[0]
        self.out.publish(IrregularityResolved(ident, code, resolution, tuple(seats) if seats is not None else None))

    def rules_of(self, ident: int) -> list[str]:
        return list(self.reported.get(ident, ("", []))[1])

    def of_hand(self, hand: int) -> list[int]:
        """The ids of the irregularities of ``hand`` that wait for the floor."""
        return self.floor.of_hand(hand, CARDS)
