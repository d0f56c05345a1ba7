"""A winning hand the dealer mucked at the showdown: cards speak.

Rules:
* AC 14; CA Actions 9 ("the croupier may not fold a clearly winning hand"): at the showdown, a hand that would win
  (some of) the pot and reached the muck is reported, and the pot waits for the floor.
* The floor confirms: the hand is restored and plays the showdown, so the pot goes to the best hand; it overrides:
  the fold stands.
* A hand's reading can be disputed until the next hand begins (TDA 20-6; AC 17; CA Actions 9: "before the next game
  has started, after which no further corrections are possible"): unanswered then, the fold stands.

The chip layer sees the hole cards and the board, so it finds such a hand (``HandReading``) and publishes the
rulings made here (``found``, ``restored``); the game carries out the floor's answer in the order below
(``MuckedWinnerAnswer``): the card controller makes the hand live again, then the chip layer awards the pot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.dealing import PLAY_ON
from controller.events import BetRuling
from controller.floor import NEXT_HAND, FloorQueue
from controller.outbox import Outbox

if TYPE_CHECKING:
    from controller.chip_betting import ChipBetting
    from controller.table import TableController

MUCKED_WINNER = "winning_hand_mucked"  # the ruling's code
HAND_RESTORED = "hand_restored"  # what a confirm does: the ruling's floor result, and the code of its outcome
LAPSES = NEXT_HAND  # how long it waits for the floor
RULES = ("AC 14", "CA Actions 9")


def found(seat: int) -> BetRuling:
    """The ruling that ``seat``'s winning hand reached the muck: it waits for the floor."""
    return BetRuling(MUCKED_WINNER, seat, f"seat {seat}'s hand wins at the showdown and reached the muck: cards "
                                          "speak; confirm restores it (the pot goes to the best hand), override lets "
                                          "the fold stand", RULES, True)


def restored(seat: int) -> BetRuling:
    """The floor restored ``seat``'s hand."""
    return BetRuling(HAND_RESTORED, seat, f"seat {seat}'s mucked hand is restored: it plays the showdown",
                     ("CA Actions 9", "AC 14"), False)


def floor_result(confirmed: bool) -> str:
    """The ``result`` of the floor's answer."""
    return HAND_RESTORED if confirmed else PLAY_ON


def lapse_unanswered(floor: FloorQueue, out: Outbox) -> None:
    """The next hand began before the floor answered: the right to dispute ended."""
    for waiting in floor.lapsing(NEXT_HAND):
        if waiting.code == MUCKED_WINNER:
            floor.lapse(waiting.id, NEXT_HAND, out)


class MuckedWinnerAnswer:
    """The floor's answer carried out: a confirm makes the hand live again at the card controller; then the chip
    layer takes the fold back or lets it stand, and awards the pot if the hand already ended."""

    def __init__(self, cards: TableController, betting: ChipBetting, out: Outbox):
        self.cards, self.betting, self.out = cards, betting, out

    def answer(self, seat: int, confirmed: bool, t: float, hand: object) -> None:
        """``hand``: the hand the ruling belongs to (the outbox's ``CURRENT`` for the current one)."""
        if confirmed:
            self.cards.restore_hand(seat)
        with self.out.stamped(t, hand):
            self.betting.mucked_winner_ruled(confirmed, t)
