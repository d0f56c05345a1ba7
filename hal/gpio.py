"""GPIO: what the Raspberry Pi's header carries besides RFID.

Inputs are the dealer's console buttons (new hand, misdeal, declare raise / all-in / call, undo, floor call,
confirm, start the clock) and two sensors per seat (a player is present; an electronic device is detected). Outputs
are a light per seat ("action on you", steady or blinking) and one table status light.

Layers, each usable alone:

* the **pin map** (:class:`PinMap`): read from the table configuration's ``[gpio]`` section by
  :func:`parse_pin_map` after :func:`validate_pin_map` found nothing wrong with it (docs/gpio.md has the layout);
* a **backend** (:class:`GpioBackend`) chosen by name: ``rpi`` drives the pins through the ``RPi.GPIO`` module
  (RPi.GPIO itself on a Pi 2-4, or the drop-in rpi-lgpio on any Pi 2-5), imported only when that backend is
  opened, so this module imports on any laptop; ``sim`` keeps the pins in memory for the simulator and the tests;
  pins on MCP23017 **port expanders** (``[gpio.expanders]``) go through :mod:`hal.expander` over I2C instead of the
  header's backend (their pin numbers are :func:`expander_pin` numbers, 1000 and up: see there);
* :class:`GpioInputs` debounces raw edges into :class:`GpioInputEvent` presses, releases and sensor changes.
  Debouncing lives here, not in the library (whose ``bouncetime`` means different things in RPi.GPIO and
  rpi-lgpio), so a table behaves the same on every Pi. Edges arrive on the library's thread; they are queued and
  turned into events in :meth:`GpioInputs.poll`, on the daemon's thread, with the time it gives;
* :class:`GpioOutputs` drives the lights from a desired state; blinking is computed from the time given to
  :meth:`GpioOutputs.poll`: no threads, no sleeping.

:func:`open_gpio` wires the three together. On top of them:

* :class:`GpioConsole` turns debounced events into what the controller takes: a :class:`hal.events.ButtonCommand`
  per button press (a command body of the MQTT commands' shape, :data:`BUTTON_COMMANDS`) and a
  :class:`hal.events.SensorEvent` per sensor change;
* :class:`TableLights` says what the lights show from the controller's state (seat to act, the action clock's
  lights, link down, deck not registered, an irregularity waiting for the floor, game stopped);
  :meth:`GpioOutputs.show` applies it and :func:`light_levels` computes the pin levels at a given time.
"""

import atexit
import heapq
import importlib
import importlib.util
import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, MutableMapping, Protocol

from hal.events import DEVICE_KINDS, ButtonCommand, SensorEvent

# ---- what a table can have ------------------------------------------------------------------------------

BUTTONS = ("new_hand", "misdeal", "declare_raise", "declare_all_in", "declare_call", "undo", "floor_call", "confirm",
           "start_clock")
SEAT_KEYS = ("light", "presence", "device")
BACKENDS = ("rpi", "sim")
MAX_SEATS = 10
PULLS = ("up", "down", "off")
LIGHT_MODES = ("off", "on", "blink")

# Status conditions, most urgent first: the light shows the first one that is active.
STATUS_CONDITIONS = ("link_down", "journal_failing", "awaiting_floor", "broker_refuses", "deck_not_registered",
                     "game_stopped")
# How each one looks: "on" (steady) or (period_s, lit_s) — lit for the first lit_s of every period.
STATUS_PATTERNS: dict[str, str | tuple[float, float]] = {
    "link_down": (0.25, 0.125),  # fast blink, 4 Hz: the table cannot see the cards
    "journal_failing": (1.0, 0.75),  # long on, short off: nothing is journaled (disk full), nothing published
    "awaiting_floor": "on",  # steady: an irregularity waits for the floor; do not go on
    "broker_refuses": (0.5, 0.25),  # 2 Hz: the broker refuses the events (its ACL); they wait in the journal
    "deck_not_registered": (1.0, 0.5),  # slow blink, 1 Hz
    "game_stopped": (2.0, 0.2),  # a short flash every 2 s
}
SEAT_BLINK = (1.0, 0.5)  # a seat light in "blink": 1 Hz, half lit

DEFAULT_DEBOUNCE_MS = {"button": 20, "presence": 500, "device": 200}
MAX_DEBOUNCE_MS = 10_000

# The 40-pin header (every Pi since the B+, Pi 5 included) brings out BCM GPIO 0 to 27. 0 and 1 are the HAT ID
# EEPROM's I2C bus and are left alone; 2 to 27 are usable.
HEADER_GPIO = range(2, 28)
RESERVED_GPIO = {0: "the HAT ID EEPROM (ID_SD)", 1: "the HAT ID EEPROM (ID_SC)"}
# 2 and 3 carry 1.8 kΩ pull-ups to 3.3 V on the board itself (they are the I2C1 bus).
I2C_PULLED_UP = {2: "I2C1 SDA", 3: "I2C1 SCL"}
# Physical pin → what is on it, to explain a physical number written where a BCM number belongs.
PHYSICAL_PINS = {
    1: "3.3 V", 2: "5 V", 3: "BCM 2", 4: "5 V", 5: "BCM 3", 6: "ground", 7: "BCM 4", 8: "BCM 14", 9: "ground",
    10: "BCM 15", 11: "BCM 17", 12: "BCM 18", 13: "BCM 27", 14: "ground", 15: "BCM 22", 16: "BCM 23", 17: "3.3 V",
    18: "BCM 24", 19: "BCM 10", 20: "ground", 21: "BCM 9", 22: "BCM 25", 23: "BCM 11", 24: "BCM 8", 25: "ground",
    26: "BCM 7", 27: "BCM 0 (ID_SD)", 28: "BCM 1 (ID_SC)", 29: "BCM 5", 30: "ground", 31: "BCM 6", 32: "BCM 12",
    33: "BCM 13", 34: "ground", 35: "BCM 19", 36: "BCM 16", 37: "BCM 26", 38: "BCM 20", 39: "ground", 40: "BCM 21",
}

# MCP23017 port expanders on I2C (hal/expander.py drives them). Each chip has 16 pins: GPA0-7 are pins 0-7, GPB0-7
# are pins 8-15. Its address is 0x20 plus its A2 A1 A0 pins. Its only internal resistors are 100 kΩ pull-ups.
# Since revision D (2022) of the datasheet GPA7 and GPB7 are output only: an input there can corrupt SDA.
EXPANDER_ADDRESSES = range(0x20, 0x28)
EXPANDER_PINS = 16
EXPANDER_OUTPUT_ONLY = {7: "GPA7", 15: "GPB7"}
EXPANDER_BUS = 1  # I2C1, on BCM 2 (SDA) and 3 (SCL): /dev/i2c-1
# Inside the HAL an expander pin is an int like a BCM number, out of the header's range: EXPANDER_PIN_BASE plus
# EXPANDER_PIN_STRIDE times the expander's position in [gpio.expanders] (0 for the first) plus its pin (0-15).
# The first expander's A7 is 1007, the second's B0 is 1108. Only the HAL sees these numbers: configurations name
# the expander and its pin.
EXPANDER_PIN_BASE = 1000
EXPANDER_PIN_STRIDE = 100
_EXPANDER_PIN_NAME = re.compile(r"(?:GP)?([AB])([0-7])", re.IGNORECASE)

