"""Open a pin map's backend and set up its inputs and outputs in one call."""

import time
from typing import Callable, Mapping

from hal.gpio.backend import GpioBackend
from hal.gpio.inputs import GpioInputs
from hal.gpio.mcp23017 import ExpandedGpio
from hal.gpio.outputs import GpioOutputs, Pattern
from hal.gpio.pins import PinMap
from hal.gpio.rpi import RpiGpioBackend
from hal.gpio.simulated import SimulatedGpio

GPIO_BACKENDS: dict[str, Callable[[PinMap], GpioBackend]] = {
    "rpi": lambda pin_map: RpiGpioBackend(),
    "sim": SimulatedGpio,
}


def open_backend(backend_name: str, pin_map: PinMap) -> GpioBackend:
    """The backend for a pin map: ``GPIO_BACKENDS[backend_name]``, with the map's expanders.

    On ``sim`` expander pins live in memory like the header's. On another backend, when the map has expanders, the
    header's pins go through that backend (opened only if the map uses any) and the expanders' through
    :class:`hal.gpio.mcp23017.ExpandedGpio`, over I2C.
    """
    if backend_name not in GPIO_BACKENDS:
        raise ValueError(f"unknown GPIO backend {backend_name!r} (expected one of: {', '.join(GPIO_BACKENDS)})")
    factory = GPIO_BACKENDS[backend_name]
    if not pin_map.expanders or backend_name == "sim":
        return factory(pin_map)
    return ExpandedGpio.open(factory, pin_map)


def open_gpio(backend_name: str, pin_map: PinMap, *, clock: Callable[[], float] = time.monotonic,
              status_patterns: Mapping[str, Pattern] | None = None) -> tuple[GpioInputs, GpioOutputs, GpioBackend]:
    """Open the backend, set up every pin (lights off first), and return (inputs, outputs, backend).

    ``status_patterns``: the status light's conditions, most urgent first, and how each looks (:class:`GpioOutputs`).

    The caller closes them on exit: ``outputs.close()`` (lights off), then ``backend.close()``.
    """
    backend = open_backend(backend_name, pin_map)
    try:
        outputs = GpioOutputs(pin_map.outputs, backend, status_patterns)
        inputs = GpioInputs(pin_map.inputs, backend, clock=clock)
    except BaseException:
        backend.close()
        raise
    return inputs, outputs, backend
