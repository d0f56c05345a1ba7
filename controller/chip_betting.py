"""Read the betting from the chips: chip tags in the betting zones and the pot zone → poker actions.

The card controller (``controller.table``) says what the cards do: a hand started, a card was dealt to a seat, a
board card was turned, a seat folded (its cards reached the muck), the hand ended. This layer adds what the chips
do and drives the betting engine (``controller.betting.BettingHand``) with both:

* chips are looked up in the table's chip set (tag UID → denomination). A tag that is not in it, or belongs to
  another chip set, is a ``foreign_chip`` event and never counts toward a bet;
* chips arriving in ``seatN.bets`` before the deal is complete are the forced bets (blinds, straddles); chips in
  the pot zone then are the antes. When every dealt seat holds its hole cards the betting hand starts: the button
  is the dealt seat before the first seat dealt (the deal starts left of the button), the stacks are those the floor
  entered (``set_stacks``) or carried over from the last hand, or the chips in ``seatN.stack`` zones;
* a bet is read once its chips have *settled*: no chip arrived in or left that seat's zone for ``settle_s``. All
  the chips of one settled motion are one push (TDA 45: a bet is made in one motion);
* checks are never seen: the engine infers them when a later seat bets, and at the next board card the seats still
  to act with nothing to call are taken to have checked;
* the dealer collecting the bets (the round is complete and chips leave the betting zones, or the next board card
  arrives) ends the street; once the pot zone has settled it must hold what the engine says the pot is, otherwise a
  ``chip_count`` event says by how much it differs;
* when the card controller ends the hand, the remaining streets are closed, the pots are awarded with the hole
  cards and the board (``controller.showdown``), and the hand is written as a PHH hand history.

Pure and deterministic like the rest of the controller: inputs and times in, events out, into the outbox given at
construction (``controller.outbox``), which numbers them with the cards' events; the caller stamps the time and hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from controller import ohh, phh as phhlib, pokerstars
from controller.betting import VARIANTS, Action, BettingHand, Ruling, Straddle
from controller.commands import Command, Handler, Refusal, allowed
from controller.dealing import DEAD_SEAT_TYPES, dead_seats
from controller.domain import DomainEvent
from controller.floor import HAND_END, NEXT_HAND, FloorQueue
from controller.histories import HandRecord, board_shares, game_number, tabled
from controller.levels import Level, LevelSchedule
from controller.outbox import CURRENT, Outbox
from controller.rules import UNPLAYABLE_BELOW_FORCED_BET_CHIP, UNPLAYABLE_NOT_DIVISIBLE, profile as rule_profile
from controller.showdown import award, hand_rank
from hal.zone_names import Zone

# What a confirm does to a winning hand the dealer mucked (AC 14; CA Actions 9), and how long it waits: a hand's
# reading can be disputed until the next hand begins (TDA 20-6; AC 17; CA Actions 9: "before the next game has
# started, after which no further corrections are possible").
MUCKED_WINNER = "winning_hand_mucked"
HAND_RESTORED = "hand_restored"
# The pot errors, which wait as the house's pot_disputes says (controller.rules): the award the table could not
# read, and a seat paid less than the award (TDA 20-6: "Fehler bei dem Berechnen oder Zuweisen des Pots").
POT_ERRORS = ("hand_ended_in_betting", "showdown_unread", "award")
DEAL_SETTLE_S = 0.5  # the deal is taken as over this long after its last card, unless the betting begins sooner
UNKNOWN_STACK = 10**9  # no count entered and no stack zone: large enough never to be all-in by accident
NOT_STARTED = "the betting has not started (the deal is not complete)"


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
    table_id: str = ""  # names the table in the OHH and PokerStars copies of each hand
    double_board: bool = False  # two boards every hand, the pot divided equally between them (CA GR 14.1)


@dataclass
class _Motion:
    """Chips moving in or out of one seat's betting zone that have not settled into a push yet."""

    arrived: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    last_change: float = 0.0
    undone: bool = False  # the chips of an undone push: a declaration entered now comes before them


@dataclass
class _UndoPoint:
    """What one betting input did, so that the dealer's ``undo`` can take it back: where it begins in the engine's
    input log, the chip tags of the push (back in motion after an undo) and the events it published."""

    log_length: int  # the engine's inputs this hand before this one (see ChipBetting._act)
    seat: int | None
    what: str  # "push" or "declaration"
    arrived: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    actions: list[dict] = field(default_factory=list)  # {"seq", "seat", "action", "to"} of each published action
    declaration: str | None = None


@dataclass(frozen=True)
class _Opening:
    """How a betting hand begins: the seats dealt in, the chips in their zones, the button, the stacks (``known``:
    counted, not assumed), the blinds' seats and the engine's set-up."""

    seats: list[int]
    bets: dict[int, list[int]]
    button: int
    stacks: dict[int, int]
    known: bool
    sb: int | None
    bb: int | None
    args: tuple
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class _Push:
    """What a settled motion pushes: the chips that play, those taken back, the chips as pushed, and the code of the
    ruling when some of them do not play."""

    chips: list[int]
    withdrawn: list[int]
    pushed: list[int]
    code: str = ""

    @property
    def returned(self) -> int:
        return sum(self.pushed) - sum(self.chips)

    @property
    def plays(self) -> bool:
        """Something is left for the engine: chips that play, or chips taken back."""
        return bool(self.chips or self.withdrawn)


def _without_value(chips: list[int], value: int) -> list[int]:
    """``chips`` less ``value``: the smallest chips that make it up go back; where none do, the dealer gives change
    from the smallest chip that covers the rest (its value less the rest plays)."""
    kept = sorted(chips)
    for chip in sorted(chips):
        if chip <= value:
            kept.remove(chip)
            value -= chip
        if value == 0:
            return kept
    if value:
        chip = next(c for c in kept if c > value)
        kept.remove(chip)
        kept.append(chip - value)
    return sorted(kept)


