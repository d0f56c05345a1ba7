"""The card controller: follow a hold'em (or Omaha) hand from the cards the antennas see, and rule on what goes
wrong in the deal.

Input: zone events (a tag arrived in or left ``seatN.cards``, ``board``, ``burn``, ``muck``, ``exposed``), the time,
and commands from the floor and the dealer console. Output: domain events (``hand_started``, ``card_dealt``,
``burn``, ``board_card``, ``fold``, ``hand_ended``; ``irregular_card`` for every irregularity, with its ruling;
``misdeal``, ``floor_ruling``, ``irregularity_resolved``, ``board_corrected`` and the command events) plus a
snapshot of the table. docs/events.md lists every irregularity code with its rules.

This module is the coordinator: it keeps what lasts from hand to hand (numbering, button, players, deck, what lies on
the table, the readers), starts and ends hands, routes each card to the part it concerns and answers the floor. The
parts, each given what it needs at construction; those that report emit into the table's one ``Outbox`` (where the
hand's cards are and the decks only keep state, and report through the irregularities):

* ``controller.hand_cards`` — where the hand's cards are (seats, owners, muck, set-aside cards);
* ``controller.deal_rulings`` — the deal checked as it happens, and its dead hands;
* ``controller.misdeals`` — whether a misdeal can still be called (substantial action), and calling it;
* ``controller.board`` — flop, turn, river and burns (TDA 39);
* ``controller.out_of_play`` — the muck, exposed and boxed cards;
* ``controller.decks`` — the deck in play, other decks' cards and duplicates;
* ``controller.missing_cards`` — cards gone from the table while the hand goes on;
* ``controller.irregularities`` — what is reported, and what of it waits in the floor queue (``controller.floor``);
* ``controller.table_snapshot`` — the snapshot and the checkpoint.

One path for a card: the coordinator calls the parts in turn, and what one part's answer means for another it
passes on itself (a fresh burn or a hole card in the muck ends the deal; a board card is the board's check, the
deal's say, the board's turn; the deal's premature board cards go to the board). The parts read the state they
are given (where the cards are, the board and its runs) and report through the irregularities and
``controller.misdeals``, but call no other part, with one exception: the deal hands the board cards it kept to the
board the moment its last card comes, before anything else of that input happens.

Commands (``controller.commands``): the card controller owns those of the cards (``handlers``), each checked without
changing anything, then applied; alone it takes them from its own ``CommandTable``, in a game the table's has them.

Timers: the deal's and the board's cards read late (``ReadWindows.read_order_s``), the missing-card watch, the table
clearing and the end of a window of unknown tags held (``UNKNOWN_TAG_WINDOW_S``) each have a deadline (``next_due``
of the parts); after every input the coordinator takes the earliest (``_reschedule``), and neither a tick nor a card
asks a part before its deadline.

How the hand is read:
* the first card that reaches a seat while no hand is running starts a hand;
* the deal is checked as it happens (``controller.dealing.Deal``). The eligible seats are those dealt in the last
  hand, or ``TableSetup.players`` at the start, or the last ``seats`` command; with none of them (a table's first
  hand) the deal is taken as dealt and learned from. The button starts at ``TableSetup.button`` (default: the highest
  seat), moves to the next eligible seat after every hand that was not misdealt, and ``set_button`` places it;
* the board takes the flop, turn and river in order; burns are counted;
* a live seat's card reaching the muck is a fold — unless that seat is the last one left, whose cards the dealer
  is simply gathering;
* the hand ends when nothing has been on any antenna for ``clear_after_s`` seconds (the dealer gathered the
  cards), or at once when the next hand's first card arrives on a cleared table. After a misdeal the next card to
  a seat while no seat holds a card starts the new deal (the button has not moved).
A card lifted off its zone and put back (a player looking at their cards) changes nothing.

An irregularity that needs the floor waits in the floor queue (``floor``, and in the snapshot) until a ``confirm``, ``override``
or ``floor_pick`` command, or the end of its hand, when it lapses (``irregularity_resolved``) with the rest of the
table's rulings on that hand. Whether a misdeal can still be called, whether a board card is
premature and whether a fourth card is a four-card flop ask the betting layer given at construction
(``BettingProgress``; without one, no action has happened but the folds and declarations the cards show). Everything
is a function of the inputs, so a journal replay restores pending irregularities too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from controller import table_snapshot
from controller.board import Board, BettingProgress
from controller.board_runs import RUN_RULES
from controller.cards import parse_card
from controller.command_events import ButtonSet, Declaration, FloorCalled, NewHandCalled, RunItAgreed, SeatsSet
from controller.commands import Command, CommandTable, Handler, Refusal, allowed
from controller.deal_rulings import DealRulings
from controller.dealing import (DEAD_HAND, FLOOR_PICKS_BURN, MISDEAL, PLAY_ON, THIRD_STREET_CARDS, Deal, ReadWindows,
                               big_blind_seat, next_seat, rotate)
from controller.decks import Decks
from controller.domain import DomainEvent
from controller.events import (AntennaChanged, DeckSelected, FloorRuling, HandEnded, HandStarted, ReaderLinkChanged,
                               UnknownTag)
from controller.hand_cards import HandCards, Seat
from controller.floor import CARDS, HAND_END, FloorQueue, Irregularity, not_waiting
from controller.irregularities import Irregularities
from controller.levels import Level
from controller.misdeals import Misdeals
from controller.missing_cards import MissingCardWatch
from controller.out_of_play import OutOfPlay
from controller.outbox import Outbox
from controller.rotation import Game, Rotation, RotationSetup
from controller.player_limits import limit_rule, max_players
from controller.rules import BLINDS_BUST_BUTTON_STAYS
from controller.rules import profile as rule_profile
from controller.stud import GAMES as STUD_GAMES
from controller.stud_deal import StudDeal
from hal.bursts import Bursts
from hal.events import DeviceEvent, ZoneEvent
from hal.zone_names import Zone

EXPOSED_ZONE = "exposed"  # where a table with an exposed-card zone has the dealer put exposed cards
EXPOSED_BY = ("console", "zone")
# The parts' deadlines are taken this much early: whether a deadline has come is each part's own test (``now - since >=
# limit``), which a deadline computed as ``since + limit`` may miss by a rounding. Asked early, a part decides nothing.
DUE_EARLY_S = 1e-3
NEVER = float("inf")
# Unknown tags reported one by one per zone in a window; the rest of the window as one event that counts them (a noisy
# reader or a foreign deck must not flood the feeds and the journal).
UNKNOWN_TAG_REPORTS = 5
UNKNOWN_TAG_WINDOW_S = 10.0

__all__ = ["BettingProgress", "Irregularity", "NoBetting", "Seat", "TableController", "TableSetup"]


class NoBetting:
    """A table that does not read the chips: no action is seen but the folds and declarations the cards show."""

    reads_chips = False

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
    double_board: bool = False  # two boards every hand (CA GR 14.1)
    max_players: int = 10  # the most players dealt in (CA GR 15 by variant: controller.player_limits)
    # The pace of the readers of the card zones: the slowest one's pass over its antennas, and the reads that settle a
    # dealt card. A reader that visits its antennas in turn cannot tell the order of two cards that landed within a
    # pass, and reads a card some passes after it landed: the deal's windows for cards read late follow from them
    # (controller.dealing.ReadWindows). The defaults are the reference reader's, 20 passes a second.
    card_pass_s: float = 0.05
    card_reads: int = 2
    # The game dealt: a stud game (controller.stud.GAMES) deals up and down cards street by street, with no board
    # (controller.stud_deal); every other game deals its hole cards, then the board.
    variant: str = "nlhe"
    # The games the table deals, in turn (a mixed game: controller.rotation); None: one game of hole_cards cards.
    rotation: RotationSetup | None = None

    def games(self) -> RotationSetup:
        """The rotation of the table's games; a table that deals one game has a rotation of one."""
        return self.rotation if self.rotation is not None else RotationSetup((Game("", "", self.hole_cards),))


