"""The deal as it happens: each card that reaches a seat checked against the dealing order (``controller.dealing.Deal``:
one card per eligible seat per round, from the first seat left of the button, ``hole_cards`` rounds), and the rulings
when it goes wrong — a card to the wrong seat, dealt over or moved on, a player dealt out, an extra card, a seat short
of cards, a button in the wrong place — each a misdeal while one can still be called (``controller.misdeals``).

Cards read a moment late are put back in the order they were dealt: what waits for them is decided in ``decide_*``
once the read-order window has passed (``controller.dealing.ReadWindows``: the windows follow the pace of the
table's card readers). A board card while the deal is still running is the deal's concern before the board's
(``holds_board_card``): it was turned too early unless the missing cards were only read late, and the deal hands it
to the board (``controller.board``) the moment its last card comes.
"""

from __future__ import annotations

import math
from typing import Sequence

from controller.board import Board
from controller.dealing import (
    BURN_CARD,
    DEAD_HAND,
    FIXED,
    MISDEAL,
    MISDEAL_UNLESS_FIXED,
    PLAY_ON,
    Held,
    ReadWindows,
)
from controller.events import CardDealt
from controller.hand_cards import HandCards
from controller.irregularities import Irregularities
from controller.misdeals import Misdeals
from controller.outbox import Outbox
from controller.rules import RuleProfile
from hal.zone_names import Zone


