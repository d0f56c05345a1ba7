"""The MCP23017 backend: port expanders on I2C, the inputs and outputs the Pi's header has no room for (docs/gpio.md).

A chip has 16 pins in two 8-bit ports, GPA0-7 (pins 0-7) and GPB0-7 (pins 8-15), and answers at 0x20 to 0x27 as
its A2 A1 A0 pins say. The daemon drives it through ``/dev/i2c-N`` with the ``smbus2`` package, imported only when
an expander is opened (``pip install 'rfid-table[expander]'``), so the project imports and its tests run anywhere.

* **Setup** (:meth:`Mcp23017.configure`): the register layout is forced to the power-on one (IOCON.BANK = 0,
  sequential addressing), input polarity plain, the pull-ups (GPPU), the output latches (OLAT) at each light's
  inactive level *before* the directions (IODIR) turn those pins into outputs, so no light flashes. Pins the map
  does not use stay inputs, with their pull-up so they do not float.
* **Inputs are polled**: the chip's INT pins are not wired, so :class:`GpioInputs` calls :meth:`poll` at each of
  its polls; one 2-byte read of GPIOA and GPIOB per chip, and every input whose level changed is reported to its
  watcher as an edge stamped with the poll's time, exactly like a header pin's edge. Debouncing stays in
  :class:`hal.gpio.inputs.GpioInputs`.
* **Outputs** keep a shadow of each port's latch: a light is one bit changed in the shadow and one write of that
  port's OLAT, so one light never disturbs another.
* **Close** drives every output to its inactive level (the lights off), as the header backend's cleanup does, and
  releases the bus. The pins stay outputs, held off, until the chip loses power.
* **A chip that stops answering** (a loose cable, a brown-out) does not stop the daemon: its inputs keep their last
  levels, a warning is logged once, and each poll tries to set it up again (the whole configuration and the
  lights' current levels); the recovery is logged too. :attr:`Mcp23017Expanders.faults` lists the chips down.

:class:`ExpandedGpio` puts the two together: header pins through the header's backend (``rpi``), expander pins
(numbered by :func:`hal.gpio.pins.expander_pin`) through :class:`Mcp23017Expanders`. :func:`hal.gpio.wiring.open_backend`
makes one when a pin map has expanders.
"""

import atexit
import errno
import importlib
import logging
import os
from typing import Any, Callable, Iterable

from hal.gpio.backend import EdgeCallback, GpioBackend
from hal.gpio.pins import (
    EXPANDER_PINS,
    Expander,
    GpioError,
    GpioUnavailable,
    PinMap,
    pin_label,
    split_expander_pin,
)

log = logging.getLogger(__name__)

# Registers in the power-on layout, IOCON.BANK = 0: each port A register is followed by its port B twin.
IODIRA, IODIRB = 0x00, 0x01  # direction: 1 = input (power-on: 0xFF), 0 = output
IPOLA, IPOLB = 0x02, 0x03  # input polarity: 0 = GPIO reads the pin as it is
GPINTENB = 0x05  # interrupt-on-change of port B (unused: the INT pins are not wired)
IOCON = 0x0A  # configuration, one register for both ports (also at 0x0B)
GPPUA, GPPUB = 0x0C, 0x0D  # the 100 kΩ pull-ups of inputs: 1 = on (there are no pull-downs)
GPIOA, GPIOB = 0x12, 0x13  # the pins' levels
OLATA, OLATB = 0x14, 0x15  # the output latches
# With IOCON.BANK = 1 (set by some other program) IOCON is at 0x05, where the power-on layout has GPINTENB: writing
# 0 there first restores BANK = 0 in either case (and leaves port B's interrupts off, as they should be).
IOCON_IF_BANK1 = GPINTENB
IOCON_VALUE = 0x00  # BANK = 0, MIRROR = 0, SEQOP = 0 (the address increments: GPIOA then GPIOB in one read)

_MISSING_SMBUS = (
    "the port expanders of [gpio.expanders] need the smbus2 module, which is not installed in this Python "
    "environment ({error}). Install it in the daemon's virtualenv: `pip install smbus2` (or "
    "`pip install 'rfid-table[expander]'`). Off the Pi, use backend = \"sim\"."
)
_NO_BUS = (
    "{expander}: {device} does not exist ({error}): the I2C bus is not enabled. Enable it with `sudo raspi-config` "
    "(Interface Options → I2C; or `sudo raspi-config nonint do_i2c 0`) or with the line dtparam=i2c_arm=on in "
    "/boot/firmware/config.txt, then reboot"
)
_NO_PERMISSION = (
    "{expander}: cannot open {device} ({error}): the I2C devices belong to the i2c group; add the daemon's user "
    "({user}) to it (`sudo adduser {user} i2c`, or SupplementaryGroups=i2c in the service unit)"
)


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError, AttributeError):
        return "the service's user"


