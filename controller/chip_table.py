"""The table as the chip layer reads every hand against it (``ChipTable``): the configuration's part of it
(``controller.chip_betting.BettingSetup``) and what follows from it once, the house's rule profile, the game and the
chip values in play."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from controller.betting import VARIANTS, Variant
from controller.levels import Level
from controller.rotation import Game, Stakes
from controller.rules import RuleProfile, profile as rule_profile

if TYPE_CHECKING:
    from controller.chip_betting import BettingSetup

CHIP_ZONES = ("bets", "pot", "stack")  # the kinds of zone the chip layer reads (hal.zone_names)


@dataclass(frozen=True)
class ChipTable:
    """Fixed for the table's life: the configuration, the house's rule profile, the game, the chip values in play,
    the seats around the table and the hole cards a seat is dealt."""

    setup: BettingSetup
    rules: RuleProfile
    variant: Variant
    chip_values: tuple[int, ...]
    seats: int
    hole_cards: int

    @classmethod
    def of(cls, setup: BettingSetup, seats: int, hole_cards: int) -> ChipTable:
        return cls(setup, rule_profile(setup.rules), VARIANTS[setup.variant], tuple(sorted(set(setup.chips.values()))),
                   seats, hole_cards)

    def playing(self, game: Game) -> ChipTable:
        """The table as a hand of ``game`` is read: a mixed game's hands are each bet and shown down as their own
        game (``controller.rotation``), at its own stakes where it has them (a flop game's blinds and antes, a stud
        game's ante, bring-in and bets). A game without an engine variant is the table's one game."""
        setup = self.setup
        if game.stakes is not None and not game.button:  # a stud game: its ante, bring-in and two bets, no blinds
            stakes = game.stakes
            setup = replace(setup, small_blind=0, big_blind=0, ante=stakes.ante, big_blind_ante=0,
                            bring_in=stakes.bring_in, bet_limits=(stakes.small_bet, stakes.big_bet))
        elif game.stakes is not None:  # a flop game: its blinds and antes (its limits follow from the big blind)
            stakes = game.stakes
            setup = replace(setup, small_blind=stakes.small_blind, big_blind=stakes.big_blind, ante=stakes.ante,
                            big_blind_ante=stakes.big_blind_ante, bring_in=0,
                            bet_limits=None if setup.bring_in else setup.bet_limits)
        if not game.engine or (game.engine == self.variant.code and game.hole_cards == self.hole_cards):
            return self if setup is self.setup else replace(self, setup=setup)
        return replace(self, setup=setup, variant=VARIANTS[game.engine], hole_cards=game.hole_cards)

    def forced_bets(self, level: Level | None) -> Level:
        """The blinds and antes the chips are read against: ``level``'s in a tournament (the running level), otherwise
        the game's."""
        if level is not None:
            return level
        setup = self.setup
        return Level(setup.small_blind, setup.big_blind, setup.ante, setup.big_blind_ante)

    def stakes(self, level: Level | None) -> dict[str, int]:
        """The stakes a hand is played at, named as ``hand_started`` names a mixed game's (``Stakes.as_dict``): a
        flop game's blinds and antes, a stud game's ante, bring-in and two bets."""
        forced, setup = self.forced_bets(level), self.setup
        if self.variant.stud:
            small_bet, big_bet = setup.bet_limits or (0, 0)
            return Stakes(ante=forced.ante, bring_in=setup.bring_in, small_bet=small_bet, big_bet=big_bet).as_dict(True)
        return Stakes(forced.small_blind, forced.big_blind, forced.ante, forced.big_blind_ante).as_dict(False)
