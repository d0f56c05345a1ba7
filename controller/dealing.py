"""The deal and its irregularities: who gets the next card, and how a house rules what went wrong.

The card controller (``controller.table``) feeds the cards; this module knows

* the dealing order (:class:`Deal`): one card per eligible seat per round, starting left of the button, as many
  rounds as the variant has hole cards, and what is still due after exposures and replacements;
* the catalogue of irregularities (:data:`CODES`): for each code the situation, the rules of the table's sources
  (``shared/rules/``, digested in docs/rules.md section 1) and its default severity;
* the rulings (:data:`RULINGS`) and how severe each is.

Nothing here knows a profile by name: rulings that differ between houses read a field of
:class:`controller.rules.RuleProfile` (``exposed_hole_card``, ``missing_flop_burn``, ``substantial_action``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from controller.events import CardDealt, FloorRuling, IrregularCard, IrregularityResolved

# ---- severities and rulings ---------------------------------------------------------------------------

INFO, WARNING, STOP = "info", "warning", "stop"
SEVERITIES = (INFO, WARNING, STOP)

# What follows from an irregularity (the ``ruling`` of an ``irregular_card`` event).
MISDEAL = "misdeal"  # the hand is void: bets go back, the button stays, the cards are dealt again
MISDEAL_UNLESS_FIXED = "misdeal_unless_fixed"  # fixable now by the next card(s); otherwise a misdeal
FIXED = "fixed"  # the dealer put it right before another card was dealt
BURN_CARD = "burn_card"  # the card becomes a burn card
REPLACE_CARD = "replace_card"  # the card is not used: the next card replaces it
DEAD_HAND = "dead_hand"  # the hands of ``seats`` are dead; play continues
PLAY_ON = "play_on"  # play continues as dealt
PASSIVE_HAND = "passive_hand"  # the hand of ``seats`` plays on, but may only check, call or fold (AC 50, CA Actions 10)
RETURN_AND_REDEAL = "return_and_redeal"  # premature cards go back, are reshuffled face down and dealt again
FLOOR_PICKS_BURN = "floor_picks_burn"  # TDA 39: the cards are mixed face down, the floor picks the burn
ACTION_STANDS = "action_stands"  # a stray card outside the play (stub, discards): remove it, the hand goes on
REMOVE_CARD = "remove_card"  # outside a hand: take the card off the table
NO_RULING = "none"  # reported for the record; no rule applies

RULINGS = {
    MISDEAL: STOP,
    MISDEAL_UNLESS_FIXED: WARNING,
    FIXED: INFO,
    BURN_CARD: WARNING,
    REPLACE_CARD: WARNING,
    DEAD_HAND: WARNING,
    PASSIVE_HAND: WARNING,
    PLAY_ON: INFO,
    RETURN_AND_REDEAL: WARNING,
    FLOOR_PICKS_BURN: WARNING,
    ACTION_STANDS: WARNING,
    REMOVE_CARD: WARNING,
    NO_RULING: WARNING,
}


@dataclass(frozen=True)
class Code:
    """One kind of irregularity: what happened, and the rules that say what follows (as docs/rules.md cites them)."""

    situation: str
    rules: tuple[str, ...] = ()
    severity: str | None = None  # fixed severity; None: the ruling's (RULINGS), ``stop`` when the floor must rule


CODES: dict[str, Code] = {
    # -- the codes the controller always had (cards where the game does not expect them) --
    "card_outside_hand": Code("a card on the board, burn or muck zone while no hand runs", (), INFO),
    "extra_hole_card": Code("a seat receives a card beyond its share: one extra card becomes a burn card, two or "
                            "more are a misdeal; after substantial action the hand is dead",
                            ("PP Irregularities 11", "CA GR 9a", "PP Misdeals 1d")),
    "card_to_folded_seat": Code("a card reaches a seat that has folded or whose hand is dead"),
    "hole_card_after_board": Code("a card reaches a seat after the board was started"),
    "hole_card_moved": Code("a seat's hole card turns up at another seat", ("PP Dead hands 3",)),
    "played_card_to_seat": Code("a board, burn, mucked, exposed or returned card reaches a seat"),
    "hole_card_on_board": Code("a hole card turns up on the board"),
    "hole_card_burned": Code("a hole card turns up on the burn zone"),
    "board_card_burned": Code("a board card turns up on the burn zone"),
    "burn_card_on_board": Code("a burn card is turned on the board (it is part of the board now: an exposed card "
                               "can no longer be burned)", ("DE 3",)),
    "extra_board_card": Code("a sixth board card"),
    "unseen_card_mucked": Code("a card that was never dealt this hand reaches the muck", (), INFO),
    "card_in_chip_zone": Code("a card on a betting or pot zone"),
    # -- the deal --
    "first_cards_exposed": Code("the first or second card of the deal is exposed",
                                ("CA GR 9c", "PP Misdeals 1a", "AC 30a")),
    "cards_exposed": Code("a second card exposed by the dealer during the deal", ("PP Misdeals 1b", "AC 30b")),
    "hole_card_exposed": Code("a later hole card exposed during the deal (the house decides: it becomes the flop's "
                              "burn card and is replaced after the deal, or it is replaced at once); after the "
                              "deal, a card the player shows plays, is passive or is folded, as the house says "
                              "(shown_hole_card)"),
    "wrong_card_count": Code("the deal moved on while seats still lacked cards: fixable while they are next in the "
                             "dealing order; after substantial action their hands are dead",
                             ("PP Misdeals 1e", "PP Dead hands 1d", "TDA example 1-A")),
    "card_out_of_sequence": Code("a card reached an eligible seat that was not next in the dealing order: fixed if "
                                 "it is moved to the right seat before another card is dealt, else a misdeal; with "
                                 "the card due a moment after it the readers cannot tell it from a late read "
                                 "(read_order uncertain): the floor rules",
                                 ("PP Misdeals 1e", "PP Misdeals 1f")),
    "first_card_wrong_seat": Code("the first card of the deal reached a seat that is not the first left of the "
                                  "button", ("PP Misdeals 1h", "AC 30c")),
    "button_misplaced": Code("the deal started consistently from another seat than the button's: the button was in "
                             "the wrong position", ("PP Misdeals 1g", "PP Irregularities 1")),
    "card_to_ineligible_seat": Code("a card reached an empty seat or a player not dealt in this hand",
                                    ("PP Misdeals 1i", "AC 30d")),
    "player_dealt_out": Code("an eligible player was dealt out (the deal went on around the seat)",
                             ("CA GR 9b", "PP Misdeals 1j", "AC 30e")),
    "boxed_card": Code("a card found face up in the deck: not used, replaced by the next card; a second one in the "
                       "same deal is a misdeal", ("PP Irregularities 7", "PP Misdeals 1c")),
    # -- the stud deal (controller.stud_deal) --
    "stud_first_cards_up": Code("a stud seat's first or second card dealt face up on third street (on its up-card "
                                "antenna): a misdeal while one can still be called, the floor confirms",
                                ("PP Misdeals 1a", "CA GR 9c", "AC 30a")),
    "stud_up_card_down": Code("a stud up card (third to sixth street) dealt face down: the card plays; the rule books "
                              "name no remedy"),
    "stud_down_card_up": Code("seventh street's card dealt face up: the card plays as it lies; the rule books name no "
                              "remedy, and after action no misdeal", ("PP Misdeals 2",)),
    "stud_card_wrong_seat": Code("a later street's card at a seat that had its card while another is due one: fixed "
                                 "when the dealer moves it to the seat due it", ("PP Misdeals 1e",)),
    "stud_up_cards_mixed": Code("a stud player's up card moved onto the down cards: a dead hand when facing a bet, "
                                "the floor confirms", ("PP Dead hands 1c",)),
    "deck_short": Code("seventh street: the deck cannot give each live seat a card; the card on the board is the "
                       "community card, shared by every live hand", (), INFO),
    "board_card_in_stud": Code("a card on the board in a stud hand while the deck is not short: no place in the "
                               "game, the floor decides"),
    # -- the board --
    "premature_board_card": Code("a board card turned before the betting round was over (or before the deal was): "
                                 "returned, reshuffled face down and dealt again",
                                 ("DE 3", "PP Irregularities 15", "TDA 39-3", "AC 32")),
    "four_card_flop": Code("four cards turned for the flop (a fourth card with no burn before it and no action on "
                           "the flop): mixed face down, the floor picks the burn at random, the other three are the "
                           "flop", ("TDA 39-1", "AC 32")),
    "flop_without_burn": Code("a flop turned without a burn card before it: the floor picks the burn among the "
                              "three (TDA 39-2), or the round is played on (DE 3), as the house says"),
    "missing_burn": Code("the turn or the river turned without a burn card: play goes on", ("DE 3",), INFO),
    # -- the deck --
    "foreign_card": Code("a card of another registered deck (a different back): in play, all action is void; in "
                         "the stub or the discards, the action stands", ("PP Irregularities 3",)),
    "duplicate_card": Code("two cards of the same rank and suit in play: all action is void",
                           ("PP Irregularities 4",)),
    # -- the hand's cards (docs/rules.md has no rule: the table rules nothing, the dealer or the floor decides) --
    "card_missing": Code("a card of the hand stayed off every antenna for missing_card_s while the hand went on "
                         "(taken off the table, hidden, fallen): no rule, the floor decides", (), WARNING),
}

# Codes the controller reported before it ruled on them: their events keep ``zone``, ``seat``, ``from_seat`` and
# ``card`` as they were (a face-up card public, otherwise secret).
LEGACY_CODES = ("card_outside_hand", "extra_hole_card", "card_to_folded_seat", "hole_card_after_board",
                "hole_card_moved", "played_card_to_seat", "hole_card_on_board", "hole_card_burned",
                "board_card_burned", "burn_card_on_board", "extra_board_card", "unseen_card_mucked",
                "card_in_chip_zone")


def severity_of(code: str, ruling: str, needs_floor: bool) -> str:
    fixed = CODES[code].severity
    if fixed is not None and ruling in (NO_RULING, PLAY_ON):
        return fixed
    if needs_floor or ruling == MISDEAL:
        return STOP
    return RULINGS[ruling]


# ---- cards read late ----------------------------------------------------------------------------------

# The readers settle a card after a few reads, and missed reads delay it: cards pitched a fraction of a second apart
# can reach the controller in another order. The deal's rulings allow for that with two windows (``ReadWindows``),
# which follow the pace of the readers of the card zones; these are the reference reader's (a pass over its antennas
# 20 times a second), and no table's windows are shorter.
READ_ORDER_S = 1.5  # thirty of its passes: room for missed reads with RF noise and link faults (up to a second)
MIN_PITCH_GAP_S = 0.15  # half a fast dealer's pitch, three of its passes
READ_ORDER_HELD = 9  # at most this many cards wait ahead of their turn (a full ring of ten, less one)


@dataclass(frozen=True)
class ReadWindows:
    """How long the deal's rulings allow for cards read late (docs/events.md, "How the table knows the deal").

    ``read_order_s``: a card ahead of its turn in the round waits this long for the cards due before it (when they
    come, nothing was wrong), and what depends on the order of cards of different zones — a board card, a burn or a
    fold while the deal is not complete, a burn missing before a street, a fourth flop card — is decided once this
    long has passed.

    ``read_late_s``: a card due that comes this soon after the card ahead of its turn was read late, and the deal goes
    on in order: had the card ahead of its turn been pitched out of turn, it would have had to be read late as well
    for the card due to come this soon after it, while the card due read late is enough alone. Later (within
    ``read_order_s``) the readers cannot tell a card pitched to the wrong seat and dealt over from the card due read
    late, and the floor rules (PP Misdeals 1f, ``read_order: uncertain``).
    """

    read_late_s: float = MIN_PITCH_GAP_S
    read_order_s: float = READ_ORDER_S

    @classmethod
    def of(cls, card_pass_s: float, card_reads: int) -> "ReadWindows":
        """The windows of readers whose slowest pass over the card antennas takes ``card_pass_s`` and that settle a
        dealt card after ``card_reads`` reads. A reader visits each antenna once a pass, so a card waits up to a pass
        for its first read, by where the pass is when it lands, and one pass for each further read:

        * ``read_late_s``, one pass at least: two cards that land within a pass of each other can be read in either
          order (the further reads take as many passes for both): the reader cannot tell which landed first.
          A card pitched out of turn within a pass before the card due is taken as read late;
        * ``read_order_s``, ``card_reads`` passes and one more at least: up to a pass to the first read, a pass for
          each further read, and a pass for a read missed on the way.

        The reference reader's pass (0.05 s) keeps both at the constants above."""
        return cls(max(MIN_PITCH_GAP_S, card_pass_s), max(READ_ORDER_S, (card_reads + 1) * card_pass_s))


