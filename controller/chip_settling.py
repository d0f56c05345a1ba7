"""The chips of one hand settling in the betting zones and the pot (``Settling``), what a settled motion pushes
(``PushReader``), and the forced bets whose chips come after the deal (``ForcedBetsDue``, ``LateAntes``).

* a bet is read once its chips have *settled*: no chip arrived in or left that seat's zone for ``settle_s``. All the
  chips of one settled motion are one push (TDA 45: a bet is made in one motion);
* where a chip that left a betting zone went is known only once the reader's whole pass is in: into the pot (the
  dealer collects, the round is over), taken back by the player whose turn it is (TDA 46), or otherwise change given
  or the zone tidied (the engine's amounts stand);
* a blind's chips are its forced bet whenever they arrive, before or after the deal: a push pays what its seat
  still owes of its forced bet first, and only the rest is the seat's action (in turn, or out of turn as the house
  rules it);
* so are the antes' chips: those that come into the pot after the deal, until the first round's bets are collected,
  pay the antes still short;
* a pile is read whole only over several reader passes, so the pot is counted once it has not changed for
  ``pile_s``; the pot's chips that reach a seat's stack zone are where the dealer pushed the pot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from controller.betting import BettingHand
from controller.levels import Level
from controller.rules import UNPLAYABLE_BELOW_FORCED_BET_CHIP, UNPLAYABLE_NOT_DIVISIBLE


@dataclass
class Motion:
    """Chips moving in or out of one seat's betting zone that have not settled into a push yet."""

    arrived: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    last_change: float = 0.0
    undone: bool = False  # the chips of an undone push: a declaration entered now comes before them


@dataclass(frozen=True)
class PushRead:
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


def without_value(chips: list[int], value: int) -> list[int]:
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


def forced_bet_part(chips: list[int], due: int) -> tuple[int, list[int], list[int]]:
    """How ``chips`` pay a forced bet of which ``due`` is still to come: the largest chips that fit go in first; where
    they do not make it up, the smallest chip left that covers the rest pays it, and what that chip is worth beyond
    it stays with the player's push (as change would). Returns what is paid, the chips wholly in the forced bet, and
    the rest of the push."""
    forced, rest = [], []
    for chip in sorted(chips, reverse=True):
        if chip <= due:
            forced.append(chip)
            due -= chip
        else:
            rest.append(chip)
    paid = sum(forced)
    if due and rest:
        chip = min(rest)  # (rest holds only chips larger than what is still due)
        rest.remove(chip)
        rest.append(chip - due)
        paid += due
    return paid, forced, sorted(rest)


class ForcedBetsDue:
    """The forced bets the engine posted whose chips were not all in their zones when the betting began: the blinds
    are often put in after the cards are dealt. A seat's chips pay what it owes of its forced bet first, whenever
    they come; only the rest of the push is the seat's action."""

    def __init__(self, posted: Mapping[int, int], seen: Mapping[int, int]):
        self.posted = dict(posted)  # seat → the forced bet the engine posted for it
        self.due = {s: amount - seen.get(s, 0) for s, amount in posted.items() if amount > seen.get(s, 0)}

    def split(self, seat: int, chips: list[int]) -> tuple[int, list[int], list[int]]:
        """``chips`` pushed by ``seat``: what would pay its forced bet, the chips wholly in it, and the rest of the
        push (nothing changes: :meth:`pay` does)."""
        due = self.due.get(seat, 0)
        if not due or not chips:
            return 0, [], list(chips)
        return forced_bet_part(chips, due)

    def pay(self, seat: int, paid: int) -> None:
        """``seat`` paid ``paid`` of its forced bet; a negative amount: an undone push's payment is due again."""
        if paid:
            self.due[seat] = self.due.get(seat, 0) - paid

    def unpaid(self) -> list[tuple[int, int, int]]:
        """The forced bets still short, as (seat, posted, seen in the zone); none is due after this."""
        short = [(s, self.posted[s], self.posted[s] - due) for s, due in sorted(self.due.items()) if due]
        self.due.clear()
        return short


