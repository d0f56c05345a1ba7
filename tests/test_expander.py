"""MCP23017 port expanders on I2C ([gpio.expanders]): the pin map and its validator, the driver's register writes
against a fake ``smbus2`` put in sys.modules with pytest-mock (a register model of the chip behind it), polled
inputs debounced exactly like header pins, a chip that stops answering, and a ten-seat table — nine buttons and the
status light on the header, thirty seat pins on two expanders — on the simulated backend and in the daemon.
"""

import dataclasses
import errno
import json
import logging
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from hal.gpio.mcp23017 import (
    GPIOA,
    GPPUA,
    GPPUB,
    IOCON,
    IODIRA,
    IODIRB,
    IPOLA,
    IPOLB,
    OLATA,
    OLATB,
    ExpandedGpio,
)
from hal.gpio import (
    BUTTONS,
    Expander,
    GpioError,
    GpioInputEvent,
    GpioInputs,
    GpioUnavailable,
    PinMap,
    SimulatedGpio,
    expander_pin,
    open_gpio,
    pin_label,
    split_expander_pin,
)
from hal.zones import ZoneTracker
from rfid_table.config.gpio import parse_pin_map, validate_pin_map
from rfid_table.service.table_gpio import STATUS_PATTERNS, TableLights, show_lights
from jsonschema import Draft202012Validator
from rfid_table.cli import main
from rfid_table.ops.diag import render
from rfid_table.service.diagnostics import DiagnosticsCollector
from rfid_table.config.table import load_config
from test_conduct_daemon import Driven, of
from test_gpio import Clock, assert_reported, edited, fake_gpio  # noqa: F401 (fake_gpio: a fixture)

ROOT = Path(__file__).resolve().parents[1]


# ---- a fake I2C bus with MCP23017 register files behind it ------------------------------------------------


class FakeMcp23017:
    """One chip's registers in the power-on layout (IOCON.BANK = 0) and what drives its input pins from outside."""

    def __init__(self):
        self.power_on()
        self.outside = 0xFFFF  # every input idle high: pulled up, the switch open
        self.answers = True

    def power_on(self) -> None:
        self.registers = bytearray(0x16)
        self.registers[IODIRA] = self.registers[IODIRB] = 0xFF

    def pair(self, register_a: int) -> int:
        return self.registers[register_a] | self.registers[register_a + 1] << 8

    def gpio(self) -> int:
        """What GPIOA/GPIOB read: the outside level on inputs, the latch on outputs."""
        inputs = self.pair(IODIRA)
        return (self.outside & inputs | self.pair(OLATA) & ~inputs) & 0xFFFF

    def drive(self, pin: int, level: bool) -> None:
        self.outside = self.outside | 1 << pin if level else self.outside & ~(1 << pin)

    def latched(self, pin: int) -> bool:
        return bool(self.pair(OLATA) >> pin & 1)


class FakeI2c:
    """``smbus2`` as the driver sees it: ``SMBus(n)`` opens a bus whose transfers reach the fake chips."""

    def __init__(self, mocker, chips: dict[int, FakeMcp23017]):
        self.chips = chips
        self.bus = mocker.MagicMock(name="SMBus(1)")
        self.bus.write_byte_data.side_effect = self._write
        self.bus.read_i2c_block_data.side_effect = self._read
        self.module = types.ModuleType("smbus2")
        self.module.SMBus = mocker.MagicMock(name="smbus2.SMBus", return_value=self.bus)

    def _chip(self, address: int) -> FakeMcp23017:
        chip = self.chips.get(address)
        if chip is None or not chip.answers:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        return chip

    def _write(self, address: int, register: int, value: int) -> None:
        assert 0 <= value <= 0xFF
        self._chip(address).registers[register] = value

    def _read(self, address: int, register: int, length: int) -> list[int]:
        chip = self._chip(address)
        assert (register, length) == (GPIOA, 2), "the pins are read as GPIOA and GPIOB in one transfer"
        levels = chip.gpio()
        return [levels & 0xFF, levels >> 8]

    def writes(self) -> list[tuple[int, int, int]]:
        """Every (address, register, value) written so far, in order; and forget them."""
        done = [c.args for c in self.bus.write_byte_data.call_args_list]
        self.bus.write_byte_data.reset_mock()
        return done