# A stud hand's deal is its third street: two down cards and one up to each seat (controller.stud_deal); the later
# streets' cards come one at a time, each after a betting round.
THIRD_STREET_CARDS = 3


# ---- seats --------------------------------------------------------------------------------------------

def rotate(seats: Iterable[int], button: int) -> list[int]:
    """``seats`` in dealing order: from the first seat left of (after) ``button``, round the table."""
    ordered = sorted(set(seats))
    after = [s for s in ordered if s > button]
    return after + [s for s in ordered if s <= button]


def next_seat(seats: Iterable[int], after: int) -> int:
    """The first of ``seats`` left of ``after`` (the next button)."""
    order = rotate(seats, after)
    return order[0] if order else after


def big_blind_seat(button: int, seats: Iterable[int], no_small_blind: bool) -> int:
    """Who posts the big blind in a hand dealt to ``seats`` from ``button``: the second left of the button, the first
    in a hand without a small blind (AC 27; DE 9) or heads-up, where the button posts the small blind (DE 13; AC 29)."""
    order = rotate(seats, button)
    return order[0] if len(order) == 2 or no_small_blind else order[1]


# ---- the deal -----------------------------------------------------------------------------------------

@dataclass
class Held:
    """A card that reached a seat it was not due to, waiting for the next card to show what happened: the reader
    saw it before the card due first (the due card follows at once), the dealer moves it on (fixed), deals on
    around a seat (dealt out), gives the due seat its card (an extra card), or deals over it (out of sequence)."""

    card: str
    seat: int  # where it went
    expected: int  # where it should have gone
    first: bool  # the first card of the deal
    t: float = 0.0  # when it arrived


