"""A reader that misbehaves must not freeze the table: the daemon's loop keeps its pace whatever the reader does,
a cycle that never ends is given up, floods are summarised, and what the reader says of itself is checked.

The reader is the firmware emulator (sim.firmware) on a real pseudo-terminal, read through pyserial, or a hostile
writer on a pty of its own; the loop is the daemon's own (``run_realtime``) on an injected clock.
"""

from __future__ import annotations

import doctest
import select
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import TABLE_6
from hal import bursts
from hal.firmware_reader import serial_reader
from hostile_reader import HostileReader, no_delimiter, rebooting, stuck_cycle, whole_cycles
from rfid_table.ops.broker import free_port
from rfid_table.service import systemd
from rfid_table.service.daemon import StopFlag
from rfid_table.service.run import RUN_PERIOD_S, run_realtime
from rfid_table.service.timebase import TableClock
from sim.field import TableField
from sim.firmware import FirmwareEmulator, Lockstep
from test_run_daemon import RFID_TABLE

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


# --------------------------------------------------------------------------
# The daemon (`rfid-table run`) on a hostile reader, through the real broker
# --------------------------------------------------------------------------

TABLE = "rfid-table/sixmax-1"
STOP_WITHIN_S = 2.0


@pytest.fixture
def hostile(tmp_path):
    made: list[HostileReader] = []

    def make(**options) -> HostileReader:
        made.append(HostileReader(tmp_path / "reader-main", antennas=12, **options))
        return made[-1]

    yield make
    for reader in made:
        reader.close()


@pytest.fixture
def daemon(tmp_path, broker):
    """`rfid-table run` on the table of config/table-6max.toml with its reader on the hostile reader's pty; its log
    is a file. Stopped with SIGTERM by the test (how long it takes is part of what is tested), killed otherwise."""
    text = TABLE_6.read_text().replace('backend = "sim"', f'backend = "serial"\nport = "{tmp_path / "reader-main"}"')
    text = text.replace('path = "/var/lib/rfid-table/sixmax-1.journal"', f'path = "{tmp_path / "journal.db"}"')
    config = tmp_path / "table.toml"
    config.write_text(text)
    started: list[subprocess.Popen] = []
    log = tmp_path / "daemon.log"

    def start(port: int | None = None) -> subprocess.Popen:
        with open(log, "ab") as out:
            started.append(subprocess.Popen(RFID_TABLE + ["run", "--config", str(config), "--host", broker.host,
                                                          "--port", str(port or broker.port)], stdout=out, stderr=out))
        return started[-1]

    start.log = log
    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def stop_time(process: subprocess.Popen) -> float:
    """SIGTERM, and the seconds until the process has exited (it must exit 0)."""
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(15) == 0
    return time.monotonic() - sent


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def latest_diag(recorder) -> dict:
    reports = recorder.json("/public/diag")
    return reports[-1]["readers"]["main"] if reports else {}


