"""The firmware emulator (sim.firmware) against the real host stack, and the faults it injects.

Everything runs through a real pseudo-terminal: emulator -> pty -> pyserial ``SerialTransport`` ->
``ReaderLink`` -> ``FirmwareReader`` -> ``hal.zones.ZoneTracker``, and the check is always the one the
table cares about: does every zone hold exactly the tags lying on it.
"""

from __future__ import annotations

import time

import pytest

from firmware_bridge.codec import cobs_encode, encode_frame
from firmware_bridge.link import ReaderLink
from firmware_bridge.messages import (
    FaultCode,
    MessageType,
    OutputKind,
    OutputPattern,
    SetOutput,
    SetSchedule,
)
from firmware_bridge.transports import SerialTransport
from hal.firmware_reader import FirmwareReader
from hal.zones import DebounceSettings, ZoneTracker
from sim.field import TableField
from sim.firmware import Fault, FirmwareEmulator, Lockstep
from sim.noise import NoiseModel

ZONES = {
    "seat1.cards": ("main", 1),
    "seat2.cards": ("main", 2),
    "board": ("main", 3),
    "burn": ("main", 4),
    "muck": ("main", 5),
    "seat3.cards": ("main", 6),
}
# No debouncing at all unless a test asks for it: whatever the reader backend gets wrong shows at once.
RAW = DebounceSettings(present_after_cycles=1, absent_after_s=0.0)


def uid(n: int) -> str:
    return f"E00401500000{n:04X}"


class Table:
    """Emulator, link, reader backend and zone tracker wired together, stepped in lockstep."""

    def __init__(self, tmp_path, debounce=RAW, noise=None, **emulator_options):
        self.field = TableField(ZONES)
        self.emulator = FirmwareEmulator(
            self.field, antenna_count=6, link_path=tmp_path / "reader-main", noise=noise, **emulator_options
        )
        self.link = ReaderLink(lambda: SerialTransport(self.emulator.path), name="main")
        self.reader = FirmwareReader("main", self.link)
        self.tracker = ZoneTracker({antenna: zone for zone, antenna in ZONES.items()}, default=debounce)
        self.zone_events = []
        self.link_events = []
        self.bench = Lockstep(self.emulator, self.link, self._poll)

    def _poll(self, now):
        cycles = self.reader.poll(now)
        for cycle in cycles:
            self.zone_events += self.tracker.feed(cycle)
        self.link_events += self.reader.drain_link_events()
        return cycles

    def run(self, seconds):
        return self.bench.run(seconds)

    def run_until(self, condition, timeout):
        assert self.bench.run_until(condition, timeout), f"not within {timeout} s"

    def truth(self) -> dict[str, set[str]]:
        return {zone: set(self.field.tags_in(zone)) for zone in ZONES}

    def assert_zones_correct(self):
        assert self.tracker.present() == self.truth()

    def events_since(self, index):
        return [(e.kind, e.zone, e.uid) for e in self.zone_events[index:]]

    def link_kinds(self, since=0):
        return [event.kind for event in self.link_events[since:]]

    def close(self):
        self.link.close()
        self.emulator.close()


@pytest.fixture
def make_table(tmp_path):
    tables = []

    def make(**options):
        table = Table(tmp_path, **options)
        tables.append(table)
        return table

    yield make
    for table in tables:
        table.close()


def deal(table: Table) -> None:
    for n, zone in enumerate(["seat1.cards", "seat1.cards", "seat2.cards", "seat2.cards", "board", "muck"]):
        table.field.place(uid(n), zone)


def settled(table: Table) -> None:
    table.run_until(lambda: table.link.is_up, timeout=1.0)
    table.run(0.5)
    table.assert_zones_correct()


# --------------------------------------------------------------------------
# Normal operation
# --------------------------------------------------------------------------


def test_the_emulator_in_its_own_thread_in_real_time(tmp_path):
    field = TableField(ZONES)
    field.place(uid(1), "board")
    emulator = FirmwareEmulator(field, antenna_count=6, link_path=tmp_path / "reader-main")
    link = ReaderLink(lambda: SerialTransport(emulator.path), name="main")
    reader = FirmwareReader("main", link)
    emulator.start()
    try:
        deadline = time.monotonic() + 5.0
        cycles, ticket = [], None
        while time.monotonic() < deadline:
            cycles += reader.poll(time.monotonic())
            if link.is_up and ticket is None:
                ticket = link.send(SetOutput(0, OutputKind.LED, 3, OutputPattern.ON, 0))
            if ticket is not None and ticket.done and len(cycles) >= 5:
                break
            time.sleep(0.002)
        assert ticket is not None and ticket.ok
        assert {read.uid for read in cycles[-1].reads} == {uid(1)}
        assert cycles[-1].reads[0].antenna == 3  # wire antenna 2 is configuration antenna 3
        assert link.stats.frames_rejected == 0
    finally:
        link.close()
        emulator.close()