@pytest.fixture
def i2c(mocker):
    """Two MCP23017s, at 0x20 and 0x21, behind a fake smbus2 module; no RPi.GPIO at all."""
    fake = FakeI2c(mocker, {0x20: FakeMcp23017(), 0x21: FakeMcp23017()})
    mocker.patch.dict(sys.modules, {"smbus2": fake.module, "RPi": None, "RPi.GPIO": None})
    return fake


# ---- one expander: what the driver writes ----------------------------------------------------------------

ONE_CHIP = """
[gpio]
backend = "rpi"
[gpio.expanders]
x1 = { address = 0x20 }
[gpio.buttons]
new_hand = { expander = "x1", pin = "A1" }
[gpio.seats.1]
presence = { expander = "x1", pin = 0 }
light = { expander = "x1", pin = 7 }
device = { expander = "x1", pin = "B1", active_low = false, pull = "off" }
[gpio.seats.2]
light = { expander = "x1", pin = "B7", active_low = true }
[gpio.status_light]
expander = "x1"
pin = "A5"
"""


def one_chip(text: str = ONE_CHIP) -> PinMap:
    return parse_pin_map(tomllib.loads(text)["gpio"], seats=6)


def test_the_pin_map_names_expander_pins_by_numbers_outside_the_header():
    pins = one_chip()
    assert pins.expanders == (Expander("x1", 0x20, 1, 0),)
    assert pins.input("new_hand").bcm_pin == 1001 and pins.input("seat1.presence").bcm_pin == 1000
    assert pins.input("seat1.device").bcm_pin == 1009  # B1
    assert [p.bcm_pin for p in pins.outputs] == [1007, 1015, 1005]
    assert pins.input("seat1.device").pull == "off" and pins.output("seat2.light").active_low
    assert split_expander_pin(1009) == (0, 9) and split_expander_pin(17) is None
    assert expander_pin(1, 8) == 1108 and split_expander_pin(1108) == (1, 8)
    assert pins.label(1015) == "expander 'x1' pin 15 (B7)" and pins.label(17) == "BCM 17"
    assert pin_label(1108) == "expander #2 pin 8 (B0)"


def test_setup_writes_the_configuration_before_any_pin_is_used(i2c):
    i2c.chips[0x20].drive(9, False)  # B1: the active-high device sensor sees nothing
    inputs, outputs, backend = open_gpio("rpi", one_chip(), clock=Clock(), status_patterns=STATUS_PATTERNS)
    assert isinstance(backend, ExpandedGpio) and backend.header is None  # no header pin: RPi.GPIO never imported
    i2c.module.SMBus.assert_called_once_with(1)
    x = 0x20
    assert i2c.writes() == [
        (x, 0x05, 0x00),  # IOCON if BANK = 1 (GPINTENB otherwise): back to the power-on layout either way
        (x, IOCON, 0x00),  # BANK = 0, sequential addressing
        (x, IPOLA, 0x00), (x, IPOLB, 0x00),  # GPIO reads the pins as they are
        (x, GPPUA, 0b0101_1111), (x, GPPUB, 0b0111_1101),  # pull-ups on the inputs, unused pins too; not B1 ("off")
        (x, OLATA, 0b0000_0000), (x, OLATB, 0b1000_0000),  # lights off: B7 is active low, so high
        (x, IODIRA, 0b0101_1111), (x, IODIRB, 0b0111_1111),  # A5, A7 and B7 outputs, after their latches
    ]
    i2c.bus.read_i2c_block_data.assert_called_once_with(x, GPIOA, 2)  # the levels at start
    assert outputs.state() == {"seat1.light": "off", "seat2.light": "off", "status_light": "off"}
    chip = i2c.chips[x]
    assert not chip.latched(7) and chip.latched(15) and not chip.latched(5)
    assert inputs.states() == {"new_hand": False, "seat1.presence": False, "seat1.device": False}
    backend.close()


def test_a_light_writes_its_port_and_leaves_the_other_lights_alone(i2c):
    inputs, outputs, backend = open_gpio("rpi", one_chip(), clock=Clock(), status_patterns=STATUS_PATTERNS)
    i2c.writes()
    show_lights(outputs, TableLights(to_act=1))
    outputs.poll(1.0)
    assert i2c.writes() == [(0x20, OLATA, 0b1000_0000)]  # A7 on
    show_lights(outputs, TableLights(to_act=1, awaiting_floor=True))
    outputs.poll(1.1)
    assert i2c.writes() == [(0x20, OLATA, 0b1010_0000)]  # A5 on, A7 still on
    show_lights(outputs, TableLights(to_act=2, awaiting_floor=True))
    outputs.poll(1.2)
    assert i2c.writes() == [(0x20, OLATA, 0b0010_0000), (0x20, OLATB, 0b0000_0000)]  # seat 2 (active low): B7 low
    outputs.poll(1.3)
    assert i2c.writes() == []  # nothing changed, nothing written
    chip = i2c.chips[0x20]
    assert chip.latched(5) and not chip.latched(7) and not chip.latched(15)
    assert backend.read(1015) is False  # an output reads its latch, without a transfer
    with pytest.raises(GpioError, match=r"expander 'x1' pin 0 \(A0\) is not set up as an output"):
        backend.write(1000, True)
    backend.close()


