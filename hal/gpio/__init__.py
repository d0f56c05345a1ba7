"""GPIO: what the Raspberry Pi's header carries besides RFID (docs/gpio.md).

Inputs are the dealer's console buttons and two sensors per seat (a player is present; an electronic device is
detected). Outputs are a light per seat and one table status light. The modules, each usable alone:

* :mod:`hal.gpio.pins`: what a table can have and the pins as values (:class:`PinMap`, :class:`InputPin`, ...);
  the ``[gpio]`` section of a configuration becomes a :class:`PinMap` in :mod:`rfid_table.config.gpio`;
* backends (:class:`GpioBackend`, in :mod:`hal.gpio.backend`), chosen by name: ``rpi`` (:mod:`hal.gpio.rpi`,
  with :mod:`hal.gpio.gpiochip` finding the header's chip) drives the pins through the ``RPi.GPIO`` module,
  imported only when that backend is opened, so this package imports on any laptop; ``sim``
  (:mod:`hal.gpio.simulated`) keeps the pins in memory for the simulator and the tests; pins on MCP23017 port
  expanders (``[gpio.expanders]``) go through :mod:`hal.gpio.mcp23017` over I2C (their pin numbers are
  :func:`expander_pin` numbers, 1000 and up);
* :mod:`hal.gpio.inputs`: :class:`GpioInputs` debounces raw edges into :class:`GpioInputEvent` presses, releases
  and sensor changes, in :meth:`GpioInputs.poll`, on the caller's thread, with the time it gives;
* :mod:`hal.gpio.outputs`: :class:`GpioOutputs` drives the lights from a desired state; blinking is computed
  from the time given to :meth:`GpioOutputs.poll`: no threads, no sleeping.

:func:`open_gpio` (:mod:`hal.gpio.wiring`) opens a backend and sets up the inputs and outputs. What the console's
buttons ask for and what the lights show are the service's rules: :mod:`rfid_table.service.table_gpio`.
"""

from hal.gpio.backend import EdgeCallback, GpioBackend
from hal.gpio.gpiochip import HEADER_CHIP_LABELS, choose_lgpio_chip, find_header_gpiochip, gpiochip_label
from hal.gpio.inputs import GpioInputs
from hal.gpio.mcp23017 import ExpandedGpio, Mcp23017Expanders
from hal.gpio.outputs import SEAT_BLINK, GpioOutputs, Pattern, pattern_lit
from hal.gpio.pins import (
    BACKENDS,
    BUTTONS,
    DEFAULT_DEBOUNCE_MS,
    EXPANDER_ADDRESSES,
    EXPANDER_BUS,
    EXPANDER_OUTPUT_ONLY,
    EXPANDER_PIN_BASE,
    EXPANDER_PIN_STRIDE,
    EXPANDER_PINS,
    HEADER_GPIO,
    I2C_PULLED_UP,
    LIGHT_MODES,
    MAX_DEBOUNCE_MS,
    MAX_SEATS,
    PHYSICAL_PINS,
    PULLS,
    RESERVED_GPIO,
    SEAT_KEYS,
    Expander,
    GpioError,
    GpioInputEvent,
    GpioUnavailable,
    InputKind,
    InputPin,
    OutputKind,
    OutputPin,
    PinMap,
    expander_pin,
    expander_pin_name,
    pin_label,
    split_expander_pin,
)
from hal.gpio.rpi import RpiGpioBackend
from hal.gpio.simulated import SimulatedGpio
from hal.gpio.wiring import GPIO_BACKENDS, open_backend, open_gpio

__all__ = [
    "BACKENDS", "BUTTONS", "DEFAULT_DEBOUNCE_MS", "EXPANDER_ADDRESSES", "EXPANDER_BUS", "EXPANDER_OUTPUT_ONLY",
    "EXPANDER_PIN_BASE", "EXPANDER_PIN_STRIDE", "EXPANDER_PINS", "GPIO_BACKENDS", "HEADER_CHIP_LABELS", "HEADER_GPIO",
    "I2C_PULLED_UP", "LIGHT_MODES", "MAX_DEBOUNCE_MS", "MAX_SEATS", "PHYSICAL_PINS", "PULLS", "RESERVED_GPIO",
    "SEAT_BLINK", "SEAT_KEYS",
    "EdgeCallback", "ExpandedGpio", "Expander", "GpioBackend", "GpioError", "GpioInputEvent", "GpioInputs",
    "GpioOutputs", "GpioUnavailable", "InputKind", "InputPin", "Mcp23017Expanders", "OutputKind",
    "OutputPin", "Pattern", "PinMap", "RpiGpioBackend", "SimulatedGpio",
    "choose_lgpio_chip", "expander_pin", "expander_pin_name", "find_header_gpiochip",
    "gpiochip_label", "open_backend", "open_gpio", "pattern_lit", "pin_label",
    "split_expander_pin",
]
