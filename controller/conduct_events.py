"""What the conduct rules (``controller.conduct``) and the action clock (``controller.clock``) say happened: one
frozen record per kind of event, as ``controller.events`` has for the other parts.

The rules publish each record with the time it happened and, where they know it, its hand (a :class:`RuleEvent`);
the game numbers it in the table's outbox, whose wire form is ``controller.wire``'s (docs/conduct.md lists the
fields), and carries out what it rules on a hand by the record's class. A record that rules on a seat's hand holds
its :class:`SeatRuling`: the ruling, the rule it cites, whether it waits for the floor. Times and durations are
seconds, to the millisecond.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from controller.events import FloorQuestion, MayAskTheFloor

# The rulings (``ruling`` in the events and in a SeatRuling); the house profiles pick them (controller.conduct).
WARNING = "warning"  # the player is warned; play goes on
HAND_MAY_BE_DEAD = "hand_may_be_dead"  # the floor may declare the hand dead (void)
HAND_DEAD = "hand_dead"  # the rule kills the hand
CHECK_OR_FOLD = "check_or_fold"  # the hand stays; on its turn it checks if it can, folds facing a bet (DE 6)
FLOOR_DECIDES = "floor_decides"  # the rule book is silent or names no sanction
HAND_DEAD_FACING_BET = "hand_dead_facing_bet"  # dead if facing a bet or raise (PP Dead hands 1f)
CHECK = "check"
RULINGS = (WARNING, HAND_MAY_BE_DEAD, HAND_DEAD, CHECK_OR_FOLD, FLOOR_DECIDES, HAND_DEAD_FACING_BET, CHECK)

RULING_TEXT = {
    WARNING: "the player is warned; the floor decides any further penalty",
    HAND_MAY_BE_DEAD: "the floor may declare the hand dead",
    HAND_DEAD: "the hand is dead",
    CHECK_OR_FOLD: "the hand stays in; on its turn it is checked if it can check, folded if it faces a bet",
    FLOOR_DECIDES: "the floor decides",
    HAND_DEAD_FACING_BET: "the hand is dead if it faces a bet or a raise",
    CHECK: "the hand is checked",
}


@dataclass(frozen=True, slots=True)
class SeatRuling:
    """What a rule ruled on a seat's hand, by the house ``profile`` (``ruling``: one of ``RULINGS``), with the rule
    it cites ("" where no rule book has one); one that ``needs_floor`` waits for the floor instead of being carried
    out."""

    seat: int
    ruling: str
    rule: str
    needs_floor: bool
    profile: str

    def question(self) -> FloorQuestion | None:
        """What the ruling asks the floor, if it waits for it: a confirm carries the ruling out."""
        if not self.needs_floor:
            return None
        return FloorQuestion(self.seat, (self.rule,) if self.rule else (), ruling=self.ruling, rule=self.rule)


@dataclass(frozen=True, slots=True)
class DeviceBreach(MayAskTheFloor):
    """A device the house forbids is in use at a live seat, from ``since`` (the device was on from
    ``device_since``)."""

    ruled: SeatRuling
    device: str
    since: float
    device_since: float

    @property
    def floor_question(self) -> FloorQuestion | None:
        return self.ruled.question()


@dataclass(frozen=True, slots=True)
class DeviceBreachEnded:
    """A breach ended (``reason``: ``device_off``, ``folded``, ``hand_ended``) after ``duration_s``; ``device_s``:
    how long the device was on, where it was switched off."""

    ruled: SeatRuling  # as the breach began, waiting for nobody
    device: str
    reason: str
    since: float
    duration_s: float
    device_s: float | None = None


@dataclass(frozen=True, slots=True)
class DeviceSeen:
    """Device activity that breaks no rule (``reason``: ``no_live_hand``, ``folded``, ``kind_allowed``), ``state``
    ``started`` or ``ended`` (with ``duration_s``); ``note``: what the house says of such use."""

    seat: int
    device: str
    state: str
    reason: str
    rule: str
    note: str
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class AbsentAtDeal(MayAskTheFloor):
    """A seat dealt in was empty when the deal was complete (at ``deal_t``; empty since ``away_since``, None: since
    before the hand). ``blinds``: what becomes of an absent player's blinds, by the rule ``blinds_rule``."""

    ruled: SeatRuling
    deal_t: float
    away_since: float | None
    blinds: str
    blinds_rule: str

    @property
    def floor_question(self) -> FloorQuestion | None:
        return self.ruled.question()


