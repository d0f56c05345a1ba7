"""An emulator of a Feig ID ISC.MR102 / ID ISC.LR2500 class reader with ID ISC.ANT.MUX multiplexers, at the wire.

The host opens the emulator's stable path (a symlink, like ``/dev/serial/by-id/...``) with the real serial transport
and speaks Feig's ISO-host protocol to it (``firmware_bridge.feig``). The emulator looks at a simulated table (anything
with ``tags_on(reader, antenna)``, e.g. ``sim.field.TableField``): table antenna n (1-based) is ``channels[n - 1]``, a
reader output and the multiplexer outputs on the way to it.

What it models, as the manuals document it (docs/feig.md cites each):

* frames, CRC and addressing: standard and advanced frames, the answer in the kind the request used (advanced when it
  does not fit 255 bytes), COM-ADR 255 or its own, no answer at all to a frame that fails its CRC (H01113 §3.2);
* [0x65] Get Software Version, [0x66] Reader Info mode 0x80 (device ID), [0x69] RF Reset, [0x6A] RF on an output,
  [0x6E] Reader Diagnostic mode 0x01, [0xB0][0x01] Inventory with the MORE and ANT modes and the ANT_SEL bit field,
  [0xBF] function-unit commands [0xDD] Select Channel and [0xDF] Software Version to cascaded multiplexers;
* quiet tags: an inventory puts every tag it reads into the quiet state; a quiet tag does not answer an inventory
  until an RF reset on its antenna, or until it loses power: RF off, or a switch away from every antenna it lies on
  (a card across two antennas stays powered while the reader switches between them) (H40801 §6.1.1, ISO/IEC 15693-3);
* statuses: 0x01 no tag, 0x94 more data when the answer does not fit its transmit buffer, 0x80 unknown command,
  0x81 length error, 0x82 ISO command not available, 0x11 parameter range (an output or multiplexer channel it does
  not have), 0x83 RF communication error (noise; a function unit that does not answer), 0x84 RF warning (an open,
  shorted or detuned antenna), and whatever a test injects;
* time: each answer leaves when its command would have finished (see ``command_time``).

Timing model (``command_time``), per command: the request's and the answer's bytes on the serial line (11 bits a byte,
8E1), plus
  [0x69]  RF_RESET_S = 15 ms, the field is off for t_rf (H60301 §5.6: the answer follows the reset);
  [0xB0]  the ISO/IEC 15693-3 anticollision on the air, simulated slot by slot (16 slots; 1-out-of-4 request coding,
          high data rate single subcarrier answers): request 1.6 ms, empty slot 0.5 ms, answered slot 4.6 ms, an
          addressed Stay Quiet for each tag read 4.0 ms, a new round for each collided slot. Computed from the
          standard's timings, not measured; H01113 ANNEX D shows Feig's measured curves (the numbers were not legible);
  [0xBF]  FU_EXCHANGE_S = 5 ms for a function unit over the antenna cable: assumed, no figure in the manuals read;
  others  PROCESSING_S = 1 ms: assumed.
"""

from __future__ import annotations

import logging
import random
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Protocol

from firmware_bridge.feig import (
    BITS_PER_BYTE,
    BROADCAST_ADDRESS,
    DEFAULT_BAUDRATE,
    DIAG_A_NOISE,
    DIAG_A_Z_HIGH,
    DIAG_A_Z_LOW,
    DIAG_B_DC_POWER,
    DIAG_B_MUX,
    DIAG_GENERAL_RF,
    FU_SELECT_CHANNEL,
    FU_SOFTWARE_VERSION,
    FU_SW_TYPE_HF_MUX,
    INVENTORY_ANT,
    INVENTORY_MORE,
    ISO_INVENTORY,
    MUX_OUTPUTS,
    READER_INFO_DEVICE_ID,
    TR_TYPE_ISO15693,
    AntennaRead,
    Channel,
    Command,
    FrameDecoder,
    SoftwareVersion,
    Status,
    TagRecord,
    default_channels,
    encode_answer,
    encode_inventory,
    mux_address,
)
from sim.pty_link import read_pty, write_pty
from sim.wire_emulator import WireEmulator

log = logging.getLogger(__name__)

