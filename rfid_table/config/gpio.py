"""The ``[gpio]`` section of a table configuration: validation and parsing into a :class:`hal.gpio.PinMap`.

The HAL keeps the pin map's value types and what a table can have (:mod:`hal.gpio.pins`) and drives the pins;
what a configuration may write, and the messages for what it got wrong, are the configuration's.

:func:`validate_pin_map` lists every problem at once, each with the key path where it is written and what was
expected; :func:`parse_pin_map` returns the map of a valid section. docs/gpio.md has the layout.
"""

import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from hal.events import DEVICE_KINDS
from hal.gpio.pins import (
    BACKENDS,
    BUTTONS,
    DEFAULT_DEBOUNCE_MS,
    EXPANDER_ADDRESSES,
    EXPANDER_BUS,
    EXPANDER_OUTPUT_ONLY,
    EXPANDER_PINS,
    HEADER_GPIO,
    I2C_PULLED_UP,
    MAX_DEBOUNCE_MS,
    MAX_SEATS,
    PHYSICAL_PINS,
    PULLS,
    RESERVED_GPIO,
    SEAT_KEYS,
    Expander,
    InputPin,
    OutputPin,
    PinMap,
    pin_label,
)
from rfid_table.config.checker import describe_value

KeyPath = tuple[str, ...]
_EXPANDER_PIN_NAME = re.compile(r"(?:GP)?([AB])([0-7])", re.IGNORECASE)
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
            self.problem(path, f"expected {expected}, got {describe_value(value)}")
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
            self.problem(path, f"expected a table of name = {{ address = 0x20 }}, got {describe_value(value)}")
            return
        taken: dict[tuple[int, int], str] = {}  # (bus, address) → the expander written there first
        for index, (name, entry) in enumerate(value.items()):
            p = path + (name,)
            address, bus = None, EXPANDER_BUS
            if not isinstance(entry, dict):
                self.problem(p, "expected { address = 0x20 } (with bus = N when the chip is not on I2C bus 1), got "
                                f"{describe_value(entry)}")
            else:
                for key in entry:
                    if key not in ("address", "bus"):
                        self.problem(p + (key,), "unknown key (expected one of: address, bus)")
                raw = entry.get("address")
                if "address" not in entry:
                    self.problem(p + ("address",), "missing (expected the chip's I2C address, 0x20 to 0x27, as its "
                                                   "A2 A1 A0 pins select it)")
                elif not _is_int(raw) or raw not in EXPANDER_ADDRESSES:
                    got = f"0x{raw:02X}" if _is_int(raw) and raw >= 0 else describe_value(raw)
                    self.problem(p + ("address",), "expected an MCP23017 address from 0x20 to 0x27 (0x20 plus what "
                                                   f"its A2 A1 A0 pins add), got {got}")
                else:
                    address = raw
                raw = entry.get("bus", EXPANDER_BUS)
                if not _is_int(raw) or not 0 <= raw <= 99:
                    got = describe_value(raw) if not _is_int(raw) else repr(raw)
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
            self.problem(path, f"expected the name of an expander of [gpio.expanders], got {describe_value(value)}")
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
            self.problem(path, f"expected a pin of {chip}: {_EXPANDER_PINS_EXPECTED}, got {describe_value(value)}")
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
            self.problem(path, f"expected a BCM pin number or {example}, got {describe_value(value)}")
            return None
        if on_expander:
            pin = self.expander_pin_number(raw_pin, pin_path, expander, direction, what)
        else:
            pin = self.pin_number(raw_pin, pin_path)
        # Options are checked even when the pin is wrong: every problem is reported at once.
        checked: dict = {}
        active_low = options.get("active_low", direction == "input")
        if not isinstance(active_low, bool):
            self.problem(path + ("active_low",), f"expected true or false, got {describe_value(active_low)}")
            active_low = direction == "input"
        checked["active_low"] = active_low
        if direction == "input":
            pull = options.get("pull", "up" if active_low else "down")
            if not isinstance(pull, str) or pull not in PULLS:
                got = describe_value(pull) if not isinstance(pull, str) else repr(pull)
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
                got = describe_value(debounce) if not _is_int(debounce) else repr(debounce)
                self.problem(path + ("debounce_ms",), f"expected milliseconds from 0 to {MAX_DEBOUNCE_MS}, got {got}")
                debounce = DEFAULT_DEBOUNCE_MS[kind]
            checked["debounce_ms"] = debounce
        if kind == "device":
            detects = options.get("detects", "device")
            if not isinstance(detects, str) or detects not in DEVICE_KINDS:
                got = describe_value(detects) if not isinstance(detects, str) else repr(detects)
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
            self.problem(path, f"expected a table of button = {{ pin = N }}, got {describe_value(value)}")
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
            self.problem(path, f"expected [gpio.seats.N] tables for seats 1 to {last}, got {describe_value(value)}")
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
                self.problem(seat_path, f"expected a table with {', '.join(SEAT_KEYS)}, got {describe_value(entries)}")
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
        r.problem(root, f"expected a table, got {describe_value(section)}")
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
                r.problem(path, f"expected one of: {', '.join(BACKENDS)}, got {describe_value(value)}")
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
