"""Conduct the table can sense: electronic devices and presence at the seats (docs/rules.md section 6).

Pure and deterministic: no clock is read and nothing is written. :class:`ConductRules` is fed the seat sensors
(``device``, ``presence``, or ``sensor`` with a :class:`hal.events.SensorEvent`) and the hand's progress
(``hand_started``, ``card_dealt``, ``deal_complete``, ``folded``, ``hand_ended``), each with the time it happened,
and publishes the :class:`RuleEvent` s it causes — a record of ``controller.conduct_events`` with its time — to the
``publish`` it was given at construction (the game's: into the table's outbox, with the rulings applied), one by
one, in order. That is the only way out of the rules for their events: the methods that take an input return None.

What the rule books say, and what each house profile makes of it (:data:`CONDUCT_PROFILES`, keyed like
``controller.rules.PROFILES`` — tests/test_conduct.py checks that every rule profile has one — every setting
citing the rules it follows, or none):

* **Devices.** CA GR 5: no electronic device may be used once a player has looked at their cards; the floor may
  declare the hand void; devices are kept beneath the table edge while the game is in progress. AC 4: no mobile
  phone while the hand is live; other devices (MP3 …) are allowed. The table cannot see a player look at their
  cards: a seat counts as *live* from the first card dealt to it until it folds or the hand ends.
* **Presence.** CA GR 6 and AC 25: a player not seated when the last card of the deal is dealt has an invalid hand.
  CA GR 11 and AC 26: a player in a hand must stay seated; the hand may be voided (CA) or the player penalised (AC).
  DE 6: an absent player's blinds are taken, cards are dealt to the seat, and the hand is folded when it faces a
  bet, checked otherwise. CA Stakes 4 / CA GR 6: blinds are taken even when the player is away.
* The stored TDA translation and the Poker-Play house rules have no rule on devices or presence (the TDA text
  carries only the heading "Elektronische Geräte und Kommunikation", fused into 46-3, without its body): their
  profiles leave the ruling to the floor and cite nothing for it (docs/conduct.md explains each such setting).

Events (as published, with their records in ``controller.conduct_events``; the payload fields are in
docs/conduct.md):

* ``device_breach`` (``DeviceBreach``, ``DeviceBreachEnded``) — device activity at a live seat, with a device kind
  the profile forbids. ``state`` is ``started`` (at once: the floor is told when it begins, ``needs_floor`` as the
  profile says) and ``ended`` (with ``duration_s``) when the activity stops, the seat folds or the hand ends.
* ``device_seen`` — device activity that breaks no rule (no live hand at the seat, the seat folded, or a kind
  the profile allows): information only, ``started`` and ``ended`` like a breach, never ``needs_floor``.
* ``absent_at_deal`` — a seat dealt in was not occupied when the deal was complete.
* ``seat_left`` / ``seat_returned`` — the player of a live seat left after the deal / came back.
* ``seat_presence`` — any other change of a presence sensor (seat occupancy, for the floor software).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from controller.conduct_events import (CHECK, CHECK_OR_FOLD, FLOOR_DECIDES, HAND_DEAD, HAND_DEAD_FACING_BET,
                                       HAND_MAY_BE_DEAD, RULING_TEXT, RULINGS, WARNING, AbsentAtDeal, DeviceBreach,
                                       DeviceBreachEnded, DeviceSeen, Publish, RuleEvent, SeatLeft, SeatPresence,
                                       SeatReturned, SeatRuling)
from controller.floor import HAND_END, LAPSES, NEVER
from hal.events import DEVICE_KINDS, SensorEvent

# An absent player's blinds.
BLINDS_POSTED = "posted"  # taken from the stack even when the player is away
BLINDS_NOT_SPECIFIED = "not_specified"



@dataclass(frozen=True)
class ConductProfile:
    """A house's rules on devices, presence and the action clock. ``sources`` has every setting: the rules it
    follows, as an event cites them (``rule``), or "" where no rule book has one."""

    name: str
    device_kinds: tuple[str, ...]  # the device kinds that may not be used at a live seat
    device_ruling: str
    device_needs_floor: bool
    device_outside_note: str  # what the log says of device activity that breaks no rule
    device_lapses: str  # how long a breach waits for the floor (controller.floor: HAND_END, NEVER)
    absent_at_deal: str  # ruling for a seat dealt in but empty when the deal is complete
    absent_at_deal_needs_floor: bool
    left_during_hand: str  # ruling for a player leaving a live seat
    left_during_hand_needs_floor: bool
    left_during_hand_lapses: str  # how long leaving a live seat waits for the floor
    absent_blinds: str  # an absent player's blinds: BLINDS_POSTED or BLINDS_NOT_SPECIFIED
    clock_ruling: str  # when the action clock runs out: HAND_DEAD or HAND_DEAD_FACING_BET
    clock_needs_floor: bool
    sources: Mapping[str, str] = field(default_factory=dict)

    def cite(self, setting: str) -> str:
        return self.sources.get(setting, "")

    def lapses(self, record: object) -> str:
        """How long a ruling of the seat sensors or the clock (its record) waits for the floor (docs/events.md): a
        penalty on the player as the house says, a ruling on the hand until it ends."""
        if isinstance(record, DeviceBreach):
            return self.device_lapses
        if isinstance(record, SeatLeft):
            return self.left_during_hand_lapses
        return HAND_END


# Rulings of the seat sensors and the clock that kill the hand once the floor confirms them while the hand runs
# (docs/conduct.md); confirmed later, they only acknowledge.
FLOOR_KILLS = (HAND_MAY_BE_DEAD, HAND_DEAD, FLOOR_DECIDES, HAND_DEAD_FACING_BET)
RULING_EVENTS = ("device_breach", "seat_left", "absent_at_deal", "clock_expired")  # whose rulings may kill it


def confirm_kills(event_type: str, ruling: str) -> bool:
    """Whether the floor's confirm of a ruling (of an event of ``event_type``) kills the hand, while it runs."""
    return event_type in RULING_EVENTS and ruling in FLOOR_KILLS