InputKind = Literal["button", "presence", "device"]
OutputKind = Literal["seat_light", "status_light"]


class GpioError(RuntimeError):
    """A pin could not be set up, read or written."""


class GpioUnavailable(GpioError):
    """The GPIO library is missing or cannot run here; the message says what to install or change."""


# ---- data -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpioInputEvent:
    """A debounced change of an input.

    ``value`` is True when the input became active (button pressed, player present, device detected).
    ``t`` is when the level changed — the start of the stable period, not the moment it was confirmed.
    ``duration_s`` is how long the previous state lasted: the hold time on a button release (None on a press);
    the time off / on for a sensor; None when the previous state began before the HAL started.
    """

    name: str  # a button ("new_hand", ...) or "seat3.presence" / "seat3.device"
    kind: InputKind
    seat: int | None
    value: bool
    t: float
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class InputPin:
    name: str
    bcm_pin: int
    kind: InputKind
    seat: int | None = None
    active_low: bool = True
    pull: Literal["up", "down", "off"] = "up"
    debounce_ms: int = 20
    detects: str | None = None  # device sensors: what they detect (hal.events.DEVICE_KINDS)


@dataclass(frozen=True, slots=True)
class OutputPin:
    name: str  # "seat3.light" or "status_light"
    bcm_pin: int
    kind: OutputKind
    seat: int | None = None
    active_low: bool = False  # True: the light is on when the pin is low (many relay boards)


@dataclass(frozen=True, slots=True)
class Expander:
    """An MCP23017 port expander of ``[gpio.expanders]``: ``name = { address = 0x20, bus = 1 }``.

    ``index`` is its position in the section (0 for the first written): its pins are numbered from
    ``EXPANDER_PIN_BASE + EXPANDER_PIN_STRIDE * index`` (:func:`expander_pin`).
    """

    name: str
    address: int
    bus: int = EXPANDER_BUS
    index: int = 0

    def pin(self, number: int) -> int:
        """The HAL's number of this expander's pin ``number`` (0-15: GPA0-7, GPB0-7)."""
        return expander_pin(self.index, number)

    @property
    def device(self) -> str:
        return f"/dev/i2c-{self.bus}"

    def __str__(self) -> str:
        return f"expander '{self.name}' (MCP23017 at 0x{self.address:02X} on {self.device})"


def expander_pin(index: int, pin: int) -> int:
    """The HAL's number of pin ``pin`` (0-15) of the expander at position ``index`` of [gpio.expanders]."""
    if not 0 <= pin < EXPANDER_PINS or index < 0:
        raise ValueError(f"expander pin {pin} of expander #{index}: expected a pin from 0 to {EXPANDER_PINS - 1}")
    return EXPANDER_PIN_BASE + EXPANDER_PIN_STRIDE * index + pin


def split_expander_pin(number: int) -> tuple[int, int] | None:
    """(expander index, pin 0-15) of an expander pin number, None for a header (BCM) pin."""
    if number < EXPANDER_PIN_BASE:
        return None
    index, pin = divmod(number - EXPANDER_PIN_BASE, EXPANDER_PIN_STRIDE)
    return (index, pin) if pin < EXPANDER_PINS else None


def expander_pin_name(pin: int) -> str:
    """The datasheet's name of an expander pin without its "GP": 0 → "A0", 15 → "B7"."""
    return f"{'AB'[pin // 8]}{pin % 8}"


def pin_label(number: int, expanders: Iterable[Expander] = ()) -> str:
    """A pin as people name it: "BCM 17", or "expander 'x1' pin 7 (A7)" for an expander pin."""
    split = split_expander_pin(number)
    if split is None:
        return f"BCM {number}"
    index, pin = split
    name = next((e.name for e in expanders if e.index == index), None)
    chip = f"expander {name!r}" if name is not None else f"expander #{index + 1}"
    return f"{chip} pin {pin} ({expander_pin_name(pin)})"


@dataclass(frozen=True)
class PinMap:
    backend: str = "sim"
    inputs: tuple[InputPin, ...] = ()
    outputs: tuple[OutputPin, ...] = ()
    expanders: tuple[Expander, ...] = ()  # [gpio.expanders]: the MCP23017s some of the pins are on

    def label(self, number: int) -> str:
        """A pin as people name it (:func:`pin_label`)."""
        return pin_label(number, self.expanders)

    def input(self, name: str) -> InputPin:
        for pin in self.inputs:
            if pin.name == name:
                return pin
        raise KeyError(f"no GPIO input named {name!r} (inputs: {', '.join(p.name for p in self.inputs) or 'none'})")

    def output(self, name: str) -> OutputPin:
        for pin in self.outputs:
            if pin.name == name:
                return pin
        raise KeyError(f"no GPIO output named {name!r} (outputs: {', '.join(p.name for p in self.outputs) or 'none'})")


# ---- the [gpio] section: validation and parsing ---------------------------------------------------------

KeyPath = tuple[str, ...]
_SEAT_KEY = re.compile(r"[1-9][0-9]*")  # no leading zero: seats.01 is not seat 1


def validate_pin_map(section: Any, seats: int | None = None, reserved: Mapping[int, str] | None = None,
                     root: KeyPath = ("gpio",)) -> list[tuple[KeyPath, str]]:
    """Every problem of a ``[gpio]`` section, as (key path, message saying what was expected).

    ``seats``: the table's number of seats (None when unknown: seats 1 to 10 are accepted).
    ``reserved``: BCM pins the table uses for something else (a reader on the Pi's UART, an I2C expander),
    mapped to what uses them; a pin map that claims one is refused.
    """
    return _read_pin_map(section, seats, reserved or {}, root)[1]


def parse_pin_map(section: Any, seats: int | None = None, reserved: Mapping[int, str] | None = None,
                  root: KeyPath = ("gpio",)) -> PinMap:
    """The pin map of a valid ``[gpio]`` section (None or {}: no GPIO); ValueError listing the problems if not."""
    pin_map, problems = _read_pin_map(section, seats, reserved or {}, root)
    if problems:
        raise ValueError("; ".join(f"{'.'.join(path)}: {message}" for path, message in problems))
    return pin_map