def explain_io_error(expander: Expander, what: str, exc: OSError) -> str:
    """What a failed transfer means, with what to check."""
    message = f"{expander}: cannot {what} ({exc})"
    if exc.errno in (getattr(errno, "EREMOTEIO", 121), errno.ENXIO, errno.EIO):
        return (f"{message}: no chip answers at 0x{expander.address:02X}. Check its 3.3 V supply and ground, SDA and "
                f"SCL, that its RESET pin is tied to 3.3 V, and its A2 A1 A0 pins (`i2cdetect -y {expander.bus}` "
                "lists the addresses that answer)")
    if exc.errno == errno.EBUSY:
        return (f"{message}: a kernel driver holds address 0x{expander.address:02X}. Remove the dtoverlay=mcp23017 "
                "line from /boot/firmware/config.txt and reboot: the daemon drives the chip itself")
    if exc.errno == errno.ETIMEDOUT:
        return f"{message}: the bus is stuck, SDA or SCL is held low (a short, or an unpowered chip on the bus)"
    return message


class Mcp23017:
    """One chip: shadows of its registers, 16 bits wide (bit n = pin n: GPA0-7, then GPB0-7), and its transfers.

    ``bus`` is an ``smbus2.SMBus`` (anything with ``write_byte_data`` and ``read_i2c_block_data``). Transfers raise
    the bus's OSError; :class:`Mcp23017Expanders` decides what a failure means.
    """

    def __init__(self, bus: Any, expander: Expander):
        self.bus = bus
        self.expander = expander
        self.iodir = 0xFFFF  # every pin an input, as at power-on
        self.gppu = 0xFFFF  # pins nobody uses are pulled up: no floating input
        self.olat = 0x0000
        self.off = 0x0000  # each output's inactive level: driven on close
        self.levels = 0x0000  # the pins as last read
        self.ok = False  # configured, and the last transfer worked

    @property
    def outputs(self) -> int:
        return ~self.iodir & 0xFFFF

    def set_shadow(self, register_a: int, value: int) -> int:
        """Set the shadow of a register pair the driver writes (IODIRA, GPPUA, OLATA); returns the previous value."""
        if register_a == IODIRA:
            old, self.iodir = self.iodir, value
        elif register_a == GPPUA:
            old, self.gppu = self.gppu, value
        elif register_a == OLATA:
            old, self.olat = self.olat, value
        else:
            raise ValueError(f"no shadow of register {register_a:#04x}")
        return old

    def write_port(self, register_a: int, value: int, port: int) -> None:
        """Write one port's byte of a 16-bit register pair (port 0: A, 1: B)."""
        self.bus.write_byte_data(self.expander.address, register_a + port, value >> (8 * port) & 0xFF)

    def configure(self) -> None:
        """Write the whole configuration from the shadows: at open, and when the chip answers again."""
        address = self.expander.address
        self.bus.write_byte_data(address, IOCON_IF_BANK1, IOCON_VALUE)
        self.bus.write_byte_data(address, IOCON, IOCON_VALUE)
        for register, value in ((IPOLA, 0x0000), (GPPUA, self.gppu), (OLATA, self.olat), (IODIRA, self.iodir)):
            for port in (0, 1):  # the latches before the directions: an output starts at its own level
                self.write_port(register, value, port)

    def read(self) -> int:
        """GPIOA and GPIOB in one transfer, as 16 bits (not stored: the caller compares it first)."""
        a, b = self.bus.read_i2c_block_data(self.expander.address, GPIOA, 2)
        return a | b << 8


