"""The action clock (AC 23): a reasonable time, then one minute, then a ten-second count, then the hand is dead.

AC 23: a player who has not acted within a reasonable time gets at most one minute to decide; when it runs out a
10-second count begins; a player who has not acted by its end has their cards mucked. Time bank cards (CA GR 5)
add time. The other rule books stored with the project have no clock procedure; their profiles apply AC 23 and
say so (``controller.conduct.CONDUCT_PROFILES``, ``clock_ruling``). Poker-Play kills the hand only when it faces a
bet or a raise (PP Dead hands 1f).

Pure: :class:`ActionClock` reads no clock; every method takes the time. The betting layer says whose turn it is
(:meth:`ActionClock.turn`), the floor starts the clock (:meth:`ActionClock.start`, from the console's
``start_clock`` button or a command) unless ``auto_start`` starts it when the reasonable time is up, a player
uses a time bank (:meth:`ActionClock.time_bank`), and :meth:`ActionClock.tick` publishes what the passing time
brought. What the floor and the players ask is checked first, without changing anything (``start_refusal``,
``stop_refusal``, ``time_bank_refusal``: a ``controller.commands.Refusal`` or None), then done.
:meth:`ActionClock.lights` gives each seat light's mode. The clock's events go to the ``publish`` it was given at
construction, one by one, in order, and nowhere else: those methods return None.

Phases of a turn: ``idle`` (no one to act), ``thinking`` (the reasonable time, and after it until the clock is
started), ``minute`` (the clock runs), ``count`` (the last ``count_s`` seconds), ``expired``.

Events (records of ``controller.conduct_events`` in a ``RuleEvent``; payload fields in docs/conduct.md):
``clock_due`` (the reasonable time is up and the clock is not started automatically), ``clock_started``,
``clock_tick`` (every ``tick_every_s`` of the minute and every second of the count), ``time_bank_used``,
``clock_stopped`` (the player acted, the turn moved, or the floor stopped it) and ``clock_expired`` (with the
profile's ruling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Mapping

from controller.commands import Command, Refusal
from controller.conduct import conduct_profile
from controller.conduct_events import (CHECK, HAND_DEAD, HAND_DEAD_FACING_BET, ClockDue, ClockExpired, ClockStarted,
                                       ClockStopped, ClockTick, Publish, RuleEvent, SeatRuling, TimeBankUsed)

if TYPE_CHECKING:
    from controller.table import TableController

_EPS = 1e-9
PHASES = ("idle", "thinking", "minute", "count", "expired")


@dataclass(frozen=True)
class ClockSettings:
    """How the action clock runs. Invalid settings raise ValueError naming each setting (``clock.<name>``)."""

    reasonable_s: float = 30.0  # the "reasonable time" before the clock may be called (AC 23 gives no number)
    minute_s: float = 60.0  # AC 23: at most one minute
    count_s: int = 10  # AC 23: a 10-second count
    tick_every_s: float = 10.0  # a clock_tick this often during the minute (every second during the count)
    time_bank_s: float = 30.0  # what one time bank adds
    time_banks: int | None = None  # time banks per seat (None: as many as the floor hands out)
    auto_start: bool = False  # start the clock by itself when the reasonable time is up (else the floor starts it)
    profile: str = "allin_club"  # the house rule profile whose ruling applies at expiry

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any] | None, root: str = "clock") -> "ClockSettings":
        """Settings from a configuration table; ValueError names every unknown key and invalid value."""
        section = dict(section or {})
        known = [f.name for f in fields(cls)]
        problems = [f"{root}.{key}: unknown key (expected one of: {', '.join(known)})" for key in section
                    if key not in known]
        values = {k: v for k, v in section.items() if k in known}
        try:
            settings = cls(**values)
        except ValueError as exc:
            problems += [p.replace("clock.", f"{root}.", 1) for p in str(exc).split("; ")]
            settings = None
        if problems:
            raise ValueError("; ".join(problems))
        assert settings is not None
        return settings


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _problems(s: ClockSettings) -> list[str]:
    problems = []
    for name in ("reasonable_s", "minute_s", "tick_every_s", "time_bank_s"):
        value = getattr(s, name)
        if not _is_number(value) or value <= 0:
            problems.append(f"clock.{name}: expected seconds > 0, got {value!r}")
    if not isinstance(s.count_s, int) or isinstance(s.count_s, bool) or not 1 <= s.count_s <= 60:
        problems.append(f"clock.count_s: expected whole seconds from 1 to 60, got {s.count_s!r}")
    if s.time_banks is not None and (not isinstance(s.time_banks, int) or isinstance(s.time_banks, bool)
                                     or s.time_banks < 0):
        problems.append(f"clock.time_banks: expected a count >= 0, or none for no limit, got {s.time_banks!r}")
    if not isinstance(s.auto_start, bool):
        problems.append(f"clock.auto_start: expected true or false, got {s.auto_start!r}")
    try:
        conduct_profile(s.profile)
    except (KeyError, TypeError) as exc:
        problems.append(f"clock.profile: {exc.args[0] if exc.args else exc}")
    return problems


class ActionClock:
    """The action clock of one table: one turn at a time, one clock at a time."""

    def __init__(self, settings: ClockSettings | None = None, seats: int = 10, *, publish: Publish):
        """``publish``: where the clock's events go, one by one, in order, before the method that caused them
        returns (the methods that take an input, :meth:`turn`, :meth:`start`, :meth:`stop`, :meth:`time_bank` and
        :meth:`tick`, return None)."""
        self.settings = settings or ClockSettings()
        self.profile = conduct_profile(self.settings.profile)
        if not isinstance(seats, int) or isinstance(seats, bool) or not 1 <= seats <= 10:
            raise ValueError(f"seats: expected a number of seats from 1 to 10, got {seats!r}")
        self.seats = seats
        self.seat: int | None = None
        self.facing_bet: bool | None = None
        self._turn_t = 0.0
        self._started_at: float | None = None
        self._started_by: str | None = None
        self._deadline = 0.0  # the end of the minute (the count follows)
        self._last = 0.0  # the time of the last clock event: the next one comes after it
        self._due_told = False
        self._expired = False
        self._auto = self.settings.auto_start  # off for the rest of a turn once the floor stopped the clock
        self._banks_used: dict[int, int] = {}
        self._publish = publish

    def _publish_each(self, events: list[RuleEvent]) -> None:
        """A public method's events, published one by one, in order (as ``ConductRules._publish_each``)."""
        for event in events:
            self._publish(event)

    # ---- inputs -------------------------------------------------------------------------------------

    def turn(self, seat: int | None, t: float, *, facing_bet: bool | None = None) -> None:
        """It is ``seat``'s turn from ``t`` (None: no one's, e.g. between betting rounds). Every call begins a new
        turn — call it after each action, even when the same seat acts again. A running clock stops.
        ``facing_bet``: whether the player faces a bet or raise (the ruling of PP Dead hands 1f needs it)."""
        self._publish_each(self._turn(seat, t, facing_bet=facing_bet))

    def _turn(self, seat: int | None, t: float, *, facing_bet: bool | None = None) -> list[RuleEvent]:
        if seat is not None:
            self._check_seat(seat)
        out = self._tick(t)
        if self.seat is not None and self._started_at is not None and not self._expired:
            out.append(self._stopped(t, "turn_ended" if seat is None else "acted", None))
        self.seat, self.facing_bet = seat, facing_bet
        self._turn_t, self._last = t, t
        self._started_at, self._started_by, self._due_told, self._expired = None, None, False, False
        self._auto = self.settings.auto_start
        return out

    def start_refusal(self, t: float) -> Refusal | None:
        """Why the floor cannot call the clock at ``t``: no one is to act, or the clock already runs or ran out."""
        phase = self.phase(t)
        if phase == "idle":
            return Refusal("no player is to act: the clock starts on the player whose turn it is")
        if phase == "expired":
            return Refusal(f"the clock on seat {self.seat} has run out")
        if phase != "thinking":
            return Refusal(f"the clock is already running on seat {self.seat}")
        return None

    def start(self, t: float, by: str) -> None:
        """The floor calls the clock on the player to act (``by``: who, e.g. "floor/anna" or "dealer/console"), as
        :meth:`start_refusal` allowed. The reasonable time need not be over: the floor judges."""
        self._publish_each(self._tick(t) + [self._start(t, by)])

    def stop_refusal(self, t: float) -> Refusal | None:
        return None if self.phase(t) in ("minute", "count") else Refusal("the clock is not running")

    def stop(self, t: float, by: str) -> None:
        """The floor stops the running clock (as :meth:`stop_refusal` allowed); the turn goes on, as in
        ``thinking``, and the clock starts again only when the floor starts it (not automatically)."""
        self._publish_each(self._stop(t, by))

    def _stop(self, t: float, by: str) -> list[RuleEvent]:
        out = self._tick(t)
        out.append(self._stopped(t, "floor", by))
        self._started_at, self._started_by, self._due_told, self._auto = None, None, True, False
        self._turn_t, self._last = t, t
        return out

    def time_bank_refusal(self, seat: int, t: float) -> Refusal | None:
        """Why ``seat`` cannot use a time bank at ``t``: a time bank is used while the clock runs on that seat, and
        the seat has one left."""
        self._check_seat(seat)
        phase = self.phase(t)
        if seat != self.seat:
            return Refusal(f"it is not seat {seat}'s turn" + (f" (seat {self.seat} is to act)" if self.seat else ""))
        if phase == "expired":
            return Refusal(f"the clock on seat {seat} has run out")
        if phase == "thinking":
            return Refusal("the clock is not running: no time bank is needed yet")
        if self.banks_left(seat) == 0:
            return Refusal(f"seat {seat} has no time bank left")
        return None

    def time_bank(self, seat: int, t: float) -> None:
        """``seat`` uses a time bank (as :meth:`time_bank_refusal` allowed): ``time_bank_s`` more before the count
        (during the count, the count stops and ``time_bank_s`` are left before it starts again)."""
        self._publish_each(self._time_bank(seat, t))

    def _time_bank(self, seat: int, t: float) -> list[RuleEvent]:
        phase = self.phase(t)
        out = self._tick(t)
        self._banks_used[seat] = self._banks_used.get(seat, 0) + 1
        added = self.settings.time_bank_s
        self._deadline = (self._deadline if phase == "minute" else t) + added
        self._last = t
        out.append(RuleEvent(TimeBankUsed(seat, added, phase, _r(self._deadline - t), self.banks_left(seat),
                                          "CA GR 5 (time bank cards)"), t))
        return out

    def tick(self, t: float) -> None:
        """Publishes every clock event due by ``t``, in order, each at its own time (a late call loses nothing)."""
        self._publish_each(self._tick(t))

    def _tick(self, t: float) -> list[RuleEvent]:
        s = self.settings
        out: list[RuleEvent] = []
        while (seat := self.seat) is not None and not self._expired:
            if self._started_at is None:
                due = self._turn_t + s.reasonable_s
                if t + _EPS < due:
                    break
                if self._auto:
                    out.append(self._start(due, "auto"))
                    continue
                if not self._due_told:
                    self._due_told = True
                    out.append(RuleEvent(ClockDue(seat, _r(due - self._turn_t), self.profile.cite("clock_ruling")),
                                         due))
                break
            at, kind, remaining = self._next_after(self._last)
            if t + _EPS < at:
                break
            self._last = at
            if kind == "expired":
                self._expired = True
                out.append(self._expiry(at))
            else:
                out.append(RuleEvent(ClockTick(seat, kind, remaining), at))
        return out

    # ---- state --------------------------------------------------------------------------------------

    def next_due(self) -> float:
        """The earliest time :meth:`tick` has something to report (inf: nothing, however long it waits)."""
        if self.seat is None or self._expired:
            return math.inf
        if self._started_at is None:
            if not self._auto and self._due_told:
                return math.inf  # told once: the clock waits for the floor
            return self._turn_t + self.settings.reasonable_s - _EPS
        return self._next_after(self._last)[0] - _EPS

    def phase(self, t: float) -> str:
        """The phase at ``t`` (as if :meth:`tick` had run to ``t``)."""
        if self.seat is None:
            return "idle"
        if self._expired:
            return "expired"
        deadline = self._deadline_at(t)
        if deadline is None:
            return "thinking"
        if t + _EPS < deadline:
            return "minute"
        if t + _EPS < deadline + self.settings.count_s:
            return "count"
        return "expired"

    def remaining(self, t: float) -> float | None:
        """Seconds left in the current phase of the running clock (None when it does not run)."""
        phase, deadline = self.phase(t), self._deadline_at(t)
        if deadline is None or phase not in ("minute", "count"):
            return None
        end = deadline if phase == "minute" else deadline + self.settings.count_s
        return _r(end - t)

    def lights(self, t: float) -> dict[int, str]:
        """Each seat light's mode at ``t``: "on" for the player to act (thinking or the minute), "blink" during
        the count, "off" otherwise (after expiry too: the hand is dead)."""
        phase = self.phase(t)
        mode = {"thinking": "on", "minute": "on", "count": "blink"}.get(phase, "off")
        return {n: (mode if n == self.seat else "off") for n in range(1, self.seats + 1)}

    def banks_left(self, seat: int) -> int | None:
        """Time banks ``seat`` has left (None: no limit)."""
        if self.settings.time_banks is None:
            return None
        return max(0, self.settings.time_banks - self._banks_used.get(seat, 0))

    def reset_time_banks(self, seat: int | None = None) -> None:
        """Give ``seat`` (None: every seat) its full time banks again (a new player, a new session)."""
        if seat is None:
            self._banks_used.clear()
        else:
            self._banks_used.pop(self._check_seat(seat), None)

    def checkpoint_state(self) -> dict[str, Any]:
        """The time banks used so far (they last the session), as JSON."""
        return {"banks_used": {str(seat): used for seat, used in self._banks_used.items()}}

    def restore_checkpoint_state(self, state: dict[str, Any]) -> None:
        self._banks_used = {int(seat): int(used) for seat, used in state["banks_used"].items()}

    def snapshot(self, t: float) -> dict[str, Any]:
        return {"seat": self.seat, "phase": self.phase(t), "remaining_s": self.remaining(t),
                "started_by": self._started_by, "banks_left": {n: self.banks_left(n) for n in range(1, self.seats + 1)}
                if self.settings.time_banks is not None else None}

    # ---- helpers ------------------------------------------------------------------------------------

    def _check_seat(self, seat: int) -> int:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= self.seats:
            raise ValueError(f"seat {seat!r}: expected a seat from 1 to {self.seats}")
        return seat

    def _deadline_at(self, t: float) -> float | None:
        if self._started_at is not None:
            return self._deadline
        s = self.settings
        due = self._turn_t + s.reasonable_s
        if self._auto and t + _EPS >= due:
            return due + s.minute_s
        return None

    def _start(self, t: float, by: str) -> RuleEvent:
        s, seat = self.settings, self._to_act()
        self._started_at, self._started_by = t, by
        self._deadline, self._last = t + s.minute_s, t
        return RuleEvent(ClockStarted(seat, by, s.minute_s, s.count_s, _r(t - self._turn_t),
                                      self.profile.cite("clock_ruling")), t)

    def _next_after(self, last: float) -> tuple[float, str, float]:
        """The next clock event after ``last``: (time, "minute" | "count" | "expired", remaining seconds)."""
        s, deadline = self.settings, self._deadline
        if last + _EPS < deadline:
            remaining = deadline - last
            k = math.floor((remaining - _EPS) / s.tick_every_s)  # ticks at whole multiples of tick_every_s left
            if k >= 1:
                left = k * s.tick_every_s
                return deadline - left, "minute", _r(left)
            return deadline, "count", float(s.count_s)
        i = math.floor(last - deadline + _EPS) + 1  # seconds of the count gone at the next tick
        if i >= s.count_s:
            return deadline + s.count_s, "expired", 0.0
        return deadline + i, "count", float(s.count_s - i)

    def _stopped(self, t: float, reason: str, by: str | None) -> RuleEvent:
        return RuleEvent(ClockStopped(self._to_act(), reason, self.phase(t), self.remaining(t), by), t)

    def _to_act(self) -> int:
        """The seat the clock runs for (a clock that starts, stops or runs out has one)."""
        assert self.seat is not None
        return self.seat

    def _expiry(self, t: float) -> RuleEvent:
        p = self.profile
        ruling, needs_floor = p.clock_ruling, p.clock_needs_floor
        if ruling == HAND_DEAD_FACING_BET:
            if self.facing_bet is True:
                ruling = HAND_DEAD
            elif self.facing_bet is False:
                ruling = CHECK
            else:
                needs_floor = True  # the betting layer did not say: the floor checks whether a bet was faced
        ruled = SeatRuling(self._to_act(), ruling, p.cite("clock_ruling"), needs_floor, p.name)
        return RuleEvent(ClockExpired(ruled, self._started_by, self.facing_bet), t)