@dataclass
class Deal:
    """The dealing order of one hand and what is still due.

    ``order`` is None while the eligible seats are unknown (the table's first hand with no ``players`` in its
    setup and no ``seats`` command): that deal is taken as dealt, and its order is learned from it afterwards
    (:meth:`learn`) for the next hand.
    """

    hole_cards: int
    button: int
    order: list[int] | None
    queue: list[int] = field(default_factory=list)  # seats due a card, in dealing order
    arrivals: list[int] = field(default_factory=list)  # learning: the seats in the order their cards came
    position: int = 0  # cards dealt so far (the first card of the deal is position 0)
    positions: dict[str, int] = field(default_factory=dict)  # card → its position in the deal
    received: dict[int, int] = field(default_factory=dict)  # seat → cards it received (counting exposed ones)
    held: list[Held] = field(default_factory=list)  # cards ahead of their turn, in the order they came
    checking: bool = True  # the order is checked; False once an irregularity of the deal is ruled or overridden
    fix: int | None = None  # a wrong_card_count waiting for the short seats' cards (its id)
    first_late: int | None = None  # the seat of the deal's first card, when the card due first was read after it
    frozen_by: int | None = None  # the irregularity waiting for the floor that stopped the order checks
    extra: int = 0  # extra cards dealt
    exposed: int = 0  # cards the dealer exposed

    @classmethod
    def plan(cls, hole_cards: int, button: int, eligible: Sequence[int] | None) -> "Deal":
        if eligible:
            order = rotate(eligible, button)
            return cls(hole_cards, button, order, order * hole_cards)
        return cls(hole_cards, button, None)

    @property
    def learning(self) -> bool:
        return self.order is None

    @property
    def complete(self) -> bool:
        """Every card of the deal is out (or the deal was closed)."""
        if self.learning:
            return bool(self.received) and all(n >= self.hole_cards for n in self.received.values())
        return not self.queue and not self.held and self.fix is None

    def expected(self) -> int | None:
        return self.queue[0] if self.queue else None

    def ahead(self, seat: int) -> bool:
        """``seat`` is due one of the next few cards after the seat that is due now (and holds none waiting)."""
        due = self.expected()
        if due is None or seat == due or any(h.seat == seat for h in self.held) or len(self.held) >= READ_ORDER_HELD:
            return False
        return seat in self.queue[1:READ_ORDER_HELD + 1]

    def holds(self, card: str) -> Held | None:
        return next((h for h in self.held if h.card == card), None)

    def count_exposed(self, card: str | None, in_flight: bool, counted: bool) -> int:
        """A card the dealer exposed (``card`` None: one the readers did not see), and its position in the deal.

        During the deal (``in_flight``) it takes its place in the order like any card dealt, unless it was already
        counted as dealt; after the deal only a card the deal placed has a position (else 0)."""
        if in_flight:
            position = self.positions.get(card, self.position) if counted and card else self.position
            if not counted:
                self.position += 1
            if card:
                self.positions.setdefault(card, position)
        else:
            position = self.positions.get(card, 0) if card else 0
        self.exposed += 1
        return position

    def stop_checks(self, frozen_by: int | None = None) -> None:
        """The order is no longer checked: an irregularity of the deal was ruled or overridden, or (``frozen_by``)
        one waits for the floor."""
        self.checking = False
        if frozen_by is not None:
            self.frozen_by = frozen_by

    def abandon(self) -> None:
        """A misdeal: nothing of this deal is checked, fixed or waited for any more."""
        self.checking, self.fix, self.held = False, None, []

    def take_held(self) -> list[Held]:
        """The cards held ahead of their turn, oldest first, handed over to be decided: none wait after this."""
        held, self.held = self.held, []
        return held

    def await_fix(self, ident: int | None) -> None:
        """A wrong card count (its irregularity ``ident``) waits for the short seats' next cards; None: no more."""
        self.fix = ident

    def accept_button(self, button: int) -> None:
        """The floor ruled the deal right: it was dealt from ``button``, whatever the table's button said."""
        self.button = button

    def learn(self) -> None:
        """After a learning deal: the seats dealt are the players, and the dealing order is the rotation of them
        (from the seat left of the button) that fits the order the cards came in best — a card the reader saw a
        moment early or late does not change it."""
        players = sorted(self.received)
        if not players:
            return
        best, fit = players, -1
        for start in players:
            order = [s for s in players if s >= start] + [s for s in players if s < start]
            expected = order * self.hole_cards
            score = sum(1 for got, due in zip(self.arrivals, expected) if got == due)
            if score > fit:
                best, fit = order, score
        self.order = best
        self.button = best[-1]

    def take(self, seat: int, card: str) -> None:
        """``card`` reached ``seat`` as the deal planned (or as it was accepted)."""
        if card not in self.positions:
            self.positions[card] = self.position
            self.position += 1
        self.received[seat] = self.received.get(seat, 0) + 1
        if self.queue and seat in self.queue:
            self.queue.remove(seat)  # the first occurrence: the seat's next due card


