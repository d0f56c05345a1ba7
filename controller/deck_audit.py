"""The deck's life: over a number of hands every card of the active deck should show up.

A card that never appears in ``hands`` hands in a row is missing from the deck (dropped, marked and kept back, or its
tag dead). Fed with the card controller's events; says so with one ``deck_audit`` event per window of hands in
which some cards were never seen, naming them (they are cards nobody holds, so the event is public). A change of
deck starts a new window. The ruling (PP Irregularities 10): the results of the hands played stand, and a new deck is
brought in from then on.

A card that went missing during a hand and was still missing when it ended (the hand's ``hand_audit``) is gone from
the deck even though the window saw it: it counts as unseen until it shows up again.
"""

from __future__ import annotations

from typing import Any

from controller.cards import FULL_DECK
from controller.domain import DomainEvent
from controller.events import BoardCard, Burn, CardDealt, CardsNeverSeen, DeckSelected, Folded, HandAudit, HandEnded
from controller.outbox import CURRENT, Outbox


class DeckAudit:
    def __init__(self, out: Outbox, hands: int = 50):
        if hands < 1:
            raise ValueError("the deck audit needs a window of at least one hand")
        self.out = out  # where its deck_audit events go, numbered with the cards' (controller.outbox)
        self.hands = hands
        self._seen: set[str] = set()
        self._ended = 0
        self._lost: frozenset[str] = frozenset()  # missing at the end of the hand that is ending (its hand_audit)

    def card_events(self, events: list[DomainEvent]) -> None:
        """The card controller's events of one input, in order."""
        for event in events:
            self.card_event(event)

    def card_event(self, event: DomainEvent) -> None:
        """One of the card controller's events; a window of hands that ends with cards never seen emits a
        ``deck_audit`` event, at the time and in the hand of the event that ended it."""
        record = event.record
        # cards of the active deck in play (not a foreign card an irregularity names)
        if isinstance(record, (CardDealt, Burn, BoardCard)):
            self._seen.add(record.card)
        elif isinstance(record, Folded):
            self._seen.update(record.cards)
        elif isinstance(record, HandEnded):
            report = self._hand_ended(record)
            if report is not None:
                self.out.publish(report, t=event.t, hand=event.hand if event.hand is not None else CURRENT)
        elif isinstance(record, HandAudit):  # it comes just before its hand's hand_ended
            self._lost = self._lost | set(record.missing)
        elif isinstance(record, DeckSelected):
            self._seen, self._lost, self._ended = set(), frozenset(), 0

    def _hand_ended(self, ended: HandEnded) -> CardsNeverSeen | None:
        """The cards the hand ended with were in play; a window that ends with cards never seen is reported."""
        self._seen.update(ended.board)
        for _seat, cards in ended.hole_cards:
            self._seen.update(cards)
        self._seen -= self._lost  # seen in the hand, but gone from the deck when it ended
        self._lost = frozenset()
        self._ended += 1
        if self._ended < self.hands:
            return None
        missing = [card for card in FULL_DECK if card not in self._seen]
        seen = len(FULL_DECK) - len(missing)
        self._seen, self._ended = set(), 0
        if not missing:
            return None
        return CardsNeverSeen(self.hands, seen, tuple(missing), ("PP Irregularities 10",))

    def checkpoint_state(self) -> dict[str, Any]:
        """The window so far, as JSON (a checkpoint between hands)."""
        return {"seen": sorted(self._seen), "ended": self._ended}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        self._seen, self._ended, self._lost = set(state["seen"]), int(state["ended"]), frozenset()

    def state(self) -> dict:
        return {"hands": self._ended, "window": self.hands, "distinct_cards": len(self._seen)}
