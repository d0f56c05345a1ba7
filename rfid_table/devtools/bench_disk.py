"""The disk's own sync latency, beside the daemon's journal: the baseline of the commit's share of a card's latency.

Every event is on disk before it is published, so a card that arrives while the disk stalls waits for the disk.
To tell such a wait from the daemon's own, the bench's full-table part runs a :class:`DiskProbe` in the same
minutes: a thread of the bench that writes 4 KiB to a file of its own in the journal's directory and syncs it
(``fdatasync``, as SQLite syncs its WAL), every :data:`PROBE_INTERVAL_S`. A sync of :data:`STALL_S` or more is a
stall of the disk; a card whose commit and publication span one waited on the disk, not on the daemon.

Where the journal is kept is the bench's choice (:func:`journal_disk`): by default a steady disk of the bench's
making, a RAM directory whose every fsync ``strace`` delays by the order of a Raspberry Pi's SD card, so that the
figure is the daemon's own and not the other tenants' of a shared machine's disk; the probe then watches the
machine's disk the journal was kept off. Given a directory (a Pi's SD card), the journal is there, on that disk as
it is, and the probe beside it.
"""

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from typing import NamedTuple

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


RAM_DIR = "/dev/shm"  # tmpfs on Debian and Raspberry Pi OS


def fsync_delay_prefix(fsync_ms: float) -> list[str] | str:
    """The command prefix under which every ``fsync`` and ``fdatasync`` of a process and its threads returns
    ``fsync_ms`` late (strace's fault injection; seccomp-bpf stops the process at those calls alone, so the rest
    runs at full speed); the reason when strace is missing."""
    strace = shutil.which("strace")
    if strace is None:
        return "strace is not installed (Debian package strace)"
    return [strace, "-f", "-qq", "--seccomp-bpf", "-e", "trace=fsync,fdatasync", "-e",
            f"inject=fsync,fdatasync:delay_exit={int(fsync_ms * 1000)}", "-o", "/dev/null", "--"]


class JournalDisk(NamedTuple):
    directory: str  # where the journal goes
    command_prefix: list[str]  # what the daemon's command starts with: strace's delay, or nothing
    probe_directory: str  # where the DiskProbe syncs its file
    description: str  # for the report

    @property
    def probe_beside_journal(self) -> bool:
        """Whether the probe watches the journal's own disk, so that a card can be said to wait on its stalls."""
        return self.probe_directory == self.directory


def journal_disk(stack: ExitStack, journal_dir: str | None, fsync_ms: float, scratch: str) -> JournalDisk:
    """The disk for the full-table part's journal; what it makes is removed when ``stack`` closes.

    * ``journal_dir`` given: a directory of the bench's own inside it, on that disk as it is;
    * otherwise, with ``fsync_ms``: a steady disk, a directory in :data:`RAM_DIR` with every fsync of the daemon
      ``fsync_ms`` late; the probe watches ``scratch``, on the machine's disk;
    * otherwise, or without strace or a RAM directory: ``scratch`` itself, on the machine's disk as it is.
    """
    if journal_dir is not None:
        directory = tempfile.mkdtemp(prefix="rfid-table-bench-", dir=journal_dir)
        stack.callback(shutil.rmtree, directory, ignore_errors=True)
        return JournalDisk(directory, [], directory, f"{journal_dir}, as it is")
    as_it_is = f"the machine's disk ({scratch}), as it is"
    if not fsync_ms:
        return JournalDisk(scratch, [], scratch, as_it_is)
    prefix = fsync_delay_prefix(fsync_ms)
    if isinstance(prefix, str):
        return JournalDisk(scratch, [], scratch, f"{as_it_is}: {prefix}, so no steady disk")
    if not (os.path.isdir(RAM_DIR) and os.access(RAM_DIR, os.W_OK)):
        return JournalDisk(scratch, [], scratch, f"{as_it_is}: no {RAM_DIR}, so no steady disk")
    directory = tempfile.mkdtemp(prefix="rfid-table-bench-", dir=RAM_DIR)
    stack.callback(shutil.rmtree, directory, ignore_errors=True)
    return JournalDisk(directory, prefix, scratch, f"steady: RAM ({RAM_DIR}), every fsync {fsync_ms:g} ms late")


def traced_pid(tracer_pid: int, timeout_s: float = 10.0) -> int:
    """The pid of the process strace (``tracer_pid``) started: its one child, once it has one."""
    deadline = time.monotonic() + timeout_s
    children = f"/proc/{tracer_pid}/task/{tracer_pid}/children"
    while time.monotonic() < deadline:
        with open(children) as listed:
            pids = listed.read().split()
        if pids:
            return int(pids[0])
        time.sleep(0.01)
    raise RuntimeError(f"strace (pid {tracer_pid}) started no process in {timeout_s:g} s")
