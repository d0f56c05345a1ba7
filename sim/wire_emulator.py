"""What the three reader emulators (``sim.firmware``, ``sim.metratec``, ``sim.feig``) inherit: the pty the host opens
as the reader's USB serial port, and ``start()`` / ``stop()``, a thread that steps the emulator on the monotonic clock.

    emulator = FirmwareEmulator(table, antenna_count=4, link_path="/tmp/reader")
    emulator.path  # what the host opens: "/tmp/reader", a stable name pointing at the pty
    emulator.start()  # step(time.monotonic()) again and again, in a thread
    ...
    emulator.stop()

Between two steps the thread waits until the host writes to the emulator (its end of the pty or socket is
readable), so a command is answered at once, or until a timeout for the emulator's own timers. The emulator names
both in ``_wait_on()``.
"""

from __future__ import annotations

import fcntl
import logging
import os
import select
import threading
import time
from pathlib import Path

from sim.pty_link import close_pty, open_pty


class WireEmulator:
    """A reader emulated at the wire: its pty, and ``start()`` and ``stop()`` for an emulator that has ``step(now)``
    and ``_wait_on()``."""

    def __init__(self, *, link_path: Path | str | None, thread_name: str, logger: logging.Logger):
        self.link_path = Path(link_path) if link_path is not None else None  # the stable name, like a udev link
        self.slave_path = ""  # the pty's own name, while plugged in
        self._master: int | None = None  # the emulator's end of the pty, while plugged in
        self._slave: int | None = None  # held open: it keeps the terminal and its raw mode between host opens
        self._thread_name = thread_name
        self._thread_log = logger  # the emulator's own: a failed step is logged under its module's name
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # ---- the pseudo-terminal ----------------------------------------------------------------------

    @property
    def path(self) -> str:
        """What the host opens: the stable symlink if there is one, else the pty slave itself."""
        return str(self.link_path) if self.link_path is not None else self.slave_path

    @property
    def master_fd(self) -> int | None:
        """The emulator's end of the byte stream: ``Lockstep`` waits on it."""
        return self._master

    def _open_pty(self) -> None:
        """Plug in: a new pty (a new /dev/pts number, like a new ttyACM), the stable name re-pointed to it."""
        self._master, self._slave, self.slave_path = open_pty(self.link_path)
        fcntl.fcntl(self._master, fcntl.F_SETFL, fcntl.fcntl(self._master, fcntl.F_GETFL) | os.O_NONBLOCK)

    def _close_pty(self) -> None:
        """Unplug: the pty closed (the host's reads fail), the stable name gone."""
        if self._master is not None:
            close_pty(self._master, self._slave, self.link_path)
            self._master = self._slave = None

    # ---- running on its own -----------------------------------------------------------------------

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
