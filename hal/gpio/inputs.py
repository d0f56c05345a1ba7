"""Debounced inputs: raw edges from a backend in, :class:`GpioInputEvent` presses, releases and sensor changes out.

Debouncing lives here, not in the library (whose ``bouncetime`` means different things in RPi.GPIO and
rpi-lgpio), so a table behaves the same on every Pi. Edges arrive on the library's thread; they are queued and
turned into events in :meth:`GpioInputs.poll`, on the caller's thread, with the time it gives.
"""

import heapq
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from hal.gpio.backend import GpioBackend
from hal.gpio.pins import GpioInputEvent, InputPin

@dataclass
class _InputState:
    pin: InputPin
    stable: bool  # the debounced state (active or not)
    since: float | None  # when it began (None: before the HAL started)
    raw: bool  # the last level seen, as active or not
    raw_since: float  # when it was first seen
    checked: float  # the latest time this input has been evaluated at: edges never go back before it


class GpioInputs:
    """Raw edges in, debounced :class:`GpioInputEvent` out.

    A level counts once it has been stable for the input's ``debounce_ms``: chatter inside the window gives one
    change; a glitch shorter than the window gives none. :meth:`edge` may be called from any thread (the
    library's callbacks); everything else happens in :meth:`poll`, on the caller's thread, at the time it gives.

    ``clock`` stamps edges that arrive without a time; it must count in the same time base as the ``now`` given
    to :meth:`poll`. Edges stamped later than ``now`` wait for a later poll. With a backend and ``resync``, each
    poll also reads the pins, so an edge the library dropped is noticed at the next poll. A backend with a
    ``poll(now)`` (I2C expanders, whose pins cannot call back) is sampled first in each poll: its pins' changes
    arrive as edges stamped ``now`` and are debounced like the others.
    """

    _EPSILON = 1e-9  # float tolerance when comparing a stable period with the window

    def __init__(self, pins: Iterable[InputPin], backend: GpioBackend | None = None, *,
                 clock: Callable[[], float] = time.monotonic, resync: bool = True,
                 initial: Mapping[str, bool] | None = None):
        self._clock = clock
        self._backend = backend
        self._resync = resync and backend is not None
        self._lock = threading.Lock()
        self._incoming: list[tuple[int, bool, float]] = []  # filled by edge() on any thread
        self._pending: list[tuple[float, int, int, bool]] = []  # heap of (t, seq, pin, level), poll's thread only
        self._seq = 0
        self._states: dict[int, _InputState] = {}
        self.edges_seen = 0  # raw edges processed (chatter shows here, not in the events)
        for pin in pins:
            active = bool((initial or {}).get(pin.name, False))
            if backend is not None:
                backend.setup_input(pin.bcm_pin, pin.pull)
                backend.watch(pin.bcm_pin, self.edge)  # before the first read: no change falls between the two
                active = backend.read(pin.bcm_pin) != pin.active_low
            start = float("-inf")
            self._states[pin.bcm_pin] = _InputState(pin, active, None, active, start, start)

    def edge(self, pin: int, level: bool, t: float | None = None) -> None:
        """Record a raw edge (thread-safe): ``level`` is electrical; ``t`` None means now, by ``clock``."""
        if t is None:
            t = self._clock()
        with self._lock:
            self._incoming.append((pin, bool(level), float(t)))

    def poll(self, now: float) -> list[GpioInputEvent]:
        """The debounced changes that completed by ``now``, in time order."""
        if self._backend is not None:  # polled pins (I2C expanders): their changes arrive as edges stamped now
            self._backend.poll(now)
        with self._lock:
            incoming, self._incoming = self._incoming, []
        for pin, level, t in incoming:
            if pin in self._states:
                self._seq += 1
                heapq.heappush(self._pending, (t, self._seq, pin, level))
        events: list[GpioInputEvent] = []
        while self._pending and self._pending[0][0] <= now:
            t, _, pin, level = heapq.heappop(self._pending)
            self._apply(self._states[pin], level, t, events)
        waiting = {pin for _, _, pin, _ in self._pending}
        for pin, state in self._states.items():
            if self._resync and self._backend is not None and pin not in waiting:
                level = self._backend.read(pin)
                if (level != state.pin.active_low) != state.raw:
                    self._apply(state, level, now, events, counted=False)
            self._settle(state, now, events)
            state.checked = max(state.checked, now)
        events.sort(key=lambda e: e.t)
        return events

    def active(self, name: str) -> bool:
        """The debounced state of an input."""
        for state in self._states.values():
            if state.pin.name == name:
                return state.stable
        raise KeyError(f"no GPIO input named {name!r}")

    def states(self) -> dict[str, bool]:
        """Every input's debounced state (for the snapshot and the live view)."""
        return {state.pin.name: state.stable for state in self._states.values()}

    def _apply(self, state: _InputState, level: bool, t: float, events: list, counted: bool = True) -> None:
        if counted:
            self.edges_seen += 1
        t = max(t, state.checked)  # out-of-order arrivals never rewrite what was already decided
        self._settle(state, t, events)  # the level before this edge may have been stable long enough
        active = level != state.pin.active_low
        if active != state.raw:
            state.raw, state.raw_since = active, t
        state.checked = t

    def _settle(self, state: _InputState, t: float, events: list) -> None:
        if state.raw == state.stable or t - state.raw_since < state.pin.debounce_ms / 1000 - self._EPSILON:
            return
        pin, began = state.pin, state.raw_since
        previous = None if state.since is None else began - state.since
        duration = None if pin.kind == "button" and state.raw else previous
        events.append(GpioInputEvent(pin.name, pin.kind, pin.seat, state.raw, began, duration))
        state.stable, state.since = state.raw, began