def _describe(value: Any) -> str:  # as rfid_table.config describes a value of the wrong type
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class _User:
    path: KeyPath  # where the entry is written (gpio.buttons.new_hand)
    pin_path: KeyPath  # where its pin number is written
    pin: int
    direction: Literal["input", "output"]
    what: str  # "the new_hand button", "seat 2 light"


_EXPANDER_PINS_EXPECTED = "0 to 15, or A0 to A7 and B0 to B7 (GPA0-GPA7 are 0-7, GPB0-GPB7 are 8-15)"


class _Reader:
    def __init__(self, seats: int | None, reserved: Mapping[int, str]):
        self.seats = seats
        self.reserved = dict(reserved)
        self.problems: list[tuple[KeyPath, str]] = []
        self.users: list[_User] = []
        self.inputs: list[InputPin] = []
        self.outputs: list[OutputPin] = []
        self.expanders: dict[str, Expander] = {}  # every one written, by name (a wrong one too: its pins are checked)

    def problem(self, path: KeyPath, message: str) -> None:
        self.problems.append((path, message))

    def label(self, pin: int) -> str:
        return pin_label(pin, self.expanders.values())

    def pin_number(self, value: Any, path: KeyPath) -> int | None:
        expected = f"a BCM GPIO number from {HEADER_GPIO.start} to {HEADER_GPIO.stop - 1}"
        if not _is_int(value):
            self.problem(path, f"expected {expected}, got {_describe(value)}")
            return None
        if value in RESERVED_GPIO:
            self.problem(path, f"BCM {value} is reserved for {RESERVED_GPIO[value]} (expected {expected})")
            return None
        if value not in HEADER_GPIO:
            hint = ""
            if value in PHYSICAL_PINS:
                hint = f"; physical pin {value} is {PHYSICAL_PINS[value]} — this map uses BCM numbers"
            self.problem(path, f"BCM {value} is not a GPIO of the 40-pin header (expected {expected}{hint})")
            return None
        if value in self.reserved:
            self.problem(path, f"BCM {value} is used by {self.reserved[value]} (expected another pin)")
            return None
        return value

    # [gpio.expanders]
    def read_expanders(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, dict):
            self.problem(path, f"expected a table of name = {{ address = 0x20 }}, got {_describe(value)}")
            return
        taken: dict[tuple[int, int], str] = {}  # (bus, address) → the expander written there first
        for index, (name, entry) in enumerate(value.items()):
            p = path + (name,)
            address, bus = None, EXPANDER_BUS
            if not isinstance(entry, dict):
                self.problem(p, "expected { address = 0x20 } (with bus = N when the chip is not on I2C bus 1), got "
                                f"{_describe(entry)}")
            else:
                for key in entry:
                    if key not in ("address", "bus"):
                        self.problem(p + (key,), "unknown key (expected one of: address, bus)")
                raw = entry.get("address")
                if "address" not in entry:
                    self.problem(p + ("address",), "missing (expected the chip's I2C address, 0x20 to 0x27, as its "
                                                   "A2 A1 A0 pins select it)")
                elif not _is_int(raw) or raw not in EXPANDER_ADDRESSES:
                    got = f"0x{raw:02X}" if _is_int(raw) and raw >= 0 else _describe(raw)
                    self.problem(p + ("address",), "expected an MCP23017 address from 0x20 to 0x27 (0x20 plus what "
                                                   f"its A2 A1 A0 pins add), got {got}")
                else:
                    address = raw
                raw = entry.get("bus", EXPANDER_BUS)
                if not _is_int(raw) or not 0 <= raw <= 99:
                    got = _describe(raw) if not _is_int(raw) else repr(raw)
                    self.problem(p + ("bus",), "expected an I2C bus number, the N of /dev/i2c-N (1: the header's SDA "
                                               f"and SCL on BCM 2 and 3), got {got}")
                else:
                    bus = raw
                if address is not None:
                    where = taken.setdefault((bus, address), ".".join(p))
                    if where != ".".join(p):
                        self.problem(p + ("address",), f"0x{address:02X} on I2C bus {bus} is already the address of "
                                                       f"{where} (expected another address: give each chip on a bus "
                                                       "its own A2 A1 A0 setting)")
            self.expanders[name] = Expander(name, EXPANDER_ADDRESSES.start if address is None else address, bus, index)
        if any(e.bus == EXPANDER_BUS for e in self.expanders.values()):
            for pin, what in I2C_PULLED_UP.items():  # the bus's own pins cannot also be inputs or outputs
                self.reserved.setdefault(pin, f"the port expanders' I2C bus ({what}, {'.'.join(path)})")

    def expander_named(self, value: Any, path: KeyPath) -> Expander | None:
        if not isinstance(value, str):
            self.problem(path, f"expected the name of an expander of [gpio.expanders], got {_describe(value)}")
            return None
        if value in self.expanders:
            return self.expanders[value]
        if not self.expanders:
            self.problem(path, f"unknown expander {value!r}: there is no [gpio.expanders] section (expected "
                               f"{value} = {{ address = 0x20 }} in [gpio.expanders])")
        else:
            self.problem(path, f"unknown expander {value!r} (expected one of: {', '.join(self.expanders)})")
        return None

    def expander_pin_number(self, value: Any, path: KeyPath, expander: Expander | None, direction: str,
                            what: str) -> int | None:
        chip = f"expander {expander.name!r}" if expander else "an expander"
        if _is_int(value):
            pin = value
        elif isinstance(value, str) and (named := _EXPANDER_PIN_NAME.fullmatch(value.strip())):
            pin = 8 * "AB".index(named.group(1).upper()) + int(named.group(2))
        else:
            self.problem(path, f"expected a pin of {chip}: {_EXPANDER_PINS_EXPECTED}, got {_describe(value)}")
            return None
        if not 0 <= pin < EXPANDER_PINS:
            self.problem(path, f"{chip} has no pin {pin} (expected {_EXPANDER_PINS_EXPECTED})")
            return None
        if direction == "input" and pin in EXPANDER_OUTPUT_ONLY:
            self.problem(path, f"pin {pin} ({EXPANDER_OUTPUT_ONLY[pin]}) of {chip} is output only: the MCP23017's "
                               "datasheet (revision D) forbids GPA7 and GPB7 as inputs, which can corrupt the I2C "
                               f"bus (expected another pin for the {what}; pins 7 and 15 can drive lights)")
            return None
        return None if expander is None else expander.pin(pin)

    def entry(self, value: Any, path: KeyPath, direction: Literal["input", "output"], what: str,
              kind: str) -> tuple[int, dict] | None:
        """An entry written as a pin number or as an inline table; returns (pin, options) or None."""
        allowed = ("pin", "expander", "active_low", "pull", "debounce_ms") if direction == "input" else (
            "pin", "expander", "active_low")
        if kind == "device":
            allowed += ("detects",)
        on_expander, expander = False, None
        if _is_int(value):
            options, pin_path, raw_pin = {}, path, value
        elif isinstance(value, dict):
            for key in value:
                if key in allowed:
                    continue
                if key in ("pull", "debounce_ms"):
                    self.problem(path + (key,), f"{key} applies to inputs only: the {what} is an output "
                                                f"(expected one of: {', '.join(allowed)})")
                elif key == "detects":
                    self.problem(path + (key,), f"detects applies to device sensors only: not to the {what} "
                                                f"(expected one of: {', '.join(allowed)})")
                else:
                    self.problem(path + (key,), f"unknown key (expected one of: {', '.join(allowed)})")
            if "expander" in value:
                on_expander = True
                expander = self.expander_named(value["expander"], path + ("expander",))
            if "pin" not in value:
                if on_expander:
                    chip = f"expander {expander.name!r}" if expander else "the expander"
                    self.problem(path + ("pin",), f"missing (expected the pin of the {what} on {chip}: "
                                                  f"{_EXPANDER_PINS_EXPECTED})")
                else:
                    self.problem(path + ("pin",), f"missing (expected the BCM GPIO number of the {what})")
                return None
            options, pin_path, raw_pin = value, path + ("pin",), value["pin"]
        else:
            example = "{ pin = N, active_low = true }" if direction == "input" else "{ pin = N }"
            self.problem(path, f"expected a BCM pin number or {example}, got {_describe(value)}")
            return None
        if on_expander:
            pin = self.expander_pin_number(raw_pin, pin_path, expander, direction, what)
        else:
            pin = self.pin_number(raw_pin, pin_path)
        # Options are checked even when the pin is wrong: every problem is reported at once.
        checked: dict = {}
        active_low = options.get("active_low", direction == "input")
        if not isinstance(active_low, bool):
            self.problem(path + ("active_low",), f"expected true or false, got {_describe(active_low)}")
            active_low = direction == "input"
        checked["active_low"] = active_low
        if direction == "input":
            pull = options.get("pull", "up" if active_low else "down")
            if not isinstance(pull, str) or pull not in PULLS:
                got = _describe(pull) if not isinstance(pull, str) else repr(pull)
                self.problem(path + ("pull",), f"expected one of: {', '.join(PULLS)}, got {got}")
                pull = "up" if active_low else "down"
            elif on_expander and pull == "down":
                if "pull" in options:
                    self.problem(path + ("pull",), "pull = \"down\" on an expander pin: the MCP23017 has internal "
                                                   "pull-ups only, no pull-downs (expected \"up\", or \"off\" with an "
                                                   "external pull-down resistor or a sensor that drives the line both "
                                                   "ways)")
                else:
                    self.problem(path + ("pull",), "missing: with active_low = false the pull would be \"down\", and "
                                                   "the MCP23017 has internal pull-ups only, no pull-downs (expected "
                                                   "pull = \"off\" with an external pull-down resistor or a sensor "
                                                   "that drives the line both ways, or the input wired active low)")
            elif active_low and pull == "down" or not active_low and pull == "up":
                wanted = "up" if active_low else "down"
                self.problem(path + ("pull",),
                             f"pull = \"{pull}\" with active_low = {str(active_low).lower()}: an open or unplugged "
                             f"input would read as active (expected pull = \"{wanted}\", or \"off\" for a sensor "
                             "that drives the line both ways)")
            if pin in I2C_PULLED_UP and pull == "down":
                self.problem(pin_path, f"BCM {pin} ({I2C_PULLED_UP[pin]}) has a 1.8 kΩ pull-up on the board that "
                                       "a pull-down cannot overcome (expected an active-low input, an output, "
                                       "or another pin)")
                pin = None
            checked["pull"] = pull
            debounce = options.get("debounce_ms", DEFAULT_DEBOUNCE_MS[kind])
            if not _is_int(debounce) or not 0 <= debounce <= MAX_DEBOUNCE_MS:
                got = _describe(debounce) if not _is_int(debounce) else repr(debounce)
                self.problem(path + ("debounce_ms",), f"expected milliseconds from 0 to {MAX_DEBOUNCE_MS}, got {got}")
                debounce = DEFAULT_DEBOUNCE_MS[kind]
            checked["debounce_ms"] = debounce
        if kind == "device":
            detects = options.get("detects", "device")
            if not isinstance(detects, str) or detects not in DEVICE_KINDS:
                got = _describe(detects) if not isinstance(detects, str) else repr(detects)
                self.problem(path + ("detects",), f"expected one of: {', '.join(DEVICE_KINDS)}, got {got}")
                detects = "device"
            checked["detects"] = detects
        if pin is None:
            return None
        self.claim(_User(path, pin_path, pin, direction, what))
        return pin, checked

    def claim(self, user: _User) -> None:
        for first in self.users:
            if first.pin != user.pin:
                continue
            where = ".".join(first.path)
            pin = self.label(user.pin)
            if first.direction != user.direction:
                self.problem(user.pin_path, f"{pin} is an {user.direction} here ({user.what}) but an "
                                            f"{first.direction} at {where} ({first.what}): a pin is either an input "
                                            "or an output (expected another pin)")
            else:
                self.problem(user.pin_path, f"{pin} is already used by {where} ({first.what}) (expected "
                                            "another pin: each pin serves one function)")
            return
        self.users.append(user)

    def buttons(self, value: Any, path: KeyPath) -> None:
        if not isinstance(value, dict):
            self.problem(path, f"expected a table of button = {{ pin = N }}, got {_describe(value)}")
            return
        for name, entry in value.items():
            if name not in BUTTONS:
                self.problem(path + (name,), f"unknown button (expected one of: {', '.join(BUTTONS)})")
                continue
            read = self.entry(entry, path + (name,), "input", f"{name} button", "button")
            if read:
                pin, o = read
                self.inputs.append(InputPin(name, pin, "button", None, o["active_low"], o["pull"], o["debounce_ms"]))

    def seat_tables(self, value: Any, path: KeyPath) -> None:
        last = self.seats or MAX_SEATS
        if not isinstance(value, dict):
            self.problem(path, f"expected [gpio.seats.N] tables for seats 1 to {last}, got {_describe(value)}")
            return
        for key, entries in value.items():
            seat_path = path + (key,)
            if not _SEAT_KEY.fullmatch(key):
                self.problem(seat_path, f"expected a seat number from 1 to {last}, like [gpio.seats.1]")
                continue
            seat = int(key)
            if seat > last:
                told = f"table.seats is {self.seats}" if self.seats else f"a table has at most {MAX_SEATS} seats"
                self.problem(seat_path, f"no seat {seat}: {told} (expected 1 … {last})")
                continue
            if not isinstance(entries, dict):
                self.problem(seat_path, f"expected a table with {', '.join(SEAT_KEYS)}, got {_describe(entries)}")
                continue
            for item, entry in entries.items():
                p = seat_path + (item,)
                if item == "light":
                    read = self.entry(entry, p, "output", f"seat {seat} light", "light")
                    if read:
                        self.outputs.append(OutputPin(f"seat{seat}.light", read[0], "seat_light", seat,
                                                      read[1]["active_low"]))
                elif item in ("presence", "device"):
                    read = self.entry(entry, p, "input", f"seat {seat} {item} sensor", item)
                    if read:
                        pin, o = read
                        self.inputs.append(InputPin(f"seat{seat}.{item}", pin, item, seat, o["active_low"],
                                                    o["pull"], o["debounce_ms"], o.get("detects")))
                else:
                    self.problem(p, f"unknown key (expected one of: {', '.join(SEAT_KEYS)})")

    def status_light(self, value: Any, path: KeyPath) -> None:
        read = self.entry(value, path, "output", "status light", "light")
        if read:
            self.outputs.append(OutputPin("status_light", read[0], "status_light", None, read[1]["active_low"]))


