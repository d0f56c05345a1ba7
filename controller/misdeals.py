"""Misdeals: whether one can still be called, and calling it.

A misdeal can be called until substantial action has taken place, by the house's definition
(``RuleProfile.substantial_action``): the betting layer's verdict where the table reads the chips; with the cards
alone, CA GR 9's "never after the flop" and the folds the muck saw. Calling one voids the hand: the bets go back (the
betting layer), the button stays, the cards are dealt again, and the misdeal resolves the hand's other
irregularities.

The deal's rulings, the exposed and boxed cards (``controller.out_of_play``) and the floor's commands ask here; none
of them asks another.
"""

from __future__ import annotations

from controller.board import Board, BettingProgress
from controller.commands import Command
from controller.dealing import MISDEAL
from controller.events import Misdeal
from controller.hand_cards import HandCards
from controller.irregularities import Irregularities
from controller.outbox import Outbox
from controller.rules import SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP, RuleProfile, is_substantial


class Misdeals:
    def __init__(self, out: Outbox, irregularities: Irregularities, hand_cards: HandCards, board: Board,
                 progress: BettingProgress, profile: RuleProfile, folds_are_the_action: bool):
        self.out = out
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.board = board
        self.progress = progress
        self.profile = profile
        self.folds_are_the_action = folds_are_the_action  # without chips the folds are all the action seen

    def substantial(self) -> bool:
        """Substantial action has taken place: a misdeal can no longer be called (the betting layer's verdict; with
        the cards alone, CA GR 9's "never after the flop" and the folds the muck saw, counted by the house's rule)."""
        if self.progress.substantial_action():
            return True
        kind = self.profile.substantial_action
        if kind == SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP and self.board.cards:
            return True
        if self.hand_cards.stud_street not in (None, "third"):  # stud: fourth street is dealt once third street's
            return True  # betting is over, the forced bet and more (PP Misdeals 2)
        if not self.folds_are_the_action:
            return False
        return is_substantial(kind, [(seat, False) for seat in self.hand_cards.folds_seen])  # folds: no chips

    def misdeal_or(self, otherwise: str) -> tuple[str, list[str]]:
        """MISDEAL while a misdeal can still be called, else ``otherwise``; with the rule that decided."""
        return (otherwise if self.substantial() else MISDEAL), [self.profile.cite("substantial_action")]

    def call(self, reason: str, rules: list[str], irregularity: int | None, command: Command | None = None) -> None:
        """The hand is void: the bets go back (the betting layer), the button stays, the cards are dealt again.
        ``command``: the floor's, when the floor called it."""
        hand = self.hand_cards
        if hand.void:
            return
        hand.misdealt()
        self.out.publish(Misdeal(reason, tuple(rules), irregularity, hand.button,
                                 command.by if command is not None else None,
                                 command.note if command is not None else None))
        for ident in [i for i in self.irregularities.of_hand(self.out.hand or 0) if i != irregularity]:
            self.irregularities.resolved(ident, "misdeal")