def test_a_cycle_that_never_ends_is_given_up_and_the_daemon_does_not_grow(hostile, daemon, broker,
                                                                           recorder_factory):
    """A reader whose cycle number is stuck and that never ends a cycle: its reads are not kept without bound (the
    daemon grew by 25 MB per 180,000 reads); diag says the cycles are given up and the table does not see this
    reader's cards, until it ends a cycle again."""
    recorder = recorder_factory(f"{TABLE}/#")
    reader = hostile()
    process = daemon()
    assert reader.answered.wait(15), "the daemon never identified the reader"
    assert recorder.wait_for(lambda m: any(e["type"] == "reader_link" for e in recorder.json("/secure/events")), 15)
    before = rss_kb(process.pid)
    reader.behaviour = stuck_cycle(entries_per_frame=32)
    deadline = time.monotonic() + 60
    while reader.sent_entries < 200_000:
        assert time.monotonic() < deadline and reader.alive, f"only {reader.sent_entries} reads taken in 60 s"
        time.sleep(0.05)
    reader.behaviour = None
    assert recorder.wait_for(lambda m: latest_diag(recorder).get("cycles_given_up", 0) >= 1, 10)
    grown_mb = (rss_kb(process.pid) - before) / 1024
    assert grown_mb < 8, f"the daemon grew by {grown_mb:.1f} MB on 200,000 reads of one cycle"
    main = latest_diag(recorder)
    assert main["delivering"] is False and "held more than" in main["last_given_up"], main
    view = subprocess.run(RFID_TABLE + ["diag", "--config", str(daemon.log.with_name("table.toml")), "--host",
                                        broker.host, "--port", str(broker.port), "--plain", "--timeout", "2"],
                          capture_output=True, text=True, timeout=30)
    assert "CYCLES GIVEN UP: the table does not see this reader's cards" in view.stdout, view.stdout + view.stderr
    reader.behaviour = whole_cycles()  # the reader ends its cycles again
    assert recorder.wait_for(lambda m: latest_diag(recorder).get("delivering") is True, 10), latest_diag(recorder)
    assert stop_time(process) < STOP_WITHIN_S


def test_a_cycle_that_stops_going_on_is_given_up_after_its_time_and_a_slow_long_one_is_not(tmp_path):
    """A stuck cycle that repeats one antenna, a few reads at a time: given up once no antenna new to it has come
    for 2 s. A reader whose pass takes 8 s, antenna after antenna, against a configured cycle of 50 ms: every
    pass is whole (virtual time, the firmware emulator)."""
    stuck = HostileReader(tmp_path / "reader-stuck", antennas=4)
    reader = serial_reader("stuck", stuck.path, antennas=4, cycle_s=0.05)
    try:
        deadline = time.monotonic() + 10
        while not reader.link.is_up:
            assert time.monotonic() < deadline, "the hostile reader never came up"
            reader.poll(time.monotonic())
            time.sleep(0.01)
        stuck.behaviour = stuck_cycle(entries_per_frame=1, antennas=1, every_s=0.05)
        started = time.monotonic()
        while reader.cycles_given_up == 0:
            assert time.monotonic() - started < 6, "a cycle repeating one antenna was never given up"
            reader.poll(time.monotonic())
            time.sleep(0.02)
        assert 2.0 <= time.monotonic() - started and "no new antenna for 2 s" in reader.last_given_up
        assert not reader.delivering
    finally:
        reader.close()
        stuck.close()

    field = TableField({f"zone{a}": ("main", a) for a in range(1, 13)})
    field.place("E004015000000001", "zone12")
    emulator = FirmwareEmulator(field, antenna_count=12, cycle_s=8.0, link_path=tmp_path / "reader-slow")
    slow = serial_reader("main", emulator.path, antennas=12, cycle_s=0.05)
    try:
        bench = Lockstep(emulator, slow.link, slow.poll, tick_s=0.05)
        bench.run(40.0)
        whole = [c for c in bench.outputs if any(r.uid == "E004015000000001" for r in c.reads)]
        assert len(whole) >= 3 and slow.cycles_given_up == 0 and slow.delivering
    finally:
        slow.close()
        emulator.close()


def test_a_reader_that_reboots_again_and_again_is_summarised_not_one_event_per_reboot(hostile, daemon,
                                                                                   recorder_factory):
    """A reader rebooting ten times a second: five link changes go out as they come, then the window's end sends
    one that counts the rest (docs/mqtt.md, "Bursts"); the journal and both feeds are not flooded."""
    recorder = recorder_factory(f"{TABLE}/secure/events")
    reader = hostile()
    process = daemon()
    assert reader.answered.wait(15)
    reader.behaviour = rebooting()

    def links() -> list[dict]:
        return [e for e in recorder.json("/secure/events") if e["type"] == "reader_link"]

    assert recorder.wait_for(lambda m: any("summarised" in e for e in links()), 20), links()
    summary = next(e for e in links() if "summarised" in e)
    before = links()[:links().index(summary)]
    assert len(before) == 5 and summary["summarised"] >= 20, (len(before), summary)
    assert len(reader.identified_at) >= 20  # the reader did reboot that often, and was identified again each time
    reader.behaviour = None
    assert stop_time(process) < STOP_WITHIN_S