def _read_pin_map(section: Any, seats: int | None, reserved: Mapping[int, str],
                  root: KeyPath) -> tuple[PinMap, list[tuple[KeyPath, str]]]:
    if section is None or section == {}:
        return PinMap(), []
    r = _Reader(seats if seats and seats > 0 else None, reserved)
    if not isinstance(section, dict):
        r.problem(root, f"expected a table, got {_describe(section)}")
        return PinMap(), r.problems
    keys = ("backend", "buttons", "seats", "status_light", "expanders")
    backend = "sim"
    if "expanders" in section:  # first, wherever it is written: the pins refer to them
        r.read_expanders(section["expanders"], root + ("expanders",))
    for key, value in section.items():  # in the order written, so a pin used twice names the first user
        path = root + (key,)
        if key == "expanders":
            continue
        if key == "backend":
            if not isinstance(value, str):
                r.problem(path, f"expected one of: {', '.join(BACKENDS)}, got {_describe(value)}")
            elif value not in BACKENDS:
                r.problem(path, f"expected one of: {', '.join(BACKENDS)}, got {value!r}")
            else:
                backend = value
        elif key == "buttons":
            r.buttons(value, path)
        elif key == "seats":
            r.seat_tables(value, path)
        elif key == "status_light":
            r.status_light(value, path)
        else:
            r.problem(path, f"unknown key (expected one of: {', '.join(keys)})")
    if "backend" not in section:
        r.problem(root + ("backend",), f"missing (expected one of: {', '.join(BACKENDS)}; \"rpi\" on the table, "
                                       "\"sim\" on a laptop)")
    return PinMap(backend, tuple(r.inputs), tuple(r.outputs), tuple(r.expanders.values())), r.problems