class LateAntes:
    """The antes, which like a blind may be put in after the deal. Where the pot held less than the antes the engine
    posted when the betting began, the chips that come into the pot until the first round's bets are collected pay
    them, save those that lay in a betting zone this hand (bets on their way to the pot)."""

    def __init__(self) -> None:
        self.bet_chips: set[str] = set()  # every chip that lay in a betting zone this hand
        self.posted = 0  # the antes still to be paid in full (0: none due)
        self.paid: dict[str, int] = {}  # the chips in the pot that pay them: uid → value

    def chip_arrived(self, uid: str, value: int, what: str) -> None:
        """A chip of the set arrived in a chip zone (``what``: its kind)."""
        if what == "bets":
            self.bet_chips.add(uid)
        elif what == "pot" and self.posted and uid not in self.bet_chips:
            self.paid[uid] = value

    def due(self, posted: int, in_pot: Mapping[str, int], in_bets: Iterable[str]) -> None:
        """The betting began with ``posted`` antes and, fewer, the chips ``in_pot``; ``in_bets``: the chips lying in
        the betting zones then (some came before this hand's reading did)."""
        self.posted, self.paid = posted, dict(in_pot)
        self.bet_chips.update(in_bets)

    def unpaid(self) -> tuple[int, int] | None:
        """The antes posted and the chips that came for them, where those differ; none is due after this."""
        posted, seen = self.posted, sum(self.paid.values())
        self.posted, self.paid = 0, {}
        return (posted, seen) if posted and seen != posted else None


@dataclass
class PushReader:
    """How one hand reads the chips of a settled motion, fixed when its betting begins: the chips' values, the
    house's rule on chips that do not play (``RuleProfile.unplayable_chips``), the smallest chip of the blinds and
    antes (a forced bet whose chips arrive after the deal may lower it: ``forced_chips``), the stakes."""

    values: Mapping[str, int]  # tag UID → denomination
    unplayable: str
    smallest_forced_chip: int | None
    stakes: Level

    def forced_chips(self, chips: list[int]) -> None:
        """Chips of a forced bet that arrived after the deal."""
        if chips:
            self.smallest_forced_chip = min(chips + ([self.smallest_forced_chip] if self.smallest_forced_chip else []))

    def read(self, seat: int, chips: list[int], withdrawn: list[int], hand: BettingHand) -> PushRead | None:
        """What a motion that settled pushes against ``hand`` (``chips``: the values that arrived, less any that
        paid a forced bet; ``withdrawn``: those that left), None: nothing. What does not play is a
        ``bet_ruling`` (``code``) with the amount that ``stands`` and what is ``returned`` to the player.

        PP Betting 7: "Smaller chips than this amount [the smallest chip used in the antes, blinds] do not play even
        in quantity". CA GR 8 / CA Stakes 1: "All bets placed must be divisible by the ante or small blind [...] The
        player will be reimbursed for any resulting spike" (by the big blind where the small blind does not divide
        it, as at 2/5); a call of an odd amount and an all-in stand as pushed."""
        if not chips and not withdrawn:
            return None
        if withdrawn:
            return PushRead(chips, withdrawn, chips)
        playing, code = list(chips), ""
        if self.unplayable == UNPLAYABLE_BELOW_FORCED_BET_CHIP and self.smallest_forced_chip is not None:
            playing = [c for c in chips if c >= self.smallest_forced_chip]
            code = "chips_do_not_play"
        elif self.unplayable == UNPLAYABLE_NOT_DIVISIBLE:
            stakes = self.stakes
            unit = stakes.ante or stakes.small_blind
            if unit <= 0 or stakes.big_blind % unit:
                unit = stakes.big_blind
            target = hand.bets.get(seat, 0) + sum(chips)
            spike = target % unit if unit > 0 else 0
            all_in = sum(chips) >= hand.stacks.get(seat, 0)
            if spike and not all_in and target - spike >= hand.current_bet and target != hand.current_bet:
                playing = without_value(chips, spike)
                code = "bet_not_divisible"
        if not code or sum(chips) == sum(playing):
            return PushRead(chips, [], chips)
        return PushRead(playing, [], chips, code)