class HoleCardsDealt:
    """The hole cards each seat was dealt this hand, as the card controller's ``CardDealt`` says, and when the deal is
    over for the parts that follow it: the chip layer, which begins the betting then, and the conduct rules, which
    judge who was away at the end of the deal. (``Deal.complete`` is the dealing rules' own: every card of the deal's
    plan out.) Each of them keeps one from the card controller's events; the rule is here."""

    __slots__ = ("hole_cards", "counts", "order")

    def __init__(self, hole_cards: int):
        self.hole_cards = hole_cards
        self.counts: dict[int, int] = {}  # seat → the hole cards it holds
        self.order: list[int] = []  # the seats in the order their first card came

    def dealt(self, card: CardDealt) -> None:
        if card.street is not None:  # a stud hand: its deal is over once third street is out
            self.hole_cards = min(self.hole_cards, THIRD_STREET_CARDS)
        if card.seat not in self.counts:
            self.order.append(card.seat)
        self.counts[card.seat] = card.count

    def __bool__(self) -> bool:
        """Whether any card was dealt."""
        return bool(self.counts)

    def first_round_over(self) -> bool:
        """The first seat dealt holds its second card: a betting input now means the betting has begun."""
        return len(self.order) >= 2 and self.counts[self.order[0]] >= 2

    def complete(self) -> bool:
        """Two seats or more were dealt, and every seat dealt holds its hole cards."""
        return len(self.counts) >= 2 and min(self.counts.values()) >= self.hole_cards