# ---- backends -------------------------------------------------------------------------------------------

EdgeCallback = Callable[[int, bool, float | None], None]  # (BCM pin, level, t or None: "stamp it on arrival")


class GpioBackend(Protocol):
    """Pins by BCM number (or :func:`expander_pin` number); levels are electrical (True = high), whatever is active.

    A backend whose pins cannot call back by themselves (the I2C port expanders of :mod:`hal.expander`) also has
    ``poll(now)``: :meth:`GpioInputs.poll` calls it first; it reads the pins and calls the watchers of those that
    changed, stamped ``now``, on the caller's thread.
    """

    name: str

    def setup_input(self, pin: int, pull: str) -> None: ...

    def setup_output(self, pin: int, initial: bool = False) -> None: ...

    def read(self, pin: int) -> bool: ...

    def write(self, pin: int, level: bool) -> None: ...

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        """Call ``callback(pin, level, t)`` on both edges, possibly from another thread."""

    def close(self) -> None: ...


_MISSING_LIBRARY = (
    "the GPIO backend \"rpi\" needs the RPi.GPIO module, which is not installed in this Python environment "
    "({error}). Install it in the daemon's virtualenv: on a Raspberry Pi 5, `pip install rpi-lgpio` (or "
    "`pip install 'rfid-table[gpio-pi5]'`); on a Pi 2, 3, 4 or Zero, rpi-lgpio works too, or `pip install RPi.GPIO` "
    "(`'rfid-table[gpio]'`). The two provide the same module and cannot be installed side by side: uninstall one "
    "before installing the other. Off the Pi, use backend = \"sim\"."
)
_PI5_WITH_RPI_GPIO = (
    "RPi.GPIO does not run on the Raspberry Pi 5 ({error}): `pip uninstall RPi.GPIO` then `pip install rpi-lgpio`, "
    "which provides the same module on Pi 2 to 5"
)
_LGPIO_WORKDIR = (
    "importing RPi.GPIO failed ({error}). Under rpi-lgpio, lgpio creates its notification pipes (.lgd-nfy*) in the "
    "working directory, here {cwd}, which must be writable by the service's user: run the service with a writable "
    "WorkingDirectory= (for example StateDirectory=rfid-table and WorkingDirectory=/var/lib/rfid-table)"
)

# Labels of the gpiochip that drives the 40-pin header: Pi 5 (RP1), Pi 4, Pi 3 / Zero / 2.
HEADER_CHIP_LABELS = ("pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835")
_GPIO_GET_CHIPINFO_IOCTL = 0x8044B401  # _IOR(0xB4, 0x01, struct gpiochip_info { char name[32], label[32]; u32 lines })


def gpiochip_label(path: str) -> str | None:
    """The label of a /dev/gpiochipN character device (what ``gpiodetect`` shows in brackets), None if unreadable."""
    import fcntl  # Unix only: imported here so this module imports anywhere

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = fcntl.ioctl(fd, _GPIO_GET_CHIPINFO_IOCTL, bytes(68))
    except OSError:
        return None
    finally:
        os.close(fd)
    return info[32:64].split(b"\0", 1)[0].decode("ascii", "replace")


def find_header_gpiochip(dev: str = "/dev", label_of: Callable[[str], str | None] = gpiochip_label) -> int | None:
    """The number of the gpiochip driving the header, found by its label, never assumed.

    On the Pi 5 the header's chip was gpiochip4 until kernel 6.6.45 and is gpiochip0 since (some systems keep a
    gpiochip4 symlink); on earlier Pis it is gpiochip0. Symlinks are skipped: the real device is found anyway.
    """
    try:
        names = [n for n in os.listdir(dev) if re.fullmatch(r"gpiochip[0-9]+", n)]
    except OSError:
        return None
    for name in sorted(names, key=lambda n: int(n[8:])):
        path = os.path.join(dev, name)
        if os.path.islink(path):
            continue
        if label_of(path) in HEADER_CHIP_LABELS:
            return int(name[8:])
    return None


