"""The boards after the first: the later runs of a hand run twice or three times (CA Actions 8) and a double board's
second board (CA GR 14.1). ``controller.board.Board`` keeps the first board (its streets, its burns, TDA 39) and
asks this where a card on a board antenna belongs.

Which board a card is on, read from the antennas:

* runs on one board antenna: a run is complete before the next begins, so once the first board has its five cards
  the next card on the antenna starts the second run, and so on; every run has the cards dealt before the agreement
  (``shared``) and its own;
* runs on a second board antenna (``board2``), where the table has one: a card there starts or continues the next
  run not dealt on the first antenna, while the first run may still be being completed;
* a double board on one antenna: each street of the first board comes first, then the same street of the second
  (the three cards of the first flop, the three of the second, the first turn, the second ...); on ``board2``: the
  second board.

The burn cards of a run: "Burn / Flop / Burn / Turn / Burn / River / Burn / Flop 2 - after that, no more cards are
available and the croupier/croupière shuffles the remaining 4 burn cards: Burn / Turn 2 / Burn / River 2" (CA GR
15.3, eight players at 5-card PLO run twice before the flop); "If cards have been dealt to nine players in Pot Limit
Omaha and the board is required to be dealt twice, the three burn cards with the remaining eight cards are shuffled
again after the first regular board before the second board can be dealt" (CA Actions 8e). So in a later run a card
burned before may be turned on the board (``reshuffled``, no ``burn_card_on_board``) or burned again (a burn all the
same, no ``missing_burn``), and the burn cards may be off the table while the dealer shuffles them (no
``card_missing``). Each street of a later run still needs a burn before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.commands import Refusal
from controller.runouts import MAX_RUNS

STREET_OF_POSITION = {1: "flop", 2: "flop", 3: "flop", 4: "turn", 5: "river"}
STREET_ENDS = (3, 4, 5)  # a board's card count when a street is complete
RUN_RULES = ["CA Actions 8"]
RESHUFFLE_RULES = ["CA GR 15.3", "CA Actions 8e"]


@dataclass
class LaterBoard:
    """A board after the first: its number (2, 3, ...), the antenna it is dealt on, its own cards."""

    number: int
    zone: str | None = None
    cards: list[str] = field(default_factory=list)


class BoardRuns:
    def __init__(self, double_board: bool = False):
        self.double_board = double_board
        self.new_hand()

    def new_hand(self) -> None:
        self.runs = 1  # runs agreed (CA Actions 8)
        self.shared = 0  # board cards every run shares (dealt before the agreement)
        self.later: list[LaterBoard] = [LaterBoard(2)] if self.double_board else []

    @property
    def active(self) -> bool:
        """The hand has boards after the first."""
        return bool(self.later)

    def agree(self, runs: int, first_board: int) -> None:
        """The players agreed to run the rest of the board ``runs`` times with ``first_board`` cards dealt (as
        :meth:`refusal` allowed)."""
        self.runs, self.shared = runs, first_board
        self.later = [LaterBoard(n) for n in range(2, runs + 1)]

    def refusal(self, runs: int, first_board: int) -> Refusal | None:
        """Why the board cannot be run ``runs`` times with ``first_board`` cards dealt, or None."""
        if self.double_board:
            return Refusal("a double board is not run more than once at this table")
        if self.runs > 1:
            return Refusal(f"the hand is already being run {self.runs} times")
        if not 2 <= runs <= MAX_RUNS:
            return Refusal(f"a hand is run twice or three times, not {runs} times")
        if first_board >= 5:
            return Refusal("the board is complete: the players agree before the rest of the board is dealt")
        return None

    def _size(self) -> int:
        """The cards of its own each later board has when complete."""
        return 5 if self.double_board else 5 - self.shared

    def board_for(self, zone: str, first_board: int) -> LaterBoard | None:
        """The later board a card arriving on ``zone`` belongs to, or None: the first board's (or no board's)."""
        if not self.later:
            return None
        size = self._size()
        if self.double_board:
            second = self.later[0]
            if zone == "board2" or second.zone == "board2":
                return second if zone == "board2" and len(second.cards) < size else None
            b1, b2 = first_board, len(second.cards)
            # one antenna: the first board starts each street, then the second deals the same street
            return second if b1 > b2 and b1 in STREET_ENDS and b2 < size else None
        if zone == "board" and first_board < 5:
            return None  # the first run is dealt on the first antenna before any other
        # the next run not complete that is dealt on this antenna, or not begun
        return next((b for b in self.later if len(b.cards) < size and b.zone in (None, zone)), None)

    def put(self, board: LaterBoard, zone: str, card: str) -> int:
        """``card`` is ``board``'s next; returns its position on that board (1 to 5)."""
        board.zone = board.zone or zone
        board.cards.append(card)
        return self.shared + len(board.cards)

    def boards(self, first: list[str]) -> list[list[str]]:
        """Every board of the hand, run by run, the shared cards included."""
        shared = [] if self.double_board else first[: self.shared]
        return [list(first)] + [shared + b.cards for b in self.later if b.cards]

    def reshuffle_allowed(self) -> bool:
        """The burn cards may be reshuffled and dealt again (CA GR 15.3; CA Actions 8e): a hand run more than once."""
        return self.runs > 1
