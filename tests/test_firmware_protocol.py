"""The reader firmware's link behaviour (docs/protocol.md sections 3 to 6), in real MicroPython on the modelled
board, seen byte for byte from the host's side of the pty: identify, ACK and NAK, the duplicate rule, heartbeats,
STATUS counters, schedules, REQUEST_INVENTORY, RESET."""

import time

import pytest
import serial

from firmware_bridge.codec import FrameDecoder, encode_frame
from firmware_bridge.messages import (Ack, AckResult, Heartbeat, Identify, IdentifyReply, Inventory, InventoryFlag,
                                      Nak, NakReason, RequestInventory, Reset, ScheduleSlot, SetOutput,
                                      SetSchedule, Status, encode_message)
from micropython_runtime import requires_micropython
from sim.pn5180 import ModelledReader, firmware_config

pytestmark = requires_micropython


class Field:
    def __init__(self):
        self.tags: dict[int, list[str]] = {}

    def tags_on(self, reader, antenna):
        return self.tags.get(antenna, [])


class Host:
    """The host end of the pty, raw: frames out, messages in."""

    def __init__(self, path):
        self.port = serial.Serial(path, timeout=0)
        self.decoder = FrameDecoder()
        self.received = []
        self.backlog = []  # decoded, not yet looked at

    def send(self, message):
        self.port.write(encode_message(message))

    def wait_for(self, predicate, timeout=3.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.backlog.extend((time.monotonic(), m) for m in self.decoder.feed(self.port.read(4096)))
            while self.backlog:
                arrived, message = self.backlog.pop(0)
                self.received.append((arrived, message))
                if predicate(message):
                    return message
            time.sleep(0.002)
        raise AssertionError(f"nothing matched in {timeout} s; got {[m for _, m in self.received[-8:]]}")

    def answer(self, seq):
        return self.wait_for(lambda m: isinstance(m, (Ack, Nak)) and getattr(m, "acked_seq",
                                                                             getattr(m, "rejected_seq", None)) == seq)


@pytest.fixture
def reader(tmp_path):
    field = Field()
    device = ModelledReader(field, config=firmware_config([2, 2], [(0, 25), (1, 25), (2, 25), (3, 25)]),
                            link_path=tmp_path / "reader")
    host = Host(device.path)
    yield device, host, field
    host.port.close()
    device.close()


def test_identify_then_commands_are_acked_and_a_retransmission_is_answered_without_running_twice(reader):
    device, host, field = reader
    host.send(Identify(0, 1, 0))
    reply = host.wait_for(lambda m: isinstance(m, IdentifyReply), 5)
    assert (reply.protocol_major, reply.protocol_minor, reply.antenna_count) == (1, 2, 4)  # protocol 1.2
    assert reply.serial == "RT-E6614C311B4F7A25-2x2-" + reply.serial[-4:]

    assert host.answer(host.send(SetSchedule(1, (ScheduleSlot(9, 25),))) or 1).result == AckResult.INVALID_ARGUMENT
    assert host.answer(host.send(SetOutput(2, 1, 7, 1, 0)) or 2).result == AckResult.INVALID_ARGUMENT  # no LED 7
    assert host.answer(host.send(SetOutput(3, 1, 0, 3, 500)) or 3).result == AckResult.OK
    led = device.config["leds"][0]
    deadline = time.monotonic() + 2
    levels = set()
    while time.monotonic() < deadline and levels != {0, 1}:  # BLINK_FAST: the LED's pin goes on and off
        levels.add(device.board.pins.get(led, 0))
        time.sleep(0.01)
    assert levels == {0, 1}

    host.send(RequestInventory(4))
    host.send(RequestInventory(4))  # the same seq and type again: a retransmission, answered from memory
    first = host.answer(4)
    second = host.wait_for(lambda m: isinstance(m, Ack) and m.acked_seq == 4 and m.seq != first.seq)
    assert first.result == second.result == AckResult.OK  # run again, it would have been BUSY

    host.send(Reset(5))
    assert host.answer(5).result == AckResult.OK
    after = host.wait_for(lambda m: True)
    assert after.seq == 0  # rebooted: the reader's seq starts again (3.1) ...
    assert host.wait_for(lambda m: isinstance(m, Heartbeat)).uptime_ms < 1000  # ... and so does its uptime
    assert device.boots == 2


def test_bad_frames_are_counted_unknown_types_naked_and_heartbeats_come_every_half_second(reader):
    device, host, field = reader
    host.port.write(bytes.fromhex("03 85 01 03 F5 01 01 03 04 BC 00"))  # CRC error: no answer
    host.port.write(bytes.fromhex("03 85 01 09 F4 01 00"))  # bad COBS: no answer
    host.port.write(encode_frame(0x42, 9, b"\x01"))
    nak = host.wait_for(lambda m: isinstance(m, Nak))
    assert (nak.rejected_seq, nak.received_type, nak.reason) == (9, 0x42, NakReason.UNKNOWN_TYPE)
    host.port.write(encode_frame(0x02, 10, b"\x02\x00"))  # SET_SCHEDULE announcing 2 slots, carrying none
    assert host.wait_for(lambda m: isinstance(m, Nak)).reason == NakReason.MALFORMED_PAYLOAD
    beats = [host.wait_for(lambda m: isinstance(m, Heartbeat)).uptime_ms for _ in range(4)]
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    # Every 500 ms by the reader's own clock (the spec allows 50 ms either way; a loaded test machine, more).
    assert all(400 <= gap <= 700 for gap in gaps) and sum(gaps) / len(gaps) < 560, gaps
    status = host.wait_for(lambda m: isinstance(m, Status), 7)
    assert (status.rx_crc_errors, status.rx_framing_errors, status.rx_malformed) == (1, 1, 2)
    assert status.temperature_tenths_c is not None and 300 < status.temperature_tenths_c < 500


def test_every_scheduled_antenna_is_reported_once_per_cycle_with_cycle_end_and_requested_passes_cover_all(reader):
    device, host, field = reader
    field.tags[1] = ["E0040150C3000001", "E0040150C3000002"]
    host.send(SetSchedule(1, (ScheduleSlot(0, 25), ScheduleSlot(3, 25))))
    assert host.answer(1).result == AckResult.OK
    host.wait_for(lambda m: isinstance(m, Inventory) and InventoryFlag.CYCLE_END in m.flags, 3)
    frames = [host.wait_for(lambda m: isinstance(m, Inventory)) for _ in range(2)]  # a whole cycle of the schedule
    assert frames[0].cycle == frames[1].cycle
    assert sorted(f.antenna for f in frames) == [0, 3]
    assert [InventoryFlag.CYCLE_END in f.flags for f in frames] == [False, True]

    host.send(RequestInventory(2))
    host.send(RequestInventory(3))
    assert host.answer(2).result == AckResult.OK
    assert host.answer(3).result == AckResult.BUSY  # one requested pass at a time
    def requested_end(m):
        return isinstance(m, Inventory) and m.flags == InventoryFlag.REQUESTED | InventoryFlag.CYCLE_END

    if not any(requested_end(m) for _, m in host.received):  # it may have come while we waited for the ACKs
        host.wait_for(requested_end, 3)
    requested = [m for _, m in host.received if isinstance(m, Inventory) and InventoryFlag.REQUESTED in m.flags]
    assert sorted(f.antenna for f in requested) == [0, 1, 2, 3]
    assert {e.uid.hex().upper() for f in requested for e in f.entries} == {"E0040150C3000001", "E0040150C3000002"}
    assert len({f.cycle for f in requested}) == 1


def test_a_stack_too_big_for_one_dwell_is_read_whole_over_the_next_dwells(reader):
    device, host, field = reader
    field.tags[1] = [f"E0040150D1{i:06X}" for i in range(1, 41)]  # 40 chips on antenna 0
    host.send(SetSchedule(1, (ScheduleSlot(0, 10),)))  # 10 ms: not even one round of a stack that size
    assert host.answer(1).result == AckResult.OK
    seen: set[str] = set()
    largest = [0]

    def read(m):
        if isinstance(m, Inventory) and m.antenna == 0:
            seen.update(e.uid.hex().upper() for e in m.entries)
            largest[0] = max(largest[0], len(m.entries))
        return len(seen) == 40

    host.wait_for(read, 15)
    assert largest[0] < 40  # no single dwell read it all: the collisions were resolved across dwells


def test_a_pin_map_with_a_missing_key_stops_the_firmware_with_the_key_named(tmp_path):
    config = firmware_config([2])
    del config["frontends"][0]["busy"]
    device = ModelledReader(Field(), config=config, link_path=tmp_path / "reader")
    try:
        deadline = time.monotonic() + 10
        while "frontends[0].busy is missing" not in device.firmware_log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "config.json: frontends[0].busy is missing" in device.firmware_log()
    finally:
        device.close()


def test_a_stack_larger_than_a_dwell_resolves_is_reported_unresolved_until_its_last_part(tmp_path):
    """Protocol 1.1: a dwell that leaves collisions for the antenna's next marks its INVENTORY UNRESOLVED; the scan
    that reads the rest does not. Forty chips on one antenna with a 20 ms dwell (a crowded 16-slot round alone takes
    about that long) are read in turns, and the scans up to the one that ends them read every chip."""
    field = Field()
    chips = [f"E0040150C2{n:06X}" for n in range(40)]
    field.tags[1] = chips
    device = ModelledReader(field, config=firmware_config([1], [(0, 20)]), link_path=tmp_path / "reader")
    host = Host(device.path)
    try:
        host.send(Identify(0, 1, 1))
        host.wait_for(lambda m: isinstance(m, IdentifyReply), 5)
        scans: list[tuple[bool, set[str]]] = []  # (unresolved, the chips read), scan by scan from a resolved one

        def scan(message) -> bool:
            if isinstance(message, Inventory):
                unresolved = bool(message.flags & InventoryFlag.UNRESOLVED)
                if scans or not unresolved:  # the first reading counted starts after a resolved scan
                    scans.append((unresolved, {entry.uid.hex().upper() for entry in message.entries}))
            return len(scans) > 2 and not scans[-1][0]

        host.wait_for(scan, 30)
    finally:
        host.port.close()
        device.close()
    reading = scans[1:]  # the scans after the first resolved one, the last resolved again
    assert all(unresolved for unresolved, _ in reading[:-1]) and not reading[-1][0]
    assert set().union(*(read for _, read in reading)) == set(chips)


def test_an_antenna_a_new_schedule_adds_is_scanned_in_the_pass_under_way(reader):
    """Protocol 1.1 (6.2): told to scan antenna 1 twice a pass while a pass is under way, the reader scans it once
    more in that pass already, not only from the next. (With 1.0 the pass under way kept the old schedule.) Front
    end 0 has scanned antennas 0 and 1 when it is told; front end 1 is still reading a stack on antenna 3."""
    device, host, field = reader
    field.tags[3] = [f"E0040150C2{n:06X}" for n in range(30)]
    host.send(Identify(0, 1, 1))
    host.wait_for(lambda m: isinstance(m, IdentifyReply), 5)
    plain = (ScheduleSlot(0, 25), ScheduleSlot(1, 25), ScheduleSlot(2, 25), ScheduleSlot(3, 400))
    told = (ScheduleSlot(0, 25), ScheduleSlot(1, 25), ScheduleSlot(1, 25), ScheduleSlot(2, 25), ScheduleSlot(3, 400))
    assert host.answer(host.send(SetSchedule(1, plain)) or 1).result == AckResult.OK
    seq = 2
    for _attempt in range(10):
        cycle = host.wait_for(lambda m: isinstance(m, Inventory) and m.antenna == 1, 10).cycle
        host.send(SetSchedule(seq, told))
        host.wait_for(lambda m: isinstance(m, Inventory) and m.cycle == cycle and m.flags & InventoryFlag.CYCLE_END,
                      10)
        received = [m for _, m in host.received]
        acked = next((i for i, m in enumerate(received) if isinstance(m, Ack) and m.acked_seq == seq), None)
        if acked is not None and acked < len(received) - 1:  # taken while the pass was under way
            assert [m.antenna for m in received if isinstance(m, Inventory) and m.cycle == cycle].count(1) == 2
            return
        host.wait_for(lambda m: isinstance(m, Ack) and m.acked_seq == seq, 5)
        assert host.answer(host.send(SetSchedule(seq + 1, plain)) or seq + 1).result == AckResult.OK
        seq += 2
    raise AssertionError("the reader never took the schedule while a pass was under way")