def _conduct_profile(**kwargs: Any) -> ConductProfile:
    sources = kwargs.pop("sources")
    names = {f.name for f in fields(ConductProfile)} - {"name", "sources"}
    missing = names - set(sources)
    assert not missing, f"every setting names its rules (or none: \"\"); missing: {sorted(missing)}"
    profile = ConductProfile(**kwargs, sources=MappingProxyType(sources))
    assert set(profile.device_kinds) <= set(DEVICE_KINDS)
    for ruling in (profile.device_ruling, profile.absent_at_deal, profile.left_during_hand, profile.clock_ruling):
        assert ruling in RULINGS, ruling
    assert {profile.device_lapses, profile.left_during_hand_lapses} <= set(LAPSES)
    return profile


# A penalty on the player (a warning, a time penalty, missed hands, exclusion) is not the hand's: the floor gives it
# once the hand is played out (AC 50), so a breach waits until the floor answers.
_PENALTY_AFTER_THE_HAND = "AC 50 (a penalty once the hand is played out)"
# What the rules do not describe, the tournament management decides (DE 14): devices, the clock.
_DE_UNDESCRIBED = "DE 14 (situations the rules do not describe: the tournament management decides)"
_CLOCK_COUNT = "AC 23 (a reasonable time, one minute, a 10-second count, then the cards are mucked)"

