"""Simulated conduct at the seats: players using devices and leaving their seats, on the simulated GPIO backend.

A :class:`ConductInjector` drives the ``seatN.presence`` and ``seatN.device`` inputs of a
:class:`hal.gpio.SimulatedGpio` the way the sensors would: players sit down at the start, then at the rates of
:class:`ConductSimOptions` (per seat and hour, and/or per seat and hand) a device becomes active for a while, or a
player leaves the seat for a while. Each change comes with contact bounce (a few edges within ``bounce_s``), so the
HAL's debouncing is exercised on the way to the controller.

Deterministic: each seat and sensor draws from its own random stream derived from the seed, so a seed gives the
same activity whatever the step size of the caller, and the per-hour and per-hand streams are separate.

For ``rfid-table sim`` (the table clock is the simulator's)::

    pin_map = config.gpio or simulated_pin_map(config.seats)
    inputs, outputs, backend = open_gpio("sim", pin_map, clock=lambda: table_time)
    injector = ConductInjector(backend, players, ConductSimOptions(device_per_hour=2, seed=seed))
    injector.start(t0)                      # the players sit down
    ... when the controller emits hand_started: injector.hand_started(t)
    ... every cycle, before polling the HAL: injector.advance(t); inputs.poll(t)
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass
from typing import Iterable

from hal.gpio import BUTTONS, InputPin, OutputPin, PinMap, SimulatedGpio

SENSORS = ("device", "presence")


@dataclass(frozen=True)
class ConductSimOptions:
    """Rates and durations of the injected activity. Rates are per occupied seat."""

    device_per_hour: float = 0.0  # device activity episodes per seat per hour of table time
    device_per_hand: float = 0.0  # chance per seat per hand of one episode during the hand (0 to 1)
    device_s: tuple[float, float] = (5.0, 60.0)  # an episode's duration, uniform between the two
    absence_per_hour: float = 0.0  # absences per seat per hour
    absence_per_hand: float = 0.0  # chance per seat per hand of leaving during the hand (0 to 1)
    absence_s: tuple[float, float] = (10.0, 120.0)
    hand_s: float = 30.0  # a per-hand episode begins within this long after the hand starts
    bounce_edges: int = 2  # extra edge pairs of contact bounce at each change (0: clean edges)
    bounce_s: float = 0.03  # the bounce lasts this long (well inside the HAL's debounce window)
    seed: int | None = None

    def __post_init__(self) -> None:
        problems = []
        for name in ("device_per_hour", "absence_per_hour"):
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) < 0:
                problems.append(f"{name}: expected a rate >= 0 per seat per hour, got {getattr(self, name)!r}")
        for name in ("device_per_hand", "absence_per_hand"):
            if not isinstance(getattr(self, name), (int, float)) or not 0 <= getattr(self, name) <= 1:
                problems.append(f"{name}: expected a chance from 0 to 1 per seat per hand, got {getattr(self, name)!r}")
        for name in ("device_s", "absence_s"):
            low, high = getattr(self, name)
            if not 1.0 <= low <= high:
                problems.append(f"{name}: expected (shortest, longest) seconds with 1 <= shortest <= longest, "
                                f"got {getattr(self, name)!r}")
        if self.hand_s <= 0:
            problems.append(f"hand_s: expected seconds > 0, got {self.hand_s!r}")
        if not isinstance(self.bounce_edges, int) or self.bounce_edges < 0:
            problems.append(f"bounce_edges: expected a count >= 0, got {self.bounce_edges!r}")
        if not 0 < self.bounce_s < 0.1:
            problems.append(f"bounce_s: expected seconds between 0 and 0.1, got {self.bounce_s!r}")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def enabled(self) -> bool:
        return any((self.device_per_hour, self.device_per_hand, self.absence_per_hour, self.absence_per_hand))


@dataclass(frozen=True, order=True)
class Injection:
    """One sensor change as the world makes it (before bounce): at ``t`` the seat's ``sensor`` becomes
    ``active`` (a device detected / a player seated)."""

    t: float
    seat: int
    sensor: str
    active: bool


def simulated_pin_map(seats: int, *, buttons: bool = True, lights: bool = True) -> PinMap:
    """A pin map for the simulated backend with every button, a light and both sensors per seat, and the status
    light. Its pin numbers (100 and up) are keys for the simulator only: a real table's map comes from the
    ``[gpio]`` section."""
    inputs: list[InputPin] = []
    outputs: list[OutputPin] = []
    if buttons:
        inputs += [InputPin(name, 100 + i, "button") for i, name in enumerate(BUTTONS)]
    for seat in range(1, seats + 1):
        base = 200 + 10 * seat
        inputs.append(InputPin(f"seat{seat}.presence", base, "presence", seat, debounce_ms=500))
        inputs.append(InputPin(f"seat{seat}.device", base + 1, "device", seat, debounce_ms=200, detects="phone"))
        if lights:
            outputs.append(OutputPin(f"seat{seat}.light", base + 2, "seat_light", seat))
    if lights:
        outputs.append(OutputPin("status_light", 199, "status_light"))
    return PinMap("sim", tuple(inputs), tuple(outputs))


class ConductInjector:
    """Drives the seat sensors of a :class:`SimulatedGpio` from seeded random activity.

    ``players``: the occupied seats (only they sit down, leave and use devices). Seats whose sensor the pin map
    lacks are skipped for that sensor.
    """

    def __init__(self, backend: SimulatedGpio, players: Iterable[int], options: ConductSimOptions | None = None):
        self.backend = backend
        self.options = options or ConductSimOptions()
        names = {p.name for p in backend.pin_map.inputs}
        self.players = sorted(set(players))
        self._has = {(seat, sensor): f"seat{seat}.{sensor}" in names for seat in self.players for sensor in SENSORS}
        seed = self.options.seed or 0
        self._rng = {(seat, sensor, stream): random.Random(f"conduct/{seed}/{seat}/{sensor}/{stream}")
                     for seat in self.players for sensor in SENSORS for stream in ("hour", "hand", "bounce")}
        self._next_hourly: dict[tuple[int, str], float] = {}
        self._busy_until: dict[tuple[int, str], float] = {}  # an episode runs until then: no other may begin
        self._edges: list[tuple[float, int, int, str, bool]] = []  # heap of (t, seq, seat, sensor, active)
        self._changes: list[Injection] = []  # heap of the changes not yet applied
        self._seq = 0
        self._started = False
        self.injected: list[Injection] = []  # every change applied so far, in order

    def start(self, t: float) -> list[Injection]:
        """The players sit down at ``t`` (their presence sensors become active); hourly activity starts."""
        if self._started:
            return []
        self._started = True
        for seat in self.players:
            if self._has[(seat, "presence")]:
                self._change(Injection(t, seat, "presence", True))
            for sensor, rate in (("device", self.options.device_per_hour), ("presence", self.options.absence_per_hour)):
                if rate > 0 and self._has[(seat, sensor)]:
                    self._next_hourly[(seat, sensor)] = t + self._rng[(seat, sensor, "hour")].expovariate(rate / 3600)
        return self.advance(t)

    def hand_started(self, t: float) -> list[Injection]:
        """A hand begins at ``t``: each seat may get a device episode or an absence during it (per-hand chances).
        Every seat draws the same numbers whatever the outcome, so the streams stay aligned."""
        o = self.options
        for seat in self.players:
            for sensor, chance, span in (("device", o.device_per_hand, o.device_s),
                                         ("presence", o.absence_per_hand, o.absence_s)):
                rng = self._rng[(seat, sensor, "hand")]
                hit, offset, duration = rng.random(), rng.uniform(0, o.hand_s), rng.uniform(*span)
                if hit < chance and self._has[(seat, sensor)]:
                    self._episode(seat, sensor, t + offset, duration)
        return self.advance(t)

    def advance(self, t: float) -> list[Injection]:
        """Apply every change due by ``t`` to the backend (with its bounce); returns the changes applied."""
        applied: list[Injection] = []
        o = self.options
        for key, when in sorted(self._next_hourly.items()):
            seat, sensor = key
            rng = self._rng[(seat, sensor, "hour")]
            rate = o.device_per_hour if sensor == "device" else o.absence_per_hour
            while when <= t:
                duration = rng.uniform(*(o.device_s if sensor == "device" else o.absence_s))
                self._episode(seat, sensor, when, duration)
                when = max(when, self._busy_until.get(key, when)) + rng.expovariate(rate / 3600)
            self._next_hourly[key] = when
        while self._edges and self._edges[0][0] <= t:
            at, _, seat, sensor, active = heapq.heappop(self._edges)
            self.backend.set_active(f"seat{seat}.{sensor}", active, at)
        while self._changes and self._changes[0].t <= t:
            change = heapq.heappop(self._changes)
            self.injected.append(change)
            applied.append(change)
        return applied

    def planned(self) -> list[Injection]:
        """The changes scheduled but not yet applied, in time order."""
        return sorted(self._changes)

    # ---- helpers ------------------------------------------------------------------------------------

    def _episode(self, seat: int, sensor: str, start: float, duration: float) -> None:
        key = (seat, sensor)
        if start < self._busy_until.get(key, float("-inf")):
            return  # one episode at a time per sensor
        self._busy_until[key] = start + duration
        away = sensor == "presence"  # an absence makes the presence sensor inactive
        self._change(Injection(start, seat, sensor, not away))
        self._change(Injection(start + duration, seat, sensor, away))

    def _change(self, change: Injection) -> None:
        heapq.heappush(self._changes, change)
        o = self.options
        rng = self._rng[(change.seat, change.sensor, "bounce")]
        # Bounce: the target level, then back and forth, ending on the target within bounce_s.
        times = sorted(rng.uniform(0, o.bounce_s) for _ in range(2 * o.bounce_edges))
        levels = [change.active] + [not change.active, change.active] * o.bounce_edges
        for at, level in zip([0.0, *times], levels):
            self._seq += 1
            heapq.heappush(self._edges, (change.t + at, self._seq, change.seat, change.sensor, level))
