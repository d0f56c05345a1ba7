"""One hand as the cards and the chips tell it (``HandReading``): made when the hand starts, replaced when the next
one starts (or the deal is void), so nothing of one hand outlives it and nothing is cleared by hand.

The chip layer (``controller.chip_betting``) keeps what lasts from hand to hand (the chips lying on the table, the
stacks, the players, the button, a bomb pot agreed) and hands each event on to the hand's reading, which holds the
deal and the board the card controller reported, the betting engine with every input it took
(``controller.engine_log``), the chips settling in the betting zones and the pot (``controller.chip_settling``), and
the rulings of the hand that wait for the floor. It reads the pushes, infers the checks nobody sees, closes the
streets and, at the hand's end, has the pots awarded (``controller.hand_award``).

* checks are never seen: the engine infers them when a later seat bets, and at the next board card the seats still
  to act with nothing to call are taken to have checked;
* the dealer collecting the bets (the round is complete and chips leave the betting zones, or the next board card
  arrives; in stud the next street's first card) ends the street; once the pot zone has settled it must hold what
  the engine says the pot is, otherwise a ``chip_count`` event says by how much it differs;
* a stud street opens with the seat its cards name (the card controller's ``StudOpener``): third street's bring-in
  begins the betting.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from controller import mucked_winner
from controller.betting import BettingHand, Ruling
from controller.chip_events import ChipEvents
from controller.chip_opening import Opening, posted_antes, posted_chip_counts
from controller.chip_settling import ForcedBetsDue, LateAntes, Motion, PushReader, Settling
from controller.chip_table import ChipTable
from controller.commands import Refusal
from controller.dealing import HoleCardsDealt
from controller.engine_log import (Check, Declare, EndStreet, EngineInput, EngineLog, Fold, Passive, Push, StartStreet,
                                   UndoPoint, UndoStack)
from controller.events import (ActionUndone, BetRuling, BettingStarted, CardDealt, HandEnded, PotsCollected,
                               StudOpener)
from controller.hand_award import award_hand
from controller.showdown import hand_rank
from controller.stud import STREETS as STUD_STREETS
from hal.zone_names import Zone

DEAL_SETTLE_S = 0.5  # the deal is taken as over this long after its last card, unless the betting begins sooner


class HandReading:
    def __init__(self, table: ChipTable, events: ChipEvents, zones: Mapping[str, Mapping[str, int]],
                 players: Mapping[int, Mapping[str, str]], started_t: float):
        self.table = table
        self.events = events
        self.zones = zones  # the chips lying on each chip zone now, kept by the chip layer
        self.players = players  # seat → the player the floor seated: the names go into the hand history
        self.started_t = started_t  # on the table clock: the hand histories number hands by it
        self.dealt = HoleCardsDealt(table.hole_cards)  # the hole cards each seat holds, seats in the order dealt
        self.hole: dict[int, list[str]] = {}
        self.last_card_at = 0.0
        self.board: list[str] = []
        self.later_boards: dict[int, list[str]] = {}  # board number (2, 3, ...) → its cards: runs, a double board
        # run it twice or three times (CA Actions 8): (runs, the pots agreed or None for all), once agreed
        self.runs: tuple[int, tuple[int, ...] | None] | None = None
        self.runs_from = 0  # board cards dealt when the runs were agreed: every run shares them
        self.start_refused = False  # the betting could not start; tried again at the next card or chip
        self.log: EngineLog | None = None  # the betting engine, once the betting has begun, and its inputs
        self.pushes: PushReader | None = None  # how a settled motion is read, once the betting has begun
        self.forced_due: ForcedBetsDue | None = None  # forced bets whose chips come after the deal
        self.antes = LateAntes()  # the antes, whose chips may also come after the deal
        self.known_stacks = False  # the stacks were counted, not assumed
        self.settling = Settling(table.setup.settle_s, table.setup.pile_s)
        self.undo = UndoStack()
        self.ended = False
        self.counted: set[int] = set()  # seats whose stack the floor entered during this hand
        self.mucked_winner: int | None = None  # a winning hand the dealer mucked, until the floor answers
        self.waiting_award: HandEnded | None = None  # the hand ended first: its award waits for that answer
        # stud: the seat each street's cards name to open it (street index → seat, open pair), as the card
        # controller announced it; a street opens once the one before it is over
        self.openers: dict[int, tuple[int, bool]] = {}

    @property
    def engine(self) -> BettingHand | None:
        return self.log.engine if self.log is not None else None

    @property
    def _log(self) -> EngineLog:
        """The engine's log, where the betting has begun (what reads it runs only then)."""
        assert self.log is not None, "the betting has not begun"
        return self.log

    @property
    def _pushes(self) -> PushReader:
        """How pushes are read, from the betting's start."""
        assert self.pushes is not None, "the betting has not begun"
        return self.pushes

    # ---- the cards ---------------------------------------------------------------------------------------

    def card_dealt(self, card: CardDealt, t: float) -> None:
        self.dealt.dealt(card)
        self.hole.setdefault(card.seat, []).append(card.card)
        self.last_card_at = t
        hand = self.engine
        if card.street is not None and hand is not None and hand.street_index < STUD_STREETS.index(card.street):
            self._close_street(t)  # a stud street's first card: the street before it is over (unless collected)

    def stud_opener(self, opener: StudOpener, t: float) -> None:
        """A stud street's cards are out and name the seat that opens it: third street's bring-in (the betting
        begins with it), a later street's first to act. The house allows the big bet on an open pair or not."""
        open_pair = opener.open_pair and self.table.rules.open_pair_big_bet
        self.openers[STUD_STREETS.index(opener.street)] = (opener.seat, open_pair)
        if self.engine is not None:
            self._open_stud_street()

    def _open_stud_street(self) -> None:
        """Open the stud street the engine waits for, once its cards have named the seat that opens it."""
        hand = self._log.engine
        opener = self.openers.get(hand.street_index)
        if self.ended or hand.status != "betting" or not hand.awaiting_opener or opener is None:
            return
        ruling = self._act(StartStreet(*opener))
        if not ruling.ok:
            self.events.engine_ruling(ruling)

    def board_corrected(self, board: Sequence[str]) -> None:
        self.board = list(board)  # the floor's pick of a burn card (TDA 39): the board as it is now

    def later_board_card(self, number: int, card: str) -> None:
        self.later_boards.setdefault(number, []).append(card)  # a later run's or the second board's

    def board_card(self, card: str, position: int, t: float) -> None:
        self.board.append(card)
        street = {1: 1, 4: 2, 5: 3}.get(position)
        if self.table.variant.stud:  # the community card, dealt for seventh street when the deck ran short
            street = STUD_STREETS.index("seventh")
        hand = self.engine
        if street is not None and hand is not None and hand.street_index < street:
            self._close_street(t)  # unless the dealer already collected the bets

    def fold(self, seat: int) -> None:
        hand = self.engine
        if hand is None or self.ended:
            return
        self._settle_all()
        if hand.status == "showdown":  # the betting is over: the dealer is gathering the losers' cards
            self._check_mucked_winner(seat)
        else:
            # on the river with nothing to call the table cannot tell a fold from a hand mucked after
            # unseen checks: the fold stands (TDA 54-5), a winning hand goes to the floor
            if hand.street == "river" and hand.to_call(seat) == 0:
                self._check_mucked_winner(seat)
            self._apply(self._act(Fold(seat)))

    # ---- the chips ---------------------------------------------------------------------------------------

    def moved(self) -> None:
        """A card or a chip moved: a betting that could not begin is tried again."""
        self.start_refused = False

    def chip_arrived(self, uid: str, value: int, what: str, seat: int | None, t: float) -> None:
        """A chip of the set arrived in a chip zone (``what``: its kind)."""
        self.antes.chip_arrived(uid, value, what)
        if what == "pot":
            self.settling.into_pot(uid, t)
        elif what == "bets" and seat is not None and self.log is not None and not self.ended:
            self.settling.moved(seat, t).arrived.append(uid)
        elif what == "stack" and seat is not None:  # (a seat's zones name it)
            self.settling.into_stack(seat, uid, value)

    def pot_leaving(self, t: float) -> None:
        """A chip is leaving the pot: the pot is being pushed to the winner, so it is counted as it was."""
        settling = self.settling
        if settling.pot_check_due and self.log is not None and t - settling.pot_changed_at >= settling.settle_s:
            self._check_pot()

    def chip_left(self, uid: str, what: str, seat: int | None, t: float) -> None:
        if what == "pot":
            self.settling.out_of_pot(t)
        elif what == "bets" and seat is not None and self.log is not None and not self.ended:
            self.settling.out_of_bets(uid, seat)

    def stacks_counted(self, seats: Sequence[int]) -> None:
        """The floor counted these stacks during the hand: the hand's result must not overwrite the count."""
        if self.log is not None and not self.ended:
            self.counted.update(seats)

    # ---- time --------------------------------------------------------------------------------------------

    def next_due(self) -> float:
        """The earliest time :meth:`tick` has something to do: the deal settled (see :meth:`deal_settled`), a push
        settled, the pot to count; -inf while chips that left a betting zone wait to be placed (the next tick
        does)."""
        if self.settling.departed:
            return -math.inf
        due = math.inf
        if self._may_start():
            due = self.last_card_at + DEAL_SETTLE_S
        return min(due, self.settling.next_due(self.log is not None))

    def deal_settled(self, now: float) -> bool:
        """The deal's last card is ``DEAL_SETTLE_S`` old and the betting has not begun: time to begin it."""
        return self._may_start() and now - self.last_card_at >= DEAL_SETTLE_S

    def _may_start(self) -> bool:
        """Cards were dealt, the betting has not begun and nothing since it was refused says it cannot; in stud the
        door cards named the bring-in."""
        return (self.log is None and bool(self.dealt) and not self.start_refused
                and (not self.table.variant.stud or 0 in self.openers))

    def tick(self, now: float) -> None:
        settling = self.settling
        if settling.departed:
            self._resolve_departures(now)
        for seat in settling.settled(now):
            self._settle(seat)
        if self.log is not None and settling.pot_settled(now):
            self._check_pot()

    # ---- the betting begins ------------------------------------------------------------------------------

    def would_start(self, betting_input: bool) -> bool:
        """Whether the deal is over, so that the betting begins (see ``ChipBetting.start_if_dealt``); in stud once
        third street's door cards have named the bring-in."""
        if self.table.variant.stud and 0 not in self.openers:
            return False
        return self.log is None and not self.ended and bool(self.dealt) and self._deal_complete(betting_input)

    @property
    def bring_in_seat(self) -> int | None:
        """Stud: the seat third street's door cards named to bring it in (None: not yet, or not stud)."""
        opener = self.openers.get(0)
        return opener[0] if opener is not None else None

    def _deal_complete(self, betting_input: bool) -> bool:
        # the first round is not over until the first seat gets its second card
        return self.dealt.first_round_over() and (betting_input or self.dealt.complete())

    def start_betting(self, opening: Opening, t: float) -> None:
        try:
            log = EngineLog(opening)
        except ValueError as exc:  # e.g. a seat dealt in with no chips: the floor must look
            self.events.ruling("betting_unread", None, f"seats {opening.seats}: {exc}", [], True)
            # Tried again when a card or a chip moves, not at every tick: nothing else can change the answer.
            self.start_refused = True
            return
        self.log = log
        hand = log.engine
        seats, bets, stakes, bomb = opening.seats, opening.bets, opening.stakes, opening.bomb_pot
        posters = seats if bomb is not None else (opening.sb, opening.bb)
        forced = [c for s in posters if s is not None for c in bets[s]] + opening.pot
        self.pushes = PushReader(self.table.setup.chips, self.table.rules.unplayable_chips,
                                 min(forced) if forced else None, stakes)
        if bomb is None:
            self.forced_due = ForcedBetsDue({s: hand.bets[s] for s in hand.order if opening.posted_forced_bet(s, hand)},
                                            {s: sum(bets[s]) for s in seats})
        self.known_stacks = opening.known
        setup = self.table.setup
        stud = (setup.bring_in, *setup.bet_limits) if hand.variant.stud and setup.bet_limits else None
        self.events.publish(BettingStarted(
            opening.button, tuple(hand.order), stakes.small_blind, stakes.big_blind, stakes.ante,
            stakes.big_blind_ante, opening.level, (bomb[0], bomb[1]) if bomb is not None else None,
            tuple((s, opening.stacks[s]) for s in seats) if opening.known else None, self.table.rules.name, stud))
        for action in hand.actions:
            self.events.action(action, hand)
        for count in posted_chip_counts(opening, hand):
            self.events.chip_count(*count)
        if bomb is not None:
            return
        if sum(opening.pot) < posted_antes(hand):  # the rest of the antes may come after the deal
            self.antes.due(posted_antes(hand), self.zones.get("pot", {}),
                           (uid for zone, chips in self.zones.items() if Zone.parse(zone).kind == "bets"
                            for uid in chips))
        order = hand.order
        if opening.bring_in_seat is not None:  # stud: third street's action begins with the bring-in
            i = order.index(opening.bring_in_seat)
            order = order[i:] + order[:i]
        for s in order:  # chips a non-forced seat pushed before the deal was over: its first action
            if bets[s] and not opening.posted_forced_bet(s, hand):
                self._apply(self._act(Push(s, tuple(bets[s]))), chips=bets[s], withdrawn=[])

    # ---- questions of the other parts --------------------------------------------------------------------

    def substantial_action(self) -> bool:
        return self.log is not None and self.log.engine.substantial_action()

    def round_open(self) -> bool:
        hand = self.engine
        if hand is None or self.ended or hand.status != "betting" or self.settling.motions:
            return False
        seat = hand.to_act()
        return seat is not None and hand.to_call(seat) > 0

    def street_action(self) -> bool:
        hand = self.engine
        if hand is None or self.ended or hand.status != "betting":
            return False
        return bool(self.settling.motions) or hand.street_acted()

    def bomb_pot_played(self) -> bool:
        """The betting of this hand was a bomb pot's or a flip's."""
        return self.log is not None and bool(self.log.engine.bomb_pot)

    def accepts_declarations(self) -> bool:
        return self.log is not None and not self.ended

    def turn(self) -> tuple[int | None, int]:
        """The seat to act, while the betting takes declarations, and what it must put in to call (None and 0 when
        no seat is to act)."""
        if not self.accepts_declarations():
            return None, 0
        hand = self._log.engine
        seat = hand.to_act()
        return (seat, hand.to_call(seat)) if seat is not None else (None, 0)

    # ---- pushes, declarations, rulings -------------------------------------------------------------------

    def _act(self, given: EngineInput) -> Ruling:
        return self._log.act(given)

    def _forced_split(self, seat: int, motion: Motion) -> tuple[int, list[int], list[int], list[int]]:
        """A settled motion's chips: what pays the seat's forced bet still due, the chips wholly in it, the rest of
        the push and the chips taken back (a motion that takes chips back pays nothing)."""
        values = self.table.setup.chips
        chips, withdrawn = [values[u] for u in motion.arrived], [values[u] for u in motion.left]
        if withdrawn or self.forced_due is None:
            return 0, [], chips, withdrawn
        return (*self.forced_due.split(seat, chips), withdrawn)

    def _settle(self, seat: int) -> None:
        motion = self.settling.take(seat)
        if motion is None or self.log is None:
            return
        paid, forced, chips, withdrawn = self._forced_split(seat, motion)
        if paid:  # the blind's chips, put in after the deal: its forced bet, not an action
            assert self.forced_due is not None
            self.forced_due.pay(seat, paid)
            self._pushes.forced_chips(forced)
        push = self._pushes.read(seat, chips, withdrawn, self.log.engine)
        if push is None:
            return
        if push.code:
            self.events.publish(BetRuling(
                push.code, seat, f"seat {seat}: {sum(push.chips)} plays, {push.returned} goes back to the player",
                (self.table.rules.cite("unplayable_chips"),), False, chips=tuple(push.pushed), withdrawn=(),
                stands=sum(push.chips), returned=push.returned))
        if not push.plays:
            return
        point = UndoPoint(len(self.log), seat, "push", list(motion.arrived), list(motion.left), forced_paid=paid)
        self._apply(self._act(Push(seat, tuple(push.chips), tuple(push.withdrawn))), chips=push.chips,
                    withdrawn=push.withdrawn, undo=point)

    def _settle_all(self, keep_undone: bool = False) -> None:
        motions = self.settling.motions
        for seat in self.settling.in_order():
            if not (keep_undone and motions[seat].undone):
                self._settle(seat)

    def _apply(self, ruling: Ruling, chips: list[int] | None = None, withdrawn: list[int] | None = None,
               undo: UndoPoint | None = None) -> None:
        """Publish what the engine ruled on an input: its actions (recorded in the input's undo point), and a
        ``bet_ruling`` when it took none, refused the input or needs the floor."""
        recording = self.undo.taken(ruling, undo)
        hand = self._log.engine
        for action in ruling.actions:
            seq = self.events.action(action, hand)
            if recording is not None:
                recording.published(seq, action)
        if not ruling.actions or not ruling.ok or ruling.needs_floor:
            self.events.engine_ruling(ruling, chips, withdrawn)

    def declare(self, seat: int, declaration: str, amount: int | Sequence[int] | None) -> None:
        """A verbal declaration entered at the console (the table cannot hear); the engine rules on it."""
        self._settle_all(keep_undone=True)
        kind = {"all-in": "all_in", "allin": "all_in"}.get(declaration, declaration)
        point = UndoPoint(len(self._log), seat, "declaration", declaration=kind)
        heard = amount if amount is None or isinstance(amount, int) else tuple(amount)
        self._apply(self._act(Declare(seat, kind, heard)), undo=point)

    def dead_hand(self, seat: int, rule: str) -> None:
        """A rule killed the seat's hand (the action clock ran out, the player was away): it is folded."""
        hand = self.engine
        if hand is None or self.ended or hand.status != "betting" or seat not in hand.live_seats:
            return
        self._settle_all()
        ruling = self._act(Fold(seat))
        if ruling.ok:
            self._apply(ruling)
            self.events.ruling("hand_dead", seat, f"seat {seat}'s hand is dead: folded", [rule] if rule else [], False)

    def passive_hand(self, seat: int, rule: str) -> None:
        """The player showed a hole card and the house makes the hand passive (the card controller's
        ``hole_card_exposed`` says so): the engine lets it check, call or fold only."""
        hand = self.engine
        if hand is None or self.ended or hand.status != "betting" or seat not in hand.live_seats:
            return
        self._act(Passive(seat, rule))

    def ruled_check(self, seat: int) -> None:
        """The clock ran out on a seat with nothing to call and the profile checks it (PP Dead hands 1f)."""
        hand = self.engine
        if hand is None or self.ended or hand.status != "betting" or hand.to_act() != seat:
            return
        self._settle_all()
        if hand.to_call(seat) == 0:
            self._apply(self._act(Check(seat)))

    # ---- undo --------------------------------------------------------------------------------------------

    def undo_refusal(self) -> Refusal | None:
        """Why the dealer's ``undo`` is refused now, or None. What it takes back is the latest betting input of this
        round: a push read from the chips (with the checks it implied), or a declaration entered at the console; a
        push still settling counts as read. A fold (the cards are in the muck), a forced bet or a closed round cannot
        be undone."""
        hand = self.engine
        if hand is None or self.ended:
            return Refusal("no betting is running: nothing to undo")
        if hand.status == "betting" and (self.undo.points or self._settling_is_undoable()):
            return None
        fixed = self.undo.fixed
        if fixed is not None and fixed.kind == "fold" and hand.status == "betting":
            return Refusal(f"the latest action is seat {fixed.seat}'s fold: its cards are in the muck and the hand is "
                           "dead; the floor rules on it")
        return Refusal("nothing to undo in this betting round (forced bets, folds and closed rounds are the floor's)")

    def _settling_is_undoable(self) -> bool:
        """Whether the chips still settling, read now, make an action an undo takes back (tried on a copy of the
        engine, in the order ``_settle_all`` reads them: nothing changes)."""
        motions = self.settling.motions
        if not motions:
            return False
        trial = self._log.replayed()
        for seat in self.settling.in_order():
            _paid, _forced, chips, withdrawn = self._forced_split(seat, motions[seat])
            push = self._pushes.read(seat, chips, withdrawn, trial)
            if push is None or not push.plays:
                continue
            if Push(seat, tuple(push.chips), tuple(push.withdrawn)).apply(trial).actions:
                return True
        return False

    def take_back(self, t: float, by: str) -> None:
        """The dealer's ``undo``, as :meth:`undo_refusal` allowed: a push still settling is read first (it is the
        latest action); the engine returns to its state before the latest input; the chips of an undone push are
        back in motion, so the push is read again once the player has put right what lies in the zone."""
        hand = self._log.engine
        self._settle_all()
        point = self.undo.pop()
        self._log.back_to(point.log_length)
        if point.what == "push" and point.seat is not None:
            if self.forced_due is not None:
                self.forced_due.pay(point.seat, -point.forced_paid)  # read again with the push's chips
            self.settling.back_in_motion(point.seat, point.arrived, point.left,
                                         self.zones.get(Zone("bets", point.seat).name, {}), t)
        rebuilt = self._log.engine
        self.events.publish(ActionUndone(point.seat, tuple(point.actions), point.declaration,
                                         hand.street if hand.status == "betting" else None, rebuilt.pot_total(),
                                         rebuilt.to_act(), by))

    # ---- streets -----------------------------------------------------------------------------------------

    def _infer_checks(self) -> None:
        hand = self._log.engine
        while hand.status == "betting" and (seat := hand.to_act()) is not None and hand.to_call(seat) == 0:
            ruling = self._act(Check(seat))
            if not ruling.ok:
                break
            self._apply(ruling)

    def _resolve_departures(self, t: float) -> None:
        """Chips that left a betting zone: moved into the pot (the dealer collects), or taken away."""
        departed, collected = self.settling.departures(t, self.zones.get("pot", {}), self._log.engine)
        if collected and self._log.engine.status == "betting":
            # chips going from the betting zones into the pot: the dealer is collecting, the round is over
            self._close_street(t, collected_chips=True)
            self.settling.collected(departed)

    def _close_street(self, t: float, collected_chips: bool = False) -> None:
        """A board card arrived, or the dealer moved bets into the pot: the betting round must be over."""
        hand = self.engine
        if hand is None or self.ended or hand.status != "betting":
            return
        self._settle_all()
        self._infer_checks()
        if hand.status == "betting" and not hand.round_complete():
            rule = "TDA 38"
            if collected_chips:
                code, message = "collected_before_betting_over", "bets went into the pot before the round was over"
            elif hand.variant.stud:  # a card dealt prematurely (TDA 39: the floor rules on it)
                code, message, rule = "card_before_betting_over", "the next street's first card arrived before the " \
                                                                  "round was over", "TDA 39"
            else:
                code, message = "board_before_betting_over", "a board card arrived before the round was over"
            self.events.ruling(code, hand.to_act(), message, [rule], True)
            return
        self._end_street(t)

    def _end_street(self, t: float) -> None:
        ruling = self._act(EndStreet())
        if not ruling.ok:
            self.events.engine_ruling(ruling)
            return
        self.settling.street_over([uid for zone, chips in self.zones.items() if Zone.parse(zone).kind == "bets"
                                   for uid in chips], t)
        self._forced_bets_unpaid()  # the pre-flop bets are collected: a blind or the antes still short are short
        self.undo.round_over()  # the round is over: its actions stand
        collection = ruling.collection
        assert collection is not None  # (a street that ended collected its bets)
        self.events.publish(PotsCollected(collection))
        hand = self._log.engine
        for action in ruling.actions:  # the next street has no betting (a bomb pot's or flip's): its ruled checks
            self.events.action(action, hand)
        if hand.variant.stud:
            self._open_stud_street()  # its cards may be out already (the dealer collected late)

    def _forced_bets_unpaid(self) -> None:
        """A forced bet whose chips never all came (``ForcedBetsDue``), and antes whose chips did not (``LateAntes``):
        a chip count, once."""
        if self.forced_due is not None:
            for seat, posted, seen in self.forced_due.unpaid():
                self.events.chip_count("forced_bet", seat, posted, seen, [])
        antes = self.antes.unpaid()
        if antes is not None:
            self.events.chip_count("antes", None, *antes, [])

    def _check_pot(self) -> None:
        self.settling.pot_counted()
        expected = sum(p.amount for p in self._log.engine.pots())
        seen = sum(self.zones.get("pot", {}).values())
        if seen != expected:
            self.events.chip_count("pot", None, expected, seen, [])

    # ---- runs --------------------------------------------------------------------------------------------

    def runs_refusal(self, pots: Sequence[int] | None) -> Refusal | None:
        """Why the players cannot agree to deal the rest of the board more than once for ``pots`` (indices, 0 the
        main pot; None: every pot), or None. CA Actions 8: "if a.) no more action is possible": the betting is over
        with players all-in and board cards still to come; "c.) there is at least € 500 in the pot" (the house's
        ``run_it_minimum_pot``, every chip in the middle counted)."""
        hand = self.engine
        if hand is None or self.ended:
            return Refusal("no hand is being played")
        able = [s for s in hand.live_seats if not hand.is_all_in(s)]  # players with chips left to bet
        over = hand.status == "showdown" or (hand.status == "betting" and hand.round_complete() and len(able) <= 1)
        if not over or len(hand.live_seats) < 2:
            return Refusal("players can still act: a hand is run twice only when no more action is possible "
                           "(CA Actions 8a)")
        if len(self.board) >= 5 or self.later_boards:
            return Refusal("the board is already dealt: the players agree before the rest of the board is dealt")
        # the pots once this street's bets are in: a side pot above each all-in level (at most)
        levels = {hand.seat_state(s)["committed"] for s in hand.live_seats if hand.is_all_in(s)}
        count = max(len(hand.pots()), len(levels) + (1 if len(levels) < len(hand.live_seats) else 0))
        if pots is not None and any(not 0 <= p < count for p in pots):
            return Refusal(f"the hand has {count} pot(s): 0 is the main pot, 1 the first side pot")
        minimum, pot = self.table.rules.run_it_minimum_pot, hand.pot_total()
        if pot < minimum:
            return Refusal(f"the pot is {pot}: the house runs a board twice only with at least {minimum} in the pot "
                           f"({self.table.rules.cite('run_it_minimum_pot')})")
        return None

    def agree_runs(self, runs: int, pots: Sequence[int] | None) -> None:
        self.runs = (runs, tuple(sorted(set(pots))) if pots is not None else None)
        self.runs_from = len(self.board)

    # ---- the end -----------------------------------------------------------------------------------------

    def _check_mucked_winner(self, seat: int) -> None:
        """At the showdown, a hand that would win (some of) the pot reaching the muck: cards speak, and a clearly
        winning tabled hand must not be mucked by the dealer (AC 14; CA Actions 9). The award still counts it."""
        hand = self._log.engine
        board = [c for c in self.board if c]
        live = [s for s in hand.live_seats if self.hole.get(s)]
        if len(board) < 5 or seat not in live or len(live) < 2:
            return
        try:
            ranks = {s: hand_rank(self.table.variant, [c for c in self.hole[s] if c], board) for s in live}
        except ValueError:
            return
        if ranks[seat] == min(ranks.values()):
            self.mucked_winner = seat
            self.events.publish(mucked_winner.found(seat))

    def mucked_winner_ruled(self, restore: bool, t: float | None) -> dict[int, int] | None:
        """The floor's answer to ``winning_hand_mucked`` (see ``ChipBetting.mucked_winner_ruled``); the stacks
        the award leaves, if it was waiting for the answer (see :meth:`finish`)."""
        seat = self.mucked_winner
        if seat is None or self.log is None:
            return None  # the ruling lapsed with its hand
        self.mucked_winner = None
        if restore:
            self.log.without_fold(seat)
            self.events.publish(mucked_winner.restored(seat))
        if self.waiting_award is None:
            return None
        ended, self.waiting_award = self.waiting_award, None
        return self._close_and_award(ended, self.last_card_at if t is None else t)

    def finish(self, ended: HandEnded, t: float) -> dict[int, int] | None:
        """The card controller ended the hand: the remaining streets are closed and the pots awarded, unless the
        award waits for the floor's answer on a mucked winning hand. The stacks the award leaves to carry over
        (None: none known)."""
        if self.log is None or self.ended:
            return None
        self.ended = True
        self._settle_all()
        if self.mucked_winner is not None:  # the pot waits for the floor's answer on the mucked winning hand
            self.waiting_award = ended
            return None
        return self._close_and_award(ended, t)

    def _close_and_award(self, ended: HandEnded, t: float) -> dict[int, int] | None:
        hand = self._log.engine
        if hand.status == "betting":
            self._infer_checks()
        while hand.status == "betting" and hand.round_complete():
            before = hand.street_index
            self._end_street(t)
            if hand.street_index == before and hand.status == "betting":
                break
        self.settling.pot_counted()  # the cards are gathered: the pot has gone to the winner
        self._forced_bets_unpaid()
        if hand.status == "betting":
            self.events.ruling("hand_ended_in_betting", hand.to_act(),
                               "the cards were gathered before the betting was over: no award read", [], True)
            return None
        return award_hand(self, hand, ended)

    def snapshot(self) -> dict[str, Any] | None:
        hand = self.engine
        if hand is None:
            return None
        return {
            "street": hand.street,
            "to_act": hand.to_act() if not self.ended else None,
            "current_bet": hand.current_bet if hand.status == "betting" else 0,
            "pot": hand.pot_total(),
            "pots": [{"amount": p.amount, "eligible": list(p.eligible)} for p in hand.pots()],
            "bets": {str(s): b for s, b in hand.bets.items() if b},
            "stacks": {str(s): v for s, v in hand.stacks.items()} if self.known_stacks else None,
            "folded": [s for s in hand.order if s not in hand.live_seats],
            "all_in": [s for s in hand.live_seats if hand.is_all_in(s)],
        }