class DealRulings:
    def __init__(self, out: Outbox, irregularities: Irregularities, hand_cards: HandCards, board: Board,
                 misdeals: Misdeals, profile: RuleProfile, hole_cards: int, max_players: int = 10,
                 limit_rules: tuple[str, ...] = (), windows: ReadWindows = ReadWindows()):
        self.out = out
        self.irregularities = irregularities
        self.hand_cards = hand_cards
        self.board = board
        self.misdeals = misdeals
        self.profile = profile
        self.hole_cards = hole_cards
        self.max_players = max_players  # the most players the variant deals in (CA GR 15)
        self.limit_rules = list(limit_rules)
        self.windows = windows  # how long cards read late are allowed for, at the card readers' pace
        self.new_hand()

    def new_hand(self) -> None:
        # Decided once the read-order window has passed (a card read late may still come):
        self.early_board: list[str] = []  # board cards while the deal was not complete
        self._early_since = 0.0
        self._close_due: float | None = None  # a burn or a fold while the deal was not complete

    # ---- a card to a seat ---------------------------------------------------------------------------

    def seat_card(self, card: str, seat: int, zone: str) -> None:
        """A card reached a seat during a hand."""
        hand = self.hand_cards
        irregular = self.irregularities.irregular
        owner = hand.owner.get(card)
        if owner == seat:
            return  # the player put the card back down after looking at it
        held = hand.deal.holds(card)
        if held is not None and held.seat == seat:
            return
        if owner is not None:
            irregular("hole_card_moved", zone, card, seat=seat, from_seat=owner)
            return
        if card in self.board.cards or card in self.board.burns or card in hand.mucked or card in hand.retired:
            irregular("played_card_to_seat", zone, card, seat=seat)
            return
        place = hand.seats[seat]
        deal = hand.deal
        fixing = deal.fix is not None and seat == deal.expected()
        if self.board.cards and not fixing:
            irregular("hole_card_after_board", zone, card, seat=seat)
        elif place.folded:
            irregular("card_to_folded_seat", zone, card, seat=seat)
        else:
            self.deal_card(card, seat, zone)

    def deal_card(self, card: str, seat: int, zone: str) -> None:
        """A fresh card reached a seat: check it against the dealing order."""
        deal = self.hand_cards.deal
        report = self.irregularities.report
        if deal.held:
            if self._read_order(card, seat, zone):
                return
            if self.hand_cards.void:
                return
        if not deal.checking:
            self._loose_card(card, seat, zone)
            return
        if deal.order is None:  # learning: the players are not known yet, this deal is taken as dealt and learned
            if seat not in deal.received and len(deal.received) >= self.max_players:
                # more players than the variant allows (CA GR 15): the deck does not hold their cards and the board
                ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
                self._freeze(report("card_to_ineligible_seat", ruling, seats=[seat], cards=[card], zone=zone,
                                    needs_floor=True, rules=rules + self.limit_rules,
                                    extra={"max_players": self.max_players}))
            deal.arrivals.append(seat)
            self._loose_card(card, seat, zone)
            return
        expected = deal.expected()
        if deal.first_late is not None and deal.position == len(deal.order) and seat != expected:
            if seat == deal.first_late:  # the first card of each round at the same wrong seat: not a late read
                dealt_button = deal.order[deal.order.index(seat) - 1]
                ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
                self._freeze(report("button_misplaced", ruling, seats=[seat], cards=[card], zone=zone,
                                    needs_floor=True, rules=rules,
                                    extra={"button": deal.button, "dealt_from_button": dealt_button},
                                    data={"dealt_button": dealt_button}))
                self._loose_card(card, seat, zone)
                return
        if deal.first_late is not None and deal.position == len(deal.order) and seat == expected and deal.checking:
            # the second round starts where it should: the deal's first card went to seat first_late a moment
            # before the card due first (PP Misdeals 1h; AC 30c), or that card was read late — the readers cannot
            # tell, the floor rules (an override keeps the button)
            late, deal.first_late = deal.first_late, None
            ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
            self._freeze(report("first_card_wrong_seat", ruling, seats=[late, deal.order[0]],
                                zone=Zone("cards", late).name, needs_floor=True, rules=rules,
                                extra={"button": deal.button, "read_order": "uncertain"},
                                data={"dealt_button": deal.button}))
        if expected is None:
            self._extra_card(card, seat, zone)
            return
        if seat == expected:
            self._accept(card, seat)
            if deal.fix is not None and not deal.queue:
                self.irregularities.resolved(deal.fix, FIXED)
                deal.await_fix(None)
            return
        if deal.fix is not None:
            self.fix_failed()
            if self.hand_cards.void:
                return
            self._loose_card(card, seat, zone)
            return
        assert deal.order is not None
        if seat not in deal.order:
            ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
            self._freeze(report("card_to_ineligible_seat", ruling, seats=[seat], cards=[card], zone=zone,
                                needs_floor=True, rules=rules))
            self._accept(card, seat)
            return
        deal.held.append(Held(card, seat, expected, first=deal.position == 0, t=self.out.now))
        deal.positions[card] = deal.position
        deal.position += 1

    def _read_order(self, card: str, seat: int, zone: str) -> bool:
        """A card while others wait ahead of their turn. The card due now, soon after them: the reader saw them in
        another order than they were dealt — read late (within ``read_late_s``, by far the likelier), or the first
        of them pitched to the wrong seat a moment before, which the floor rules. Another card ahead of its turn:
        it waits too. Anything else: the first of them was dealt to the wrong seat. True when ``card`` has been
        placed."""
        deal = self.hand_cards.deal
        now = self.out.now
        soon = now - deal.held[0].t <= self.windows.read_order_s
        if deal.holds(card) is None and soon:
            if seat == deal.expected():
                first = deal.held[0]
                if first.first:  # if the second round starts there too, the deal followed another button
                    deal.first_late = first.seat
                elif deal.checking and now - first.t > self.windows.read_late_s:
                    # read late, or pitched to the wrong seat a moment before: the readers cannot tell, the floor rules
                    self._out_of_sequence(first, uncertain_s=now - first.t)
                self._accept(card, seat)
                while (due := next((h for h in deal.held if h.seat == deal.expected()), None)) is not None:
                    deal.held.remove(due)
                    self._accept(due.card, due.seat)
                if deal.held and (due_now := deal.expected()) is not None:
                    # still ahead of their turn: they wait for the cards due before them (a seat is due: theirs)
                    deal.held[0].expected = due_now
                    deal.held[0].first = False
                return True
            if deal.ahead(seat) and (due_now := deal.expected()) is not None:  # (ahead: a seat is due)
                deal.held.append(Held(card, seat, due_now, first=False, t=now))
                deal.positions[card] = deal.position
                deal.position += 1
                return True
        held, *rest = deal.take_held()
        if rest and card != held.card:  # the card after the first one shows what happened to it
            consumed = False
            self._decide_held(held, rest[0].card, rest[0].seat)
        else:
            consumed = self._decide_held(held, card, seat)
        for other in rest:
            if self.hand_cards.void:
                break
            self.deal_card(other.card, other.seat, Zone("cards", other.seat).name)
        return consumed

    def _decide_held(self, held: Held, card: str, seat: int) -> bool:
        """The card after a card to the wrong seat shows what happened. True when ``card`` was the held card
        itself (it has been placed now)."""
        deal = self.hand_cards.deal
        report = self.irregularities.report
        assert deal.order is not None
        if held.first:
            moved = card == held.card
            order = deal.order
            start = order.index(held.seat)
            rotated = order[start:] + order[:start]
            if not moved and len(rotated) > 1 and seat == rotated[1]:
                dealt_button = rotated[-1]
                ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
                ident = report("button_misplaced", ruling, seats=[held.seat], cards=[held.card],
                               zone=Zone("cards", held.seat).name, needs_floor=True, rules=rules,
                               extra={"button": deal.button, "dealt_from_button": dealt_button},
                               data={"dealt_button": dealt_button})
            else:
                ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
                ident = report("first_card_wrong_seat", ruling, seats=[held.seat, held.expected],
                               cards=[held.card], zone=Zone("cards", held.seat).name, needs_floor=True, rules=rules,
                               extra={"button": deal.button}, data={"dealt_button": order[start - 1]})
            self._freeze(ident)
            self._accept(held.card, seat if moved else held.seat)
            return moved
        if card == held.card:  # the dealer moved the card on
            if seat == held.expected:
                report("card_out_of_sequence", FIXED, seats=[held.seat, held.expected], cards=[held.card],
                       zone=Zone("cards", seat).name)
                self._accept(card, seat)
                return True
            self._out_of_sequence(held, also=[seat])
            if not self.hand_cards.void:
                self._accept(card, seat)
            return True
        due = held.expected
        others = [s for s in deal.queue if s != due]
        if deal.received.get(due, 0) == 0 and len(others) >= 2 and held.seat == others[0] and seat == others[1]:
            ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
            self._freeze(report("player_dealt_out", ruling, seats=[due], zone=Zone("cards", held.seat).name,
                                needs_floor=True, rules=rules))
            deal.queue = others
            self._accept(held.card, held.seat)
            return False
        if seat == due and deal.received.get(held.seat, 0) > deal.received.get(due, 0):
            self._extra_card(held.card, held.seat, Zone("cards", held.seat).name, counted=True)
            return False
        self._out_of_sequence(held, also=[seat] if seat not in (held.seat, due) else [])
        if not self.hand_cards.void:
            self._accept(held.card, held.seat)
        return False

    def _out_of_sequence(self, held: Held, also: Sequence[int] = (), uncertain_s: float | None = None) -> None:
        """A card dealt to the wrong seat and dealt over: a misdeal (PP Misdeals 1f); after substantial action
        the hands with the wrong number of cards are dead. The proper sequence is the table's idea of the seats and
        the button, which a change of players can make wrong: the floor confirms. ``uncertain_s``: the card due
        came this soon after it, within the time a late read takes, so the readers cannot tell a card pitched to
        the wrong seat from one read late (``read_order: uncertain``)."""
        seats = [held.seat, held.expected] + [s for s in also if s not in (held.seat, held.expected)]
        ruling, rules = self.misdeals.misdeal_or(DEAD_HAND)
        extra = {"read_order": "uncertain", "gap_s": round(uncertain_s, 2)} if uncertain_s is not None else None
        self._freeze(self.irregularities.report("card_out_of_sequence", ruling, seats=seats, cards=[held.card],
                                                zone=Zone("cards", held.seat).name, needs_floor=True, rules=rules,
                                                extra=extra, data={"dead": [held.seat, held.expected]}))

    def _accept(self, card: str, seat: int) -> None:
        hand = self.hand_cards
        hand.deal.take(seat, card)
        count = hand.give(card, seat)
        if hand.stud_street is None:
            self.out.publish(CardDealt(seat, count, card))
        else:  # a stud hand's third street: the antenna it lies on says up or down
            self.out.publish(CardDealt(seat, count, card, card in hand.up_cards, hand.stud_street))
        if hand.deal.complete:  # the cards read late are in: nothing was early
            self._close_due = None
            cards, self.early_board = self.early_board, []
            for early in cards:  # the board takes them now, in the order they came, before anything else happens
                if self.board.arrives(early):
                    self.board.turn(early)

    def _loose_card(self, card: str, seat: int, zone: str) -> None:
        """A card while the order is no longer checked (ruled or overridden): counted as dealt, up to the seat's
        share. Beyond it, while the floor looks at the deal, the card follows from the error it looks at."""
        hand = self.hand_cards
        if len(hand.seats[seat].cards) < hand.deal.hole_cards:  # the hand's game's
            self._accept(card, seat)
        elif self.irregularities.waiting(hand.deal.frozen_by) is not None:
            hand.retire(card, "extra")
            hand.deal.position += 1
        else:
            self._extra_card(card, seat, zone)

    def _freeze(self, ident: int) -> None:
        """The floor rules on the deal: the order is no longer checked."""
        self.hand_cards.deal.stop_checks(frozen_by=ident)

    def _extra_card(self, card: str, seat: int, zone: str, counted: bool = False) -> None:
        """A card beyond a seat's share: one becomes a burn card (PP Irregularities 11), two or more are a misdeal
        (CA GR 9a; PP Misdeals 1d); after substantial action the seat's hand is dead (PP Dead hands 1d; TDA 1-B)."""
        deal = self.hand_cards.deal
        deal.extra += 1
        if not counted:
            deal.positions.setdefault(card, deal.position)
            deal.position += 1
        self.hand_cards.retire(card, "extra")
        rules: list[str] = []
        if self.misdeals.substantial():
            ruling, rules = DEAD_HAND, [self.profile.cite("substantial_action"), "PP Dead hands 1d", "TDA example 1-B"]
        elif deal.extra >= 2:
            ruling, rules = MISDEAL, [self.profile.cite("substantial_action")]
        else:
            ruling = BURN_CARD
        ident = self.irregularities.irregular("extra_hole_card", zone, card, ruling=ruling, rules=rules, seat=seat)
        if ruling == MISDEAL:
            self.misdeals.call("extra_hole_card", self.irregularities.rules_of(ident), ident)
        elif ruling == DEAD_HAND:
            self.hand_cards.kill(seat)

    # ---- the end of the deal ------------------------------------------------------------------------

    def close_soon(self) -> None:
        """A burn or a fold while cards are still due: the betting has begun, so the deal is over — once a card
        read late would have come."""
        deal = self.hand_cards.deal
        if not deal.complete and (deal.checking or deal.held) and self._close_due is None:
            self._close_due = self.out.now + self.windows.read_order_s

    def close(self) -> None:
        """The deal is over (a burn card, a fold, the end of the hand) while cards were still due."""
        deal = self.hand_cards.deal
        report = self.irregularities.report
        if deal.held:
            held, *rest = deal.take_held()
            if held.first:
                ruling, rules = self.misdeals.misdeal_or(PLAY_ON)
                order = deal.order or [held.seat]
                start = order.index(held.seat) if held.seat in order else 0
                self._freeze(report("first_card_wrong_seat", ruling, seats=[held.seat, held.expected],
                                    cards=[held.card], zone=Zone("cards", held.seat).name, needs_floor=True,
                                    rules=rules, extra={"button": deal.button},
                                    data={"dealt_button": order[start - 1]}))
                self._accept(held.card, held.seat)
            else:
                self._out_of_sequence(held)
                if not self.hand_cards.void:
                    self._accept(held.card, held.seat)
            if self.hand_cards.void:
                return
            for other in rest:
                self._loose_card(other.card, other.seat, Zone("cards", other.seat).name)
        if deal.fix is not None:
            self.fix_failed()
            return
        if not deal.checking or deal.learning or not deal.queue:
            return
        short = list(dict.fromkeys(deal.queue))
        if self.misdeals.substantial():
            report("wrong_card_count", DEAD_HAND, seats=short, rules=[self.profile.cite("substantial_action")])
            deal.queue = []
            self.hand_cards.kill(*short)
        else:
            deal.await_fix(report("wrong_card_count", MISDEAL_UNLESS_FIXED, seats=short,
                                  rules=[self.profile.cite("substantial_action")]))

    def fix_failed(self) -> None:
        """The short seats did not get the next cards: misdeal (PP Misdeals 1e), or dead hands after substantial
        action."""
        deal = self.hand_cards.deal
        ident = deal.fix
        deal.await_fix(None)
        assert ident is not None
        if self.misdeals.substantial():
            short = list(dict.fromkeys(deal.queue))
            deal.queue = []
            self.hand_cards.kill(*short)
            self.irregularities.resolved(ident, DEAD_HAND, seats=short)
        else:
            self.misdeals.call("wrong_card_count", self.irregularities.rules_of(ident), ident)

    # ---- a board card during the deal ---------------------------------------------------------------

    def holds_board_card(self, card: str) -> bool:
        """A card the board would turn (``Board.arrives``) while the deal is not over: True when the deal keeps it —
        turned too early, unless the missing cards were only read late (decided in ``early_board_due``) — or its
        arrival voided the hand (the short seats did not get the next cards); False when the board turns it."""
        deal = self.hand_cards.deal
        if deal.complete or self.hand_cards.retired.get(card):
            return False
        if deal.fix is not None:
            self.fix_failed()
            return self.hand_cards.void
        if deal.checking or deal.held:
            if not self.early_board:
                self._early_since = self.out.now
            if card not in self.early_board:
                self.early_board.append(card)
            return True
        return False

    def taken_back(self, card: str) -> bool:
        """A card left the board: True when it was a card turned before the deal was over (back to the stub)."""
        if card in self.early_board:
            self.early_board.remove(card)
            return True
        return False

    # ---- what waits for a moment --------------------------------------------------------------------

    def next_due(self) -> float:
        """The earliest time one of the ``decide_*`` calls below can decide something: -inf while a wrong card
        count waits (it is decided by the betting's progress, not by time), inf when nothing waits."""
        deal = self.hand_cards.deal
        if deal.fix is not None:
            return -math.inf
        due = math.inf
        if len(deal.held) > 1:
            due = deal.held[0].t + self.windows.read_order_s
        if self.early_board:
            due = min(due, self._early_since + self.windows.read_order_s)
        if self._close_due is not None:
            due = min(due, self._close_due)
        return due

    def decide_held(self, now: float) -> None:
        """The cards due first did not come within the read-order window of the cards held ahead of their turn."""
        deal = self.hand_cards.deal
        if len(deal.held) > 1 and now - deal.held[0].t >= self.windows.read_order_s:
            held, *rest = deal.take_held()
            self._decide_held(held, rest[0].card, rest[0].seat)
            for other in rest:
                if not self.hand_cards.void:
                    self.deal_card(other.card, other.seat, Zone("cards", other.seat).name)

    def early_board_due(self, now: float) -> list[str]:
        """Board cards turned while the deal did not complete within the read-order window: turned too early (the
        board's premature cards); no longer the deal's."""
        if not (self.early_board and now - self._early_since >= self.windows.read_order_s):
            return []
        cards, self.early_board = self.early_board, []
        return cards

    def decide_close(self, now: float) -> None:
        deal = self.hand_cards.deal
        if self._close_due is not None and now >= self._close_due:
            self._close_due = None
            if not self.hand_cards.void and not deal.complete and (deal.checking or deal.held):
                self.close()

    def decide_fix(self) -> None:
        if self.hand_cards.deal.fix is not None and not self.hand_cards.void and self.misdeals.substantial():
            self.fix_failed()  # substantial action came before the short seats' cards: their hands are dead
