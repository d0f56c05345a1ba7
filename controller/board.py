"""The board: the flop, the turn and the river in order, the burn card before each street, and the rulings of TDA 39
when they go wrong (docs/rules.md section 1, docs/events.md):

* a fourth card before anyone acted on the flop, with no burn before it, is a four-card flop: the floor mixes the
  four cards and picks the burn (TDA 39-1, AC 32); a turn's burn read a moment after the turn card still makes it the
  turn (within the read-order window, ``controller.dealing.ReadWindows``);
* a flop turned without a burn: the floor picks the burn among the three, unless someone acted (TDA 39-2) or the
  house plays on (``missing_flop_burn``); a turn or river without its burn is reported and played on;
* a board card while players are still to act on a bet is premature: returned and dealt again (DE 3; PP
  Irregularities 15; TDA 39-3), one irregularity for the cards turned together;
* a burn card turned up is reported (everyone sees it now).

Cards on the board while the deal is still running are the deal's concern first (``controller.deal_rulings``): the
board checks a card (``arrives``), the deal may keep it, and the board turns it (``turn``) once the deal is over.
``BettingProgress`` (given at construction) says whether a betting round is open and whether anyone acted on the
street.
"""

from __future__ import annotations

import math
from typing import Protocol

from controller.board_runs import BoardRuns
from controller.cards import parse_card
from controller.commands import Refusal
from controller.dealing import FLOOR_PICKS_BURN, PLAY_ON, RETURN_AND_REDEAL, ReadWindows
from controller.events import BoardCard, BoardCorrected, Burn
from controller.hand_cards import HandCards
from controller.floor import Irregularity
from controller.irregularities import Irregularities
from controller.outbox import Outbox
from controller.rules import MISSING_FLOP_BURN_PLAY_ON, RuleProfile

STREETS = {1: "flop", 2: "flop", 3: "flop", 4: "turn", 5: "river"}


class BettingProgress(Protocol):
    """What the dealing rules ask of the betting layer (``controller.chip_betting.ChipBetting``)."""

    reads_chips: bool  # False: the folds the cards show are all the action the table sees (``NoBetting``)

    def substantial_action(self) -> bool:
        """A misdeal can no longer be called (the house's definition of substantial action)."""

    def round_open(self) -> bool:
        """Players still have to act on a bet in this betting round: a board card now is premature."""

    def street_action(self) -> bool:
        """Some player acted on the current street (chips, a fold, a declaration, chips still settling)."""