class TableController:
    def __init__(self, setup: TableSetup, betting: BettingProgress | None = None, out: Outbox | None = None,
                 floor: FloorQueue | None = None, hand_ending: Callable[[HandEnded], None] | None = None,
                 rotation: Rotation | None = None):
        """``betting``: what the betting layer knows of the action (without it: no action has happened but the folds
        and declarations the cards show, no round is open); ``out``: the outbox the events go to, and ``floor`` the
        queue of what waits for the floor, both shared with the rest of the table (default: its own).
        ``hand_ending``: told the hand's end just before it is announced, so that the hand's result (the award)
        comes before ``hand_ended`` (docs/mqtt.md, "A hand's end"). ``rotation``: the game of each hand (the table's
        one game by default; in a game, the table's, which a level or the floor may change)."""
        if setup.exposed_by not in EXPOSED_BY:
            raise ValueError(f"exposed_by must be one of {', '.join(EXPOSED_BY)}, not {setup.exposed_by!r}")
        if setup.button is not None and not 1 <= setup.button <= setup.seats:
            raise ValueError(f"button {setup.button}: the table has seats 1 to {setup.seats}")
        if setup.players is not None and not all(1 <= s <= setup.seats for s in setup.players):
            raise ValueError(f"players {list(setup.players)}: the table has seats 1 to {setup.seats}")
        self.setup = setup
        self.hand_ending = hand_ending if hand_ending is not None else (lambda ended: None)
        self.profile = rule_profile(setup.rules)
        self.rotation = rotation if rotation is not None else Rotation(setup.games())
        self.out = out if out is not None else Outbox()
        self.floor = floor if floor is not None else FloorQueue()
        self.hand = 0
        self._on_table: dict[str, str] = {}  # uid → zone, everything the antennas report now
        self.readers: dict[str, dict[str, Any]] = {}  # reader → link state and faulted antennas
        self._cleared_at: float | None = None
        self.button = setup.button if setup.button is not None else setup.seats
        self.eligible: tuple[int, ...] | None = tuple(sorted(set(setup.players))) if setup.players else None
        self.next_button: int | None = None  # set_button during a hand: the next hand's button
        self.next_players: tuple[int, ...] | None = None  # a seats command during a hand
        # the last hand's button, the seats dealt in it and its big blind, for the button after busts (see
        # _button_for_players)
        self.last_deal: tuple[int, tuple[int, ...], int] | None = None
        # the next hand has a big blind and no small blind: the last big blind left, and the small blind falls on its
        # empty seat (AC 27; DE 9)
        self.no_small_blind = False
        self.sitting_out: int | None = None  # the small blind not dealt in the next hand (CA GR 15.2: a bomb pot)
        progress = betting if betting is not None else NoBetting()
        windows = ReadWindows.of(setup.card_pass_s, setup.card_reads)
        self.irregularities = Irregularities(self.out, self.floor, self.profile)
        self.hand_cards = HandCards(setup.seats, self._plan(), self.button)
        self.board_part = Board(self.out, self.irregularities, self.hand_cards, progress, self.profile,
                               double_board=setup.double_board, windows=windows)
        self.misdeals = Misdeals(self.out, self.irregularities, self.hand_cards, self.board_part, progress,
                                 self.profile, folds_are_the_action=not progress.reads_chips)
        self.deal_rulings = DealRulings(self.out, self.irregularities, self.hand_cards, self.board_part, self.misdeals,
                                        self.profile, setup.hole_cards, max_players=setup.max_players,
                                        limit_rules=(limit_rule(setup.double_board),) if setup.max_players < 10 else (),
                                        windows=windows)
        self.stud_deal = StudDeal(self.out, self.irregularities, self.hand_cards, self.deal_rulings, self.misdeals)
        self.out_of_play = OutOfPlay(self.out, self.irregularities, self.hand_cards, self.board_part, self.misdeals,
                                     self.profile, setup.exposed_by)
        self.decks = Decks(self.irregularities, self.hand_cards, setup.decks, setup.deck_id, setup.deck)
        self.watch = MissingCardWatch(self.out, self.irregularities, self.hand_cards, self.board_part,
                                      setup.missing_card_s)
        self._unknown_tags = Bursts(UNKNOWN_TAG_REPORTS, UNKNOWN_TAG_WINDOW_S)
        self.handlers = self._own_handlers(progress.reads_chips)  # its commands, for the table's CommandTable
        self.commands = CommandTable(self.out, self.handlers)  # where the card controller runs alone
        # When the parts' timers next have something to decide (see _reschedule): before then an input or a tick
        # does not ask them.
        self._decide_due = self._watch_due = self._due = NEVER

    def _plan(self) -> Deal:
        eligible = self.eligible
        if eligible is not None and self.sitting_out in eligible:
            eligible = tuple(s for s in eligible if s != self.sitting_out)
        # planned between hands, or as a hand begins once its game is known: the next hand's game
        game = self.rotation.game_now(in_hand=False)
        if self._stud(game):  # third street's cards as the deal's rounds, the later streets' one by one
            # (controller.stud_deal), from the dealer's left: a stud game is dealt without a button (TDA 4)
            return Deal.plan(THIRD_STREET_CARDS, self.setup.seats, eligible)
        return Deal.plan(game.hole_cards, self.button, eligible)

    def _stud(self, game: Game) -> str | None:
        """The stud game ``game`` is (the table's one game is the setup's variant), or None."""
        name = game.name or self.setup.variant
        return name if name in STUD_GAMES else None

    def _button_for_players(self) -> None:
        """The next hand's button once the floor named its players (``seats``), from the hand before
        (``last_deal``): where players busted, the button moves as the books say.

        * AC 29: "Na začiatku heads-up môže byť potrebné upraviť button tak, aby ani jeden hráč nevsádzal big blind
          dvakrát po sebe" (DE 13: the button posts the small blind): at the start of heads-up the last hand's big
          blind takes the button, so that the other player posts the big blind.
        * Both blinds busted (``RuleProfile.blinds_bust``): DE 9 "Scheiden Small-Blind und Big-Blind in der aktuellen
          Runde aus, bleibt der Dealer in der neuen Runde an der aktuellen Position"; AC 27: the big blind is posted
          by who owes it, so the button moves on as usual, onto an empty seat if need be (a dead button).
        * The big blind left (AC 27; DE 9 "Sollte einmal der Big-Blind in der aktuellen Runde ausscheiden, gibt es in
          der nächsten Runde keinen Small-Blind"): who owes the big blind posts it, first left of the button, and the
          small blind falls on the empty seat: the next hand has none (``no_small_blind``)."""
        if self.last_deal is None or self.eligible is None:
            return
        button, dealt, big_blind = self.last_deal
        players = set(self.eligible)
        self.button = self._button_after(button, dealt, big_blind)  # as if nobody had busted
        self.no_small_blind = False
        if len(dealt) < 3:
            return
        order = rotate(dealt, button)
        small_blind = None if big_blind == order[0] else order[0]  # (none: the last hand had no small blind)
        if len(players) == 2 and big_blind in players:
            self.button = big_blind
        elif (self.profile.blinds_bust == BLINDS_BUST_BUTTON_STAYS and not {small_blind, big_blind} & players
              and button in players):
            self.button = button
        elif len(players) > 2 and big_blind not in players:
            self.no_small_blind = rotate(players, self.button)[0] == next_seat(players, big_blind)

    def _button_after(self, button: int, dealt: Sequence[int], big_blind: int) -> int:
        """The next hand's button after a hand dealt to ``dealt`` from ``button``, whose big blind was ``big_blind``:
        the seat of its small blind. A hand without one had it on the empty seat before the big blind (AC 27: the
        button "môže byť umiestnený aj na voľné miesto"), so that the big blind moves one player."""
        if len(dealt) > 2 and big_blind == rotate(dealt, button)[0]:
            return big_blind - 1 if big_blind > 1 else self.setup.seats
        return next_seat(dealt or [button], button)

    def bomb_pot_sit_out(self) -> int | None:
        """A bomb pot agreed for the next hand: "if there are too many players, the small blind sits out" (CA GR
        15.2, whose limits are lower than 15.1's: 5-card Omaha deals seven players, not eight). Returns the seat
        that sits out that hand (the first left of the button), or None."""
        players = self.next_players or self.eligible
        most = min(max_players(self.rotation.game_now(in_hand=False).hole_cards, bomb_pot=True), self.setup.max_players)
        if self.in_hand or not players or len(players) <= most:
            return None
        self.sitting_out = rotate(players, self.button)[0]
        return self.sitting_out

    def _new_hand_state(self) -> None:
        self.hand_cards.reset(self._plan(), self.button)
        self.irregularities.new_hand()
        self.board_part.new_hand()
        self.deal_rulings.new_hand()
        self.stud_deal.new_hand(None)
        self.decks.new_hand()
        self.watch.new_hand()

    # ---- the table's picture, read by the chip layer, the daemon and the tests -----------------------

    @property
    def seq(self) -> int:
        return self.out.seq

    @property
    def now(self) -> float:
        return self.out.now

    @property
    def in_hand(self) -> bool:
        return self.hand_cards.in_hand

    @property
    def void(self) -> bool:
        return self.hand_cards.void

    @property
    def seats(self) -> dict[int, Seat]:
        return self.hand_cards.seats

    @property
    def deal(self) -> Deal:
        return self.hand_cards.deal

    @property
    def mucked(self) -> list[str]:
        return self.hand_cards.mucked

    @property
    def board(self) -> list[str]:
        if self.stud_deal.community is not None:  # a stud hand's community card, the deck run short
            return [self.stud_deal.community]
        return self.board_part.cards

    @property
    def boards(self) -> list[list[str]]:
        """Every board of the hand, run by run: one, or several (runs, a double board)."""
        return self.board_part.boards()

    @property
    def burns(self) -> list[str]:
        return self.board_part.burns

    @property
    def deck_id(self) -> str:
        return self.decks.deck_id

    @property
    def deck(self) -> Mapping[str, str]:
        return self.decks.deck

    def on_table(self) -> dict[str, str]:
        """Every tag the controller believes lies on the table: uid → zone."""
        return dict(self._on_table)

    @property
    def stud_game(self) -> str | None:
        """The running (or last) hand's stud game (``stud``, ``stud8``, ``razz``); None for the other games."""
        return self.stud_deal.game

    def phase(self) -> str:
        if self.in_hand and self.stud_deal.active:
            return self.hand_cards.stud_street or "third"
        return self.board_part.street() if self.in_hand else "waiting"

    def numbered_event(self, type_: str, t: float, public: dict[str, Any], secret: dict[str, Any] | None = None
                       ) -> DomainEvent:
        """An event the service raises (the journal's state, an equity result), numbered like the table's own so
        that the stream stays one gapless sequence and a replay numbers it the same."""
        return self.out.numbered(type_, t, public, secret)

    # ---- inputs -------------------------------------------------------------------------------------

    def handle(self, event: ZoneEvent) -> list[DomainEvent]:
        """Apply one zone event; return the domain events it causes, in order."""
        self.out.begin(event.t)
        if self.in_hand and self.out.now >= self._watch_due:
            self.watch.check(self._holding(), self._on_table, self.deck)  # what went missing up to now
        if event.kind == "left":
            self._tag_left(event)
        else:
            self._tag_arrived(event)
        self._note_hold()
        return self.out.take()

    def _tag_left(self, event: ZoneEvent) -> None:
        """A tag left its zone: a card off the board goes back to the stub, a card of the hand is off the table (the
        missing-card watch), and an empty table starts the wait that ends the hand."""
        self._on_table.pop(event.uid, None)
        card = self.deck.get(event.uid)
        if Zone.parse(event.zone).kind == "board" and card is not None:
            self.board_part.taken_back(card, early=self.deal_rulings.taken_back(card))
        if self.in_hand and card is not None and self.hand_cards.uids.get(card) == event.uid:
            self.watch.card_left(card, event.t, event.zone)
        if not self._on_table and self.in_hand:
            self._cleared_at = event.t

    def _tag_arrived(self, event: ZoneEvent) -> None:
        """A tag arrived in a zone. In this order: the hand a cleared table ended is over, what waited for cards
        read late is decided, a card of the hand is back; then the tag is placed — no card of the deck in play (the
        decks), a void hand's card (it may start the new deal), a second tag of a card (the decks) — and the card
        goes to the one part its zone concerns: a seat's to the deal, the board's to the board after the deal's
        say, a burn to the board, the muck and the exposed cards to the cards out of play."""
        if self.in_hand and not self._on_table and self._cleared_at is not None:
            self._end_hand()  # the next hand's first card landed on a cleared table
        if self.in_hand:
            self._decide_late()
            card = self.deck.get(event.uid)
            if card is not None and self.hand_cards.uids.get(card) == event.uid:
                self.watch.card_back(card)
        self._on_table[event.uid] = event.zone
        self._cleared_at = None

        parsed = Zone.parse(event.zone)
        kind, seat = parsed.place, parsed.seat
        card = self.deck.get(event.uid)
        if card is None:
            other = self.decks.others.get(event.uid)
            if other is None:
                self._unknown_tag(self._unknown_tags.offer(event.zone, event.t, (event.zone, event.uid)))
            else:
                self.decks.stray(event.uid, other, event.zone, kind, seat)
            return
        if self.in_hand and self.void:
            if kind == "seat" and not any(Zone.parse(zone).place == "seat" for uid, zone in self._on_table.items()
                                          if uid != event.uid):
                self._end_hand()  # the new deal after a misdeal
            else:
                return
        if self.in_hand and self.hand_cards.uids.get(card, event.uid) != event.uid:
            self.decks.duplicate(event.uid, card, event.zone, kind, seat)
            return
        if kind == "seat":
            assert seat is not None  # a seat's zone names it
            if not self.in_hand:
                self._start_hand()
            if self.stud_deal.active:
                self.stud_deal.seat_card(card, seat, event.zone, self.board_part.burns)
            else:
                self.deal_rulings.seat_card(card, seat, event.zone)
        elif kind == "board" and self.stud_deal.active and self.in_hand:
            self.stud_deal.board_card(card, self.board_part.burns)
        elif kind in ("board", "board2"):
            # a later run's or the second board's card is taken as it comes; the first board's is checked, the deal
            # keeps it while the deal is not over, and the board turns it
            board = self.board_part
            if (not board.later_board(card, kind) and board.arrives(card)
                    and not self.deal_rulings.holds_board_card(card)):
                board.turn(card)
        elif kind == "burn":
            if self.board_part.burn(card):
                self.deal_rulings.close_soon()  # the dealer burns for the flop: the deal is over
        elif kind == "muck":
            if self.out_of_play.muck(card):
                self.deal_rulings.close_soon()  # a fold (or the gathering): the deal is over
        elif kind == EXPOSED_ZONE:
            if not self.in_hand:  # the deal's first card, exposed on its way (a boxed card found before the deal
                self._start_hand()  # is reported with exposed_card without a seat)
            self.out_of_play.exposed_zone(card, event.zone)
        else:  # a card on a chip zone (bets, pot)
            self.irregularities.irregular("card_in_chip_zone", event.zone, card)
        if self.in_hand:
            self.hand_cards.uids.setdefault(card, event.uid)

    def handle_device(self, event: DeviceEvent) -> list[DomainEvent]:
        """A reader link went up or down, an antenna faulted or recovered: published for the floor and the
        technician, and kept in the snapshot (a table whose reader is down is not seeing its cards)."""
        self.out.begin(event.t)
        detail = dict(event.detail)
        reader = self.readers.setdefault(event.reader, {"link": "unknown", "faulted_antennas": []})
        if event.kind in ("reader_up", "reader_down", "reader_incompatible"):
            reader["link"] = event.kind.removeprefix("reader_")
            self.out.publish(ReaderLinkChanged(event.reader, reader["link"], detail))
        elif event.kind == "reader_reset":
            self.out.publish(ReaderLinkChanged(event.reader, "reset", detail))
        elif event.kind in ("antenna_fault", "antenna_ok"):
            antenna = detail.get("antenna")
            if (antenna in reader["faulted_antennas"]) == (event.kind == "antenna_fault"):
                return self.out.take()  # the reader repeats a lasting fault every few seconds: news only on change
            faulted = set(reader["faulted_antennas"])
            faulted.add(antenna) if event.kind == "antenna_fault" else faulted.discard(antenna)
            reader["faulted_antennas"] = sorted(faulted)
            self.out.publish(AntennaChanged(event.reader, "fault" if event.kind == "antenna_fault" else "ok", detail))
        self._note_hold()
        return self.out.take()

    def tick(self, now: float) -> list[DomainEvent]:
        """Let time pass: decides what waited for cards read late, reports the cards that went missing, ends the hand
        once the table has stayed clear long enough. Before the earliest of those deadlines a tick asks no part."""
        self.out.begin(now)
        if now < self._due:
            return []
        self._unknown_tag(self._unknown_tags.due(now))
        if self.in_hand:
            self._decide_late()
        if self.in_hand and now >= self._watch_due:
            self.watch.check(self._holding(), self._on_table, self.deck)
        if self.in_hand and self._cleared_at is not None and now - self._cleared_at >= self.setup.clear_after_s:
            self._end_hand()
        self._note_hold()  # changes with an event only (a ruling, the hand's end): a tick without one leaves no trace
        return self.out.take()

    def next_due(self) -> float:
        """The earliest time a tick has something to decide (a moment early; inf: nothing until the next input)."""
        return self._due

    def _unknown_tag(self, reports: list[tuple[tuple[str, str], int]]) -> None:
        """``unknown_tag`` for each report of the bursts: one tag, or the newest of a window's held ones with how
        many arrived in that zone (``summarised``)."""
        for (zone, uid), count in reports:
            self.out.publish(UnknownTag(zone, uid, count))

    def _decide_late(self, now: float | None = None) -> None:
        """What waited for cards read late is decided once the read-order window has passed (at the end of the hand:
        now)."""
        if self.void or (now is None and self.out.now < self._decide_due):
            return
        now = self.out.now if now is None else now
        self.deal_rulings.decide_held(now)
        for card in self.deal_rulings.early_board_due(now):  # turned before the deal was over
            if not self.void:
                self.board_part.premature_card(card)
        self.deal_rulings.decide_close(now)
        self.board_part.decide_fourth(now)
        self.deal_rulings.decide_fix()
        self.board_part.decide_burns(now)

    def _holding(self) -> bool:
        """Absences do not count now: no hand, a void one, the floor to rule, or the table not seeing all its
        antennas."""
        return (not self.in_hand or self.void or self.floor.waits_in(self.hand, CARDS)
                or any(r["link"] in ("down", "incompatible") or r["faulted_antennas"] for r in self.readers.values()))

    def _note_hold(self) -> None:
        """After every input: the missing-card watch learns whether absences count, and the deadlines are taken
        anew (only an input or a decision changes them)."""
        self.watch.note_hold(self._holding())
        self._reschedule()

    def _reschedule(self) -> None:
        """When the parts' timers next have something to decide: the deal's and the board's cards read late
        (``DealRulings.next_due``, ``Board.next_due``), a card gone too long (``MissingCardWatch.next_due``), the
        table clear long enough to end the hand. None of them runs in a void hand but the last."""
        bursts = self._unknown_tags.next_due() - DUE_EARLY_S  # the unknown tags held, in or out of a hand
        if not self.in_hand:
            self._decide_due = self._watch_due = NEVER
            self._due = bursts
            return
        clear = self._cleared_at + self.setup.clear_after_s - DUE_EARLY_S if self._cleared_at is not None else NEVER
        if self.void:
            self._decide_due = self._watch_due = NEVER
        else:
            self._decide_due = min(self.deal_rulings.next_due(), self.board_part.next_due()) - DUE_EARLY_S
            self._watch_due = self.watch.next_due() - DUE_EARLY_S
        self._due = min(self._decide_due, self._watch_due, clear, bursts)

    # ---- the hand -----------------------------------------------------------------------------------

    @property
    def game(self) -> Game:
        """The running hand's game; between hands, the next hand's."""
        return self.rotation.game_now(self.in_hand)

    def _start_hand(self) -> None:
        game = self.rotation.hand_started()  # the hand's game first: the deal is planned for it
        self._new_hand_state()
        self.stud_deal.new_hand(self._stud(game))
        self.hand_cards.start()
        self.hand += 1
        self.out.hand = self.hand
        self.out.publish(HandStarted(game))

    def _end_hand(self) -> None:
        deal = self.deal
        self._decide_late(now=float("inf"))
        if not self.void and (deal.held or deal.fix is not None):
            self.deal_rulings.close()
        self.watch.audit()
        live = self.hand_cards.live_seats()
        boards = self.boards
        ended = HandEnded(tuple(self.board), tuple(tuple(board) for board in boards), tuple(live),
                          tuple(self.hand_cards.folded_seats()),
                          tuple((seat, tuple(self.seats[seat].cards)) for seat in live), misdeal=self.void)
        self.hand_ending(ended)  # the hand's result first
        self.out.publish(ended)
        for ident in self.irregularities.of_hand(self.hand):
            self.irregularities.resolved(ident, "hand_ended")
        for wait in self.floor.lapsing(HAND_END):  # the rest of the table's rulings on the hand lapse with them
            if wait.hand == self.hand:
                self.floor.lapse(wait.id, "hand_ended", self.out)
        if not self.void:
            if deal.learning:
                deal.learn()
            dealt = sorted(seat for seat, count in deal.received.items() if count)
            if self.sitting_out is not None:  # the small blind sat out this hand only
                dealt = sorted(set(dealt) | {self.sitting_out})
            if dealt:
                self.eligible = tuple(dealt)
            if self.rotation.button_moves():  # a stud hand leaves the button where it is (TDA 4)
                players = tuple(self.eligible or ())
                self.last_deal = (deal.button, players, big_blind_seat(deal.button, players, self.no_small_blind))
                self.button = self._button_after(*self.last_deal)
                self.no_small_blind = False
        self.rotation.hand_ended(misdeal=self.void)
        self.sitting_out = None
        if self.next_players is not None:
            self.eligible, self.next_players = self.next_players, None
            self._button_for_players()
        if self.next_button is not None:
            self.button, self.next_button, self.last_deal = self.next_button, None, None
            self.no_small_blind = False
        self.out_of_play.deal_over()
        self.hand_cards.end()
        self._cleared_at = None

    def hand_dead(self, seat: int) -> None:
        """A rule beyond the cards (the action clock, the floor confirming a device breach) killed the seat's hand
        on a table that does not read the chips: the seat is out of the hand, as if it had folded."""
        if self.in_hand:
            self.hand_cards.kill(seat)

    def restore_hand(self, seat: int) -> None:
        """The floor restored a hand the dealer mucked at the showdown (CA Actions 9; AC 14): it is live again."""
        place = self.seats.get(seat)
        if self.in_hand and place is not None and place.cards:
            self.hand_cards.restore(seat)

    # ---- commands -----------------------------------------------------------------------------------

    def _own_handlers(self, reads_chips: bool) -> dict[str, Handler]:
        """The commands the card controller owns (``controller.commands``): each checked without changing anything,
        then applied. On a table that reads the chips the betting owns the declarations."""
        handlers = {
            "select_deck": Handler(self._deck_refusal, self._select_deck),
            "misdeal": Handler(self._misdeal_refusal, self._misdeal_command),
            "exposed_card": Handler(self._exposed_refusal, self._exposed_command),
            "confirm": Handler(self._answer_refusal, self._confirm),
            "override": Handler(self._answer_refusal, self._override),
            "floor_pick": Handler(self._pick_refusal, self._floor_pick),
            "set_button": Handler(allowed, self._set_button),
            "seats": Handler(self._seats_refusal, self._seats),
            "new_hand": Handler(allowed, self._new_hand),
            "floor_call": Handler(allowed, self._floor_call),
            "run_it": Handler(self._run_it_refusal, self._run_it),
            "ping": Handler(allowed, self._ping),
        }
        if not reads_chips:
            handlers["declare"] = Handler(self._declare_refusal, self._declare)
        return handlers

    def handle_command(self, command: Mapping[str, Any] | Command, t: float) -> tuple[list[DomainEvent],
                                                                                      Refusal | None]:
        """A validated command from the floor or the dealer console; returns its events, or why it was refused
        in the current state (nothing changes then)."""
        command = Command.of(command)
        refusal = self.commands.check(command, t)
        if refusal is not None:
            return [], refusal
        return self.commands.apply(command, t), None

    def _applied(self) -> list[DomainEvent]:
        """A command's events, once the deadlines are taken anew (as after every input)."""
        self._note_hold()
        return self.out.take()

    def _deck_refusal(self, command: Command, t: float) -> Refusal | None:
        return Refusal("a hand is running: the deck can be changed between hands") if self.in_hand else None

    def _select_deck(self, command: Command, t: float) -> list[DomainEvent]:
        self.decks.select(command["deck"])
        self.out.publish(DeckSelected(self.deck_id, command.by))
        return self._applied()

    def _declare_refusal(self, command: Command, t: float) -> Refusal | None:
        """A declaration names a seat in the hand: dealt a card, or due one."""
        if not self.in_hand:
            return Refusal("no hand is running")
        seat, deal = command["seat"], self.deal
        if not deal.received.get(seat) and not (deal.order and seat in deal.order):
            return Refusal(f"seat {seat} is not in the hand")
        return None

    def _declare(self, command: Command, t: float) -> list[DomainEvent]:
        self.hand_cards.action_seen()
        self.out.publish(Declaration(command["seat"], command["declaration"], command.get("amount"), command.by))
        return self._applied()

    def _misdeal_refusal(self, command: Command, t: float) -> Refusal | None:
        if not self.in_hand:
            return Refusal("no hand is running")
        if self.void:
            return Refusal("the hand is already void (misdeal): deal again")
        if self.misdeals.substantial():
            return Refusal(f"substantial action has taken place ({self.profile.cite('substantial_action')}): a "
                           "misdeal can no longer be called, the hand is played to its end")
        return None

    def _misdeal_command(self, command: Command, t: float) -> list[DomainEvent]:
        self.misdeals.call("called", [self.profile.cite("substantial_action")], None, command)
        return self._applied()

    def _exposed_refusal(self, command: Command, t: float) -> Refusal | None:
        return self.out_of_play.exposed_refusal(command.get("seat"))

    def _exposed_command(self, command: Command, t: float) -> list[DomainEvent]:
        self.out_of_play.exposed_command(command.get("seat"))
        return self._applied()

    def _set_button(self, command: Command, t: float) -> list[DomainEvent]:
        seat = command["seat"]
        if self.in_hand:
            self.next_button = seat
        else:  # the floor placed it: a later seats command leaves it there
            self.button, self.next_button, self.last_deal = seat, None, None
            self.no_small_blind = False
        self.out.publish(ButtonSet(seat, self.hand + 1, command.by))
        return self._applied()

    def _seats_refusal(self, command: Command, t: float) -> Refusal | None:
        players = set(command["seats"])
        if len(players) > self.setup.max_players:  # CA GR 15: the variant's limit (or the house's, fewer)
            return Refusal(f"{len(players)} players: at most {self.setup.max_players} may be dealt in at this table "
                           f"({limit_rule(self.setup.double_board)})")
        return None

    def _seats(self, command: Command, t: float) -> list[DomainEvent]:
        players = tuple(sorted(set(command["seats"])))
        if self.in_hand:
            self.next_players = players
        else:
            self.eligible, self.next_players = players, None
            self._button_for_players()
        self.out.publish(SeatsSet(players, self.hand + 1, command.by))
        return self._applied()

    def _run_it_refusal(self, command: Command, t: float) -> Refusal | None:
        """Why the board cannot be run ``times`` times now (the card controller's part), or None."""
        if not self.in_hand or self.void:
            return Refusal("no hand is running")
        return self.board_part.runs.refusal(command["times"], len(self.board))

    def _run_it(self, command: Command, t: float) -> list[DomainEvent]:
        """``run_it``: all players agreed to deal the rest of the board ``times`` times (CA Actions 8), for
        ``pots`` (CA Actions 8e; the betting layer checks that no more action is possible)."""
        self.board_part.runs.agree(command["times"], len(self.board))
        pots = command.get("pots")
        self.out.publish(RunItAgreed(command["times"], tuple(pots) if pots is not None else None, len(self.board),
                                     command.by, tuple(RUN_RULES)))
        return self._applied()

    def _new_hand(self, command: Command, t: float) -> list[DomainEvent]:
        self.out.publish(NewHandCalled(command.by))
        return self._applied()

    def _floor_call(self, command: Command, t: float) -> list[DomainEvent]:
        self.out.publish(FloorCalled(command.get("seat"), command.note, command.by))
        return self._applied()

    def _ping(self, command: Command, t: float) -> list[DomainEvent]:
        return self._applied()  # the sender checks that the table answers: nothing changes

    def _pick_refusal(self, command: Command, t: float) -> Refusal | None:
        irregularity = self.irregularities.waiting(command["irregularity"])
        if irregularity is None:
            return not_waiting(command["irregularity"])
        return self.board_part.pick_refusal(irregularity, command["card"])

    def _floor_pick(self, command: Command, t: float) -> list[DomainEvent]:
        """``floor_pick``: the floor's random pick of the burn card (TDA 39)."""
        irregularity = self.floor.answered(command["irregularity"])
        self.board_part.apply_pick(irregularity, parse_card(command["card"]), command.by)
        return self._applied()

    def _answer_refusal(self, command: Command, t: float) -> Refusal | None:
        """``confirm`` or ``override`` names an irregularity that waits for the floor; a pick of the burn card is
        confirmed by picking it."""
        irregularity = self.irregularities.waiting(command["irregularity"])
        if irregularity is None:
            return not_waiting(command["irregularity"])
        if command.name == "confirm" and irregularity.ruling == FLOOR_PICKS_BURN:
            return Refusal("the ruling is the floor's random pick of the burn card: send floor_pick with the card")
        return None

    def _confirm(self, command: Command, t: float) -> list[DomainEvent]:
        """The floor confirms the proposed ruling of an irregularity that waits for it."""
        return self._answer(command, confirmed=True)

    def _override(self, command: Command, t: float) -> list[DomainEvent]:
        """The floor overrides it: play goes on as dealt."""
        return self._answer(command, confirmed=False)

    def _answer(self, command: Command, confirmed: bool) -> list[DomainEvent]:
        """One ruling on an irregularity that waits for the floor, confirmed or overridden."""
        ident = command["irregularity"]
        irregularity = self.floor.answered(ident)
        self.irregularities.answered(ident)
        result = irregularity.ruling if confirmed else PLAY_ON
        if result == MISDEAL and not (irregularity.data.get("void") or not self.misdeals.substantial()):
            result = DEAD_HAND if "dead" in irregularity.data else PLAY_ON  # substantial action since
        dead = tuple(irregularity.data.get("dead", irregularity.seats)) if result == DEAD_HAND else None
        self.out.publish(FloorRuling(ident, irregularity.code, confirmed, result, dead, command.by, command.note))
        if result == MISDEAL:
            self.misdeals.call(irregularity.code, irregularity.rules, ident)
        elif result == DEAD_HAND:
            self.hand_cards.kill(*irregularity.data.get("dead", irregularity.seats))
        elif not confirmed:  # the floor rules that play goes on as dealt
            if irregularity.code in ("button_misplaced", "first_card_wrong_seat"):
                self.deal.accept_button(irregularity.data["dealt_button"])  # the deal was right: the table's button not
            else:
                self.board_part.override(irregularity)
        return self._applied()

    # ---- checkpoints and the snapshot ---------------------------------------------------------------

    def checkpoint_state(self) -> dict[str, Any]:
        """The state a hand's end leaves for the next hand, as JSON (the hand's own state starts afresh)."""
        return table_snapshot.checkpoint_state(self)

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        """Take over :meth:`checkpoint_state` on a controller just made from the same setup."""
        self.hand = int(state["hand"])
        self.out.restore(int(state["seq"]), self.hand or None, float(state["now"]))
        self.hand_cards.end()
        self.button = int(state["button"])
        self.next_button = state["next_button"]
        self.eligible = None if state["eligible"] is None else tuple(state["eligible"])
        self.next_players = None if state["next_players"] is None else tuple(state["next_players"])
        last_deal = state.get("last_deal")  # (not in checkpoints written before it was kept)
        if last_deal is not None:
            button, dealt = int(last_deal[0]), tuple(last_deal[1])
            self.last_deal = (button, dealt, last_deal[2] if len(last_deal) > 2 else big_blind_seat(button, dealt, False))
        else:
            self.last_deal = None
        self.no_small_blind = bool(state.get("no_small_blind", False))
        if state["deck_id"] != self.deck_id:
            self.decks.select(state["deck_id"])
        self._on_table = dict(state["on_table"])
        self.readers = {name: {"link": r["link"], "faulted_antennas": list(r["faulted_antennas"])}
                        for name, r in state["readers"].items()}
        self._new_hand_state()  # the next deal's plan, from the button and the players above
        self._reschedule()

    def snapshot(self, secure: bool) -> dict[str, Any]:
        """The table as it is now; hole and burn cards only when ``secure``."""
        return table_snapshot.snapshot(self, secure)