def test_unplug_and_replug_in_real_time(tmp_path):
    """The same recovery on the wall clock, with the emulator in its own thread."""
    field = TableField(ZONES)
    field.place(uid(1), "board")
    emulator = FirmwareEmulator(field, antenna_count=6, link_path=tmp_path / "reader-main")
    link = ReaderLink(lambda: SerialTransport(emulator.path), name="main")
    reader = FirmwareReader("main", link)
    tracker = ZoneTracker({antenna: zone for zone, antenna in ZONES.items()},
                          default=DebounceSettings(present_after_cycles=2, absent_after_s=0.3))
    kinds = []

    def poll_until(condition, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for cycle in reader.poll(time.monotonic()):
                tracker.feed(cycle)
            kinds.extend(event.kind for event in reader.drain_link_events())
            if condition():
                return True
            time.sleep(0.002)
        return False

    emulator.start()
    try:
        assert poll_until(lambda: tracker.present()["board"] == {uid(1)}, 2.0)
        unplugged = time.monotonic()
        emulator.unplug()
        assert poll_until(lambda: "down" in kinds, 2.0)
        assert time.monotonic() - unplugged < 2.0
        field.place(uid(1), "muck")
        emulator.replug()
        assert poll_until(lambda: tracker.present()["muck"] == {uid(1)}, 3.0)
        assert tracker.present()["board"] == set() and link.stats.reconnects == 1
    finally:
        link.close()
        emulator.close()


def test_cycles_are_whole_and_marked_complete(make_table):
    table = make_table()
    deal(table)
    settled(table)
    cycles = table.run(1.0)
    assert 18 <= len(cycles) <= 21  # one per 50 ms
    for cycle in cycles:
        assert sorted((read.antenna, read.uid) for read in cycle.reads) == sorted(
            (ZONES[zone][1], tag) for zone, tags in table.truth().items() for tag in tags
        )
    assert table.reader.cycles_skipped <= 1  # at most the one in progress when the link came up


def test_the_cycle_in_progress_when_the_link_comes_up_is_not_used(make_table):
    table = make_table()
    deal(table)
    # The reader has been scanning for a while; the host connects in the middle of a cycle.
    for _ in range(17):
        table.bench.now += 0.005
        table.emulator.step(table.bench.now)
    assert table.emulator.scanning
    cycles = table.run(0.5)
    assert table.reader.cycles_skipped == 1
    tags = {tag for zone_tags in table.truth().values() for tag in zone_tags}
    assert cycles and all({read.uid for read in cycle.reads} == tags for cycle in cycles)
    assert [kind for kind, _, _ in table.events_since(0)] == ["arrived"] * 6


def test_a_stack_larger_than_one_frame_is_reassembled(make_table):
    table = make_table()
    for n in range(60):  # 60 chips: 45 fit in one INVENTORY frame, so the reader splits them (MORE)
        table.field.place(uid(100 + n), "burn")
    settled(table)
    assert len(table.tracker.present()["burn"]) == 60
    # Losing the second half of the split antenna keeps the antenna's previous contents for that cycle.
    mark = len(table.zone_events)
    table.emulator.inject(Fault.DROP, MessageType.INVENTORY, count=4)
    table.run(0.5)
    assert table.link.stats.frames_lost == 4
    assert table.events_since(mark) == []
    table.assert_zones_correct()


def test_the_emulator_answers_bad_commands_per_the_spec(make_table):
    table = make_table(status_s=0.5)
    settled(table)
    port = table.link.transport
    port.write(encode_frame(0x42, 500, b""))  # unknown type: NAK
    port.write(encode_frame(MessageType.SET_OUTPUT, 501, b"\x01"))  # malformed: NAK
    port.write(encode_frame(MessageType.HEARTBEAT, 502, b"\x00\x00\x00\x00"))  # wrong direction: NAK
    port.write(cobs_encode(bytes([MessageType.RESET, 0xF7, 0x01, 0x12, 0x34])) + b"\x00")  # bad CRC: silence
    port.write(b"\x09\x01\x02\x00")  # bad COBS: silence
    table.run(0.6)
    stats = table.emulator.stats
    assert (stats.rx_malformed, stats.rx_crc_errors, stats.rx_framing_errors) == (3, 1, 1)
    assert stats.boots == 1  # the damaged RESET did nothing
    # Three NAKs came back; none answered a command of ours, so the link counts them as stale.
    assert table.link.stats.stale_replies == 3
    status = [e.message for e in table.link_events if e.kind == "status"][-1]
    assert (status.rx_malformed, status.rx_crc_errors, status.rx_framing_errors) == (3, 1, 1)


# --------------------------------------------------------------------------
# Unplug and replug
# --------------------------------------------------------------------------


def test_unplug_and_replug_recovers_with_every_zone_correct(make_table):
    table = make_table(debounce=DebounceSettings(present_after_cycles=2, absent_after_s=0.3))
    deal(table)
    settled(table)

    # Pull the cable.
    unplugged_at = table.bench.now
    table.emulator.unplug()
    table.run_until(lambda: not table.link.is_up, timeout=2.0)
    down = [e for e in table.link_events if e.kind == "down"]
    assert len(down) == 1 and down[0].t - unplugged_at <= 2.0
    assert "read from" in down[0].reason

    # While it is out: a card moves, one is taken away, a new one arrives.
    mark = len(table.zone_events)
    table.field.place(uid(0), "board")  # from seat1.cards
    table.field.remove(uid(2))  # from seat2.cards
    table.field.place(uid(50), "burn")
    table.run(2.5)
    # Nothing vanished just because the reader did: the tracker still shows the last known table.
    assert table.events_since(mark) == []
    assert uid(0) in table.tracker.present()["seat1.cards"] and uid(2) in table.tracker.present()["seat2.cards"]
    assert "connect_failed" in table.link_kinds()

    # Plug it back in: a new pty behind the same stable path; the same link object reconnects.
    replugged_at = table.bench.now
    table.emulator.replug()
    table.run_until(lambda: table.link.is_up, timeout=4.5)
    assert table.link.stats.reconnects == 1
    assert table.link.transport.device == table.emulator.slave_path  # whatever pts it got this time
    assert table.emulator.stats.boots == 2  # a replugged reader has rebooted

    table.run(0.5)
    after_replug = [command.MSG_TYPE.name for t, command in table.emulator.received if t >= replugged_at]
    assert after_replug == ["IDENTIFY", "REQUEST_INVENTORY"]
    table.assert_zones_correct()
    assert sorted(table.events_since(mark)) == sorted([
        ("left", "seat1.cards", uid(0)),
        ("arrived", "board", uid(0)),
        ("left", "seat2.cards", uid(2)),
        ("arrived", "burn", uid(50)),
    ])
    assert table.link.stats.frames_rejected == 0


# --------------------------------------------------------------------------
# Injected faults
# --------------------------------------------------------------------------

# fault -> (frames rejected, frames lost, duplicates) as the host must count them
FRAME_FAULTS = {
    Fault.BIT_FLIP: (1, 1, 0),
    Fault.DROP: (0, 1, 0),
    Fault.DUPLICATE: (0, 0, 1),
    Fault.TRUNCATE: (1, 1, 0),
    Fault.GARBAGE: (1, 0, 0),
}


@pytest.mark.parametrize("fault", list(FRAME_FAULTS), ids=lambda fault: fault.value)
def test_each_frame_fault_is_counted_and_changes_no_zone(make_table, fault):
    table = make_table()  # no debouncing: a wrongly emptied antenna would show as "left" at once
    deal(table)
    settled(table)
    mark = len(table.zone_events)
    before = table.link.stats
    table.emulator.inject(fault, MessageType.INVENTORY)
    table.run(0.5)
    after = table.link.stats
    rejected, lost, duplicates = FRAME_FAULTS[fault]
    assert table.emulator.stats.faults_applied == {fault.value: 1}
    assert after.frames_rejected - before.frames_rejected == rejected
    assert after.frames_lost - before.frames_lost == lost
    assert after.duplicates - before.duplicates == duplicates
    assert table.link.is_up and table.link_kinds().count("up") == 1
    assert table.events_since(mark) == []
    table.assert_zones_correct()


def test_a_storm_of_every_fault_on_every_kind_of_frame(make_table):
    table = make_table(debounce=DebounceSettings(present_after_cycles=2, absent_after_s=0.3),
                       noise=NoiseModel.realistic(0.05, seed=3), seed=5)
    deal(table)
    settled(table)
    mark = len(table.zone_events)
    faults = [Fault.BIT_FLIP, Fault.DROP, Fault.DUPLICATE, Fault.TRUNCATE, Fault.GARBAGE, Fault.LOSE_COMMAND]
    tickets = []
    for round_ in range(60):
        fault = faults[round_ % len(faults)]
        table.emulator.inject(fault)  # hits the next frame of any type
        table.run(0.05)
        if fault is Fault.LOSE_COMMAND:
            # Sent half a round after the injections, so a fault meant for any frame does not always
            # land on this command's answers (four attempts in a row would fail it, as it should).
            tickets.append(table.link.send(SetOutput(0, OutputKind.LED, round_ % 6, OutputPattern.ON, 0)))
        table.run(0.05)
    table.run(1.0)
    applied = table.emulator.stats.faults_applied
    assert sum(applied.values()) == 60
    stats = table.link.stats
    assert stats.frames_rejected == applied["bit_flip"] + applied["truncate"] + applied["garbage"]
    assert stats.duplicates == applied["duplicate"]
    assert stats.frames_lost == applied["bit_flip"] + applied["truncate"] + applied["drop"]
    assert all(ticket.ok for ticket in tickets)
    assert table.link_kinds().count("up") == 1 and table.link.is_up
    assert table.events_since(mark) == []
    table.assert_zones_correct()


def test_a_stalled_reader_takes_the_link_down_within_two_seconds_and_comes_back(make_table):
    table = make_table(debounce=DebounceSettings(present_after_cycles=2, absent_after_s=0.3))
    deal(table)
    settled(table)
    mark = len(table.zone_events)
    stalled_at = table.bench.now
    table.emulator.stall(3.0)
    table.run_until(lambda: not table.link.is_up, timeout=2.5)
    down = [e for e in table.link_events if e.kind == "down"][0]
    assert 1.9 <= down.t - stalled_at <= 2.05 and down.reason == "no valid frame for 2.0 s"
    table.field.remove(uid(5))  # taken from the muck meanwhile
    table.run_until(lambda: table.link.is_up, timeout=4.0)
    assert table.link.stats.reconnects == 1
    assert table.events_since(mark) == []  # nothing happened to the zones while the reader hung
    table.run(0.5)
    table.assert_zones_correct()
    assert table.events_since(mark) == [("left", "muck", uid(5))]


def test_an_antenna_fault_is_reported_and_its_tags_held_until_it_clears(make_table):
    table = make_table(debounce=DebounceSettings(present_after_cycles=1, absent_after_s=0.3), fault_repeat_s=1.0)
    deal(table)
    settled(table)
    mark = len(table.zone_events)
    table.emulator.antenna_fault(1, FaultCode.OPEN)  # wire antenna 1 = configuration antenna 2: seat2.cards
    table.run(0.2)
    faults = [e.message for e in table.link_events if e.kind == "antenna_fault"]
    assert [(f.antenna, f.fault) for f in faults] == [(1, FaultCode.OPEN)]
    assert table.reader.faulted_antennas == {2}
    table.field.remove(uid(2))  # unseen: the antenna is dead
    table.run(1.5)
    assert len([e for e in table.link_events if e.kind == "antenna_fault"]) == 2  # repeated while it lasts
    assert table.events_since(mark) == []  # contents unknown, not empty: held
    assert table.tracker.present()["seat2.cards"] == {uid(2), uid(3)}

    table.emulator.antenna_fault(1, FaultCode.CLEARED)
    table.run(0.6)
    cleared = [e.message for e in table.link_events if e.kind == "antenna_fault"][-1]
    assert cleared.fault == FaultCode.CLEARED and table.reader.faulted_antennas == set()
    assert table.events_since(mark) == [("left", "seat2.cards", uid(2))]
    table.assert_zones_correct()


def test_a_faulted_antenna_is_still_held_after_a_reconnect(make_table):
    table = make_table(debounce=DebounceSettings(present_after_cycles=1, absent_after_s=0.3), fault_repeat_s=60)
    deal(table)
    settled(table)
    table.emulator.antenna_fault(0, FaultCode.SHORT)
    table.run(0.2)
    mark = len(table.zone_events)
    table.emulator.stall(2.5)  # the link drops and comes back; the fault is not re-reported for a minute
    table.run_until(lambda: table.link_kinds().count("up") == 2, timeout=5.0)
    table.run(0.5)
    assert table.events_since(mark) == []
    assert table.tracker.present()["seat1.cards"] == {uid(0), uid(1)}


def test_with_an_empty_schedule_the_requested_cycle_alone_brings_the_zones_back(make_table):
    """No scheduled cycles means no cycle end to synchronise on: the REQUESTED cycle must do."""
    table = make_table()
    deal(table)
    settled(table)
    ticket = table.link.send(SetSchedule(0, ()))
    table.run(0.3)
    assert ticket.ok
    cycles_before = table.reader.cycles_emitted
    table.field.place(uid(0), "muck")  # moved; nothing scans, so nobody notices yet
    table.run(0.5)
    assert table.reader.cycles_emitted == cycles_before
    table.emulator.stall(2.2)  # the link drops; the reader keeps its (empty) schedule
    table.run_until(lambda: table.link_kinds().count("up") == 2, timeout=5.0)
    table.run(0.3)
    assert table.reader.cycles_emitted == cycles_before + 1  # just the requested one
    table.assert_zones_correct()


def test_a_reader_with_fewer_antennas_than_configured_is_reported(make_table, caplog):
    table = make_table()
    table.reader.antennas = 9  # the configuration uses antennas 1 to 9; the emulated board has 6
    table.run_until(lambda: table.link.is_up, timeout=1.0)
    assert "the reader has 6 antennas but the configuration uses 9: antennas 7 to 9 stay empty" in caplog.text