MR102 = 77  # [0x65] SW-TYPE of an ID ISC.MR102 (FEDM)
RF_RESET_S = 0.015  # t_rf (H60301 §5.6)
FU_EXCHANGE_S = 0.005  # one function-unit command over the antenna cable: assumed
PROCESSING_S = 0.001  # the reader's own work on a command: assumed
TR_TYPES_ISO15693 = 0x0008  # [0x65] TR-TYPE bit field: bit 3 = transponder type 0x03, ISO 15693

# ISO/IEC 15693-2/-3 air timing (fc = 13.56 MHz)
VCD_BIT_S = 75.52e-6 / 2  # 1-out-of-4 coding: two bits per 75.52 us
VCD_SOF_S, VCD_EOF_S = 75.52e-6, 37.76e-6
VICC_BIT_S = 37.76e-6  # high data rate, one subcarrier
VICC_SOF_S = VICC_EOF_S = 151.04e-6
T1_S = 4352 / 13.56e6  # 320.9 us: VCD EOF to VICC answer
T2_S = 4192 / 13.56e6  # 309.2 us: VICC answer to the next VCD EOF
T3_S = T1_S + VICC_SOF_S  # an empty slot
INVENTORY_REQUEST_BITS = 40  # flags, command, mask length, CRC16 (+ the mask)
INVENTORY_ANSWER_BITS = 96  # flags, DSFID, UID, CRC16
STAY_QUIET_BITS = 96  # flags, command, UID, CRC16


class TagField(Protocol):
    def tags_on(self, reader: str, antenna: int) -> list[str]: ...


def inventory_air_time(uids: Iterable[bytes]) -> float:
    """The air time of one ISO/IEC 15693 inventory with 16 slots over tags ``uids`` (each read once, then quieted):
    a tag answers in the slot its UID's next four bits name after the mask; a collided slot opens a round with the
    mask extended by it (ISO/IEC 15693-3 §8)."""
    numbers = [int.from_bytes(uid, "big") for uid in uids]
    total = 0.0
    rounds = [(0, 0)]  # (mask value, mask length in bits)
    while rounds:
        value, length = rounds.pop(0)
        mask_bits = (length + 7) // 8 * 8
        total += VCD_SOF_S + (INVENTORY_REQUEST_BITS + mask_bits) * VCD_BIT_S + VCD_EOF_S
        slots: dict[int, int] = defaultdict(int)
        for number in numbers:
            if number & ((1 << length) - 1) == value:
                slots[(number >> length) & 0xF] += 1
        for slot in range(16):
            if slot:
                total += VCD_EOF_S  # the EOF that opens the next slot
            answers = slots.get(slot, 0)
            if not answers:
                total += T3_S
                continue
            total += T1_S + VICC_SOF_S + INVENTORY_ANSWER_BITS * VICC_BIT_S + VICC_EOF_S + T2_S
            if answers == 1:
                total += VCD_SOF_S + STAY_QUIET_BITS * VCD_BIT_S + VCD_EOF_S + T2_S
            else:
                rounds.append((value | slot << length, length + 4))
    return total


def serial_time(byte_count: int, baudrate: int = DEFAULT_BAUDRATE) -> float:
    return byte_count * BITS_PER_BYTE / baudrate


@dataclass
class FeigEmulatorStats:
    bytes_sent: int = 0  # written to the pty
    bytes_received: int = 0
    commands: Counter = field(default_factory=Counter)  # "0x65" ... -> times executed
    statuses: Counter = field(default_factory=Counter)  # status byte of the answers sent
    rx_crc_errors: int = 0  # frames ignored for their CRC (no answer, H01113 §3.2)
    rx_other_address: int = 0  # frames for another COM-ADR (ignored)
    rf_resets: int = 0
    inventories: int = 0  # new inventories (MORE requests not counted)
    more_requests: int = 0
    fu_commands: int = 0
    answers_corrupted: int = 0
    air_time_s: float = 0.0  # simulated ISO 15693 air time of all inventories
    boots: int = 0


ANTENNA_FAULTS = ("open", "short", "detuned", "noise")