@dataclass(frozen=True, slots=True)
class SeatLeft(MayAskTheFloor):
    """The player of a live seat left after the deal."""

    ruled: SeatRuling
    blinds: str
    blinds_rule: str

    @property
    def floor_question(self) -> FloorQuestion | None:
        return self.ruled.question()


@dataclass(frozen=True, slots=True)
class SeatReturned:
    """The player who left a live seat came back after ``away_s``."""

    seat: int
    away_s: float


@dataclass(frozen=True, slots=True)
class SeatPresence:
    """Any other change of a presence sensor: the seat is ``present`` or not, after ``duration_s`` the other way
    (None: never reported before)."""

    seat: int
    present: bool
    duration_s: float | None


@dataclass(frozen=True, slots=True)
class ClockDue:
    """The reasonable time is up (after ``waited_s``): the floor may call the clock on the seat."""

    seat: int
    waited_s: float
    rule: str


@dataclass(frozen=True, slots=True)
class ClockStarted:
    """The clock runs on the seat: ``minute_s``, then a ``count_s`` count; ``by``: who called it (``auto``: the
    clock itself)."""

    seat: int
    by: str
    minute_s: float
    count_s: int
    waited_s: float
    rule: str


@dataclass(frozen=True, slots=True)
class ClockTick:
    """``remaining_s`` left of the clock's ``phase`` (``minute``, ``count``)."""

    seat: int
    phase: str
    remaining_s: float


@dataclass(frozen=True, slots=True)
class TimeBankUsed:
    """The seat used a time bank: ``added_s`` more, ``remaining_s`` before the count; ``banks_left`` (None: no
    limit)."""

    seat: int
    added_s: float
    phase: str
    remaining_s: float
    banks_left: int | None
    rule: str


@dataclass(frozen=True, slots=True)
class ClockStopped:
    """The clock stopped (``reason``: ``acted``, ``turn_ended``, ``floor``, then ``by`` whom) in ``phase`` with
    ``remaining_s`` left."""

    seat: int
    reason: str
    phase: str
    remaining_s: float | None
    by: str | None = None


@dataclass(frozen=True, slots=True)
class ClockExpired(MayAskTheFloor):
    """The count ran out: the house's ruling on the hand (PP Dead hands 1f needs ``facing_bet``: whether the player
    faced a bet; None: the betting did not say)."""

    ruled: SeatRuling
    started_by: str | None
    facing_bet: bool | None

    @property
    def floor_question(self) -> FloorQuestion | None:
        return self.ruled.question()


ConductRecord = (DeviceBreach | DeviceBreachEnded | DeviceSeen | AbsentAtDeal | SeatLeft | SeatReturned
                 | SeatPresence)
ClockRecord = ClockDue | ClockStarted | ClockTick | TimeBankUsed | ClockStopped | ClockExpired


@dataclass(frozen=True, slots=True)
class RuleEvent:
    """A record of the conduct rules or the clock, at ``t`` (when it happened), in ``hand`` (None outside a hand,
    or when the rules do not know it: the clock knows no hands; the game's hand applies)."""

    record: ConductRecord | ClockRecord
    t: float
    hand: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "t", float(self.t))  # a time given as an int is published as a float


Publish = Callable[[RuleEvent], None]  # where a rule set's events go, one by one (GameController: the outbox)
