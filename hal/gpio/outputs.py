"""The lights driver: seat lights and the status light, driven from a desired state.

What the status light's conditions are and how each looks is the application's: it hands them over as
``status_patterns``. Blinking is computed from the time given to :meth:`GpioOutputs.poll`: no threads, no sleeping.
"""

from typing import Iterable, Mapping

from hal.gpio.backend import GpioBackend
from hal.gpio.pins import LIGHT_MODES, OutputPin

# How a light looks: "on", "off", or (period_s, lit_s): lit for the first lit_s of every period.
Pattern = str | tuple[float, float]
SEAT_BLINK: Pattern = (1.0, 0.5)  # a seat light in "blink": 1 Hz, half lit


class GpioOutputs:
    """Seat lights and the status light, driven from a desired state.

    Set what each light should show (:meth:`set_seat_light`, :meth:`set_status`); :meth:`poll` computes the
    levels at the time it is given — blinking included — and writes only the pins that change. A blink starts
    lit at the first poll after it was asked for, so the change is seen at once.

    ``status_patterns``: the status light's conditions, most urgent first, each with its pattern; the light shows
    the first one that is active.
    """

    def __init__(self, pins: Iterable[OutputPin], backend: GpioBackend | None = None,
                 status_patterns: Mapping[str, Pattern] | None = None):
        self._backend = backend
        self._pins = list(pins)
        self._status_patterns = dict(status_patterns or {})
        self._seat_modes: dict[int, str] = {}
        self._conditions: frozenset[str] = frozenset()
        self._shown: dict[str, tuple[str, float]] = {}  # output name → (pattern key, when it started)
        self._levels: dict[int, bool] = {}  # what each pin was last driven to (electrical)
        for pin in self._pins:
            off = pin.active_low
            if backend is not None:
                backend.setup_output(pin.bcm_pin, initial=off)
            self._levels[pin.bcm_pin] = off

    def set_seat_light(self, seat: int, mode: str) -> None:
        if mode not in LIGHT_MODES:
            raise ValueError(f"seat light mode {mode!r}: expected one of {', '.join(LIGHT_MODES)}")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat < 1:
            raise ValueError(f"seat {seat!r}: expected a seat number from 1")
        self._seat_modes[seat] = mode

    def set_status(self, conditions: Iterable[str] = ()) -> None:
        """The conditions active now (replacing the previous set); the most urgent one is shown."""
        conditions = frozenset(conditions)
        unknown = conditions - set(self._status_patterns)
        if unknown:
            raise ValueError(f"unknown status condition(s) {', '.join(sorted(unknown))}: expected "
                             f"{', '.join(self._status_patterns) or 'none (no status patterns were given)'}")
        self._conditions = conditions

    @property
    def status_shown(self) -> str | None:
        """The condition the status light shows (None: all is well, the light is off)."""
        return next((c for c in self._status_patterns if c in self._conditions), None)

    def seat_light(self, seat: int) -> str:
        return self._seat_modes.get(seat, "off")

    def seats(self) -> set[int]:
        """The seats with a light, and those given a mode."""
        return {pin.seat for pin in self._pins if pin.seat is not None} | set(self._seat_modes)

    def state(self) -> dict[str, str]:
        """What every configured light shows: "off" / "on" / "blink", or the status condition."""
        return {pin.name: self._pattern_key(pin) for pin in self._pins}

    def poll(self, now: float) -> None:
        for pin in self._pins:
            key = self._pattern_key(pin)
            shown = self._shown.get(pin.name)
            if shown is None or shown[0] != key:
                shown = self._shown[pin.name] = (key, now)
            lit = pattern_lit(self._pattern(pin, key), now - shown[1])
            self._drive(pin, lit)

    def close(self) -> None:
        """Every light off (the backend's close then releases the pins)."""
        for pin in self._pins:
            self._drive(pin, False)

    def _pattern_key(self, pin: OutputPin) -> str:
        if pin.kind == "status_light":
            return self.status_shown or "off"
        return self._seat_modes.get(pin.seat, "off") if pin.seat is not None else "off"

    def _pattern(self, pin: OutputPin, key: str) -> Pattern:
        if key in ("off", "on"):
            return key
        return SEAT_BLINK if pin.kind == "seat_light" else self._status_patterns[key]

    def _drive(self, pin: OutputPin, lit: bool) -> None:
        level = lit != pin.active_low
        if self._levels.get(pin.bcm_pin) == level:
            return
        if self._backend is not None:
            self._backend.write(pin.bcm_pin, level)
        self._levels[pin.bcm_pin] = level


def pattern_lit(pattern: Pattern, elapsed: float) -> bool:
    """Is a light with this pattern lit ``elapsed`` seconds after the pattern began?"""
    if isinstance(pattern, str):  # "on" or "off"
        return pattern == "on"
    period, lit_s = pattern
    return (elapsed % period) < lit_s - 1e-9
