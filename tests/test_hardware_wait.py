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
def emulator(tmp_path):
    field = TableField({f"zone{a}": ("main", a) for a in range(1, ANTENNAS + 1)})
    for a in range(1, ANTENNAS + 1):
        field.place(f"E0040150{a:08X}", f"zone{a}")
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
