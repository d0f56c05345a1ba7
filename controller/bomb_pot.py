"""A bomb pot or a flip, agreed by the players before the deal (the ``bomb_pot`` command).

Rules: CA GR 14.3 (a bomb pot: every player puts the agreed amount in, nothing is bet before the flop); CA GR 14.2 (a
flip: no betting on any street); CA GR 15.2 (a bomb pot deals fewer players than a hand: with too many, the small
blind sits out). The agreement is made before the deal: once a card is dealt it is refused. It applies to the next
deal: the chip layer reads that hand's forced bets from it (docs/betting.md, "Bomb pots and flips").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.command_events import BombPotAgreed
from controller.commands import Command, Refusal
from controller.domain import DomainEvent
from controller.outbox import Outbox
from controller.stud import GAMES as STUD_GAMES

if TYPE_CHECKING:
    from controller.chip_betting import ChipBetting
    from controller.table import TableController


class BombPot:
    """The ``bomb_pot`` command: checked, then applied. ``betting``: the chip layer, which takes the agreement (None:
    a table without chips only announces it)."""

    def __init__(self, cards: TableController, betting: ChipBetting | None, out: Outbox):
        self.cards = cards
        self.betting = betting
        self.out = out

    def refusal(self, command: Command, t: float) -> Refusal | None:
        if self.cards.in_hand:
            return Refusal("the deal has begun: a bomb pot or flip is agreed before the deal (CA GR 14.2, 14.3)")
        game = self.cards.game.name or self.cards.setup.variant  # (the table's one game is the setup's variant)
        if game in STUD_GAMES:  # (the rules give a bomb pot and a flip a flop and a board)
            return Refusal(f"the next hand is {game}: a bomb pot or flip is a flop game's (CA GR 14.2, 14.3)")
        return None

    def apply(self, command: Command, t: float) -> list[DomainEvent]:
        """Every player puts ``amount`` in, and nothing is bet before the flop, or with ``kind`` ``flip`` on no
        street."""
        flip = command.get("kind", "bomb_pot") == "flip"
        if self.betting is not None:
            self.betting.agree_bomb_pot(command["amount"], flip)
        sits_out = self.cards.bomb_pot_sit_out()  # too many players for CA GR 15.2: the small blind sits out
        self.out.publish(BombPotAgreed(command["amount"], flip, self.cards.hand + 1, sits_out, command.by), t=t)
        return self.out.take()
