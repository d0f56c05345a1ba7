"""The ``sim`` backend: pins in memory, for the simulator and the tests."""

import threading

from hal.gpio.backend import EdgeCallback
from hal.gpio.pins import GpioError, InputPin, PinMap

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
        self._active_low = {p.bcm_pin: p.active_low for p in self.pin_map.pins}
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

    def poll(self, now: float) -> None:
        """Nothing to do: the pins call back by themselves."""

    @property
    def faults(self) -> dict[str, str]:
        return {}  # the header's pins cannot fall silent

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