@pytest.mark.parametrize("refusal", ["major", "serial"])
def test_a_reader_refused_at_the_handshake_is_retried_with_backoff_and_diag_says_why(refusal, hostile, daemon,
                                                                                     recorder_factory):
    """Another protocol major version, or a serial with markup in it: the reader is refused, tried again after 1,
    2, 4 ... s, and diag says why. The serial's markup reaches no event, no report and no log line."""
    recorder = recorder_factory(f"{TABLE}/#")
    markup = "<img src=x onerror=alert(1)>"
    reader = hostile(protocol_major=2) if refusal == "major" else hostile(serial=markup)
    process = daemon()
    assert recorder.wait_for(lambda m: latest_diag(recorder).get("refused"), 15), latest_diag(recorder)
    assert recorder.wait_for(lambda m: len(reader.identified_at) >= 3, 10), reader.identified_at
    first, second, third = reader.identified_at[:3]
    assert 0.8 < second - first < 1.6 and 1.6 < third - second < 2.8  # the backoff: 1 s, then 2 s
    refused = latest_diag(recorder)["refused"]
    events = [e for e in recorder.json("/secure/events") if e["type"] == "reader_link"]
    assert [e["state"] for e in events][:1] == ["incompatible"] and events[0]["reason"] == refused
    if refusal == "major":
        assert "reader speaks protocol 2.0" in refused
    else:
        assert r"'\x3cimg src\x3dx onerror\x3dalert\x281\x29\x3e' is refused" in refused
    assert stop_time(process) < STOP_WITHIN_S
    published = b"".join(payload for _topic, payload, _retained in recorder.messages)
    assert b"<img" not in published and b"<img" not in daemon.log.read_bytes()


def test_a_stream_without_delimiters_shows_in_diag_as_what_it_is(hostile, daemon, broker, recorder_factory):
    """Bytes that never form a frame: diag counts them as oversize frames, with the reason and where in the stream,
    instead of only "rejected"; the link goes down within its 2 s and is opened again."""
    recorder = recorder_factory(f"{TABLE}/public/diag")
    reader = hostile()
    process = daemon()
    assert reader.answered.wait(15)
    reader.behaviour = no_delimiter()
    assert recorder.wait_for(lambda m: latest_diag(recorder).get("frames", {}).get("oversize", 0) > 0, 10)
    main = latest_diag(recorder)
    assert main["last_rejection"]["counter"] == "oversize" and main["frames"]["bytes_discarded"] > 0, main
    view = subprocess.run(RFID_TABLE + ["diag", "--config", str(daemon.log.with_name("table.toml")), "--host",
                                        broker.host, "--port", str(broker.port), "--plain", "--timeout", "2"],
                          capture_output=True, text=True, timeout=30)
    assert "last frame rejected (oversize)" in view.stdout and "oversize" in view.stdout, view.stdout + view.stderr
    assert stop_time(process) < STOP_WITHIN_S


def test_sigterm_ends_the_daemon_within_2_s_while_it_waits_for_the_broker(hostile, daemon, tmp_path):
    """At start, the broker does not answer (the daemon waits up to 5 s for it before reading the table): SIGTERM
    still ends it at once."""
    hostile()
    process = daemon(port=free_port())  # nothing listens there
    deadline = time.monotonic() + 15
    while not (tmp_path / "journal.db").exists():  # the journal is open: the daemon goes on to the broker
        assert time.monotonic() < deadline and process.poll() is None, daemon.log.read_text()
        time.sleep(0.02)
    assert stop_time(process) < STOP_WITHIN_S


def test_the_bursts_example_runs_as_written():
    """hal/bursts.py's docstring example, as a reader of it would run it."""
    assert doctest.testmod(bursts).failed == 0