CONDUCT_PROFILES: Mapping[str, ConductProfile] = MappingProxyType({p.name: p for p in (
    _conduct_profile(
        name="casinos_austria",
        device_kinds=DEVICE_KINDS,
        device_ruling=HAND_MAY_BE_DEAD,
        device_needs_floor=True,
        device_outside_note="devices are allowed when the player is not in a hand, but kept beneath the edge of "
                            "the table while the game is in progress; calls only away from the table",
        device_lapses=NEVER,
        absent_at_deal=HAND_DEAD,
        absent_at_deal_needs_floor=False,
        left_during_hand=HAND_MAY_BE_DEAD,
        left_during_hand_needs_floor=True,
        left_during_hand_lapses=HAND_END,
        absent_blinds=BLINDS_POSTED,
        clock_ruling=HAND_DEAD,
        clock_needs_floor=False,
        sources={
            "device_kinds": "CA GR 5 (mobile phones, tablets, laptops, cameras and other electronic devices)",
            "device_ruling": "CA GR 5 (the floor may declare the hand void; warning, time penalty, dead hand or "
                             "exclusion)",
            "device_needs_floor": "CA GR 5 (the tournament management or the floor staff decide)",
            "device_outside_note": "CA GR 5 (use allowed only when not in a hand; devices beneath the table edge)",
            "device_lapses": "CA GR 5, CA Penalties 4 (a verbal warning, a time penalty or exclusion from the "
                             "game)",
            "absent_at_deal": "CA GR 6 (the hand of a player not seated at the end of the deal is invalid)",
            "absent_at_deal_needs_floor": "CA GR 6 (the hand is invalid)",
            "left_during_hand": "CA GR 11 (players in a hand remain seated; the hand may be declared void)",
            "left_during_hand_needs_floor": "CA GR 11 (the hand may be declared void)",
            "left_during_hand_lapses": "CA GR 11 (the hand may be declared void)",
            "absent_blinds": "CA Stakes 4, CA GR 6 (blinds are retained even when the player is not present)",
            "clock_ruling": f"CA GR 2 (act in turn), CA GR 5 (time bank cards), {_CLOCK_COUNT}",
            "clock_needs_floor": "AC 23 (the cards are mucked at the end of the count)",
        },
    ),
    _conduct_profile(
        name="allin_club",
        device_kinds=("phone",),
        device_ruling=WARNING,
        device_needs_floor=True,
        device_outside_note="phones are allowed when the player has no live hand; other devices always",
        device_lapses=NEVER,
        absent_at_deal=HAND_DEAD,
        absent_at_deal_needs_floor=False,
        left_during_hand=FLOOR_DECIDES,
        left_during_hand_needs_floor=True,
        left_during_hand_lapses=NEVER,
        absent_blinds=BLINDS_NOT_SPECIFIED,
        clock_ruling=HAND_DEAD,
        clock_needs_floor=False,
        sources={
            "device_kinds": "AC 4 (no mobile phone while the hand is live; other devices, MP3 etc., are allowed)",
            "device_ruling": "AC 4 (no mobile phone while the hand is live), AC 1 (the organisers decide)",
            "device_needs_floor": "AC 1",
            "device_outside_note": "AC 4",
            "device_lapses": f"AC 48 (warnings, missed hands, disqualification), {_PENALTY_AFTER_THE_HAND}",
            "absent_at_deal": "AC 25 (the player must be at the seat when the last card of the deal is dealt)",
            "absent_at_deal_needs_floor": "AC 25 (the cards are not live)",
            "left_during_hand": "AC 26 (a player with a live hand stays at the seat; breaches may be penalised)",
            "left_during_hand_needs_floor": "AC 26, AC 1",
            "left_during_hand_lapses": f"AC 26 (the player may be penalised), {_PENALTY_AFTER_THE_HAND}",
            "absent_blinds": "AC 27 (blinds by position)",
            "clock_ruling": _CLOCK_COUNT,
            "clock_needs_floor": "AC 23",
        },
    ),
    _conduct_profile(
        name="club_tournament_de",
        device_kinds=DEVICE_KINDS,
        device_ruling=WARNING,
        device_needs_floor=True,
        device_outside_note="the rules say nothing on devices",
        device_lapses=NEVER,
        absent_at_deal=CHECK_OR_FOLD,
        absent_at_deal_needs_floor=False,
        left_during_hand=CHECK_OR_FOLD,
        left_during_hand_needs_floor=False,
        left_during_hand_lapses=HAND_END,
        absent_blinds=BLINDS_POSTED,
        clock_ruling=HAND_DEAD,
        clock_needs_floor=False,
        sources={
            "device_kinds": _DE_UNDESCRIBED,
            "device_ruling": _DE_UNDESCRIBED,
            "device_needs_floor": _DE_UNDESCRIBED,
            "device_outside_note": _DE_UNDESCRIBED,
            "device_lapses": f"DE 14, {_PENALTY_AFTER_THE_HAND}",
            "absent_at_deal": "DE 6 (the absent player's seat is dealt; the hand is folded facing a bet, checked "
                              "otherwise)",
            "absent_at_deal_needs_floor": "DE 6",
            "left_during_hand": "DE 6 (absence: folded facing a bet, checked otherwise)",
            "left_during_hand_needs_floor": "DE 6",
            "left_during_hand_lapses": "DE 6 (folded facing a bet, checked otherwise)",
            "absent_blinds": "DE 6 (the dealer takes the blinds from the absent player's stack)",
            "clock_ruling": f"DE 14, {_CLOCK_COUNT}",
            "clock_needs_floor": "AC 23",
        },
    ),
    _conduct_profile(
        name="tda",
        device_kinds=DEVICE_KINDS,
        device_ruling=WARNING,
        device_needs_floor=True,
        device_outside_note="the rules say nothing on devices",
        device_lapses=NEVER,
        absent_at_deal=HAND_DEAD,
        absent_at_deal_needs_floor=True,
        left_during_hand=FLOOR_DECIDES,
        left_during_hand_needs_floor=True,
        left_during_hand_lapses=HAND_END,
        absent_blinds=BLINDS_NOT_SPECIFIED,
        clock_ruling=HAND_DEAD,
        clock_needs_floor=False,
        sources={
            # the TDA text has no rule on devices, presence or the clock (docs/conduct.md): the floor decides,
            # and the rules of another house are followed where the table must rule by itself
            "device_kinds": "",
            "device_ruling": "",
            "device_needs_floor": "",
            "device_outside_note": "",
            "device_lapses": _PENALTY_AFTER_THE_HAND,
            "absent_at_deal": "AC 25 (the player must be at the seat when the last card of the deal is dealt)",
            "absent_at_deal_needs_floor": "",
            "left_during_hand": "",
            "left_during_hand_needs_floor": "",
            "left_during_hand_lapses": "",
            "absent_blinds": "",
            "clock_ruling": _CLOCK_COUNT,
            "clock_needs_floor": "AC 23",
        },
    ),
    _conduct_profile(
        name="poker_play",
        device_kinds=DEVICE_KINDS,
        device_ruling=WARNING,
        device_needs_floor=True,
        device_outside_note="the house rules say nothing on devices",
        device_lapses=NEVER,
        absent_at_deal=FLOOR_DECIDES,
        absent_at_deal_needs_floor=True,
        left_during_hand=FLOOR_DECIDES,
        left_during_hand_needs_floor=True,
        left_during_hand_lapses=HAND_END,
        absent_blinds=BLINDS_NOT_SPECIFIED,
        clock_ruling=HAND_DEAD_FACING_BET,
        clock_needs_floor=False,
        sources={
            # no rule on devices, leaving the seat or an absent player's blinds: the floor decides
            "device_kinds": "",
            "device_ruling": "",
            "device_needs_floor": "",
            "device_outside_note": "",
            "device_lapses": _PENALTY_AFTER_THE_HAND,
            "absent_at_deal": "PP Misdeals 1j (an absent player without a posted blind may be dealt out)",
            "absent_at_deal_needs_floor": "",
            "left_during_hand": "",
            "left_during_hand_needs_floor": "",
            "left_during_hand_lapses": "",
            "absent_blinds": "",
            "clock_ruling": "PP Dead hands 1f (under the clock, past the time limit facing a bet or raise: dead)",
            "clock_needs_floor": "PP Dead hands 1f",
        },
    ),
)})