def choose_lgpio_chip(environ: MutableMapping[str, str] = os.environ,
                      find_chip: Callable[[], int | None] = find_header_gpiochip) -> int | None:
    """Tell rpi-lgpio which gpiochip is the header's (RPI_LGPIO_CHIP) unless the service already says so.

    rpi-lgpio picks a chip by number from the board model; a kernel that renumbered the chips breaks that guess.
    The classic RPi.GPIO ignores the variable.
    """
    if "RPI_LGPIO_CHIP" in environ:
        return None
    chip = find_chip()
    if chip is not None:
        environ["RPI_LGPIO_CHIP"] = str(chip)
    return chip


def _lgpio_installed() -> bool:
    try:
        return importlib.util.find_spec("lgpio") is not None
    except (ImportError, ValueError):
        return False


class RpiGpioBackend:
    """Pins through the ``RPi.GPIO`` module (RPi.GPIO on Pi 2-4, rpi-lgpio on Pi 2-5), BCM numbering.

    Edge detection uses no ``bouncetime``: :class:`GpioInputs` debounces, the same way on every library.
    """

    name = "rpi"

    def __init__(self, import_module: Callable[[str], Any] = importlib.import_module,
                 find_chip: Callable[[], int | None] = find_header_gpiochip):
        if _lgpio_installed():  # rpi-lgpio underneath
            choose_lgpio_chip(find_chip=find_chip)
        try:
            gpio = import_module("RPi.GPIO")
        except ImportError as exc:
            raise GpioUnavailable(_MISSING_LIBRARY.format(error=exc)) from exc
        except OSError as exc:
            raise GpioUnavailable(_LGPIO_WORKDIR.format(error=exc, cwd=os.getcwd())) from exc
        except RuntimeError as exc:  # "This module can only be run on a Raspberry Pi!"
            raise GpioUnavailable(f"RPi.GPIO cannot run on this machine ({exc}); off the Pi, use backend = \"sim\""
                                  ) from exc
        self._gpio = gpio
        self._callbacks: dict[int, Callable[[int], None]] = {}  # kept alive while the library holds them
        self._closed = False
        self._call("set BCM numbering", gpio.setmode, gpio.BCM)
        atexit.register(self.close)  # the pins are released even if the daemon forgets to close

    def _call(self, what: str, function: Callable, *args, **kwargs) -> Any:
        try:
            return function(*args, **kwargs)
        except GpioError:
            raise
        except Exception as exc:  # RuntimeError from RPi.GPIO, lgpio.error from rpi-lgpio ("GPIO busy")
            if "SOC peripheral base address" in str(exc):
                raise GpioUnavailable(_PI5_WITH_RPI_GPIO.format(error=exc)) from exc
            raise GpioError(f"cannot {what}: {exc}") from exc

    def setup_input(self, pin: int, pull: str) -> None:
        g = self._gpio
        pud = {"up": g.PUD_UP, "down": g.PUD_DOWN, "off": g.PUD_OFF}[pull]
        self._call(f"set up BCM {pin} as an input", g.setup, pin, g.IN, pull_up_down=pud)

    def setup_output(self, pin: int, initial: bool = False) -> None:
        g = self._gpio
        self._call(f"set up BCM {pin} as an output", g.setup, pin, g.OUT, initial=g.HIGH if initial else g.LOW)

    def read(self, pin: int) -> bool:
        return bool(self._call(f"read BCM {pin}", self._gpio.input, pin))

    def write(self, pin: int, level: bool) -> None:
        g = self._gpio
        self._call(f"write BCM {pin}", g.output, pin, g.HIGH if level else g.LOW)

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        g = self._gpio

        def on_edge(channel: int) -> None:  # on the library's thread
            try:
                level = bool(g.input(channel))
            except Exception:  # closing underneath us; the next poll's read catches up
                return
            callback(channel, level, None)

        self._callbacks[pin] = on_edge
        self._call(f"watch BCM {pin} for edges", g.add_event_detect, pin, g.BOTH, callback=on_edge)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self._callbacks.clear()
        self._gpio.cleanup()

    def __enter__(self) -> "RpiGpioBackend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SimulatedGpio:
    """Pins in memory: the simulator and the tests set input levels; outputs are recorded.

    Expander pins (:func:`expander_pin` numbers) are pins like the others here: no I2C.

    ``set_level`` calls the watchers at once, on the caller's thread, with the time given (None: the receiver
    stamps it). Input pins start at their inactive level.
    """

    name = "sim"

    def __init__(self, pin_map: PinMap | None = None):
        self.pin_map = pin_map or PinMap()
        self._inputs = {p.name: p for p in self.pin_map.inputs}
        self._outputs = {p.name: p for p in self.pin_map.outputs}
        self._active_low = {p.bcm_pin: p.active_low for p in (*self.pin_map.inputs, *self.pin_map.outputs)}
        self._lock = threading.Lock()
        self.levels: dict[int, bool] = {}
        self.directions: dict[int, str] = {}
        self.pulls: dict[int, str] = {}
        self.writes: list[tuple[int, bool]] = []  # every write, in order (setup's initial level included)
        self._watchers: dict[int, list[EdgeCallback]] = {}
        self.closed = False

    # the backend interface
    def setup_input(self, pin: int, pull: str) -> None:
        with self._lock:
            if self.directions.get(pin) != "input":  # setting a pin up again leaves what drives it alone
                self.levels[pin] = self._active_low.get(pin, pull == "up")  # inactive: high if active-low
            self.directions[pin], self.pulls[pin] = "input", pull

    def setup_output(self, pin: int, initial: bool = False) -> None:
        with self._lock:
            self.directions[pin] = "output"
            self.levels[pin] = bool(initial)
            self.writes.append((pin, bool(initial)))

    def read(self, pin: int) -> bool:
        with self._lock:
            if pin not in self.levels:
                raise GpioError(f"{self.pin_map.label(pin)} is not set up")
            return self.levels[pin]

    def write(self, pin: int, level: bool) -> None:
        with self._lock:
            if self.directions.get(pin) != "output":
                raise GpioError(f"{self.pin_map.label(pin)} is not set up as an output")
            self.levels[pin] = bool(level)
            self.writes.append((pin, bool(level)))

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        with self._lock:
            self._watchers.setdefault(pin, []).append(callback)

    def close(self) -> None:
        self.closed = True

    # the world's side
    def set_level(self, pin: int, level: bool, t: float | None = None) -> None:
        """Drive an input pin to an electrical level (an edge if it changes)."""
        with self._lock:
            if self.directions.get(pin) != "input":
                raise GpioError(f"{self.pin_map.label(pin)} is not set up as an input")
            if self.levels[pin] == bool(level):
                return
            self.levels[pin] = bool(level)
            watchers = list(self._watchers.get(pin, ()))
        for callback in watchers:
            callback(pin, bool(level), t)

    def set_active(self, name: str, active: bool, t: float | None = None) -> None:
        """Make a named input active or inactive (its wiring, active-low or not, is taken into account)."""
        pin = self._input(name)
        self.set_level(pin.bcm_pin, active != pin.active_low, t)

    def press(self, name: str, t: float | None = None) -> None:
        self.set_active(name, True, t)

    def release(self, name: str, t: float | None = None) -> None:
        self.set_active(name, False, t)

    def click(self, name: str, t: float, hold_s: float = 0.1) -> None:
        """Press at ``t`` and release ``hold_s`` later (both edges are queued with their times)."""
        self.set_active(name, True, t)
        self.set_active(name, False, t + hold_s)

    def output_active(self, name: str) -> bool:
        """Is the named output (``seat3.light``, ``status_light``) lit right now?"""
        if name not in self._outputs:
            raise KeyError(f"no GPIO output named {name!r}")
        pin = self._outputs[name]
        return self.levels.get(pin.bcm_pin, pin.active_low) != pin.active_low

    def _input(self, name: str) -> InputPin:
        if name not in self._inputs:
            raise KeyError(f"no GPIO input named {name!r} (inputs: {', '.join(self._inputs) or 'none'})")
        return self._inputs[name]


