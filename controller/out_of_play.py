"""Cards that leave the play: the muck (a live seat's card there is a fold), hole cards the dealer exposes during the
deal (DE 3; PP Irregularities 12-14; the house's ``exposed_hole_card``), and cards found face up in the deck (boxed
cards, PP Irregularities 7, two in a deal a misdeal: PP Misdeals 1c). An exposed card is reported by the console
(``exposed_card``) or, on a table with an exposed-card zone, by placing it there (``TableSetup.exposed_by``)."""

from __future__ import annotations

from controller.board import Board
from controller.commands import Refusal
from controller.dealing import BURN_CARD, DEAD_HAND, MISDEAL, PASSIVE_HAND, PLAY_ON, REPLACE_CARD
from controller.events import Folded
from controller.hand_cards import HandCards
from controller.irregularities import Irregularities
from controller.misdeals import Misdeals
from controller.outbox import Outbox
from controller.rules import (EXPOSED_REPLACE_NOW, SHOWN_CARD_FOLDS, SHOWN_CARD_PASSIVE, SHOWN_CARD_PASSIVE_NEXT_ACTION,
                              RuleProfile)

# A hole card shown after the deal is the player's doing (the dealer's exposure is during the deal); the house rules
# (``RuleProfile.shown_hole_card``): PP Irregularities 12-14, it plays; CA Actions 10, the hand is passive (check,
# call or fold only); AC 50, its next action is; DE 3, "Vorzeitiges Aufdecken gilt als gepasst".
SHOWN_RULINGS = {SHOWN_CARD_PASSIVE: PASSIVE_HAND, SHOWN_CARD_PASSIVE_NEXT_ACTION: PASSIVE_HAND,
                 SHOWN_CARD_FOLDS: DEAD_HAND}