def conduct_profile(name: str) -> ConductProfile:
    """The named profile; ``KeyError`` lists the known names."""
    try:
        return CONDUCT_PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown rule profile {name!r}; known: {', '.join(CONDUCT_PROFILES)}") from None


def _r(t: float) -> float:
    return round(float(t), 3)


@dataclass
class _Seat:
    present: bool | None = None  # None: no presence sensor report yet
    present_since: float | None = None
    changes: list[tuple[float, bool]] = field(default_factory=list)  # this hand's presence changes, in time order
    present_at_hand_start: bool | None = None
    live_since: float | None = None  # the first card of this hand
    folded: bool = False
    devices: dict[str, float] = field(default_factory=dict)  # kind → active since
    breaches: dict[str, float] = field(default_factory=dict)  # kind → breach since
    absent_at_deal: bool = False
    left_at: float | None = None  # left the live seat at

    def live(self) -> bool:
        return self.live_since is not None and not self.folded


class ConductRules:
    """The device and presence rules of one house profile, for a table of ``seats`` seats.

    ``present``: who is seated when the rules start (``GpioInputs.states()`` read at start-up); seats without a
    presence sensor stay unknown and never count as absent. ``settle_s``: how long after ``deal_complete`` the
    absent-at-deal decision waits for presence changes still inside the HAL's debounce window (their time is when
    the level changed, so they arrive late); 0 decides at once. Any call with a later time, or :meth:`tick`,
    takes the pending decision.

    Every input method takes the time it happened and publishes the events it causes, in order, to ``publish``
    (required: the rules have no other way to give them; the method returns None). Times must not go back, except
    a sensor's (a debounced change is stamped when the level changed).
    """

    def __init__(self, profile: str | ConductProfile, seats: int, *, present: Mapping[int, bool] | None = None,
                 settle_s: float = 0.0, publish: Publish):
        self.profile = profile if isinstance(profile, ConductProfile) else conduct_profile(profile)
        if not isinstance(seats, int) or isinstance(seats, bool) or not 1 <= seats <= 10:
            raise ValueError(f"seats: expected a number of seats from 1 to 10, got {seats!r}")
        if settle_s < 0:
            raise ValueError(f"settle_s: expected seconds >= 0, got {settle_s!r}")
        self.seats = seats
        self.settle_s = float(settle_s)
        self._publish = publish
        self._seats = {n: _Seat() for n in range(1, seats + 1)}
        for seat, is_present in (present or {}).items():
            state = self._seat(seat)
            state.present = state.present_at_hand_start = bool(is_present)
        self.hand: int | None = None
        self.in_hand = False
        self._deal_t: float | None = None  # when the deal was complete
        self._deal_seats: tuple[int, ...] = ()
        self._deal_decided = False

    def _publish_each(self, events: list[RuleEvent]) -> None:
        """A public method's events, published one by one, in order (the game applies a ruling before the next
        event). Only the public methods publish: the ones they call are the private ``_<name>``, which return their
        events to be combined."""
        for event in events:
            self._publish(event)

    # ---- the hand -----------------------------------------------------------------------------------

    def hand_started(self, t: float, hand: int | None = None) -> None:
        """A new hand (ends a running one first). ``hand``: the controller's number; None counts on from the last."""
        self._publish_each(self._hand_started(t, hand))

    def _hand_started(self, t: float, hand: int | None = None) -> list[RuleEvent]:
        out = self._hand_ended(t) if self.in_hand else []
        self.hand = hand if hand is not None else (self.hand or 0) + 1
        self.in_hand = True
        self._deal_t, self._deal_seats, self._deal_decided = None, (), False
        for state in self._seats.values():
            state.changes.clear()
            state.present_at_hand_start = state.present
            state.live_since, state.folded, state.absent_at_deal, state.left_at = None, False, False, None
            state.breaches.clear()
        return out

    def card_dealt(self, seat: int, t: float, hand: int | None = None) -> None:
        """A card reached ``seat`` (starts a hand if none is running). The first one makes the seat live: a device
        already active there becomes a breach now."""
        self._publish_each(self._card_dealt(seat, t, hand))

    def _card_dealt(self, seat: int, t: float, hand: int | None = None) -> list[RuleEvent]:
        out = self._settle(t)
        if not self.in_hand or (hand is not None and hand != self.hand):
            out += self._hand_started(t, hand)
        state = self._seat(seat)
        if state.live_since is None and not state.folded:
            state.live_since = t
            for kind, since in sorted(state.devices.items()):
                if kind in self.profile.device_kinds:
                    out.append(self._breach_started(seat, kind, t, since))
        return out

    def deal_complete(self, t: float, seats_dealt: Iterable[int] | None = None) -> None:
        """The last card of the deal was dealt at ``t`` (AC 25: "at the moment the last card is dealt").
        ``seats_dealt``: the seats dealt in (None: every seat that got a card). A seat not occupied then is
        reported (``absent_at_deal``) once ``settle_s`` has passed."""
        self._publish_each(self._deal_complete(t, seats_dealt))

    def _deal_complete(self, t: float, seats_dealt: Iterable[int] | None = None) -> list[RuleEvent]:
        out = self._settle(t)
        if not self.in_hand:
            return out
        dealt = [n for n, s in self._seats.items() if s.live_since is not None] if seats_dealt is None \
            else [self._check_seat(n) for n in seats_dealt]
        self._deal_t, self._deal_seats, self._deal_decided = t, tuple(sorted(set(dealt))), False
        return out + self._settle(t)

    def deal_decision_pending(self) -> bool:
        """The deal is complete and who was absent at it is not decided yet (the settle time is running)."""
        return self.in_hand and self._deal_t is not None and not self._deal_decided

    def folded(self, seat: int, t: float) -> None:
        """``seat`` folded (its hand is no longer live): an ongoing breach there ends."""
        self._publish_each(self._folded(seat, t))

    def _folded(self, seat: int, t: float) -> list[RuleEvent]:
        out = self._settle(t)
        state = self._seat(seat)
        for kind in sorted(state.breaches):
            out.append(self._breach_ended(seat, kind, t, "folded"))
        state.folded = True
        return out

    def hand_ended(self, t: float) -> None:
        """The hand is over: a pending absent-at-deal decision is taken, ongoing breaches end."""
        self._publish_each(self._hand_ended(t))

    def _hand_ended(self, t: float) -> list[RuleEvent]:
        if not self.in_hand:
            return []
        out = self._settle(t, force=True)
        for seat, state in self._seats.items():
            for kind in sorted(state.breaches):
                out.append(self._breach_ended(seat, kind, t, "hand_ended"))
            state.live_since, state.left_at = None, None
        self.in_hand = False
        return out

    def next_due(self) -> float:
        """The earliest time :meth:`tick` has a decision to take (inf: none)."""
        if not self.in_hand or self._deal_t is None or self._deal_decided:
            return math.inf
        return self._deal_t + self.settle_s

    def tick(self, now: float) -> None:
        """Let time pass: takes the absent-at-deal decision once ``settle_s`` has passed."""
        self._publish_each(self._tick(now))

    def _tick(self, now: float) -> list[RuleEvent]:
        return self._settle(now)

    # ---- the sensors --------------------------------------------------------------------------------

    def sensor(self, event: SensorEvent) -> None:
        """A :class:`SensorEvent` from the table's GPIO (``rfid_table.service.table_gpio.GpioConsole``)."""
        self._publish_each(self._sensor(event))

    def _sensor(self, event: SensorEvent) -> list[RuleEvent]:
        if event.sensor == "presence":
            return self._presence(event.seat, event.active, event.t)
        if event.sensor == "device":
            return self._device(event.seat, event.active, event.t, event.detects or "device")
        raise ValueError(f"sensor {event.sensor!r}: expected presence or device")

    def device(self, seat: int, active: bool, t: float, kind: str = "device") -> None:
        """The device sensor of ``seat`` detects (``active``) or no longer detects a device of ``kind``
        (one of ``hal.events.DEVICE_KINDS``). Repeating the current state changes nothing."""
        self._publish_each(self._device(seat, active, t, kind))

    def _device(self, seat: int, active: bool, t: float, kind: str = "device") -> list[RuleEvent]:
        if kind not in DEVICE_KINDS:
            raise ValueError(f"device kind {kind!r}: expected one of {', '.join(DEVICE_KINDS)}")
        out = self._settle(t)
        state = self._seat(seat)
        if active:
            if kind in state.devices:
                return out
            state.devices[kind] = t
            if self.in_hand and state.live_since is not None and state.live() and kind in self.profile.device_kinds:
                out.append(self._breach_started(seat, kind, max(t, state.live_since), t))
            else:
                out.append(self._seen(seat, kind, t, "started", self._why_allowed(state, kind)))
            return out
        if kind not in state.devices:
            return out
        since = state.devices.pop(kind)
        if kind in state.breaches:
            out.append(self._breach_ended(seat, kind, t, "device_off", device_since=since))
        else:
            out.append(self._seen(seat, kind, t, "ended", self._why_allowed(state, kind),
                                  duration_s=_r(max(0.0, t - since))))
        return out

    def presence(self, seat: int, present: bool, t: float) -> None:
        """The presence sensor of ``seat``: a player sat down (``present``) or left. Repeating the current state
        changes nothing."""
        self._publish_each(self._presence(seat, present, t))

    def _presence(self, seat: int, present: bool, t: float) -> list[RuleEvent]:
        out = self._settle(t)
        state = self._seat(seat)
        present = bool(present)
        if state.present is present:
            return out
        previous_since = state.present_since
        state.present, state.present_since = present, t
        if self.in_hand:
            state.changes.append((t, present))
            state.changes.sort(key=lambda c: c[0])
        duration = None if previous_since is None else _r(max(0.0, t - previous_since))
        deal_t = self._deal_t
        deal_done = deal_t is not None
        late = deal_t is not None and t <= deal_t  # stamped before the deal was complete, known only now
        if self.in_hand and deal_done and not late and state.live() and not state.absent_at_deal:
            if not present and state.left_at is None:
                state.left_at = t
                out.append(self._seat_left(seat, t))
                return out
            if present and state.left_at is not None:
                away = _r(max(0.0, t - state.left_at))
                state.left_at = None
                out.append(RuleEvent(SeatReturned(seat, away), t, self.hand))
                return out
        if (deal_t is not None and late and self._deal_decided and not present and seat in self._deal_seats
                and not state.absent_at_deal):
            state.absent_at_deal = True  # the deal's decision was taken before this change was known
            out.append(self._absent_at_deal(seat, deal_t, t))
            return out
        out.append(RuleEvent(SeatPresence(seat, present, duration), t, self.hand if self.in_hand else None))
        return out

    # ---- what the controller may ask ----------------------------------------------------------------

    def present(self, seat: int) -> bool | None:
        """Is a player seated at ``seat`` (None: no presence sensor has reported)?"""
        return self._seat(seat).present

    def device_on(self, seat: int, detects: str | None) -> bool:
        """Does the seat's sensor see a device of kind ``detects`` on now?"""
        return detects in self._seat(seat).devices

    def live(self, seat: int) -> bool:
        """Has ``seat`` a live hand (dealt, not folded, hand running)?"""
        return self.in_hand and self._seat(seat).live()

    def checkpoint_state(self) -> dict[str, Any]:
        """What the sensors showed at a hand's end (who is seated, which devices are on), as JSON."""
        return {"hand": self.hand, "seats": {
            str(n): {"present": s.present, "present_since": s.present_since, "devices": dict(s.devices),
                     "breaches": dict(s.breaches)} for n, s in self._seats.items()}}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        self.hand, self.in_hand = state["hand"], False
        for n, saved in state["seats"].items():
            seat = self._seat(int(n))
            seat.present = seat.present_at_hand_start = saved["present"]
            seat.present_since = saved["present_since"]
            seat.devices, seat.breaches = dict(saved["devices"]), dict(saved["breaches"])

    def snapshot(self) -> dict[str, Any]:
        """The seats as the sensors see them, for the controller's snapshot."""
        return {
            "profile": self.profile.name,
            "seats": [
                {"seat": n, "present": s.present, "devices": sorted(s.devices), "live": self.in_hand and s.live(),
                 "breach": sorted(s.breaches), "absent_at_deal": s.absent_at_deal, "left": s.left_at is not None}
                for n, s in self._seats.items()
            ],
        }

    # ---- helpers ------------------------------------------------------------------------------------

    def _check_seat(self, seat: int) -> int:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= self.seats:
            raise ValueError(f"seat {seat!r}: expected a seat from 1 to {self.seats}")
        return seat

    def _seat(self, seat: int) -> _Seat:
        return self._seats[self._check_seat(seat)]

    def _present_at(self, state: _Seat, t: float) -> bool | None:
        present = state.present_at_hand_start
        for when, value in state.changes:
            if when > t:
                break
            present = value
        return present

    def _settle(self, now: float, force: bool = False) -> list[RuleEvent]:
        if not self.in_hand or self._deal_t is None or self._deal_decided:
            return []
        if not force and now < self._deal_t + self.settle_s:
            return []
        self._deal_decided = True
        out = []
        for seat in self._deal_seats:
            state = self._seats[seat]
            if self._present_at(state, self._deal_t) is False:
                state.absent_at_deal = True
                out.append(self._absent_at_deal(seat, self._deal_t, max(now, self._deal_t) if force else
                                                self._deal_t + self.settle_s))
        return out

    def _ruled(self, seat: int, setting: str, ruling: str, needs_floor: bool) -> SeatRuling:
        return SeatRuling(seat, ruling, self.profile.cite(setting), needs_floor, self.profile.name)

    def _absent_at_deal(self, seat: int, deal_t: float, t: float) -> RuleEvent:
        state = self._seats[seat]
        away_since = None
        for when, value in state.changes:
            if when <= deal_t and not value:
                away_since = when
        p = self.profile
        ruled = self._ruled(seat, "absent_at_deal", p.absent_at_deal, p.absent_at_deal_needs_floor)
        absent = AbsentAtDeal(ruled, _r(deal_t), None if away_since is None else _r(away_since), p.absent_blinds,
                              p.cite("absent_blinds"))
        return RuleEvent(absent, t, self.hand)

    def _seat_left(self, seat: int, t: float) -> RuleEvent:
        p = self.profile
        ruled = self._ruled(seat, "left_during_hand", p.left_during_hand, p.left_during_hand_needs_floor)
        return RuleEvent(SeatLeft(ruled, p.absent_blinds, p.cite("absent_blinds")), t, self.hand)

    def _breach_started(self, seat: int, kind: str, t: float, device_since: float) -> RuleEvent:
        self._seats[seat].breaches[kind] = t
        p = self.profile
        ruled = self._ruled(seat, "device_ruling", p.device_ruling, p.device_needs_floor)
        return RuleEvent(DeviceBreach(ruled, kind, _r(t), _r(device_since)), t, self.hand)

    def _breach_ended(self, seat: int, kind: str, t: float, reason: str,
                      device_since: float | None = None) -> RuleEvent:
        since = self._seats[seat].breaches.pop(kind)
        p = self.profile
        ruled = self._ruled(seat, "device_ruling", p.device_ruling, False)  # an ended breach waits for nobody
        device_s = _r(max(0.0, t - device_since)) if device_since is not None else None
        return RuleEvent(DeviceBreachEnded(ruled, kind, reason, _r(since), _r(max(0.0, t - since)), device_s),
                         t, self.hand)

    def _why_allowed(self, state: _Seat, kind: str) -> str:
        if not self.in_hand or state.live_since is None:
            return "no_live_hand"
        if state.folded:
            return "folded"
        return "kind_allowed"

    def _seen(self, seat: int, kind: str, t: float, phase: str, reason: str,
              duration_s: float | None = None) -> RuleEvent:
        setting = "device_kinds" if reason == "kind_allowed" else "device_outside_note"
        seen = DeviceSeen(seat, kind, phase, reason, self.profile.cite(setting), self.profile.device_outside_note,
                          duration_s)
        return RuleEvent(seen, t, self.hand if self.in_hand else None)