def test_close_turns_every_output_off_and_releases_the_bus(i2c):
    inputs, outputs, backend = open_gpio("rpi", one_chip(), clock=Clock(), status_patterns=STATUS_PATTERNS)
    show_lights(outputs, TableLights(to_act=2, link_down=True))
    outputs.poll(0.0)
    i2c.writes()
    backend.close()  # without outputs.close(): the backend alone turns the lights off
    assert i2c.writes() == [(0x20, OLATA, 0x00), (0x20, OLATB, 0b1000_0000)]
    i2c.bus.close.assert_called_once_with()
    chip = i2c.chips[0x20]
    assert chip.pair(IODIRA) == 0b0111_1111_0101_1111  # the lights stay outputs, held off
    backend.close()
    assert i2c.writes() == [] and i2c.bus.close.call_count == 1  # closing twice is harmless


# ---- polled inputs, debounced like header pins -----------------------------------------------------------

# (time, active) steps of one input: chatter, a press, a release, a glitch
SCRIPT = [(1.000, True), (1.004, False), (1.008, True), (1.200, False), (2.000, True), (2.010, False)]


def run_script(inputs, set_active, name: str, step_s: float = 0.002, until: float = 3.0) -> list:
    """Poll every ``step_s``; before each poll the input takes the level the script gives it then."""
    events, script, t = [], list(SCRIPT), 0.0
    while t <= until:
        while script and script[0][0] <= t + 1e-9:
            set_active(name, script.pop(0)[1], t)
        events += inputs.poll(t)
        t = round(t + step_s, 6)
    return events


def test_a_level_read_from_the_chip_becomes_a_debounced_press_exactly_like_a_header_pin(i2c):
    pins = one_chip()
    chip = i2c.chips[0x20]
    inputs, outputs, backend = open_gpio("rpi", pins, clock=Clock(), status_patterns=STATUS_PATTERNS)

    def on_expander(name, active, t):
        chip.drive(pins.input(name).bcm_pin - 1000, not active)  # active low: pressed is low

    via_i2c = run_script(inputs, on_expander, "new_hand")
    # the same button on a header pin, on the simulated backend, its edges stamped when the poll sees them
    header = parse_pin_map({"backend": "sim", "buttons": {"new_hand": 17}})
    sim = SimulatedGpio(header)
    header_inputs = GpioInputs(header.inputs, sim, clock=Clock())
    via_header = run_script(header_inputs, lambda n, a, t: sim.set_active(n, a, t), "new_hand")

    assert via_i2c == via_header == [
        GpioInputEvent("new_hand", "button", None, True, 1.008, None),  # the chatter is one press
        GpioInputEvent("new_hand", "button", None, False, 1.2, pytest.approx(0.192)),
    ]  # and the 10 ms glitch at 2.0 is nothing
    assert inputs.edges_seen == 6  # every change the polls saw went through the debouncer as an edge
    backend.close()


def test_a_sensor_on_an_expander_gives_on_and_off_with_durations(i2c):
    pins = one_chip()
    chip = i2c.chips[0x20]
    chip.drive(9, False)  # B1: the device sensor drives its line low while it sees nothing
    inputs, outputs, backend = open_gpio("rpi", pins, clock=Clock(), status_patterns=STATUS_PATTERNS)
    assert inputs.states() == {"new_hand": False, "seat1.presence": False, "seat1.device": False}
    chip.drive(0, False)  # seat 1 sits down (active low)
    assert inputs.poll(10.0) == [] and inputs.poll(10.4) == []
    assert inputs.poll(10.5) == [GpioInputEvent("seat1.presence", "presence", 1, True, 10.0, None)]
    chip.drive(9, True)  # B1: the device sensor, active high, drives the line
    assert inputs.poll(20.0) == []
    assert inputs.poll(20.2) == [GpioInputEvent("seat1.device", "device", 1, True, 20.0, None)]
    chip.drive(0, True)
    inputs.poll(70.0)
    [left] = inputs.poll(70.5)
    assert (left.name, left.value, left.t, left.duration_s) == ("seat1.presence", False, 70.0, 60.0)
    assert i2c.bus.read_i2c_block_data.call_count == 1 + 7  # one transfer at start, one per poll
    backend.close()


