"""Where the cards of one hand are: the seats and their hole cards, which seat holds which card, the tag that carried
each card, the cards in the muck and those set aside, and whether the hand is void. One ``HandCards`` lives as long as
the table; ``reset`` starts a hand afresh. The deal, the board, the muck and the missing-card watch all read it and
change it through its methods (a card given to a seat, taken from it, set aside, mucked; a fold); the board's own
cards are the board's (``controller.board``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.dealing import Deal


@dataclass
class Seat:
    cards: list[str] = field(default_factory=list)
    folded: bool = False  # folded, or its hand was ruled dead


class HandCards:
    def __init__(self, seats: int, deal: Deal, button: int):
        self.seat_count = seats
        self.in_hand = False
        self.reset(deal, button)

    def reset(self, deal: Deal, button: int) -> None:
        """A new hand, dealt as ``deal`` plans, with the table's button at ``button``."""
        self.deal = deal
        self.button = button  # the table's button (the deal's may differ once the floor ruled the deal right)
        self.seats = {n: Seat() for n in range(1, self.seat_count + 1)}
        self.owner: dict[str, int] = {}  # hole card → seat
        self.uids: dict[str, str] = {}  # card → the tag that carried it this hand
        self.mucked: list[str] = []
        self.retired: dict[str, str] = {}  # cards out of the play: exposed, extra, boxed → why
        self.void = False  # misdealt: nothing counts until the new deal
        self.after_deal = False  # a burn, a board card, a fold or a declaration came: the betting has begun
        self.street_acted = False  # a fold or a declaration since the latest board card (the cards' view)
        self.folds_seen: list[int] = []  # the seats that folded this hand, in order (actions without chips)
        self.up_cards: set[str] = set()  # a stud hand's cards lying face up at their seats (on seatN.up)
        self.stud_street: str | None = None  # a stud hand's street being dealt (controller.stud_deal); None: no stud

    def start(self) -> None:
        """The hand's first card arrived."""
        self.in_hand = True

    def end(self) -> None:
        self.in_hand = False

    def misdealt(self) -> None:
        """The hand is void: nothing of its deal counts until the cards are dealt again."""
        self.void = True
        self.deal.abandon()

    def betting_begun(self) -> None:
        """A burn or a board card: the deal is over and the betting has begun."""
        self.after_deal = True

    def action_seen(self) -> None:
        """A fold or a declaration: the betting has begun and someone acted on this street."""
        self.after_deal = True
        self.street_acted = True

    def new_street(self) -> None:
        """A board card: no one has acted on the new street yet."""
        self.street_acted = False

    def live_seats(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.cards and not s.folded]

    def folded_seats(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.folded]

    def kill(self, *seats: int) -> None:
        for seat in seats:
            if seat in self.seats:
                self.seats[seat].folded = True

    def give(self, card: str, seat: int) -> int:
        """The deal gave ``card`` to ``seat``; returns how many cards the seat holds now."""
        place = self.seats[seat]
        place.cards.append(card)
        self.owner[card] = seat
        return len(place.cards)

    def take(self, card: str, seat: int) -> None:
        """``card`` is no longer ``seat``'s (exposed after the deal: it is set aside)."""
        self.seats[seat].cards.remove(card)
        self.owner.pop(card, None)

    def retire(self, card: str, why: str) -> None:
        """``card`` is out of the play: ``exposed``, ``extra`` or ``boxed``."""
        self.retired[card] = why

    def to_muck(self, card: str) -> None:
        self.mucked.append(card)

    def fold(self, seat: int) -> None:
        """The seat's cards went to the muck while its hand was live: a fold, and an action of the street."""
        self.seats[seat].folded = True
        self.action_seen()
        self.folds_seen.append(seat)

    def restore(self, seat: int) -> None:
        """A hand mucked at the showdown is live again (the floor restored it)."""
        self.seats[seat].folded = False