class Mcp23017Expanders:
    """The GPIO backend of expander pins: every chip of the map, polled.

    Pins are :func:`hal.gpio.pins.expander_pin` numbers. With a ``pin_map`` every chip is set up at once from it (so the
    ``setup_input`` / ``setup_output`` calls that follow find nothing to change); without one, pins are set up as
    the calls come. ``import_module`` finds ``smbus2`` (a test passes a fake).
    """

    name = "mcp23017"

    def __init__(self, expanders: Iterable[Expander], pin_map: PinMap | None = None, *,
                 import_module: Callable[[str], Any] = importlib.import_module):
        try:
            smbus2 = import_module("smbus2")
        except ImportError as exc:
            raise GpioUnavailable(_MISSING_SMBUS.format(error=exc)) from exc
        self._expanders = tuple(expanders)
        self._buses: dict[int, Any] = {}
        self._chips: dict[int, Mcp23017] = {}  # by the expander's index (its pin numbers' block)
        self._watchers: dict[int, list[EdgeCallback]] = {}
        self._closed = False
        self.faults: dict[str, str] = {}  # expander name → why it does not answer, while it does not
        try:
            for expander in self._expanders:
                if expander.bus not in self._buses:
                    self._buses[expander.bus] = self._open_bus(smbus2, expander)
                self._chips[expander.index] = Mcp23017(self._buses[expander.bus], expander)
            if pin_map is not None:
                self._plan(pin_map)
            for chip in self._chips.values():
                try:
                    chip.configure()
                    chip.levels = chip.read()
                except OSError as exc:
                    raise GpioUnavailable(explain_io_error(chip.expander, "set it up", exc)) from exc
                chip.ok = True
        except BaseException:
            self._release()
            raise
        atexit.register(self.close)  # the lights go off even if the daemon forgets to close

    @staticmethod
    def _open_bus(smbus2: Any, expander: Expander) -> Any:
        try:
            return smbus2.SMBus(expander.bus)
        except FileNotFoundError as exc:
            raise GpioUnavailable(_NO_BUS.format(expander=expander, device=expander.device, error=exc)) from exc
        except PermissionError as exc:
            raise GpioUnavailable(_NO_PERMISSION.format(expander=expander, device=expander.device, error=exc,
                                                        user=_user())) from exc
        except OSError as exc:
            raise GpioUnavailable(f"{expander}: cannot open {expander.device} ({exc})") from exc

    def _plan(self, pin_map: PinMap) -> None:
        for pin in pin_map.inputs:
            if (found := self._find(pin.bcm_pin)) is not None:
                chip, bit = found
                self._check_pull(pin.bcm_pin, pin.pull)
                chip.iodir |= bit
                chip.gppu = chip.gppu | bit if pin.pull == "up" else chip.gppu & ~bit
        for output in pin_map.outputs:
            if (found := self._find(output.bcm_pin)) is not None:
                chip, bit = found
                chip.iodir &= ~bit
                chip.gppu &= ~bit
                chip.olat = chip.olat | bit if output.active_low else chip.olat & ~bit  # off: high when active low
                chip.off = chip.olat & bit | chip.off & ~bit

    def _find(self, pin: int) -> tuple[Mcp23017, int] | None:
        split = split_expander_pin(pin)
        if split is None or split[0] not in self._chips:
            return None
        return self._chips[split[0]], 1 << split[1]

    def _chip(self, pin: int) -> tuple[Mcp23017, int]:
        found = self._find(pin)
        if found is None:
            raise GpioError(f"{self._label(pin)} is not a pin of an opened expander")
        return found

    def _label(self, pin: int) -> str:
        return pin_label(pin, self._expanders)

    def _check_pull(self, pin: int, pull: str) -> None:
        if pull == "down":
            raise GpioError(f"{self._label(pin)}: the MCP23017 has internal pull-ups only, no pull-downs")

    # the backend interface
    def setup_input(self, pin: int, pull: str) -> None:
        chip, bit = self._chip(pin)
        self._check_pull(pin, pull)
        gppu = chip.gppu | bit if pull == "up" else chip.gppu & ~bit
        changed = self._update(chip, f"set up {self._label(pin)} as an input",
                               ((GPPUA, gppu), (IODIRA, chip.iodir | bit)))
        if changed and chip.ok:  # a new pull or direction can change what the pins read
            self._sample(chip, None)

    def setup_output(self, pin: int, initial: bool = False) -> None:
        chip, bit = self._chip(pin)
        olat = chip.olat | bit if initial else chip.olat & ~bit
        chip.off = chip.off | bit if initial else chip.off & ~bit  # set up off: that is its inactive level
        self._update(chip, f"set up {self._label(pin)} as an output",
                     ((OLATA, olat), (IODIRA, chip.iodir & ~bit)))  # the latch first

    def read(self, pin: int) -> bool:
        """An input's level at the last poll (no transfer); an output's latch."""
        chip, bit = self._chip(pin)
        return bool((chip.olat if chip.outputs & bit else chip.levels) & bit)

    def write(self, pin: int, level: bool) -> None:
        chip, bit = self._chip(pin)
        if not chip.outputs & bit:
            raise GpioError(f"{self._label(pin)} is not set up as an output")
        self._update(chip, "write the lights", ((OLATA, chip.olat | bit if level else chip.olat & ~bit),))

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        self._chip(pin)
        self._watchers.setdefault(pin, []).append(callback)

    def poll(self, now: float) -> None:
        """Read every chip's pins; each watched input whose level changed is an edge stamped ``now``."""
        for chip in self._chips.values():
            if not chip.ok and not self._recover(chip):
                continue
            self._sample(chip, now)

    def close(self) -> None:
        """Every output to its inactive level (the lights off), then the buses released."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        for chip in self._chips.values():
            outputs = chip.outputs
            chip.olat = chip.olat & ~outputs | chip.off & outputs
            for port in (0, 1):
                if outputs >> (8 * port) & 0xFF:
                    try:
                        chip.write_port(OLATA, chip.olat, port)
                    except OSError as exc:
                        log.warning("%s", explain_io_error(chip.expander, "turn its outputs off", exc))
        self._release()

    def _release(self) -> None:
        for bus in self._buses.values():
            try:
                bus.close()
            except OSError:
                pass
        self._buses.clear()

    # transfers and faults
    def _update(self, chip: Mcp23017, what: str, changes: Iterable[tuple[int, int]]) -> bool:
        """Set shadow registers and write the ports that changed (in the order given); True if any did."""
        changed = False
        for register, value in changes:
            old = chip.set_shadow(register, value)
            for port in (0, 1):
                if (old ^ value) >> (8 * port) & 0xFF:
                    changed = True
                    if chip.ok:  # a chip that does not answer gets the shadows when it is set up again
                        try:
                            chip.write_port(register, value, port)
                        except OSError as exc:
                            self._fault(chip, what, exc)
        return changed

    def _sample(self, chip: Mcp23017, now: float | None) -> None:
        try:
            levels = chip.read()
        except OSError as exc:
            self._fault(chip, "read its inputs", exc)
            return
        changed, chip.levels = (levels ^ chip.levels) & chip.iodir, levels
        base = chip.expander.pin(0)
        for pin in range(EXPANDER_PINS):
            if changed >> pin & 1:
                for callback in self._watchers.get(base + pin, ()):
                    callback(base + pin, bool(levels >> pin & 1), now)

    def _fault(self, chip: Mcp23017, what: str, exc: OSError) -> None:
        chip.ok = False
        name = chip.expander.name
        if name not in self.faults:
            self.faults[name] = explain_io_error(chip.expander, what, exc)
            log.warning("%s; its inputs keep their last levels, and it is set up again as soon as it answers",
                        self.faults[name])

    def _recover(self, chip: Mcp23017) -> bool:
        try:
            chip.configure()  # the chip may have lost power: everything again, the lights as they are now
        except OSError:
            return False
        chip.ok = True
        log.warning("%s answers again: set up anew", chip.expander)
        self.faults.pop(chip.expander.name, None)
        return True


class ExpandedGpio:
    """Header pins through the header's backend, expander pins through :class:`Mcp23017Expanders`.

    ``header`` may be None when the map puts every pin on expanders (then RPi.GPIO is not needed at all).
    """

    def __init__(self, header: GpioBackend | None, expanders: Mcp23017Expanders):
        self.header = header
        self.expanders = expanders
        self.name = header.name if header is not None else expanders.name

    @classmethod
    def open(cls, header_factory: Callable[[PinMap], GpioBackend], pin_map: PinMap, *,
             import_module: Callable[[str], Any] = importlib.import_module) -> "ExpandedGpio":
        pins = pin_map.pins
        header = header_factory(pin_map) if any(split_expander_pin(p.bcm_pin) is None for p in pins) else None
        try:
            expanders = Mcp23017Expanders(pin_map.expanders, pin_map, import_module=import_module)
        except BaseException:
            if header is not None:
                header.close()
            raise
        return cls(header, expanders)

    @property
    def faults(self) -> dict[str, str]:
        """The expanders that do not answer now, with why."""
        return dict(self.expanders.faults)

    def _backend(self, pin: int) -> GpioBackend:
        if split_expander_pin(pin) is not None:
            return self.expanders
        if self.header is None:
            raise GpioError(f"BCM {pin}: the pin map uses no header pin, so the header's backend is not open")
        return self.header

    def setup_input(self, pin: int, pull: str) -> None:
        self._backend(pin).setup_input(pin, pull)

    def setup_output(self, pin: int, initial: bool = False) -> None:
        self._backend(pin).setup_output(pin, initial)

    def read(self, pin: int) -> bool:
        return self._backend(pin).read(pin)

    def write(self, pin: int, level: bool) -> None:
        self._backend(pin).write(pin, level)

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        self._backend(pin).watch(pin, callback)

    def poll(self, now: float) -> None:
        self.expanders.poll(now)
        if self.header is not None:
            self.header.poll(now)

    def close(self) -> None:
        try:
            self.expanders.close()
        finally:
            if self.header is not None:
                self.header.close()

    def __enter__(self) -> "ExpandedGpio":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