DIAG_SCHEMA = json.loads((ROOT / "schemas" / "diag.schema.json").read_text(encoding="utf-8"))


def diag_report(pins, backend) -> dict:
    """The daemon's diagnostics report for a table with this GPIO and no reader."""
    collector = DiagnosticsCollector()
    gpio = types.SimpleNamespace(pin_map=pins, expander_faults=lambda: backend.faults)  # what TableGpio answers
    controller = types.SimpleNamespace(hand=0)
    collector.report(0.0, [], ZoneTracker({}, {}), controller, gpio)
    return collector.report(1.0, [], ZoneTracker({}, {}), controller, gpio)


def test_a_chip_that_stops_answering_is_set_up_again_when_it_answers(i2c, caplog):
    pins = one_chip()
    chip = i2c.chips[0x20]
    inputs, outputs, backend = open_gpio("rpi", pins, clock=Clock(), status_patterns=STATUS_PATTERNS)
    show_lights(outputs, TableLights(to_act=1))
    outputs.poll(0.0)
    chip.answers = False  # the cable is pulled
    with caplog.at_level(logging.WARNING, logger="hal.gpio.mcp23017"):
        for t in (1.0, 1.1, 1.2):
            assert inputs.poll(t) == []
        show_lights(outputs, TableLights(to_act=None, awaiting_floor=True))  # the lights change meanwhile
        outputs.poll(1.3)
    assert list(backend.faults) == ["x1"]
    assert "no chip answers at 0x20" in backend.faults["x1"] and "i2cdetect -y 1" in backend.faults["x1"]
    assert len([r for r in caplog.records if "Remote I/O error" in r.getMessage()]) == 1  # logged once
    report = diag_report(pins, backend)  # what `rfid-table diag` shows the technician meanwhile
    assert report["gpio"]["expanders"]["x1"].startswith("down: ") and "no chip answers at 0x20" in render(
        report, "online")
    assert list(Draft202012Validator(DIAG_SCHEMA).iter_errors(report)) == []
    chip.power_on()  # plugged back in: its registers are at their power-on values
    chip.answers = True
    chip.drive(0, False)  # and seat 1 sat down meanwhile
    i2c.writes()
    with caplog.at_level(logging.WARNING, logger="hal.gpio.mcp23017"):
        assert inputs.poll(2.0) == []
    written = {(register, value) for _, register, value in i2c.writes()}
    assert {(OLATA, 0b0010_0000), (IODIRA, 0b0101_1111), (GPPUA, 0b0101_1111)} <= written  # the lights as they are now
    assert backend.faults == {} and any("answers again" in r.getMessage() for r in caplog.records)
    assert diag_report(pins, backend)["gpio"] == {"expanders": {"x1": "ok"}}
    assert inputs.poll(2.5) == [GpioInputEvent("seat1.presence", "presence", 1, True, 2.0, None)]
    backend.close()


# ---- opening: what is missing, and what to do -------------------------------------------------------------


def test_without_smbus2_the_message_says_what_to_install(mocker):
    mocker.patch.dict(sys.modules, {"smbus2": None})
    with pytest.raises(GpioUnavailable) as exc:
        open_gpio("rpi", one_chip())
    message = str(exc.value)
    assert "`pip install smbus2`" in message and "'rfid-table[expander]'" in message
    assert 'use backend = "sim"' in message


@pytest.mark.parametrize("error, expected", [
    (FileNotFoundError(errno.ENOENT, "No such file or directory"),
     r"/dev/i2c-1 does not exist .*not enabled.*raspi-config.*dtparam=i2c_arm=on"),
    (PermissionError(errno.EACCES, "Permission denied"),
     r"cannot open /dev/i2c-1 .*i2c group.*SupplementaryGroups=i2c"),
])
def test_a_bus_that_cannot_be_opened_says_how_to_enable_it(i2c, error, expected):
    i2c.module.SMBus.side_effect = error
    with pytest.raises(GpioUnavailable, match=expected):
        open_gpio("rpi", one_chip())


