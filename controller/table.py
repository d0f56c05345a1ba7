"""Follow a hold'em (or Omaha) hand from the cards the antennas see, and rule on what goes wrong in the deal.

Input: zone events (a tag arrived in or left ``seatN.cards``, ``board``, ``burn``, ``muck``, ``exposed``), the time,
and commands from the floor and the dealer console. Output: domain events (``hand_started``, ``card_dealt``,
``burn``, ``board_card``, ``fold``, ``hand_ended``; ``irregular_card`` for every irregularity, with its ruling;
``misdeal``, ``floor_ruling``, ``irregularity_resolved``, ``board_corrected`` and the command events) plus a
snapshot of the table. docs/events.md lists every irregularity code with its rules.

How the hand is read:
* the first card that reaches a seat while no hand is running starts a hand;
* the deal is checked as it happens (``controller.dealing.Deal``): one card per eligible seat per round, from the
  first seat left of the button, ``hole_cards`` rounds. The eligible seats are those dealt in the last hand, or
  ``TableSetup.players`` at the start, or the last ``seats`` command; with none of them (a table's first hand)
  the deal is taken as dealt and learned from. The button starts at ``TableSetup.button`` (default: the highest
  seat), moves to the next eligible seat after every hand that was not misdealt, and ``set_button`` places it.
  Cards read a moment late (``dealing.READ_ORDER_S``) are put back in the order they were dealt;
* the board takes the flop, turn and river in order; burns are counted;
* a live seat's card reaching the muck is a fold — unless that seat is the last one left, whose cards the dealer
  is simply gathering;
* the hand ends when nothing has been on any antenna for ``clear_after_s`` seconds (the dealer gathered the
  cards), or at once when the next hand's first card arrives on a cleared table. After a misdeal the next card to
  a seat while no seat holds a card starts the new deal (the button has not moved).
A card lifted off its zone and put back (a player looking at their cards) changes nothing. A card of the hand
that stays off every antenna for ``missing_card_s`` while the hand goes on is missing (``card_missing``, once; its
return resolves it), and a hand that ends with cards still missing says where every card of it ended
(``hand_audit``): see ``_watch_cards``.

An irregularity that needs the floor waits in ``pending`` (and in the snapshot) until a ``confirm``, ``override``
or ``floor_pick`` command, or the end of its hand. Whether a misdeal can still be called, whether a board card is
premature and whether a fourth card is a four-card flop ask the betting layer given at construction
(``BettingProgress``; without one, no action has happened but the folds and declarations the cards show). Everything is a function of the inputs, so a journal replay
restores pending irregularities too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from controller.cards import parse_card
from controller.dealing import (
    ACTION_STANDS,
    BURN_CARD,
    CODES,
    DEAD_HAND,
    FIXED,
    FLOOR_PICKS_BURN,
    MISDEAL,
    MISDEAL_UNLESS_FIXED,
    NO_RULING,
    PLAY_ON,
    READ_ORDER_S,
    REMOVE_CARD,
    REPLACE_CARD,
    RETURN_AND_REDEAL,
    WARNING,
    Deal,
    Held,
    next_seat,
    plain,
    severity_of,
)
from controller.domain import DomainEvent
from controller.levels import Level
from controller.rules import (
    EXPOSED_REPLACE_NOW,
    MISSING_FLOP_BURN_PLAY_ON,
    SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP,
    is_substantial,
    profile as rule_profile,
)
from hal.events import DeviceEvent, ZoneEvent
from hal.zone_names import Zone

STREETS = {1: "flop", 2: "flop", 3: "flop", 4: "turn", 5: "river"}
EXPOSED_ZONE = "exposed"  # where a table with an exposed-card zone has the dealer put exposed cards
EXPOSED_BY = ("console", "zone")
NOT_AVAILABLE = "not available on this table"

# A card of the hand gone from every antenna while the hand goes on (docs/events.md). docs/rules.md has no rule for it:
# the table rules nothing and the dealer, or the floor, decides; a card still missing when the hand ends is missing
# from the deck (``hand_audit``: PP Irregularities 10).
CARD_MISSING = "card_missing"
RETURNED = "returned"  # the resolution of a card_missing whose card came back
HAND_AUDIT_RULES = ["PP Irregularities 10"]  # cards missing from the deck: results stand, a new deck from then on


class BettingProgress(Protocol):
    """What the dealing rules ask of the betting layer (``controller.chip_betting.ChipBetting``)."""

    def substantial_action(self) -> bool:
        """A misdeal can no longer be called (the house's definition of substantial action)."""

    def round_open(self) -> bool:
        """Players still have to act on a bet in this betting round: a board card now is premature."""

    def street_action(self) -> bool:
        """Some player acted on the current street (chips, a fold, a declaration, chips still settling)."""


class NoBetting:
    """A table that does not read the chips: no action is seen but the folds and declarations the cards show."""

    def substantial_action(self) -> bool:
        return False

    def round_open(self) -> bool:
        return False

    def street_action(self) -> bool:
        return False


@dataclass(frozen=True)
class TableSetup:
    table_id: str
    seats: int
    deck: Mapping[str, str]  # tag UID → card name
    hole_cards: int = 2
    clear_after_s: float = 1.0
    decks: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # every registered deck, by id
    deck_id: str = ""  # the id of ``deck``
    button: int | None = None  # the button of the first hand; None: the highest seat
    players: tuple[int, ...] | None = None  # the seats dealt in at the start; None: learned from the first deal
    rules: str = "tda"  # the house rule profile (controller.rules.PROFILES)
    exposed_by: str = "console"  # an exposed card is reported by the console (exposed_card) or on the zone
    # A card of the hand off every antenna this long while the hand goes on is missing (card_missing); 0: not checked.
    # Well above the time a player looks at their cards; the dealer's gathering at the end is never counted.
    missing_card_s: float = 10.0
    # A tournament's level schedule (controller.levels), and the level the table starts at; () in a cash game.
    levels: tuple[Level, ...] = ()
    start_level: int = 1


@dataclass
class _Seat:
    cards: list[str] = field(default_factory=list)
    folded: bool = False  # folded, or its hand was ruled dead


@dataclass
class Irregularity:
    """An irregularity waiting for the floor (``confirm``, ``override``, ``floor_pick``)."""

    id: int  # the seq of its irregular_card event
    hand: int
    code: str
    ruling: str
    severity: str
    seats: list[int]
    rules: list[str]
    data: dict[str, Any] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        return {"irregularity": self.id, "hand": self.hand, "code": self.code, "severity": self.severity,
                "ruling": self.ruling, "seats": list(self.seats), "rules": list(self.rules)}


class TableController:
    def __init__(self, setup: TableSetup, betting: BettingProgress | None = None):
        if setup.exposed_by not in EXPOSED_BY:
            raise ValueError(f"exposed_by must be one of {', '.join(EXPOSED_BY)}, not {setup.exposed_by!r}")
        if setup.button is not None and not 1 <= setup.button <= setup.seats:
            raise ValueError(f"button {setup.button}: the table has seats 1 to {setup.seats}")
        if setup.players is not None and not all(1 <= s <= setup.seats for s in setup.players):
            raise ValueError(f"players {list(setup.players)}: the table has seats 1 to {setup.seats}")
        if not setup.missing_card_s >= 0:
            raise ValueError(f"missing_card_s must be 0 (not checked) or more seconds, not {setup.missing_card_s!r}")
        self.setup = setup
        self.profile = rule_profile(setup.rules)
        self.seq = 0
        self.hand = 0
        self.in_hand = False
        self.now = 0.0
        self._on_table: dict[str, str] = {}  # uid → zone, everything the antennas report now
        self.readers: dict[str, dict[str, Any]] = {}  # reader → link state and faulted antennas
        self.deck_id, self.deck = setup.deck_id, setup.deck
        self._others = self._other_decks()
        self._cleared_at: float | None = None
        self.button = setup.button if setup.button is not None else setup.seats
        self.eligible: tuple[int, ...] | None = tuple(sorted(set(setup.players))) if setup.players else None
        self._next_button: int | None = None  # set_button during a hand: the next hand's button
        self._next_players: tuple[int, ...] | None = None  # a seats command during a hand
        self.pending: dict[int, Irregularity] = {}
        self._boxed = 0  # cards found face up in the deck, this deal
        # What the betting layer knows of the action (``BettingProgress``). Without it: no action has happened
        # but the folds and declarations the cards show, no round is open.
        progress = betting if betting is not None else NoBetting()
        self._folds_are_the_action = betting is None  # without chips the folds are all the action the table sees
        self.substantial_action = progress.substantial_action
        self.betting_round_open = progress.round_open
        self.street_action = progress.street_action
        self._new_hand_state()

    def _new_hand_state(self) -> None:
        self.seats = {n: _Seat() for n in range(1, self.setup.seats + 1)}
        self.board: list[str] = []
        self.burns: list[str] = []
        self.mucked: list[str] = []
        self._owner: dict[str, int] = {}  # hole card → seat
        self.deal = Deal.plan(self.setup.hole_cards, self.button, self.eligible)
        self.void = False  # misdealt: nothing counts until the new deal
        self._uids: dict[str, str] = {}  # card → the tag that carried it this hand
        self._strays: set[str] = set()  # tags of other decks already reported
        self._retired: dict[str, str] = {}  # cards out of the play: exposed, extra, boxed → why
        self._premature: set[str] = set()  # premature board cards still lying on the board
        self._returned: set[str] = set()  # premature board cards taken back (they may be dealt again)
        self._reported: dict[int, tuple[str, list[str]]] = {}  # this hand's irregularities: id → code, rules
        self._premature_id: int | None = None
        self._fourth: str | None = None  # a four-card flop's fourth card, until the floor's pick
        self._fourth_due: float | None = None  # when a fourth card with no burn before it is a four-card flop
        self._street_acted = False  # a fold or a declaration since the latest board card (the cards' view)
        self._folds_seen: list[int] = []  # the seats that folded this hand, in order (actions without chips)
        self._pick: int | None = None  # the TDA 39 irregularity waiting for the floor's pick
        self._burn_checks = True  # False once the burns of this hand were found irregular
        self._burns_at: list[int] = []  # burns on the table when each board card came
        self._after_deal = False  # a burn, a board card, a fold or a declaration came: the betting has begun
        # Decided once READ_ORDER_S has passed (a card read late may still come):
        self._early_board: list[str] = []  # board cards while the deal was not complete
        self._early_since = 0.0
        self._close_due: float | None = None  # a burn or a fold while the deal was not complete
        self._burn_due: list[tuple[float, int]] = []  # (when, board position): was there a burn before it?
        # Cards gone from the table (_watch_cards):
        self._off_since: dict[str, tuple[float, str]] = {}  # card of this hand off every antenna → (since, last zone)
        self._missing: dict[str, int] = {}  # card reported missing and not back → its card_missing irregularity
        self._watch_from: float | None = None  # absences count from here; None: not now (no hand, a hold)

    def _other_decks(self) -> dict[str, tuple[str, str]]:
        return {uid: (deck_id, card) for deck_id, deck in self.setup.decks.items() if deck_id != self.deck_id
                for uid, card in deck.items() if uid not in self.deck}

    # ---- inputs -------------------------------------------------------------------------------------

    def handle(self, event: ZoneEvent) -> list[DomainEvent]:
        """Apply one zone event; return the domain events it causes, in order."""
        self.now = event.t
        out: list[DomainEvent] = []
        if self.in_hand:
            self._watch_cards(out)  # what went missing up to now
        self._zone_event(out, event)
        self._note_hold()
        return out

    def _zone_event(self, out: list, event: ZoneEvent) -> None:
        if event.kind == "left":
            self._on_table.pop(event.uid, None)
            card = self.deck.get(event.uid)
            if event.zone == "board" and card in self._premature:
                self._premature.discard(card)  # returned to the stub
                self._returned.add(card)
            if event.zone == "board" and card in self._early_board:
                self._early_board.remove(card)
                self._returned.add(card)
            if self.in_hand and card is not None and self._uids.get(card) == event.uid:
                self._off_since[card] = (event.t, event.zone)  # off every antenna (a move arrives at once)
            if not self._on_table and self.in_hand:
                self._cleared_at = event.t
            return

        if self.in_hand and not self._on_table and self._cleared_at is not None:
            self._end_hand(out)  # the next hand's first card landed on a cleared table
        if self.in_hand:
            self._decide_late(out)
            self._card_back(out, event.uid)
        self._on_table[event.uid] = event.zone
        self._cleared_at = None

        parsed = Zone.parse(event.zone)
        kind, seat = parsed.place, parsed.seat
        card = self.deck.get(event.uid)
        if card is None:
            other = self._others.get(event.uid)
            if other is None:
                self._emit(out, "unknown_tag", {"zone": event.zone, "uid": event.uid})
            else:
                self._stray(out, event.uid, other, event.zone, kind, seat)
            return
        if self.in_hand and self.void:
            if kind == "seat" and not any(zone.endswith(".cards") for uid, zone in self._on_table.items()
                                          if uid != event.uid):
                self._end_hand(out)  # the new deal after a misdeal
            else:
                return
        if self.in_hand and self._uids.get(card, event.uid) != event.uid:
            self._duplicate(out, event.uid, card, event.zone, kind, seat)
            return
        if kind == "seat":
            self._card_to_seat(out, card, seat, event.zone)
        elif kind == "board":
            self._card_to_board(out, card)
        elif kind == "burn":
            self._card_to_burn(out, card)
        elif kind == "muck":
            self._card_to_muck(out, card)
        elif kind == EXPOSED_ZONE:
            self._card_to_exposed(out, card, event.zone)
        else:  # a card on a chip zone (bets, pot)
            self._irregular(out, "card_in_chip_zone", event.zone, card)
        if self.in_hand:
            self._uids.setdefault(card, event.uid)

    def handle_device(self, event: DeviceEvent) -> list[DomainEvent]:
        """A reader link went up or down, an antenna faulted or recovered: published for the floor and the
        technician, and kept in the snapshot (a table whose reader is down is not seeing its cards)."""
        self.now = event.t
        out: list[DomainEvent] = []
        detail = dict(event.detail)
        reader = self.readers.setdefault(event.reader, {"link": "unknown", "faulted_antennas": []})
        if event.kind in ("reader_up", "reader_down", "reader_incompatible"):
            reader["link"] = event.kind.removeprefix("reader_")
            self._emit(out, "reader_link", {"reader": event.reader, "state": reader["link"], **detail})
        elif event.kind == "reader_reset":
            self._emit(out, "reader_link", {"reader": event.reader, "state": "reset", **detail})
        elif event.kind in ("antenna_fault", "antenna_ok"):
            antenna = detail.get("antenna")
            if (antenna in reader["faulted_antennas"]) == (event.kind == "antenna_fault"):
                return out  # the reader repeats a lasting fault every few seconds: news only when it changes
            faulted = set(reader["faulted_antennas"])
            faulted.add(antenna) if event.kind == "antenna_fault" else faulted.discard(antenna)
            reader["faulted_antennas"] = sorted(faulted)
            self._emit(out, "antenna", {"reader": event.reader, "state": "fault" if event.kind == "antenna_fault"
                                        else "ok", **detail})
        self._note_hold()
        return out

    def handle_command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        """A validated command from the floor or the dealer console; returns its events, or why it was refused
        in the current state (nothing changes then)."""
        result = self._command(command, t)
        self._note_hold()
        return result

    def _command(self, command: dict[str, Any], t: float) -> tuple[list[DomainEvent], str | None]:
        self.now = t
        out: list[DomainEvent] = []
        by = {"by": f"{command['role']}/{command['user']}"}
        note = {"note": command["note"]} if command.get("note") else {}
        name = command["command"]
        if name == "select_deck":
            if self.in_hand:
                return out, "a hand is running: the deck can be changed between hands"
            self.deck_id, self.deck = command["deck"], self.setup.decks[command["deck"]]
            self._others = self._other_decks()
            self._emit(out, "deck_selected", {"deck": self.deck_id, **by})
        elif name == "declare":
            if not self.in_hand:
                return out, "no hand is running"
            extra = {"amount": command["amount"]} if "amount" in command else {}
            self._after_deal = True
            self._street_acted = True
            self._emit(out, "declaration", {"seat": command["seat"], "declaration": command["declaration"],
                                            **extra, **by})
        elif name == "misdeal":
            if not self.in_hand:
                return out, "no hand is running"
            if self.void:
                return out, "the hand is already void (misdeal): deal again"
            if self._substantial():
                return out, (f"substantial action has taken place ({self.profile.cite('substantial_action')}): "
                             "a misdeal can no longer be called, the hand is played to its end")
            self._misdeal(out, "called", [self.profile.cite("substantial_action")], None, by | note)
        elif name == "exposed_card":
            return self._exposed_command(out, command.get("seat"))
        elif name in ("confirm", "override", "floor_pick"):
            return self._floor_command(out, name, command, by, note)
        elif name == "set_button":
            seat = command["seat"]
            if self.in_hand:
                self._next_button = seat
            else:
                self.button, self._next_button = seat, None
            self._emit(out, "button_set", {"seat": seat, "applies_to_hand": self.hand + 1, **by})
        elif name == "seats":
            players = tuple(sorted(set(command["seats"])))
            if self.in_hand:
                self._next_players = players
            else:
                self.eligible, self._next_players = players, None
            self._emit(out, "seats_set", {"seats": list(players), "applies_to_hand": self.hand + 1, **by})
        elif name == "new_hand":
            self._emit(out, "new_hand", {**by})
        elif name == "floor_call":
            extra = {"seat": command["seat"]} if "seat" in command else {}
            self._emit(out, "floor_call", {**extra, **note, **by})
        elif name in ("undo", "start_clock", "time_bank"):
            return out, NOT_AVAILABLE
        return out, None

    def tick(self, now: float) -> list[DomainEvent]:
        """Let time pass: reports the cards that went missing, ends the hand once the table has stayed clear long
        enough."""
        self.now = now
        out: list[DomainEvent] = []
        if self.in_hand:
            self._decide_late(out)
        if self.in_hand:
            self._watch_cards(out)
        if self.in_hand and self._cleared_at is not None and now - self._cleared_at >= self.setup.clear_after_s:
            self._end_hand(out)
        self._note_hold()  # changes with an event only (a ruling, the hand's end): a tick without one leaves no trace
        return out

    def _decide_late(self, out: list, now: float | None = None) -> None:
        """What waited for cards read late is decided once READ_ORDER_S has passed (at the end of the hand: now)."""
        if self.void:
            return
        now = self.now if now is None else now
        deal = self.deal
        if len(deal.held) > 1 and now - deal.held[0].t >= READ_ORDER_S:  # the cards due first did not come
            held, rest = deal.held[0], deal.held[1:]
            deal.held = []
            self._decide_held(out, held, rest[0].card, rest[0].seat)
            for other in rest:
                if not self.void:
                    self._deal_card(out, other.card, other.seat, f"seat{other.seat}.cards")
        if self._early_board and now - self._early_since >= READ_ORDER_S:
            cards, self._early_board = self._early_board, []
            for card in cards:  # the deal did not complete: they were turned too early
                if not self.void:
                    self._premature_card(out, card)
        if self._close_due is not None and now >= self._close_due:
            self._close_due = None
            if not self.void and not deal.complete and (deal.checking or deal.held):
                self._close_deal(out)
        if self._fourth_due is not None and now >= self._fourth_due and not self.void:
            self._four_card_flop(out)
        if deal.fix is not None and not self.void and self._substantial():
            self._fix_failed(out)  # substantial action came before the short seats' cards: their hands are dead
        while self._burn_due and now >= self._burn_due[0][0] and not self.void:
            _due, position = self._burn_due.pop(0)
            if self._burn_checks:
                self._check_burn(out, position)

    def renumber_irregularity(self, old: int, new: int) -> None:
        """A layer that renumbers the events it publishes (one ``seq`` over cards and chips) tells the controller
        the published number of an irregularity, so that ``confirm``/``override``/``floor_pick`` and later events
        (``misdeal``, ``floor_ruling``, ``irregularity_resolved``, ``board_corrected``) name it as the floor saw it.
        Fields naming an irregularity in the events of the same step are the layer's to map."""
        if old in self._reported:
            self._reported[new] = self._reported.pop(old)
        irregularity = self.pending.pop(old, None)
        if irregularity is not None:
            irregularity.id = new
            self.pending[new] = irregularity
        if self._premature_id == old:
            self._premature_id = new
        if self._pick == old:
            self._pick = new
        if self.deal.fix == old:
            self.deal.fix = new
        for card, ident in self._missing.items():
            if ident == old:
                self._missing[card] = new

    # ---- the cards ----------------------------------------------------------------------------------

    def _card_to_seat(self, out: list, card: str, seat: int, zone: str) -> None:
        if not self.in_hand:
            self._start_hand(out)
        owner = self._owner.get(card)
        if owner == seat:
            return  # the player put the card back down after looking at it
        held = self.deal.holds(card)
        if held is not None and held.seat == seat:
            return
        if owner is not None:
            self._irregular(out, "hole_card_moved", zone, card, seat=seat, from_seat=owner)
            return
        if card in self.board or card in self.burns or card in self.mucked or card in self._retired:
            self._irregular(out, "played_card_to_seat", zone, card, seat=seat)
            return
        place = self.seats[seat]
        deal = self.deal
        fixing = deal.fix is not None and seat == deal.expected()
        if self.board and not fixing:
            self._irregular(out, "hole_card_after_board", zone, card, seat=seat)
        elif place.folded:
            self._irregular(out, "card_to_folded_seat", zone, card, seat=seat)
        else:
            self._deal_card(out, card, seat, zone)

    def _deal_card(self, out: list, card: str, seat: int, zone: str) -> None:
        """A fresh card reached a seat: check it against the dealing order."""
        deal = self.deal
        if deal.held:
            if self._read_order(out, card, seat, zone):
                return
            if self.void:
                return
        if not deal.checking:
            self._loose_card(out, card, seat, zone)
            return
        if deal.learning:  # the players are not known yet: this deal is taken as dealt, and learned from
            deal.arrivals.append(seat)
            self._loose_card(out, card, seat, zone)
            return
        expected = deal.expected()
        if deal.first_late is not None and deal.position == len(deal.order) and seat != expected:
            if seat == deal.first_late:  # the first card of each round at the same wrong seat: not a late read
                dealt_button = deal.order[deal.order.index(seat) - 1]
                ruling, rules = self._misdeal_or(PLAY_ON)
                self._freeze(self._report(out, "button_misplaced", ruling, seats=[seat], cards=[card], zone=zone,
                                          needs_floor=True, rules=rules,
                                          extra={"button": deal.button, "dealt_from_button": dealt_button},
                                          data={"dealt_button": dealt_button}))
                self._loose_card(out, card, seat, zone)
                return
        if deal.first_late is not None and deal.position == len(deal.order) and seat == expected and deal.checking:
            # the second round starts where it should: the deal's first card went to seat first_late a moment
            # before the card due first (PP Misdeals 1h; AC 30c), or that card was read late — the readers cannot
            # tell, the floor rules (an override keeps the button)
            late, deal.first_late = deal.first_late, None
            ruling, rules = self._misdeal_or(PLAY_ON)
            self._freeze(self._report(out, "first_card_wrong_seat", ruling, seats=[late, deal.order[0]],
                                      zone=f"seat{late}.cards", needs_floor=True, rules=rules,
                                      extra={"button": deal.button, "read_order": "uncertain"},
                                      data={"dealt_button": deal.button}))
        if expected is None:
            self._extra_card(out, card, seat, zone)
            return
        if seat == expected:
            self._accept(out, card, seat)
            if deal.fix is not None and not deal.queue:
                self._resolved(out, deal.fix, FIXED)
                deal.fix = None
            return
        if deal.fix is not None:
            self._fix_failed(out)
            if self.void:
                return
            self._loose_card(out, card, seat, zone)
            return
        assert deal.order is not None
        if seat not in deal.order:
            ruling, rules = self._misdeal_or(PLAY_ON)
            self._freeze(self._report(out, "card_to_ineligible_seat", ruling, seats=[seat], cards=[card], zone=zone,
                                      needs_floor=True, rules=rules))
            self._accept(out, card, seat)
            return
        deal.held.append(Held(card, seat, expected, first=deal.position == 0, t=self.now))
        deal.positions[card] = deal.position
        deal.position += 1

    def _read_order(self, out: list, card: str, seat: int, zone: str) -> bool:
        """A card while others wait ahead of their turn. The card due now, soon after them: the reader saw them in
        another order than they were dealt, and all is well. Another card ahead of its turn: it waits too.
        Anything else: the first of them was dealt to the wrong seat. True when ``card`` has been placed."""
        deal = self.deal
        soon = self.now - deal.held[0].t <= READ_ORDER_S
        if deal.holds(card) is None and soon:
            if seat == deal.expected():
                first = deal.held[0]
                if first.first:  # if the second round starts there too, the deal followed another button
                    deal.first_late = first.seat
                elif deal.checking:  # read late, or pitched to the wrong seat a moment before: the readers cannot
                    self._out_of_sequence(out, first, uncertain_s=self.now - first.t)  # tell, the floor rules
                self._accept(out, card, seat)
                while (due := next((h for h in deal.held if h.seat == deal.expected()), None)) is not None:
                    deal.held.remove(due)
                    self._accept(out, due.card, due.seat)
                if deal.held:  # still ahead of their turn: they wait for the cards due before them
                    deal.held[0].expected = deal.expected()
                    deal.held[0].first = False
                return True
            if deal.ahead(seat):
                deal.held.append(Held(card, seat, deal.expected(), first=False, t=self.now))
                deal.positions[card] = deal.position
                deal.position += 1
                return True
        held, rest = deal.held[0], deal.held[1:]
        deal.held = []
        if rest and card != held.card:  # the card after the first one shows what happened to it
            consumed = False
            self._decide_held(out, held, rest[0].card, rest[0].seat)
        else:
            consumed = self._decide_held(out, held, card, seat)
        for other in rest:
            if self.void:
                break
            self._deal_card(out, other.card, other.seat, f"seat{other.seat}.cards")
        return consumed

    def _decide_held(self, out: list, held: Held, card: str, seat: int) -> bool:
        """The card after a card to the wrong seat shows what happened. True when ``card`` was the held card
        itself (it has been placed now)."""
        deal = self.deal
        assert deal.order is not None
        if held.first:
            moved = card == held.card
            order = deal.order
            start = order.index(held.seat)
            rotated = order[start:] + order[:start]
            if not moved and len(rotated) > 1 and seat == rotated[1]:
                dealt_button = rotated[-1]
                ruling, rules = self._misdeal_or(PLAY_ON)
                ident = self._report(out, "button_misplaced", ruling, seats=[held.seat], cards=[held.card],
                                     zone=f"seat{held.seat}.cards", needs_floor=True, rules=rules,
                                     extra={"button": deal.button, "dealt_from_button": dealt_button},
                                     data={"dealt_button": dealt_button})
            else:
                ruling, rules = self._misdeal_or(PLAY_ON)
                ident = self._report(out, "first_card_wrong_seat", ruling, seats=[held.seat, held.expected],
                                     cards=[held.card], zone=f"seat{held.seat}.cards", needs_floor=True, rules=rules,
                                     extra={"button": deal.button},
                                     data={"dealt_button": order[start - 1]})
            self._freeze(ident)
            self._accept(out, held.card, seat if moved else held.seat)
            return moved
        if card == held.card:  # the dealer moved the card on
            if seat == held.expected:
                self._report(out, "card_out_of_sequence", FIXED, seats=[held.seat, held.expected],
                             cards=[held.card], zone=f"seat{seat}.cards")
                self._accept(out, card, seat)
                return True
            self._out_of_sequence(out, held, also=[seat])
            if not self.void:
                self._accept(out, card, seat)
            return True
        due = held.expected
        others = [s for s in deal.queue if s != due]
        if deal.received.get(due, 0) == 0 and len(others) >= 2 and held.seat == others[0] and seat == others[1]:
            ruling, rules = self._misdeal_or(PLAY_ON)
            self._freeze(self._report(out, "player_dealt_out", ruling, seats=[due], zone=f"seat{held.seat}.cards",
                                      needs_floor=True, rules=rules))
            deal.queue = others
            self._accept(out, held.card, held.seat)
            return False
        if seat == due and deal.received.get(held.seat, 0) > deal.received.get(due, 0):
            self._extra_card(out, held.card, held.seat, f"seat{held.seat}.cards", counted=True)
            return False
        self._out_of_sequence(out, held, also=[seat] if seat not in (held.seat, due) else [])
        if not self.void:
            self._accept(out, held.card, held.seat)
        return False

    def _out_of_sequence(self, out: list, held: Held, also: list[int] = (), uncertain_s: float | None = None
                         ) -> None:
        """A card dealt to the wrong seat and dealt over: a misdeal (PP Misdeals 1f); after substantial action
        the hands with the wrong number of cards are dead. The proper sequence is the table's idea of the seats and
        the button, which a change of players can make wrong: the floor confirms. ``uncertain_s``: the card due
        came this soon after it, within the time a late read takes, so the readers cannot tell a card pitched to
        the wrong seat from one read late (``read_order: uncertain``)."""
        seats = [held.seat, held.expected] + [s for s in also if s not in (held.seat, held.expected)]
        ruling, rules = self._misdeal_or(DEAD_HAND)
        extra = {"read_order": "uncertain", "gap_s": round(uncertain_s, 2)} if uncertain_s is not None else None
        self._freeze(self._report(out, "card_out_of_sequence", ruling, seats=seats, cards=[held.card],
                                  zone=f"seat{held.seat}.cards", needs_floor=True, rules=rules, extra=extra,
                                  data={"dead": [held.seat, held.expected]}))

    def _accept(self, out: list, card: str, seat: int) -> None:
        place = self.seats[seat]
        self.deal.take(seat, card)
        place.cards.append(card)
        self._owner[card] = seat
        self._emit(out, "card_dealt", {"seat": seat, "count": len(place.cards)}, {"card": card})
        if self.deal.complete:  # the cards read late are in: nothing was early
            self._close_due = None
            cards, self._early_board = self._early_board, []
            for early in cards:
                self._card_to_board(out, early)

    def _loose_card(self, out: list, card: str, seat: int, zone: str) -> None:
        """A card while the order is no longer checked (ruled or overridden): counted as dealt, up to the seat's
        share. Beyond it, while the floor looks at the deal, the card follows from the error it looks at."""
        if len(self.seats[seat].cards) < self.setup.hole_cards:
            self._accept(out, card, seat)
        elif self.deal.frozen_by in self.pending:
            self._retired[card] = "extra"
            self.deal.position += 1
        else:
            self._extra_card(out, card, seat, zone)

    def _freeze(self, ident: int) -> None:
        """The floor rules on the deal: the order is no longer checked."""
        self.deal.checking = False
        self.deal.frozen_by = ident

    def _extra_card(self, out: list, card: str, seat: int, zone: str, counted: bool = False) -> None:
        """A card beyond a seat's share: one becomes a burn card (PP Irregularities 11), two or more are a misdeal
        (CA GR 9a; PP Misdeals 1d); after substantial action the seat's hand is dead (PP Dead hands 1d; TDA 1-B)."""
        deal = self.deal
        deal.extra += 1
        if not counted:
            deal.positions.setdefault(card, deal.position)
            deal.position += 1
        self._retired[card] = "extra"
        rules: list[str] = []
        if self._substantial():
            ruling, rules = DEAD_HAND, [self.profile.cite("substantial_action"), "PP Dead hands 1d", "TDA example 1-B"]
        elif deal.extra >= 2:
            ruling, rules = MISDEAL, [self.profile.cite("substantial_action")]
        else:
            ruling = BURN_CARD
        ident = self._irregular(out, "extra_hole_card", zone, card, ruling=ruling, rules=rules, seat=seat)
        if ruling == MISDEAL:
            self._misdeal(out, "extra_hole_card", self._rules_of(ident), ident)
        elif ruling == DEAD_HAND:
            self._kill(seat)

    def _close_deal(self, out: list) -> None:
        """The deal is over (a burn card, a fold, the end of the hand) while cards were still due."""
        deal = self.deal
        if deal.held:
            held, rest = deal.held[0], deal.held[1:]
            deal.held = []
            if held.first:
                ruling, rules = self._misdeal_or(PLAY_ON)
                order = deal.order or [held.seat]
                start = order.index(held.seat) if held.seat in order else 0
                self._freeze(self._report(out, "first_card_wrong_seat", ruling, seats=[held.seat, held.expected],
                                          cards=[held.card], zone=f"seat{held.seat}.cards", needs_floor=True,
                                          rules=rules, extra={"button": deal.button},
                                          data={"dealt_button": order[start - 1]}))
                self._accept(out, held.card, held.seat)
            else:
                self._out_of_sequence(out, held)
                if not self.void:
                    self._accept(out, held.card, held.seat)
            if self.void:
                return
            for other in rest:
                self._loose_card(out, other.card, other.seat, f"seat{other.seat}.cards")
        if deal.fix is not None:
            self._fix_failed(out)
            return
        if not deal.checking or deal.learning or not deal.queue:
            return
        short = list(dict.fromkeys(deal.queue))
        if self._substantial():
            self._report(out, "wrong_card_count", DEAD_HAND, seats=short,
                         rules=[self.profile.cite("substantial_action")])
            deal.queue = []
            self._kill(*short)
        else:
            deal.fix = self._report(out, "wrong_card_count", MISDEAL_UNLESS_FIXED, seats=short,
                                    rules=[self.profile.cite("substantial_action")])

    def _fix_failed(self, out: list) -> None:
        """The short seats did not get the next cards: misdeal (PP Misdeals 1e), or dead hands after substantial
        action."""
        deal = self.deal
        ident, deal.fix = deal.fix, None
        assert ident is not None
        if self._substantial():
            short = list(dict.fromkeys(deal.queue))
            deal.queue = []
            self._kill(*short)
            self._resolved(out, ident, DEAD_HAND, seats=short)
        else:
            self._misdeal(out, "wrong_card_count", self._rules_of(ident), ident)

    def hand_dead(self, seat: int) -> None:
        """A rule beyond the cards (the action clock, the floor confirming a device breach) killed the seat's hand
        on a table that does not read the chips: the seat is out of the hand, as if it had folded."""
        if self.in_hand:
            self._kill(seat)

    def restore_hand(self, seat: int) -> None:
        """The floor restored a hand the dealer mucked at the showdown (CA Actions 9; AC 14): it is live again."""
        place = self.seats.get(seat)
        if self.in_hand and place is not None and place.cards:
            place.folded = False

    def _kill(self, *seats: int) -> None:
        for seat in seats:
            if seat in self.seats:
                self.seats[seat].folded = True

    def _card_to_board(self, out: list, card: str) -> None:
        if card in self.board or card in self._premature or card == self._fourth:
            return  # re-read after being lifted
        if card in self._pick_candidates():
            return  # a card of a four-card flop or a burnless flop put back before the floor's pick
        if not self.in_hand:
            self._irregular(out, "card_outside_hand", "board", card, public_card=True)
            return
        if card in self._owner:
            self._irregular(out, "hole_card_on_board", "board", card, seat=self._owner[card])
            return
        if len(self.board) >= 5:
            self._irregular(out, "extra_board_card", "board", card, public_card=True)
            return
        deal = self.deal
        if not deal.complete and not self._retired.get(card):
            if deal.fix is not None:
                self._fix_failed(out)
                if self.void:
                    return
            elif deal.checking or deal.held:  # the deal is not over, so the betting cannot be: unless the missing
                if not self._early_board:  # cards were only read late, the card was turned too early
                    self._early_since = self.now
                if card not in self._early_board:
                    self._early_board.append(card)
                return
        self._after_deal = True
        position = len(self.board) + 1
        burned_since = len(self.burns) - (self._burns_at[-1] if self._burns_at else 0)
        turned_burn = card in self.burns or self._retired.get(card) in ("exposed", "extra")
        if position == 4 and self._burn_checks and burned_since == 0 and not turned_burn and not self._flop_acted():
            # TDA 39-1, AC 32: a fourth card before anyone acted on the flop is a four-card flop, on every table. A
            # turn's burn read a moment late still makes it the turn, unless players are still to act on a bet.
            self._fourth = card
            if self.betting_round_open():
                self._four_card_flop(out)
            else:
                self._fourth_due = self.now + READ_ORDER_S
            return
        if self.betting_round_open():
            self._premature_card(out, card)
            return
        if turned_burn:  # a burn card turned up: everyone sees it now
            self._retired.pop(card, None)
            self._irregular(out, "burn_card_on_board", "board", card, public_card=True)
            self._burn_checks = False
        self.board.append(card)
        self._burns_at.append(len(self.burns))
        self._street_acted = False
        self._emit(out, "board_card", {"card": card, "street": STREETS[position], "position": position})
        if self._burn_checks and position in (3, 4, 5):
            self._burn_due.append((self.now + READ_ORDER_S, position))

    def _flop_acted(self) -> bool:
        """Someone acted since the flop: a fold or a declaration the cards show, or what the betting layer read."""
        return self._street_acted or self.street_action()

    def _four_card_flop(self, out: list) -> None:
        """TDA 39-1, AC 32: the floor is called, the four cards are mixed face down and the floor picks the burn."""
        self._fourth_due = None
        card = self._fourth
        self._pick = self._report(out, "four_card_flop", FLOOR_PICKS_BURN, seats=[], cards=[card], zone="board",
                                  needs_floor=True, data={"candidates": [*self.board, card]})
        self._burn_checks = False

    def _check_burn(self, out: list, position: int) -> None:
        """A street's burn card: one burn before the flop, one more before the turn and the river each (a burn read a
        moment after its street's card counts)."""
        burned = len(self.burns) - sum(1 for card in self.board if card in self.burns)
        if position == 3 and burned < 1 and len(self.board) >= 3 and self._fourth is None:
            self._burn_checks = False
            if self.profile.missing_flop_burn == MISSING_FLOP_BURN_PLAY_ON:
                self._report(out, "flop_without_burn", PLAY_ON, seats=[], zone="board",
                             rules=[self.profile.cite("missing_flop_burn")])
            elif self._flop_acted():  # TDA 39-2: "Sollte eine beliebige Aktion (selbst ein Check) stattgefunden
                self._report(out, "flop_without_burn", PLAY_ON, seats=[], zone="board",  # haben": play goes on
                             rules=["TDA 39-2"], extra={"after_action": True})
            else:
                self._pick = self._report(out, "flop_without_burn", FLOOR_PICKS_BURN, seats=[], zone="board",
                                          needs_floor=True, rules=[self.profile.cite("missing_flop_burn")],
                                          data={"candidates": self.board[:3]})
        elif position in (4, 5) and burned < position - 2:
            self._burn_checks = False
            self._report(out, "missing_burn", PLAY_ON, seats=[], zone="board", extra={"street": STREETS[position]})

    def _pick_candidates(self) -> list[str]:
        irregularity = self.pending.get(self._pick) if self._pick is not None else None
        if irregularity is None or (irregularity.code == "flop_without_burn" and self._flop_acted()):
            return []  # TDA 39-2: after any action the three cards stand
        return irregularity.data["candidates"]

    def _premature_card(self, out: list, card: str) -> None:
        """A board card before the betting round was over: returned, reshuffled and dealt again (DE 3; PP
        Irregularities 15; TDA 39-3); one irregularity for the cards turned together."""
        if self._premature and self._premature_id is not None:  # turned with the others still lying there
            self._premature.add(card)
            if self._premature_id in self.pending:
                self.pending[self._premature_id].data["cards"].append(card)
            return
        self._premature.add(card)
        self._premature_id = self._report(out, "premature_board_card", RETURN_AND_REDEAL, seats=[], cards=[card],
                                          zone="board", needs_floor=True,
                                          extra={"street": STREETS[len(self.board) + 1]}, data={"cards": [card]})

    def _card_to_burn(self, out: list, card: str) -> None:
        if card in self.burns:
            return
        if not self.in_hand:
            self._irregular(out, "card_outside_hand", "burn", card)
            return
        if card in self._pick_candidates():  # the floor's pick of the burn card (TDA 39)
            self._apply_pick(out, self.pending[self._pick], card, None)
            return
        if card in self._owner:
            self._irregular(out, "hole_card_burned", "burn", card, seat=self._owner[card])
            return
        if card in self.board:
            self._irregular(out, "board_card_burned", "burn", card, public_card=True)
            self._burn_checks = False
            return
        retired = self._retired.pop(card, None)
        deal = self.deal
        if retired is None and not deal.complete and (deal.checking or deal.held) and self._close_due is None:
            self._close_due = self.now + READ_ORDER_S  # the dealer burns for the flop: the deal is over
        self._after_deal = True
        self.burns.append(card)
        self._emit(out, "burn", {"count": len(self.burns)}, {"card": card})
        if self._fourth_due is not None:  # the turn's burn, read after the turn card: it was the turn
            turn, self._fourth, self._fourth_due = self._fourth, None, None
            self._put_on_board(out, turn)

    def _card_to_muck(self, out: list, card: str) -> None:
        if card in self.mucked:
            return
        if not self.in_hand:
            self._irregular(out, "card_outside_hand", "muck", card)
            return
        seat = self._owner.get(card)
        deal = self.deal
        if seat is not None and not deal.complete and (deal.checking or deal.held) and self._close_due is None:
            self._close_due = self.now + READ_ORDER_S  # a fold: the betting has begun, so the deal is over
        self.mucked.append(card)
        if seat is not None:
            self._after_deal = True
            place = self.seats[seat]
            if not place.folded and len(self._live_seats()) > 1:
                place.folded = True
                self._street_acted = True
                self._folds_seen.append(seat)
                self._emit(out, "fold", {"seat": seat}, {"cards": list(place.cards)})
        elif card not in self.board and card not in self.burns and card not in self._retired \
                and card not in self._returned:
            self._irregular(out, "unseen_card_mucked", "muck", card)

    # ---- exposed cards --------------------------------------------------------------------------------

    def _card_to_exposed(self, out: list, card: str, zone: str) -> None:
        if not self.in_hand:  # the deal's first card, exposed on its way (a boxed card found before the deal is
            self._start_hand(out)  # reported with exposed_card without a seat)
        if card in self._retired or card in self.board or card in self.burns or card in self.mucked:
            return  # already out of the play, or face up anyway
        deal = self.deal
        owner = self._owner.get(card)
        if owner is not None:
            self._exposure(out, card, owner, zone, in_flight=False)
        elif deal.holds(card) is not None:
            held = deal.holds(card)
            deal.held.remove(held)
            self._exposure(out, card, held.expected, zone, in_flight=True, counted=True)
        elif not deal.complete:
            self._exposure(out, card, self._due_seat(), zone, in_flight=True)
        else:
            self._boxed_card(out, card, zone)

    def _due_seat(self) -> int | None:
        return self.deal.expected()

    def _exposed_command(self, out: list, seat: int | None) -> tuple[list, str | None]:
        if self.setup.exposed_by == "zone":
            return out, "this table reports exposed cards on its exposed zone: place the card there"
        if seat is None:
            self._boxed_card(out, None, None)
            return out, None
        if not self.in_hand:
            return out, "no hand is running"
        if self.void:
            return out, "the hand is void (misdeal): deal again"
        place = self.seats[seat]
        if place.cards:
            self._exposure(out, place.cards[-1], seat, None, in_flight=False)
        elif not self.deal.complete and self._due_seat() == seat:
            self._exposure(out, None, seat, None, in_flight=True)
        else:
            return out, f"seat {seat} holds no card"
        return out, None

    def _exposure(self, out: list, card: str | None, seat: int | None, zone: str | None, in_flight: bool,
                  counted: bool = False) -> None:
        """The dealer exposed a card of the deal: ``in_flight`` before it reached ``seat`` (the seat it was due to),
        otherwise after."""
        deal = self.deal
        cards = [card] if card else []
        seats = [seat] if seat is not None else []
        if (deal.complete or deal.learning) and self._after_deal and not in_flight:  # flashed after the deal: it plays
            self._report(out, "hole_card_exposed", PLAY_ON, seats=seats, cards=cards, zone=zone,
                         rules=["PP Irregularities 12", "PP Irregularities 14"], extra={"during_deal": False})
            return
        if in_flight:
            position = deal.positions.get(card, deal.position) if counted and card else deal.position
            if not counted:
                deal.position += 1
            if card:
                deal.positions.setdefault(card, position)
        else:
            position = deal.positions.get(card, 0) if card else 0
        deal.exposed += 1
        if card:
            self._retired[card] = "exposed"
            if not in_flight and seat is not None:
                self.seats[seat].cards.remove(card)
                self._owner.pop(card, None)
        extra = {"during_deal": True, "position": position + 1}
        if position <= 1 or deal.exposed >= 2:
            code = "first_cards_exposed" if position <= 1 else "cards_exposed"
            ruling, rules = self._misdeal_or(PLAY_ON)
            ident = self._report(out, code, ruling, seats=seats, cards=cards, zone=zone, rules=rules, extra=extra)
            if ruling == MISDEAL:
                self._misdeal(out, code, self._rules_of(ident), ident)
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
        self._report(out, "hole_card_exposed", REPLACE_CARD if replace_now else BURN_CARD, seats=seats, cards=cards,
                     zone=zone, rules=[self.profile.cite("exposed_hole_card")], extra=extra)

    def _boxed_card(self, out: list, card: str | None, zone: str | None) -> None:
        """A card found face up in the deck: not used, replaced by the next card (PP Irregularities 7); two in
        one deal are a misdeal (PP Misdeals 1c)."""
        self._boxed += 1
        if card and self.in_hand:
            self._retired[card] = "boxed"
        ruling, rules = REPLACE_CARD, []
        if self.in_hand and not self.void and self._boxed >= 2:
            ruling, rules = self._misdeal_or(REPLACE_CARD)
        ident = self._report(out, "boxed_card", ruling, seats=[], cards=[card] if card else [], zone=zone, rules=rules,
                             extra={"count": self._boxed})
        if ruling == MISDEAL:
            self._misdeal(out, "boxed_card", self._rules_of(ident), ident)

    # ---- cards of other decks -------------------------------------------------------------------------

    def _stray(self, out: list, uid: str, other: tuple[str, str], zone: str, kind: str, seat: int | None) -> None:
        """A card of another registered deck (PP Irregularities 3) — or, when a card of that name is in play, a
        second card of the same rank and suit (PP Irregularities 4)."""
        deck_id, card = other
        if uid in self._strays or (self.in_hand and self.void):
            return
        self._strays.add(uid)
        seats = [seat] if kind == "seat" and seat is not None else []
        if not self.in_hand:
            self._report(out, "foreign_card", REMOVE_CARD, seats=seats, cards=[card], zone=zone,
                         extra={"deck": deck_id})
        elif card in self._uids:
            self._duplicate(out, uid, card, zone, kind, seat, deck_id)
        elif kind in ("seat", "board"):
            self._report(out, "foreign_card", MISDEAL, seats=seats, cards=[card], zone=zone, needs_floor=True,
                         extra={"deck": deck_id}, data={"void": True})
        else:
            self._report(out, "foreign_card", ACTION_STANDS, seats=seats, cards=[card], zone=zone,
                         extra={"deck": deck_id})

    def _duplicate(self, out: list, uid: str, card: str, zone: str, kind: str, seat: int | None,
                   deck_id: str | None = None) -> None:
        if uid in self._strays and deck_id is None:
            return
        self._strays.add(uid)
        seats = [seat] if kind == "seat" and seat is not None else []
        if card in self._owner and self._owner[card] not in seats:
            seats.append(self._owner[card])
        self._report(out, "duplicate_card", MISDEAL, seats=seats, cards=[card], zone=zone, needs_floor=True,
                     extra={"deck": deck_id or self.deck_id}, data={"void": True})

    # ---- the floor ------------------------------------------------------------------------------------

    def _floor_command(self, out: list, name: str, command: dict[str, Any], by: dict, note: dict
                       ) -> tuple[list, str | None]:
        ident = command["irregularity"]
        irregularity = self.pending.get(ident)
        if irregularity is None:
            return out, f"no irregularity {ident} waits for the floor"
        if name == "floor_pick":
            if irregularity.ruling != FLOOR_PICKS_BURN:
                return out, f"irregularity {ident} ({irregularity.code}) is not settled by a pick of the burn card"
            card = parse_card(command["card"])
            if card not in irregularity.data["candidates"]:
                return out, f"{card} is not one of the cards to pick the burn card from"
            if irregularity.code == "flop_without_burn" and self._flop_acted():
                return out, ("a player has acted on the flop: TDA 39-2, play goes on with the three cards as dealt "
                             "(override)")
            self._apply_pick(out, irregularity, card, by)
            return out, None
        if name == "confirm" and irregularity.ruling == FLOOR_PICKS_BURN:
            return out, "the ruling is the floor's random pick of the burn card: send floor_pick with the card"
        del self.pending[ident]
        result = irregularity.ruling if name == "confirm" else PLAY_ON
        if result == MISDEAL and not (irregularity.data.get("void") or not self._substantial()):
            result = DEAD_HAND if "dead" in irregularity.data else PLAY_ON  # substantial action since
        dead = {"seats": list(irregularity.data.get("dead", irregularity.seats))} if result == DEAD_HAND else {}
        self._emit(out, "floor_ruling", {"irregularity": ident, "code": irregularity.code,
                                         "decision": "confirmed" if name == "confirm" else "overridden",
                                         "result": result, **dead, **note, **by})
        if result == MISDEAL:
            self._misdeal(out, irregularity.code, irregularity.rules, ident)
        elif result == DEAD_HAND:
            self._kill(*irregularity.data.get("dead", irregularity.seats))
        elif name == "override":
            self._override(out, irregularity)
        return out, None

    def _override(self, out: list, irregularity: Irregularity) -> None:
        """The floor rules that play goes on as dealt."""
        deal = self.deal
        if irregularity.code in ("button_misplaced", "first_card_wrong_seat"):
            deal.button = irregularity.data["dealt_button"]  # the deal was right: the table's button was not
        elif irregularity.code == "premature_board_card":
            for card in irregularity.data["cards"]:
                if card in self._premature and len(self.board) < 5:
                    self._premature.discard(card)
                    self._put_on_board(out, card)
        elif irregularity.code == "four_card_flop" and self._fourth is not None:
            card, self._fourth, self._pick = self._fourth, None, None
            self._put_on_board(out, card)
        elif irregularity.code == "flop_without_burn":
            self._pick = None

    def _put_on_board(self, out: list, card: str) -> None:
        self.board.append(card)
        self._burns_at.append(len(self.burns))
        self._street_acted = False
        self._emit(out, "board_card", {"card": card, "street": STREETS[len(self.board)], "position": len(self.board)})

    def _apply_pick(self, out: list, irregularity: Irregularity, card: str, by: dict | None) -> None:
        """TDA 39-1/-2: the floor's random pick is the burn card; the other cards are the flop (two of them, after
        a burnless flop: the next card completes it)."""
        candidates = irregularity.data["candidates"]
        self.pending.pop(irregularity.id, None)
        self._pick, self._fourth = None, None
        self.board = [c for c in candidates if c != card][:3]
        self._burns_at = [len(self.burns) + 1] * len(self.board)
        self._emit(out, "board_corrected", {"irregularity": irregularity.id, "code": irregularity.code,
                                            "board": list(self.board), **(by or {})}, {"card": card})
        self.burns.append(card)
        self._emit(out, "burn", {"count": len(self.burns)}, {"card": card})

    # ---- cards gone from the table --------------------------------------------------------------------

    def _watch_cards(self, out: list) -> None:
        """A card of this hand in play — a hole card, a board card, a burn card, not a card that reached the muck —
        that has been off every antenna for ``missing_card_s`` while the hand goes on is missing: one
        ``card_missing`` for it (the card on the secure branch only), resolved (``returned``) when it comes back.

        The hand goes on while two seats are still live and a card of the hand lies on a seat or the board: the
        dealer gathering the cards at the end (the board, the winner's cards, the muck) is never counted, nor is
        anything after the last live seat but one has folded. A player looking at their cards puts them back well
        within the time. Nothing counts while the table cannot tell (a reader down, an antenna faulted), while an
        irregularity of the hand waits for the floor, or in a void hand; absences count again from the moment that
        ends. Times are the events' (a card is off from its ``left`` event), so a journal replay finds the same."""
        limit = self.setup.missing_card_s
        if not self._off_since or limit <= 0 or self._watch_from is None or self._holding():
            return
        if len(self._live_seats()) < 2:
            return  # the hand is decided: what leaves the table now is the gathering
        if not any(Zone.parse(zone).place in ("seat", "board") and self.deck.get(uid) in self._uids
                   for uid, zone in self._on_table.items()):
            return  # nothing of the hand lies on a seat or the board any more: the dealer is gathering
        for card, (since, zone) in list(self._off_since.items()):
            if card in self._missing or not self._in_play(card) or self.now - max(since, self._watch_from) < limit:
                continue
            owner = self._owner.get(card)
            seats = [owner] if owner is not None and card not in self.board and card not in self.burns else []
            self._missing[card] = self._report(out, CARD_MISSING, NO_RULING, seats=seats, cards=[card], zone=zone,
                                               extra={"absent_s": round(self.now - since, 1)})

    def _in_play(self, card: str) -> bool:
        """A card the hand needs on the table until the end: not one in the muck (accounted for), nor one out of
        the play (exposed, extra or boxed cards set aside, premature cards taken back to the stub)."""
        return card not in self.mucked and (card in self._owner or card in self.board or card in self.burns)

    def _holding(self) -> bool:
        """Absences do not count now: no hand, a void one, the floor to rule, or the table not seeing all its
        antennas."""
        return (not self.in_hand or self.void or any(p.hand == self.hand for p in self.pending.values())
                or any(r["link"] in ("down", "incompatible") or r["faulted_antennas"] for r in self.readers.values()))

    def _note_hold(self) -> None:
        """After every input: absences count from the end of a hold (or the hand's start), not from before it."""
        if self._holding():
            self._watch_from = None
        elif self._watch_from is None:
            self._watch_from = self.now

    def _card_back(self, out: list, uid: str) -> None:
        """A card of the hand is read again: it is no longer off the table, and if it was reported missing, that
        is resolved."""
        card = self.deck.get(uid)
        if card is None or self._uids.get(card) != uid:
            return
        self._off_since.pop(card, None)
        ident = self._missing.pop(card, None)
        if ident is not None:
            self._resolved(out, ident, RETURNED)

    def _audit(self, out: list) -> None:
        """The hand ends with cards missing: where every card the hand saw ended (``hand_audit``; counts public,
        cards secure). A missing card is missing from the deck (PP Irregularities 10)."""
        places: dict[str, Any] = {"seats": {}, "board": [], "burn": [], "muck": [], "other": []}
        missing: list[str] = []
        for card in self._uids:  # in the order the hand saw them
            if card in self._missing:
                missing.append(card)
            elif card in self.mucked:
                places["muck"].append(card)
            elif card in self.board:
                places["board"].append(card)
            elif card in self.burns:
                places["burn"].append(card)
            elif card in self._owner:
                places["seats"].setdefault(self._owner[card], []).append(card)
            else:  # out of the play: set aside (exposed, extra, boxed), taken back to the stub, or never played
                places["other"].append(card)
        seats = places["seats"]
        places["seats"] = {str(seat): seats[seat] for seat in sorted(seats)}
        counts = {place: sum(map(len, cards.values())) if place == "seats" else len(cards)
                  for place, cards in places.items()}
        lost_from = sorted({self._owner[card] for card in missing if card in self._owner
                            and card not in self.board and card not in self.burns})
        self._emit(out, "hand_audit",
                   {"seen": len(self._uids), "places": counts, "missing": len(missing), "seats": lost_from,
                    "irregularities": [self._missing[card] for card in missing], "severity": WARNING,
                    "ruling": "new_deck", "rules": list(HAND_AUDIT_RULES)},
                   {"cards": {**places, "missing": missing}})

    # ---- the hand -----------------------------------------------------------------------------------

    def _start_hand(self, out: list) -> None:
        self._new_hand_state()
        self.in_hand = True
        self.hand += 1
        self._emit(out, "hand_started", {})

    def _end_hand(self, out: list) -> None:
        deal = self.deal
        self._decide_late(out, now=float("inf"))
        if not self.void and (deal.held or deal.fix is not None):
            self._close_deal(out)
        if self._missing:
            self._audit(out)
        live = self._live_seats()
        self._emit(
            out,
            "hand_ended",
            {"board": list(self.board), "live_seats": live, "folded_seats": self._folded_seats()},
            {"hole_cards": {str(s): list(self.seats[s].cards) for s in live}},
        )
        for ident in [i for i, irregularity in self.pending.items() if irregularity.hand == self.hand]:
            self._resolved(out, ident, "hand_ended")
        if not self.void:
            if deal.learning:
                deal.learn()
            dealt = sorted(seat for seat, count in deal.received.items() if count)
            if dealt:
                self.eligible = tuple(dealt)
            self.button = next_seat(self.eligible or [deal.button], deal.button)
        if self._next_button is not None:
            self.button, self._next_button = self._next_button, None
        if self._next_players is not None:
            self.eligible, self._next_players = self._next_players, None
        self._boxed = 0
        self.in_hand = False
        self._cleared_at = None

    def _misdeal(self, out: list, reason: str, rules: list[str], irregularity: int | None,
                 by: dict | None = None) -> None:
        """The hand is void: the bets go back (the betting layer), the button stays, the cards are dealt again."""
        if self.void:
            return
        self.void = True
        self.deal.checking = False
        self.deal.fix = None
        self.deal.held = []
        self._emit(out, "misdeal", {"reason": reason, "rules": list(rules), "irregularity": irregularity,
                                    "button": self.button, **(by or {})})
        for ident in [i for i, p in self.pending.items() if p.hand == self.hand and i != irregularity]:
            self._resolved(out, ident, "misdeal")

    def _resolved(self, out: list, ident: int, resolution: str, seats: list[int] | None = None) -> None:
        """``seats``: the hands a ``dead_hand`` resolution kills (the betting layer folds them)."""
        self.pending.pop(ident, None)
        code = self._reported.get(ident, ("wrong_card_count", []))[0]
        body = {"irregularity": ident, "code": code, "resolution": resolution}
        if seats is not None:
            body["seats"] = list(seats)
        self._emit(out, "irregularity_resolved", body)

    # ---- rulings ------------------------------------------------------------------------------------

    def _substantial(self) -> bool:
        """Substantial action has taken place: a misdeal can no longer be called (the betting layer's verdict; with
        the cards alone, CA GR 9's "never after the flop" and the folds the muck saw, counted by the house's rule)."""
        if self.substantial_action():
            return True
        kind = self.profile.substantial_action
        if kind == SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP and self.board:
            return True
        return self._folds_are_the_action and is_substantial(kind, [(seat, False) for seat in self._folds_seen])

    def _misdeal_or(self, otherwise: str) -> tuple[str, list[str]]:
        """MISDEAL while a misdeal can still be called, else ``otherwise``; with the rule that decided."""
        return (otherwise if self._substantial() else MISDEAL), [self.profile.cite("substantial_action")]

    def _rules_of(self, ident: int) -> list[str]:
        return list(self._reported.get(ident, ("", []))[1])

    # ---- helpers ------------------------------------------------------------------------------------

    def _live_seats(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.cards and not s.folded]

    def _folded_seats(self) -> list[int]:
        return [n for n, s in self.seats.items() if s.folded]

    def _irregular(self, out: list, code: str, zone: str, card: str, public_card: bool = False,
                   ruling: str = NO_RULING, rules: list[str] = (), **where: Any) -> int:
        """One of the codes the controller always had: ``zone``, ``seat``/``from_seat`` and ``card`` as before,
        with the ruling added."""
        public: dict[str, Any] = {"code": code, "zone": zone, **where}
        if public_card:
            public["card"] = card
        seats = [s for s in (where.get("seat"), where.get("from_seat")) if s is not None]
        return self._report(out, code, ruling, seats=seats, public=public,
                            secret={} if public_card else {"card": card}, rules=rules)

    def _report(self, out: list, code: str, ruling: str, *, seats: list[int], cards: list[str] = (),
                zone: str | None = None, needs_floor: bool = False, rules: list[str] = (),
                extra: dict | None = None, data: dict | None = None, public: dict | None = None,
                secret: dict | None = None) -> int:
        """Publish one irregularity; return its id (its seq). With ``needs_floor`` it waits in ``pending``."""
        info = CODES[code]
        cited = list(dict.fromkeys([*info.rules, *(r for r in rules if r)]))
        severity = severity_of(code, ruling, needs_floor)
        body = dict(public) if public is not None else {"code": code, **({"zone": zone} if zone else {})}
        body.update(extra or {})
        body.update({"seats": list(seats), "severity": severity, "ruling": ruling, "rules": cited,
                     "needs_floor": needs_floor, "profile": self.profile.name})
        hidden = dict(secret) if secret is not None else ({"cards": list(cards)} if cards else {})
        self._emit(out, "irregular_card", plain(body), hidden)
        ident = self.seq
        self._reported[ident] = (code, cited)
        if needs_floor:
            self.pending[ident] = Irregularity(ident, self.hand, code, ruling, severity, list(seats), cited,
                                               dict(data or {}))
        return ident

    def _emit(self, out: list, type_: str, public: dict, secret: dict | None = None) -> None:
        self.seq += 1
        hand = self.hand if self.hand else None
        out.append(DomainEvent(self.seq, type_, self.now, hand, public, secret or {}))

    # ---- the picture --------------------------------------------------------------------------------

    def on_table(self) -> dict[str, str]:
        """Every tag the controller believes lies on the table: uid → zone."""
        return dict(self._on_table)

    def phase(self) -> str:
        if not self.in_hand:
            return "waiting"
        return STREETS.get(len(self.board), "preflop") if self.board else "preflop"

    # ---- checkpoints: what carries over from one hand to the next, as plain data ------------------------

    def checkpoint_state(self) -> dict[str, Any]:
        """The state a hand's end leaves for the next hand, as JSON (the hand's own state starts afresh)."""
        return {"seq": self.seq, "hand": self.hand, "now": self.now, "button": self.button,
                "next_button": self._next_button, "eligible": None if self.eligible is None else list(self.eligible),
                "next_players": None if self._next_players is None else list(self._next_players),
                "deck_id": self.deck_id, "on_table": dict(self._on_table),
                "readers": {name: {"link": state["link"], "faulted_antennas": list(state["faulted_antennas"])}
                            for name, state in self.readers.items()}}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        """Take over :meth:`checkpoint_state` on a controller just made from the same setup."""
        self.seq, self.hand, self.now = int(state["seq"]), int(state["hand"]), float(state["now"])
        self.in_hand = False
        self.button = int(state["button"])
        self._next_button = state["next_button"]
        self.eligible = None if state["eligible"] is None else tuple(state["eligible"])
        self._next_players = None if state["next_players"] is None else tuple(state["next_players"])
        if state["deck_id"] != self.deck_id:
            self.deck_id, self.deck = state["deck_id"], self.setup.decks[state["deck_id"]]
            self._others = self._other_decks()
        self._on_table = dict(state["on_table"])
        self.readers = {name: {"link": r["link"], "faulted_antennas": list(r["faulted_antennas"])}
                        for name, r in state["readers"].items()}
        self._new_hand_state()  # the next deal's plan, from the button and the players above

    def snapshot(self, secure: bool) -> dict[str, Any]:
        """The table as it is now; hole and burn cards only when ``secure``."""
        seats = []
        for n, place in self.seats.items():
            entry: dict[str, Any] = {"seat": n, "cards": len(place.cards), "folded": place.folded}
            if secure:
                entry["hole_cards"] = list(place.cards)
            seats.append(entry)
        players = self.deal.order if self.in_hand and self.deal.order is not None else self.eligible
        snap: dict[str, Any] = {
            "table": self.setup.table_id,
            "seq": self.seq,
            "t": round(self.now, 3),
            "hand": self.hand if self.hand else None,
            "phase": self.phase(),
            "seats": seats,
            "board": list(self.board),
            "burns": len(self.burns),
            "mucked": len(self.mucked),
            "readers": {name: dict(state) for name, state in self.readers.items()},
            "deck": self.deck_id,
            "button": self.deal.button if self.in_hand else self.button,
            "players": sorted(players) if players is not None else None,
            "misdeal": self.void,
            "irregularities": [p.public() for p in self.pending.values()],
        }
        if secure:
            snap["burn_cards"] = list(self.burns)
        return snap