class Board:
    def __init__(self, out: Outbox, irregularities: Irregularities, hand_cards: HandCards, progress: BettingProgress,
                 profile: RuleProfile, double_board: bool = False, windows: ReadWindows = ReadWindows()):
        self.out = out
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.progress = progress
        self.profile = profile
        self.runs = BoardRuns(double_board)  # the boards after the first (runs, a double board's second)
        self.windows = windows  # a burn read late comes within its read_order_s, at the card readers' pace
        self.new_hand()

    def new_hand(self) -> None:
        self.cards: list[str] = []
        self.burns: list[str] = []
        self.premature: set[str] = set()  # premature board cards still lying on the board
        self.returned: set[str] = set()  # premature board cards taken back (they may be dealt again)
        self.premature_id: int | None = None
        self.fourth: str | None = None  # a four-card flop's fourth card, until the floor's pick
        self.fourth_due: float | None = None  # when a fourth card with no burn before it is a four-card flop
        self.pick: int | None = None  # the TDA 39 irregularity waiting for the floor's pick
        self.burn_checks = True  # False once the burns of this hand were found irregular
        self._burns_at: list[int] = []  # burns on the table when each board card came
        self._burn_due: list[tuple[float, int]] = []  # (when, board position): was there a burn before it?
        self.reburns = 0  # burn cards burned again in a later run (CA GR 15.3; CA Actions 8e)
        self._later_burn_due: list[tuple[float, int, int, int]] = []  # (when, board, position, burns needed)
        self.runs.new_hand()

    def street(self) -> str:
        return STREETS.get(len(self.cards), "preflop") if self.cards else "preflop"

    # ---- a card on the board ------------------------------------------------------------------------

    def arrives(self, card: str) -> bool:
        """A card reached the board: False when that is all there is to it (a card read again, put back before the
        floor's pick, or irregular whatever the deal), True when it is to be turned (``turn``)."""
        report = self.irregularities.irregular
        if card in self.cards or card in self.premature or card == self.fourth:
            return False  # re-read after being lifted
        if card in self.pick_candidates():
            return False  # a card of a four-card flop or a burnless flop put back before the floor's pick
        if not self.hand_cards.in_hand:
            report("card_outside_hand", "board", card, public_card=True)
            return False
        if card in self.hand_cards.owner:
            report("hole_card_on_board", "board", card, seat=self.hand_cards.owner[card])
            return False
        if len(self.cards) >= 5:
            report("extra_board_card", "board", card, public_card=True)
            return False
        return True

    def later_board(self, card: str, zone: str) -> bool:
        """A card on a board antenna that belongs to a later run or a double board's second board: taken (True),
        or False when it is the first board's (or no board's) to rule on."""
        if not self.hand_cards.in_hand or self.hand_cards.void:
            return False
        if any(card in b.cards for b in self.runs.later):
            return True  # read again after being lifted
        board = self.runs.board_for(zone, len(self.cards))
        if board is None or card in self.cards or card in self.hand_cards.owner:
            return False  # the first board's, or a card that is no board card: the first board's rules say what it is
        reshuffled = card in self.burns  # the burn cards shuffled again for this run (CA GR 15.3; CA Actions 8e)
        position = self.runs.put(board, zone, card)
        self.out.publish(BoardCard(card, STREETS[position], position, board.number, reshuffled))
        if self.runs.runs > 1 and position in (1, 4, 5) and self.burn_checks:
            self._later_burn_due.append((self.out.now + self.windows.read_order_s, board.number, position,
                                         self._street_starts()))
        return True

    def _street_starts(self) -> int:
        """Streets begun on every run so far: each needs a burn card before it."""
        first = sum(1 for p in (1, 4, 5) if len(self.cards) >= p)
        shared = self.runs.shared
        later = sum(1 for b in self.runs.later for p in (1, 4, 5) if shared < p <= shared + len(b.cards))
        return first + later

    def burns_dealt(self) -> int:
        """Burn cards dealt so far, a burn card burned again in a later run included (not one turned on the board)."""
        return len(self.burns) + self.reburns - sum(1 for card in self.cards if card in self.burns)

    def boards(self) -> list[list[str]]:
        """Every board of the hand, run by run (one: the board)."""
        return self.runs.boards(self.cards)

    def turn(self, card: str) -> None:
        """A card turned on the board once the deal is over."""
        self.hand_cards.betting_begun()
        position = len(self.cards) + 1
        burned_since = len(self.burns) - (self._burns_at[-1] if self._burns_at else 0)
        turned_burn = card in self.burns or self.hand_cards.retired.get(card) in ("exposed", "extra")
        if position == 4 and self.burn_checks and burned_since == 0 and not turned_burn and not self.flop_acted():
            # TDA 39-1, AC 32: a fourth card before anyone acted on the flop is a four-card flop, on every table. A
            # turn's burn read a moment late still makes it the turn, unless players are still to act on a bet.
            self.fourth = card
            if self.progress.round_open():
                self._four_card_flop()
            else:
                self.fourth_due = self.out.now + self.windows.read_order_s
            return
        if self.progress.round_open():
            self.premature_card(card)
            return
        if turned_burn:  # a burn card turned up: everyone sees it now
            self.hand_cards.retired.pop(card, None)
            self.irregularities.irregular("burn_card_on_board", "board", card, public_card=True)
            self.burn_checks = False
        self.put(card)
        if self.burn_checks and position in (3, 4, 5):
            self._burn_due.append((self.out.now + self.windows.read_order_s, position))

    def put(self, card: str) -> None:
        """``card`` is the board's next card."""
        self.cards.append(card)
        self._burns_at.append(len(self.burns))
        self.hand_cards.new_street()
        self.out.publish(BoardCard(card, STREETS[len(self.cards)], len(self.cards)))

    def taken_back(self, card: str, early: bool = False) -> None:
        """A card left the board: a premature card, or one the deal held (``early``: turned before the deal was
        over), returned to the stub."""
        if card in self.premature or early:
            self.premature.discard(card)
            self.returned.add(card)

    def flop_acted(self) -> bool:
        """Someone acted since the flop: a fold or a declaration the cards show, or what the betting layer read."""
        return self.hand_cards.street_acted or self.progress.street_action()

    def premature_card(self, card: str) -> None:
        """A board card before the betting round was over: returned, reshuffled and dealt again (DE 3; PP
        Irregularities 15; TDA 39-3); one irregularity for the cards turned together."""
        if self.premature and self.premature_id is not None:  # turned with the others still lying there
            self.premature.add(card)
            self.irregularities.add_card(self.premature_id, card)
            return
        self.premature.add(card)
        self.premature_id = self.irregularities.report(
            "premature_board_card", RETURN_AND_REDEAL, seats=[], cards=[card], zone="board", needs_floor=True,
            extra={"street": STREETS[len(self.cards) + 1]}, data={"cards": [card]})

    def _four_card_flop(self) -> None:
        """TDA 39-1, AC 32: the floor is called, the four cards are mixed face down and the floor picks the burn."""
        self.fourth_due = None
        card = self.fourth
        assert card is not None  # (set with fourth_due, or just before this is called)
        self.pick = self.irregularities.report("four_card_flop", FLOOR_PICKS_BURN, seats=[], cards=[card],
                                               zone="board", needs_floor=True,
                                               data={"candidates": [*self.cards, card]})
        self.burn_checks = False

    # ---- burn cards ---------------------------------------------------------------------------------

    def burn(self, card: str) -> bool:
        """A card reached the burn zone. True when it is a fresh burn card (not one set aside before): during the
        deal, the dealer burning for the flop ends the deal."""
        report = self.irregularities.irregular
        if card in self.burns:
            if self.hand_cards.in_hand and self.runs.reshuffle_allowed():
                self.reburns += 1  # taken up to be reshuffled and burned again for a later run (CA GR 15.3)
            return False
        if not self.hand_cards.in_hand:
            report("card_outside_hand", "burn", card)
            return False
        pick = self.irregularities.waiting(self.pick)
        if pick is not None and card in self.pick_candidates():  # the floor's pick of the burn card (TDA 39)
            self.apply_pick(pick, card, None)
            return False
        if card in self.hand_cards.owner:
            report("hole_card_burned", "burn", card, seat=self.hand_cards.owner[card])
            return False
        if card in self.cards:
            report("board_card_burned", "burn", card, public_card=True)
            self.burn_checks = False
            return False
        fresh = self.hand_cards.retired.pop(card, None) is None
        self.hand_cards.betting_begun()
        self.burns.append(card)
        self.out.publish(Burn(len(self.burns), card))
        if self.fourth_due is not None and self.fourth is not None:  # the turn's burn read after the turn: the turn
            turn, self.fourth, self.fourth_due = self.fourth, None, None
            self.put(turn)
        return fresh

    def _check_burn(self, position: int) -> None:
        """A street's burn card: one burn before the flop, one more before the turn and the river each (a burn read a
        moment after its street's card counts)."""
        report = self.irregularities.report
        burned = len(self.burns) - sum(1 for card in self.cards if card in self.burns)
        if position == 3 and burned < 1 and len(self.cards) >= 3 and self.fourth is None:
            self.burn_checks = False
            if self.profile.missing_flop_burn == MISSING_FLOP_BURN_PLAY_ON:
                report("flop_without_burn", PLAY_ON, seats=[], zone="board",
                       rules=[self.profile.cite("missing_flop_burn")])
            elif self.flop_acted():  # TDA 39-2: "Sollte eine beliebige Aktion (selbst ein Check) stattgefunden
                report("flop_without_burn", PLAY_ON, seats=[], zone="board",  # haben": play goes on
                       rules=["TDA 39-2"], extra={"after_action": True})
            else:
                self.pick = report("flop_without_burn", FLOOR_PICKS_BURN, seats=[], zone="board", needs_floor=True,
                                   rules=[self.profile.cite("missing_flop_burn")],
                                   data={"candidates": self.cards[:3]})
        elif position in (4, 5) and burned < position - 2:
            self.burn_checks = False
            report("missing_burn", PLAY_ON, seats=[], zone="board", extra={"street": STREETS[position]})

    # ---- what waits for a moment --------------------------------------------------------------------

    def next_due(self) -> float:
        """The earliest time ``decide_fourth`` or ``decide_burns`` can decide something (inf: nothing waits)."""
        due = self.fourth_due if self.fourth_due is not None else math.inf
        for when, *_ in self._burn_due:
            due = min(due, when)
        for when, *_ in self._later_burn_due:
            due = min(due, when)
        return due

    def decide_fourth(self, now: float) -> None:
        """A fourth card with no burn read after it by now is a four-card flop."""
        if self.fourth_due is not None and now >= self.fourth_due and not self.hand_cards.void:
            self._four_card_flop()

    def decide_burns(self, now: float) -> None:
        """Whether each street had its burn, once a burn read late would have come."""
        while self._burn_due and now >= self._burn_due[0][0] and not self.hand_cards.void:
            _due, position = self._burn_due.pop(0)
            if self.burn_checks:
                self._check_burn(position)
        while self._later_burn_due and now >= self._later_burn_due[0][0] and not self.hand_cards.void:
            _due, board, position, needed = self._later_burn_due.pop(0)
            if self.burn_checks and self.burns_dealt() < needed:
                self.burn_checks = False
                self.irregularities.report("missing_burn", PLAY_ON, seats=[], zone="board",
                                           extra={"street": STREETS[position], "board_number": board})

    # ---- the floor ----------------------------------------------------------------------------------

    def pick_candidates(self) -> list[str]:
        irregularity = self.irregularities.waiting(self.pick)
        if irregularity is None or (irregularity.code == "flop_without_burn" and self.flop_acted()):
            return []  # TDA 39-2: after any action the three cards stand
        return irregularity.data["candidates"]

    def pick_refusal(self, irregularity: Irregularity, card_name: str) -> Refusal | None:
        """Why the floor cannot pick ``card_name`` as the burn card (``floor_pick``), or None (then ``apply_pick``)."""
        ident = irregularity.id
        if irregularity.ruling != FLOOR_PICKS_BURN:
            return Refusal(f"irregularity {ident} ({irregularity.code}) is not settled by a pick of the burn card")
        card = parse_card(card_name)
        if card not in irregularity.data["candidates"]:
            return Refusal(f"{card} is not one of the cards to pick the burn card from")
        if irregularity.code == "flop_without_burn" and self.flop_acted():
            return Refusal("a player has acted on the flop: TDA 39-2, play goes on with the three cards as dealt "
                           "(override)")
        return None

    def apply_pick(self, irregularity: Irregularity, card: str, by: str | None) -> None:
        """TDA 39-1/-2: the floor's random pick is the burn card; the other cards are the flop (two of them, after
        a burnless flop: the next card completes it)."""
        candidates = irregularity.data["candidates"]
        self.irregularities.answered(irregularity.id)
        self.pick, self.fourth = None, None
        self.cards = [c for c in candidates if c != card][:3]
        self._burns_at = [len(self.burns) + 1] * len(self.cards)
        self.out.publish(BoardCorrected(irregularity.id, irregularity.code, tuple(self.cards), card, by))
        self.burns.append(card)
        self.out.publish(Burn(len(self.burns), card))

    def override(self, irregularity: Irregularity) -> None:
        """The floor rules that play goes on as dealt."""
        if irregularity.code == "premature_board_card":
            for card in irregularity.data["cards"]:
                if card in self.premature and len(self.cards) < 5:
                    self.premature.discard(card)
                    self.put(card)
        elif irregularity.code == "four_card_flop" and self.fourth is not None:
            card, self.fourth, self.pick = self.fourth, None, None
            self.put(card)
        elif irregularity.code == "flop_without_burn":
            self.pick = None
