"""The table's GPIO as the service sees it: what the console's buttons ask for and what the lights show.

The HAL (:mod:`hal.gpio`) debounces the inputs and drives the lights; the meaning of both is the table's:

* :class:`GpioConsole` turns debounced events into what the controller takes: a :class:`ButtonCommand` per button
  press (a command body of the MQTT commands' shape, :data:`BUTTON_COMMANDS`, completed by
  :meth:`GpioConsole.command` from the table's state) and a :class:`hal.events.SensorEvent` per sensor change;
* :class:`TableLights` says what the lights show from the controller's state (seat to act, the action clock's
  lights, link down, deck not registered, an irregularity waiting for the floor, game stopped);
  :func:`show_lights` applies it to a :class:`hal.gpio.GpioOutputs` opened with :data:`STATUS_PATTERNS`, and
  :func:`light_levels` computes the pin levels at a given time;
* :class:`TableGpio` is the whole for the daemon's pipeline: the pins opened, the console, the lights.
"""

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from hal.events import SensorEvent
from hal.gpio import (BUTTONS, LIGHT_MODES, SEAT_BLINK, GpioInputEvent, GpioOutputs, InputPin, OutputPin, Pattern,
                      PinMap, open_gpio, pattern_lit)
from rfid_table.service.commands import COMMANDS

# ---- the status light -----------------------------------------------------------------------------------

# Status conditions, most urgent first: the light shows the first one that is active. How each one looks: "on"
# (steady) or (period_s, lit_s) — lit for the first lit_s of every period.
STATUS_PATTERNS: Mapping[str, Pattern] = {
    "link_down": (0.25, 0.125),  # fast blink, 4 Hz: the table cannot see the cards (a link down, or cycles given up)
    "journal_failing": (1.0, 0.75),  # long on, short off: nothing is journaled (disk full), nothing published
    "awaiting_floor": "on",  # steady: an irregularity waits for the floor; do not go on
    "broker_refuses": (0.5, 0.25),  # 2 Hz: the broker refuses the events (its ACL); they wait in the journal
    "deck_not_registered": (1.0, 0.5),  # slow blink, 1 Hz
    "game_stopped": (2.0, 0.2),  # a short flash every 2 s
}
STATUS_CONDITIONS = tuple(STATUS_PATTERNS)

# ---- the dealer console and the seat sensors, as the controller takes them ----------------------------------

# What each button asks for: the body of a command of the same shape as the MQTT commands (rfid_table.service.commands).
# A declare without a seat means the seat whose turn it is (GpioConsole.command fills it in); a start_clock without
# one, the seat to act too (the controller knows it).
BUTTON_COMMANDS: Mapping[str, Mapping[str, Any]] = {
    "new_hand": {"command": "new_hand"},
    "misdeal": {"command": "misdeal"},
    "declare_raise": {"command": "declare", "declaration": "raise"},
    "declare_all_in": {"command": "declare", "declaration": "all_in"},
    "declare_call": {"command": "declare", "declaration": "call"},
    "undo": {"command": "undo"},
    "floor_call": {"command": "floor_call"},
    "confirm": {"command": "confirm"},
    "start_clock": {"command": "start_clock"},
}
assert set(BUTTON_COMMANDS) == set(BUTTONS)


@dataclass(frozen=True, slots=True)
class ButtonCommand:
    """A dealer console button was pressed (debounced): ``body`` has the shape of an MQTT command as the
    controller is fed it (``rfid_table.service.commands.AdmittedCommand.as_input``): ``{"id", "role", "user", "command", ...}``.

    A ``declare`` body has no ``seat``: the button means the seat whose turn it is, which
    :meth:`GpioConsole.command` fills in; a ``confirm`` body names no ruling: it is the floor's key for the oldest
    one waiting.
    """

    t: float
    button: str
    body: dict


