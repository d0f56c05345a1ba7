"""The missing-card watch: a card of the hand in play — a hole card, a board card, a burn card, not a card that
reached the muck — that stays off every antenna for ``missing_card_s`` while the hand goes on is missing: one
``card_missing`` for it (the card on the secure branch only), resolved (``returned``) when it comes back. A hand that
ends with cards still missing says where every card of it ended (``hand_audit``).

In a hand run more than once the burn cards are not watched: the dealer may take them up to shuffle them again for
a later run (CA GR 15.3; CA Actions 8e).

The hand goes on while two seats are still live and a card of the hand lies on a seat or the board: the dealer
gathering the cards at the end (the board, the winner's cards, the muck) is never counted, nor is anything after the
last live seat but one has folded. A player looking at their cards puts them back well within the time. Nothing
counts while the table cannot tell (a reader down, an antenna faulted), while an irregularity of the hand waits for
the floor, or in a void hand (a hold, decided by the table); absences count again from the moment that ends. Times are
the events' (a card is off from its ``left`` event), so a journal replay finds the same.

docs/rules.md has no rule for a card gone while the hand goes on: the table rules nothing and the dealer, or the floor,
decides; a card still missing when the hand ends is missing from the deck (PP Irregularities 10).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from controller.board import Board
from controller.dealing import NO_RULING
from controller.events import HandAudit
from controller.hand_cards import HandCards
from controller.irregularities import Irregularities
from controller.outbox import Outbox
from hal.zone_names import Zone

CARD_MISSING = "card_missing"
RETURNED = "returned"  # the resolution of a card_missing whose card came back
HAND_AUDIT_RULES = ["PP Irregularities 10"]  # cards missing from the deck: results stand, a new deck from then on


class MissingCardWatch:
    def __init__(self, out: Outbox, irregularities: Irregularities, hand_cards: HandCards, board: Board,
                 missing_card_s: float):
        if not missing_card_s >= 0:
            raise ValueError(f"missing_card_s must be 0 (not checked) or more seconds, not {missing_card_s!r}")
        self.out = out
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.board = board
        self.limit = missing_card_s  # 0: not checked
        self.new_hand()

    def new_hand(self) -> None:
        self._off_since: dict[str, tuple[float, str]] = {}  # card of this hand off every antenna → (since, last zone)
        self.missing: dict[str, int] = {}  # card reported missing and not back → its card_missing irregularity
        self._watch_from: float | None = None  # absences count from here; None: not now (no hand, a hold)
        # The start of the earliest absence not reported yet (inf: none), kept as cards go, since the deadlines are
        # asked after every input and the dealer gathering the cards takes dozens off one after the other; None:
        # to be worked out again (a card came back or was reported).
        self._earliest: float | None = math.inf

    def card_left(self, card: str, t: float, zone: str) -> None:
        """A card of this hand is off every antenna (a move arrives at once)."""
        if card in self._off_since:
            self._earliest = None  # off again: its absence counts from now
        elif self._earliest is not None:
            self._earliest = min(self._earliest, t)
        self._off_since[card] = (t, zone)

    def card_back(self, card: str) -> None:
        """A card of the hand is read again: it is no longer off the table, and if it was reported missing, that
        is resolved."""
        if self._off_since.pop(card, None) is not None:
            self._earliest = None
        ident = self.missing.pop(card, None)
        if ident is not None:
            self.irregularities.resolved(ident, RETURNED)

    def note_hold(self, holding: bool) -> None:
        """After every input: absences count from the end of a hold (or the hand's start), not from before it."""
        if holding:
            self._watch_from = None
        elif self._watch_from is None:
            self._watch_from = self.out.now

    def next_due(self) -> float:
        """The earliest time ``check`` can report a card: the first absence to reach ``missing_card_s``, counted from
        when absences count (inf: nothing to report however long it lasts)."""
        if not self._off_since or self.limit <= 0 or self._watch_from is None:
            return math.inf
        if self._earliest is None:
            missing = self.missing
            self._earliest = min([s for card, (s, _zone) in self._off_since.items() if card not in missing],
                                 default=math.inf)
        return max(self._earliest, self._watch_from) + self.limit

    def check(self, holding: bool, on_table: Mapping[str, str], deck: Mapping[str, str]) -> None:
        """Report the cards that have been off the table too long (``on_table``: tag → zone of what lies there)."""
        now = self.out.now
        if not self._off_since or self.limit <= 0 or self._watch_from is None or holding:
            return
        hand = self.hand_cards
        if len(hand.live_seats()) < 2:
            return  # the hand is decided: what leaves the table now is the gathering
        if not any(Zone.parse(zone).place in ("seat", "board") and deck.get(uid) in hand.uids
                   for uid, zone in on_table.items()):
            return  # nothing of the hand lies on a seat or the board any more: the dealer is gathering
        board = self.board
        for card, (since, zone) in list(self._off_since.items()):
            if card in self.missing or not self._in_play(card) or now - max(since, self._watch_from) < self.limit:
                continue
            owner = hand.owner.get(card)
            seats = [owner] if owner is not None and card not in board.cards and card not in board.burns else []
            self.missing[card] = self.irregularities.report(CARD_MISSING, NO_RULING, seats=seats, cards=[card],
                                                            zone=zone, extra={"absent_s": round(now - since, 1)})
            self._earliest = None

    def _in_play(self, card: str) -> bool:
        """A card the hand needs on the table until the end: not one in the muck (accounted for), nor one out of
        the play (exposed, extra or boxed cards set aside, premature cards taken back to the stub)."""
        hand, board = self.hand_cards, self.board
        if card in board.burns and card not in board.cards and board.runs.reshuffle_allowed():
            return False  # a hand run more than once: the dealer may shuffle the burn cards again (CA GR 15.3)
        return card not in hand.mucked and (card in hand.owner or card in board.cards or card in board.burns)

    def audit(self) -> None:
        """The hand ends with cards missing: where every card the hand saw ended (``hand_audit``; counts public,
        cards secure). A missing card is missing from the deck (PP Irregularities 10)."""
        if not self.missing:
            return
        hand, board = self.hand_cards, self.board
        places: dict[str, Any] = {"seats": {}, "board": [], "burn": [], "muck": [], "other": []}
        missing: list[str] = []
        for card in hand.uids:  # in the order the hand saw them
            if card in self.missing:
                missing.append(card)
            elif card in hand.mucked:
                places["muck"].append(card)
            elif card in board.cards:
                places["board"].append(card)
            elif card in board.burns:
                places["burn"].append(card)
            elif card in hand.owner:
                places["seats"].setdefault(hand.owner[card], []).append(card)
            else:  # out of the play: set aside (exposed, extra, boxed), taken back to the stub, or never played
                places["other"].append(card)
        seats = places["seats"]
        places["seats"] = {str(seat): seats[seat] for seat in sorted(seats)}
        counts = {place: sum(map(len, cards.values())) if place == "seats" else len(cards)
                  for place, cards in places.items()}
        lost_from = sorted({hand.owner[card] for card in missing if card in hand.owner
                            and card not in board.cards and card not in board.burns})
        self.out.publish(HandAudit(len(hand.uids), counts, tuple(missing), tuple(lost_from),
                                   tuple(self.missing[card] for card in missing), tuple(HAND_AUDIT_RULES), places))