def test_a_chip_that_does_not_answer_at_start_stops_the_daemon_with_what_to_check(i2c):
    text = ONE_CHIP.replace("address = 0x20", "address = 0x23")
    with pytest.raises(GpioUnavailable, match=r"expander 'x1' \(MCP23017 at 0x23 on /dev/i2c-1\): cannot set it up "
                                              r".*no chip answers at 0x23.*RESET.*A2 A1 A0.*i2cdetect -y 1"):
        open_gpio("rpi", one_chip(text))
    i2c.bus.close.assert_called_once_with()  # the bus is released


def test_a_kernel_driver_on_the_address_is_named(i2c):
    i2c.bus.write_byte_data.side_effect = OSError(errno.EBUSY, "Device or resource busy")
    with pytest.raises(GpioUnavailable, match="dtoverlay=mcp23017"):
        open_gpio("rpi", one_chip())


def test_header_pins_still_go_through_rpi_gpio(i2c, fake_gpio):  # (fake_gpio after i2c, which hides RPi.GPIO)
    gpio = fake_gpio
    pins = ten_seats()
    inputs, outputs, backend = open_gpio("rpi", pins, clock=Clock(), status_patterns=STATUS_PATTERNS)
    header = [c.args[0] for c in gpio.setup.call_args_list]
    assert sorted(header) == sorted([17, 27, 22, 23, 24, 25, 5, 6, 18, 26])  # buttons and status light only
    assert {address for address, _, _ in i2c.writes()} == {0x20, 0x21}
    show_lights(outputs, TableLights(to_act=7, link_down=True))
    outputs.poll(0.0)
    gpio.output.assert_called_once_with(26, gpio.HIGH)  # the status light, on the header
    assert i2c.writes() == [(0x21, OLATA, 0b0100_0000)]  # seat 7's light: A6 of the second expander
    backend.close()
    gpio.cleanup.assert_called_once_with()
    i2c.bus.close.assert_called_once_with()


