"""What the reader emulators (``sim.firmware``, ``sim.metratec``, ``sim.feig``) inherit to run on their own:
``start()`` steps the emulator on the monotonic clock in a background thread until ``stop()``.

    emulator = FirmwareEmulator(table, antenna_count=4)
    emulator.start()  # step(time.monotonic()) again and again, in a thread
    ...
    emulator.stop()

Between two steps the thread waits until the host writes to the emulator (its end of the pty or socket is
readable), so a command is answered at once, or until a timeout for the emulator's own timers. The emulator names
both in ``_wait_on()``.
"""

from __future__ import annotations

import logging
import select
import threading
import time


class ThreadStepped:
    """``start()`` and ``stop()`` for an emulator that has ``step(now)`` and ``_wait_on()``."""

    def __init__(self, *, thread_name: str, logger: logging.Logger):
        self._thread_name = thread_name
        self._thread_log = logger  # the emulator's own: a failed step is logged under its module's name
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def step(self, now: float) -> None:
        raise NotImplementedError

    def _wait_on(self) -> tuple[list[int], float]:
        """The file descriptors that wake the thread (none: unplugged) and the longest wait, in seconds."""
        raise NotImplementedError

    def start(self) -> None:
        """Run on the monotonic clock in a background thread until ``stop()``."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step(time.monotonic())
            except Exception:  # keep the emulated reader alive; a test will notice the silence
                self._thread_log.exception("%s: step failed", self._thread_name)
            fds, timeout = self._wait_on()
            if not fds:
                self._stop.wait(timeout)
                continue
            try:
                select.select(fds, [], [], timeout)
            except (OSError, ValueError):  # closed meanwhile (unplugged)
                pass
