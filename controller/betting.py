"""One hand's betting, read from the chips players push into their betting zones — as a floor person rules it.

A pure, deterministic state machine (no threads, sockets, sleeps or clock), independent of RFID: the inputs are
what a table can observe, the outputs are poker actions, each with the rule that shaped it.

Inputs
* ``push(seat, chips, withdrawn=())`` — the chips (denominations) a player put into the betting zone in one motion;
  ``withdrawn`` are chips of an earlier bet taken back in the same motion (TDA 46).
* ``declare(seat, kind, amount=None)`` — a verbal declaration entered at the dealer console: ``check``, ``call``,
  ``fold``, ``bet``, ``raise`` (``amount`` is always the total *to*, TDA 43-2; a tuple of amounts means the words
  were unclear, TDA 54 / AC 43), ``all_in``, ``pot`` (pot limit), ``complete`` (limit).
* ``fold(seat)`` — the seat's cards reached the muck. ``check(seat)`` — the action passed the seat without chips.
* ``end_street()`` — the dealer collects the bets; the betting round must be complete.
* ``resolve_incomplete_call(seat, complete)`` — the floor's (or the player's) choice where a rule leaves one.

Checks are never seen by an antenna. With ``infer_checks=True`` (default) a seat that pushes chips while the seats
before it in turn faced no bet is taken to act in turn, and those seats are recorded as having checked (the dealer
saw the taps). Declarations and folds never infer checks. With ``infer_checks=False`` such a push is out of turn.

Every input returns a ``Ruling``; an invalid input returns ``ok=False`` and leaves the state untouched — no input
raises. Queries in the manner of pokerkit: ``to_act()``, ``to_call(seat)``, ``min_raise_to()``, ``max_bet_to()``,
``legal(seat)``, ``can_check/can_call/can_raise/can_fold``.

Amounts: ``bet`` is what the ruling says a seat has bet this street; the chips physically in its zone are
``bet - owed + change`` (``owed``: chips a ruling requires that are not in yet; ``change``: chips beyond the ruling,
to go back to the player).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Sequence

from controller import pots as potlib
from controller.pots import Collection, Pot
from controller.stud import STREETS as STUD_STREETS
from controller.rules import (
    INCOMPLETE_CALL_COMPLETE_OR_FORFEIT,
    INCOMPLETE_CALL_MUST_COMPLETE,
    LIMIT_UNCAPPED_EVENT_HEADS_UP,
    MULTI_CHIP_FIFTY_PERCENT_ONLY,
    MULTI_CHIP_REMOVE_SMALLEST,
    MULTI_CHIP_SAME_DENOMINATION,
    OOT_DECLARATION_DISMISSED,
    SHOWN_CARD_PASSIVE_NEXT_ACTION,
    SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP,
    TDA,
    RuleProfile,
    is_substantial,
    resolve_unclear_amount,
)

STREETS = ("preflop", "flop", "turn", "river")
NO_LIMIT, POT_LIMIT, FIXED_LIMIT = "no_limit", "pot_limit", "fixed_limit"
CHIP_ACTIONS = {"bet", "call", "raise", "all_in"}


@dataclass(frozen=True)
class Variant:
    """A game the engine can bet. The engine does not care about cards; ``hole_cards`` is for showdown and PHH."""

    code: str
    structure: str
    hole_cards: int
    omaha: bool
    phh_code: str | None
    hi_lo: bool = False  # each pot split between the best high hand and the best eight-or-better low
    streets: tuple[str, ...] = STREETS
    stud: str = ""  # a stud game ("stud", "stud8", "razz": controller.stud): antes, a bring-in, no board, no blinds


NLHE = Variant("NLHE", NO_LIMIT, 2, False, "NT")
PLHE = Variant("PLHE", POT_LIMIT, 2, False, None)
PLO = Variant("PLO", POT_LIMIT, 4, True, "PO")
PLO5 = Variant("PLO5", POT_LIMIT, 5, True, None)
PLO6 = Variant("PLO6", POT_LIMIT, 6, True, None)
PLO7 = Variant("PLO7", POT_LIMIT, 7, True, None)  # 7-card Omaha (CA GR 15.1-15.2: at most five players)
FLHE = Variant("FLHE", FIXED_LIMIT, 2, False, "FT")  # split limit: small bet pre-flop/flop, big bet turn/river
# Hi-lo split, eight or better (controller/showdown.py). pokerkit has a PHH code for fixed-limit Omaha hi-lo only.
PLO8 = Variant("PLO8", POT_LIMIT, 4, True, None, hi_lo=True)
FLO8 = Variant("FLO8", FIXED_LIMIT, 4, True, "FO/8", hi_lo=True)
FLHE8 = Variant("FLHE8", FIXED_LIMIT, 2, False, None, hi_lo=True)  # hold'em hi-lo, where a house deals it
# Stud games: fixed limit, antes and a bring-in; the small bet on third and fourth street, the big bet from fifth.
STUD = Variant("STUD", FIXED_LIMIT, 7, False, "F7S", streets=STUD_STREETS, stud="stud")
STUD8 = Variant("STUD8", FIXED_LIMIT, 7, False, "F7S/8", hi_lo=True, streets=STUD_STREETS, stud="stud8")
RAZZ = Variant("RAZZ", FIXED_LIMIT, 7, False, "FR", streets=STUD_STREETS, stud="razz")
VARIANTS = {v.code: v for v in (NLHE, PLHE, PLO, PLO5, PLO6, PLO7, FLHE, PLO8, FLO8, FLHE8, STUD, STUD8, RAZZ)}



@dataclass(frozen=True)
class Straddle:
    """A voluntary blind posted before the cards (CA Actions 1).

    ``live``: the seat after the big blind (then the seat after the previous straddle), acts last pre-flop.
    ``button``: posted by the button; the action starts left of the button. ``mississippi``: any ``seat``; the action
    starts left of it. The live straddle has priority (CA Actions 1): give it first.
    """

    amount: int
    kind: str = "live"
    seat: int | None = None


# An action and a ruling are named tuples: as immutable as a frozen dataclass and a third of the cost to make (a frozen
# dataclass sets each field through object.__setattr__), and every input makes a ruling and most an action.


class Action(NamedTuple):
    """One poker action as the engine ruled it.

    ``to_amount`` is the seat's total bet this street after the action, ``added`` the chips it added, ``returned``
    the chips going back (change, the excess of a call), ``owed`` the chips the player still has to put in.
    ``base`` is what an ``all_in`` amounts to (``call``, ``bet`` or ``raise``); for other kinds it equals ``kind``.
    ``full`` tells whether a bet or raise was a full one (it reopens the betting, TDA 47).
    """

    seat: int
    kind: str
    street: str
    to_amount: int
    added: int
    returned: int = 0
    owed: int = 0
    all_in: bool = False
    base: str = ""
    full: bool = False
    rules: tuple[str, ...] = ()
    note: str = ""


class Ruling(NamedTuple):
    """The answer to one input. ``ok=False``: nothing changed. ``needs_floor``: a rule leaves a choice open.

    The betting engine is pure and knows no outbox: it returns its rulings, and the chip layer
    (``controller.hand_reading``, through ``controller.chip_events``) turns them into events."""

    ok: bool
    code: str
    message: str
    seat: int | None = None
    actions: tuple[Action, ...] = ()
    rules: tuple[str, ...] = ()
    needs_floor: bool = False
    collection: Collection | None = None


@dataclass(frozen=True)
class Legal:
    """What a seat may do now (pokerkit-style ``can_…`` answers in one object)."""

    seat: int
    in_turn: bool
    to_call: int
    can_fold: bool
    can_check: bool
    can_call: bool
    can_raise: bool
    min_to: int | None
    max_to: int | None
    reason: str = ""


@dataclass(frozen=True)
class Declaration:
    kind: str
    amount: int | None = None


REOPENING_RULE = "TDA 47"  # an action short of a full raise does not reopen the betting to who acted before it


@dataclass(frozen=True, slots=True)
class RaiseBlocker:
    """Why a seat may not bet or raise now, for people (``reason``), and the rule that forbids it where a rule does
    (``rule``: '' where the state of the hand alone does, such as a stack that covers no more than a call)."""

    reason: str
    rule: str = ""


@dataclass
class _Held:
    """An out-of-turn action waiting for the action to reach its seat (TDA 53)."""

    declaration: Declaration | None
    chips: tuple[int, ...]
    level: int  # the bet the seat faced when it acted out of turn
    check: bool = False


@dataclass
class _Seat:
    seat: int
    stack: int  # chips behind, as ruled
    bet: int = 0  # this street's bet, as ruled
    committed: int = 0  # everything this seat put into the pot this hand (antes, collected bets, this bet)
    folded: bool = False
    acted_level: int | None = None  # the bet level after this seat's last voluntary action this street
    owed: int = 0
    change: int = 0
    zone: list[int] = field(default_factory=list)  # chips believed to be in the betting zone
    declared: Declaration | None = None  # an in-turn declaration waiting for chips
    held: _Held | None = None
    no_raise: bool = False  # may call or fold but not raise this street (TDA 54-5, PP Betting 10)
    passive: str = ""  # showed a hole card: check, call or fold only, for the "hand" (CA Actions 10) or its
    # "next_action" (AC 50)
    must_not_fold: bool = False  # withdrew chips facing a raise (TDA 46-2)
    pending_incomplete: tuple[int, tuple[int, ...]] | None = None  # (chips value, chips) awaiting a choice
    withdrawn_pending: list[int] = field(default_factory=list)  # chips taken back this turn, no new chips yet


_VALID_DECLARATIONS = {"check", "call", "fold", "bet", "raise", "all_in", "pot", "complete", "bring_in"}


class BettingHand:
    """One hand's betting. See the module docstring for inputs, queries and the chip ledger."""

    def __init__(
        self,
        variant: Variant | str,
        seats: Sequence[int],
        button: int,
        stacks: Mapping[int, int],
        blinds: tuple[int, int],
        *,
        ante: int = 0,
        big_blind_ante: int = 0,
        straddles: Sequence[Straddle] = (),
        rules: RuleProfile = TDA,
        bets: tuple[int, int] | None = None,
        chip_values: Sequence[int] = (),
        forced_bet_chips: Mapping[int, Sequence[int]] | None = None,
        infer_checks: bool = True,
        event_heads_up: bool | None = None,
        no_small_blind: bool = False,
        bomb_pot: int = 0,
        flip: bool = False,
        bring_in: int = 0,
        bring_in_seat: int | None = None,
    ):
        """``seats``: the seats in play, clockwise; seat numbers grow clockwise, so a dead ``button`` (not in
        ``seats``) still places the blinds. ``bets``: (small bet, big bet) for fixed limit, default (BB, 2×BB).
        ``chip_values``: denominations in play (the smallest one is the unit pots split to, TDA 20).
        ``forced_bet_chips``: the chips each forced bet was made of, where known (TDA 46 reads them).
        ``no_small_blind``: the small blind falls on an empty seat (last hand's big blind busted: DE 9; AC 27 "Ak
        pripadá small blind na prázdne miesto, small blind v danej hre nebude"): the first seat left of the button
        posts the big blind and nobody the small blind (three players or more; heads-up the button posts it).
        ``bomb_pot``: the amount every player agreed to put in before the deal (CA GR 14.3: "Each player bets an
        amount equal to the limit before the game and the croupier/croupière gives the "Flop" without another round
        of betting"): posted by each seat like an ante, no blinds, and the pre-flop round has no betting (every seat
        is ruled to check, as pokerkit plays a hand without pre-flop betting). ``flip`` with it (CA GR 14.2: "the
        croupier deals the "board" without another round of betting and there is an immediate "showdown""): no
        street has betting. The blinds still set the limit (the smallest bet) of the streets after the flop.
        Stud games (``variant.stud``): ``blinds`` are (0, 0), ``ante`` is posted by every seat, ``bets`` are the
        small and the big bet, ``bring_in`` the forced bet of third street (less than the small bet). Each street
        opens with ``start_street(first)``, once its cards show who acts first (``controller.stud``);
        ``bring_in_seat`` opens third street at once.
        Invalid set-ups raise ``ValueError`` here (nothing exists yet to corrupt).
        """
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        if len(seats) < 2 or len(set(seats)) != len(seats):
            raise ValueError("a hand needs at least two distinct seats")
        if any(stacks.get(s, 0) <= 0 for s in seats):
            raise ValueError("every seat in play needs a positive stack")
        small_blind, big_blind = blinds
        if self.variant.stud:
            if small_blind or big_blind or big_blind_ante or straddles or bomb_pot or bets is None:
                raise ValueError(f"{self.variant.code} has antes, a bring-in and small and big bets: no blinds")
            if not 0 < bring_in < bets[0] or bets[0] <= 0 or bets[1] < bets[0] or ante < 0:
                raise ValueError("a stud game needs 0 < bring-in < small bet <= big bet and an ante not negative")
        elif bring_in or bring_in_seat is not None:
            raise ValueError(f"{self.variant.code} has no bring-in")
        elif big_blind <= 0 or small_blind < 0 or ante < 0 or big_blind_ante < 0:
            raise ValueError("blinds must be positive and antes not negative")
        if bomb_pot < 0 or (flip and not bomb_pot) or (bomb_pot and (ante or big_blind_ante or straddles)):
            raise ValueError("a bomb pot or flip needs a positive agreed amount, and no antes or straddles beside it")
        self.bomb_pot, self.flip = bomb_pot, flip
        # the streets without betting: a bomb pot's pre-flop, every street of a flip
        self._no_betting = set(range(len(STREETS))) if flip else ({0} if bomb_pot else set())
        self._no_betting_rule = "CA GR 14.2" if flip else "CA GR 14.3"
        if bomb_pot:
            ante = bomb_pot  # the agreed amount goes in like an ante (PHH and pokerkit: antes, no blinds)
        self.rules = rules
        self.small_blind, self.big_blind = small_blind, big_blind
        self.ante, self.big_blind_ante = ante, big_blind_ante
        self.limit_bets = bets or (big_blind, 2 * big_blind)
        self.chip_values = tuple(sorted(chip_values))
        self.infer_checks = infer_checks
        self.button = button
        self.order = self.order_from_button(list(seats), button)  # PHH order: left of the button first
        self.heads_up_start = len(self.order) == 2
        self.event_heads_up = self.heads_up_start if event_heads_up is None else event_heads_up
        self._s: dict[int, _Seat] = {s: _Seat(s, int(stacks[s])) for s in self.order}
        self._top_bet = 0  # the largest bet of the street, kept by _bets_changed (asked after every input)
        self.actions: list[Action] = []
        self.collections: list[Collection] = []
        self.street_index = 0
        self.status = "betting"  # betting → showdown | complete
        self.dead_money = 0  # big-blind ante: belongs to the main pot
        self._antes_posted: dict[int, int] = {}
        self._pots: tuple[Pot, ...] = ()
        self.last_aggressor: dict[int, int | None] = {}
        self._street_had_round: dict[int, bool] = {}
        self._voluntary_actions: list[Action] = []
        self._oot_folds: list[Action] = []  # folds out of turn (binding, but not action in turn: TDA 36)
        self._oot_since_turn: list[tuple[int, bool]] = []  # actions out of turn since the turn last moved (TDA 53-2)
        self._last_actor: int | None = None
        self._to_act: int | None = None  # set by the forced bets, then by every action
        self.sb_seat: int | None = None  # the blinds' seats (None: no such blind, as in a bomb pot)
        self.bb_seat: int | None = None
        self._capped = False
        self._uncapped = False
        self.no_small_blind = no_small_blind and not self.heads_up_start
        self.bring_in = bring_in
        self.openers: dict[int, int] = {}  # stud: the seat each street opened with (start_street)
        self._awaiting_opener = False  # stud: the street's cards are not dealt yet, who acts first is not known
        self._open_pair = False  # stud: fourth street where an open pair allows the big bet
        self._big_bet_made = False  # ... and a big bet was made: the raises are big bets
        if self.variant.stud:
            self._post_antes_for_stud(bring_in_seat)
            return
        self._post_forced_bets(straddles, forced_bet_chips or {})

    # ---- set-up -------------------------------------------------------------------------------------

    @staticmethod
    def order_from_button(seats: list[int], button: int) -> list[int]:
        """The seats in the order they are dealt and act after the flop: left of the button first."""
        ordered = sorted(seats)
        after = [s for s in ordered if s > button]
        before = [s for s in ordered if s <= button]
        clockwise = after + before
        if [s for s in seats] != sorted(seats):
            # the caller gave an explicit clockwise order that does not follow seat numbers: honour it
            if button in seats:
                i = seats.index(button)
                return seats[i + 1 :] + seats[: i + 1]
            return seats
        return clockwise

    def _post_antes_for_stud(self, bring_in_seat: int | None) -> None:
        """Stud: every seat antes; the bring-in is the first action of third street, read from its chips."""
        for s in self.order:
            if self.ante:
                self._post(s, "ante", self.ante, ("CA Stakes 1",))
        self.forced_posters: list[int] = []
        self.nominal_bet, self.full_level, self.raise_count = 0, 0, 0
        self.min_increment = self.limit_bets[0]
        self._awaiting_opener = True
        if bring_in_seat is not None:
            ruling = self.start_street(bring_in_seat)
            if not ruling.ok:
                raise ValueError(ruling.message)

    def start_street(self, first: int, *, open_pair: bool = False) -> Ruling:
        """Stud: the street's cards are out and ``first`` acts first: on third street the bring-in seat
        (``controller.stud.bring_in_seat``), later the best hand showing (``controller.stud.first_to_act``; all-in
        seats count, the turn then passes to the next seat). ``open_pair``: fourth street may be bet at the big bet
        (``controller.stud.big_bet_allowed_on_fourth``; CA Actions 3c)."""
        if not self.variant.stud:
            return self._reject("not_stud", f"{self.variant.code} opens its streets by the button", None)
        if self.status != "betting" or not self._awaiting_opener:
            return self._reject("street_open", f"{self.street} is already open", None)
        if first not in self._s or self._s[first].folded:
            return self._reject("unknown_seat", f"seat {first} is not live in the hand", first)
        if open_pair and self.street_index != 1:
            return self._reject("not_fourth_street", "an open pair allows the big bet on fourth street only", first)
        self._awaiting_opener = False
        self._open_pair = open_pair
        self.openers[self.street_index] = first
        self._last_actor = None
        self._oot_since_turn = []
        self._to_act = self._find_next(self._before(first))
        self._street_had_round[self.street_index] = self._to_act is not None
        self.last_aggressor[self.street_index] = None
        what = "brings it in" if self.street_index == 0 else "acts first"
        rules = (self.rules.cite("open_pair_big_bet"),) if open_pair else ()
        return self._ok("street_opened", f"{self.street}: seat {first} {what}"
                        + ("; an open pair: the big bet may be made" if open_pair else ""), first, rules=rules)

    def _bring_in_turn(self, s: _Seat) -> bool:
        """Stud, third street, nobody has brought it in or completed: this seat must do one or the other."""
        return bool(self.variant.stud) and self.street_index == 0 and self._top_bet == 0 and s.seat == self._to_act

    def _apply_bring_in(self, s: _Seat, zone_value: int, rules: tuple[str, ...], note: str) -> Ruling:
        """The forced bet of third street: not a full bet (the completion is), not counted as action (PP
        Misdeals 2: "two players after the forced bet")."""
        target = min(self.bring_in, s.bet + s.stack)
        added = target - s.bet
        s.stack -= added
        s.committed += added
        s.bet = target
        self._bets_changed(raised=s)
        s.change, s.owed = max(0, zone_value - target), max(0, target - zone_value)
        s.acted_level = 0  # the completion reopens the betting for it, whatever the bring-in's size
        action = Action(s.seat, "bring_in", self.street, target, added, s.change, s.owed, s.stack == 0, "bring_in",
                        False, rules, note)
        self.actions.append(action)
        return self._after_action(action)

    def _post_forced_bets(self, straddles: Sequence[Straddle], forced_chips: Mapping[int, Sequence[int]]) -> None:
        order = self.order
        sb_seat: int | None
        if self.heads_up_start:
            sb_seat, bb_seat = order[1], order[0]  # heads-up: the button posts the small blind (DE 13; AC 29)
        elif self.no_small_blind:
            sb_seat, bb_seat = None, order[0]
        else:
            sb_seat, bb_seat = order[0], order[1]
        self.sb_seat, self.bb_seat = sb_seat, bb_seat
        if self.bomb_pot:  # everyone's agreed amount, and no blinds
            for s in order:
                self._post(s, "ante", self.bomb_pot, (self._no_betting_rule,),
                           note=f"{'flip' if self.flip else 'bomb pot'} {self.bomb_pot}")
            self.sb_seat = self.bb_seat = None
            self.forced_posters = []
            self.nominal_bet, self.min_increment, self.full_level = 0, self.big_blind, 0  # nothing to call
            self.raise_count = 0
            if self.variant.structure == FIXED_LIMIT:
                self.min_increment = self.limit_bets[0]
            self._street_start(after=order[-1])
            return
        if self.ante:
            for s in order:
                self._post(s, "ante", self.ante, ("CA Stakes 1",))
        if sb_seat is not None:
            self._post(sb_seat, "post_sb", self.small_blind, ("DE 13", "AC 29") if self.heads_up_start else ())
        self._post(bb_seat, "post_bb", self.big_blind, ("DE 9", "AC 27") if self.no_small_blind else ())
        if self.big_blind_ante:
            # the big blind takes priority over the ante when the stack is short (TDA BB-ante practice)
            self._post(bb_seat, "ante", self.big_blind_ante, ("big-blind ante",), dead=True)
        self.nominal_bet = self.big_blind  # a short all-in blind still has to be called in full (TDA 54-2)
        last_forced = bb_seat
        self.forced_posters = [seat for seat in (sb_seat, bb_seat) if seat is not None]
        previous = bb_seat
        for straddle in straddles:
            if self.heads_up_start:
                raise ValueError("no straddles heads-up")
            if straddle.kind == "live":
                seat = self._next_seat(previous)
            elif straddle.kind == "button":
                seat = order[-1]
            elif straddle.kind == "mississippi":
                if straddle.seat not in self._s:
                    raise ValueError("a Mississippi straddle needs the seat that posts it")
                seat = straddle.seat
            else:
                raise ValueError(f"unknown straddle kind {straddle.kind!r}")
            if straddle.seat is not None and straddle.seat != seat:
                raise ValueError(f"the {straddle.kind} straddle is posted by seat {seat}, not {straddle.seat}")
            if straddle.amount <= self.nominal_bet:
                raise ValueError("a straddle must be larger than the blind before it")
            self._post(seat, "straddle", straddle.amount, ("CA Actions 1",))
            self.nominal_bet = straddle.amount
            last_forced = seat
            previous = seat
            self.forced_posters.append(seat)
        for seat, chips in forced_chips.items():
            if seat in self._s:
                poster = self._s[seat]
                unseen = poster.bet - sum(chips)  # the rest of a blind put in after the deal stands in for its chips
                poster.zone = list(chips) + ([unseen] if unseen > 0 else [])
                poster.change = max(0, -unseen)
        self.min_increment = self.nominal_bet  # the largest blind or straddle is the first full bet (TDA 43)
        self.full_level = self.nominal_bet
        self.raise_count = 1 if self.variant.structure == FIXED_LIMIT else 0
        if self.variant.structure == FIXED_LIMIT:
            self.raise_count += len(straddles)
            self.min_increment = self.limit_bets[0]
        self._street_start(after=last_forced)

    def _post(self, seat: int, kind: str, amount: int, rules: tuple[str, ...], dead: bool = False,
              note: str = "") -> None:
        s = self._s[seat]
        posted = min(amount, s.stack)
        s.stack -= posted
        s.committed += posted
        all_in = s.stack == 0
        note = note or f"{kind.replace('_', ' ')} {posted}"
        if posted < amount:
            note += f" (short of {amount}: all-in)"
            rules = rules + ("DE 9",)
        if kind == "ante":
            if dead:
                self.dead_money += posted
                s.committed -= posted  # dead money is nobody's contribution to a side pot level
            self._antes_posted[seat] = self._antes_posted.get(seat, 0) + posted
        else:
            s.bet += posted
            self._bets_changed(raised=s)
            s.zone = [posted] if posted else []
        self.actions.append(
            Action(seat, kind, self.street, s.bet, posted, all_in=all_in, base=kind, rules=rules, note=note)
        )

    def _next_seat(self, seat: int) -> int:
        i = self.order.index(seat)
        return self.order[(i + 1) % len(self.order)]

    # ---- queries ------------------------------------------------------------------------------------

    @property
    def street(self) -> str:
        streets = self.variant.streets
        return streets[self.street_index] if self.street_index < len(streets) else self.status

    @property
    def current_bet(self) -> int:
        if self.street_index == 0:
            return max(self._top_bet, self.nominal_bet)
        return self._top_bet

    def _bets_changed(self, raised: _Seat | None = None) -> None:
        """A seat's bet changed: the street's largest bet is taken anew (every change of ``_Seat.bet`` calls this).
        ``raised``: the one seat whose bet went up, against which the largest bet is all there is to compare."""
        if raised is not None:
            self._top_bet = max(self._top_bet, raised.bet)
        else:
            self._top_bet = max([s.bet for s in self._s.values()], default=0)

    def seat_state(self, seat: int) -> dict:
        s = self._s[seat]
        return {
            "seat": seat, "stack": s.stack, "bet": s.bet, "committed": s.committed, "folded": s.folded,
            "all_in": self._all_in(s), "owed": s.owed, "change": s.change, "zone": list(s.zone),
        }

    @property
    def stacks(self) -> dict[int, int]:
        return {n: s.stack for n, s in self._s.items()}

    @property
    def bets(self) -> dict[int, int]:
        return {n: s.bet for n, s in self._s.items()}

    @property
    def live_seats(self) -> list[int]:
        return [n for n in self.order if not self._s[n].folded]

    @property
    def last_betting_round(self) -> int | None:
        """The last street (0 = preflop) on which anyone could still bet; None if there was none."""
        return max((i for i, had in self._street_had_round.items() if had), default=None)

    def is_all_in(self, seat: int) -> bool:
        return self._all_in(self._s[seat])

    @staticmethod
    def _all_in(s: _Seat) -> bool:
        return not s.folded and s.stack == 0

    def pot_total(self) -> int:
        """Everything in the middle: collected pots, antes and every bet on the table (TDA 54 footnote)."""
        return sum(p.amount for p in self._pots) + self._uncollected_antes() + sum(s.bet for s in self._s.values())

    def _uncollected_antes(self) -> int:
        return sum(self._antes_posted.values()) if self.street_index == 0 and not self.collections else 0

    def pots(self) -> tuple[Pot, ...]:
        """The pots as collected so far (bets of the current street are not in them yet)."""
        return self._pots

    def to_act(self) -> int | None:
        """The seat whose turn it is, or ``None`` when the betting round is complete (or, in stud, not open)."""
        return self._to_act if self.status == "betting" and not self._awaiting_opener else None

    @property
    def awaiting_opener(self) -> bool:
        """Stud: the street waits for ``start_street`` (its cards show who acts first)."""
        return self._awaiting_opener

    def to_call(self, seat: int) -> int:
        s = self._s[seat]
        if s.folded or self.status != "betting":
            return 0
        return max(0, min(self.current_bet - s.bet, s.stack))

    def min_raise_to(self, seat: int | None = None) -> int | None:
        """The smallest total a bet or raise by ``seat`` (default: the seat to act) may have; ``None``: no raise."""
        legal = self.legal(seat if seat is not None else self._to_act)
        return legal.min_to if legal and legal.can_raise else None

    def max_bet_to(self, seat: int | None = None) -> int | None:
        legal = self.legal(seat if seat is not None else self._to_act)
        return legal.max_to if legal and legal.can_raise else None

    def can_fold(self, seat: int) -> bool:
        return bool((legal := self.legal(seat)) and legal.can_fold)

    def can_check(self, seat: int) -> bool:
        return bool((legal := self.legal(seat)) and legal.can_check)

    def can_call(self, seat: int) -> bool:
        return bool((legal := self.legal(seat)) and legal.can_call)

    def can_raise(self, seat: int) -> bool:
        return bool((legal := self.legal(seat)) and legal.can_raise)

    def round_complete(self) -> bool:
        return (self.status == "betting" and self._to_act is None and not self._awaiting_opener
                and not self._blockers())

    def legal(self, seat: int | None) -> Legal | None:
        """What ``seat`` may do if it were its turn now (``in_turn`` says whether it is)."""
        if seat is None or seat not in self._s or self.status != "betting":
            return None
        s = self._s[seat]
        if s.folded or s.stack == 0:
            return Legal(seat, False, 0, False, False, False, False, None, None, "folded or all-in")
        if self._awaiting_opener:
            return Legal(seat, False, 0, True, False, False, False, None, None, "the street is not open yet")
        if self._bring_in_turn(s):  # bring it in ("call") or complete; no check, no fold (pokerkit)
            complete = min(self.limit_bets[0], s.bet + s.stack)
            return Legal(seat, True, min(self.bring_in, s.stack), False, False, True, True, complete, complete)
        call = self.to_call(seat)
        blocker = self._raise_blocker(s)
        reason = blocker.reason if blocker is not None else ""
        min_to, max_to = self._raise_bounds(s)
        return Legal(
            seat=seat,
            in_turn=seat == self._to_act,
            to_call=call,
            can_fold=True,
            can_check=call == 0,
            can_call=call > 0,
            can_raise=reason == "",
            min_to=min_to if reason == "" else None,
            max_to=max_to if reason == "" else None,
            reason=reason,
        )

    def _raise_blocker(self, s: _Seat) -> RaiseBlocker | None:
        """Why ``s`` may not bet or raise now (None if it may)."""
        current = self.current_bet
        if s.stack <= current - s.bet:
            return RaiseBlocker("the stack does not cover more than a call")
        if not any(o.seat != s.seat and not o.folded and o.stack + o.bet > current for o in self._s.values()):
            return RaiseBlocker("no opponent has chips to call a raise")
        if s.no_raise or s.passive:
            return RaiseBlocker("this seat may only call or fold this street" if s.no_raise else
                                "this seat showed a hole card: its hand is passive")
        if s.acted_level is not None and not self._reopened(s):
            return RaiseBlocker(f"the betting was not reopened for this seat ({REOPENING_RULE})", REOPENING_RULE)
        if self.variant.structure == FIXED_LIMIT and self._cap_reached():
            return RaiseBlocker("the raises are capped", "CA Actions 3")
        return None

    def _reopened(self, s: _Seat) -> bool:
        faced = self.current_bet - (s.acted_level or 0)
        if self.variant.structure == FIXED_LIMIT:
            return 2 * faced >= self._limit_bet()  # limit: half a bet reopens (TDA 47-2; PP Betting 5)
        return faced >= self.min_increment  # several short all-ins reopen once they add up (TDA 47-1)

    def _limit_bet(self) -> int:
        return self.limit_bets[0] if self.street_index < 2 and not self._big_bet_made else self.limit_bets[1]

    def _cap_reached(self) -> bool:
        if self._uncapped:
            return False
        return self.raise_count >= 1 + self.rules.limit_raise_cap

    def _raise_bounds(self, s: _Seat) -> tuple[int, int]:
        reach = s.bet + s.stack
        current = self.current_bet
        if self.variant.structure == FIXED_LIMIT:
            target = min(self.full_level + self._limit_bet(), reach)
            if self._open_pair and not self._big_bet_made:  # the small or the big bet (CA Actions 3c)
                return target, min(self.full_level + self.limit_bets[1], reach)
            return target, target
        if current == 0:
            minimum = self.min_increment  # the minimum bet
        else:
            minimum = current + self.min_increment
        minimum = min(minimum, reach)
        if self.variant.structure == POT_LIMIT:
            maximum = min(reach, max(minimum, self._pot_limit_to(s)))
        else:
            maximum = reach
        return minimum, maximum

    def _pot_limit_to(self, s: _Seat) -> int:
        """Pot-limit maximum: call, then raise by the pot including the call (TDA 54; short blinds count in full)."""
        current = self.current_bet
        pot = self.pot_total()
        if self.street_index == 0:
            pot += sum(max(0, self._nominal_forced(seat) - self._s[seat].bet) for seat in self.forced_posters
                       if not self._s[seat].folded and self._s[seat].bet < self._nominal_forced(seat))
        return current + pot + (current - s.bet)

    def _nominal_forced(self, seat: int) -> int:
        for a in self.actions:
            if a.seat == seat and a.kind in ("post_sb", "post_bb", "straddle"):
                amount = {"post_sb": self.small_blind, "post_bb": self.big_blind}.get(a.kind)
                return amount if amount is not None else a.to_amount
        return 0

    def substantial_action(self) -> bool:
        """Whether a misdeal can no longer be called, by the profile's definition (``rules.is_substantial``): the
        actions in turn count (TDA 36), blinds and folds out of turn do not."""
        kind = self.rules.substantial_action
        if kind == SUBSTANTIAL_TWO_CHIP_ACTIONS_PREFLOP and self.street_index > 0:
            return True  # CA GR 9: "A game can no longer be declared void after the flop."
        acts = [(a.seat, a.kind in CHIP_ACTIONS) for a in self._voluntary_actions
                if not any(a is f for f in self._oot_folds)]
        return is_substantial(kind, acts)

    def street_acted(self) -> bool:
        """Some seat acted on this street: a voluntary action, or an out-of-turn action or declaration waiting."""
        return (any(a.street == self.street for a in self._voluntary_actions)
                or any(s.held is not None or s.declared is not None for s in self._s.values()))

    # ---- inputs -------------------------------------------------------------------------------------

    def check(self, seat: int) -> Ruling:
        """The action passed ``seat`` without chips (a tap)."""
        error = self._validate_seat(seat)
        if error:
            return error
        s = self._s[seat]
        if self._bring_in_turn(s):
            return self._reject("bring_in_due", f"seat {seat} brings it in: bring in {self.bring_in} or complete to "
                                f"{self.limit_bets[0]}", seat)
        if seat != self._to_act:
            if self.to_call(seat) > 0 and self.current_bet > s.bet:
                return self._reject("cannot_check", f"seat {seat} faces a bet of {self.to_call(seat)}", seat)
            return self._hold(seat, None, (), check=True)
        if self.to_call(seat) > 0:
            return self._reject("cannot_check", f"seat {seat} faces a bet of {self.to_call(seat)}: call or fold", seat)
        return self._after_action(self._apply_check(seat, ("TDA 41",), "check"))

    def fold(self, seat: int) -> Ruling:
        """The seat's cards reached the muck. A fold out of turn is binding (TDA 53; CA Actions 2; AC 34)."""
        error = self._validate_seat(seat, folding=True)
        if error:
            return error
        s = self._s[seat]
        if self._bring_in_turn(s):  # (pokerkit: "The player must post a bring-in or complete.")
            return self._reject("bring_in_due", f"seat {seat} brings it in: the bring-in is forced, it cannot fold",
                                seat)
        rules: tuple[str, ...] = ()
        note = "fold"
        if seat != self._to_act:
            rules += ("TDA 53", "AC 34")
            note = "fold out of turn: binding"
        elif self.to_call(seat) == 0:
            rules += ("TDA 54-5",)
            note = "fold with no bet to face: binding"
        if s.must_not_fold:
            rules += ("TDA 46-2",)
            note += "; the player withdrew chips facing a raise and owed a call or raise (floor may penalise)"
        if s.pending_incomplete:
            value, _chips = s.pending_incomplete
            return self.resolve_incomplete_call(seat, complete=False)
        s.held = None  # its chips are already counted as change
        s.declared = None
        action = self._record(Action(seat, "fold", self.street, s.bet, 0, rules=rules, note=note, base="fold"))
        s.folded = True
        if seat == self._to_act:
            return self._after_action(action)
        self._oot_folds.append(action)
        self._oot_since_turn.append((seat, False))
        # out of turn: the turn does not move, but the hand may be over or the round complete
        skipped = self._skipped_seats(seat)
        self._to_act = self._find_next(self._before(self._to_act)) if self._to_act is not None else None
        if self._to_act is None:
            self._return_stranded_held()
        if skipped and self._oot_substantial():
            return Ruling(True, "folded", note + f"; seats {skipped} were skipped and substantial action followed: "
                          "the floor decides their hands", seat, (action,), rules + ("TDA 53-2",), needs_floor=True)
        return self._ok("folded", note, seat, (action,), rules)

    def declare(self, seat: int, kind: str, amount: int | Sequence[int] | None = None) -> Ruling:
        """A verbal declaration (binding in turn: TDA 50-3-1; CA GR 4; AC 33; PP Betting 8)."""
        error = self._validate_seat(seat)
        if error:
            return error
        kind = kind.replace("-", "_").replace(" ", "_").lower()
        if kind in ("raise_to", "bet_to"):
            kind = kind[:-3]
        if kind == "allin":
            kind = "all_in"
        if kind not in _VALID_DECLARATIONS:
            return self._reject("bad_declaration", f"unknown declaration {kind!r}", seat)
        rules: tuple[str, ...] = ()
        if amount is not None and not isinstance(amount, int):
            candidates = list(amount)
            if not candidates or not all(isinstance(c, int) and c > 0 for c in candidates):
                return self._reject("bad_amount", "amounts must be positive whole chips", seat)
            amount, rule = resolve_unclear_amount(candidates, self.pot_total(), self.rules)
            rules += (rule,)
        if amount is not None and amount <= 0:
            return self._reject("bad_amount", "amounts must be positive", seat)
        decl = Declaration(kind, amount)
        if kind == "fold":
            return self.fold(seat)
        if self._s[seat].pending_incomplete:
            if kind == "check":
                return self._reject("awaiting_choice", f"seat {seat} faces a bet: complete the call or fold", seat)
            return self.resolve_incomplete_call(seat, complete=True)  # any chip declaration completes the call
        if seat != self._to_act:
            if self.rules.out_of_turn == OOT_DECLARATION_DISMISSED:  # PP Betting 10: "no penalties"
                return self._ok("dismissed", f"seat {seat} declared {kind} out of turn: dismissed, no penalty",
                                seat, rules=(self.rules.cite("out_of_turn"),))
            return self._hold(seat, decl, ())
        return self._declare_in_turn(seat, decl, rules)

    def push(self, seat: int, chips: Sequence[int], withdrawn: Sequence[int] = ()) -> Ruling:
        """Chips put into the betting zone in one motion (``withdrawn``: earlier chips taken back)."""
        error = self._validate_seat(seat, allow_owing=True)
        if error:
            return error
        if any((not isinstance(c, int)) or c <= 0 for c in list(chips) + list(withdrawn)):
            return self._reject("bad_chips", "chips are positive whole denominations", seat)
        s = self._s[seat]
        if not chips and not withdrawn and not (s.declared or seat == self._to_act):
            return self._reject("no_chips", "a push needs chips", seat)
        missing = Counter(withdrawn) - Counter(s.zone) if withdrawn else None  # (counting costs: most take none back)
        if missing:
            return self._reject("bad_withdrawal", f"chips {sorted(missing.elements())} are not in seat {seat}'s zone",
                                seat)
        behind = s.stack + s.owed - s.change + sum(withdrawn)
        if sum(chips) > behind:
            return self._reject("more_than_stack", f"seat {seat} has only {behind} behind, pushed {sum(chips)}", seat)
        if s.owed and not withdrawn:
            return self._settle_owed(s, list(chips))
        if s.pending_incomplete:
            if withdrawn or self.rules.incomplete_call != INCOMPLETE_CALL_COMPLETE_OR_FORFEIT:
                return self._reject("awaiting_choice", f"seat {seat}'s incomplete call awaits a choice", seat)
            # CA Actions 2: "he must complete his bet or forfeit [...] A raise is no longer permitted": chips added
            # complete the call, whatever they come to; the rest goes back
            s.zone.extend(chips)
            return self.resolve_incomplete_call(seat, complete=True)
        if seat == self._to_act and withdrawn and not chips:
            # chips clearly taken back facing a raise: the player must now call or raise (TDA 46-2)
            for c in withdrawn:
                s.zone.remove(c)
            s.withdrawn_pending.extend(withdrawn)
            if self.current_bet > s.bet:
                s.must_not_fold = True
            return self._ok("chips_withdrawn", f"seat {seat} took back {sum(withdrawn)}: it must call or raise",
                            seat, rules=("TDA 46-2",))
        if seat != self._to_act:
            if self._last_actor == seat and not withdrawn:
                # a second motion is not part of the bet (CA Actions 2-3; PP Betting 14; AC 42; TDA 54)
                s.zone.extend(chips)
                s.change += sum(chips)
                return self._ok("string_bet", f"seat {seat}: chips after the action are not part of the bet; "
                                f"{sum(chips)} to go back", seat, rules=("CA Actions 2", "PP Betting 14", "AC 42"))
            inferred = self._infer_checks_before(seat) if self.infer_checks and chips else None
            if inferred is None:
                return self._hold(seat, s.declared, tuple(chips), withdrawn=tuple(withdrawn))
            result = self._push_in_turn(seat, list(chips), list(withdrawn))
            return self._merge(inferred, result)
        return self._push_in_turn(seat, list(chips), list(withdrawn))

    def resolve_incomplete_call(self, seat: int, complete: bool) -> Ruling:
        """The choice a rule leaves open after an incomplete call (TDA 51 floor; CA Actions 2 player)."""
        pending = self._s[seat].pending_incomplete if seat in self._s else None
        if not pending:
            return self._reject("no_choice_pending", f"seat {seat} has no incomplete call awaiting a choice", seat)
        s = self._s[seat]
        value, _chips = pending
        s.pending_incomplete = None
        rules = ("TDA 51",) if self.rules.incomplete_call != INCOMPLETE_CALL_COMPLETE_OR_FORFEIT else ("CA Actions 2",)
        if complete:
            target = min(self.current_bet, s.bet + s.stack)
            action = self._apply_bet(s, target, sum(s.zone), rules, "incomplete call completed to a full call",
                                     no_raise=True)
            return self._after_action(action)
        # fold: TDA 51 example 4 keeps the chips that matched the opening bet, returns the rest;
        # CA Actions 2 forfeits every chip put in.
        if self.rules.incomplete_call == INCOMPLETE_CALL_COMPLETE_OR_FORFEIT:
            keep = value
        else:
            keep = min(value, max(s.bet, self._opening_level()))
        keep = min(max(keep, s.bet), s.bet + s.stack)
        added = keep - s.bet
        s.stack -= added
        s.committed += added
        s.bet = keep
        self._bets_changed()
        s.change = max(0, sum(s.zone) - keep)
        s.owed = max(0, keep - sum(s.zone))
        s.folded = True
        action = self._record(Action(seat, "fold", self.street, keep, added, returned=value - keep, base="fold",
                                     rules=rules, note=f"incomplete call abandoned: {added} stays in the pot, "
                                     f"{value - keep} goes back"))
        return self._after_action(action)

    def make_passive(self, seat: int, rule: str) -> Ruling:
        """The player showed a hole card and the house makes the hand passive (AC 50, CA Actions 10): from now on it
        may check, call or fold; chips pushed beyond a call are a call, the rest goes back."""
        if seat not in self._s or self._s[seat].folded:
            return self._reject("unknown_seat", f"seat {seat} is not in the hand", seat)
        next_only = self.rules.shown_hole_card == SHOWN_CARD_PASSIVE_NEXT_ACTION
        self._s[seat].passive = "next_action" if next_only else "hand"
        return self._ok("passive_hand", f"seat {seat} showed a hole card: it may only check, call or fold"
                        + (" on its next action" if next_only else ""), seat,
                        rules=(rule,) if rule else ())

    def change_given(self, seat: int, chips: Sequence[int]) -> Ruling:
        """The dealer gave ``chips`` back from the seat's zone (change, a returned excess)."""
        if seat not in self._s:
            return self._reject("unknown_seat", f"seat {seat} is not in the hand", seat)
        s = self._s[seat]
        missing = Counter(chips) - Counter(s.zone)
        if missing or sum(chips) > s.change:
            return self._reject("bad_change", f"seat {seat} is not owed {sum(chips)} back", seat)
        for c in chips:
            s.zone.remove(c)
        s.change -= sum(chips)
        return self._ok("change_given", f"{sum(chips)} back to seat {seat}", seat)

    def end_street(self) -> Ruling:
        """The dealer collects the bets. Refused while the round is incomplete or chips are owed."""
        if self.status != "betting":
            return self._reject("hand_over", f"the betting is over ({self.status})", None)
        blockers = self._blockers()
        if self._to_act is not None:
            return self._reject("round_incomplete", f"seat {self._to_act} is to act", self._to_act)
        if blockers:
            return self._reject("chips_outstanding", "; ".join(blockers), None)
        if self._awaiting_opener:
            return self._reject("street_not_open", f"{self.street} is not open (start_street)", None)
        actions_before = len(self.actions)
        bets = {n: s.bet for n, s in self._s.items()}
        seat, excess = potlib.uncalled_bet(bets)
        returned: dict[int, int] = {}
        if seat is not None and excess:
            s = self._s[seat]
            s.bet -= excess
            self._bets_changed()
            s.stack += excess
            s.committed -= excess
            returned[seat] = excess
        into_pot = {n: s.bet + (self._antes_posted.get(n, 0) if self.street_index == 0 else 0)
                    for n, s in self._s.items()}
        into_pot = {n: v for n, v in into_pot.items() if v}
        live = [n for n in self.order if not self._s[n].folded]
        all_in = [n for n in live if self._s[n].stack == 0]
        contributions = {n: s.committed for n, s in self._s.items()}
        self._pots = potlib.build_pots(contributions, live, all_in, self.order, self.dead_money)
        collection = Collection(self.street, into_pot, returned, self._pots)
        self.collections.append(collection)
        for s in self._s.values():
            s.bet = 0
            s.zone = []
            s.change = 0
            s.acted_level = None
            s.no_raise = False
            s.must_not_fold = False
            s.withdrawn_pending = []
            s.declared = None
        self._bets_changed()
        self.street_index += 1
        if len(live) == 1:
            self.status = "complete"
        elif self.street_index >= len(self.variant.streets):
            self.status = "showdown"
        else:
            self._open_pair = self._big_bet_made = False
            self.min_increment = self._limit_bet() if self.variant.structure == FIXED_LIMIT else self.big_blind
            self.full_level = 0
            self.raise_count = 0
            self._capped = self._uncapped = False
            if self.variant.stud:
                self._awaiting_opener, self._to_act = True, None  # the next cards show who acts first
            else:
                self._street_start(after=self.order[-1])
        message = f"collected {collection.total}" + (f", {excess} uncalled back to seat {seat}" if returned else "")
        ruled = tuple(a for a in self.actions[actions_before:])  # the checks of a street without betting
        return Ruling(True, "street_collected", message, None, ruled, ("CA Actions 7",), False, collection)

    # ---- the turn -----------------------------------------------------------------------------------

    def _street_start(self, after: int) -> None:
        self._last_actor = None
        self._oot_since_turn = []
        if self.street_index in self._no_betting:  # a bomb pot's pre-flop, a flip's every street
            self._to_act = None
            self._street_had_round[self.street_index] = False
            self.last_aggressor[self.street_index] = None
            street = self.variant.streets[self.street_index]
            for seat in self.order:  # from the button's left, as pokerkit asks them without blinds
                s = self._s[seat]
                if not s.folded and s.stack > 0:
                    s.acted_level = 0
                    self.actions.append(Action(seat, "check", street, 0, 0, base="check",
                                               rules=(self._no_betting_rule,), note="no betting on this street"))
            return
        self._to_act = self._find_next(after)
        self._street_had_round[self.street_index] = self._to_act is not None
        self.last_aggressor[self.street_index] = None

    def _needs_action(self, s: _Seat, current: int | None = None) -> bool:
        """Whether the seat has yet to act in this round; ``current``: the current bet, where the caller asks for
        seat after seat (it is the same for each)."""
        if s.folded or s.stack == 0:
            return False
        if s.pending_incomplete:
            return True
        if current is None:
            current = self.current_bet
        if s.acted_level is not None and s.bet >= current:
            return False
        others_with_chips = any(o.seat != s.seat and not o.folded and o.stack > 0 for o in self._s.values())
        if not others_with_chips and s.bet >= max(o.bet for o in self._s.values() if not o.folded):
            return False  # nobody left to bet against and nothing to call
        return True

    def _find_next(self, after: int) -> int | None:
        live = [s for s in self._s.values() if not s.folded]
        if len(live) <= 1:
            return None
        i = self.order.index(after)
        n = len(self.order)
        current = self.current_bet
        for k in range(1, n + 1):
            s = self._s[self.order[(i + k) % n]]
            if self._needs_action(s, current):
                return s.seat
        return None

    def _before(self, seat: int) -> int:
        i = self.order.index(seat)
        return self.order[i - 1]

    def _after_action(self, action: Action | Ruling) -> Ruling:
        """Move the turn on, then apply or return held out-of-turn actions the turn reaches (TDA 53)."""
        if isinstance(action, Ruling) and (not action.ok or not action.actions):
            return action  # refused, or waiting for a choice: the turn stays
        actions = [action] if isinstance(action, Action) else list(action.actions)
        seat = actions[-1].seat if actions else None
        self._last_actor = seat
        if seat is not None:
            self._to_act = self._find_next(seat)
        notes = [a.note for a in actions]
        rules = [r for a in actions for r in a.rules]
        guard = 0
        while self._to_act is not None and self._s[self._to_act].held is not None and guard < 50:
            guard += 1
            held_seat = self._to_act
            s = self._s[held_seat]
            held = s.held
            assert held is not None
            s.held = None
            if self.current_bet > held.level:
                # the action changed: chips go back, all options are open again (TDA 53; CA Actions 2; AC 34)
                notes.append(f"seat {held_seat}: action changed since its out-of-turn action; "
                             f"{sum(held.chips)} goes back, all options open")
                rules += ["TDA 53"]
                break
            # nothing changed: the out-of-turn action is binding
            for c in held.chips:
                s.zone.remove(c)
            s.change -= sum(held.chips)
            if held.check:
                result = self._apply_check(held_seat, ("TDA 53",), "out-of-turn check: binding")
                self._last_actor = held_seat
                self._to_act = self._find_next(held_seat)
                actions.append(result)
                continue
            if held.declaration is not None and not held.chips:
                sub = self._declare_in_turn(held_seat, held.declaration, ("TDA 53",))
            else:
                if held.declaration is not None:
                    s.declared = held.declaration
                sub = self._push_in_turn(held_seat, list(held.chips), [], extra_rules=("TDA 53",))
            actions.extend(sub.actions)
            if not sub.ok:
                break
        if self._to_act is None:
            notes += self._return_stranded_held()
        # the turn moved: actions out of turn count toward TDA 53-2 only while they still wait ahead of it
        self._oot_since_turn = [act for act in self._oot_since_turn if self._s[act[0]].held is not None]
        message = "; ".join(n for n in notes if n)
        return Ruling(True, "action", message, seat, tuple(actions), tuple(dict.fromkeys(rules)))

    def _hold(self, seat: int, decl: Declaration | None, chips: tuple[int, ...], check: bool = False,
              withdrawn: tuple[int, ...] = ()) -> Ruling:
        s = self._s[seat]
        if withdrawn:
            return self._reject("out_of_turn", f"seat {seat} is not to act", seat)
        if s.held is not None:
            s.zone.extend(chips)
            s.change += sum(chips)
            return self._ok("string_bet", f"seat {seat} already acted out of turn; these chips go back", seat,
                            rules=("TDA 54",))
        s.zone.extend(chips)
        s.change += sum(chips)  # in the zone but not (yet) part of the bet
        s.held = _Held(decl, chips, self.current_bet, check)
        s.declared = None
        penalty = self.rules.out_of_turn == OOT_DECLARATION_DISMISSED
        if penalty:
            s.no_raise = True  # PP Betting 10: whoever acts out of turn may not raise on the next turn
        self._oot_since_turn.append((seat, bool(chips) or (decl is not None and decl.kind not in ("check", "fold"))))
        what = "check" if check else (decl.kind if decl else f"push of {sum(chips)}")
        rules: tuple[str, ...] = ("TDA 53", "CA Actions 2", "AC 34")
        barred = ""
        if penalty:
            rules, barred = rules + (self.rules.cite("out_of_turn"),), "; it may not raise on its next turn"
        ruling = self._ok("held_out_of_turn", f"seat {seat} acted out of turn ({what}); held until the action reaches "
                          f"it: binding if nothing changes, returned otherwise{barred}", seat, rules=rules)
        skipped = self._skipped_seats(seat)
        if skipped and self._oot_substantial():
            return Ruling(True, "held_out_of_turn", ruling.message + f"; seats {skipped} were skipped and "
                          "substantial action followed: the floor decides their hands", seat, (), rules + ("TDA 53-2",),
                          needs_floor=True)
        return ruling

    def _return_stranded_held(self) -> list[str]:
        """The round is over and the turn never reached some held actions: their chips go back."""
        notes = []
        for s in self._s.values():
            if s.held is not None:
                notes.append(f"seat {s.seat}: out-of-turn action void, the action never reached it")
                s.held = None
        return notes

    def _oot_substantial(self) -> bool:
        """TDA 53-2: substantial action (TDA 36, as the house counts it) "außerhalb der Reihe nach ihm" — the
        actions out of turn after the skipped seat, not the action before it. A single push out of turn is not."""
        return is_substantial(self.rules.substantial_action, self._oot_since_turn)

    def _skipped_seats(self, seat: int) -> list[int]:
        if self._to_act is None:
            return []
        out = []
        cur = self._to_act
        while cur != seat:
            if self._needs_action(self._s[cur]) and self._s[cur].held is None:
                out.append(cur)
            cur = self._next_seat(cur)
        return out

    def _infer_checks_before(self, seat: int) -> Ruling | None:
        """The seats between the turn and ``seat`` faced no bet: they checked (their taps are not seen)."""
        if self._to_act is None or not self._needs_action(self._s[seat]) or self._bring_in_turn(self._s[self._to_act]):
            return None  # (the bring-in is never a check)
        between = []
        cur = self._to_act
        while cur != seat:
            if self._needs_action(self._s[cur]):
                if self.to_call(cur) > 0 or self._s[cur].held is not None or self._s[cur].declared:
                    return None
                between.append(cur)
            cur = self._next_seat(cur)
            if cur == self._to_act:
                return None
        actions = []
        for b in between:
            actions.append(self._apply_check(b, (), "check inferred: the action passed the seat"))
            self._last_actor = b
        self._to_act = seat
        return Ruling(True, "checks_inferred", f"seats {between} checked", None, tuple(actions))

    def _merge(self, first: Ruling, second: Ruling) -> Ruling:
        if not second.ok:
            return second
        return Ruling(True, second.code, "; ".join(m for m in (first.message, second.message) if m), second.seat,
                      first.actions + second.actions, second.rules, second.needs_floor, second.collection)

    def _blockers(self) -> list[str]:
        out = []
        for s in self._s.values():
            if s.owed:
                out.append(f"seat {s.seat} owes {s.owed}")
            if s.pending_incomplete:
                out.append(f"seat {s.seat}'s incomplete call awaits a choice")
            if s.held is not None and not s.folded:
                out.append(f"seat {s.seat} has an out-of-turn action held")
            if s.declared is not None:
                out.append(f"seat {s.seat} declared {s.declared.kind} and no chips followed")
        return out

    # ---- interpreting chips -------------------------------------------------------------------------

    def _declare_in_turn(self, seat: int, decl: Declaration, rules: tuple[str, ...]) -> Ruling:
        s = self._s[seat]
        current = self.current_bet
        reach = s.bet + s.stack
        zone_value = sum(s.zone)
        kind = decl.kind
        if self._bring_in_turn(s):
            if kind in ("check", "call", "bring_in"):
                return self._apply_bring_in(s, zone_value, rules, f"{kind} declared: brings it in for {self.bring_in}")
            if kind in ("complete", "bet", "raise") and decl.amount is None:
                return self._aggressive(s, self.limit_bets[0], zone_value, rules, f"{kind} declared: completes to "
                                        f"{self.limit_bets[0]}")
        elif kind == "bring_in":
            return self._reject("no_bring_in", f"seat {seat} does not bring it in", seat)
        if kind == "check":
            if current > s.bet:
                s.no_raise = True
                return self._ok("check_facing_bet", f"seat {seat} said check facing {current - s.bet}: may call or "
                                "fold, not raise", seat, rules=("TDA 54-5",))
            return self._after_action(self._apply_check(seat, rules, "check declared"))
        if kind == "call":
            if current <= s.bet:
                return self._after_action(self._apply_check(seat, rules + ("TDA 54-5",), "call with no bet: a check"))
            target = min(current, reach)
            return self._after_action(self._apply_bet(s, target, zone_value, rules + ("TDA 50-3",),
                                                      "call declared: binding for the full call"))
        if kind == "all_in":
            return self._after_action(self._apply_bet(s, reach, zone_value, rules, "all-in declared"))
        if kind in ("bet", "raise") and decl.amount is None:
            s.declared = decl  # the amount comes with the chips (TDA 50-2: wait for a clear bet)
            return self._ok("declared", f"seat {seat} declared {kind}; waiting for the chips", seat, rules=rules)
        if kind == "pot":
            if self.variant.structure == POT_LIMIT:
                target = self._raise_bounds(s)[1]
                return self._aggressive(s, target, zone_value, rules + ("TDA 54-1",), "pot declared: the pot-limit "
                                        "maximum")
            s.declared = Declaration("raise", None)  # NL: "pot" is no amount but obliges a valid bet (TDA 54-4)
            return self._ok("declared", f"seat {seat}: 'pot' in no limit obliges at least a minimum bet", seat,
                            rules=rules + ("TDA 54-4",))
        if kind == "complete":
            target = self._raise_bounds(s)[0]
            return self._aggressive(s, target, zone_value, rules, "completion declared")
        assert decl.amount is not None
        amount = decl.amount
        if kind == "bet" and current > s.bet and current > 0:
            # an amount without the word "raise" is read like the same chips (TDA 43-1, TDA 40-C)
            return self._after_action(self._fifty_percent(s, amount, zone_value, rules + ("TDA 43",),
                                                          f"{amount} announced without 'raise'"))
        if kind == "raise" and amount <= current and amount < reach:
            return self._reject("not_a_raise", f"raise to {amount} is not above the bet of {current}; the floor "
                                "decides what was meant", seat, needs_floor=True)
        return self._aggressive(s, amount, zone_value, rules + ("TDA 43-2",), f"{kind} to {amount} declared")

    def _aggressive(self, s: _Seat, target: int, zone_value: int, rules: tuple[str, ...], note: str,
                    after: bool = True) -> Ruling:
        """A declared or chip-made bet/raise to ``target``, corrected by the rules of the game."""
        reach = s.bet + s.stack
        current = self.current_bet
        rules_out = list(rules)
        if target >= reach:
            target = reach
            note += "; all-in"
        elif (blocker := self._raise_blocker(s)) is not None:
            target = min(current, reach)
            note += f"; no raise possible ({blocker.reason}): a call"
            rules_out.append(blocker.rule)
        else:
            minimum, maximum = self._raise_bounds(s)
            if self.variant.structure == FIXED_LIMIT:
                limit = maximum if target >= maximum else minimum  # (two differ on an open pair's fourth street)
                if target != limit:
                    note += f"; limit: the raise is to {limit}"
                if limit > minimum:
                    rules_out.append(self.rules.cite("open_pair_big_bet"))  # the big bet on an open pair
                target = limit
            elif target < minimum:
                note += f"; under the minimum: corrected to {minimum}"
                rules_out += ["TDA 52", "TDA 43"]
                target = minimum
            elif target > maximum:
                note += f"; over the pot: reduced to {maximum}"
                rules_out += ["TDA 52-2"]
                target = maximum
        action = self._apply_bet(s, target, zone_value, tuple(r for r in rules_out if r), note)
        return self._after_action(action) if after else Ruling(True, "action", note, s.seat, (action,))

    def _push_in_turn(self, seat: int, chips: list[int], withdrawn: list[int],
                      extra_rules: tuple[str, ...] = ()) -> Ruling:
        s = self._s[seat]
        decl = s.declared
        s.declared = None
        prior_before = list(s.zone)
        prior_left = list(prior_before)
        for c in withdrawn:
            prior_left.remove(c)
        withdrawn = s.withdrawn_pending + withdrawn  # chips taken back earlier in this turn count too
        s.withdrawn_pending = []
        s.change -= min(s.change, sum(withdrawn))
        s.zone = prior_left + list(chips)
        prior_value = sum(prior_left)
        value = prior_value + sum(chips)
        current = self.current_bet
        reach = s.bet + s.stack
        pushed_all = value >= reach  # nothing left behind after this motion
        rules = extra_rules
        if withdrawn and current > s.bet:
            s.must_not_fold = True  # a chip clearly withdrawn facing a raise: call or raise (TDA 46-2)
        if value < s.bet:
            self._undo_zone(s, prior_before, withdrawn)
            return self._reject("bet_reduced", f"seat {seat} cannot take back part of a bet", seat)

        if decl is None and self._bring_in_turn(s):
            # the bring-in or the completion: at least half the way from the bring-in to the small bet completes
            # (the 50% rule, TDA 43); less than the bring-in is brought up to it (PP Betting 16)
            small = self.limit_bets[0]
            if 2 * (value - self.bring_in) >= small - self.bring_in:
                return self._aggressive(s, small, value, rules + ("TDA 43",), f"{value} in chips: completes to {small}")
            return self._apply_bring_in(s, value, rules + (("PP Betting 16",) if value < self.bring_in else ()),
                                        f"{value} in chips: brings it in for {self.bring_in}")
        if decl is not None:
            if decl.kind == "raise" or decl.kind == "bet":
                note = f"{decl.kind} declared, {value} in chips"
                if len(chips) == 1 and not prior_left and current > s.bet:
                    note += "; one chip with 'raise': the most that chip allows"
                    rules += ("TDA 44", "CA Actions 4", "AC 37")
                return self._aggressive(s, value, value, rules + ("TDA 43",), note)
        if not chips and not withdrawn:
            self._undo_zone(s, prior_before, withdrawn)
            return self._reject("no_chips", "a push needs chips", seat)

        if current <= s.bet:
            return self._after_action(self._silent_when_no_bet_faced(s, value, chips, prior_left, pushed_all, rules))
        return self._after_action(self._silent_facing_bet(s, value, chips, prior_left, withdrawn, pushed_all, rules))

    def _undo_zone(self, s: _Seat, prior_before: list[int], withdrawn: list[int]) -> None:
        s.zone = prior_before
        s.change += sum(withdrawn)

    def _silent_when_no_bet_faced(self, s: _Seat, value: int, chips: list[int], prior_left: list[int],
                                  pushed_all: bool, rules: tuple[str, ...]) -> Action:
        current = self.current_bet
        if current == 0:
            # opening bet: one chip bets its full value (TDA 44; CA Actions 4; AC 37); under the minimum is
            # corrected (TDA 52); over the pot is reduced (TDA 52-2)
            rules += ("TDA 44", "CA Actions 4", "AC 37") if len(chips) == 1 and not prior_left else ()
            ruling = self._aggressive(s, value, value, rules, f"bet of {value} in chips", after=False)
            return ruling.actions[0]
        # the big blind's (or a straddler's) option: chips make a raise, the 50% rule decides (TDA 43)
        return self._fifty_percent(s, value, value, rules, f"{value} in chips on the option", pushed_all=pushed_all)

    def _silent_facing_bet(self, s: _Seat, value: int, chips: list[int], prior_left: list[int], withdrawn: list[int],
                           pushed_all: bool, rules: tuple[str, ...]) -> Action | Ruling:
        current = self.current_bet
        reach = s.bet + s.stack
        prior_value = sum(prior_left)
        if value < current:
            if pushed_all:
                return self._apply_bet(s, reach, value, rules, "all-in for less than the call")
            return self._incomplete_call(s, value, chips, rules)
        # which chips the one-chip and several-chip tests look at (TDA 46-3)
        prior_covers = prior_value >= current
        partial_withdrawal = bool(withdrawn) and bool(prior_left)
        if prior_covers or partial_withdrawal:
            considered = prior_left + chips  # situations 3 and 4: all chips under rule 45
            situation = "TDA 46-3-2" if prior_value or withdrawn else ""
        else:
            considered = list(chips)  # situations 1 and 2: the new chips
            situation = "TDA 46-3-1" if prior_left or withdrawn else ""
        extra = (situation,) if situation else ()
        if len(considered) == 1 and not prior_covers:
            return self._apply_bet(s, min(current, reach), value, rules + extra + ("TDA 44", "CA Actions 4",
                                   "PP Betting 15", "AC 37"), "one larger chip without 'raise': a call")
        if self._every_chip_needed(considered, value, current):
            return self._apply_bet(s, min(current, reach), value, rules + extra + (self._multi_chip_cite(),),
                                   "every chip needed for the call: a call")
        if pushed_all and self._raise_blocker(s) is None:
            # the last chips are all-in whatever the 50% rule says (TDA 45-2-2)
            return self._apply_bet(s, reach, value, rules + extra + ("TDA 45-2",), "last chips: all-in")
        return self._fifty_percent(s, value, value, rules + extra, f"{value} in chips facing {current}")

    def _every_chip_needed(self, chips: list[int], value: int, current: int) -> bool:
        rule = self.rules.multiple_chip_rule
        if len(chips) < 2 or rule == MULTI_CHIP_FIFTY_PERCENT_ONLY:
            return False
        if rule == MULTI_CHIP_SAME_DENOMINATION and len(set(chips)) != 1:
            return False
        return value - min(chips) < current

    def _multi_chip_cite(self) -> str:
        rule = self.rules.multiple_chip_rule
        if rule == MULTI_CHIP_REMOVE_SMALLEST:
            return "TDA 45-1"
        if rule == MULTI_CHIP_SAME_DENOMINATION:
            return self.rules.cite("multiple_chip_rule").split(" (")[0]
        return "TDA 43"

    def _fifty_percent(self, s: _Seat, value: int, zone_value: int, rules: tuple[str, ...], note: str,
                       pushed_all: bool = False) -> Action:
        """The 50% rule (TDA 43; CA Actions 5; AC 36; PP Betting 14)."""
        current = self.current_bet
        reach = s.bet + s.stack
        value = min(value, reach)  # a spoken amount beyond the stack is all the stack
        cite = ("TDA 43", "CA Actions 5", "AC 36")
        if value <= current:
            target = min(value, reach) if value < current else current
            if value < current:
                return self._incomplete_call(s, value, [value], rules)  # type: ignore[return-value]
            return self._apply_bet(s, target, zone_value, rules, note + ": a call")
        blocker = self._raise_blocker(s)
        if blocker is not None:
            return self._apply_bet(s, min(current, reach), zone_value,
                                   rules + ((REOPENING_RULE,) if blocker.rule == REOPENING_RULE else ()),
                                   note + f": a call ({blocker.reason}); the rest goes back")
        minimum, maximum = self._raise_bounds(s)
        increment = self._limit_bet() if self.variant.structure == FIXED_LIMIT else self.min_increment
        raised_by = value - current
        if pushed_all and value >= reach:
            return self._apply_bet(s, reach, zone_value, rules + ("TDA 45-2",), note + ": last chips, all-in")
        if self.variant.structure == FIXED_LIMIT and maximum > minimum and value >= maximum:
            return self._apply_bet(s, maximum, zone_value, rules + (self.rules.cite("open_pair_big_bet"),),
                                   note + f": the big bet, to {maximum} (an open pair)")
        if value >= minimum and self.variant.structure != FIXED_LIMIT:
            target = min(value, maximum)
            if target < value:
                return self._apply_bet(s, target, zone_value, rules + ("TDA 52-2",),
                                       note + f": a raise, reduced to the pot-limit maximum {target}")
            return self._apply_bet(s, target, zone_value, rules, note + ": a raise")
        if 2 * raised_by >= increment:
            return self._apply_bet(s, minimum, zone_value, rules + cite,
                                   note + f": at least half a raise, must make the full raise to {minimum}")
        return self._apply_bet(s, min(current, reach), zone_value, rules + cite,
                               note + ": less than half a raise, a call; the rest goes back")

    def _incomplete_call(self, s: _Seat, value: int, chips: list[int], rules: tuple[str, ...]) -> Action | Ruling:
        """Fewer chips than the call, not all-in, no declaration (TDA 50-3-2 / 51; CA Actions 2; PP 16; AC 40)."""
        current = self.current_bet
        reach = s.bet + s.stack
        policy = self.rules.incomplete_call
        heads_up = len(self.live_seats) == 2
        facing_opening = current == self._opening_level()
        if policy == INCOMPLETE_CALL_MUST_COMPLETE or (
            policy != INCOMPLETE_CALL_COMPLETE_OR_FORFEIT and (heads_up or facing_opening)
        ):
            why = "heads-up" if heads_up else "against the opening bet"
            cite = self.rules.cite("incomplete_call") if policy == INCOMPLETE_CALL_MUST_COMPLETE else "TDA 51"
            return self._apply_bet(s, min(current, reach), sum(s.zone), rules + (cite.split(" (")[0],),
                                   f"incomplete call ({value} of {current}): must complete to the full call"
                                   + ("" if policy == INCOMPLETE_CALL_MUST_COMPLETE else f" ({why})"), no_raise=True)
        s.pending_incomplete = (value, tuple(chips))
        s.change = max(0, sum(s.zone) - s.bet)  # in the zone, not yet ruled part of the bet
        cite = "CA Actions 2" if policy == INCOMPLETE_CALL_COMPLETE_OR_FORFEIT else "TDA 51"
        who = "the player" if policy == INCOMPLETE_CALL_COMPLETE_OR_FORFEIT else "the floor"
        return Ruling(True, "incomplete_call", f"seat {s.seat}: {value} facing {current}: {who} decides — complete "
                      "the call or give up the chips and fold (resolve_incomplete_call)", s.seat, (), (cite,),
                      needs_floor=policy != INCOMPLETE_CALL_COMPLETE_OR_FORFEIT)

    # ---- applying -----------------------------------------------------------------------------------

    def _opening_level(self) -> int:
        """The opening bet of this round: the first chips bet; pre-flop the big blind (TDA 51)."""
        if self.street_index == 0 and not self.variant.stud:
            return self.big_blind
        for a in self.actions:
            if a.street == self.street and a.base in ("bet", "bring_in"):
                return a.to_amount
        return 0

    def _apply_check(self, seat: int, rules: tuple[str, ...], note: str) -> Action:
        s = self._s[seat]
        s.acted_level = self.current_bet
        if s.zone and sum(s.zone) > s.bet:
            s.change = sum(s.zone) - s.bet
        return self._record(Action(seat, "check", self.street, s.bet, 0, base="check", rules=rules, note=note),
                            voluntary=True)

    def _apply_bet(self, s: _Seat, target: int, zone_value: int, rules: tuple[str, ...], note: str,
                   no_raise: bool = False) -> Action:
        """Make ``target`` the seat's bet; settle change/owed against the chips physically in the zone."""
        current = self.current_bet
        reach = s.bet + s.stack
        target = max(min(target, reach), s.bet)
        added = target - s.bet
        if zone_value >= target:
            change, owed = zone_value - target, 0
        else:
            change, owed = 0, target - zone_value
        s.stack -= added
        s.committed += added
        s.bet = target
        self._bets_changed(raised=s)
        s.change, s.owed = change, owed
        all_in = s.stack == 0
        full = False
        if target > current:
            base = "bet" if current == 0 else "raise"
            if self.variant.structure == FIXED_LIMIT:
                full = 2 * (target - self.full_level) >= self._limit_bet()  # half a bet counts (TDA 47-2)
            else:
                full = target - current >= self.min_increment
            if full:
                if self.variant.structure != FIXED_LIMIT:
                    self.min_increment = max(self.min_increment, target - current)
                elif self._open_pair and target - self.full_level >= self.limit_bets[1]:
                    self._big_bet_made = True  # from now on the raises are big bets
                    self.min_increment = self.limit_bets[1]
                self.full_level = target
                self.raise_count += 1
                if self.variant.structure == FIXED_LIMIT and self.raise_count >= 1 + self.rules.limit_raise_cap:
                    self._decide_cap()
            self.last_aggressor[self.street_index] = s.seat
        elif target == current and added == 0 and current == s.bet and not all_in:
            base = "check"
        else:
            base = "call"
        s.acted_level = max(current, target)
        if no_raise:
            s.no_raise = True
        kind = "all_in" if all_in else base
        returned = change
        action = Action(s.seat, kind, self.street, target, added, returned, owed, all_in, base, full,
                        tuple(dict.fromkeys(r for r in rules if r)), note)
        return self._record(action, voluntary=True)

    def _decide_cap(self) -> None:
        live = len(self.live_seats)
        if self.rules.limit_heads_up == LIMIT_UNCAPPED_EVENT_HEADS_UP:
            self._uncapped = self.event_heads_up
        else:
            self._uncapped = live == 2  # two players left before the cap: unlimited (CA Actions 3; PP Betting 4)
        self._capped = not self._uncapped

    def _settle_owed(self, s: _Seat, chips: list[int]) -> Ruling:
        value = sum(chips)
        s.zone.extend(chips)
        paid = min(value, s.owed)
        s.owed -= paid
        extra = value - paid
        message = f"seat {s.seat} put in {paid} it owed"
        rules: tuple[str, ...] = ()
        if extra:
            s.change += extra
            message += f"; {extra} more is not part of the bet and goes back"
            rules = ("CA Actions 2", "PP Betting 14", "AC 42")
        if s.owed:
            message += f"; still owes {s.owed}"
        return self._ok("owed_paid", message, s.seat, rules=rules)

    def _record(self, action: Action, voluntary: bool = True) -> Action:
        self.actions.append(action)
        if voluntary:
            self._voluntary_actions.append(action)
            s = self._s.get(action.seat)
            if s is not None and s.passive == "next_action":  # AC 50: that action was the passive one
                s.passive = ""
        return action

    # ---- helpers ------------------------------------------------------------------------------------

    def _validate_seat(self, seat: int, allow_owing: bool = False, folding: bool = False) -> Ruling | None:
        if self.status != "betting":
            return self._reject("hand_over", f"the betting is over ({self.status})", seat)
        if self._awaiting_opener and not folding:
            return self._reject("street_not_open", f"{self.street} is not open: its cards show who acts first "
                                "(start_street)", seat)
        if seat not in self._s:
            return self._reject("unknown_seat", f"seat {seat} is not in the hand", seat)
        s = self._s[seat]
        if s.folded:
            return self._reject("folded", f"seat {seat} has folded", seat)
        if s.stack == 0 and not (allow_owing and s.owed) and not s.pending_incomplete:
            if not allow_owing or not s.owed:
                return self._reject("all_in", f"seat {seat} is all-in", seat)
        return None

    def _reject(self, code: str, message: str, seat: int | None, needs_floor: bool = False) -> Ruling:
        return Ruling(False, code, message, seat, (), (), needs_floor)

    def _ok(self, code: str, message: str, seat: int | None, actions: tuple[Action, ...] = (),
            rules: tuple[str, ...] = ()) -> Ruling:
        return Ruling(True, code, message, seat, actions, rules)
