"""The ``rpi`` backend: the header's pins through the ``RPi.GPIO`` module, imported only when it is opened.

RPi.GPIO itself on a Pi 2-4, or the drop-in rpi-lgpio on any Pi 2-5; a missing or wrong library is a
:class:`GpioUnavailable` that says what to install.
"""

import atexit
import importlib
import importlib.util
import os
from typing import Any, Callable

from hal.gpio.backend import EdgeCallback
from hal.gpio.gpiochip import choose_lgpio_chip, find_header_gpiochip
from hal.gpio.pins import GpioError, GpioUnavailable

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

    def _call(self, what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
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

    def poll(self, now: float) -> None:
        """Nothing to do: the pins call back by themselves."""

    @property
    def faults(self) -> dict[str, str]:
        return {}  # the header's pins cannot fall silent

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