class OutOfPlay:
    def __init__(self, out: Outbox, irregularities: Irregularities, hand_cards: HandCards, board: Board,
                 misdeals: Misdeals, profile: RuleProfile, exposed_by: str):
        self.out = out
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.board = board
        self.misdeals = misdeals
        self.profile = profile
        self.exposed_by = exposed_by
        self.boxed = 0  # cards found face up in the deck, this deal (counted from before its first card)

    # ---- the muck -----------------------------------------------------------------------------------

    def muck(self, card: str) -> bool:
        """A card reached the muck. True when it is a seat's hole card: the betting has begun, so the deal is over
        (the coordinator tells the deal's rulings)."""
        hand = self.hand_cards
        if card in hand.mucked:
            return False
        if not hand.in_hand:
            self.irregularities.irregular("card_outside_hand", "muck", card)
            return False
        seat = hand.owner.get(card)
        hand.to_muck(card)
        if seat is None:
            if card not in self.board.cards and card not in self.board.burns and card not in hand.retired \
                    and card not in self.board.returned:
                self.irregularities.irregular("unseen_card_mucked", "muck", card)
            return False
        hand.betting_begun()
        place = hand.seats[seat]
        if not place.folded and len(hand.live_seats()) > 1:
            hand.fold(seat)
            self.out.publish(Folded(seat, tuple(place.cards)))
        return True

    # ---- exposed cards ------------------------------------------------------------------------------

    def exposed_zone(self, card: str, zone: str) -> None:
        """A card on the exposed zone during a hand (the deal's first card may start it)."""
        hand = self.hand_cards
        if card in hand.retired or card in self.board.cards or card in self.board.burns or card in hand.mucked:
            return  # already out of the play, or face up anyway
        deal = hand.deal
        owner = hand.owner.get(card)
        if owner is not None:
            self._exposure(card, owner, zone, in_flight=False)
        elif (held := deal.holds(card)) is not None:
            deal.held.remove(held)
            self._exposure(card, held.expected, zone, in_flight=True, counted=True)
        elif not deal.complete:
            self._exposure(card, deal.expected(), zone, in_flight=True)
        else:
            self.boxed_card(card, zone)

    def exposed_refusal(self, seat: int | None) -> Refusal | None:
        """Why ``exposed_card`` is refused now, or None: the exposed card is the latest of ``seat``, or the one due
        to it; without a seat, a boxed card."""
        hand = self.hand_cards
        if self.exposed_by == "zone":
            return Refusal("this table reports exposed cards on its exposed zone: place the card there")
        if seat is None:
            return None
        if not hand.in_hand:
            return Refusal("no hand is running")
        if hand.void:
            return Refusal("the hand is void (misdeal): deal again")
        if not hand.seats[seat].cards and (hand.deal.complete or hand.deal.expected() != seat):
            return Refusal(f"seat {seat} holds no card")
        return None

    def exposed_command(self, seat: int | None) -> None:
        """``exposed_card``, once :meth:`exposed_refusal` allowed it: the dealer exposed the latest card of ``seat``
        (or the one due to it); without a seat, a boxed card."""
        if seat is None:
            self.boxed_card(None, None)
            return
        place = self.hand_cards.seats[seat]
        if place.cards:
            self._exposure(place.cards[-1], seat, None, in_flight=False)
        else:
            self._exposure(None, seat, None, in_flight=True)

    def _exposure(self, card: str | None, seat: int | None, zone: str | None, in_flight: bool,
                  counted: bool = False) -> None:
        """The dealer exposed a card of the deal: ``in_flight`` before it reached ``seat`` (the seat it was due to),
        otherwise after."""
        hand = self.hand_cards
        deal = hand.deal
        report = self.irregularities.report
        cards = [card] if card else []
        seats = [seat] if seat is not None else []
        # Shown by the player: after the deal; the deal's last card just dealt and no action yet is the dealer's
        last_dealt = card is not None and deal.positions.get(card) == deal.position - 1 and not hand.after_deal
        if not in_flight and ((deal.complete and not last_dealt) or (deal.learning and hand.after_deal)):
            ruling = SHOWN_RULINGS.get(self.profile.shown_hole_card, PLAY_ON)
            rules = [self.profile.cite("shown_hole_card")] if ruling != PLAY_ON else ["PP Irregularities 12",
                                                                                       "PP Irregularities 14"]
            if ruling == DEAD_HAND and seat is not None and len(hand.live_seats()) > 1:
                hand.kill(seat)
            report("hole_card_exposed", ruling, seats=seats, cards=cards, zone=zone, rules=rules,
                   extra={"during_deal": False})
            return
        position = deal.count_exposed(card, in_flight, counted)
        if card:
            hand.retire(card, "exposed")
            if not in_flight and seat is not None:
                hand.take(card, seat)
        extra = {"during_deal": True, "position": position + 1}
        if position <= 1 or deal.exposed >= 2:
            code = "first_cards_exposed" if position <= 1 else "cards_exposed"
            ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
            ident = report(code, ruling, seats=seats, cards=cards, zone=zone, rules=rules, extra=extra)
            if ruling == MISDEAL:
                self.misdeals.call(code, self.irregularities.rules_of(ident), ident)
                return
            # substantial action (it cannot happen before the deal is over): the card is replaced as below
        replace_now = self.profile.exposed_hole_card == EXPOSED_REPLACE_NOW
        if seat is not None and not deal.learning:  # a learning deal is taken as dealt
            if replace_now:
                if not in_flight:
                    deal.queue.insert(0, seat)
            else:
                if in_flight and seat in deal.queue:
                    deal.queue.remove(seat)
                deal.queue.append(seat)
        if position <= 1 or deal.exposed >= 2:
            return
        report("hole_card_exposed", REPLACE_CARD if replace_now else BURN_CARD, seats=seats, cards=cards,
               zone=zone, rules=[self.profile.cite("exposed_hole_card")], extra=extra)

    # ---- boxed cards --------------------------------------------------------------------------------

    def deal_over(self) -> None:
        """The hand ended: the next deal counts its boxed cards afresh."""
        self.boxed = 0

    def boxed_card(self, card: str | None, zone: str | None) -> None:
        """A card found face up in the deck: not used, replaced by the next card (PP Irregularities 7); two in
        one deal are a misdeal (PP Misdeals 1c)."""
        hand = self.hand_cards
        self.boxed += 1
        if card and hand.in_hand:
            hand.retire(card, "boxed")
        ruling: str = REPLACE_CARD
        rules: list[str] = []
        if hand.in_hand and not hand.void and self.boxed >= 2:
            ruling, rules = self.misdeals.misdeal_or(REPLACE_CARD)
        ident = self.irregularities.report("boxed_card", ruling, seats=[], cards=[card] if card else [], zone=zone,
                                           rules=rules, extra={"count": self.boxed})
        if ruling == MISDEAL:
            self.misdeals.call("boxed_card", self.irregularities.rules_of(ident), ident)
