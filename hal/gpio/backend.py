"""What every GPIO backend provides: pins by number, electrical levels, edges to a watcher."""

from typing import Callable, Protocol

EdgeCallback = Callable[[int, bool, float | None], None]  # (BCM pin, level, t or None: "stamp it on arrival")


class GpioBackend(Protocol):
    """Pins by BCM number (or :func:`expander_pin` number); levels are electrical (True = high), whatever is active.

    :meth:`GpioInputs.poll` calls ``poll(now)`` first: a backend whose pins cannot call back by themselves (the I2C
    port expanders of :mod:`hal.gpio.mcp23017`) reads them there and calls the watchers of those that changed,
    stamped ``now``, on the caller's thread; the others do nothing. ``faults`` names the chips that do not answer
    now, with why (only port expanders can fall silent; the header's pins cannot).
    """

    name: str

    def setup_input(self, pin: int, pull: str) -> None: ...

    def setup_output(self, pin: int, initial: bool = False) -> None: ...

    def read(self, pin: int) -> bool: ...

    def write(self, pin: int, level: bool) -> None: ...

    def watch(self, pin: int, callback: EdgeCallback) -> None:
        """Call ``callback(pin, level, t)`` on both edges, possibly from another thread."""

    def poll(self, now: float) -> None: ...

    @property
    def faults(self) -> dict[str, str]: ...

    def close(self) -> None: ...