class GpioConsole:
    """Debounced :class:`GpioInputEvent` in; :class:`ButtonCommand` and :class:`SensorEvent` out.

    A button counts when it is pressed (its release is dropped): each press becomes a command body
    ``{"id": "console-N", "role": role, "user": user, "command": ..., ...}`` as the controller is fed MQTT
    commands, numbered from 1 in the order pressed. A presence or device sensor change becomes a
    :class:`SensorEvent`; a device sensor's event says what the sensor detects (its ``detects`` in the pin map).
    """

    def __init__(self, pins: Iterable[InputPin] = (), *, role: str = "dealer", user: str = "console"):
        self._detects = {p.name: p.detects or "device" for p in pins if p.kind == "device"}
        self.role = role
        self.user = user
        self.presses = 0

    @staticmethod
    def command(press: ButtonCommand, to_act: int | None, floor_waiting: list[int]) -> tuple[dict, str | None]:
        """The command a press sends, completed from the table's state (``to_act``: the seat whose turn it is;
        ``floor_waiting``: the rulings waiting for the floor, oldest first), and why it cannot be sent (None: it
        can). A declare goes to the seat to act; the confirm key confirms the oldest ruling waiting, as the floor."""
        body = dict(press.body)
        if body["command"] == "declare" and "seat" not in body and to_act is not None:
            body["seat"] = to_act
        if body["command"] == "confirm" and "irregularity" not in body and floor_waiting:
            body["irregularity"] = floor_waiting[0]
            body["role"] = "floor"
        roles, fields = COMMANDS[body["command"]]
        missing = [key for key, (_kind, required, _what) in fields.items() if required and key not in body]
        if missing:
            return body, f"{', '.join(missing)} not known at the console"
        if body["role"] not in roles:
            return body, f"the console may not send {body['command']}"
        return body, None

    def translate(self, events: Iterable[GpioInputEvent]) -> list[ButtonCommand | SensorEvent]:
        out: list[ButtonCommand | SensorEvent] = []
        for event in events:
            if event.kind == "button":
                if event.value and event.name in BUTTON_COMMANDS:
                    self.presses += 1
                    body = {"id": f"console-{self.presses}", "role": self.role, "user": self.user,
                            **BUTTON_COMMANDS[event.name]}
                    out.append(ButtonCommand(event.t, event.name, body))
            elif event.seat is not None:
                detects = self._detects.get(event.name, "device") if event.kind == "device" else None
                out.append(SensorEvent(event.t, event.seat, event.kind, event.value, detects, event.duration_s))
        return out


# ---- the lights -----------------------------------------------------------------------------------------

_MODE_RANK = {"off": 0, "on": 1, "blink": 2}


@dataclass(frozen=True)
class TableLights:
    """What the lights should show, from the controller's state.

    ``to_act``: the seat whose turn it is (its light is on). ``clock``: the action clock's seat lights
    (``controller.clock.ActionClock.lights(t)``: "on" while the player thinks, "blink" during the ten-second
    count); where both speak for a seat the more urgent wins (blink, then on, then off). ``link_down``,
    ``journal_failing``, ``awaiting_floor``, ``deck_not_registered``, ``game_stopped``: the status light's
    conditions. While the game
    is stopped no seat is to act: every seat light is off.
    """

    to_act: int | None = None
    clock: Mapping[int, str] = field(default_factory=dict)
    link_down: bool = False
    journal_failing: bool = False
    awaiting_floor: bool = False
    broker_refuses: bool = False  # a status light condition too: the broker refuses the events (they wait)
    deck_not_registered: bool = False
    game_stopped: bool = False

    def seat_modes(self, seats: Iterable[int]) -> dict[int, str]:
        """Each seat light's mode: "off", "on" or "blink"."""
        modes = {}
        for seat in sorted(set(seats)):
            mode = "on" if seat == self.to_act else "off"
            clock = self.clock.get(seat, "off")
            if clock not in LIGHT_MODES:
                raise ValueError(f"clock light of seat {seat}: {clock!r}, expected one of {', '.join(LIGHT_MODES)}")
            if _MODE_RANK[clock] > _MODE_RANK[mode]:
                mode = clock
            modes[seat] = "off" if self.game_stopped else mode
        return modes

    def conditions(self) -> frozenset[str]:
        """The status conditions that hold (the status light shows the most urgent, see STATUS_CONDITIONS)."""
        return frozenset(c for c in STATUS_CONDITIONS if getattr(self, c))


