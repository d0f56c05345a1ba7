"""The hardware loop's wait between steps (rfid_table.service.run.HardwareWait), on the real parts: the firmware emulator on
a pseudo-terminal read through pyserial, the MQTT publisher on the test broker.

A reader reports each antenna at the end of its dwell, so most frames complete no cycle: the table is stepped when
a cycle is whole (or a command arrives), not once per frame."""

import json
import threading
import time

import pytest

from hal.firmware_reader import serial_reader
from rfid_table.service.contract import QOS, Topics
from rfid_table.service.run import HardwareWait
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from sim.field import TableField
from sim.firmware import FirmwareEmulator

ANTENNAS = 8
CYCLE_S = 0.2  # a frame every 25 ms: the frames of one cycle come one by one


@pytest.fixture
def field():
    field = TableField({f"zone{a}": ("main", a) for a in range(1, ANTENNAS + 1)})
    for a in range(1, ANTENNAS + 1):
        field.place(f"E0040150{a:08X}", f"zone{a}")
    return field


@pytest.fixture
def emulator(tmp_path, field):
    emulator = FirmwareEmulator(field, antenna_count=ANTENNAS, cycle_s=CYCLE_S, link_path=tmp_path / "reader-main",
                                serial="HW-000001")
    emulator.start()  # on the monotonic clock, in its own thread
    yield emulator
    emulator.close()


@pytest.fixture
def reader(emulator):
    reader = serial_reader("main", emulator.path, antennas=ANTENNAS)
    yield reader
    reader.close()


@pytest.fixture
def publisher(mqtt_settings):
    publisher = MqttPublisher(mqtt_settings, "hw-wait", epoch="test")
    assert publisher.start(wait_s=10)
    yield publisher
    publisher.stop()


def until_reading(reader, wait) -> None:
    """Until the link is up and its first whole cycle is handed on (the handshake's link events are behind)."""
    deadline = time.monotonic() + 10
    while True:
        assert time.monotonic() < deadline, "no cycle came through the reader link"
        wait(0.05)
        cycles = reader.poll(time.monotonic())
        reader.device_events()
        if cycles:
            return


def test_the_loop_is_woken_by_whole_cycles_not_by_each_frame(reader, publisher):
    wait = HardwareWait([reader], publisher, None, time.monotonic, {"main": CYCLE_S})
    until_reading(reader, wait)
    wakes = []  # per return of the wait: (cycles handed on, link events)
    while sum(cycles for cycles, _ in wakes) < 6:
        wait(5.0)  # far longer than a cycle: it returns for work, not for time
        wakes.append((len(reader.poll(time.monotonic())), len(reader.device_events())))
    assert all(cycles or events for cycles, events in wakes), wakes
    assert all(len(cycle.reads) == ANTENNAS for cycle in reader.poll(time.monotonic()) or [])


def test_an_antenna_visited_more_often_is_rescheduled_without_waking_the_loop_for_its_frames(emulator, publisher):
    """The seats still in at a showdown are visited more often (``visit_more``), but no card is due there: the
    reader's schedule changes, and the loop still wakes once a cycle, not at each of their reports (a table waiting
    on every report of a parked or watched antenna spends its CPU on nothing)."""
    reader = serial_reader("main", emulator.path, antennas=ANTENNAS, dwells=[25] * ANTENNAS)
    try:
        wait = HardwareWait([reader], publisher, None, time.monotonic, {"main": CYCLE_S})
        until_reading(reader, wait)
        schedules = emulator.stats.commands_executed["SET_SCHEDULE"]
        reader.watch_antennas(set(), visit_more=frozenset({2, 3}))
        assert not reader.watching
        wakes = []
        while sum(cycles for cycles, _ in wakes) < 4:
            wait(5.0)
            wakes.append((len(reader.poll(time.monotonic())), len(reader.device_events())))
            assert reader.take_early_reads() == []
        assert all(cycles or events for cycles, events in wakes), wakes
        assert emulator.stats.commands_executed["SET_SCHEDULE"] == schedules + 1
        reader.watch_antennas(set())  # nothing visited more often: the plain schedule again
        until_reading(reader, wait)
        assert emulator.stats.commands_executed["SET_SCHEDULE"] == schedules + 2
    finally:
        reader.close()