def test_no_i2c_library_is_imported_with_the_package():
    code = ("import sys, hal.gpio, hal.gpio.mcp23017; bad = {'smbus2', 'RPi', 'RPi.GPIO'} & set(sys.modules); "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ---- the validator ---------------------------------------------------------------------------------------


EXPANDER_PINS = "0 to 15, or A0 to A7 and B0 to B7 (GPA0-GPA7 are 0-7, GPB0-GPB7 are 8-15)"


@pytest.mark.parametrize("old, new, problems", [
    pytest.param('new_hand = { expander = "x1", pin = "A1" }', 'new_hand = { expander = "x9", pin = "A1" }', [
        (("gpio", "buttons", "new_hand", "expander"), "unknown expander 'x9' (expected one of: x1)")],
        id="unknown expander"),
    pytest.param('new_hand = { expander = "x1", pin = "A1" }', 'new_hand = { expander = 1, pin = "A1" }', [
        (("gpio", "buttons", "new_hand", "expander"),
         "expected the name of an expander of [gpio.expanders], got int 1")],
        id="expander not a name"),
    pytest.param("x1 = { address = 0x20 }", "x1 = { address = 0x40 }", [
        (("gpio", "expanders", "x1", "address"), "expected an MCP23017 address from 0x20 to 0x27 (0x20 plus what its "
                                                 "A2 A1 A0 pins add), got 0x40")],
        id="address out of range"),
    pytest.param("x1 = { address = 0x20 }", 'x1 = { address = "0x20" }', [
        (("gpio", "expanders", "x1", "address"), "expected an MCP23017 address from 0x20 to 0x27 (0x20 plus what its "
                                                 "A2 A1 A0 pins add), got str '0x20'")],
        id="address as a string"),
    pytest.param("x1 = { address = 0x20 }", "x1 = { bus = 1 }", [
        (("gpio", "expanders", "x1", "address"), "missing (expected the chip's I2C address, 0x20 to 0x27, as its A2 "
                                                 "A1 A0 pins select it)")],
        id="address missing"),
    pytest.param("x1 = { address = 0x20 }", "x1 = { address = 0x20 }\nx2 = { address = 32 }", [
        (("gpio", "expanders", "x2", "address"), "0x20 on I2C bus 1 is already the address of gpio.expanders.x1 "
                                                 "(expected another address: give each chip on a bus its own A2 A1 "
                                                 "A0 setting)")],
        id="two expanders on one address"),
    pytest.param("x1 = { address = 0x20 }", "x1 = { address = 0x20 }\nx2 = { address = 0x20, bus = 3 }", [],
                 id="the same address on another bus"),
    pytest.param("x1 = { address = 0x20 }", 'x1 = { address = 0x20, bus = "i2c-1" }', [
        (("gpio", "expanders", "x1", "bus"), "expected an I2C bus number, the N of /dev/i2c-N (1: the header's SDA "
                                             "and SCL on BCM 2 and 3), got str 'i2c-1'")],
        id="bus not a number"),
    pytest.param("x1 = { address = 0x20 }", 'x1 = { address = 0x20, chip = "mcp23008" }', [
        (("gpio", "expanders", "x1", "chip"), "unknown key (expected one of: address, bus)")],
        id="unknown key in an expander"),
    pytest.param("x1 = { address = 0x20 }", "x1 = 0x20", [
        (("gpio", "expanders", "x1"), "expected { address = 0x20 } (with bus = N when the chip is not on I2C bus 1), "
                                      "got int 32")],
        id="expander not a table"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1", pin = 16 }', [
        (("gpio", "seats", "1", "presence", "pin"), f"expander 'x1' has no pin 16 (expected {EXPANDER_PINS})")],
        id="pin out of range"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1", pin = "C2" }', [
        (("gpio", "seats", "1", "presence", "pin"), f"expected a pin of expander 'x1': {EXPANDER_PINS}, got str 'C2'")],
        id="pin of an unknown port"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1", pin = "gpb2" }', [],
                 id="pin by its datasheet name"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1" }', [
        (("gpio", "seats", "1", "presence", "pin"), f"missing (expected the pin of the seat 1 presence sensor on "
                                                    f"expander 'x1': {EXPANDER_PINS})")],
        id="pin missing"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1", pin = "A1" }', [
        (("gpio", "seats", "1", "presence", "pin"), "expander 'x1' pin 1 (A1) is already used by gpio.buttons.new_hand "
                                                    "(new_hand button) (expected another pin: each pin serves one "
                                                    "function)")],
        id="expander pin used twice"),
    pytest.param('pin = "A5"', 'pin = "A1"', [
        (("gpio", "status_light", "pin"), "expander 'x1' pin 1 (A1) is an output here (status light) but an input at "
                                          "gpio.buttons.new_hand (new_hand button): a pin is either an input or an "
                                          "output (expected another pin)")],
        id="expander pin as input and output"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1", pin = "A7" }', [
        (("gpio", "seats", "1", "presence", "pin"), "pin 7 (GPA7) of expander 'x1' is output only: the MCP23017's "
                                                    "datasheet (revision D) forbids GPA7 and GPB7 as inputs, which can "
                                                    "corrupt the I2C bus (expected another pin for the seat 1 presence "
                                                    "sensor; pins 7 and 15 can drive lights)")],
        id="input on GPA7"),
    pytest.param('presence = { expander = "x1", pin = 0 }', 'presence = { expander = "x1", pin = 0, pull = "down", '
                                                            'active_low = false }', [
        (("gpio", "seats", "1", "presence", "pull"), 'pull = "down" on an expander pin: the MCP23017 has internal '
                                                     'pull-ups only, no pull-downs (expected "up", or "off" with an '
                                                     'external pull-down resistor or a sensor that drives the line '
                                                     'both ways)')],
        id="pull-down on an expander pin"),
    pytest.param(', pull = "off" }', " }", [
        (("gpio", "seats", "1", "device", "pull"), 'missing: with active_low = false the pull would be "down", and '
                                                   'the MCP23017 has internal pull-ups only, no pull-downs (expected '
                                                   'pull = "off" with an external pull-down resistor or a sensor that '
                                                   'drives the line both ways, or the input wired active low)')],
        id="active high without a pull on an expander pin"),
    pytest.param('[gpio.seats.2]', '[gpio.seats.2]\npresence = 2', [
        (("gpio", "seats", "2", "presence"), "BCM 2 is used by the port expanders' I2C bus (I2C1 SDA, gpio.expanders) "
                                             "(expected another pin)")],
        id="I2C1 SDA with expanders"),
    pytest.param('[gpio.seats.2]', '[gpio.seats.2]\npresence = { pin = 3 }', [
        (("gpio", "seats", "2", "presence", "pin"), "BCM 3 is used by the port expanders' I2C bus (I2C1 SCL, "
                                                    "gpio.expanders) (expected another pin)")],
        id="I2C1 SCL with expanders"),
    pytest.param("x1 = { address = 0x20 }", "x1 = { address = 0x20, bus = 3 }\n[gpio.seats.3]\npresence = 2", [],
                 id="BCM 2 with every expander on another bus"),
])
def test_each_expander_mistake_is_reported_with_its_key_path(old, new, problems):
    assert_reported(tomllib.loads(edited(old, new, ONE_CHIP))["gpio"], problems)


