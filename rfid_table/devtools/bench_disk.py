"""The disk's own sync latency, beside the daemon's journal: the baseline of the commit's share of a card's latency.

Every event is on disk before it is published, so a card that arrives while the disk stalls waits for the disk.
To tell such a wait from the daemon's own, the bench's full-table part runs a :class:`DiskProbe` in the same
minutes: a thread of the bench that writes 4 KiB to a file of its own in the journal's directory and syncs it
(``fdatasync``, as SQLite syncs its WAL), every :data:`PROBE_INTERVAL_S`. A sync of :data:`STALL_S` or more is a
stall of the disk; a card whose commit and publication span one waited on the disk, not on the daemon.
"""

import os
import threading
import time
from collections.abc import Sequence

PROBE_INTERVAL_S = 0.25  # four small syncs a second: a stall of a few hundred ms is seen, the load is negligible
PROBE_BYTES = 4096
STALL_S = 0.1  # as the daemon's diagnostics count slow commits


class DiskProbe:
    """Syncs a small write every ``interval_s`` from its own thread, and keeps how long each sync took."""

    def __init__(self, directory: str, interval_s: float = PROBE_INTERVAL_S):
        self._path = os.path.join(directory, "disk-probe")
        self._interval_s = interval_s
        self._syncs: list[tuple[float, float]] = []  # (start, seconds), start on perf_counter
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="disk-probe", daemon=True)

    def start(self) -> "DiskProbe":
        self._thread.start()
        return self

    def synced(self) -> int:
        """How many syncs so far."""
        return len(self._syncs)

    def stop(self) -> list[tuple[float, float]]:
        """Stops the thread (if it runs); every sync it made, as (start on perf_counter, seconds)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return list(self._syncs)

    def _run(self) -> None:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            block = os.urandom(PROBE_BYTES)
            slot = 0
            while not self._stop.wait(self._interval_s):
                os.pwrite(fd, block, (slot % 64) * PROBE_BYTES)  # a small file overwritten in place, like a WAL
                slot += 1
                started = time.perf_counter()
                os.fdatasync(fd)
                self._syncs.append((started, time.perf_counter() - started))
        finally:
            os.close(fd)
            os.unlink(self._path)


def stalls(syncs: list[tuple[float, float]], stall_s: float = STALL_S) -> list[tuple[float, float]]:
    """The (start, end) of every sync that took ``stall_s`` or more."""
    return [(start, start + seconds) for start, seconds in syncs if seconds >= stall_s]


def overlaps(span: tuple[float, float], stall_spans: Sequence[tuple[float, float]]) -> bool:
    """Whether the span (start, end) shares a moment with one of the stalls."""
    start, end = span
    return any(stall_start < end and start < stall_end for stall_start, stall_end in stall_spans)