def test_a_command_ends_the_wait(publisher, mqtt_settings):
    wait = HardwareWait([], publisher, None, time.monotonic)
    floor = make_client(mqtt_settings, "hw-wait-floor")
    floor.connect(mqtt_settings.host, mqtt_settings.port)
    floor.loop_start()
    stop = threading.Event()
    topic = f"{Topics.for_table(mqtt_settings.topic_prefix, 'hw-wait').base}/commands/floor/anna"

    def send() -> None:  # until it is taken: the table's subscription may still be on its way
        while not stop.wait(0.2):
            floor.publish(topic, json.dumps({"id": "c1", "command": "new_hand"}), qos=QOS)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        started = time.monotonic()
        wait(60.0)
        assert time.monotonic() - started < 60, "the wait ran out instead of ending at the command"
        assert publisher.take_commands()[0].topic == topic
    finally:
        stop.set()
        sender.join(5)
        floor.disconnect()
        floor.loop_stop()


def test_a_cards_deciding_read_wakes_the_table_before_its_cycle_is_whole(field, reader, publisher):
    """A card one read short of settling on antenna 2 settles when antenna 2 reports, a quarter into the cycle,
    not when antenna 8 ends it: the reader is watched for that antenna and the wait ends at its frame."""
    from hal.zones import DebounceSettings, ZoneTracker

    zones = {("main", a): f"zone{a}" for a in range(1, ANTENNAS + 1)}
    tracker = ZoneTracker(zones, default=DebounceSettings(present_after_cycles=3))
    wait = HardwareWait([reader], publisher, None, time.monotonic, {"main": CYCLE_S})
    until_reading(reader, wait)
    card = "E004015000000ABC"
    field.place(card, "zone2")
    arrivals = []  # (how it came: "early" ahead of its cycle or "cycle", its event)
    deadline = time.monotonic() + 10
    cycle_ended = time.monotonic()
    while not arrivals:
        assert time.monotonic() < deadline, "the card never settled"
        wait(5.0)
        now = time.monotonic()
        for cycle in reader.poll(now):
            cycle_ended = now
            arrivals += [("cycle", e) for e in tracker.feed(cycle) if e.uid == card]
        reader.device_events()
        for antenna, reads, t, _whole in reader.take_early_reads():
            arrivals += [("early", e) for e in tracker.feed_antenna("main", antenna, reads, t) if e.uid == card]
        reader.watch_antennas(tracker.awaiting("main"))
    (how, event), = arrivals
    assert (how, event.kind, event.zone) == ("early", "arrived", "zone2")
    # taken in as antenna 2 reported (a quarter into the cycle), not with the frames gathered at three quarters
    assert event.t - cycle_ended < 0.5 * CYCLE_S
    # and the cycle it was read in, once whole, says nothing more of it
    emitted = reader.cycles_emitted
    while reader.cycles_emitted == emitted:
        wait(5.0)
        for cycle in reader.poll(time.monotonic()):
            assert [e for e in tracker.feed(cycle) if e.uid == card] == []


def test_a_reader_faster_than_its_configured_cycle_is_not_read_late(reader, publisher):
    """The frames are left to gather for most of a cycle: of the cycle the reader really runs, not of a longer
    one in the configuration, or each cycle would be taken in most of a configured cycle late and pile up."""
    wait = HardwareWait([reader], publisher, None, time.monotonic, {"main": 3 * CYCLE_S})  # configured 0.6 s
    until_reading(reader, wait)
    taken_at = []
    while len(taken_at) < 6:
        wait(5.0)
        if reader.poll(time.monotonic()):
            taken_at.append(time.monotonic())
        reader.device_events()
    gaps = [b - a for a, b in zip(taken_at[2:], taken_at[3:])]  # after the first cycles gave the real period
    assert max(gaps) < 2 * CYCLE_S, gaps
