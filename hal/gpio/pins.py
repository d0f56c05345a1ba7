"""What a table's GPIO can have, and the pins as the HAL sees them (docs/gpio.md).

The names a pin map may use (buttons, seat keys, backends, pulls, light modes), the header's and the MCP23017
port expanders' numbering, and the frozen values the other modules pass around: :class:`InputPin`,
:class:`OutputPin`, :class:`Expander`, :class:`PinMap` and the debounced :class:`GpioInputEvent`.
"""

from dataclasses import dataclass
from typing import Iterable, Literal

# ---- what a table can have ------------------------------------------------------------------------------

BUTTONS = ("new_hand", "misdeal", "declare_raise", "declare_all_in", "declare_call", "undo", "floor_call", "confirm",
           "start_clock")
SEAT_KEYS = ("light", "presence", "device")
BACKENDS = ("rpi", "sim")
MAX_SEATS = 10
PULLS = ("up", "down", "off")
LIGHT_MODES = ("off", "on", "blink")


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

# MCP23017 port expanders on I2C (hal/gpio/mcp23017.py drives them). Each chip has 16 pins: GPA0-7 are pins 0-7, GPB0-7
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

    @property
    def pins(self) -> tuple[InputPin | OutputPin, ...]:
        """Every pin, the inputs first."""
        return (*self.inputs, *self.outputs)

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
