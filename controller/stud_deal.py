"""The deal of a stud hand (``stud``, ``stud8``, ``razz``): the cards of each street, up or down as the antenna they
lie on says, who brings it in and who acts first, the community card when the deck runs short, and the deal's
irregularities that only stud has.

Third street is dealt as the flop games deal their hole cards, one round at a time from the dealer's left: two down
cards and one up (the door card). The dealing order, the cards read late, a card to the wrong seat, a player dealt
out and a seat short of cards are the deal's rulings (``controller.deal_rulings``); this part checks each card's face
first. Once third street is out, the bring-in is announced. Fourth to sixth street deal one up card to each live
seat, seventh street one down card; after each street the seat that acts first is announced. The seats' up and down
cards come from their antennas: ``seatN.up`` (up) and ``seatN.cards`` (down).

Rules:
* the bring-in and who acts first from the cards showing: ``controller.stud`` (its rules cited there);
* a first or second card dealt face up: a misdeal while one can still be called (PP Misdeals 1a: "The first or
  second card of the hand has been dealt face-up"; CA GR 9c; AC 30a), the floor confirms: the table cannot tell
  the dealer's exposure from a card the player turned;
* action in stud, after which no misdeal is called: PP Misdeals 2, "Action is considered to occur in stud games
  when two players after the forced bet have acted on their hands" (``controller.misdeals``);
* an up card dealt down, a seventh-street card dealt up: the rule books stored with the project name no remedy,
  and after action no misdeal (PP Misdeals 2): the card plays as it lies, reported for the floor;
* a stud player who mixes an up card with the down cards: "While playing stud, if you are confronted with a bet,
  you lift your up-cards off the table, turn your up-cards over, or, mix your up-cards with your down-cards" the hand
  is dead (PP Dead hands 1c); the floor confirms, the cards alone do not say whether a bet was faced;
* a card to the wrong seat on a later street, fixed when the dealer moves it to the seat due it before the street
  is over (PP Misdeals 1e: "This can be fixed only if the player with the incorrect number is the next player in the
  dealing sequence");
* the deck running short on seventh street: a single card on the board, shared by every live hand. The stored rule
  books do not describe it (no "community card", no "Gemeinschaftskarte"); the table reports it (``deck_short``)
  and takes the board card as the community card only then.
"""

from __future__ import annotations

from controller.cards import FULL_DECK
from controller.dealing import DEAD_HAND, FIXED, MISDEAL, NO_RULING, PLAY_ON, THIRD_STREET_CARDS, rotate
from controller.deal_rulings import DealRulings
from controller.events import BoardCard, CardDealt, StudOpener
from controller.hand_cards import HandCards
from controller.irregularities import Irregularities
from controller.misdeals import Misdeals
from controller.outbox import Outbox
from controller.stud import (BRING_IN_RULES, FIRST_TO_ACT_RULES, STREETS, big_bet_allowed_on_fourth, bring_in_seat,
                             first_to_act)
from hal.zone_names import Zone

UP_STREETS = ("fourth", "fifth", "sixth")  # one up card each; seventh street's card is dealt down


def face_due(count: int) -> bool:
    """Whether a seat's ``count``-th card (from 1) is dealt face up: the third to the sixth."""
    return 3 <= count <= 6