class FeigEmulator(WireEmulator):
    """The reader at the wire. Drive it with ``step(now)`` (a virtual clock, see ``sim.firmware.Lockstep``, which
    works with it as it does with the firmware emulator) or ``start()`` (a thread on the monotonic clock)."""

    def __init__(
        self,
        field: TagField,
        *,
        reader: str = "main",
        antennas: int,
        channels: list[Channel] | None = None,
        link_path: Path | str | None = None,
        bus_address: int = BROADCAST_ADDRESS,
        serial: str = "00A1B2C3",
        seed: int = 0,
        reader_type: int = MR102,
        firmware: tuple[int, int, int] = (2, 10, 0),
        baudrate: int = DEFAULT_BAUDRATE,
        tx_buffer: int = 1024,
        outputs: int | None = None,
    ):
        super().__init__(link_path=link_path, thread_name="feig-emulator", logger=log)
        self.field = field
        self.reader = reader
        self.channels = list(channels) if channels is not None else default_channels(antennas)
        if len(self.channels) != antennas:
            raise ValueError(f"{antennas} antennas but {len(self.channels)} channels")
        self.antenna_of = {channel: number for number, channel in enumerate(self.channels, start=1)}
        self.com_address = bus_address if bus_address != BROADCAST_ADDRESS else 0x00  # factory COM-ADR 0
        self.device_id = int(serial, 16)
        self.reader_type = reader_type
        self.firmware = firmware
        self.baudrate = baudrate
        self.tx_buffer = tx_buffer
        self.outputs = outputs or max(channel.output for channel in self.channels)
        self.muxes = {mux for channel in self.channels for mux in channel.muxes()}  # (output, path before it)
        self.stats = FeigEmulatorStats()
        self._rng = random.Random(seed)
        self._lock = threading.RLock()
        self._faults: dict[int, str] = {}  # table antenna -> "open" | "short" | "detuned" | "noise"
        self._injected: list[list] = []  # [command, status, remaining]
        self._corrupt = 0
        self._mute_until = float("-inf")
        self._now = 0.0
        self._last_step = 0.0
        self._open_pty()
        self._boot()

    # ---- the pseudo-terminal ----------------------------------------------------------------------

    def unplug(self) -> None:
        """Pull the USB cable: the pty and the stable name go away, the reader loses power."""
        with self._lock:
            self._close_pty()

    def replug(self) -> None:
        """Plug it back in: a new pty behind the same stable name, a freshly booted reader."""
        with self._lock:
            if self._master is None:
                self._open_pty()
                self._boot()

    def close(self) -> None:
        self.stop()
        self.unplug()

    def _wait_on(self) -> tuple[list[int], float]:
        """Between two steps of the thread: until the host writes, or 1 ms at most (5 ms while unplugged)."""
        master = self._master
        return ([], 0.005) if master is None else ([master], 0.001)

    # ---- what a test does to it -------------------------------------------------------------------

    def antenna_fault(self, antenna: int, kind: str | None) -> None:
        """Break table ``antenna`` (1-based): "open", "short", "detuned" (0x84 RF warning, the diagnostic names it)
        or "noise" (0x83 RF communication error); None repairs it."""
        if kind is not None and kind not in ANTENNA_FAULTS:
            raise ValueError(f"fault {kind!r}: one of {ANTENNA_FAULTS}")
        with self._lock:
            if kind is None:
                self._faults.pop(antenna, None)
            else:
                self._faults[antenna] = kind

    def remove_multiplexer(self, output: int, path: tuple[int, ...] = ()) -> None:
        """Unplug the multiplexer that sits at ``output`` after the multiplexer outputs ``path``."""
        with self._lock:
            self.muxes.discard((output, tuple(path)))

    def add_multiplexer(self, output: int, path: tuple[int, ...] = ()) -> None:
        with self._lock:
            self.muxes.add((output, tuple(path)))

    def inject_status(self, command: int, status: int, count: int = 1) -> None:
        """Answer the next ``count`` requests with control byte ``command`` with ``status`` and no data."""
        with self._lock:
            self._injected.append([command, status, count])

    def corrupt_answers(self, count: int = 1) -> None:
        """Flip one bit in each of the next ``count`` answers (the host sees a CRC error)."""
        with self._lock:
            self._corrupt += count

    def mute(self, seconds: float) -> None:
        """Answer nothing for ``seconds`` from now (a hung reader)."""
        with self._lock:
            self._mute_until = self._now + seconds

    # ---- running -----------------------------------------------------------------------------------

    def _boot(self) -> None:
        self.stats.boots += 1
        self._decoder = FrameDecoder(answers=False)
        self._outbox: list[tuple[float, bytes]] = []  # (due, frame)
        self._busy_until = float("-inf")
        self._rf_output = 1  # host mode: RF on at power-up, output 1
        self._mux_route: dict[tuple[int, tuple[int, ...]], int] = {}
        self._quiet: set[str] = set()
        self._powered: set[str] = set()
        self._pending: list[TagRecord] = []  # data sets not yet sent (status 0x94)
        self._pending_antenna = False

    def step(self, now: float) -> None:
        """Do everything the reader would have done up to ``now`` (seconds)."""
        with self._lock:
            self._now = now
            if self._master is None:
                return
            self._refresh_power()
            self._receive()
            self._last_step = now
            self._flush(now)

    def _receive(self) -> None:
        while data := read_pty(self._master):
            self.stats.bytes_received += len(data)
            rejected = self._decoder.stats.crc_errors
            frames = self._decoder.feed(data)
            self.stats.rx_crc_errors += self._decoder.stats.crc_errors - rejected
            for frame in frames:
                if frame.address not in (BROADCAST_ADDRESS, self.com_address):
                    self.stats.rx_other_address += 1
                    continue
                # The bytes arrived since the previous step: the host wrote them at that step's time.
                arrival = self._last_step + serial_time(len(frame.data) + (7 if frame.advanced else 5), self.baudrate)
                self._execute(arrival, frame)

    def _flush(self, now: float) -> None:
        while self._outbox and self._outbox[0][0] <= now + 1e-9:
            _, frame = self._outbox.pop(0)
            if now < self._mute_until:
                continue
            written = write_pty(self._master, frame)
            if not written:
                return
            self.stats.bytes_sent += written

    # ---- commands ----------------------------------------------------------------------------------

    def _execute(self, arrival: float, frame) -> None:
        command, data = frame.command, frame.data
        self.stats.commands[f"0x{command:02X}"] += 1
        injected = self._take_injected(command)
        if injected is not None:
            status, answer, work = injected, b"", PROCESSING_S
        else:
            status, answer, work = self._dispatch(command, data)
        wire = encode_answer(self.com_address, command, status, answer, advanced=frame.advanced)
        if self._corrupt:
            self._corrupt -= 1
            self.stats.answers_corrupted += 1
            damaged = bytearray(wire)
            damaged[self._rng.randrange(3, len(wire))] ^= 1 << self._rng.randrange(8)
            wire = bytes(damaged)
        start = max(arrival, self._busy_until)
        due = start + work + serial_time(len(wire), self.baudrate)
        self._busy_until = due
        self.stats.statuses[f"0x{status:02X}"] += 1
        self._outbox.append((due, wire))

    def _take_injected(self, command: int) -> int | None:
        for entry in self._injected:
            if entry[0] == command:
                entry[2] -= 1
                if entry[2] <= 0:
                    self._injected.remove(entry)
                return entry[1]
        return None

    def _dispatch(self, command: int, data: bytes) -> tuple[int, bytes, float]:
        if command == Command.GET_SOFTWARE_VERSION:
            return Status.OK, self._software_version().encode(), PROCESSING_S
        if command == Command.GET_READER_INFO:
            if len(data) != 1:
                return Status.LENGTH_ERROR, b"", PROCESSING_S
            if data[0] == READER_INFO_DEVICE_ID:
                return Status.OK, self.device_id.to_bytes(4, "big") + bytes(10), PROCESSING_S
            if data[0] == 0x00:
                return Status.OK, self._software_version().encode(), PROCESSING_S
            return Status.PARAMETER_RANGE_ERROR, b"", PROCESSING_S
        if command == Command.RF_RESET:
            if data:
                return Status.LENGTH_ERROR, b"", PROCESSING_S
            self.stats.rf_resets += 1
            for uid in self._powered:  # the field is off for t_rf: every powered tag starts afresh
                self._quiet.discard(uid)
            return Status.OK, b"", RF_RESET_S
        if command == Command.RF_ON_OFF:
            if len(data) != 1:
                return Status.LENGTH_ERROR, b"", PROCESSING_S
            if data[0] > self.outputs:
                return Status.PARAMETER_RANGE_ERROR, b"", PROCESSING_S
            self._rf_output = data[0]
            self._refresh_power()
            return Status.OK, b"", PROCESSING_S
        if command == Command.READER_DIAGNOSTIC:
            if len(data) != 1:
                return Status.LENGTH_ERROR, b"", PROCESSING_S
            if data[0] != DIAG_GENERAL_RF:
                return Status.PARAMETER_RANGE_ERROR, b"", PROCESSING_S
            return Status.OK, self._diagnostic(), PROCESSING_S
        if command == Command.ISO_HOST:
            return self._iso_host(data)
        if command == Command.FU_TRANSPARENT:
            return self._function_unit(data)
        return Status.UNKNOWN_COMMAND, b"", PROCESSING_S

    def _software_version(self) -> SoftwareVersion:
        major, minor, development = self.firmware
        return SoftwareVersion(major, minor, development, 0x00, self.reader_type, TR_TYPES_ISO15693,
                               1024, self.tx_buffer)

    # ---- RF routing, power and quiet tags ---------------------------------------------------------

    def _routed(self, output: int) -> tuple[int | None, bool]:
        """The table antenna RF on ``output`` reaches (None: none), and whether the cable ends where the wiring has
        a multiplexer that is missing."""
        path: tuple[int, ...] = ()
        while (output, path) in self.muxes:
            out = self._mux_route.get((output, path), 0)
            if not out:
                return None, False
            path += (out,)
        antenna = self.antenna_of.get(Channel(output, path))
        if antenna is not None:
            return antenna, False
        missing = any(c.output == output and len(c.path) > len(path) and c.path[:len(path)] == path
                      for c in self.channels)
        return None, missing

    def _tags_on(self, antenna: int | None) -> list[str]:
        return list(self.field.tags_on(self.reader, antenna)) if antenna is not None else []

    def _refresh_power(self) -> None:
        """Tags that lost the field forget being quiet (ISO/IEC 15693-3: a VICC that loses power resets)."""
        antenna, _ = self._routed(self._rf_output) if self._rf_output else (None, False)
        powered = set(self._tags_on(antenna))
        for uid in self._powered - powered:
            self._quiet.discard(uid)
        self._powered = powered

    def _diagnostic(self) -> bytes:
        antenna, mux_missing = self._routed(self._rf_output) if self._rf_output else (None, False)
        fault = self._faults.get(antenna) if antenna is not None else None
        flags_a = {"open": DIAG_A_Z_HIGH, "short": DIAG_A_Z_LOW, "detuned": DIAG_A_Z_LOW | DIAG_A_Z_HIGH,
                   "noise": DIAG_A_NOISE}.get(fault, 0)
        flags_b = (DIAG_B_DC_POWER if fault == "short" else 0) | (DIAG_B_MUX if mux_missing else 0)
        return bytes((flags_a, flags_b))

    # ---- [0xB0] inventory ----------------------------------------------------------------------------

    def _iso_host(self, data: bytes) -> tuple[int, bytes, float]:
        if len(data) < 2:
            return Status.LENGTH_ERROR, b"", PROCESSING_S
        if data[0] != ISO_INVENTORY:
            return Status.COMMAND_NOT_AVAILABLE, b"", PROCESSING_S
        mode = data[1]
        with_antennas = bool(mode & INVENTORY_ANT)
        if len(data) != (3 if with_antennas else 2):
            return Status.LENGTH_ERROR, b"", PROCESSING_S
        if mode & INVENTORY_MORE:
            self.stats.more_requests += 1
            return self._next_chunk(PROCESSING_S)
        outputs = [self._rf_output]
        if with_antennas:
            selection = data[2]
            if not selection or selection >> self.outputs:
                return Status.PARAMETER_RANGE_ERROR, b"", PROCESSING_S
            outputs = [bit + 1 for bit in range(8) if selection >> bit & 1]
        self.stats.inventories += 1
        records: list[TagRecord] = []
        work = PROCESSING_S
        status = Status.OK
        for output in outputs:
            if output != self._rf_output:
                self._rf_output = output
                self._refresh_power()
            antenna, _ = self._routed(output)
            fault = self._faults.get(antenna) if antenna is not None else None
            if antenna is None or fault in ("open", "short", "detuned"):
                status = Status.RF_WARNING  # no antenna at the end of the cable, or a broken one
                continue
            if fault == "noise":
                status = Status.RF_COMMUNICATION_ERROR
                work += inventory_air_time([])
                continue
            answering = [uid for uid in self._tags_on(antenna) if uid not in self._quiet]
            uids = [bytes.fromhex(uid) for uid in answering]
            air = inventory_air_time(uids)
            self.stats.air_time_s += air
            work += air
            self._quiet.update(answering)  # the reader sets every tag it read quiet (H40801 §6.1.1)
            for uid in uids:
                antennas = (AntennaRead(output, 0x00, 0x50),) if with_antennas else ()
                records.append(TagRecord(uid, TR_TYPE_ISO15693, 0x00, antennas))
        if status != Status.OK and not records:
            self._pending = []
            return status, b"", work
        self._pending, self._pending_antenna = records, with_antennas
        return self._next_chunk(work)

    def _next_chunk(self, work: float) -> tuple[int, bytes, float]:
        if not self._pending:
            return Status.NO_TRANSPONDER, b"", work
        record_bytes = 20 if self._pending_antenna else 10
        fits = max(1, (self.tx_buffer - 9) // record_bytes)  # frame head, STATUS, DATA-SETS, CRC
        chunk, self._pending = self._pending[:fits], self._pending[fits:]
        status = Status.MORE_DATA if self._pending else Status.OK
        return status, encode_inventory(chunk, self._pending_antenna), work

    # ---- [0xBF] function units ---------------------------------------------------------------------

    def _function_unit(self, data: bytes) -> tuple[int, bytes, float]:
        if len(data) < 2:
            return Status.LENGTH_ERROR, b"", PROCESSING_S
        self.stats.fu_commands += 1
        fu_command, address = data[0], data[1]
        output = self._rf_output
        # The FU signal travels down the selected output and through every multiplexer already switched.
        path: tuple[int, ...] = ()
        level = 1
        while (output, path) in self.muxes and mux_address(level) != address:
            out = self._mux_route.get((output, path), 0)
            if not out:
                break
            path += (out,)
            level += 1
        if not output or (output, path) not in self.muxes or mux_address(level) != address:
            return Status.RF_COMMUNICATION_ERROR, b"", FU_EXCHANGE_S  # no function unit answers
        if fu_command == FU_SOFTWARE_VERSION:
            return Status.OK, bytes((Status.OK, 1, 3, FU_SW_TYPE_HF_MUX, 1, address)), FU_EXCHANGE_S
        if fu_command == FU_SELECT_CHANNEL:
            if len(data) != 4:
                return Status.LENGTH_ERROR, b"", PROCESSING_S
            out1, out2 = data[2], data[3]
            if out1 > MUX_OUTPUTS or out2 > MUX_OUTPUTS or (out1 and out1 == out2):
                return Status.OK, bytes((Status.PARAMETER_RANGE_ERROR,)), FU_EXCHANGE_S  # H30701 §2.2.3
            self._mux_route[(output, path)] = out1
            self._refresh_power()
            return Status.OK, bytes((Status.OK,)), FU_EXCHANGE_S
        return Status.OK, bytes((Status.UNKNOWN_COMMAND,)), FU_EXCHANGE_S


def command_time(command: str, tags: int = 0, baudrate: int = DEFAULT_BAUDRATE) -> float:
    """The modelled time of one host step, request and answer on the line included: "select" (one multiplexer level),
    "reset" ([0x69]), "inventory" ([0xB0] with ``tags`` answering, UIDs spread over the slots), "diagnostic"."""
    if command == "select":
        return serial_time(11 + 10, baudrate) + FU_EXCHANGE_S
    if command == "reset":
        return serial_time(7 + 8, baudrate) + RF_RESET_S
    if command == "diagnostic":
        return serial_time(8 + 10, baudrate) + PROCESSING_S
    if command == "inventory":
        uids = [bytes.fromhex(f"E00401{n:010X}") for n in range(tags)]
        return serial_time(10 + 9 + 20 * tags, baudrate) + PROCESSING_S + inventory_air_time(uids)
    raise ValueError(command)
