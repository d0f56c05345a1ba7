"""The table's two clocks: table time for every timer and delay, wall time only to stamp events.

A Raspberry Pi has no clock chip: it boots on an old time (fake-hwclock's last shutdown) and NTP steps the wall
clock forward later, by minutes or by months. Anything that measured intervals on the wall clock would see a step as
time passing: a link declared dead, a debounce cut short, an action clock expired, and worst, the broadcast delay
over, releasing live hole cards. So everything that measures time runs on **table time**:

* table time is the kernel's monotonic clock plus an offset, so it never jumps;
* the offset is kept in the journal (meta ``table_clock``), so table time also goes on across a restart: after a
  restart of the daemon on the same boot, the monotonic clock kept running and table time counts the downtime as
  it really passed; after a reboot the monotonic clock starts again from zero, nothing on the machine can say
  how long the table was off, and table time resumes where the journal ends. A delay is then held longer by the
  time the table was off, never shorter;
* the controller, the zone tracker, the reader links, the GPIO debouncing and the journal's inputs and events all
  carry table time, so a replay of the journal gives the same result whatever the wall clock did.

Wall time (``time.time()``) is read once per cycle and stamped on the cycle's events (their ``t`` on MQTT) and
snapshots, because subscribers want to know when something happened in the room's time. It orders nothing: the
``seq`` does.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

META_KEY = "table_clock"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


class ClockStore(Protocol):
    """Where the table clock keeps its offset: the journal's meta table."""

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def latest_t(self) -> float | None: ...


def boot_id(path: Path = BOOT_ID) -> str | None:
    """The kernel's id of this boot: the monotonic clock is comparable only between runs of the same boot."""
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


class TableClock:
    """Table time (monotonic, continued across restarts) and wall time, both injectable for tests.

    ``monotonic`` must never go backwards within one ``boot``; ``wall`` may jump either way.
    """

    def __init__(self, monotonic: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 boot: str | None = None):
        self._monotonic = monotonic
        self._wall = wall
        self.boot = boot
        # A table without a journal starts its table time at the wall time, so its numbers read like stamps.
        self.offset = wall() - monotonic()

    def now(self) -> float:
        return self._monotonic() + self.offset

    def wall(self) -> float:
        return self._wall()

    def resume(self, store: ClockStore) -> None:
        """Continue the table time the journal ``store`` was written with, and keep the offset there.

        Same boot: the same offset, so the time the daemon was down counts. Another boot (or no boot id): table
        time goes on from the newest time in the journal. A new journal: the offset this clock started with.
        """
        saved = _load(store.meta(META_KEY))
        latest = store.latest_t()
        if saved is not None and self.boot is not None and saved.get("boot") == self.boot:
            self.offset = float(saved["offset"])
        elif latest is not None:
            self.offset = latest - self._monotonic()
            log.info("table clock: a new boot; table time goes on from the journal's last time (the time the "
                     "table was off does not count towards any delay)")
        if latest is not None and self.now() < latest:  # a clock that went back would reorder the journal
            self.offset = latest - self._monotonic()
        store.set_meta(META_KEY, json.dumps({"boot": self.boot, "offset": self.offset}))


def _load(text: str | None) -> dict | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("offset"), (int, float)):
        return None
    return value


def system_clock() -> TableClock:
    """The clocks of this machine: what the daemon runs on."""
    return TableClock(time.monotonic, time.time, boot_id())
