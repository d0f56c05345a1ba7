"""Where the chip layer's events go (``ChipEvents``): into the table's outbox, numbered with the cards' events
(``controller.outbox``), and a ruling that needs the floor into the floor's queue (``controller.floor``) for as long
as its kind may wait. The shapes the chip layer publishes more than once are made here: an action, a betting
ruling, a chip count."""

from __future__ import annotations

from typing import Any, Sequence

from controller.betting import Action, BettingHand, Ruling
from controller.floor import HAND_END, NEXT_HAND, FloorQueue
from controller.outbox import Outbox

# What a confirm does to a winning hand the dealer mucked (AC 14; CA Actions 9), and how long it waits: a hand's
# reading can be disputed until the next hand begins (TDA 20-6; AC 17; CA Actions 9: "before the next game has
# started, after which no further corrections are possible").
MUCKED_WINNER = "winning_hand_mucked"
HAND_RESTORED = "hand_restored"
# The pot errors, which wait as the house's pot_disputes says (controller.rules): the award the table could not
# read, and a seat paid less than the award (TDA 20-6: "Fehler bei dem Berechnen oder Zuweisen des Pots").
POT_ERRORS = ("hand_ended_in_betting", "showdown_unread", "award")


class ChipEvents:
    def __init__(self, out: Outbox, floor: FloorQueue, pot_disputes: str):
        self.out = out  # numbered with the cards' events; the caller stamps the time and hand
        self.floor = floor  # the rulings that need the floor wait there, answered by the game
        self.pot_disputes = pot_disputes  # how long a pot error waits (the house's rule profile)

    def emit(self, type_: str, public: dict[str, Any], secret: dict[str, Any] | None = None) -> int:
        """One event; its ``seq``."""
        event = self.out.emit(type_, public, secret)
        code = public.get("code")  # a ruling that needs the floor waits for it, as long as its kind may
        if code == MUCKED_WINNER:
            self.floor.note(event, NEXT_HAND, HAND_RESTORED)
        else:
            self.floor.note(event, self.pot_disputes if code in POT_ERRORS else HAND_END)
        return event.seq

    def ruling(self, code: str, seat: int | None, message: str, rules: Sequence[str], needs_floor: bool,
               **more: Any) -> None:
        """A ``bet_ruling``: what the chip layer or the engine ruled, with ``more`` of its fields."""
        self.emit("bet_ruling", {"code": code, "seat": seat, "message": message, "rules": list(rules),
                                 "needs_floor": needs_floor, **more})

    def engine_ruling(self, ruling: Ruling, **more: Any) -> None:
        """The betting engine's ruling as a ``bet_ruling``."""
        self.ruling(ruling.code, ruling.seat, ruling.message, ruling.rules, ruling.needs_floor, **more)

    def chip_count(self, code: str, seat: int | None, expected: int, seen: int, rules: list[str]) -> None:
        """Chips in a zone differ from what the rules say: the dealer puts it right, but a seat paid less than the
        award can dispute it (TDA 20-6), so that one waits for the floor."""
        self.emit("chip_count", {"code": code, "seat": seat, "expected": expected, "seen": seen, "rules": rules,
                                 "needs_floor": code == "award" and seen < expected})

    def action(self, action: Action, hand: BettingHand) -> int:
        """An action the engine took, with the pot and the seat to act after it; its ``seq``."""
        body: dict[str, Any] = {"seat": action.seat, "action": action.kind, "street": action.street,
                                "to": action.to_amount, "added": action.added, "all_in": action.all_in,
                                "rules": list(action.rules)}
        if action.kind == "all_in":
            body["as"] = action.base
        if action.returned:
            body["returned"] = action.returned
        if action.owed:
            body["owed"] = action.owed
        if action.note:
            body["note"] = action.note
        body["pot"] = hand.pot_total()
        body["next"] = hand.to_act()
        return self.emit("action", body)

    def mucked_winner_lapses(self) -> None:
        """The next hand began before the floor answered on a mucked winning hand: its right to dispute ended."""
        for waiting in self.floor.lapsing(NEXT_HAND):
            if waiting.code == MUCKED_WINNER:
                self.floor.lapse(waiting.id, NEXT_HAND, self.out)