def test_an_expander_pin_without_any_expander():
    section = {"backend": "sim", "buttons": {"undo": {"expander": "x1", "pin": 3}}}
    assert validate_pin_map(section) == [
        (("gpio", "buttons", "undo", "expander"), "unknown expander 'x1': there is no [gpio.expanders] section "
                                                  "(expected x1 = { address = 0x20 } in [gpio.expanders])")]


def test_expanders_written_after_the_pins_that_use_them_and_check_config_names_the_line(tmp_path, capsys):
    text = (ROOT / "config" / "table-6max.toml").read_text(encoding="utf-8") + """
[gpio]
backend = "rpi"
[gpio.seats.1]
presence = { expander = "seat_board", pin = "B0" }
light = { expander = "seatboard", pin = "B7" }
[gpio.expanders]
seat_board = { address = 0x27 }
"""
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["check-config", str(path)])
    assert exc.value.code == 78
    line = text[: text.index('light = { expander = "seatboard"')].count("\n") + 1
    assert capsys.readouterr().err.splitlines()[1:] == [
        f"  {path}:{line}: gpio.seats.1.light.expander: unknown expander 'seatboard' (expected one of: seat_board)"]
    path.write_text(text.replace('"seatboard"', '"seat_board"'), encoding="utf-8")
    assert main(["check-config", str(path)]) == 0
    config = load_config(path)
    assert config.gpio.expanders == (Expander("seat_board", 0x27, 1, 0),)
    assert [p.bcm_pin for p in (*config.gpio.inputs, *config.gpio.outputs)] == [1008, 1015]


def test_a_configuration_without_expanders_is_read_as_before():
    text = """
[gpio]
backend = "rpi"
[gpio.buttons]
new_hand = 2
[gpio.seats.1]
light = 3
"""
    pins = parse_pin_map(tomllib.loads(text)["gpio"])  # BCM 2 and 3 are free when there is no expander
    assert pins == PinMap("rpi", pins.inputs, pins.outputs, ())
    assert [(p.name, p.bcm_pin) for p in (*pins.inputs, *pins.outputs)] == [("new_hand", 2), ("seat1.light", 3)]


# ---- a ten-seat table: nine buttons and the status light on the header, thirty seat pins on two expanders ----

LIGHTS = ("A5", "A6", "A7", "B5", "B6")  # presence on A0-A4, device on B0-B4, B7 spare


def ten_seat_text(backend: str = "rpi") -> str:
    lines = [f'[gpio]\nbackend = "{backend}"\n', "[gpio.expanders]", "x1 = { address = 0x20 }",
             "x2 = { address = 0x21 }\n", "[gpio.buttons]"]
    lines += [f"{name} = {{ pin = {pin} }}" for name, pin in zip(BUTTONS, (17, 27, 22, 23, 24, 25, 5, 6, 18))]
    lines.append("\n[gpio.status_light]\npin = 26")
    for seat in range(1, 11):
        chip, n = ("x1", seat - 1) if seat <= 5 else ("x2", seat - 6)
        lines += [f"\n[gpio.seats.{seat}]",
                  f'presence = {{ expander = "{chip}", pin = "A{n}" }}',
                  f'device = {{ expander = "{chip}", pin = "B{n}", detects = "phone" }}',
                  f'light = {{ expander = "{chip}", pin = "{LIGHTS[n]}" }}']
    return "\n".join(lines) + "\n"


def ten_seats(backend: str = "rpi") -> PinMap:
    section = tomllib.loads(ten_seat_text(backend))["gpio"]
    assert validate_pin_map(section, seats=10) == []
    return parse_pin_map(section, seats=10)


def test_the_ten_seat_pin_map_validates_and_is_the_one_in_the_docs():
    pins = ten_seats()
    on_header = [p for p in (*pins.inputs, *pins.outputs) if split_expander_pin(p.bcm_pin) is None]
    on_expanders = [p for p in (*pins.inputs, *pins.outputs) if split_expander_pin(p.bcm_pin) is not None]
    assert len(on_header) == 10 and len(on_expanders) == 30
    assert {split_expander_pin(p.bcm_pin)[0] for p in on_expanders} == {0, 1}
    assert all(split_expander_pin(p.bcm_pin)[1] not in (7, 15) for p in pins.inputs if p in on_expanders)
    docs = (ROOT / "docs" / "gpio.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", docs, re.S) if "[gpio.seats.10]" in b]
    assert parse_pin_map(tomllib.loads(block)["gpio"], seats=10) == pins


