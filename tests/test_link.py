"""The host side of a reader connection (firmware_bridge.link) and its transports.

Most tests run the real stack end to end: ``ReaderLink`` with the real pyserial ``SerialTransport`` on
the pseudo-terminal of the firmware emulator (sim.firmware), on a virtual clock (``Lockstep``). A fake
transport is used only where exact timing is the point (retransmission intervals, the 2 s supervision,
the backoff table). The USB transport is tested with pyusb mocked out: there is no USB device here.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import subprocess
import sys
import textwrap

import pytest

from firmware_bridge.codec import FrameDecoder
from firmware_bridge.link import LinkState, ReaderLink, TicketState
from firmware_bridge.messages import (
    Ack,
    AckResult,
    Heartbeat,
    IdentifyReply,
    MessageType,
    Nak,
    NakReason,
    OutputKind,
    OutputPattern,
    Reset,
    SetOutput,
    encode_message,
)
from firmware_bridge.transports import SerialTransport, TransportError, UsbTransport
from sim.field import TableField
from sim.firmware import Fault, FirmwareEmulator, Lockstep

UID = "E004015012345678"


# --------------------------------------------------------------------------
# The real stack over a pty
# --------------------------------------------------------------------------


@pytest.fixture
def table():
    table = TableField({f"zone{antenna}": ("main", antenna) for antenna in range(1, 5)})
    table.place(UID, "zone2")
    return table


@pytest.fixture
def emulator(table, tmp_path):
    emulator = FirmwareEmulator(table, antenna_count=4, link_path=tmp_path / "reader-main", serial="RT-000042")
    yield emulator
    emulator.close()


@pytest.fixture
def link(emulator):
    link = ReaderLink(lambda: SerialTransport(emulator.path), name="main")
    yield link
    link.close()


@pytest.fixture
def bench(emulator, link):
    return Lockstep(emulator, link)


def kinds(events) -> list[str]:
    return [event.kind for event in events]


def commands_received(emulator) -> list[str]:
    return [command.MSG_TYPE.name for _, command in emulator.received]


def bring_up(bench) -> list:
    assert bench.run_until(lambda: bench.link.is_up, timeout=1.0)
    return bench.outputs


def test_handshake_over_a_real_pty(bench, link, emulator):
    events = bring_up(bench)
    assert kinds(events)[0] == "up"
    identity = events[0].message
    assert isinstance(identity, IdentifyReply)
    assert (identity.serial, identity.antenna_count, identity.protocol_major) == ("RT-000042", 4, 1)
    assert link.identity == identity
    # After the handshake the link asks for everything at once.
    bench.run(0.3)
    assert commands_received(emulator) == ["IDENTIFY", "REQUEST_INVENTORY"]
    inventories = [event.message for event in bench.outputs if event.kind == "inventory"]
    assert any(entry.uid.hex().upper() == UID for inventory in inventories for entry in inventory.entries)
    stats = link.stats
    assert stats.state == "up" and stats.connects == 1 and stats.frames_ok > 10
    assert stats.frames_rejected == 0 and stats.frames_lost == 0 and stats.retransmits == 0
    assert "/dev/pts/" in stats.transport


def test_serial_transport_resolves_and_logs_the_device_behind_a_stable_path(emulator, caplog):
    transport = SerialTransport(emulator.path)
    with caplog.at_level(logging.INFO, logger="firmware_bridge.transports"):
        transport.open()
    try:
        assert transport.device == emulator.slave_path != emulator.path
        assert f"{emulator.path} (device {emulator.slave_path})" in caplog.text
        assert transport.fileno() is not None
    finally:
        transport.close()
        transport.close()  # closing twice is harmless
    with pytest.raises(TransportError, match="not open"):
        transport.read()


def test_a_short_read_from_a_real_pty_says_the_port_is_drained(tmp_path):
    """The link reads again only when the last read may have left bytes behind: after each frame a reader sends,
    reading once more would only return nothing, a read and a select() more per frame."""
    import os
    import pty
    import select
    import tty

    master, slave = pty.openpty()
    tty.setraw(slave)
    path = tmp_path / "reader"
    path.symlink_to(os.ttyname(slave))
    transport = SerialTransport(str(path))
    transport.open()
    try:
        os.write(master, b"x" * 100)
        select.select([transport.fileno()], [], [], 5)
        assert transport.read() == b"x" * 100 and transport.drained
        os.write(master, b"y" * 3000)
        select.select([transport.fileno()], [], [], 5)
        data = transport.read(1000)
        assert data == b"y" * 1000 and not transport.drained  # more may wait: read again
    finally:
        transport.close()
        os.close(master)
        os.close(slave)


def test_the_link_stops_reading_once_its_transport_is_drained(fake_link, scripted):
    reads = []

    class Counted(FakeTransport):
        def read(self, max_bytes: int = 4096) -> bytes:
            data = super().read(min(max_bytes, 10))  # ten bytes at a time: more than one read per poll
            reads.append(len(data))
            self.drained = not self.reader.inbound
            return data

    link = ReaderLink(lambda: Counted(scripted), name="fake")
    link.poll(0.0)  # opens, sends IDENTIFY
    scripted.inbound[:] = b"\x00" * 25  # line noise in place of an answer: read, and never a frame
    reads.clear()
    link.poll(0.01)
    assert reads == [10, 10, 5]  # not a fourth read that could only return nothing


def test_serial_transport_reports_a_missing_device_as_transport_error(tmp_path):
    with pytest.raises(TransportError, match="does not exist"):
        SerialTransport(str(tmp_path / "no-such-reader")).open()


def test_incompatible_major_is_refused_clearly_and_retried_at_the_backoff(emulator, link):
    emulator.protocol_version = (2, 0)
    bench = Lockstep(emulator, link, tick_s=0.01)
    bench.run(15.5)
    refused = [event for event in bench.outputs if event.kind == "incompatible"]
    waits = [later.t - earlier.t for earlier, later in zip(refused, refused[1:])]
    assert waits == pytest.approx([1, 2, 4, 8], abs=0.03)
    assert refused[0].reason == (
        "reader speaks protocol 2.0, this host speaks 1.2; the major versions must match, "
        "so update the host software or the reader firmware"
    )
    assert refused[0].message.protocol_major == 2
    assert link.state is LinkState.DISCONNECTED and link.transport is None
    assert "up" not in kinds(bench.outputs)
    # The host sent nothing but IDENTIFY to the incompatible reader.
    assert set(commands_received(emulator)) == {"IDENTIFY"}
    assert link.stats.last_error == refused[0].reason

    emulator.protocol_version = (1, 0)  # reflashed: picked up at the next attempt, 16 s later
    assert bench.run_until(lambda: link.is_up, timeout=16.5)
    assert bench.now - refused[-1].t == pytest.approx(16, abs=0.03)


def test_a_lost_frame_is_detected_by_the_sequence_gap(bench, link, emulator):
    bring_up(bench)
    bench.run(0.2)
    emulator.inject(Fault.DROP, MessageType.HEARTBEAT)
    events = bench.run(1.0)
    lost = [event for event in events if event.kind == "frames_lost"]
    assert [event.count for event in lost] == [1]
    assert link.stats.frames_lost == 1 and link.stats.frames_rejected == 0
    assert emulator.stats.faults_applied == {"drop": 1}


def test_a_command_lost_on_the_way_is_retransmitted_and_answered(bench, link, emulator):
    bring_up(bench)
    bench.run(0.2)
    emulator.inject(Fault.LOSE_COMMAND, MessageType.SET_OUTPUT)
    sent_at = bench.now
    ticket = link.send(SetOutput(0, OutputKind.LED, 2, OutputPattern.BLINK_FAST, 1500))
    assert bench.run_until(lambda: ticket.done, timeout=1.0)
    assert ticket.ok and ticket.attempts == 2
    assert isinstance(ticket.reply, Ack) and ticket.reply.acked_seq == ticket.seq
    assert 0.2 <= ticket.done_at - sent_at < 0.3  # one retransmission interval
    assert link.stats.retransmits == 1
    assert emulator.stats.commands_lost == 1
    assert emulator.stats.commands_executed["SET_OUTPUT"] == 1
    assert emulator.outputs == {(OutputKind.LED, 2): (OutputPattern.BLINK_FAST, 1500)}


def test_a_lost_answer_makes_a_duplicate_that_is_answered_but_not_run_again(bench, link, emulator):
    bring_up(bench)
    bench.run(0.2)
    emulator.inject(Fault.DROP, MessageType.ACK)
    ticket = link.send(SetOutput(0, OutputKind.BUZZER, 0, OutputPattern.PULSE, 150))
    assert bench.run_until(lambda: ticket.done, timeout=1.0)
    assert ticket.ok and ticket.attempts == 2
    # The reader saw the command twice, ran it once and answered the copy from its memory.
    assert commands_received(emulator).count("SET_OUTPUT") == 2
    assert emulator.stats.commands_executed["SET_OUTPUT"] == 1
    assert emulator.stats.duplicates_answered == 1
    # The dropped ACK used up a reader seq, so the host also counted it as lost.
    assert link.stats.frames_lost == 1 and link.stats.retransmits == 1


def test_a_rejected_argument_is_a_final_answer(bench, link, emulator):
    bring_up(bench)
    ticket = link.send(SetOutput(0, OutputKind.LED, 200, OutputPattern.ON, 0))
    assert bench.run_until(lambda: ticket.done, timeout=1.0)
    assert ticket.state is TicketState.ACKED and not ticket.ok
    assert ticket.reply.result == AckResult.INVALID_ARGUMENT
    assert ticket.attempts == 1 and link.stats.retransmits == 0


def test_a_reader_reboot_is_detected_from_its_uptime_and_the_handshake_repeated(bench, link, emulator):
    bring_up(bench)
    bench.run(1.2)
    ticket = link.send(Reset(0))
    events = bench.run(1.5)
    assert ticket.ok and ticket.attempts == 1
    assert emulator.stats.boots == 2
    assert kinds(events).count("reader_reset") == 1
    assert kinds(events).index("reader_reset") < kinds(events).index("up")
    assert link.is_up and link.stats.reader_resets == 1
    # A fresh reader: identify again and ask for the whole inventory again.
    assert commands_received(emulator)[-2:] == ["IDENTIFY", "REQUEST_INVENTORY"]
    assert link.stats.frames_lost == 0


def test_a_command_sent_while_the_link_is_not_up_fails_at_once(link):
    ticket = link.send(SetOutput(0, OutputKind.LED, 0, OutputPattern.ON, 0))
    assert ticket.state is TicketState.FAILED and "disconnected" in ticket.error


# --------------------------------------------------------------------------
# Exact timing, with a scripted reader behind a fake transport
# --------------------------------------------------------------------------


class ScriptedReader:
    """The far end of ``FakeTransport``: answers what it is told to, records what the host wrote when."""

    def __init__(self):
        self.now = 0.0
        self.writes: list[tuple[float, object]] = []  # (time, decoded command)
        self.inbound = bytearray()
        self.seq = 0
        self.open_attempts: list[float] = []
        self.openable = True
        self.answer = {MessageType.IDENTIFY: "reply", MessageType.REQUEST_INVENTORY: "ack"}
        self.uptime_ms = 0
        self._decoder = FrameDecoder()

    def send(self, message) -> None:
        self.inbound += encode_message(dataclasses.replace(message, seq=self.seq))
        self.seq += 1

    def heartbeat(self) -> None:
        self.uptime_ms += 500
        self.send(Heartbeat(0, self.uptime_ms))

    def received(self, data: bytes) -> None:
        for command in self._decoder.feed(data):
            self.writes.append((self.now, command))
            answer = self.answer.get(command.MSG_TYPE)
            if answer == "reply":
                self.send(IdentifyReply(0, 1, 0, 1, 0, 0, "FAKE", 4, 1, 0x1F))
            elif answer == "ack":
                self.send(Ack(0, command.seq, AckResult.OK))
            elif answer == "nak":
                self.send(Nak(0, command.seq, command.MSG_TYPE, NakReason.MALFORMED_PAYLOAD))

    def writes_of(self, message_type) -> list[float]:
        return [t for t, command in self.writes if command.MSG_TYPE == message_type]


class FakeTransport:
    drained = False

    def __init__(self, reader: ScriptedReader):
        self.reader = reader
        self.is_open = False

    def open(self) -> None:
        self.reader.open_attempts.append(self.reader.now)
        if not self.reader.openable:
            raise TransportError("no such device")
        self.is_open = True

    def close(self) -> None:
        self.is_open = False

    def read(self, max_bytes: int = 4096) -> bytes:
        data = bytes(self.reader.inbound[:max_bytes])
        del self.reader.inbound[:max_bytes]
        return data

    def write(self, data: bytes) -> None:
        self.reader.received(data)

    def fileno(self):
        return None

    def describe(self) -> str:
        return "fake"


@pytest.fixture
def scripted():
    return ScriptedReader()


@pytest.fixture
def fake_link(scripted):
    return ReaderLink(lambda: FakeTransport(scripted), name="fake")


def run_fake(link, reader, until: float, step: float = 0.01, heartbeats: bool = True) -> list:
    events = []
    next_heartbeat = reader.now + 0.5
    while reader.now < until - 1e-9:
        reader.now = round(reader.now + step, 6)
        if heartbeats and reader.now >= next_heartbeat:
            reader.heartbeat()
            next_heartbeat += 0.5
        events += link.poll(reader.now)
    return events


def test_a_command_is_retransmitted_every_200ms_three_times_then_fails(fake_link, scripted):
    run_fake(fake_link, scripted, 0.1)
    assert fake_link.is_up
    scripted.answer[MessageType.SET_OUTPUT] = None  # never answered
    ticket = fake_link.send(SetOutput(0, OutputKind.LED, 1, OutputPattern.ON, 0))
    follow_up = fake_link.send(SetOutput(0, OutputKind.LED, 2, OutputPattern.ON, 0))
    events = run_fake(fake_link, scripted, 1.2)
    # The retransmit timer starts at the first poll after send(), t = 0.11.
    first = [t for t, c in scripted.writes if c.MSG_TYPE == MessageType.SET_OUTPUT and c.index == 1]
    assert first == [0.1, 0.31, 0.51, 0.71]
    assert ticket.state is TicketState.FAILED and ticket.attempts == 4
    assert ticket.done_at == pytest.approx(0.91) and "after 4 attempt(s)" in ticket.error
    assert {c.seq for t, c in scripted.writes if c.MSG_TYPE == MessageType.SET_OUTPUT and c.index == 1} == {ticket.seq}
    assert [e.kind for e in events if e.kind == "command_failed"] == ["command_failed"]
    # Stop and wait: the next command went out only when the first had failed.
    second = [t for t, c in scripted.writes if c.MSG_TYPE == MessageType.SET_OUTPUT and c.index == 2]
    assert second == [0.91, 1.12] and follow_up.seq == ticket.seq + 1
    assert fake_link.stats.retransmits == 4 and fake_link.is_up


def test_queued_commands_go_out_one_at_a_time(fake_link, scripted):
    run_fake(fake_link, scripted, 0.1)
    scripted.answer[MessageType.SET_OUTPUT] = "ack"
    tickets = [fake_link.send(SetOutput(0, OutputKind.LED, i, OutputPattern.ON, 0)) for i in range(3)]
    run_fake(fake_link, scripted, 0.2)
    assert all(ticket.ok for ticket in tickets)
    order = [c.index for _, c in scripted.writes if c.MSG_TYPE == MessageType.SET_OUTPUT]
    assert order == [0, 1, 2] and fake_link.stats.retransmits == 0


def test_nak_is_final_and_reset_is_never_retransmitted(fake_link, scripted):
    run_fake(fake_link, scripted, 0.1)
    scripted.answer[MessageType.SET_OUTPUT] = "nak"
    nakked = fake_link.send(SetOutput(0, OutputKind.LED, 1, OutputPattern.ON, 0))
    scripted.answer[MessageType.RESET] = None
    reset = fake_link.send(Reset(0))
    run_fake(fake_link, scripted, 1.5)
    assert nakked.state is TicketState.NAKKED and nakked.attempts == 1
    assert reset.state is TicketState.FAILED and len(scripted.writes_of(MessageType.RESET)) == 1


def test_the_link_goes_down_after_two_seconds_without_a_valid_frame(fake_link, scripted):
    run_fake(fake_link, scripted, 3.0)
    last_frame = 3.0  # heartbeats every 0.5 s until now
    events = run_fake(fake_link, scripted, 6.0, heartbeats=False)
    down = [event for event in events if event.kind == "down"]
    assert len(down) == 1
    assert down[0].t == pytest.approx(last_frame + 2.0)
    assert down[0].reason == "no valid frame for 2.0 s"
    # It reopens at once; this scripted reader answers, so the link is straight back up.
    assert scripted.open_attempts[-1] == pytest.approx(last_frame + 2.01)
    assert "up" in kinds(events) and fake_link.stats.reconnects == 1


def test_line_noise_does_not_count_as_a_sign_of_life(fake_link, scripted):
    run_fake(fake_link, scripted, 1.0)
    events = []
    for _ in range(250):  # 2.5 s of bytes, but not one valid frame
        scripted.inbound += b"\x07\x85\x34\x56\x78\x9a\xbc\x00"  # a HEARTBEAT-sized frame, bad CRC
        events += run_fake(fake_link, scripted, scripted.now + 0.01, heartbeats=False)
    down = [event for event in events if event.kind == "down"]
    assert len(down) == 1 and down[0].t == pytest.approx(3.0)
    assert fake_link.stats.crc_errors == 250


def test_a_write_error_inside_send_takes_the_link_down_at_the_next_poll(fake_link, scripted, monkeypatch):
    run_fake(fake_link, scripted, 0.1)

    def unplugged(data):
        raise TransportError("write failed: [Errno 5] Input/output error")

    monkeypatch.setattr(fake_link.transport, "write", unplugged)
    ticket = fake_link.send(SetOutput(0, OutputKind.LED, 1, OutputPattern.ON, 0))  # must not raise
    assert not ticket.done
    events = fake_link.poll(0.11)
    assert kinds(events)[:2] == ["down", "command_failed"] and "Input/output error" in events[0].reason
    assert ticket.state is TicketState.FAILED


def test_failed_connection_attempts_back_off_1_2_4_8_16_30_seconds(fake_link, scripted):
    scripted.openable = False
    events = run_fake(fake_link, scripted, 125.0, step=0.5, heartbeats=False)
    assert scripted.open_attempts == [0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 61.5, 91.5, 121.5]
    assert kinds(events) == ["connect_failed"] * 9
    assert "no such device" in events[0].reason
    # A success resets the backoff.
    scripted.openable = True
    run_fake(fake_link, scripted, 155.0, step=0.5)
    assert fake_link.is_up
    scripted.openable = False
    run_fake(fake_link, scripted, 161.0, step=0.5, heartbeats=False)  # last heartbeat 155.0: down at 157.0
    assert scripted.open_attempts[-3:] == [157.5, 158.5, 160.5]


def test_a_handshake_without_an_answer_fails_after_four_identifies(fake_link, scripted):
    scripted.answer[MessageType.IDENTIFY] = None
    events = run_fake(fake_link, scripted, 1.5, heartbeats=False)
    assert len(scripted.writes_of(MessageType.IDENTIFY)) == 4
    assert kinds(events) == ["connect_failed"]
    assert "no answer to IDENTIFY" in events[0].reason


# --------------------------------------------------------------------------
# USB bulk transport, with pyusb mocked (no USB device on a test machine)
# --------------------------------------------------------------------------


@pytest.fixture
def usb_device(mocker):
    import usb.core

    device = mocker.MagicMock(name="device")
    device.serial_number = "RT-000123"
    device.is_kernel_driver_active.return_value = True
    device.get_active_configuration.return_value = mocker.MagicMock(name="configuration")
    find = mocker.patch("usb.core.find", return_value=device)
    claim = mocker.patch("usb.util.claim_interface")
    release = mocker.patch("usb.util.release_interface")
    dispose = mocker.patch("usb.util.dispose_resources")
    return mocker.Mock(device=device, find=find, claim=claim, release=release, dispose=dispose, core=usb.core)


def test_usb_open_detaches_the_kernel_driver_and_claims_without_resetting_the_configuration(usb_device):
    transport = UsbTransport(0x1209, 0x7A11, interface=1)
    transport.open()
    device = usb_device.device
    usb_device.find.assert_called_once_with(idVendor=0x1209, idProduct=0x7A11)
    device.is_kernel_driver_active.assert_called_once_with(1)
    device.detach_kernel_driver.assert_called_once_with(1)
    device.set_configuration.assert_not_called()  # already configured: setting it again would reset it
    usb_device.claim.assert_called_once_with(device, 1)
    transport.close()
    usb_device.release.assert_called_once_with(device, 1)
    usb_device.dispose.assert_called_once_with(device)


def test_usb_open_configures_an_unconfigured_device_and_leaves_an_unbound_driver_alone(usb_device):
    device = usb_device.device
    device.is_kernel_driver_active.return_value = False
    device.get_active_configuration.side_effect = usb_device.core.USBError("Configuration not set")
    UsbTransport(0x1209, 0x7A11).open()
    device.detach_kernel_driver.assert_not_called()
    device.set_configuration.assert_called_once_with()


def test_usb_read_timeout_is_no_data_and_other_errors_are_transport_errors(usb_device):
    device, core = usb_device.device, usb_device.core
    transport = UsbTransport(0x1209, 0x7A11, endpoint_in=0x82, endpoint_out=0x02)
    transport.open()
    device.read.return_value = bytearray(b"\x03\x85\x01")
    assert transport.read(512) == b"\x03\x85\x01"
    device.read.assert_called_with(0x82, 512, timeout=5)
    device.read.side_effect = core.USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)
    assert transport.read() == b""
    device.read.side_effect = core.USBError("No such device (it may have been disconnected)", -4, errno.ENODEV)
    with pytest.raises(TransportError, match="No such device"):
        transport.read()
    device.write.return_value = 3
    transport.write(b"abc")
    device.write.assert_called_with(0x02, b"abc", timeout=500)
    device.write.side_effect = core.USBError("Pipe error", -9, errno.EPIPE)
    with pytest.raises(TransportError, match="Pipe error"):
        transport.write(b"abc")
    # Closing an unplugged device must not raise either.
    usb_device.release.side_effect = core.USBError("No such device", -4, errno.ENODEV)
    transport.close()


def test_usb_lookup_by_serial_number(usb_device, mocker):
    other = mocker.MagicMock(name="other reader")
    other.serial_number = "RT-000999"
    unreadable = mocker.MagicMock(name="no permission")
    type(unreadable).serial_number = mocker.PropertyMock(side_effect=ValueError("The device has no langid"))
    usb_device.find.return_value = iter([other, unreadable, usb_device.device])
    transport = UsbTransport(0x1209, 0x7A11, serial_number="RT-000123")
    transport.open()
    usb_device.find.assert_called_once_with(find_all=True, idVendor=0x1209, idProduct=0x7A11)
    usb_device.claim.assert_called_once_with(usb_device.device, 0)
    other.detach_kernel_driver.assert_not_called()

    usb_device.find.return_value = iter([other])
    with pytest.raises(TransportError, match="1209:7a11 serial RT-000123 not found"):
        UsbTransport(0x1209, 0x7A11, serial_number="RT-000123").open()


def test_usb_errors_while_opening_become_transport_errors_and_release_the_device(usb_device):
    usb_device.claim.side_effect = usb_device.core.USBError("Resource busy", -6, errno.EBUSY)
    transport = UsbTransport(0x1209, 0x7A11)
    with pytest.raises(TransportError, match="Resource busy"):
        transport.open()
    usb_device.dispose.assert_called_once_with(usb_device.device)
    usb_device.find.return_value = None
    with pytest.raises(TransportError, match="not found"):
        transport.open()


def test_a_usb_unplug_takes_the_link_down_and_it_reconnects(usb_device):
    """pyusb has no hotplug: the USBError on a read is the unplug; the device is looked up again."""
    device, core = usb_device.device, usb_device.core
    reply = encode_message(IdentifyReply(0, 1, 0, 1, 0, 0, "USB1", 4, 1, 0x1F))
    inbound = [reply]

    def read(endpoint, size, timeout):
        if inbound:
            return bytearray(inbound.pop(0))
        raise core.USBTimeoutError("timeout", -7, errno.ETIMEDOUT)

    device.read.side_effect = read
    device.write.side_effect = lambda endpoint, data, timeout: len(data)
    link = ReaderLink(lambda: UsbTransport(0x1209, 0x7A11), name="usb")
    link.poll(0.0)
    link.poll(0.01)
    assert link.is_up
    device.read.side_effect = core.USBError("No such device", -4, errno.ENODEV)
    usb_device.find.return_value = None  # gone from the bus
    events = link.poll(0.02)
    assert kinds(events) == ["down", "command_failed"]  # the REQUEST_INVENTORY in flight fails too
    assert "No such device" in events[0].reason
    assert kinds(link.poll(0.03)) == ["connect_failed"]  # reopened at once: not on the bus
    # Back on the bus: found again after the 1 s backoff.
    usb_device.find.return_value = device
    inbound.append(encode_message(IdentifyReply(0, 1, 0, 1, 0, 0, "USB1", 4, 1, 0x1F)))
    device.read.side_effect = read
    assert link.poll(0.5) == [] and not link.is_up
    link.poll(1.03)
    assert kinds(link.poll(1.04)) == ["up"]
    assert link.stats.reconnects == 1


def test_everything_imports_without_pyserial_and_pyusb():
    script = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("serial", "usb"):
                    raise ImportError(f"blocked {name}")
        sys.meta_path.insert(0, Block())
        import firmware_bridge.transports, firmware_bridge.link, hal.firmware_reader, sim.firmware
        from firmware_bridge.transports import SerialTransport, UsbTransport, TransportError
        for transport in (SerialTransport("/dev/null"), UsbTransport(1, 2)):
            try:
                transport.open()
            except TransportError as exc:
                print(exc)
        assert "usb" not in sys.modules and "serial" not in sys.modules
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "pyserial is not installed: pip install pyserial",
        "pyusb is not installed: pip install pyusb",
    ]
