"""Read the betting from the chips: chip tags in the betting zones and the pot zone → poker actions.

The card controller (``controller.table``) says what the cards do: a hand started, a card was dealt to a seat, a
board card was turned, a seat folded (its cards reached the muck), the hand ended. This layer adds what the chips
do and drives the betting engine (``controller.betting.BettingHand``) with both:

* chips are looked up in the table's chip set (tag UID → denomination). A tag that is not in it, or belongs to
  another chip set, is a ``foreign_chip`` event and never counts toward a bet;
* chips arriving in ``seatN.bets`` before the deal is complete are the forced bets (blinds, straddles); chips in
  the pot zone then are the antes. When every dealt seat holds its hole cards the betting hand starts, as the deal
  and the chips in the zones say (``controller.chip_opening``); a stud hand's once third street is out and the card
  controller names the bring-in seat, and each later street opens with the seat it names (``StudOpener``);
* a bet is read once its chips have settled, all the chips of one motion one push (``controller.chip_settling``);
  checks are inferred, the streets closed when the dealer collects or a board card arrives, and the pot counted
  (``controller.hand_reading``);
* when the card controller ends the hand, the pots are awarded and the hand is written as a PHH hand history
  (``controller.hand_award``).

``ChipBetting`` keeps what lasts from hand to hand: the chips lying on each chip zone, the stacks the floor counted
(with the hands' results), the players, where the card controller has the button, a bomb pot agreed before the deal,
a void hand's wagers still to go back. Everything of one hand is its ``HandReading``, made when the hand starts and
replaced when the next one does (or the deal is void). Its commands are ``controller.chip_commands``'.

Pure and deterministic like the rest of the controller: inputs and times in, events out, into the outbox given at
construction (``controller.outbox``, through ``controller.chip_events``), which numbers them with the cards' events;
the caller stamps the time and hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from controller import mucked_winner
from controller.chip_commands import ChipCommands
from controller.chip_events import ChipEvents
from controller.chip_opening import Opening, read_opening
from controller.chip_table import ChipTable
from controller.commands import Refusal
from controller.dealing import dead_rule, dead_seats, passive_seats
from controller.domain import DomainEvent
from controller.events import (BoardCard, BoardCorrected, CardDealt, ChipsReturned, Folded, ForeignChip, HandEnded,
                               HandStarted, Misdeal, StudOpener)
from controller.floor import FloorQueue
from controller.hand_reading import HandReading
from controller.levels import Level, LevelSchedule
from controller.outbox import CURRENT, Outbox
from hal.zone_names import Zone


@dataclass(frozen=True)
class BettingSetup:
    """What the chip layer needs from the table configuration."""

    variant: str = "NLHE"  # a key of controller.betting.VARIANTS
    small_blind: int = 1
    big_blind: int = 2
    ante: int = 0
    big_blind_ante: int = 0
    chips: Mapping[str, int] = field(default_factory=dict)  # the active chip set: tag UID → denomination
    chip_set: str = ""  # its id
    other_chips: Mapping[str, str] = field(default_factory=dict)  # tags of the other registered sets → set id
    rules: str = "tda"
    settle_s: float = 0.5
    # A pile of chips is read whole only over several reader passes (a reader gets through some 16 tags per antenna
    # and pass): the pot is counted once it has not changed for this long.
    pile_s: float = 2.0
    bet_limits: tuple[int, int] | None = None  # fixed limit: (small bet, big bet)
    bring_in: int = 0  # a stud game's forced bet of third street (less than the small bet)
    table_id: str = ""  # names the table in the OHH and PokerStars copies of each hand
    double_board: bool = False  # two boards every hand, the pot divided equally between them (CA GR 14.1)


@dataclass
class VoidWagers:
    """After a misdeal: the wagers still to go back, by zone, and what lay in each of those zones at the misdeal."""

    left: dict[str, dict[str, int]]
    total: dict[str, int]

    def back(self, zone: str, uid: str) -> bool:
        """A chip left ``zone``: whether it was the last of the void wagers to go back."""
        chips = self.left.get(zone)
        if chips is None or uid not in chips:
            return False
        chips.pop(uid)
        return not any(self.left.values())

    def returned(self) -> ChipsReturned:
        """What went back from each zone, and what still lies there (those chips count as the next hand's, e.g. the
        blinds left in place)."""
        kept = {zone: sum(chips.values()) for zone, chips in self.left.items() if chips}
        returned = {zone: total - kept.get(zone, 0) for zone, total in self.total.items()}
        return ChipsReturned({z: v for z, v in returned.items() if v}, kept)


class ChipBetting:
    reads_chips = True  # what the card controller asks of the action comes from the chips (BettingProgress)

    def __init__(self, setup: BettingSetup, seats: int, hole_cards: int, out: Outbox, floor: FloorQueue,
                 players: Mapping[int, Mapping[str, str]] | None = None, levels: LevelSchedule | None = None):
        self.table = ChipTable.of(setup, seats, hole_cards)
        self.out = out
        self.floor = floor  # a mucked winning hand's ruling lapses there when the next hand begins
        # where the chip layer's events go, numbered with the cards'; its rulings that need the floor wait there
        self.events = ChipEvents(out, floor, self.table.rules.pot_disputes)
        self.levels = levels  # a tournament's schedule: the blinds and antes of its running level
        # seat → the player the floor seated ({"name", optional "player_id"}): the names go into the hand history
        self.players: Mapping[int, Mapping[str, str]] = players if players is not None else {}
        self.zones: dict[str, dict[str, int]] = {}  # chip zone → {uid: denomination} lying there now
        self.stacks: dict[int, int] = {}  # counts the floor entered, carried from hand to hand
        # a bomb pot or flip agreed before the deal (CA GR 14.2, 14.3): (amount, flip), until a hand plays it
        self.bomb_pot: tuple[int, bool] | None = None
        self.card_button: int | None = None  # where the card controller has the button (it knows a dead one)
        # the card controller's reckoning that the hand has no small blind (a big blind left: AC 27; DE 9), for a hand
        # whose blinds are not in their zones when the betting begins
        self.card_no_small_blind = False
        self.void: VoidWagers | None = None
        self.hand = self._new_hand(0.0)
        # the commands the chip layer owns (controller.commands): each checked without changing anything, then applied
        self.handlers = ChipCommands(self, out).handlers()

    @property
    def setup(self) -> BettingSetup:
        return self.table.setup

    def _new_hand(self, started_t: float, table: ChipTable | None = None) -> HandReading:
        """A hand's reading, against the table as its game is read (``ChipTable.playing``)."""
        return HandReading(table or self.table, self.events, self.zones, self.players, started_t)

    @property
    def stakes(self) -> Level:
        """The blinds and antes the chips are read against: the running level's in a tournament (it changes only
        between hands, see ``controller.levels``), otherwise the hand's game's (a mixed game's may have its own)."""
        return self.hand.table.forced_bets(self.levels.current if self.levels is not None else None)

    # ---- chips --------------------------------------------------------------------------------------

    def is_chip(self, uid: str) -> bool:
        setup = self.table.setup
        return uid in setup.chips or uid in setup.other_chips

    def chip_zone_event(self, kind: str, uid: str, zone: str, t: float) -> None:
        """A tag arrived in (``kind == "arrived"``) or left a chip zone."""
        hand = self.hand
        hand.moved()
        held = self.zones.get(zone)
        if held is None:
            held = self.zones[zone] = {}
        if kind == "left":
            if uid not in held:
                return  # a foreign chip leaving: it was never counted
            if zone == "pot":
                hand.pot_leaving(t)
            held.pop(uid)
            what, seat = Zone.parse(zone)
            hand.chip_left(uid, what, seat, t)
            if self.void is not None and self.void.back(zone, uid):
                self._chips_returned(self.void)
            return
        value = self.table.setup.chips.get(uid)
        if value is None:
            other = self.table.setup.other_chips.get(uid)
            self.events.publish(ForeignChip(zone, uid, other))
            return
        if uid in held:
            return
        what, seat = Zone.parse(zone)
        if what == "bets":
            self.start_if_dealt(t)  # a bet after the deal: the betting has begun
        held[uid] = value
        hand.chip_arrived(uid, value, what, seat, t)

    def _chips_returned(self, void: VoidWagers) -> None:
        """A misdeal voids the bets: say what went back from each zone, and what still lies there at the new deal."""
        self.events.publish(void.returned())
        self.void = None

    # ---- cards (the card controller's events) -----------------------------------------------------------

    def card_events(self, events: Sequence[DomainEvent], button: int | None, no_small_blind: bool = False) -> None:
        """The card controller's events of one input, in order, with where it has the button and whether the hand has
        no small blind by its reckoning. What the chips make of an event belongs to its time and its hand: the card
        controller may already be in the next hand (its first card ended this one)."""
        for event in events:
            with self.out.stamped(event.t, event.hand if event.hand is not None else CURRENT):
                self.card_event(event, button, no_small_blind)

    def card_event(self, event: DomainEvent, button: int | None = None, no_small_blind: bool = False) -> None:
        """What the cards did (an event of the card controller), with where the card controller has the button and
        whether the hand has no small blind by its reckoning."""
        self.card_button = button
        self.card_no_small_blind = no_small_blind
        self.hand.moved()
        step = self._ON_RECORD.get(type(event.record))
        if step is not None:
            step(self, event.record, event.t)
            return
        for seat in dead_seats(event.record):  # the dealing rules killed the hand (TDA example 1-A/1-B)
            self.hand.dead_hand(seat, dead_rule(event.record))
        for seat in passive_seats(event.record):  # a hole card the player showed (AC 50, CA Actions 10)
            self.hand.passive_hand(seat, dead_rule(event.record))

    def _hand_started(self, started: HandStarted, t: float) -> None:
        if self.void is not None:  # dealt again before every wager of the void hand went back
            self._chips_returned(self.void)
        if self.hand.waiting_award is not None:  # the floor never answered: the right to dispute ended, the fold stands
            mucked_winner.lapse_unanswered(self.floor, self.out)
            self.mucked_winner_ruled(False)
        self.hand = self._new_hand(t, self.table.playing(started.game))

    def _card_dealt(self, dealt: CardDealt, t: float) -> None:
        self.hand.card_dealt(dealt, t)

    def _board_corrected(self, corrected: BoardCorrected, t: float) -> None:
        self.hand.board_corrected(list(corrected.board))

    def _stud_opener(self, opener: StudOpener, t: float) -> None:
        self.hand.stud_opener(opener, t)
        self.start_if_dealt(t, betting_input=False)  # third street is out and names the bring-in: the betting begins

    def _board_card(self, turned: BoardCard, t: float) -> None:
        if turned.board_number is not None and turned.board_number > 1:  # a later run's or the second board's
            self.hand.later_board_card(turned.board_number, turned.card)
            return
        self.start_if_dealt(t)
        self.hand.board_card(turned.card, turned.position, t)

    def _fold(self, folded: Folded, t: float) -> None:
        self.start_if_dealt(t)
        self.hand.fold(folded.seat)

    def _misdeal(self, misdeal: Misdeal, t: float) -> None:
        # the bets go back; the next deal starts a new betting hand, of the same game
        self.hand = self._new_hand(self.hand.started_t, self.hand.table)
        left = {zone: dict(chips) for zone, chips in self.zones.items()
                if chips and Zone.parse(zone).kind in ("bets", "pot")}
        self.void = VoidWagers(left, {zone: sum(chips.values()) for zone, chips in left.items()}) if left else None

    def hand_ending(self, ended: HandEnded, t: float) -> None:
        """The card controller is about to announce the hand's end (``GameController._hand_ending``): award it, so
        that its result comes before ``hand_ended``."""
        self.start_if_dealt(t, betting_input=False)
        if self.hand.bomb_pot_played():
            self.bomb_pot = None  # played (after a misdeal the deal again is still the bomb pot)
        self._carry(self.hand.finish(ended, t))

    # what each event of the card controller does to the betting, by its record (controller.events)
    _ON_RECORD: dict[type, Callable[[ChipBetting, Any, float], None]] = {
        HandStarted: _hand_started, CardDealt: _card_dealt, BoardCorrected: _board_corrected,
        BoardCard: _board_card, StudOpener: _stud_opener, Folded: _fold, Misdeal: _misdeal}

    def _carry(self, stacks: dict[int, int] | None) -> None:
        """The stacks a hand's award leaves, for the next hand."""
        if stacks:
            self.stacks.update(stacks)

    def start_if_dealt(self, t: float, betting_input: bool = True) -> None:
        """Start the betting once the deal is over: every seat dealt in the first round holds its cards. A card read
        late (RF noise can hold a card back for a few cycles) must not leave its seat out, so the betting starts at
        the first betting input after that — a chip pushed, a fold, a board card — or ``DEAL_SETTLE_S`` after the
        last card, whichever comes first. A betting input once the second round has begun starts it even while a
        seat is short of cards: the action has begun, and that seat's hand is the dealing rules' (fixed by the next
        card, a misdeal, or dead after substantial action: PP Misdeals 1e; TDA example 1-A)."""
        if self.hand.would_start(betting_input):
            self.hand.start_betting(self.opening(), t)

    def first_to_act(self) -> int | None:
        """While the hand's cards are dealt, before the betting begins: the seat that acts first once it does, from
        the deal and the chips so far (nothing changes); None once it has begun, or where it could not begin."""
        if not self.hand.would_start(betting_input=True):  # (the opening is known once a round of cards is dealt)
            return None
        try:
            return self.opening().engine().to_act()
        except ValueError:  # (a seat dealt in with no chips: the floor will look once the deal is over)
            return None

    def opening(self) -> Opening:
        """How the betting hand would begin now, from the deal and the chips in the zones (nothing changes)."""
        return read_opening(self.hand.table, self.hand.dealt.order, self.zones, self.stacks, self.stakes,
                            self.levels.number if self.levels is not None else None, self.bomb_pot, self.card_button,
                            self.card_no_small_blind, self.hand.bring_in_seat)

    # ---- what the other parts ask and tell ---------------------------------------------------------------

    def substantial_action(self) -> bool:
        """Whether a misdeal can no longer be called, by the profile's definition (for the dealing rules)."""
        return self.hand.substantial_action()

    def round_open(self) -> bool:
        """Whether players still have to act on a bet in this betting round: a board card now is premature. Seats
        that only have to check are not waiting (checks are never seen), and chips still settling count as the
        action they are."""
        return self.hand.round_open()

    def street_action(self) -> bool:
        """Whether anyone acted on the current street: an action the engine took (a check only where a later push
        showed it), an out-of-turn action or a declaration waiting, or chips still settling into a push."""
        return self.hand.street_action()

    def turn(self) -> tuple[int | None, int]:
        """The seat to act, while the betting takes declarations, and what it must put in to call (None and 0 when
        no seat is to act): what the game tells the conduct rules and the clock after each input, in one question."""
        return self.hand.turn()

    def dead_hand(self, seat: int, rule: str) -> None:
        """A rule killed the seat's hand (the action clock ran out, the player was away): it is folded."""
        self.hand.dead_hand(seat, rule)

    def ruled_check(self, seat: int, rule: str) -> None:
        """The clock ran out on a seat with nothing to call and the profile checks it (PP Dead hands 1f)."""
        self.hand.ruled_check(seat)

    def set_stacks(self, stacks: Mapping[int, int]) -> None:
        self.stacks.update(stacks)
        self.hand.stacks_counted(list(stacks))

    def runs_refusal(self, pots: Sequence[int] | None) -> Refusal | None:
        """Why the players cannot agree to run the rest of the board more than once (``HandReading.runs_refusal``)."""
        return self.hand.runs_refusal(pots)

    def agree_runs(self, runs: int, pots: Sequence[int] | None) -> None:
        """The players agreed to deal the rest of the board ``runs`` times (CA Actions 8) for ``pots``, as
        :meth:`runs_refusal` allowed."""
        self.hand.agree_runs(runs, pots)

    def agree_bomb_pot(self, amount: int | None, flip: bool) -> None:
        """The players' agreement before the deal (the ``bomb_pot`` command); ``None`` takes it back."""
        self.bomb_pot = None if amount is None else (amount, flip)

    def mucked_winner_ruled(self, restore: bool, t: float | None = None) -> None:
        """The floor's answer to ``winning_hand_mucked``: ``restore`` takes the fold back (CA Actions 9: "the
        croupier may not fold a clearly winning hand"; AC 14), so the pot goes to the best hand; otherwise the fold
        stands. A hand that already ended is awarded now."""
        self._carry(self.hand.mucked_winner_ruled(restore, t))

    @property
    def award_waits(self) -> bool:
        """The hand is over and its award waits for the floor's answer on a mucked winning hand: what the engine
        needs for it is no part of the explicit checkpoint state (``checkpoint_state``)."""
        return self.hand.waiting_award is not None

    # ---- time ------------------------------------------------------------------------------------------

    def next_due(self) -> float:
        """The earliest time :meth:`tick` has something to do (``HandReading.next_due``)."""
        return self.hand.next_due()

    def tick(self, now: float) -> None:
        if self.hand.deal_settled(now):
            self.start_if_dealt(now, betting_input=False)
        self.hand.tick(now)

    # ---- state -----------------------------------------------------------------------------------------

    def checkpoint_state(self) -> dict[str, Any]:
        """What carries over to the next hand, as JSON: the stacks the floor counted (with the hands' results)
        and the chips lying on each chip zone."""
        return {"stacks": {str(seat): amount for seat, amount in self.stacks.items()},
                "zones": {zone: dict(chips) for zone, chips in self.zones.items()}}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        # in place: every hand reads the same zones
        self.stacks.clear()
        self.stacks.update({int(seat): int(amount) for seat, amount in state["stacks"].items()})
        self.zones.clear()
        self.zones.update({zone: dict(chips) for zone, chips in state["zones"].items()})
        self.hand = self._new_hand(self.hand.started_t)

    def snapshot(self) -> dict[str, Any] | None:
        return self.hand.snapshot()

    def on_table(self) -> dict[str, str]:
        return {uid: zone for zone, chips in self.zones.items() for uid in chips}
