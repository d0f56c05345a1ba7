"""An emulator of the reader firmware, speaking the wire protocol (docs/protocol.md) on a pseudo-terminal.

The host opens the emulator's stable path (a symlink, like a udev ``/dev/serial/by-id/...`` link) with the
real ``SerialTransport``, so the whole host stack runs exactly as against the microcontroller. The
emulator looks at a simulated table (anything with ``tags_on(reader, antenna)``, e.g. ``sim.field``) and
reports every antenna once per cycle, optionally through a ``sim.noise.NoiseModel``.

It can be driven two ways:

* ``step(now)`` from the test's own loop, on a virtual clock (deterministic; see ``Lockstep``), or
* ``start()`` / ``stop()``: a background thread stepping it on the monotonic clock.

Faults on demand: ``inject`` (bit flip, drop, duplicate, truncation, garbage on frames it sends; a lost
command on the way in), ``stall``, ``unplug`` / ``replug``, ``antenna_fault`` and a ``protocol_version``
other than the host's.

Antenna numbers: the wire numbers antennas from 0, the table configuration from 1 (as printed on the
board), so wire antenna n looks at ``tags_on(reader, n + antenna_base)`` with ``antenna_base`` 1.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import random
import select
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from firmware_bridge.codec import MAX_ENCODED_SIZE, MAX_PAYLOAD_SIZE, CrcError, FrameError, decode_frame
from firmware_bridge.messages import (
    PROTOCOL_MAJOR,
    Ack,
    AckResult,
    AntennaFault,
    Capability,
    FaultCode,
    Heartbeat,
    Identify,
    IdentifyReply,
    IncompatibleIdentifyReply,
    Inventory,
    InventoryFlag,
    MalformedPayloadError,
    Message,
    MessageType,
    Nak,
    NakReason,
    OutputKind,
    RequestInventory,
    Reset,
    ScheduleSlot,
    SetOutput,
    SetSchedule,
    Status,
    TagEntry,
    TagTechnology,
    UnknownMessageTypeError,
    VALID_UID_LENGTHS,
    decode_payload,
    encode_message,
)
from sim.noise import NoiseModel, Read
from sim.pty_link import read_pty, write_pty
from sim.wire_emulator import WireEmulator

log = logging.getLogger(__name__)

TX_QUEUE_BYTES = 8192  # the firmware's transmit buffer; frames that do not fit are dropped (and counted)
DEFAULT_DWELL_MS = 25


class TagField(Protocol):
    def tags_on(self, reader: str, antenna: int) -> list[str]: ...


class Fault(str, enum.Enum):
    """Faults ``FirmwareEmulator.inject`` can apply. All but LOSE_COMMAND hit a frame the emulator sends."""

    BIT_FLIP = "bit_flip"  # one bit of the frame flipped on the wire
    DROP = "drop"  # the frame never leaves (its seq is used up: the host sees a gap)
    DUPLICATE = "duplicate"  # the frame is sent twice
    TRUNCATE = "truncate"  # only the first half of the frame, then the delimiter
    GARBAGE = "garbage"  # random bytes and a delimiter just before the frame
    LOSE_COMMAND = "lose_command"  # a command from the host is lost on its way in


@dataclass
class _PendingFault:
    fault: Fault
    message_type: MessageType | None  # only frames of this type; None: the next frame of any type
    remaining: int


@dataclass
class EmulatorStats:
    frames_sent: int = 0  # frames created, each with its own seq (dropped ones included)
    bytes_sent: int = 0  # bytes written to the pty
    tx_frames_dropped: int = 0  # transmit buffer full
    cycles: int = 0  # inventory passes run
    boots: int = 0
    commands_lost: int = 0  # by LOSE_COMMAND
    duplicates_answered: int = 0  # retransmitted commands answered from memory, not executed again
    rx_frames_ok: int = 0
    rx_crc_errors: int = 0
    rx_framing_errors: int = 0
    rx_malformed: int = 0
    faults_applied: Counter = field(default_factory=Counter)  # Fault value -> times applied
    commands_executed: Counter = field(default_factory=Counter)  # message type name -> times executed


@dataclass
class _Pass:
    """One inventory cycle in progress."""

    cycle: int
    requested: bool
    due: list[tuple[int, float]]  # antennas still to report, with when (end of their dwell)


@dataclass
class _AntennaFaultState:
    code: int
    detail: int
    next_report_at: float | None  # None: report at the next step


class FirmwareEmulator(WireEmulator):
    def __init__(
        self,
        table: TagField,
        *,
        reader: str = "main",
        antenna_count: int = 12,
        cycle_s: float = 0.05,
        noise: NoiseModel | None = None,
        link_path: str | Path | None = None,
        serial: str = "EMU-0001",
        firmware_version: tuple[int, int, int] = (1, 0, 0),
        protocol_version: tuple[int, int] = (PROTOCOL_MAJOR, 0),
        heartbeat_s: float = 0.5,
        status_s: float = 5.0,
        fault_repeat_s: float = 5.0,
        antenna_base: int = 1,
        neighbours: Mapping[int, Sequence[int]] | None = None,
        seed: int = 0,
    ):
        super().__init__(link_path=link_path, thread_name=f"emulator-{serial}", logger=log)
        self.table = table
        self.reader = reader
        self.antenna_count = antenna_count
        self.cycle_s = cycle_s
        self.noise = noise
        self.serial = serial
        self.firmware_version = firmware_version
        self.protocol_version = protocol_version  # change it to emulate a reflashed reader
        self.heartbeat_s = heartbeat_s
        self.status_s = status_s
        self.fault_repeat_s = fault_repeat_s
        self.antenna_base = antenna_base
        self._neighbours = neighbours
        self._rng = random.Random(seed)
        self.stats = EmulatorStats()
        self.received: list[tuple[float, Message]] = []  # commands that arrived intact, with the time
        self.outputs: dict[tuple[int, int], tuple[int, int]] = {}  # (kind, index) -> (pattern, duration_ms)
        self._lock = threading.RLock()
        self._faults: list[_PendingFault] = []
        self._antenna_faults: dict[int, _AntennaFaultState] = {}
        self._pending_clears: list[int] = []  # antennas whose fault ended, to announce
        self._now = 0.0
        self._stall_until = 0.0
        self._booted = False
        self._open_pty()

    # ---- the pseudo-terminal --------------------------------------------------------------------------

    @property
    def plugged(self) -> bool:
        return self._master is not None

    @property
    def scanning(self) -> bool:
        """In the middle of an inventory cycle: some antennas of it reported, some not yet."""
        with self._lock:
            return self._booted and self._pass is not None and bool(self._pass.due)

    def _open_pty(self) -> None:
        super()._open_pty()
        self._rx = bytearray()
        self._tx = bytearray()
        log.info("emulator: reader %s on %s", self.serial, self.path)

    def close(self) -> None:
        self.stop()
        with self._lock:
            self._close_pty()

    # ---- running ----------------------------------------------------------------------------------------

    def _wait_on(self) -> tuple[list[int], float]:
        """Between two steps of the thread: until the host writes, or 2 ms at most (5 ms while unplugged)."""
        master = self._master
        return ([], 0.005) if master is None else ([master], 0.002)

    def step(self, now: float) -> None:
        """Do everything the firmware would have done up to time ``now`` (seconds)."""
        with self._lock:
            self._now = now
            if self._master is None:
                return  # unplugged: no power
            if not self._booted:
                self._boot(now)
            if now < self._stall_until:
                return  # hung: neither reads nor sends
            self._receive(now)
            if now >= self._next_heartbeat_at:
                self._send(Heartbeat(0, self._uptime_ms(now)))
                self._next_heartbeat_at = _next_time(self._next_heartbeat_at, self.heartbeat_s, now)
            if now >= self._next_status_at:
                self._send(self._status(now))
                self._next_status_at = _next_time(self._next_status_at, self.status_s, now)
            self._continue_pass(now)
            self._report_faults(now)
            if self._pass is None and now >= self._next_cycle_at - 1e-9:
                requested, self._requested_pending = self._requested_pending, False
                self._start_pass(now, requested)
                self._next_cycle_at = _next_time(self._next_cycle_at, self._cycle_period(requested), now)
                self._continue_pass(now)
            self._flush()
            if self._reset_pending:  # RESET: the ACK has left, now reboot
                self._boot(now)
                self._flush()

    def _boot(self, now: float) -> None:
        self._booted = True
        self.stats.boots += 1
        self._boot_time = now
        self._seq = 0
        self._last_command: tuple[int, int, Message] | None = None  # seq, type, answer (spec 3.2)
        self._cycle = 0
        self._schedule: tuple[ScheduleSlot, ...] | None = None  # None: the default schedule
        self._requested_pending = False
        self._pass: _Pass | None = None  # the inventory cycle being scanned
        self._reset_pending = False
        self._next_heartbeat_at = now + self.heartbeat_s
        self._next_status_at = now + self.status_s
        self._next_cycle_at = now + self.cycle_s
        self._rx.clear()
        self._tx.clear()
        self.outputs.clear()
        for state in self._antenna_faults.values():  # a broken antenna is still broken after a reboot
            state.next_report_at = None
        self._tx += b"\x00"  # end any partial frame in the host's buffer (spec 2.3)

    def _uptime_ms(self, now: float) -> int:
        return int(round((now - self._boot_time) * 1000)) & 0xFFFFFFFF

    def _cycle_period(self, requested: bool) -> float:
        if requested or self._schedule is None:
            return self.cycle_s
        return max(self.cycle_s, sum(slot.dwell_ms for slot in self._schedule) / 1000)

    # ---- faults on demand ---------------------------------------------------------------------------

    def inject(self, fault: Fault | str, message_type: MessageType | None = None, count: int = 1) -> None:
        """Apply ``fault`` to the next ``count`` frames (of ``message_type``, if given)."""
        with self._lock:
            self._faults.append(_PendingFault(Fault(fault), message_type, count))

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return sum(pending.remaining for pending in self._faults)

    def stall(self, seconds: float) -> None:
        """Hang for ``seconds`` from now: nothing is read or sent (the host's link should go down)."""
        with self._lock:
            self._stall_until = self._now + seconds

    def unplug(self) -> None:
        """Pull the USB cable: the pty goes away, the host's reads fail, the stable symlink disappears."""
        with self._lock:
            self._close_pty()
            self._booted = False
            log.info("emulator: %s unplugged", self.serial)

    def replug(self) -> None:
        """Plug it back in: a new pty (a new /dev/pts number, like a new ttyACM), the symlink re-pointed,
        and a fresh boot."""
        with self._lock:
            if self._master is None:
                self._open_pty()
                self._booted = False

    def antenna_fault(self, antenna: int, code: FaultCode | int, detail: int = 0) -> None:
        """Start (or, with FaultCode.CLEARED, end) a fault on ``antenna``; reported at the next step."""
        with self._lock:
            if code == FaultCode.CLEARED:
                if self._antenna_faults.pop(antenna, None) is not None:
                    self._pending_clears.append(antenna)
            else:
                self._antenna_faults[antenna] = _AntennaFaultState(int(code), detail, None)

    def reboot(self) -> None:
        """Reboot as after a watchdog reset (no ACK, nothing announced)."""
        with self._lock:
            self._booted = False

    def _report_faults(self, now: float) -> None:
        clears, self._pending_clears = self._pending_clears, []
        for antenna in clears:
            self._send(AntennaFault(0, antenna, FaultCode.CLEARED, 0))
        for antenna, state in sorted(self._antenna_faults.items()):
            if state.next_report_at is None and self._pass is not None:
                continue  # faults are checked between cycles: an antenna in this scan is still reported
            if state.next_report_at is None or now >= state.next_report_at:
                self._send(AntennaFault(0, antenna, state.code, state.detail))
                state.next_report_at = now + self.fault_repeat_s

    # ---- sending ---------------------------------------------------------------------------------------

    def _send(self, message: Message) -> None:
        message = dataclasses.replace(message, seq=self._seq)
        self._seq = (self._seq + 1) & 0xFFFF  # every frame created takes a seq, even a dropped one
        self.stats.frames_sent += 1
        wire = encode_message(message)
        for chunk in self._apply_send_fault(message, wire):
            if len(self._tx) + len(chunk) > TX_QUEUE_BYTES:
                self.stats.tx_frames_dropped += 1
                continue
            self._tx += chunk

    def _take_fault(self, message_type: int, lose_command: bool) -> Fault | None:
        for pending in self._faults:
            if (pending.fault is Fault.LOSE_COMMAND) != lose_command:
                continue
            if pending.message_type is not None and pending.message_type != message_type:
                continue
            pending.remaining -= 1
            if pending.remaining <= 0:
                self._faults.remove(pending)
            self.stats.faults_applied[pending.fault.value] += 1
            return pending.fault
        return None

    def _apply_send_fault(self, message: Message, wire: bytes) -> list[bytes]:
        fault = self._take_fault(message.MSG_TYPE, lose_command=False)
        if fault is None:
            return [wire]
        if fault is Fault.DROP:
            return []
        if fault is Fault.DUPLICATE:
            return [wire, wire]
        if fault is Fault.TRUNCATE:
            return [wire[: max(1, (len(wire) - 1) // 2)] + b"\x00"]
        if fault is Fault.GARBAGE:
            garbage = bytes(self._rng.randrange(1, 256) for _ in range(self._rng.randrange(4, 40)))
            return [garbage + b"\x00", wire]
        if fault is Fault.BIT_FLIP:
            damaged = bytearray(wire)
            while True:  # never turn a byte into 00: that would split the frame in two
                position, bit = self._rng.randrange(len(wire) - 1), self._rng.randrange(8)
                if damaged[position] ^ (1 << bit):
                    damaged[position] ^= 1 << bit
                    return [bytes(damaged)]
        raise AssertionError(fault)

    def _flush(self) -> None:
        while self._tx and self._master is not None:
            written = write_pty(self._master, self._tx)
            if not written:
                return  # the pty is full (nobody reading); try again next step
            del self._tx[:written]
            self.stats.bytes_sent += written

    # ---- receiving commands -----------------------------------------------------------------------

    def _receive(self, now: float) -> None:
        while data := read_pty(self._master):
            self._rx += data
            while True:
                end = self._rx.find(0)
                if end < 0:
                    if len(self._rx) > MAX_ENCODED_SIZE:  # no delimiter in sight: drop, as the spec says
                        self.stats.rx_framing_errors += 1
                        self._rx.clear()
                    break
                segment = bytes(self._rx[:end])
                del self._rx[: end + 1]
                if segment:
                    self._handle_frame(now, segment)

    def _handle_frame(self, now: float, segment: bytes) -> None:
        try:
            msg_type, seq, payload = decode_frame(segment)
        except CrcError:
            self.stats.rx_crc_errors += 1
            return
        except FrameError:
            self.stats.rx_framing_errors += 1
            return
        if self._take_fault(msg_type, lose_command=True) is not None:
            self.stats.commands_lost += 1
            return
        if msg_type >= 0x80:  # a reader -> host type sent to the reader
            self.stats.rx_malformed += 1
            self._send(Nak(0, seq, msg_type, NakReason.UNKNOWN_TYPE))
            return
        try:
            command = decode_payload(msg_type, seq, payload)
        except UnknownMessageTypeError:
            self.stats.rx_malformed += 1
            self._send(Nak(0, seq, msg_type, NakReason.UNKNOWN_TYPE))
            return
        except MalformedPayloadError:
            self.stats.rx_malformed += 1
            self._send(Nak(0, seq, msg_type, NakReason.MALFORMED_PAYLOAD))
            return
        self.stats.rx_frames_ok += 1
        self.received.append((now, command))

        if isinstance(command, Identify):
            self._last_command = None  # IDENTIFY always runs and clears the duplicate memory
            self._execute(now, command)
            return
        remembered = self._last_command
        if remembered is not None and remembered[:2] == (seq, msg_type):
            self.stats.duplicates_answered += 1  # a retransmission: answer again, do not run it again
            self._send(remembered[2])
            return
        answer = self._execute(now, command)
        self._last_command = (seq, msg_type, answer)

    def _execute(self, now: float, command: Message) -> Message:
        self.stats.commands_executed[command.MSG_TYPE.name] += 1
        if isinstance(command, Identify):
            answer = self._identify_reply()
            self._send(answer)
            return answer
        if isinstance(command, SetSchedule):
            result = self._set_schedule(command)
        elif isinstance(command, SetOutput):
            result = self._set_output(command)
        elif isinstance(command, Reset):
            result = AckResult.OK
            self._reset_pending = True
        elif isinstance(command, RequestInventory):
            if self._requested_pending or (self._pass is not None and self._pass.requested):
                result = AckResult.BUSY
            else:
                result = AckResult.OK
                self._requested_pending = True  # runs when the cycle in progress has ended
        else:  # pragma: no cover - every host -> reader type is handled above
            result = AckResult.UNSUPPORTED
        answer = Ack(0, command.seq, result)
        self._send(answer)
        return answer

    def _identify_reply(self) -> Message:
        major, minor = self.protocol_version
        if major != PROTOCOL_MAJOR:
            # Another major version: only the two version bytes are common ground.
            return IncompatibleIdentifyReply(0, major, minor, b"\x00\x00")
        fw_major, fw_minor, fw_patch = self.firmware_version
        return IdentifyReply(
            0, major, minor, fw_major, fw_minor, fw_patch, self.serial, self.antenna_count,
            TagTechnology.ISO15693 | TagTechnology.ISO14443A,
            Capability.RSSI | Capability.READ_COUNTS | Capability.LEDS | Capability.BUZZER | Capability.SCHEDULE,
        )

    def _set_schedule(self, command: SetSchedule) -> AckResult:
        if any(slot.antenna >= self.antenna_count or slot.dwell_ms == 0 for slot in command.slots):
            return AckResult.INVALID_ARGUMENT
        self._schedule = command.slots
        return AckResult.OK

    def _set_output(self, command: SetOutput) -> AckResult:
        if command.kind == OutputKind.LED:
            valid = command.index < self.antenna_count  # one LED per antenna on this board
        elif command.kind == OutputKind.BUZZER:
            valid = command.index == 0
        else:
            return AckResult.UNSUPPORTED
        if not valid:
            return AckResult.INVALID_ARGUMENT
        self.outputs[(int(command.kind), command.index)] = (int(command.pattern), command.duration_ms)
        return AckResult.OK

    def _status(self, now: float) -> Status:
        s = self.stats
        return Status(0, self._uptime_ms(now), 412, s.rx_frames_ok & 0xFFFFFFFF, s.rx_crc_errors & 0xFFFFFFFF,
                      s.rx_framing_errors & 0xFFFFFFFF, s.rx_malformed & 0xFFFFFFFF,
                      s.tx_frames_dropped & 0xFFFFFFFF)

    # ---- inventory ---------------------------------------------------------------------------------

    def neighbours(self, antenna: int) -> Sequence[int]:
        """The antennas next to ``antenna``: given at construction, else the ones numbered either side."""
        if self._neighbours is not None:
            return self._neighbours.get(antenna, ())
        return [n for n in (antenna - 1, antenna + 1) if 0 <= n < self.antenna_count]

    def _tags_on(self, antenna: int) -> list[str]:
        return list(self.table.tags_on(self.reader, antenna + self.antenna_base))

    def _reads(self, cycle: int, antenna: int) -> list[Read]:
        tags = self._tags_on(antenna)
        if self.noise is None:
            return [Read(uid, 3, -45) for uid in tags]
        around = {n: self._tags_on(n) for n in self.neighbours(antenna)}
        return self.noise.antenna_reads(cycle, antenna, tags, around)

    def _start_pass(self, now: float, requested: bool) -> None:
        cycle = self._cycle
        self._cycle = (self._cycle + 1) & 0xFFFFFFFF
        self.stats.cycles += 1
        if requested or self._schedule is None:
            antennas: Sequence[int] = range(self.antenna_count)
        else:
            antennas = [slot.antenna for slot in self._schedule]
        # A faulted antenna is not scanned, so not reported at all: its contents are unknown.
        faulted = {antenna for antenna, state in self._antenna_faults.items() if state.next_report_at is not None}
        antennas = [antenna for antenna in antennas if antenna not in faulted]
        if not antennas:
            return
        # Each antenna is reported at the end of its dwell, spread over the cycle like the real scan.
        dwell = self._cycle_period(requested) / len(antennas)
        due = [(antenna, now + dwell * (index + 1)) for index, antenna in enumerate(antennas)]
        self._pass = _Pass(cycle, requested, due)

    def _continue_pass(self, now: float) -> None:
        scan = self._pass
        if scan is None:
            return
        while scan.due and now >= scan.due[0][1] - 1e-9:
            antenna, _ = scan.due.pop(0)
            last_antenna = not scan.due
            entries = [_entry(read) for read in self._reads(scan.cycle, antenna)]
            chunks = _split_entries([entry for entry in entries if entry is not None])
            for index, chunk in enumerate(chunks):
                flags = InventoryFlag.REQUESTED if scan.requested else InventoryFlag(0)
                if index < len(chunks) - 1:
                    flags |= InventoryFlag.MORE
                elif last_antenna:
                    flags |= InventoryFlag.CYCLE_END
                self._send(Inventory(0, antenna, scan.cycle, flags, tuple(chunk)))
        if not scan.due:
            self._pass = None


def _next_time(scheduled: float, period: float, now: float) -> float:
    """The next tick of a periodic timer; after a stall or a slow step, skip the missed ticks."""
    following = scheduled + period
    return following if following > now else now + period


def _entry(read: Read) -> TagEntry | None:
    try:
        uid = bytes.fromhex(read.uid)
    except ValueError:
        return None
    if len(uid) not in VALID_UID_LENGTHS:
        return None  # not a UID a reader could report
    return TagEntry(uid, max(0, min(255, read.read_count)), max(-128, min(126, read.rssi)))


def _split_entries(entries: list[TagEntry]) -> list[list[TagEntry]]:
    """Cut one antenna's entries into INVENTORY frames that fit the payload limit (at least one frame)."""
    chunks: list[list[TagEntry]] = [[]]
    size = 7  # antenna, cycle, flags, entry_count
    for entry in entries:
        entry_size = 3 + len(entry.uid)
        if size + entry_size > MAX_PAYLOAD_SIZE or len(chunks[-1]) == 255:
            chunks.append([])
            size = 7
        chunks[-1].append(entry)
        size += entry_size
    return chunks


# --------------------------------------------------------------------------
# Driving the emulator and the host on one virtual clock
# --------------------------------------------------------------------------


class Lockstep:
    """Steps an emulator and a host-side poller alternately on a virtual clock, over the real pty.

    After a side writes, it waits (in real time, up to ``wait_s``) until the bytes are readable on the
    other side, so the kernel's pty latency never shows up as virtual time: runs are deterministic and
    take far less wall time than they simulate.

    ``link`` is the host's ``ReaderLink`` (for its transport's descriptor and byte counters); ``poll`` is
    what the host calls each tick (``link.poll`` or e.g. ``FirmwareReader.poll``); its results are
    collected in ``outputs``.
    """

    def __init__(
        self,
        emulator: FirmwareEmulator,
        link: Any,
        poll: Callable[[float], list] | None = None,
        *,
        start: float = 1000.0,
        tick_s: float = 0.005,
        wait_s: float = 0.1,
    ):
        self.emulator = emulator
        self.link = link
        self.poll = poll or link.poll
        self.now = start
        self.tick_s = tick_s
        self.wait_s = wait_s
        self.outputs: list = []

    def tick(self) -> list:
        self.now += self.tick_s
        emulator_sent = self.emulator.stats.bytes_sent
        self.emulator.step(self.now)
        if self.emulator.stats.bytes_sent != emulator_sent:
            self._wait_readable(self._host_fd())
        host_sent = self.link.bytes_sent
        results = self.poll(self.now)
        if self.link.bytes_sent != host_sent:
            self._wait_readable(self.emulator.master_fd)
        self.outputs.extend(results)
        return results

    def run(self, seconds: float) -> list:
        """Advance ``seconds`` of virtual time; return what ``poll`` produced meanwhile."""
        produced = []
        end = self.now + seconds - 1e-9
        while self.now < end:
            produced.extend(self.tick())
        return produced

    def run_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Advance until ``condition()`` holds (True) or ``timeout`` seconds of virtual time pass (False)."""
        end = self.now + timeout
        while not condition():
            if self.now >= end:
                return False
            self.tick()
        return True

    def _host_fd(self) -> int | None:
        transport = self.link.transport
        return transport.fileno() if transport is not None else None

    def _wait_readable(self, fd: int | None) -> None:
        if fd is None:
            return
        try:
            select.select([fd], [], [], self.wait_s)
        except (OSError, ValueError):
            pass