GPIO_BACKENDS: dict[str, Callable[[PinMap], GpioBackend]] = {
    "rpi": lambda pin_map: RpiGpioBackend(),
    "sim": SimulatedGpio,
}


# ---- inputs: debouncing ---------------------------------------------------------------------------------


@dataclass
class _InputState:
    pin: InputPin
    stable: bool  # the debounced state (active or not)
    since: float | None  # when it began (None: before the HAL started)
    raw: bool  # the last level seen, as active or not
    raw_since: float  # when it was first seen
    checked: float  # the latest time this input has been evaluated at: edges never go back before it


class GpioInputs:
    """Raw edges in, debounced :class:`GpioInputEvent` out.

    A level counts once it has been stable for the input's ``debounce_ms``: chatter inside the window gives one
    change; a glitch shorter than the window gives none. :meth:`edge` may be called from any thread (the
    library's callbacks); everything else happens in :meth:`poll`, on the caller's thread, at the time it gives.

    ``clock`` stamps edges that arrive without a time; it must count in the same time base as the ``now`` given
    to :meth:`poll`. Edges stamped later than ``now`` wait for a later poll. With a backend and ``resync``, each
    poll also reads the pins, so an edge the library dropped is noticed at the next poll. A backend with a
    ``poll(now)`` (I2C expanders, whose pins cannot call back) is sampled first in each poll: its pins' changes
    arrive as edges stamped ``now`` and are debounced like the others.
    """

    _EPSILON = 1e-9  # float tolerance when comparing a stable period with the window

    def __init__(self, pins: Iterable[InputPin], backend: GpioBackend | None = None, *,
                 clock: Callable[[], float] = time.monotonic, resync: bool = True,
                 initial: Mapping[str, bool] | None = None):
        self._clock = clock
        self._backend = backend
        self._resync = resync and backend is not None
        self._lock = threading.Lock()
        self._incoming: list[tuple[int, bool, float]] = []  # filled by edge() on any thread
        self._pending: list[tuple[float, int, int, bool]] = []  # heap of (t, seq, pin, level), poll's thread only
        self._seq = 0
        self._states: dict[int, _InputState] = {}
        self.edges_seen = 0  # raw edges processed (chatter shows here, not in the events)
        for pin in pins:
            active = bool((initial or {}).get(pin.name, False))
            if backend is not None:
                backend.setup_input(pin.bcm_pin, pin.pull)
                backend.watch(pin.bcm_pin, self.edge)  # before the first read: no change falls between the two
                active = backend.read(pin.bcm_pin) != pin.active_low
            start = float("-inf")
            self._states[pin.bcm_pin] = _InputState(pin, active, None, active, start, start)

    def edge(self, pin: int, level: bool, t: float | None = None) -> None:
        """Record a raw edge (thread-safe): ``level`` is electrical; ``t`` None means now, by ``clock``."""
        if t is None:
            t = self._clock()
        with self._lock:
            self._incoming.append((pin, bool(level), float(t)))

    def poll(self, now: float) -> list[GpioInputEvent]:
        """The debounced changes that completed by ``now``, in time order."""
        sample = getattr(self._backend, "poll", None)
        if sample is not None:  # polled pins (I2C expanders): their changes arrive as edges stamped now
            sample(now)
        with self._lock:
            incoming, self._incoming = self._incoming, []
        for pin, level, t in incoming:
            if pin in self._states:
                self._seq += 1
                heapq.heappush(self._pending, (t, self._seq, pin, level))
        events: list[GpioInputEvent] = []
        while self._pending and self._pending[0][0] <= now:
            t, _, pin, level = heapq.heappop(self._pending)
            self._apply(self._states[pin], level, t, events)
        waiting = {pin for _, _, pin, _ in self._pending}
        for pin, state in self._states.items():
            if self._resync and pin not in waiting:
                level = self._backend.read(pin)
                if (level != state.pin.active_low) != state.raw:
                    self._apply(state, level, now, events, counted=False)
            self._settle(state, now, events)
            state.checked = max(state.checked, now)
        events.sort(key=lambda e: e.t)
        return events

    def active(self, name: str) -> bool:
        """The debounced state of an input."""
        for state in self._states.values():
            if state.pin.name == name:
                return state.stable
        raise KeyError(f"no GPIO input named {name!r}")

    def states(self) -> dict[str, bool]:
        """Every input's debounced state (for the snapshot and the live view)."""
        return {state.pin.name: state.stable for state in self._states.values()}

    def _apply(self, state: _InputState, level: bool, t: float, events: list, counted: bool = True) -> None:
        if counted:
            self.edges_seen += 1
        t = max(t, state.checked)  # out-of-order arrivals never rewrite what was already decided
        self._settle(state, t, events)  # the level before this edge may have been stable long enough
        active = level != state.pin.active_low
        if active != state.raw:
            state.raw, state.raw_since = active, t
        state.checked = t

    def _settle(self, state: _InputState, t: float, events: list) -> None:
        if state.raw == state.stable or t - state.raw_since < state.pin.debounce_ms / 1000 - self._EPSILON:
            return
        pin, began = state.pin, state.raw_since
        previous = None if state.since is None else began - state.since
        duration = None if pin.kind == "button" and state.raw else previous
        events.append(GpioInputEvent(pin.name, pin.kind, pin.seat, state.raw, began, duration))
        state.stable, state.since = state.raw, began


