"""Where the chip layer's events go (``ChipEvents``): into the table's outbox, numbered with the cards' events
(``controller.outbox``), and a ruling that needs the floor into the floor's queue (``controller.floor``) for as long
as its kind may wait. The shapes the chip layer publishes more than once are made here: an action, a betting
ruling, a chip count."""

from __future__ import annotations

from typing import Sequence

from controller import mucked_winner
from controller.betting import Action, BettingHand, Ruling
from controller.domain import DomainEvent
from controller.events import ActionTaken, BetRuling, ChipCount
from controller.floor import HAND_END, FloorQueue
from controller.outbox import Outbox

# The pot errors, which wait as the house's pot_disputes says (controller.rules): the award the table could not
# read, and a seat paid less than the award (TDA 20-6: "Fehler bei dem Berechnen oder Zuweisen des Pots").
POT_ERRORS = ("hand_ended_in_betting", "showdown_unread", "award")


class ChipEvents:
    def __init__(self, out: Outbox, floor: FloorQueue, pot_disputes: str):
        self.out = out  # numbered with the cards' events; the caller stamps the time and hand
        self.floor = floor  # the rulings that need the floor wait there, answered by the game
        self.pot_disputes = pot_disputes  # how long a pot error waits (the house's rule profile)

    def publish(self, record: object) -> int:
        """One event made of its record (controller.events); its ``seq``."""
        return self._noted(self.out.publish(record))

    def _noted(self, event: DomainEvent) -> int:
        code = event.public.get("code")  # a ruling that needs the floor waits for it, as long as its kind may
        if code == mucked_winner.MUCKED_WINNER:
            self.floor.note(event, mucked_winner.LAPSES, mucked_winner.HAND_RESTORED)
        else:
            self.floor.note(event, self.pot_disputes if code in POT_ERRORS else HAND_END)
        return event.seq

    def ruling(self, code: str, seat: int | None, message: str, rules: Sequence[str], needs_floor: bool) -> None:
        """A ``bet_ruling``: what the chip layer ruled."""
        self.publish(BetRuling(code, seat, message, tuple(rules), needs_floor))

    def engine_ruling(self, ruling: Ruling, chips: Sequence[int] | None = None,
                      withdrawn: Sequence[int] | None = None) -> None:
        """The betting engine's ruling as a ``bet_ruling``, with the motion of chips it ruled on."""
        self.publish(BetRuling(ruling.code, ruling.seat, ruling.message, tuple(ruling.rules), ruling.needs_floor,
                               tuple(chips) if chips is not None else None,
                               tuple(withdrawn or ()) if chips is not None else None))

    def chip_count(self, code: str, seat: int | None, expected: int, seen: int, rules: Sequence[str]) -> None:
        """Chips in a zone differ from what the rules say: the dealer puts it right, but a seat paid less than the
        award can dispute it (TDA 20-6), so that one waits for the floor."""
        self.publish(ChipCount(code, seat, expected, seen, tuple(rules)))

    def action(self, action: Action, hand: BettingHand) -> int:
        """An action the engine took, with the pot and the seat to act after it; its ``seq``."""
        return self.publish(ActionTaken(action, hand.pot_total(), hand.to_act()))