def light_levels(lights: TableLights, pins: Iterable[OutputPin], t: float,
                 since: Mapping[str, float] | None = None) -> dict[int, bool]:
    """The electrical level of every output pin at time ``t`` (active-low pins included).

    Blinking is computed from time: a pattern is lit for the first part of each period counted from
    ``since[pin name]`` (when the pattern began; 0 when not given). :class:`hal.gpio.GpioOutputs` does the same and
    keeps ``since`` itself, so a new blink starts lit.
    """
    pins = list(pins)
    modes = lights.seat_modes(p.seat for p in pins if p.seat is not None)
    shown = next((c for c in STATUS_CONDITIONS if c in lights.conditions()), None)
    levels = {}
    for pin in pins:
        if pin.kind == "status_light":
            pattern = STATUS_PATTERNS[shown] if shown else "off"
        else:
            mode = modes.get(pin.seat, "off") if pin.seat is not None else "off"
            pattern = SEAT_BLINK if mode == "blink" else mode
        lit = pattern_lit(pattern, t - (since or {}).get(pin.name, 0.0))
        levels[pin.bcm_pin] = lit != pin.active_low
    return levels


def show_lights(outputs: GpioOutputs, lights: TableLights) -> None:
    """Set every seat light and the status light of ``outputs`` from the controller's state."""
    for seat, mode in lights.seat_modes(outputs.seats()).items():
        outputs.set_seat_light(seat, mode)
    outputs.set_status(lights.conditions())


# ---- the whole, for the daemon --------------------------------------------------------------------------


class TableGpio:
    """The table's own GPIO (docs/gpio.md): the seat sensors and the dealer console's buttons in, the seat lights
    and the status light out. ``backend``: "sim" (the simulated pins, what ``rfid-table sim`` drives) or "rpi";
    ``clock`` stamps edges that come without a time, in the pipeline's time base."""

    def __init__(self, pin_map: PinMap, backend: str, clock: Callable[[], float] = time.monotonic):
        self.pin_map = pin_map
        self.inputs, self.outputs, self.backend = open_gpio(backend, pin_map, clock=clock, status_patterns=STATUS_PATTERNS)
        self.console = GpioConsole(pin_map.inputs)
        self._sensors = {p.name: p for p in pin_map.inputs if p.kind in ("presence", "device") and p.seat}
        # how long a level needs to count: the sensors' state at start-up is read once this has passed
        self.settle_s = max((p.debounce_ms for p in self._sensors.values()), default=0) / 1000 + 0.05

    def poll(self, now: float) -> list[ButtonCommand | SensorEvent]:
        """The buttons pressed and the sensors changed by ``now`` (debounced), in time order."""
        return self.console.translate(self.inputs.poll(now))

    def sensors(self, now: float) -> list[SensorEvent]:
        """Every seat sensor's debounced state now, as events (to bring the rules up to date at start-up)."""
        states = self.inputs.states()
        return [SensorEvent(now, pin.seat, pin.kind, bool(states.get(name)),
                            (pin.detects or "device") if pin.kind == "device" else None)
                for name, pin in self._sensors.items() if pin.seat is not None and pin.kind != "button"]

    def show(self, lights: TableLights, now: float) -> None:
        show_lights(self.outputs, lights)
        self.outputs.poll(now)

    def expander_faults(self) -> dict[str, str]:
        """The port expanders that do not answer now, with why."""
        return self.backend.faults

    def close(self) -> None:
        try:
            self.outputs.close()
        finally:
            self.backend.close()