def dead_seats(record: object) -> tuple[int, ...]:
    """The seats whose hands an event of the card controller rules dead (``dead_hand``) without waiting for the
    floor: an irregularity ruled so, or resolved so, or the floor's ruling on one, with its ``seats``."""
    if isinstance(record, IrregularCard):
        return record.seats if record.ruling == DEAD_HAND and not record.needs_floor else ()
    if isinstance(record, IrregularityResolved) and record.resolution == DEAD_HAND or (
            isinstance(record, FloorRuling) and record.result == DEAD_HAND):
        return record.seats or ()
    return ()


def passive_seats(record: object) -> tuple[int, ...]:
    """The seats whose hands an event of the card controller makes passive (a hole card the player showed)."""
    return record.seats if isinstance(record, IrregularCard) and record.ruling == PASSIVE_HAND else ()


def dead_rule(record: object) -> str:
    """What a dead hand ruled by ``record`` (see ``dead_seats``) cites: its rules, or its code."""
    if isinstance(record, IrregularCard) and record.rules:
        return ", ".join(record.rules)
    return record.code if isinstance(record, (IrregularCard, IrregularityResolved, FloorRuling)) else ""


def plain(value: Any) -> Any:
    """Lists for tuples and sets, so a payload is the same JSON after a journal round trip."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v) for v in value)
    return value
