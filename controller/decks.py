"""The deck in play and the other registered decks: which card a tag is, and the cards that do not belong in the
hand — a card of another registered deck (PP Irregularities 3) and a second card of the same rank and suit (PP
Irregularities 4). Each stray tag is reported once a hand."""

from __future__ import annotations

from typing import Mapping

from controller.dealing import ACTION_STANDS, MISDEAL, REMOVE_CARD
from controller.hand_cards import HandCards
from controller.irregularities import Irregularities


class Decks:
    def __init__(self, irregularities: Irregularities, hand_cards: HandCards, decks: Mapping[str, Mapping[str, str]],
                 deck_id: str, deck: Mapping[str, str]):
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.decks = decks  # every registered deck, by id: tag UID → card name
        self.deck_id, self.deck = deck_id, deck
        self.others = self._other_decks()  # tag → (deck id, card) of the other decks
        self.new_hand()

    def new_hand(self) -> None:
        self._strays: set[str] = set()  # tags of other decks already reported

    def select(self, deck_id: str) -> None:
        """Deal with the registered deck ``deck_id`` from now on."""
        self.deck_id, self.deck = deck_id, self.decks[deck_id]
        self.others = self._other_decks()

    def _other_decks(self) -> dict[str, tuple[str, str]]:
        return {uid: (deck_id, card) for deck_id, deck in self.decks.items() if deck_id != self.deck_id
                for uid, card in deck.items() if uid not in self.deck}

    def stray(self, uid: str, other: tuple[str, str], zone: str, kind: str, seat: int | None) -> None:
        """A card of another registered deck (PP Irregularities 3) — or, when a card of that name is in play, a
        second card of the same rank and suit (PP Irregularities 4)."""
        hand = self.hand_cards
        report = self.irregularities.report
        deck_id, card = other
        if uid in self._strays or (hand.in_hand and hand.void):
            return
        self._strays.add(uid)
        seats = [seat] if kind == "seat" and seat is not None else []
        if not hand.in_hand:
            report("foreign_card", REMOVE_CARD, seats=seats, cards=[card], zone=zone, extra={"deck": deck_id})
        elif card in hand.uids:
            self.duplicate(uid, card, zone, kind, seat, deck_id)
        elif kind in ("seat", "board"):
            report("foreign_card", MISDEAL, seats=seats, cards=[card], zone=zone, needs_floor=True,
                   extra={"deck": deck_id}, data={"void": True})
        else:
            report("foreign_card", ACTION_STANDS, seats=seats, cards=[card], zone=zone, extra={"deck": deck_id})

    def duplicate(self, uid: str, card: str, zone: str, kind: str, seat: int | None,
                  deck_id: str | None = None) -> None:
        """A second tag carrying ``card`` this hand."""
        if uid in self._strays and deck_id is None:
            return
        self._strays.add(uid)
        seats = [seat] if kind == "seat" and seat is not None else []
        owner = self.hand_cards.owner.get(card)
        if owner is not None and owner not in seats:
            seats.append(owner)
        self.irregularities.report("duplicate_card", MISDEAL, seats=seats, cards=[card], zone=zone, needs_floor=True,
                                   extra={"deck": deck_id or self.deck_id}, data={"void": True})
