"""GPIO HAL: the RPi.GPIO backend's calls (against a fake RPi.GPIO module put in sys.modules with pytest-mock),
debouncing, lights and the pin map validator on the simulated backend. No sleeping: every time is given.
"""

import re
import subprocess
import sys
import threading
import tomllib
import types
from pathlib import Path

import pytest

from hal.events import SensorEvent
from hal.gpio import (
    BUTTONS,
    GpioError,
    GpioInputEvent,
    GpioInputs,
    GpioOutputs,
    GpioUnavailable,
    InputPin,
    OutputPin,
    PinMap,
    RpiGpioBackend,
    SimulatedGpio,
    choose_lgpio_chip,
    find_header_gpiochip,
    open_gpio,
)
from rfid_table.config.gpio import parse_pin_map, validate_pin_map
from rfid_table.service.table_gpio import (BUTTON_COMMANDS, STATUS_PATTERNS, ButtonCommand, GpioConsole, TableLights,
                                          light_levels, show_lights)

ROOT = Path(__file__).resolve().parents[1]

TABLE = """
[gpio]
backend = "rpi"
[gpio.buttons]
new_hand = { pin = 17 }
misdeal = { pin = 27 }
declare_raise = { pin = 22 }
declare_all_in = { pin = 23 }
declare_call = { pin = 24 }
undo = { pin = 25 }
floor_call = { pin = 5 }
confirm = { pin = 6 }
[gpio.seats.1]
light = 12
presence = { pin = 16, active_low = true }
device = { pin = 20 }
[gpio.seats.2]
light = { pin = 13, active_low = true }
presence = { pin = 19, active_low = false }
device = { pin = 21, active_low = false, pull = "off" }
[gpio.status_light]
pin = 26
"""


def section(text: str = TABLE) -> dict:
    return tomllib.loads(text)["gpio"]


def pin_map(text: str = TABLE, backend: str | None = None) -> PinMap:
    parsed = parse_pin_map(section(text), seats=6)
    return parsed if backend is None else PinMap(backend, parsed.inputs, parsed.outputs)