class ChipBetting:
    reads_chips = True  # what the card controller asks of the action comes from the chips (BettingProgress)

    def __init__(self, setup: BettingSetup, seats: int, hole_cards: int, out: Outbox, floor: FloorQueue,
                 players: Mapping[int, Mapping[str, str]] | None = None, levels: LevelSchedule | None = None):
        self.setup = setup
        self.out = out  # where the chip layer's events go, numbered with the cards' (controller.outbox)
        self.floor = floor  # where its rulings that need the floor wait, answered by the game (controller.floor)
        self.levels = levels  # a tournament's schedule: the blinds and antes of its running level
        self._card_button: int | None = None  # where the card controller has the button (it knows a dead one)
        # seat → the player the floor seated ({"name", optional "player_id"}): the names go into the hand history
        self.players: Mapping[int, Mapping[str, str]] = players if players is not None else {}
        self.seats = seats
        self.hole_cards = hole_cards
        self.rules = rule_profile(setup.rules)
        self.variant = VARIANTS[setup.variant]
        self.chip_values = tuple(sorted(set(setup.chips.values())))
        self.zones: dict[str, dict[str, int]] = {}  # chip zone → {uid: denomination} lying there now
        self.stacks: dict[int, int] = {}  # counts the floor entered, carried from hand to hand
        self.betting_hand: BettingHand | None = None
        self._void_chips: dict[str, dict[str, int]] = {}  # after a misdeal: the wagers still to go back, by zone
        self._void_total: dict[str, int] = {}  # what lay in each of those zones at the misdeal
        self._start_refused = False  # the betting could not start; tried again at the next card or chip
        self._started_t = 0.0  # when the hand began, on the table clock: the hand histories number hands by it
        # a bomb pot or flip agreed before the deal (CA GR 14.2, 14.3): (amount, flip), until a hand plays it
        self.bomb_pot: tuple[int, bool] | None = None
        self._reset_hand()
        # the commands the chip layer owns (controller.commands): each checked without changing anything, then applied
        self.handlers = {"set_stacks": Handler(allowed, self._set_stacks_command),
                         "declare": Handler(self._declare_refusal, self._declare_command),
                         "undo": Handler(self._undo_refusal, self._undo_command)}

    def _emit(self, type_: str, public: dict, secret: dict | None) -> int:
        event = self.out.emit(type_, public, secret)
        code = public.get("code")  # a ruling that needs the floor waits for it, as long as its kind may
        if code == MUCKED_WINNER:
            self.floor.note(event, NEXT_HAND, HAND_RESTORED)
        else:
            self.floor.note(event, self.rules.pot_disputes if code in POT_ERRORS else HAND_END)
        return event.seq

    def _chip_count(self, code: str, seat: int | None, expected: int, seen: int, rules: list[str]) -> None:
        """Chips in a zone differ from what the rules say: the dealer puts it right, but a seat paid less than the
        award can dispute it (TDA 20-6), so that one waits for the floor."""
        self._emit("chip_count", {"code": code, "seat": seat, "expected": expected, "seen": seen, "rules": rules,
                                  "needs_floor": code == "award" and seen < expected}, None)

    def _reset_hand(self) -> None:
        self.betting_hand = None
        self._dealt_order: list[int] = []  # seats in the order their first card arrived
        self._dealt: dict[int, int] = {}  # seat → hole cards received
        self._motions: dict[int, _Motion] = {}
        self._collecting: set[str] = set()  # chips the dealer is moving from betting zones to the pot
        self._pot_check_due = False
        self._pot_changed_at = 0.0
        self._hole: dict[int, list[str]] = {}
        self._board: list[str] = []
        self._later_boards: dict[int, list[str]] = {}  # board number (2, 3, ...) → its cards: runs, a double board
        # run it twice or three times (CA Actions 8): (runs, the pots agreed or None for all), once agreed
        self.runs: tuple[int, tuple[int, ...] | None] | None = None
        self._runs_from = 0  # board cards dealt when the runs were agreed: every run shares them
        self._hand_ended = False
        self._last_card_at = 0.0
        self._known_stacks = False
        self._counted_since_start: set[int] = set()  # seats whose stack the floor entered during this hand
        self._pot_chips: set[str] = set()  # chips that lay in the pot this hand
        self._pushed: dict[int, int] = {}  # pot chips that reached a seat's stack zone, by seat
        self._departed: list[tuple[str, int]] = []  # chips that left a betting zone this cycle
        self._undo: list[_UndoPoint] = []  # this betting round's inputs the dealer can take back, latest last
        # The engine's set-up and every input it took this hand: an undo rebuilds it without the undone input, so
        # nothing is copied on the way (a copy of the engine per push cost a third of the replay's time).
        self._engine_setup: tuple[tuple, dict] | None = None
        self._engine_log: list[tuple[str, tuple]] = []
        self._recording: _UndoPoint | None = None  # the input whose actions are being published
        self._fixed: Action | None = None  # the latest action that cannot be undone (a fold, a ruling)
        self._smallest_forced_chip: int | None = None  # the smallest chip of the blinds and antes (PP Betting 7)
        self._mucked_winner: int | None = None  # a winning hand the dealer mucked, until the floor answers
        self._award_waits: tuple[dict, dict] | None = None  # the hand ended first: its award waits for that answer

    # ---- chips --------------------------------------------------------------------------------------

    @property
    def stakes(self) -> Level:
        """The blinds and antes the chips are read against: the running level's in a tournament (it changes only
        between hands, see ``controller.levels``), otherwise the game's."""
        if self.levels is not None:
            return self.levels.current
        setup = self.setup
        return Level(setup.small_blind, setup.big_blind, setup.ante, setup.big_blind_ante)

    def is_chip(self, uid: str) -> bool:
        return uid in self.setup.chips or uid in self.setup.other_chips

    def chip_zone_event(self, kind: str, uid: str, zone: str, t: float) -> None:
        """A tag arrived in (``kind == "arrived"``) or left a chip zone."""
        self._start_refused = False
        value = self.setup.chips.get(uid)
        held = self.zones.get(zone)
        if held is None:
            held = self.zones[zone] = {}
        if kind == "left":
            if uid not in held:
                return  # a foreign chip leaving: it was never counted
            if (zone == "pot" and self._pot_check_due and self.betting_hand is not None
                    and t - self._pot_changed_at >= self.setup.settle_s):
                self._check_pot()  # the pot is being pushed to the winner: count it as it was
            held.pop(uid)
            self._chip_left(uid, zone, t)
            if uid in self._void_chips.get(zone, ()):
                self._void_chips[zone].pop(uid)
                if not any(self._void_chips.values()):
                    self._chips_returned()
            return
        if value is None:
            other = self.setup.other_chips.get(uid)
            self._emit("foreign_chip", {"zone": zone, "uid": uid, "chip_set": other,
                                        "reason": "chip of another set" if other else "tag not in any chip set"}, None)
            return
        if uid in held:
            return
        what, seat = Zone.parse(zone)
        if what == "bets":
            self.start_if_dealt(t)  # a bet after the deal: the betting has begun
        held[uid] = value
        if what == "pot":
            self._pot_changed_at = t
            self._pot_chips.add(uid)
        elif what == "bets" and self.betting_hand is not None and not self._hand_ended:
            self._motion(seat, t).arrived.append(uid)
        elif what == "stack" and uid in self._pot_chips:  # the dealer pushes the pot to a player
            self._pushed[seat] = self._pushed.get(seat, 0) + value

    def _chip_left(self, uid: str, zone: str, t: float) -> None:
        what, seat = Zone.parse(zone)
        if what == "pot":
            self._pot_changed_at = t
        elif what == "bets" and self.betting_hand is not None and not self._hand_ended:
            # where the chip went is known only once the whole cycle is in: resolved at the next tick
            self._departed.append((uid, seat))

    def _resolve_departures(self, t: float) -> None:
        """Chips that left a betting zone: moved into the pot (the dealer collects), or taken away."""
        departed, self._departed = self._departed, []
        pot = self.zones.get("pot", {})
        collected = False
        for uid, seat in departed:
            if uid in self._collecting:
                self._collecting.discard(uid)
                continue
            if uid in pot:
                collected = True
                continue
            motion = self._motions.get(seat)
            if motion and uid in motion.arrived:  # put down and picked up again within the motion
                motion.arrived.remove(uid)
                motion.last_change = t
                continue
            hand = self.betting_hand
            facing = hand.to_act() == seat and (hand.to_call(seat) > 0 or bool(motion and motion.arrived))
            if facing:
                self._motion(seat, t).left.append(uid)  # taken back by the player whose turn it is (TDA 46)
            # otherwise the dealer gave change or tidied the zone; the engine's amounts stand
        if collected and self.betting_hand.status == "betting":
            # chips going from the betting zones into the pot: the dealer is collecting, the round is over
            self._close_street(t, collected_chips=True)
            self._collecting.difference_update(uid for uid, _ in departed)

    def _motion(self, seat: int, t: float) -> _Motion:
        motion = self._motions.setdefault(seat, _Motion())
        motion.last_change = t
        return motion

    def _settle(self, seat: int) -> None:
        motion = self._motions.pop(seat, None)
        if motion is None or self.betting_hand is None:
            return
        push = self._push(seat, motion, self.betting_hand)
        if push is None:
            return
        if push.code:
            self._emit("bet_ruling", {"code": push.code, "seat": seat,
                                      "message": f"seat {seat}: {sum(push.chips)} plays, {push.returned} goes back to "
                                                 "the player", "rules": [self.rules.cite("unplayable_chips")],
                                      "needs_floor": False, "chips": list(push.pushed), "withdrawn": [],
                                      "stands": sum(push.chips), "returned": push.returned}, None)
        if not push.plays:
            return
        point = _UndoPoint(len(self._engine_log), seat, "push", list(motion.arrived), list(motion.left))
        self._apply(self._act("push", seat, push.chips, push.withdrawn), chips=push.chips, withdrawn=push.withdrawn,
                    undo=point)

    def _push(self, seat: int, motion: _Motion, hand: BettingHand) -> _Push | None:
        """What a motion that settled pushes against ``hand`` (None: nothing). The chips of a push that play, by the
        house (``RuleProfile.unplayable_chips``); what does not play is a ``bet_ruling`` (``code``) with the amount
        that ``stands`` and what is ``returned`` to the player.

        PP Betting 7: "Smaller chips than this amount [the smallest chip used in the antes, blinds] do not play even
        in quantity". CA GR 8 / CA Stakes 1: "All bets placed must be divisible by the ante or small blind [...] The
        player will be reimbursed for any resulting spike" (by the big blind where the small blind does not divide
        it, as at 2/5); a call of an odd amount and an all-in stand as pushed."""
        values = self.setup.chips
        chips = [values[u] for u in motion.arrived]
        withdrawn = [values[u] for u in motion.left]
        if not chips and not withdrawn:
            return None
        if withdrawn:
            return _Push(chips, withdrawn, chips)
        kind = self.rules.unplayable_chips
        playing, code = list(chips), ""
        if kind == UNPLAYABLE_BELOW_FORCED_BET_CHIP and self._smallest_forced_chip is not None:
            playing = [c for c in chips if c >= self._smallest_forced_chip]
            code = "chips_do_not_play"
        elif kind == UNPLAYABLE_NOT_DIVISIBLE:
            unit = self.stakes.ante or self.stakes.small_blind
            if unit <= 0 or self.stakes.big_blind % unit:
                unit = self.stakes.big_blind
            target = hand.bets.get(seat, 0) + sum(chips)
            spike = target % unit if unit > 0 else 0
            all_in = sum(chips) >= hand.stacks.get(seat, 0)
            if spike and not all_in and target - spike >= hand.current_bet and target != hand.current_bet:
                playing = _without_value(chips, spike)
                code = "bet_not_divisible"
        if not code or sum(chips) == sum(playing):
            return _Push(chips, [], chips)
        return _Push(playing, [], chips, code)

    def _settle_all(self, keep_undone: bool = False) -> None:
        for seat in sorted(self._motions, key=lambda s: self._motions[s].last_change):
            if not (keep_undone and self._motions[seat].undone):
                self._settle(seat)

    # ---- cards (the card controller's events) -----------------------------------------------------------

    def card_events(self, events: Sequence[DomainEvent], button: int | None) -> None:
        """The card controller's events of one input, in order, with where it has the button. What the chips make
        of an event belongs to its time and its hand: the card controller may already be in the next hand (its first
        card ended this one)."""
        for event in events:
            with self.out.stamped(event.t, event.hand if event.hand is not None else CURRENT):
                self.card_event(event.type, event.public, event.secret, event.t, button)

    def card_event(self, type_: str, public: dict, secret: dict, t: float, button: int | None = None) -> None:
        """What the cards did (an event of the card controller), with where the card controller has the button."""
        self._card_button = button
        self._start_refused = False
        step = self._CARD_STEPS.get(type_)
        if step is not None:
            step(self, public, secret, t)
        elif type_ in DEAD_SEAT_TYPES:
            rule = ", ".join(public.get("rules", [])) or public.get("code", "")
            for seat in dead_seats(type_, public):  # the dealing rules killed the hand (TDA example 1-A/1-B)
                self.dead_hand(seat, rule)

    def _hand_started(self, public: dict, secret: dict, t: float) -> None:
        if self._void_chips:  # dealt again before every wager of the void hand went back
            self._chips_returned()
        if self._award_waits is not None:  # the floor never answered: the right to dispute ended, the fold stands
            for waiting in self.floor.lapsing(NEXT_HAND):
                if waiting.code == MUCKED_WINNER:
                    self.floor.lapse(waiting.id, NEXT_HAND, self.out)
            self.mucked_winner_ruled(False)
        self._reset_hand()
        self._started_t = t

    def _card_dealt(self, public: dict, secret: dict, t: float) -> None:
        seat = public["seat"]
        if seat not in self._dealt:
            self._dealt_order.append(seat)
        self._dealt[seat] = public["count"]
        self._hole.setdefault(seat, []).append(secret.get("card", ""))
        self._last_card_at = t

    def _board_corrected(self, public: dict, secret: dict, t: float) -> None:
        self._board = list(public["board"])  # the floor's pick of a burn card (TDA 39): the board as it is now

    def _board_card(self, public: dict, secret: dict, t: float) -> None:
        if public.get("board_number", 1) > 1:  # a later run's or the second board's
            self._later_boards.setdefault(public["board_number"], []).append(public["card"])
            return
        self.start_if_dealt(t)
        self._board.append(public["card"])
        street = {1: 1, 4: 2, 5: 3}.get(public["position"])
        if street is not None and self.betting_hand is not None and self.betting_hand.street_index < street:
            self._close_street(t)  # unless the dealer already collected the bets

    def _fold(self, public: dict, secret: dict, t: float) -> None:
        self.start_if_dealt(t)
        if self.betting_hand is not None and not self._hand_ended:
            self._settle_all()
            seat, hand = public["seat"], self.betting_hand
            if hand.status == "showdown":  # the betting is over: the dealer is gathering the losers' cards
                self._check_mucked_winner(seat)
            else:
                # on the river with nothing to call the table cannot tell a fold from a hand mucked after
                # unseen checks: the fold stands (TDA 54-5), a winning hand goes to the floor
                if hand.street == "river" and hand.to_call(seat) == 0:
                    self._check_mucked_winner(seat)
                self._apply(self._act("fold", seat))

    def _misdeal(self, public: dict, secret: dict, t: float) -> None:
        self._reset_hand()  # the bets go back; the next deal starts a new betting hand
        self._void_chips = {zone: dict(chips) for zone, chips in self.zones.items()
                            if chips and Zone.parse(zone).kind in ("bets", "pot")}
        self._void_total = {zone: sum(chips.values()) for zone, chips in self._void_chips.items()}

    def _hand_over(self, public: dict, secret: dict, t: float) -> None:
        self.start_if_dealt(t, betting_input=False)
        if self.betting_hand is not None and self.betting_hand.bomb_pot:
            self.bomb_pot = None  # played (after a misdeal the deal again is still the bomb pot)
        self._finish(public, secret, t)

    # what each event of the card controller does to the betting (the dealing rules' dead hands: DEAD_SEAT_TYPES)
    _CARD_STEPS = {"hand_started": _hand_started, "card_dealt": _card_dealt, "board_corrected": _board_corrected,
                   "board_card": _board_card, "fold": _fold, "misdeal": _misdeal, "hand_ended": _hand_over}

    def _chips_returned(self) -> None:
        """A misdeal voids the bets: say what went back from each zone, and what still lies there at the new deal
        (``complete`` false: those chips count as the next hand's, e.g. the blinds left in place)."""
        kept = {zone: sum(chips.values()) for zone, chips in self._void_chips.items() if chips}
        returned = {zone: total - kept.get(zone, 0) for zone, total in self._void_total.items()}
        self._emit("chips_returned", {"complete": not kept, "returned": {z: v for z, v in returned.items() if v},
                                      "left_in_place": kept}, None)
        self._void_chips, self._void_total = {}, {}

    def start_if_dealt(self, t: float, betting_input: bool = True) -> None:
        """Start the betting once the deal is over: every seat dealt in the first round holds its cards. A card read
        late (RF noise can hold a card back for a few cycles) must not leave its seat out, so the betting starts at
        the first betting input after that — a chip pushed, a fold, a board card — or ``DEAL_SETTLE_S`` after the
        last card, whichever comes first. A betting input once the second round has begun starts it even while a
        seat is short of cards: the action has begun, and that seat's hand is the dealing rules' (fixed by the next
        card, a misdeal, or dead after substantial action: PP Misdeals 1e; TDA example 1-A)."""
        if self._would_start(betting_input):
            self._start_betting(t)

    def _would_start(self, betting_input: bool) -> bool:
        return self.betting_hand is None and not self._hand_ended and bool(self._dealt) and \
            self._deal_complete(betting_input)

    def _check_mucked_winner(self, seat: int) -> None:
        """At the showdown, a hand that would win (some of) the pot reaching the muck: cards speak, and a clearly
        winning tabled hand must not be mucked by the dealer (AC 14; CA Actions 9). The award still counts it."""
        hand = self.betting_hand
        board = [c for c in self._board if c]
        live = [s for s in hand.live_seats if self._hole.get(s)]
        if len(board) < 5 or seat not in live or len(live) < 2:
            return
        try:
            ranks = {s: hand_rank(self.variant, [c for c in self._hole[s] if c], board) for s in live}
        except ValueError:
            return
        if ranks[seat] == min(ranks.values()):
            self._mucked_winner = seat
            self._emit("bet_ruling", {"code": MUCKED_WINNER, "seat": seat,
                                      "message": f"seat {seat}'s hand wins at the showdown and reached the muck: cards "
                                                 "speak; confirm restores it (the pot goes to the best hand), override "
                                                 "lets the fold stand", "rules": ["AC 14", "CA Actions 9"],
                                      "needs_floor": True}, None)

    def mucked_winner_ruled(self, restore: bool, t: float | None = None) -> None:
        """The floor's answer to ``winning_hand_mucked``: ``restore`` takes the fold back (CA Actions 9: "the
        croupier may not fold a clearly winning hand"; AC 14), so the pot goes to the best hand; otherwise the fold
        stands. A hand that already ended is awarded now."""
        seat = self._mucked_winner
        if seat is None or self.betting_hand is None:
            return  # the ruling lapsed with its hand
        self._mucked_winner = None
        if restore:
            folds = [i for i, (name, args) in enumerate(self._engine_log) if name == "fold" and args == (seat,)]
            if folds:
                del self._engine_log[folds[-1]]
                self.betting_hand = self._rebuilt(len(self._engine_log))
            self._emit("bet_ruling", {"code": HAND_RESTORED, "seat": seat,
                                      "message": f"seat {seat}'s mucked hand is restored: it plays the showdown",
                                      "rules": ["CA Actions 9", "AC 14"], "needs_floor": False}, None)
        if self._award_waits is not None:
            public, secret = self._award_waits
            self._award_waits = None
            self._close_and_award(public, secret, self._last_card_at if t is None else t)

    @property
    def award_waits(self) -> bool:
        """The hand is over and its award waits for the floor's answer on a mucked winning hand: what the engine
        needs for it is no part of the explicit checkpoint state (``checkpoint_state``)."""
        return self._award_waits is not None

    def _deal_complete(self, betting_input: bool = False) -> bool:
        if len(self._dealt_order) < 2 or self._dealt[self._dealt_order[0]] < 2:
            return False  # the first round is not over until the first seat gets its second card
        return betting_input or all(self._dealt[s] >= self.hole_cards for s in self._dealt_order)

    def _opening(self) -> _Opening:
        """How the betting hand would begin now, from the deal and the chips in the zones (nothing changes)."""
        seats = sorted(self._dealt_order)
        bets = {s: self._zone_chips(Zone("bets", s).name) for s in seats}
        button = self._button_from_blinds(seats, bets)
        if button is None:
            first = self._dealt_order[0]
            button = seats[seats.index(first) - 1]  # the deal starts left of the button
        hint = self._card_button
        if hint is not None and hint not in seats and button == self._seat_before(seats, hint):
            button = hint  # a dead button (tournaments): on a seat nobody plays, the blinds after it
        stacks, known = {}, True
        for s in seats:
            in_zone = sum(bets[s])
            stack_zone = self.zones.get(Zone("stack", s).name)
            if stack_zone:
                stacks[s] = sum(stack_zone.values()) + in_zone
            elif s in self.stacks:
                stacks[s] = self.stacks[s]
            else:
                stacks[s], known = UNKNOWN_STACK, False
        order = BettingHand.order_from_button(seats, button)  # the engine's own seating rule
        kwargs: dict[str, Any] = {"bets": self.setup.bet_limits} if self.setup.bet_limits else {}
        if self.bomb_pot is not None:  # everyone's agreed amount, no blinds, no straddles, no antes beside it
            sb = bb = None
            straddles: list[Straddle] = []
            kwargs.update(bomb_pot=self.bomb_pot[0], flip=self.bomb_pot[1], ante=0, big_blind_ante=0)
        else:
            no_small_blind = self._small_blind_seat_empty(order, button, bets)
            sb, bb = (order[1], order[0]) if len(order) == 2 else (order[0], order[1])
            if no_small_blind:
                sb, bb = None, order[0]
                kwargs["no_small_blind"] = True
            straddles = self._straddles(order, bb, bets)
            kwargs.update(ante=self.stakes.ante, big_blind_ante=self.stakes.big_blind_ante)
        args = (self.variant, list(seats), button, dict(stacks), (self.stakes.small_blind, self.stakes.big_blind))
        kwargs.update(straddles=list(straddles), rules=self.rules, chip_values=self.chip_values,
                      forced_bet_chips={s: list(bets[s]) for s in seats if bets[s] and self.bomb_pot is None})
        return _Opening(seats, bets, button, stacks, known, sb, bb, args, kwargs)

    def _start_betting(self, t: float) -> None:
        opening = self._opening()
        seats, bets, button, stacks, known, sb, bb = (opening.seats, opening.bets, opening.button, opening.stacks,
                                                      opening.known, opening.sb, opening.bb)
        args, kwargs = opening.args, opening.kwargs
        try:
            hand = BettingHand(*args, **kwargs)
        except ValueError as exc:  # e.g. a seat dealt in with no chips: the floor must look
            self._emit("bet_ruling", {"code": "betting_unread", "seat": None, "message": f"seats {seats}: {exc}",
                                      "rules": [], "needs_floor": True}, None)
            # Tried again when a card or a chip moves, not at every tick: nothing else can change the answer.
            self._start_refused = True
            return
        self.betting_hand = hand
        self._engine_setup, self._engine_log = (args, kwargs), []
        posters = seats if self.bomb_pot is not None else (sb, bb)
        forced = [c for s in posters if s is not None for c in bets[s]] + list(self.zones.get("pot", {}).values())
        self._smallest_forced_chip = min(forced) if forced else None
        self._known_stacks = known
        self._emit("betting_started", {
            "button": button, "seats": hand.order, "small_blind": self.stakes.small_blind,
            "big_blind": self.stakes.big_blind, "ante": self.stakes.ante, "big_blind_ante": self.stakes.big_blind_ante,
            "level": self.levels.number if self.levels is not None else None,
            "bomb_pot": ({"amount": self.bomb_pot[0], "flip": self.bomb_pot[1]} if self.bomb_pot is not None
                               else None),
            "stacks": {str(s): stacks[s] for s in seats} if known else None, "rules": self.rules.name,
        }, None)
        for action in hand.actions:
            self._emit_action(action)
        if self.bomb_pot is not None:
            self._check_bomb_pot_chips(bets)
            return
        for s in hand.order:  # what lies in the forced bettors' zones must match what they posted
            posted = hand.bets[s]
            if s in (sb, bb) or any(a.seat == s and a.kind == "straddle" for a in hand.actions):
                if sum(bets[s]) != posted:
                    self._chip_count("forced_bet", s, posted, sum(bets[s]), ["DE 9"] if hand.is_all_in(s) else [])
        antes = sum(a.added for a in hand.actions if a.kind == "ante")
        in_pot = sum(self.zones.get("pot", {}).values())
        if antes and in_pot != antes:
            self._chip_count("antes", None, antes, in_pot, [])
        for s in hand.order:  # chips a non-forced seat pushed before the deal was over: its first action
            if bets[s] and s not in (sb, bb) and not any(a.seat == s and a.kind == "straddle" for a in hand.actions):
                self._apply(self._act("push", s, bets[s]), chips=bets[s], withdrawn=[])

    def _check_bomb_pot_chips(self, bets: Mapping[int, list[int]]) -> None:
        """Every player put the agreed amount in before the deal (CA GR 14.2, 14.3): in the seat's betting zone, or
        already in the pot. A seat whose zone holds another amount, or a pot short of the rest, is a chip count."""
        hand = self.betting_hand
        posted = {a.seat: a.added for a in hand.actions if a.kind == "ante"}
        rule = ["CA GR 14.2" if self.bomb_pot[1] else "CA GR 14.3"]
        for s in hand.order:
            if bets[s] and sum(bets[s]) != posted.get(s, 0):
                self._chip_count("forced_bet", s, posted.get(s, 0), sum(bets[s]), rule)
        owed_in_pot = sum(v for s, v in posted.items() if not bets[s])
        in_pot = sum(self.zones.get("pot", {}).values())
        if owed_in_pot != in_pot:
            self._chip_count("antes", None, owed_in_pot, in_pot, rule)

    def runs_refusal(self, pots: Sequence[int] | None) -> Refusal | None:
        """Why the players cannot agree to deal the rest of the board more than once for ``pots`` (indices, 0 the
        main pot; None: every pot), or None. CA Actions 8: "if a.) no more action is possible": the betting is over
        with players all-in and board cards still to come."""
        hand = self.betting_hand
        if hand is None or self._hand_ended:
            return Refusal("no hand is being played")
        able = [s for s in hand.live_seats if not hand.is_all_in(s)]  # players with chips left to bet
        over = hand.status == "showdown" or (hand.status == "betting" and hand.round_complete() and len(able) <= 1)
        if not over or len(hand.live_seats) < 2:
            return Refusal("players can still act: a hand is run twice only when no more action is possible "
                           "(CA Actions 8a)")
        if len(self._board) >= 5 or self._later_boards:
            return Refusal("the board is already dealt: the players agree before the rest of the board is dealt")
        # the pots once this street's bets are in: a side pot above each all-in level (at most)
        levels = {hand.seat_state(s)["committed"] for s in hand.live_seats if hand.is_all_in(s)}
        count = max(len(hand.pots()), len(levels) + (1 if len(levels) < len(hand.live_seats) else 0))
        if pots is not None and any(not 0 <= p < count for p in pots):
            return Refusal(f"the hand has {count} pot(s): 0 is the main pot, 1 the first side pot")
        return None

    def agree_runs(self, runs: int, pots: Sequence[int] | None) -> None:
        """The players agreed to deal the rest of the board ``runs`` times (CA Actions 8) for ``pots``, as
        :meth:`runs_refusal` allowed."""
        self.runs = (runs, tuple(sorted(set(pots))) if pots is not None else None)
        self._runs_from = len(self._board)

    def agree_bomb_pot(self, amount: int | None, flip: bool) -> None:
        """The players' agreement before the deal (the ``bomb_pot`` command); ``None`` takes it back."""
        self.bomb_pot = None if amount is None else (amount, flip)

    def _small_blind_seat_empty(self, order: list[int], button: int, bets: Mapping[int, list[int]]) -> bool:
        """The zones and the seats show a big blind and no small blind (DE 9: "Sollte einmal der Big-Blind in der
        aktuellen Runde ausscheiden, gibt es in der nächsten Runde keinen Small-Blind"; AC 27): the first player
        left of the button posted the big blind, the next nothing, and the seat between the button and that player
        — where the small blind would be — is empty (three players or more)."""
        if len(order) < 3 or sum(bets[order[0]]) != self.stakes.big_blind or bets[order[1]]:
            return False
        first = order[0]
        between = range(button + 1, first) if first > button else [*range(button + 1, self.seats + 1),
                                                                    *range(1, first)]
        return any(seat not in order for seat in between)

    @staticmethod
    def _seat_before(seats: list[int], seat: int) -> int:
        """The seat in play that comes last before ``seat`` clockwise (the button a live seat would hold)."""
        before = [s for s in seats if s < seat]
        return before[-1] if before else seats[-1]

    def _button_from_blinds(self, seats: list[int], bets: Mapping[int, list[int]]) -> int | None:
        """The button as the blinds show it: the big blind lies in the zone of the seat after the small blind's,
        and the button sits before the small blind (heads-up, the button posts the small blind). ``None`` when the
        zones do not show exactly that (a missing or wrong blind is then read against the deal's order)."""
        sb, bb = self.stakes.small_blind, self.stakes.big_blind
        for i, seat in enumerate(seats):
            after = seats[(i + 1) % len(seats)]
            if sum(bets[seat]) == sb and sum(bets[after]) == bb and sb != bb:
                return seat if len(seats) == 2 else seats[i - 1]
        return None

    def _straddles(self, order: list[int], bb: int, bets: Mapping[int, list[int]]) -> list[Straddle]:
        """Chips in a seat's zone beyond the blinds before the cards are out: a straddle (CA Actions 1)."""
        if len(order) < 3:
            return []
        out: list[Straddle] = []
        level, previous = self.stakes.big_blind, bb
        for seat in order[2:] + order[:2]:
            amount = sum(bets.get(seat, []))
            if seat in (order[0], order[1]) or amount <= level:
                continue
            i = order.index(previous)
            if order[(i + 1) % len(order)] == seat:
                kind = "live"
            elif seat == order[-1]:
                kind = "button"
            else:
                kind = "mississippi"
            out.append(Straddle(amount, kind, seat))
            level, previous = amount, seat
            if kind != "live":
                break
        return out

    def _zone_chips(self, zone: str) -> list[int]:
        return sorted(self.zones.get(zone, {}).values())

    # ---- streets --------------------------------------------------------------------------------------

    def _infer_checks(self) -> None:
        hand = self.betting_hand
        while hand.status == "betting" and (seat := hand.to_act()) is not None and hand.to_call(seat) == 0:
            ruling = self._act("check", seat)
            if not ruling.ok:
                break
            self._apply(ruling)

    def _close_street(self, t: float, collected_chips: bool = False) -> None:
        """A board card arrived, or the dealer moved bets into the pot: the betting round must be over."""
        if self.betting_hand is None or self._hand_ended or self.betting_hand.status != "betting":
            return
        self._settle_all()
        self._infer_checks()
        if self.betting_hand.status == "betting" and not self.betting_hand.round_complete():
            if collected_chips:
                code, message = "collected_before_betting_over", "bets went into the pot before the round was over"
            else:
                code, message = "board_before_betting_over", "a board card arrived before the round was over"
            self._emit("bet_ruling", {"code": code, "seat": self.betting_hand.to_act(), "message": message,
                                      "rules": ["TDA 38"], "needs_floor": True}, None)
            return
        self._end_street(t)

    def _end_street(self, t: float) -> None:
        ruling = self._act("end_street")
        if not ruling.ok:
            self._emit("bet_ruling", {"code": ruling.code, "seat": ruling.seat, "message": ruling.message,
                                      "rules": list(ruling.rules), "needs_floor": ruling.needs_floor}, None)
            return
        for zone, chips in self.zones.items():
            if Zone.parse(zone).kind == "bets":
                self._collecting.update(chips)
        self._collecting.update(uid for uid, _ in self._departed)  # already on their way to the pot
        self._motions.clear()
        self._undo.clear()  # the round is over: its actions stand
        self._fixed = None
        collection = ruling.collection
        self._emit("pots", {"street": collection.street,
                            "collected": {str(s): v for s, v in collection.into_pot.items()},
                            "returned": {str(s): v for s, v in collection.returned.items()},
                            "pots": [{"amount": p.amount, "eligible": list(p.eligible)} for p in collection.pots],
                            "total": sum(p.amount for p in collection.pots)}, None)
        for action in ruling.actions:  # the next street has no betting (a bomb pot's or flip's): its ruled checks
            self._emit_action(action)
        self._pot_check_due = True
        self._pot_changed_at = max(self._pot_changed_at, t)

    def _boards(self, board: list[str], public: dict) -> tuple[list[list[str]], int, tuple[int, ...] | None]:
        """The hand's boards, run by run (the card controller's ``boards`` at the hand's end, or the board cards it
        reported), how many runs were dealt, and the pots the runs cover. Agreed runs the dealer did not deal do
        not count: the pots go by the boards on the table."""
        if public.get("boards"):
            boards = [list(b) for b in public["boards"]]
        else:
            later = [list(self._board[:self._shared()]) + cards for _n, cards in sorted(self._later_boards.items())]
            boards = [board] + later
        per_run = 2 if self.setup.double_board and len(boards) >= 2 else 1
        runs = len(boards) // per_run
        boards = boards[: runs * per_run]
        return boards, runs, self.runs[1] if self.runs is not None and runs > 1 else None

    def _shared(self) -> int:
        """Board cards every run shares: those dealt before the agreement (a double board shares none)."""
        return 0 if self.setup.double_board else self._runs_from

    def _check_pot(self) -> None:
        self._pot_check_due = False
        expected = sum(p.amount for p in self.betting_hand.pots())
        seen = sum(self.zones.get("pot", {}).values())
        if seen != expected:
            self._chip_count("pot", None, expected, seen, [])

    # ---- the end ---------------------------------------------------------------------------------------

    def _finish(self, public: dict, secret: dict, t: float) -> None:
        hand = self.betting_hand
        if hand is None or self._hand_ended:
            return
        self._hand_ended = True
        self._settle_all()
        if self._mucked_winner is not None:  # the pot waits for the floor's answer on the mucked winning hand
            self._award_waits = (public, secret)
            return
        self._close_and_award(public, secret, t)

    def _close_and_award(self, public: dict, secret: dict, t: float) -> None:
        hand = self.betting_hand
        if hand.status == "betting":
            self._infer_checks()
        while hand.status == "betting" and hand.round_complete():
            before = hand.street_index
            self._end_street(t)
            if hand.street_index == before and hand.status == "betting":
                break
        self._pot_check_due = False  # the cards are gathered: the pot has gone to the winner
        if hand.status == "betting":
            self._emit("bet_ruling", {"code": "hand_ended_in_betting", "seat": hand.to_act(),
                                      "message": "the cards were gathered before the betting was over: no award read",
                                      "rules": [], "needs_floor": True}, None)
            return
        board = list(public.get("board", self._board))
        hole = {int(s): list(cards) for s, cards in secret.get("hole_cards", {}).items()}
        for s, cards in self._hole.items():
            hole.setdefault(s, [c for c in cards if c])
        boards, runs, run_pots = self._boards(board, public)
        double = self.setup.double_board and len(boards) >= 2
        try:
            result = award(hand, {s: hole[s] for s in hand.live_seats if s in hole}, boards=boards, runs=runs,
                           run_pots=run_pots, double_board=double)
        except (ValueError, KeyError) as exc:
            self._emit("bet_ruling", {"code": "showdown_unread", "seat": None, "message": str(exc), "rules": [],
                                      "needs_floor": True}, None)
            return
        finishing = dict(result.finishing_stacks)
        if self._known_stacks:
            self.stacks.update({s: v for s, v in finishing.items() if s not in self._counted_since_start})
        several = {"boards": boards, "runs": runs} if len(boards) > 1 else {}
        self._emit("showdown", {
            "order": list(result.showdown_order),
            "pots": [{"index": p.index, "amount": p.amount, "eligible": list(p.eligible), "winners": list(p.winners),
                      "shares": {str(s): v for s, v in p.shares.items()}, "odd_chips": list(p.odd_chips),
                      "rules": list(p.rules),
                      **({"boards": [{"board": b + 1, "shares": {str(s): v for s, v in shares.items()}}
                                     for b, shares in board_shares(p)]} if p.boards else {})}
                     for p in result.pots],
            **several,
            "payouts": {str(s): v for s, v in result.payouts.items() if v},
            "finishing_stacks": {str(s): v for s, v in finishing.items()} if self._known_stacks else None,
        }, {"hands": {str(s): hole.get(s, []) for s in result.showdown_order}} if len(hand.live_seats) > 1 else None)
        shown = list(result.showdown_order) if len(hand.live_seats) > 1 else []
        stacks = finishing if self._known_stacks else None
        names = {seat: player["name"] for seat, player in self.players.items()}
        players = {"players": [names.get(s, f"Seat {s}") for s in hand.order]} if names else {}
        record = HandRecord(hand, hole, boards[0], tabled(hand, shown, public.get("folded_seats", ()), result.payouts),
                            [(p.amount, p.shares) for p in result.pots], self.setup.table_id or "table",
                            game_number(self.setup.table_id, self._started_t), self.seats,
                            names=names, boards=boards if len(boards) > 1 else (), runs=runs, double_board=double,
                            pot_boards=[board_shares(p) for p in result.pots])
        if len(boards) > 1:  # PHH (pokerkit 0.7.7) has no notation for runouts or boards: user-defined fields
            players["_boards"] = ["".join(b) for b in boards]
            players["_runs"] = runs
        copies = {"ohh_complete": ohh.to_ohh(record), "pokerstars_complete": pokerstars.to_pokerstars(record)}
        try:
            full = phhlib.to_phh(hand, hole, board, shown, stacks, **players)
            masked = phhlib.to_phh(hand, None, board, [], stacks, **players)
        except ValueError as exc:  # a variant PHH has no code for
            self._emit("hand_history", {"format": "phh", "phh": None, "reason": str(exc)}, copies)
        else:
            self._emit("hand_history", {"format": "phh", "phh": phhlib.dumps(masked)},
                       {"phh_complete": phhlib.dumps(full), **copies})
        if self._pushed:  # stack zones saw where the pot went: it must be where the award says
            for s in sorted(set(self._pushed) | {s for s, v in result.payouts.items() if v}):
                expected, seen = result.payouts.get(s, 0), self._pushed.get(s, 0)
                if expected != seen:
                    self._chip_count("award", s, expected, seen, ["CA Actions 7", "TDA 20-5"])

    # ---- inputs from the floor and the console -----------------------------------------------------------

    def set_stacks(self, stacks: Mapping[int, int]) -> None:
        self.stacks.update(stacks)
        if self.betting_hand is not None and not self._hand_ended:
            self._counted_since_start.update(stacks)  # the hand's result must not overwrite the count

    def _set_stacks_command(self, command: Command, t: float) -> list[DomainEvent]:
        """``set_stacks``: the floor counted the stacks."""
        stacks = {int(seat): int(amount) for seat, amount in command["stacks"].items()}
        self.set_stacks(stacks)
        self.out.emit("stacks_set", {"stacks": {str(s): v for s, v in sorted(stacks.items())}, **command.signed()})
        return self.out.take()

    def _declare_command(self, command: Command, t: float) -> list[DomainEvent]:
        """``declare``: a verbal declaration entered at the console, as :meth:`_declare_refusal` allowed (the betting
        begins with it if the deal is over)."""
        self.start_if_dealt(t)
        extra = {"amount": command["amount"]} if "amount" in command else {}
        self.out.emit("declaration", {"seat": command["seat"], "declaration": command["declaration"], **extra,
                                      **command.signed()})
        self.declare(command["seat"], command["declaration"], command.get("amount"))
        return self.out.take()

    def substantial_action(self) -> bool:
        """Whether a misdeal can no longer be called, by the profile's definition (for the dealing rules)."""
        return self.betting_hand is not None and self.betting_hand.substantial_action()

    def round_open(self) -> bool:
        """Whether players still have to act on a bet in this betting round: a board card now is premature. Seats
        that only have to check are not waiting (checks are never seen), and chips still settling count as the
        action they are."""
        hand = self.betting_hand
        if hand is None or self._hand_ended or hand.status != "betting" or self._motions:
            return False
        seat = hand.to_act()
        return seat is not None and hand.to_call(seat) > 0

    def street_action(self) -> bool:
        """Whether anyone acted on the current street: an action the engine took (a check only where a later push
        showed it), an out-of-turn action or a declaration waiting, or chips still settling into a push."""
        hand = self.betting_hand
        if hand is None or self._hand_ended or hand.status != "betting":
            return False
        return bool(self._motions) or hand.street_acted()

    def dead_hand(self, seat: int, rule: str) -> None:
        """A rule killed the seat's hand (the action clock ran out, the player was away): it is folded."""
        hand = self.betting_hand
        if hand is None or self._hand_ended or hand.status != "betting" or seat not in hand.live_seats:
            return
        self._settle_all()
        ruling = self._act("fold", seat)
        if ruling.ok:
            self._apply(ruling)
            self._emit("bet_ruling", {"code": "hand_dead", "seat": seat,
                                      "message": f"seat {seat}'s hand is dead: folded",
                                      "rules": [rule] if rule else [], "needs_floor": False}, None)

    def ruled_check(self, seat: int, rule: str) -> None:
        """The clock ran out on a seat with nothing to call and the profile checks it (PP Dead hands 1f)."""
        hand = self.betting_hand
        if hand is None or self._hand_ended or hand.status != "betting" or hand.to_act() != seat:
            return
        self._settle_all()
        if hand.to_call(seat) == 0:
            self._apply(self._act("check", seat))

    def accepts_declarations(self) -> bool:
        return self.betting_hand is not None and not self._hand_ended

    def _declare_refusal(self, command: Command, t: float) -> Refusal | None:
        """Why a declaration is refused now, or None: the betting has begun, or begins with it (a betting input once
        the deal is over, :meth:`start_if_dealt`), and the seat is in its hand."""
        seat = command["seat"]
        if self.accepts_declarations():
            seats = self.betting_hand.order
        elif self._would_start(betting_input=True):
            opening = self._opening()
            try:
                BettingHand(*opening.args, **opening.kwargs)  # the betting could not begin (a seat with no chips)
            except ValueError:
                return Refusal(NOT_STARTED)
            seats = opening.seats
        else:
            return Refusal(NOT_STARTED)
        return None if seat in seats else Refusal(f"seat {seat} is not in the hand")

    def to_act(self) -> int | None:
        """The seat to act, while the betting takes declarations; None otherwise."""
        return self.betting_hand.to_act() if self.accepts_declarations() else None

    def to_call(self, seat: int) -> int:
        """What ``seat`` must put in to call (0 without a hand)."""
        return self.betting_hand.to_call(seat) if self.betting_hand is not None else 0

    def turn(self) -> tuple[int | None, int]:
        """The seat to act (as :meth:`to_act`) and what it must put in to call (0 when no seat is to act): what the
        game tells the conduct rules and the clock after each input, in one question."""
        seat = self.to_act()
        return (seat, self.betting_hand.to_call(seat)) if seat is not None else (None, 0)

    def declare(self, seat: int, declaration: str, amount: int | None) -> None:
        """A verbal declaration entered at the console (the table cannot hear); the engine rules on it."""
        self._settle_all(keep_undone=True)
        kind = {"all-in": "all_in", "allin": "all_in"}.get(declaration, declaration)
        point = _UndoPoint(len(self._engine_log), seat, "declaration", declaration=kind)
        self._apply(self._act("declare", seat, kind, amount), undo=point)

    def _act(self, name: str, *args: Any) -> Ruling:
        """Give the engine one input (``push``, ``fold``, ``check``, ``declare``, ``end_street``), logged for undo."""
        self._engine_log.append((name, tuple(list(a) if isinstance(a, list) else a for a in args)))
        return getattr(self.betting_hand, name)(*args)

    def _rebuilt(self, inputs: int) -> BettingHand:
        """The engine as it was after its first ``inputs`` inputs of this hand (it is deterministic); the later
        inputs are forgotten."""
        del self._engine_log[inputs:]
        return self._replayed()

    def _replayed(self) -> BettingHand:
        """A new engine given every input of this hand so far: the same state as the engine's, to try an input on."""
        args, kwargs = self._engine_setup
        hand = BettingHand(*args, **kwargs)
        for name, logged in self._engine_log:
            getattr(hand, name)(*(list(a) if isinstance(a, list) else a for a in logged))
        return hand

    def _undo_refusal(self, command: Command, t: float) -> Refusal | None:
        """Why the dealer's ``undo`` is refused now, or None. What it takes back is the latest betting input of this
        round: a push read from the chips (with the checks it implied), or a declaration entered at the console; a
        push still settling counts as read. A fold (the cards are in the muck), a forced bet or a closed round cannot
        be undone."""
        hand = self.betting_hand
        if hand is None or self._hand_ended:
            return Refusal("no betting is running: nothing to undo")
        if hand.status == "betting" and (self._undo or self._settling_is_undoable()):
            return None
        fixed = self._fixed
        if fixed is not None and fixed.kind == "fold" and hand.status == "betting":
            return Refusal(f"the latest action is seat {fixed.seat}'s fold: its cards are in the muck and the hand is "
                           "dead; the floor rules on it")
        return Refusal("nothing to undo in this betting round (forced bets, folds and closed rounds are the floor's)")

    def _settling_is_undoable(self) -> bool:
        """Whether the chips still settling, read now, make an action an undo takes back (tried on a copy of the
        engine, in the order ``_settle_all`` reads them: nothing changes)."""
        if not self._motions:
            return False
        engine = self._replayed()
        for seat in sorted(self._motions, key=lambda s: self._motions[s].last_change):
            push = self._push(seat, self._motions[seat], engine)
            if push is not None and push.plays and engine.push(seat, push.chips, push.withdrawn).actions:
                return True
        return False

    def _undo_command(self, command: Command, t: float) -> list[DomainEvent]:
        """The dealer's ``undo``, as :meth:`_undo_refusal` allowed: a push still settling is read first (it is the
        latest action); the engine returns to its state before the latest input; the chips of an undone push are
        back in motion, so the push is read again once the player has put right what lies in the zone."""
        hand = self.betting_hand
        self._settle_all()
        point = self._undo.pop()
        self.betting_hand = self._rebuilt(point.log_length)
        if point.what == "push" and point.seat is not None:
            motion = self._motions.setdefault(point.seat, _Motion())
            in_zone = self.zones.get(Zone("bets", point.seat).name, {})
            motion.arrived[:0] = [u for u in point.arrived if u in in_zone and u not in motion.arrived]
            motion.left[:0] = [u for u in point.left if u not in in_zone and u not in motion.left]
            motion.last_change, motion.undone = max(motion.last_change, t), True
        self._emit("action_undone", {"seat": point.seat, "undone": point.actions, "declaration": point.declaration,
                                     "street": hand.street if hand.status == "betting" else None,
                                     "pot": self.betting_hand.pot_total(), "next": self.betting_hand.to_act(),
                                     "by": command.by}, None)
        return self.out.take()

    # ---- time ------------------------------------------------------------------------------------------

    def next_due(self) -> float:
        """The earliest time :meth:`tick` has something to do: the deal settled, a push settled, the pot to count;
        -inf while chips that left a betting zone wait to be placed (the next tick does)."""
        if self._departed:
            return -math.inf
        due = math.inf
        if self.betting_hand is None and self._dealt and not self._start_refused:
            due = self._last_card_at + DEAL_SETTLE_S
        settle = self.setup.settle_s
        for motion in self._motions.values():
            due = min(due, motion.last_change + settle)
        if self._pot_check_due and self.betting_hand is not None:
            due = min(due, self._pot_changed_at + self.setup.pile_s)
        return due

    def tick(self, now: float) -> None:
        if self.betting_hand is None and self._dealt and now - self._last_card_at >= DEAL_SETTLE_S and not self._start_refused:
            self.start_if_dealt(now, betting_input=False)
        if self._departed:
            self._resolve_departures(now)
        for seat in [s for s, m in self._motions.items() if now - m.last_change >= self.setup.settle_s]:
            self._settle(seat)
        if (self._pot_check_due and self.betting_hand is not None and now - self._pot_changed_at >= self.setup.pile_s
                and not self._collecting):
            self._check_pot()

    # ---- output ----------------------------------------------------------------------------------------

    def _apply(self, ruling: Ruling, chips: list[int] | None = None,
               withdrawn: list[int] | None = None, undo: _UndoPoint | None = None) -> None:
        if undo is not None and (ruling.actions or (ruling.ok and undo.what == "declaration")):
            self._recording = undo  # the actions published now are the ones an undo names
            self._undo.append(undo)
        elif ruling.actions:  # a fold or a ruling stands: what came before it can no longer be taken back
            self._undo.clear()
            self._fixed = ruling.actions[-1]
        try:
            for action in ruling.actions:
                self._emit_action(action)
        finally:
            self._recording = None
        if not ruling.actions or not ruling.ok or ruling.needs_floor:
            body: dict[str, Any] = {"code": ruling.code, "seat": ruling.seat, "message": ruling.message,
                                    "rules": list(ruling.rules), "needs_floor": ruling.needs_floor}
            if chips is not None:
                body["chips"] = list(chips)
                body["withdrawn"] = list(withdrawn or [])
            self._emit("bet_ruling", body, None)

    def _emit_action(self, action: Action) -> None:
        hand = self.betting_hand
        body = {"seat": action.seat, "action": action.kind, "street": action.street, "to": action.to_amount,
                "added": action.added, "all_in": action.all_in, "rules": list(action.rules)}
        if action.kind == "all_in":
            body["as"] = action.base
        if action.returned:
            body["returned"] = action.returned
        if action.owed:
            body["owed"] = action.owed
        if action.note:
            body["note"] = action.note
        if hand is not None:
            body["pot"] = hand.pot_total()
            body["next"] = hand.to_act()
        seq = self._emit("action", body, None)
        if self._recording is not None:
            self._recording.actions.append({"seq": seq, "seat": action.seat, "action": action.kind,
                                            "to": action.to_amount})

    def checkpoint_state(self) -> dict[str, Any]:
        """What carries over to the next hand, as JSON: the stacks the floor counted (with the hands' results)
        and the chips lying on each chip zone."""
        return {"stacks": {str(seat): amount for seat, amount in self.stacks.items()},
                "zones": {zone: dict(chips) for zone, chips in self.zones.items()}}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        self.stacks = {int(seat): int(amount) for seat, amount in state["stacks"].items()}
        self.zones = {zone: dict(chips) for zone, chips in state["zones"].items()}
        self._reset_hand()

    def snapshot(self) -> dict[str, Any] | None:
        hand = self.betting_hand
        if hand is None:
            return None
        return {
            "street": hand.street,
            "to_act": hand.to_act() if not self._hand_ended else None,
            "current_bet": hand.current_bet if hand.status == "betting" else 0,
            "pot": hand.pot_total(),
            "pots": [{"amount": p.amount, "eligible": list(p.eligible)} for p in hand.pots()],
            "bets": {str(s): b for s, b in hand.bets.items() if b},
            "stacks": {str(s): v for s, v in hand.stacks.items()} if self._known_stacks else None,
            "folded": [s for s in hand.order if s not in hand.live_seats],
            "all_in": [s for s in hand.live_seats if hand.is_all_in(s)],
        }

    def on_table(self) -> dict[str, str]:
        return {uid: zone for zone, chips in self.zones.items() for uid in chips}