class ClockCommands:
    """The commands on the action clock, each checked without changing anything, then applied: ``start_clock``,
    ``stop_clock`` and ``time_bank`` (docs/conduct.md, "Commands"). On a table that reads the chips the clock follows
    the turn the betting gives, and a seat the command names must be the one to act. On a table without chips the
    table does not know whose turn it is: the floor names the seat it calls the clock on, and the clock runs for that
    seat until it is stopped, the seat folds or the hand ends.

    ``cards``: on a table without chips, the card controller, which knows the seats with a live hand; None on a
    table that reads the chips. Every method takes the rules' time (never before the latest event they saw)."""

    def __init__(self, clock: ActionClock, cards: TableController | None):
        self.clock = clock
        self.cards = cards

    def start_refusal(self, command: Command, t: float) -> Refusal | None:
        """``start_clock``: without a seat, on the seat to act."""
        seat, clock = command.get("seat"), self.clock
        if self.cards is None:
            return self._not_to_act(seat) or clock.start_refusal(t)
        if seat is None:
            return Refusal("this table does not read the betting, so it does not know whose turn it is: name the "
                           "seat (start_clock with seat)")
        place = self.cards.seats.get(seat)
        if not self.cards.in_hand or place is None or not place.cards or place.folded:
            return Refusal(f"seat {seat} has no live hand")
        if self._moves_to(seat, t):
            if clock.phase(t) in ("minute", "count"):
                return Refusal(f"the clock is already running on seat {clock.seat}")
            return None  # the clock's turn moves to that seat first: there it starts
        return clock.start_refusal(t)

    def start(self, command: Command, t: float) -> None:
        seat = command.get("seat")
        if self._moves_to(seat, t):
            self.clock.turn(seat, t)
        self.clock.start(t, command.by)

    def stop_refusal(self, command: Command, t: float) -> Refusal | None:
        return self._not_to_act(command.get("seat")) or self.clock.stop_refusal(t)

    def stop(self, command: Command, t: float) -> None:
        self.clock.stop(t, command.by)

    def time_bank_refusal(self, command: Command, t: float) -> Refusal | None:
        return self.clock.time_bank_refusal(command.get("seat"), t)

    def time_bank(self, command: Command, t: float) -> None:
        self.clock.time_bank(command.get("seat"), t)

    def _moves_to(self, seat: int | None, t: float) -> bool:
        """On a table without the chips, the seat the floor names is not the one the clock runs for."""
        return self.cards is not None and (seat != self.clock.seat or self.clock.phase(t) == "idle")

    def _not_to_act(self, seat: int | None) -> Refusal | None:
        """Why the clock cannot be started or stopped on ``seat`` (None: on the seat to act), or None."""
        to_act = self.clock.seat
        if seat is None or seat == to_act:
            return None
        return Refusal(f"seat {seat} is not to act" + (f" (seat {to_act} is)" if to_act else ": no player is to act"))


def _r(value: float) -> float:
    return round(float(value), 3)