class Clock:
    def __init__(self, t: float = 0.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


# ---- the RPi.GPIO backend, against a fake module --------------------------------------------------------


@pytest.fixture
def fake_gpio(mocker):
    """A stand-in for RPi.GPIO: the real constants, every function a mock; inputs read high (idle, pulled up)."""
    gpio = mocker.MagicMock(name="RPi.GPIO")
    gpio.BCM, gpio.BOARD = 11, 10
    gpio.IN, gpio.OUT = 1, 0
    gpio.LOW, gpio.HIGH = 0, 1
    gpio.PUD_OFF, gpio.PUD_DOWN, gpio.PUD_UP = 20, 21, 22
    gpio.RISING, gpio.FALLING, gpio.BOTH = 31, 32, 33
    gpio.input.return_value = 1
    package = types.ModuleType("RPi")
    package.GPIO = gpio
    mocker.patch.dict(sys.modules, {"RPi": package, "RPi.GPIO": gpio})
    mocker.patch("hal.gpio.rpi._lgpio_installed", return_value=False)  # hermetic on a Pi too
    return gpio


def test_rpi_backend_sets_up_every_pin_from_the_map(fake_gpio, mocker):
    inputs, outputs, backend = open_gpio("rpi", pin_map())
    assert isinstance(backend, RpiGpioBackend)
    fake_gpio.setmode.assert_called_once_with(fake_gpio.BCM)
    IN, OUT, UP, DOWN, OFF = fake_gpio.IN, fake_gpio.OUT, fake_gpio.PUD_UP, fake_gpio.PUD_DOWN, fake_gpio.PUD_OFF
    assert fake_gpio.setup.call_args_list == [
        # lights first, off: active-high ones low, the active-low one high
        mocker.call(12, OUT, initial=fake_gpio.LOW),
        mocker.call(13, OUT, initial=fake_gpio.HIGH),
        mocker.call(26, OUT, initial=fake_gpio.LOW),
        # buttons: active low with the pull-up
        *[mocker.call(pin, IN, pull_up_down=UP) for pin in (17, 27, 22, 23, 24, 25, 5, 6)],
        mocker.call(16, IN, pull_up_down=UP),  # active_low = true
        mocker.call(20, IN, pull_up_down=UP),  # the default: active low
        mocker.call(19, IN, pull_up_down=DOWN),  # active_low = false: pulled down so unplugged reads inactive
        mocker.call(21, IN, pull_up_down=OFF),  # a push-pull sensor
    ]
    detect = fake_gpio.add_event_detect.call_args_list
    assert [c.args for c in detect] == [(pin, fake_gpio.BOTH) for pin in (17, 27, 22, 23, 24, 25, 5, 6, 16, 20, 19, 21)]
    for c in detect:
        assert set(c.kwargs) == {"callback"}, "no bouncetime: the HAL debounces"
        assert callable(c.kwargs["callback"])
    fake_gpio.cleanup.assert_not_called()

    backend.close()
    fake_gpio.cleanup.assert_called_once_with()
    backend.close()  # closing twice is harmless
    fake_gpio.cleanup.assert_called_once_with()


def test_rpi_backend_edge_callback_reads_the_level_and_feeds_the_debouncer(fake_gpio):
    clock = Clock(10.0)
    inputs, outputs, backend = open_gpio("rpi", pin_map(), clock=clock)
    callbacks = {c.args[0]: c.kwargs["callback"] for c in fake_gpio.add_event_detect.call_args_list}
    # new_hand (BCM 17) goes low; the library calls back with the channel only, on its own thread
    fake_gpio.input.side_effect = lambda pin: 0 if pin == 17 else 1
    worker = threading.Thread(target=callbacks[17], args=(17,))
    worker.start()
    worker.join()
    assert inputs.poll(10.010) == []
    assert inputs.poll(10.030) == [GpioInputEvent("new_hand", "button", None, True, 10.0, None)]
    backend.close()


def test_rpi_backend_drives_lights(fake_gpio, mocker):
    inputs, outputs, backend = open_gpio("rpi", pin_map())
    outputs.set_seat_light(1, "on")
    outputs.set_seat_light(2, "on")
    outputs.poll(0.0)
    assert fake_gpio.output.call_args_list == [mocker.call(12, fake_gpio.HIGH), mocker.call(13, fake_gpio.LOW)]
    outputs.close()
    backend.close()
    assert fake_gpio.output.call_args_list[2:] == [mocker.call(12, fake_gpio.LOW), mocker.call(13, fake_gpio.HIGH)]
    fake_gpio.cleanup.assert_called_once_with()


def test_missing_library_says_what_to_install_on_which_pi(mocker):
    mocker.patch.dict(sys.modules, {"RPi": None, "RPi.GPIO": None})  # "not installed"
    mocker.patch("hal.gpio.rpi._lgpio_installed", return_value=False)
    with pytest.raises(GpioUnavailable) as exc:
        open_gpio("rpi", pin_map())
    message = str(exc.value)
    assert "RPi.GPIO" in message
    assert "Raspberry Pi 5, `pip install rpi-lgpio`" in message
    assert "Pi 2, 3, 4 or Zero" in message and "`pip install RPi.GPIO`" in message
    assert "cannot be installed side by side" in message
    assert 'use backend = "sim"' in message


def test_rpi_gpio_on_a_pi_5_says_to_switch_to_rpi_lgpio(fake_gpio):
    fake_gpio.setup.side_effect = RuntimeError("Cannot determine SOC peripheral base address")
    with pytest.raises(GpioUnavailable, match=r"does not run on the Raspberry Pi 5 .*pip install rpi-lgpio"):
        open_gpio("rpi", pin_map())
    fake_gpio.cleanup.assert_called_once_with()  # what was set up is released


def test_a_busy_pin_names_the_pin(fake_gpio):
    def setup(pin, *args, **kwargs):
        if pin == 22:  # another process holds it (rpi-lgpio refuses to share a line)
            raise RuntimeError("GPIO busy")

    fake_gpio.setup.side_effect = setup
    with pytest.raises(GpioError, match="cannot set up BCM 22 as an input: GPIO busy"):
        open_gpio("rpi", pin_map())


def test_import_failures_off_the_pi_and_without_a_writable_working_directory(mocker):
    mocker.patch("hal.gpio.rpi._lgpio_installed", return_value=False)
    not_a_pi = mocker.Mock(side_effect=RuntimeError("This module can only be run on a Raspberry Pi!"))
    with pytest.raises(GpioUnavailable, match='only be run on a Raspberry Pi.*use backend = "sim"'):
        RpiGpioBackend(import_module=not_a_pi)
    no_pipe = mocker.Mock(side_effect=FileNotFoundError(2, "No such file or directory", ".lgd-nfy-3"))
    with pytest.raises(GpioUnavailable, match=r"\.lgd-nfy.*WorkingDirectory="):
        RpiGpioBackend(import_module=no_pipe)


def test_gpiochip_is_found_by_label_not_number(tmp_path):
    def devices(labels: dict[str, str], links: dict[str, str] = {}):
        for name in labels:
            (tmp_path / name).write_text("")
        for name, target in links.items():
            (tmp_path / name).symlink_to(tmp_path / target)
        return lambda path: labels.get(Path(path).name)

    # Pi 5 before kernel 6.6.45: the header is gpiochip4
    old = devices({"gpiochip0": "gpio-brcmstb@107d508500", "gpiochip4": "pinctrl-rp1"})
    assert find_header_gpiochip(str(tmp_path), old) == 4
    for path in tmp_path.iterdir():
        path.unlink()
    # since: gpiochip0, with a gpiochip4 compatibility symlink and the SoC chips from 10
    new = devices({"gpiochip0": "pinctrl-rp1", "gpiochip10": "gpio-brcmstb@107d508500"}, {"gpiochip4": "gpiochip0"})
    assert find_header_gpiochip(str(tmp_path), new) == 0
    assert find_header_gpiochip(str(tmp_path / "missing"), new) is None

    environ: dict[str, str] = {}
    assert choose_lgpio_chip(environ, lambda: 0) == 0 and environ == {"RPI_LGPIO_CHIP": "0"}
    environ = {"RPI_LGPIO_CHIP": "4"}  # the service said so: left alone
    assert choose_lgpio_chip(environ, lambda: 0) is None and environ == {"RPI_LGPIO_CHIP": "4"}


def test_the_package_imports_without_any_gpio_library():
    code = "import sys, hal.gpio; bad = {'RPi', 'RPi.GPIO', 'lgpio'} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ---- debouncing, on the simulated backend ---------------------------------------------------------------


@pytest.fixture
def sim():
    pins = pin_map(backend="sim")
    backend = SimulatedGpio(pins)
    clock = Clock()
    inputs = GpioInputs(pins.inputs, backend, clock=clock)
    return backend, inputs, clock


def test_chatter_within_the_window_gives_one_press_and_one_release(sim):
    backend, inputs, _ = sim
    for t, active in [(1.000, True), (1.002, False), (1.004, True), (1.006, False), (1.008, True)]:
        backend.set_active("new_hand", active, t)
    assert inputs.poll(1.020) == []  # stable for 12 ms of the 20
    assert inputs.poll(1.030) == [GpioInputEvent("new_hand", "button", None, True, 1.008, None)]
    assert inputs.poll(1.100) == []
    for t, active in [(1.200, False), (1.203, True), (1.205, False)]:
        backend.set_active("new_hand", active, t)
    [release] = inputs.poll(1.300)
    assert (release.value, release.t) == (False, 1.205)
    assert release.duration_s == pytest.approx(0.197)  # held from 1.008
    assert inputs.edges_seen == 8


def test_a_glitch_shorter_than_the_window_gives_nothing(sim):
    backend, inputs, _ = sim
    backend.set_active("misdeal", True, 2.000)
    backend.set_active("misdeal", False, 2.015)
    assert inputs.poll(3.0) == []
    assert inputs.active("misdeal") is False
    assert inputs.edges_seen == 2


def test_a_press_between_two_polls_is_not_lost(sim):
    backend, inputs, _ = sim
    backend.click("confirm", 5.0, hold_s=0.05)  # 50 ms: longer than the window, shorter than a poll interval
    events = inputs.poll(5.2)
    assert [(e.name, e.value, e.t) for e in events] == [("confirm", True, 5.0), ("confirm", False, 5.05)]
    assert events[1].duration_s == pytest.approx(0.05)


def test_edges_stamped_in_the_future_wait_for_their_time(sim):
    backend, inputs, _ = sim
    backend.click("undo", 7.0, hold_s=0.1)
    assert [(e.value, e.t) for e in inputs.poll(7.05)] == [(True, 7.0)]
    assert [(e.value, e.t) for e in inputs.poll(7.2)] == [(False, 7.1)]


def test_edges_without_a_time_are_stamped_by_the_clock(sim):
    backend, inputs, clock = sim
    clock.t = 3.0
    backend.press("floor_call")
    clock.t = 3.4
    backend.release("floor_call")
    events = inputs.poll(4.0)
    assert [(e.value, e.t, e.duration_s) for e in events] == [(True, 3.0, None), (False, 3.4, pytest.approx(0.4))]


def test_presence_and_device_sensors_report_on_and_off_with_durations(sim):
    backend, inputs, _ = sim
    backend.set_active("seat1.presence", True, 10.0)
    assert inputs.poll(10.4) == []  # presence debounces for 500 ms
    assert inputs.poll(10.5) == [GpioInputEvent("seat1.presence", "presence", 1, True, 10.0, None)]
    backend.set_active("seat1.presence", False, 40.0)  # leans back for 0.3 s: not an absence
    backend.set_active("seat1.presence", True, 40.3)
    assert inputs.poll(45.0) == []
    backend.set_active("seat1.presence", False, 70.0)
    [left] = inputs.poll(71.0)
    assert (left.value, left.t, left.duration_s) == (False, 70.0, 60.0)  # seated for a minute
    backend.set_active("seat1.presence", True, 100.0)
    [back] = inputs.poll(101.0)
    assert (back.value, back.duration_s) == (True, 30.0)  # away for 30 s

    # seat 2's sensors are active high (19 pulled down, 21 driven both ways)
    backend.set_level(21, True, 200.0)
    assert inputs.poll(200.1) == []  # device sensors debounce for 200 ms
    assert inputs.poll(200.2) == [GpioInputEvent("seat2.device", "device", 2, True, 200.0, None)]
    assert inputs.states()["seat2.device"] is True and inputs.states()["seat1.device"] is False


def test_state_at_start_is_read_without_an_event():
    pins = pin_map(backend="sim")
    backend = SimulatedGpio(pins)
    backend.setup_input(16, "up")
    backend.set_level(16, False)  # seat 1's player is already seated (active low)
    inputs = GpioInputs(pins.inputs, backend, clock=Clock())
    assert inputs.active("seat1.presence") is True
    assert inputs.poll(1.0) == []
    backend.set_active("seat1.presence", False, 2.0)
    [event] = inputs.poll(3.0)
    assert (event.value, event.duration_s) == (False, None)  # seated since before the start: unknown


def test_an_edge_the_library_dropped_is_caught_by_reading_the_pin(sim):
    backend, inputs, _ = sim
    backend.levels[17] = False  # new_hand pressed, no callback
    assert inputs.poll(8.0) == []  # seen at 8.0, not yet stable
    assert inputs.poll(8.02) == [GpioInputEvent("new_hand", "button", None, True, 8.0, None)]
    assert inputs.edges_seen == 0


def test_an_edge_arriving_late_does_not_rewrite_the_past(sim):
    backend, inputs, _ = sim
    backend.set_active("declare_call", True, 1.0)
    assert [e.t for e in inputs.poll(2.0)] == [1.0]
    inputs.edge(24, False, 0.5)  # a stale report of the level already decided (pressed: low)
    backend.set_active("declare_call", False, 1.5)  # released, but reported after the poll at 2.0
    [release] = inputs.poll(3.0)
    assert (release.value, release.t, release.duration_s) == (False, 2.0, 1.0)  # counted from 2.0, not 1.5


def test_edges_from_many_threads_are_all_queued():
    pins_map = pin_map(backend="sim")
    backend = SimulatedGpio(pins_map)
    # No reading of the pins at each poll here: this poller's "now" lags the edges' times by design, which a real
    # clock never does, and the test is about the queue.
    inputs = GpioInputs(pins_map.inputs, backend, clock=Clock(), resync=False)
    pins = [17, 27, 22, 23, 24, 25, 5, 6]
    per_thread = 2001  # every call a change, from released (high) to pressed (low) at the last one
    start = threading.Barrier(len(pins) + 2)  # the chatterers, the poller and this thread
    stop_polling = threading.Event()

    def chatter(pin: int) -> None:
        start.wait()
        for i in range(per_thread):
            backend.set_level(pin, i % 2 == 1, 100.0 + i * 0.001)  # 1 ms apart: never stable until the last

    def poll_meanwhile() -> None:
        start.wait()
        while not stop_polling.is_set():
            assert inputs.poll(99.0) == []  # the daemon polls while the callbacks pour in

    threads = [threading.Thread(target=chatter, args=(pin,)) for pin in pins]
    poller = threading.Thread(target=poll_meanwhile)
    for thread in [*threads, poller]:
        thread.start()
    start.wait()
    for thread in threads:
        thread.join()
    stop_polling.set()
    poller.join()
    events = inputs.poll(200.0)
    assert inputs.edges_seen == len(pins) * per_thread
    assert sorted(e.name for e in events) == sorted(p.name for p in pins_map.inputs if p.kind == "button")  # one each
    assert [e.t for e in events] == pytest.approx([102.0] * len(pins))
    assert all(e.value for e in events)


def test_debouncer_without_a_backend():
    button = InputPin("undo", 25, "button", debounce_ms=0)
    inputs = GpioInputs([button], initial={"undo": False})
    inputs.edge(25, False, 1.0)  # active low: pressed
    assert [e.value for e in inputs.poll(1.0)] == [True]  # a 0 ms window counts at once
    inputs.edge(99, True, 1.0)  # a pin nobody watches is ignored
    assert inputs.poll(2.0) == []


# ---- lights ---------------------------------------------------------------------------------------------


@pytest.fixture
def lights():
    pins = pin_map(backend="sim")
    backend = SimulatedGpio(pins)
    return backend, GpioOutputs(pins.outputs, backend, STATUS_PATTERNS)


def lit_at(backend, outputs, name, times):
    result = []
    for t in times:
        outputs.poll(t)
        result.append(backend.output_active(name))
    return result


def test_seat_light_blinks_from_the_injected_clock(lights):
    backend, outputs = lights
    outputs.set_seat_light(1, "blink")
    assert lit_at(backend, outputs, "seat1.light", [100.0, 100.25, 100.49, 100.5, 100.99, 101.0, 101.6, 102.2]) == [
        True, True, True, False, False, True, False, True]
    outputs.set_seat_light(1, "on")
    assert lit_at(backend, outputs, "seat1.light", [102.6, 103.0, 103.7]) == [True, True, True]
    outputs.set_seat_light(1, "off")
    assert lit_at(backend, outputs, "seat1.light", [104.0]) == [False]
    outputs.set_seat_light(1, "blink")  # a new blink starts lit at once, whatever the phase
    assert lit_at(backend, outputs, "seat1.light", [104.7, 105.1, 105.3]) == [True, True, False]


def test_only_changes_are_written(lights):
    backend, outputs = lights
    setup_writes = len(backend.writes)
    outputs.set_seat_light(1, "on")
    for i in range(100):
        outputs.poll(i * 0.05)
    assert backend.writes[setup_writes:] == [(12, True)]


def test_active_low_light_is_driven_low_to_light(lights):
    backend, outputs = lights
    assert backend.levels[13] is True and not backend.output_active("seat2.light")  # off at setup
    outputs.set_seat_light(2, "on")
    outputs.poll(0.0)
    assert backend.levels[13] is False and backend.output_active("seat2.light")
    outputs.close()
    assert backend.levels[13] is True


def test_status_light_shows_the_most_urgent_condition(lights):
    backend, outputs = lights
    outputs.set_status({"game_stopped", "link_down"})
    assert outputs.status_shown == "link_down"  # 4 Hz: lit 125 ms of every 250
    assert lit_at(backend, outputs, "status_light", [0.0, 0.1, 0.125, 0.2, 0.25, 0.3, 0.4]) == [
        True, True, False, False, True, True, False]
    outputs.set_status({"game_stopped"})  # a flash of 200 ms every 2 s, starting now
    assert lit_at(backend, outputs, "status_light", [1.0, 1.19, 1.2, 2.5, 2.99, 3.0, 3.1, 3.3]) == [
        True, True, False, False, False, True, True, False]
    outputs.set_status({"deck_not_registered", "game_stopped"})  # 1 Hz
    assert lit_at(backend, outputs, "status_light", [10.0, 10.4, 10.5, 10.9, 11.0]) == [True, True, False, False, True]
    outputs.set_status({"awaiting_floor", "deck_not_registered"})  # steady
    assert lit_at(backend, outputs, "status_light", [20.0, 20.6, 21.3]) == [True, True, True]
    assert outputs.state() == {"seat1.light": "off", "seat2.light": "off", "status_light": "awaiting_floor"}
    outputs.set_status()
    assert lit_at(backend, outputs, "status_light", [30.0]) == [False]
    assert outputs.status_shown is None


def test_lights_refuse_unknown_modes_and_conditions(lights):
    _, outputs = lights
    with pytest.raises(ValueError, match="expected one of off, on, blink"):
        outputs.set_seat_light(1, "flash")
    with pytest.raises(ValueError,
                       match="unknown status condition.*expected link_down, journal_failing, awaiting_floor"):
        outputs.set_status({"on_fire"})
    outputs.set_seat_light(9, "on")  # a seat without a light: remembered, nothing to drive
    outputs.poll(0.0)
    assert outputs.seat_light(9) == "on"


def test_open_gpio_on_the_simulator():
    inputs, outputs, backend = open_gpio("sim", pin_map(backend="sim"), clock=Clock())
    backend.click("new_hand", 1.0)
    assert [(e.name, e.value) for e in inputs.poll(2.0)] == [("new_hand", True), ("new_hand", False)]
    outputs.set_seat_light(1, "on")
    outputs.poll(2.0)
    assert backend.output_active("seat1.light")
    with pytest.raises(ValueError, match="unknown GPIO backend 'pigpio'"):
        open_gpio("pigpio", pin_map())
    with pytest.raises(KeyError, match="no GPIO input named 'shuffle'"):
        backend.press("shuffle")
    with pytest.raises(GpioError, match="BCM 12 is not set up as an input"):
        backend.set_level(12, True)


# ---- the pin map and its validator ----------------------------------------------------------------------


def test_the_example_parses():
    pins = pin_map()
    assert pins.backend == "rpi"
    assert [(p.name, p.bcm_pin) for p in pins.inputs][:8] == list(zip(BUTTONS, (17, 27, 22, 23, 24, 25, 5, 6)))
    assert pins.input("new_hand") == InputPin("new_hand", 17, "button", None, True, "up", 20)
    assert pins.input("seat1.presence") == InputPin("seat1.presence", 16, "presence", 1, True, "up", 500)
    assert pins.input("seat1.device") == InputPin("seat1.device", 20, "device", 1, True, "up", 200, "device")
    assert pins.input("seat2.presence") == InputPin("seat2.presence", 19, "presence", 2, False, "down", 500)
    assert pins.input("seat2.device") == InputPin("seat2.device", 21, "device", 2, False, "off", 200, "device")
    assert pins.outputs == (OutputPin("seat1.light", 12, "seat_light", 1, False),
                            OutputPin("seat2.light", 13, "seat_light", 2, True),
                            OutputPin("status_light", 26, "status_light", None, False))
    assert parse_pin_map(None) == PinMap() and validate_pin_map(None) == []


def test_every_toml_example_in_the_docs_is_valid():
    text = (ROOT / "docs" / "gpio.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        assert validate_pin_map(tomllib.loads(block)["gpio"], seats=10) == []


def edited(old: str, new: str, text: str = TABLE) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def assert_reported(gpio_section: dict, problems: list) -> None:
    """The validator lists ``problems`` (each a key path and what was expected), and reading the map refuses it,
    naming the first one's key path."""
    assert validate_pin_map(gpio_section, seats=6) == problems
    if problems:
        with pytest.raises(ValueError, match=re.escape(".".join(problems[0][0]))):
            parse_pin_map(gpio_section, seats=6)


PIN = "a BCM GPIO number from 2 to 27"


@pytest.mark.parametrize("old, new, problems", [
    pytest.param('backend = "rpi"\n', 'backend = "rpi"\ncolour = "green"\n', [
        (("gpio", "colour"), "unknown key (expected one of: backend, buttons, seats, status_light, expanders)")],
        id="unknown key in [gpio]"),
    pytest.param("confirm = { pin = 6 }", "shuffle = { pin = 6 }", [
        (("gpio", "buttons", "shuffle"), f"unknown button (expected one of: {', '.join(BUTTONS)})")],
        id="button of unknown function"),
    pytest.param("misdeal = { pin = 27 }", "misdeal = { pin = 17 }", [
        (("gpio", "buttons", "misdeal", "pin"), "BCM 17 is already used by gpio.buttons.new_hand (new_hand button) "
                                                "(expected another pin: each pin serves one function)")],
        id="pin used twice"),
    pytest.param("presence = { pin = 19,", "presence = { pin = 16,", [
        (("gpio", "seats", "2", "presence", "pin"), "BCM 16 is already used by gpio.seats.1.presence (seat 1 presence "
                                                    "sensor) (expected another pin: each pin serves one function)")],
        id="pin used twice across seats"),
    pytest.param("light = 12", "light = 17", [
        (("gpio", "seats", "1", "light"), "BCM 17 is an output here (seat 1 light) but an input at "
                                          "gpio.buttons.new_hand (new_hand button): a pin is either an input or an "
                                          "output (expected another pin)")],
        id="input and output on one pin"),
    pytest.param("pin = 26", "pin = 20", [
        (("gpio", "status_light", "pin"), "BCM 20 is an output here (status light) but an input at "
                                          "gpio.seats.1.device (seat 1 device sensor): a pin is either an input or an "
                                          "output (expected another pin)")],
        id="status light on a sensor's pin"),
    pytest.param("light = 12", 'light = { pin = 12, pull = "up" }', [
        (("gpio", "seats", "1", "light", "pull"), "pull applies to inputs only: the seat 1 light is an output "
                                                  "(expected one of: pin, expander, active_low)")],
        id="input option on an output"),
    pytest.param("device = { pin = 20 }", "device = { pin = 29 }", [
        (("gpio", "seats", "1", "device", "pin"), f"BCM 29 is not a GPIO of the 40-pin header (expected {PIN}; "
                                                  "physical pin 29 is BCM 5 — this map uses BCM numbers)")],
        id="physical pin number"),
    pytest.param("device = { pin = 20 }", "device = { pin = 54 }", [
        (("gpio", "seats", "1", "device", "pin"), f"BCM 54 is not a GPIO of the 40-pin header (expected {PIN})")],
        id="pin beyond the header"),
    pytest.param("undo = { pin = 25 }", "undo = { pin = 0 }", [
        (("gpio", "buttons", "undo", "pin"), f"BCM 0 is reserved for the HAT ID EEPROM (ID_SD) (expected {PIN})")],
        id="HAT EEPROM pin"),
    pytest.param("undo = { pin = 25 }", 'undo = { pin = "GPIO25" }', [
        (("gpio", "buttons", "undo", "pin"), f"expected {PIN}, got str 'GPIO25'")],
        id="pin as a name"),
    pytest.param("undo = { pin = 25 }", "undo = { active_low = true }", [
        (("gpio", "buttons", "undo", "pin"), "missing (expected the BCM GPIO number of the undo button)")],
        id="pin missing"),
    pytest.param("undo = { pin = 25 }", 'undo = "25"', [
        (("gpio", "buttons", "undo"), "expected a BCM pin number or { pin = N, active_low = true }, got str '25'")],
        id="entry of the wrong type"),
    pytest.param("[gpio.seats.2]", "[gpio.seats.7]", [
        (("gpio", "seats", "7"), "no seat 7: table.seats is 6 (expected 1 … 6)")],
        id="seat outside the table"),
    pytest.param("[gpio.seats.2]", "[gpio.seats.seat2]", [
        (("gpio", "seats", "seat2"), "expected a seat number from 1 to 6, like [gpio.seats.1]")],
        id="seat not a number"),
    pytest.param("device = { pin = 20 }", "device = { pin = 20 }\nbutton = 4", [
        (("gpio", "seats", "1", "button"), "unknown key (expected one of: light, presence, device)")],
        id="unknown key in a seat"),
    pytest.param('backend = "rpi"', 'backend = "gpiod"', [
        (("gpio", "backend"), "expected one of: rpi, sim, got 'gpiod'")],
        id="unknown backend"),
    pytest.param('backend = "rpi"\n', "", [
        (("gpio", "backend"), 'missing (expected one of: rpi, sim; "rpi" on the table, "sim" on a laptop)')],
        id="backend missing"),
    pytest.param("presence = { pin = 16, active_low = true }", 'presence = { pin = 16, pull = "down" }', [
        (("gpio", "seats", "1", "presence", "pull"),
         'pull = "down" with active_low = true: an open or unplugged input would read as active (expected pull = "up", '
         'or "off" for a sensor that drives the line both ways)')],
        id="pull against active_low"),
    pytest.param("presence = { pin = 19, active_low = false }", "presence = { pin = 19, active_low = 0 }", [
        (("gpio", "seats", "2", "presence", "active_low"), "expected true or false, got int 0")],
        id="active_low not a boolean"),
    pytest.param("presence = { pin = 16, active_low = true }", 'presence = { pin = 16, pull = "none" }', [
        (("gpio", "seats", "1", "presence", "pull"), "expected one of: up, down, off, got 'none'")],
        id="unknown pull"),
    pytest.param("device = { pin = 20 }", "device = { pin = 20, debounce_ms = 60000 }", [
        (("gpio", "seats", "1", "device", "debounce_ms"), "expected milliseconds from 0 to 10000, got 60000")],
        id="debounce out of range"),
    pytest.param("device = { pin = 21, active_low = false,", "device = { pin = 2, active_low = false,", [],
                 id="BCM 2 driven both ways is fine"),
    pytest.param("presence = { pin = 19, active_low = false }", "presence = { pin = 3, active_low = false }", [
        (("gpio", "seats", "2", "presence", "pin"), "BCM 3 (I2C1 SCL) has a 1.8 kΩ pull-up on the board that a "
                                                    "pull-down cannot overcome (expected an active-low input, an "
                                                    "output, or another pin)")],
        id="pull-down on an I2C pin"),
    pytest.param("confirm = { pin = 6 }", "confirm = { pin = 14 }", [], id="UART pin free"),
    pytest.param("confirm = { pin = 6 }", "confirm = { pin = 6 }\nstart_clock = { pin = 18 }", [],
                 id="start_clock button"),
    pytest.param("device = { pin = 20 }", 'device = { pin = 20, detects = "phone" }', [], id="device detects phones"),
    pytest.param("device = { pin = 20 }", 'device = { pin = 20, detects = "laptop" }', [
        (("gpio", "seats", "1", "device", "detects"), "expected one of: phone, rf, device, got 'laptop'")],
        id="device detects an unknown kind"),
    pytest.param("presence = { pin = 16, active_low = true }", 'presence = { pin = 16, detects = "phone" }', [
        (("gpio", "seats", "1", "presence", "detects"), "detects applies to device sensors only: not to the seat 1 "
                                                        "presence sensor (expected one of: pin, expander, active_low, "
                                                        "pull, debounce_ms)")],
        id="detects on a presence sensor"),
])
def test_each_mistake_is_reported_with_its_key_path_and_what_was_expected(old, new, problems):
    assert_reported(section(edited(old, new)), problems)


def test_pins_the_table_uses_elsewhere_are_refused():
    text = edited("confirm = { pin = 6 }", "confirm = { pin = 14 }")
    uart = {14: "reader 'main' on the Pi's UART", 15: "reader 'main' on the Pi's UART"}
    assert validate_pin_map(section(text), seats=6, reserved=uart) == [
        (("gpio", "buttons", "confirm", "pin"),
         "BCM 14 is used by reader 'main' on the Pi's UART (expected another pin)")]


def test_every_problem_is_reported_at_once():
    text = edited("misdeal = { pin = 27 }", 'misdeal = { pin = 17, pull = "sideways" }\nshuffle = 4')
    problems = validate_pin_map(section(text), seats=6)
    assert [path for path, _ in problems] == [
        ("gpio", "buttons", "misdeal", "pull"), ("gpio", "buttons", "misdeal", "pin"), ("gpio", "buttons", "shuffle")]


def test_a_section_that_is_not_a_table():
    assert validate_pin_map(["rpi"]) == [(("gpio",), "expected a table, got a list")]
    assert validate_pin_map({"backend": "sim", "seats": 3}) == [
        (("gpio", "seats"), "expected [gpio.seats.N] tables for seats 1 to 10, got int 3")]
    assert validate_pin_map({"backend": "sim", "seats": {"11": {"light": 4}}}) == [
        (("gpio", "seats", "11"), "no seat 11: a table has at most 10 seats (expected 1 … 10)")]


# ---- the dealer console and the seat sensors, as the controller takes them ------------------------------


def test_each_button_press_becomes_a_command_and_sensors_become_sensor_events(sim):
    backend, inputs, _ = sim
    console = GpioConsole(pin_map(backend="sim").inputs)
    buttons = [p.name for p in pin_map().inputs if p.kind == "button"]
    for n, name in enumerate(buttons):
        backend.click(name, 1.0 + n, hold_s=0.1)
    backend.set_active("seat1.device", True, 20.0)
    backend.set_active("seat1.presence", True, 21.0)
    out = console.translate(inputs.poll(30.0))
    commands = [o for o in out if isinstance(o, ButtonCommand)]
    assert [c.button for c in commands] == buttons  # presses only: releases are dropped
    assert commands[2] == ButtonCommand(3.0, "declare_raise", {"id": "console-3", "role": "dealer", "user": "console",
                                                               "command": "declare", "declaration": "raise"})
    assert [c.body["command"] for c in commands] == ["new_hand", "misdeal", "declare", "declare", "declare", "undo",
                                                     "floor_call", "confirm"]
    assert all("seat" not in c.body for c in commands)  # the controller fills in the seat to act
    assert [o for o in out if isinstance(o, SensorEvent)] == [
        SensorEvent(20.0, 1, "device", True, "device", None), SensorEvent(21.0, 1, "presence", True, None, None)]
    assert set(BUTTON_COMMANDS) == set(BUTTONS) and BUTTON_COMMANDS["start_clock"] == {"command": "start_clock"}


def test_a_device_sensor_says_what_it_detects():
    pins = parse_pin_map(section(TABLE.replace("device = { pin = 20 }", 'device = { pin = 20, detects = "phone" }')))
    backend = SimulatedGpio(PinMap("sim", pins.inputs, pins.outputs))
    inputs = GpioInputs(pins.inputs, backend, clock=Clock())
    backend.set_active("seat1.device", True, 1.0)
    backend.set_active("seat2.device", True, 1.0)
    out = GpioConsole(pins.inputs, user="console-2").translate(inputs.poll(2.0))
    assert sorted((e.seat, e.detects) for e in out) == [(1, "phone"), (2, "device")]


def test_the_lights_follow_the_table_state(lights):
    backend, outputs = lights
    show_lights(outputs, TableLights(to_act=2, awaiting_floor=True))
    outputs.poll(0.0)
    assert outputs.state() == {"seat1.light": "off", "seat2.light": "on", "status_light": "awaiting_floor"}
    assert backend.levels[13] is False  # seat 2's light is active low: lit when low
    show_lights(outputs, TableLights(to_act=2, clock={2: "blink"}, deck_not_registered=True))
    assert lit_at(backend, outputs, "seat2.light", [1.0, 1.4, 1.6, 2.0]) == [True, True, False, True]
    assert outputs.status_shown == "deck_not_registered"
    show_lights(outputs, TableLights(to_act=2, game_stopped=True))
    outputs.poll(3.0)
    assert outputs.state()["seat2.light"] == "off" and outputs.status_shown == "game_stopped"
    # the same computed without the outputs object, phase counted from the given start
    pins = pin_map(backend="sim").outputs
    levels = light_levels(TableLights(to_act=1, clock={2: "blink"}, link_down=True), pins, 10.7,
                          since={"seat2.light": 10.0})
    assert levels == {12: True, 13: True, 26: False}  # seat 2 (active low) dark in its second half, status dark too


def test_console_command_completes_declare_and_confirm_from_the_table_state():
    """A declare press goes to the seat to act; the confirm key confirms the oldest ruling waiting, as the floor;
    what the console cannot complete says why."""
    base = {"id": "console-1", "role": "dealer", "user": "console"}
    declare = ButtonCommand(1.0, "declare_call", {**base, "command": "declare", "declaration": "call"})
    assert GpioConsole.command(declare, 4, []) == ({**declare.body, "seat": 4}, None)
    assert GpioConsole.command(declare, None, [])[1] == "seat not known at the console"
    confirm = ButtonCommand(2.0, "confirm", {**base, "command": "confirm"})
    body, problem = GpioConsole.command(confirm, None, [7, 9])
    assert problem is None and body["irregularity"] == 7 and body["role"] == "floor"
    assert GpioConsole.command(confirm, None, [])[1] == "irregularity not known at the console"