class StudDeal:
    def __init__(self, out: Outbox, irregularities: Irregularities, hand_cards: HandCards, deal: DealRulings,
                 misdeals: Misdeals):
        self.out = out
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.deal = deal
        self.misdeals = misdeals
        self.new_hand(None)

    def new_hand(self, game: str | None) -> None:
        """A hand of ``game`` (a stud game) begins, or of another game (None: this part has nothing to do)."""
        self.game = game
        self.street = 0  # the streets dealt: 3 once third street began, 7 for seventh
        self.due: list[int] = []  # the seats still due this street's card, in dealing order
        self.order: list[int] = []  # the seats dealt in, from the dealer's left
        self.misplaced: dict[str, int] = {}  # a later street's card at a seat that had its card → its irregularity
        self.community: str | None = None  # the community card, when the deck ran short
        self.hand_cards.stud_street = None

    @property
    def active(self) -> bool:
        return self.game is not None

    # ---- a card at a seat ---------------------------------------------------------------------------

    def seat_card(self, card: str, seat: int, zone: str, burns: list[str]) -> None:
        """A card reached ``seat``'s down-card or up-card antenna during a stud hand (``burns``: the hand's burn
        cards so far)."""
        hand = self.hand_cards
        up = Zone.parse(zone).up
        if hand.owner.get(card) == seat:
            self._turned(card, seat, zone, up)
            return
        if self.street == 0:
            self.street = 3
            hand.stud_street = STREETS[0]
        if self.street == 3 and not hand.deal.complete:
            self._third_street_card(card, seat, zone, up)
            return
        self._later_card(card, seat, zone, up, burns)

    def _turned(self, card: str, seat: int, zone: str, up: bool) -> None:
        """A seat's own card put back on its other antenna. Down to up: the dealer turning an up card dealt down.
        Up to down, once third street is out: the player mixed an up card with the down cards, a dead hand when
        facing a bet (PP Dead hands 1c), which the floor confirms (the cards do not say whether a bet was faced)."""
        hand = self.hand_cards
        if up:
            hand.up_cards.add(card)
        elif card in hand.up_cards:
            hand.up_cards.discard(card)
            if hand.deal.complete and not hand.seats[seat].folded:
                self.irregularities.report("stud_up_cards_mixed", DEAD_HAND, seats=[seat], zone=zone,
                                           needs_floor=True, public={"code": "stud_up_cards_mixed", "zone": zone,
                                                                     "card": card}, secret={})

    def _third_street_card(self, card: str, seat: int, zone: str, up: bool) -> None:
        hand = self.hand_cards
        count = len(hand.seats[seat].cards) + 1
        if up:
            hand.up_cards.add(card)
        fresh = card not in hand.owner and hand.deal.holds(card) is None
        if fresh and up != face_due(count) and count <= THIRD_STREET_CARDS and not hand.seats[seat].folded:
            if up:  # a down card dealt face up
                ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
                self.irregularities.report("stud_first_cards_up", ruling, seats=[seat], zone=zone,
                                           needs_floor=ruling == MISDEAL, rules=rules,
                                           public={"code": "stud_first_cards_up", "zone": zone, "card": card,
                                                   "street": STREETS[0]}, secret={})
            else:
                self._up_card_down(card, seat, zone, STREETS[0])
        self.deal.seat_card(card, seat, zone)
        if hand.deal.complete and not hand.void:
            self._third_street_over()

    def _third_street_over(self) -> None:
        """Third street is out: who brings it in, from each live seat's door card (a door card dealt down and not
        yet turned up shows nothing)."""
        hand, game = self.hand_cards, self.game
        assert game is not None  # (a stud hand)
        self.order = rotate(hand.deal.received, hand.deal.button)
        doors = {seat: up[0] for seat in hand.live_seats()
                 if (up := [c for c in hand.seats[seat].cards if c in hand.up_cards])}
        if doors:
            seat = bring_in_seat(doors, game)
            self.out.publish(StudOpener(STREETS[0], seat, BRING_IN_RULES[game], card=doors[seat]))

    def _later_card(self, card: str, seat: int, zone: str, up: bool, burns: list[str]) -> None:
        """A card of fourth to seventh street. A burned or mucked card is dealt again only from an exhausted deck
        (the discards shuffled)."""
        hand = self.hand_cards
        irregular = self.irregularities.irregular
        if card in hand.owner and not hand.seats[hand.owner[card]].folded:
            irregular("hole_card_moved", zone, card, seat=seat, from_seat=hand.owner[card])
            return
        if (card in hand.owner or card in burns or card in hand.mucked) and self.cards_left(burns) > 0:
            irregular("played_card_to_seat", zone, card, seat=seat)
            return
        if card in self.misplaced:  # the dealer moved a card given to the wrong seat
            ident = self.misplaced.pop(card)
            if seat in self.due:
                self.irregularities.resolved(ident, FIXED)
                self._give(card, seat, up)
            return
        if hand.seats[seat].folded or not hand.seats[seat].cards:
            irregular("card_to_folded_seat", zone, card, seat=seat)
            return
        if not self.due:
            if self.street >= 7:
                hand.retire(card, "extra")
                irregular("extra_hole_card", zone, card, seat=seat)
                return
            self.street += 1
            hand.stud_street = STREETS[self.street - 3]
            hand.new_street()
            self.due = [s for s in self.order if s in hand.live_seats()]
        if seat not in self.due:
            self.misplaced[card] = self.irregularities.report(
                "stud_card_wrong_seat", NO_RULING, seats=[seat, self.due[0]], cards=[card], zone=zone,
                extra={"street": STREETS[self.street - 3], "due": list(self.due)})
            hand.retire(card, "extra")
            return
        if up != (self.street <= 6):
            if up:
                self.irregularities.report("stud_down_card_up", PLAY_ON, seats=[seat], zone=zone,
                                           public={"code": "stud_down_card_up", "zone": zone, "card": card,
                                                   "street": STREETS[self.street - 3]}, secret={})
            else:
                self._up_card_down(card, seat, zone, STREETS[self.street - 3])
        self._give(card, seat, up)

    def _up_card_down(self, card: str, seat: int, zone: str, street: str) -> None:
        self.irregularities.report("stud_up_card_down", PLAY_ON, seats=[seat], cards=[card], zone=zone,
                                   extra={"street": street})

    def _give(self, card: str, seat: int, up: bool) -> None:
        hand = self.hand_cards
        hand.retired.pop(card, None)
        if up:
            hand.up_cards.add(card)
        self.due.remove(seat)
        self.out.publish(CardDealt(seat, hand.give(card, seat), card, up, STREETS[self.street - 3]))
        if not self.due:
            self._street_over()

    def _street_over(self) -> None:
        """A later street is out: who acts first, from the cards each live seat shows."""
        hand, game = self.hand_cards, self.game
        assert game is not None  # (a stud hand)
        live = [s for s in self.order if s in hand.live_seats()]
        if len(live) < 2:
            return
        showing = {s: [c for c in hand.seats[s].cards if c in hand.up_cards] for s in live}
        seat = first_to_act(showing, game, self.order)
        street = STREETS[self.street - 3]
        # an open pair on fourth street: the house may allow the big bet (the chip layer asks its rules)
        open_pair = street == STREETS[1] and big_bet_allowed_on_fourth(showing, game, house_allows=True)
        self.out.publish(StudOpener(street, seat, FIRST_TO_ACT_RULES[game], open_pair=open_pair))

    # ---- the board ----------------------------------------------------------------------------------

    def cards_left(self, burns: list[str]) -> int:
        """The deck's cards not yet seen this hand: neither dealt, burned, mucked nor set aside."""
        hand = self.hand_cards
        seen = set(hand.owner) | set(hand.mucked) | set(hand.retired) | set(burns)
        return len(FULL_DECK) - len(seen)

    def board_card(self, card: str, burns: list[str]) -> None:
        """A card on the board in a stud hand: the community card, when seventh street cannot give each live seat
        a card of its own; anything else is a card with no place in the game."""
        hand = self.hand_cards
        if card == self.community:
            return
        owner = hand.owner.get(card)
        if owner is not None and not hand.seats[owner].folded:
            self.irregularities.irregular("hole_card_on_board", "board", card, seat=owner)
            return
        live = [s for s in self.order if s in hand.live_seats()]
        seventh = self.street == 6 and not self.due or self.street == 7 and self.due == live
        left = self.cards_left(burns)  # the unseen cards, this one among them unless it was dealt again
        fresh = owner is None and card not in burns and card not in hand.mucked
        if self.community is None and seventh and left < len(live) and (fresh or left == 0):
            self.irregularities.report("deck_short", PLAY_ON, seats=[], zone="board",
                                       extra={"cards_left": left, "live_seats": live})
            self.community = card
            self.street, self.due = 7, []
            hand.stud_street = STREETS[-1]
            hand.new_street()
            self.out.publish(BoardCard(card, STREETS[-1], 1))
            self._street_over()
            return
        self.irregularities.irregular("board_card_in_stud", "board", card, public_card=True)