def test_the_ten_seat_table_runs_on_the_simulated_backend():
    pins = ten_seats("sim")
    clock = Clock()
    inputs, outputs, backend = open_gpio("sim", pins, clock=clock, status_patterns=STATUS_PATTERNS)
    assert isinstance(backend, SimulatedGpio)  # expander pins live in memory: no I2C, no smbus2
    for n, name in enumerate(BUTTONS):
        backend.click(name, 1.0 + n, hold_s=0.1)
    for seat in range(1, 11):
        backend.set_active(f"seat{seat}.presence", True, 20.0)
    backend.set_active("seat8.device", True, 21.0)
    events = inputs.poll(30.0)
    assert [e.name for e in events if e.kind == "button" and e.value] == list(BUTTONS)
    assert sorted(e.seat for e in events if e.kind == "presence") == list(range(1, 11))
    assert [(e.name, e.value) for e in events if e.kind == "device"] == [("seat8.device", True)]
    show_lights(outputs, TableLights(to_act=9, clock={3: "blink"}, awaiting_floor=True))
    outputs.poll(31.0)
    lit = {name for name in outputs.state() if backend.output_active(name)}
    assert lit == {"seat9.light", "seat3.light", "status_light"}
    assert pins.output("seat9.light").bcm_pin == 1113 and backend.levels[1113] is True  # x2 B5
    outputs.close()
    backend.close()
    assert not any(backend.output_active(name) for name in outputs.state())


def test_the_daemon_runs_a_ten_seat_table_with_expanders(tmp_path):
    """The shipped ten-seat chips table with the expander pin map, through check-config's loader and the simulated
    daemon: the players' presence sensors, a phone on seat 1, and the light of the seat to act, all expander pins."""
    path = tmp_path / "table.toml"
    chips = ROOT / "config" / "chips-demo.toml"
    (tmp_path / chips.name).write_text(chips.read_text(encoding="utf-8"), encoding="utf-8")
    path.write_text((ROOT / "config" / "table-chips.toml").read_text(encoding="utf-8") + "\n" + ten_seat_text(),
                    encoding="utf-8")
    config = load_config(path)
    assert config.gpio == ten_seats()
    config = dataclasses.replace(config, journal_path=None, broadcast_delay_s=0.0,
                                 game=dataclasses.replace(config.game, rules="casinos_austria"))
    table = Driven(config)
    try:
        assert [e.type for e in table.run(0.8)] == ["seat_presence"] * 10  # every player sits down: x1 and x2
        table.command("set_stacks", stacks={"1": 1000, "2": 1000, "3": 1000})
        table.deal()
        assert table.controller.clock.seat == 3
        assert table.sensors.output_active("seat3.light") and not table.sensors.output_active("seat1.light")
        assert table.sensors.levels[1007] is True  # seat 3's light: x1 A7
        [breach] = of(table.sensor("seat1.device", True), "device_breach")
        assert breach.public["seat"] == 1 and breach.public["device"] == "phone"
    finally:
        table.close()


# ---- what a poll costs ----------------------------------------------------------------------------------


def test_a_poll_is_one_read_per_chip_and_no_write(i2c):
    full = ten_seats()
    on_expanders = dataclasses.replace(  # the thirty seat pins alone: no RPi.GPIO needed
        full, inputs=tuple(p for p in full.inputs if p.seat), outputs=tuple(p for p in full.outputs if p.seat))
    inputs, outputs, backend = open_gpio("rpi", on_expanders, clock=Clock(), status_patterns=STATUS_PATTERNS)
    assert backend.header is None
    i2c.writes()
    reads = i2c.bus.read_i2c_block_data
    reads.reset_mock()
    i2c.chips[0x21].drive(3, False)  # seat 9 sits down: x2 A3
    for i in range(100):
        inputs.poll(i * 0.01)
    assert reads.call_count == 200 and {c.args for c in reads.call_args_list} == {(0x20, GPIOA, 2), (0x21, GPIOA, 2)}
    assert i2c.writes() == []
    assert inputs.states()["seat9.presence"] is True and sum(inputs.states().values()) == 1
    backend.close()