class Settling:
    """The chips of one hand on their way: the motions in the betting zones, the chips that left one this pass, the
    bets the dealer is collecting, and the pot to count."""

    def __init__(self, settle_s: float, pile_s: float):
        self.settle_s = settle_s
        self.pile_s = pile_s
        self.motions: dict[int, Motion] = {}  # by seat
        self.departed: list[tuple[str, int]] = []  # chips that left a betting zone this pass, with the seat
        self.collecting: set[str] = set()  # chips the dealer is moving from betting zones to the pot
        self.pot_check_due = False
        self.pot_changed_at = 0.0
        self.pot_chips: set[str] = set()  # chips that lay in the pot this hand
        self.pushed: dict[int, int] = {}  # pot chips that reached a seat's stack zone, by seat

    # ---- chips arriving and leaving ------------------------------------------------------------------

    def into_pot(self, uid: str, t: float) -> None:
        self.pot_changed_at = t
        self.pot_chips.add(uid)

    def into_stack(self, seat: int, uid: str, value: int) -> None:
        if uid in self.pot_chips:  # the dealer pushes the pot to a player
            self.pushed[seat] = self.pushed.get(seat, 0) + value

    def out_of_pot(self, t: float) -> None:
        self.pot_changed_at = t

    def out_of_bets(self, uid: str, seat: int) -> None:
        # where the chip went is known only once the whole pass is in: resolved at the next tick
        self.departed.append((uid, seat))

    def moved(self, seat: int, t: float) -> Motion:
        """The seat's motion, which changed at ``t``."""
        motion = self.motions.setdefault(seat, Motion())
        motion.last_change = t
        return motion

    def take(self, seat: int) -> Motion | None:
        """The seat's motion, settled: no longer moving."""
        return self.motions.pop(seat, None)

    def back_in_motion(self, seat: int, arrived: list[str], left: list[str], in_zone: Mapping[str, int],
                       t: float) -> None:
        """The chips of an undone push are moving again, before any that moved since: those still in the zone
        (``in_zone``) as arrived, those no longer there as taken back."""
        motion = self.motions.setdefault(seat, Motion())
        motion.arrived[:0] = [u for u in arrived if u in in_zone and u not in motion.arrived]
        motion.left[:0] = [u for u in left if u not in in_zone and u not in motion.left]
        motion.last_change, motion.undone = max(motion.last_change, t), True

    def departures(self, t: float, pot: Mapping[str, int], hand: BettingHand) -> tuple[list[tuple[str, int]], bool]:
        """Place the chips that left a betting zone: into the pot (the dealer collects: ``True`` comes back with
        them), or taken away. Nothing is left to place."""
        departed, self.departed = self.departed, []
        collected = False
        for uid, seat in departed:
            if uid in self.collecting:
                self.collecting.discard(uid)
                continue
            if uid in pot:
                collected = True
                continue
            motion = self.motions.get(seat)
            if motion and uid in motion.arrived:  # put down and picked up again within the motion
                motion.arrived.remove(uid)
                motion.last_change = t
                continue
            facing = hand.to_act() == seat and (hand.to_call(seat) > 0 or bool(motion and motion.arrived))
            if facing:
                self.moved(seat, t).left.append(uid)  # taken back by the player whose turn it is (TDA 46)
            # otherwise the dealer gave change or tidied the zone; the engine's amounts stand
        return departed, collected

    def collected(self, departed: list[tuple[str, int]]) -> None:
        """The chips that left the betting zones as the dealer collected are in the pot: none is on its way."""
        self.collecting.difference_update(uid for uid, _ in departed)

    def street_over(self, bets: Iterable[str], t: float) -> None:
        """The dealer collects: the chips in the betting zones (``bets``) and those on their way are going into
        the pot, nothing is settling any more, and the pot is counted once it settles."""
        self.collecting.update(bets)
        self.collecting.update(uid for uid, _ in self.departed)  # already on their way to the pot
        self.motions.clear()
        self.pot_check_due = True
        self.pot_changed_at = max(self.pot_changed_at, t)

    def pot_counted(self) -> None:
        self.pot_check_due = False

    # ---- time --------------------------------------------------------------------------------------------

    def in_order(self) -> list[int]:
        """The seats whose chips are settling, in the order their motions last changed."""
        return sorted(self.motions, key=lambda s: self.motions[s].last_change)

    def settled(self, now: float) -> list[int]:
        """The seats whose motion has settled by ``now``."""
        return [s for s, m in self.motions.items() if now - m.last_change >= self.settle_s]

    def pot_settled(self, now: float) -> bool:
        """The pot is to be counted: it has not changed for ``pile_s`` and no bets are on their way to it."""
        return self.pot_check_due and now - self.pot_changed_at >= self.pile_s and not self.collecting

    def next_due(self, betting: bool) -> float:
        """The earliest time a motion settles or (``betting``) the pot is counted."""
        due = float("inf")
        for motion in self.motions.values():
            due = min(due, motion.last_change + self.settle_s)
        if self.pot_check_due and betting:
            due = min(due, self.pot_changed_at + self.pile_s)
        return due