# ---- the dealer console and the seat sensors, as the controller takes them ----------------------------------

# What each button asks for: the body of a command of the same shape as the MQTT commands (rfid_table.commands).
# A declare or start_clock without a seat means the seat whose turn it is: the controller fills it in.
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


# ---- outputs: lights ------------------------------------------------------------------------------------


class GpioOutputs:
    """Seat lights and the status light, driven from a desired state.

    Set what each light should show (:meth:`set_seat_light`, :meth:`set_status`); :meth:`poll` computes the
    levels at the time it is given — blinking included — and writes only the pins that change. A blink starts
    lit at the first poll after it was asked for, so the change is seen at once.
    """

    def __init__(self, pins: Iterable[OutputPin], backend: GpioBackend | None = None):
        self._backend = backend
        self._pins = list(pins)
        self._seat_modes: dict[int, str] = {}
        self._conditions: frozenset[str] = frozenset()
        self._shown: dict[str, tuple[str, float]] = {}  # output name → (pattern key, when it started)
        self._levels: dict[int, bool] = {}  # what each pin was last driven to (electrical)
        for pin in self._pins:
            off = pin.active_low
            if backend is not None:
                backend.setup_output(pin.bcm_pin, initial=off)
            self._levels[pin.bcm_pin] = off

    def set_seat_light(self, seat: int, mode: str) -> None:
        if mode not in LIGHT_MODES:
            raise ValueError(f"seat light mode {mode!r}: expected one of {', '.join(LIGHT_MODES)}")
        if not _is_int(seat) or seat < 1:
            raise ValueError(f"seat {seat!r}: expected a seat number from 1")
        self._seat_modes[seat] = mode

    def set_status(self, conditions: Iterable[str] = ()) -> None:
        """The conditions active now (replacing the previous set); the most urgent one is shown."""
        conditions = frozenset(conditions)
        unknown = conditions - set(STATUS_CONDITIONS)
        if unknown:
            raise ValueError(f"unknown status condition(s) {', '.join(sorted(unknown))}: expected "
                             f"{', '.join(STATUS_CONDITIONS)}")
        self._conditions = conditions

    @property
    def status_shown(self) -> str | None:
        """The condition the status light shows (None: all is well, the light is off)."""
        return next((c for c in STATUS_CONDITIONS if c in self._conditions), None)

    def seat_light(self, seat: int) -> str:
        return self._seat_modes.get(seat, "off")

    def show(self, lights: "TableLights") -> None:
        """Set every seat light and the status light from the controller's state (:class:`TableLights`)."""
        seats = {pin.seat for pin in self._pins if pin.seat is not None} | set(self._seat_modes)
        for seat, mode in lights.seat_modes(seats).items():
            self.set_seat_light(seat, mode)
        self.set_status(lights.conditions())

    def state(self) -> dict[str, str]:
        """What every configured light shows: "off" / "on" / "blink", or the status condition."""
        return {pin.name: self._pattern_key(pin) for pin in self._pins}

    def poll(self, now: float) -> None:
        for pin in self._pins:
            key = self._pattern_key(pin)
            shown = self._shown.get(pin.name)
            if shown is None or shown[0] != key:
                shown = self._shown[pin.name] = (key, now)
            lit = _lit(self._pattern(pin, key), now - shown[1])
            self._drive(pin, lit)

    def close(self) -> None:
        """Every light off (the backend's close then releases the pins)."""
        for pin in self._pins:
            self._drive(pin, False)

    def _pattern_key(self, pin: OutputPin) -> str:
        if pin.kind == "status_light":
            return self.status_shown or "off"
        return self._seat_modes.get(pin.seat, "off")

    @staticmethod
    def _pattern(pin: OutputPin, key: str) -> str | tuple[float, float]:
        if key in ("off", "on"):
            return key
        return SEAT_BLINK if pin.kind == "seat_light" else STATUS_PATTERNS[key]

    def _drive(self, pin: OutputPin, lit: bool) -> None:
        level = lit != pin.active_low
        if self._levels.get(pin.bcm_pin) == level:
            return
        if self._backend is not None:
            self._backend.write(pin.bcm_pin, level)
        self._levels[pin.bcm_pin] = level


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
    ``since[pin name]`` (when the pattern began; 0 when not given). :class:`GpioOutputs` does the same and keeps
    ``since`` itself, so a new blink starts lit.
    """
    pins = list(pins)
    modes = lights.seat_modes(p.seat for p in pins if p.seat is not None)
    shown = next((c for c in STATUS_CONDITIONS if c in lights.conditions()), None)
    levels = {}
    for pin in pins:
        if pin.kind == "status_light":
            pattern = STATUS_PATTERNS[shown] if shown else "off"
        else:
            mode = modes.get(pin.seat, "off")
            pattern = SEAT_BLINK if mode == "blink" else mode
        lit = _lit(pattern, t - (since or {}).get(pin.name, 0.0))
        levels[pin.bcm_pin] = lit != pin.active_low
    return levels


def _lit(pattern: str | tuple[float, float], elapsed: float) -> bool:
    if pattern == "on":
        return True
    if pattern == "off":
        return False
    period, lit_s = pattern
    return (elapsed % period) < lit_s - 1e-9


# ---- wiring ---------------------------------------------------------------------------------------------


def open_backend(backend_name: str, pin_map: PinMap) -> GpioBackend:
    """The backend for a pin map: ``GPIO_BACKENDS[backend_name]``, with the map's expanders.

    On ``sim`` expander pins live in memory like the header's. On another backend, when the map has expanders, the
    header's pins go through that backend (opened only if the map uses any) and the expanders' through
    :class:`hal.expander.ExpandedGpio`, over I2C.
    """
    if backend_name not in GPIO_BACKENDS:
        raise ValueError(f"unknown GPIO backend {backend_name!r} (expected one of: {', '.join(GPIO_BACKENDS)})")
    factory = GPIO_BACKENDS[backend_name]
    if not pin_map.expanders or backend_name == "sim":
        return factory(pin_map)
    from hal.expander import ExpandedGpio  # here: hal.expander imports this module

    return ExpandedGpio.open(factory, pin_map)


def open_gpio(backend_name: str, pin_map: PinMap, *, clock: Callable[[], float] = time.monotonic,
              ) -> tuple[GpioInputs, GpioOutputs, GpioBackend]:
    """Open the backend, set up every pin (lights off first), and return (inputs, outputs, backend).

    The caller closes them on exit: ``outputs.close()`` (lights off), then ``backend.close()``.
    """
    backend = open_backend(backend_name, pin_map)
    try:
        outputs = GpioOutputs(pin_map.outputs, backend)
        inputs = GpioInputs(pin_map.inputs, backend, clock=clock)
    except BaseException:
        backend.close()
        raise
    return inputs, outputs, backend
