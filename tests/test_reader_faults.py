"""A reader that misbehaves must not freeze the table: the daemon's loop keeps its pace whatever the reader does,
a cycle that never ends is given up, floods are summarised, and what the reader says of itself is checked.

The reader is the firmware emulator (sim.firmware) on a real pseudo-terminal, read through pyserial, or a hostile
writer on a pty of its own; the loop is the daemon's own (``run_realtime``) on an injected clock.
"""

from __future__ import annotations

import select
import socket

import pytest

from hal.firmware_reader import serial_reader
from rfid_table.service import systemd
from rfid_table.service.daemon import StopFlag
from rfid_table.service.run import RUN_PERIOD_S, run_realtime
from rfid_table.service.timebase import TableClock
from sim.field import TableField
from sim.firmware import FirmwareEmulator

ANTENNAS = 4


@pytest.fixture
def field():
    field = TableField({f"zone{a}": ("main", a) for a in range(1, ANTENNAS + 1)})
    field.place("E004015000000001", "zone1")
    return field


@pytest.fixture
def notify_socket(tmp_path, monkeypatch):
    """systemd's notification socket, as the service manager gives it to the daemon: what the daemon says on it."""
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def received(sock, lines: list[str]) -> list[str]:
    """``lines`` with what came since: read as it comes, as systemd does (a full socket refuses the daemon's next)."""
    while True:
        try:
            lines += sock.recv(4096).decode().splitlines()
        except BlockingIOError:
            return lines


class VirtualRoom:
    """The room's time for the loop: the monotonic clock moves only when the loop waits."""

    def __init__(self):
        self.mono = 5000.0

    def monotonic(self) -> float:
        return self.mono

    def wall(self) -> float:
        return 1_790_000_000.0 + self.mono


def test_early_wake_ups_never_make_the_loop_sleep_past_one_period(field, tmp_path, notify_socket):
    """A reader that ends its cycles faster than the loop's period wakes it early a thousand times, then falls
    silent (unplugged). The next steps still come a period apart: the link notices the silence within its 2 s and
    tries to reopen the port, and systemd's watchdog goes on being fed."""
    room = VirtualRoom()
    emulator = FirmwareEmulator(field, antenna_count=ANTENNAS, cycle_s=0.02, link_path=tmp_path / "reader-main")
    reader = serial_reader("main", emulator.path, antennas=ANTENNAS)
    monitor = systemd.ServiceMonitor("t1", watchdog=systemd.Watchdog(environ={"WATCHDOG_USEC": "2000000"}))
    clock = TableClock(room.monotonic, room.wall)
    stop = StopFlag()
    steps: list[float] = []  # table time of every step
    wakes = {"early": 0}
    silent_since: list[float] = []
    attempts_before: list[int] = []
    pings_before: list[int] = []

    def step(now: float, wall: float) -> None:
        steps.append(now)
        reader.poll(now)
        reader.device_events()
        monitor.loop(room.monotonic(), {"main": reader.link.is_up}, True)
        if silent_since and now - silent_since[0] > 3.0:
            stop.event.set()

    said: list[str] = []

    def wait(timeout_s: float) -> None:
        received(notify_socket, said)
        if wakes["early"] < 1000:
            # the reader's cycle ends before the period is over and wakes the loop
            wakes["early"] += 1
            room.mono += min(timeout_s, 0.02)
            emulator.step(room.mono)
            transport = reader.link.transport
            if transport is not None and transport.fileno() is not None:
                select.select([transport.fileno()], [], [], 0.1)  # the frames on the pty, not in flight
            return
        if not silent_since:
            emulator.unplug()
            silent_since.append(clock.now())
            attempts_before.append(reader.link.stats.connects)
            pings_before.append(said.count("WATCHDOG=1"))
        room.mono += timeout_s  # nothing wakes the loop: it sleeps its whole timeout

    try:
        run_realtime(step, RUN_PERIOD_S, stop, wait, clock)
    finally:
        reader.close()
        emulator.close()
    assert wakes["early"] == 1000 and reader.link.stats.connects == attempts_before[0] == 1
    after = [t for t in steps if t >= silent_since[0]]
    gaps = [b - a for a, b in zip(after, after[1:])]
    assert after[0] - silent_since[0] <= RUN_PERIOD_S + 1e-9 and max(gaps) <= RUN_PERIOD_S + 1e-9, max(gaps)
    # the link saw the silence within its 2 s and is trying to reopen the port (the pty is gone: it fails)
    assert reader.link.stats.last_error is not None and "cannot open" in reader.link.stats.last_error
    assert reader.link.next_attempt_at is not None
    pings_silent = received(notify_socket, said).count("WATCHDOG=1") - pings_before[0]
    assert pings_before[0] >= 10 and pings_silent >= 2, "the watchdog was not fed while the reader was silent"
