"""The host side of a Feig OBID i-scan HF reader (ID ISC.MR102, ID ISC.LR2500 class) speaking Feig's ISO-host protocol,
with ID ISC.ANT.MUX antenna multiplexers, as a link the table's ``hal.firmware_reader.FirmwareReader`` can use.

``FeigLink`` builds on ``firmware_bridge.link.ReconnectingLink``, the surface every reader link shares: ``poll(now)``
reads what the reader sent, advances the state machine, writes the next command and returns ``LinkEvent`` objects. It
never sleeps and takes the time from the caller, so tests run it on a virtual clock. docs/feig.md is the reference; the
sources cited below are:

* H01113  ID ISC.MR102 manual, H01113-4e-ID-B (2018-07-24): §3.2 frames, §6.10 [0x6E], §7 ISO 15693 host
  commands, ANNEX D time behaviour, ANNEX E status bytes.
* H01112  ID ISC.LR(M)2500 manual, H01112-0e-ID-B (found; only its title page was legible here).
* H30701  "Communication FU" (ID ISC.ANT.MUX and other function units), H30701-3e-ID-B: §2.2.3 [0xDD] Select Channel.
* H60301  ID ISC.MR/PR/PRH101 manual, H60301-3e-ID-B: §5.6 [0x69] RF Reset (t_rf = 15 ms), §6.1.1 Inventory notes.
* H40801  ID ISC.MR200 manual, H40801-5e-ID-B: §6.1.1 Inventory (quiet state).
* H90202  ID ISC.LRU3000 manual, H90202-7e-ID-B p.180: decimal antenna numbers of cascaded multiplexers.
* H90701  ID ISC.MU02.02 manual, H90701-3e-ID-B: §10.1.1 Inventory with ANT_SEL, §9.5.1 [0x66] mode 0x00.
* Amarok79, itek  InlayTester.Drivers.FeigReader (C#) and python-itek-feig: frames in bytes (docs/feig.md).
* FEDM    Feig's own C++ SDK sources (FEDM_ISCReaderID.h, FEDM_ISOTabItem.cpp, FedmIscReport_ReaderDiagnostic.cpp),
  where a manual's table could not be read: MODE bit positions, the ANT record layout, the [0x6E] flag bits.

States::

    disconnected --open ok--> identifying --[0x65] a known reader, [0x66] its serial,--> up --+
         ^   ^                    |          every multiplexer answers [0xBF][0xDF]           |
         |   |                    |                                                           |
         |   +-- open failed / no answer: connect_failed; refused: incompatible               |
         |       (close, backoff 1, 2, 4, 8, 16, 30 s)                                        |
         +------ no valid answer within 2 s, an I/O error, a malformed answer ("down") -------+

Events: ``up`` (message: an ``IdentifyReply`` whose serial is the model and the [0x66] device ID, e.g.
"ID ISC.MR102 1A2B3C4D", and ``antenna_count`` the number of channels), then ``inventory_requested`` (the first pass,
flagged REQUESTED, reads every antenna afresh), ``inventory`` (one per channel per pass), ``antenna_fault``,
``command_failed``, ``down``, ``connect_failed``, ``incompatible``. ``reader_reset`` never comes: the ISO-host protocol
cannot tell a reboot, which shows as ``down`` then ``up``.

While up the host drives everything (the reader never speaks unasked, H01113 §3.2). A pass inventories every channel
once, in the configured order. For each channel::

    [0x6A] RF on the channel's reader output        (only when the output changes)
    [0xBF][0xDD] select each multiplexer level      (only the levels whose setting changes; H30701 §2.2.3)
    [0x69] RF reset                                  (wakes the tags the previous inventory made quiet)
    [0xB0][0x01] Inventory, MODE = ANT, ANT_SEL = the output's bit
    [0xB0][0x01] MODE = ANT|MORE while the status is 0x94 (more data)
    [0x6E] mode 0x01 reader diagnostic               (one channel per pass, and after an RF warning)

Why the host inventories channel by channel rather than with one multi-antenna ANT inventory: each antenna's result is
handed on as soon as its inventory ends (the table watches dealt cards early), a fault stays on its own antenna, and the
RF work (switching, anticollision) is the same either way; Feig documents the reader scanning multiplexer channels by
itself only for its UHF readers (H90202 p.180), not for these HF readers in host mode.

Why an RF reset before every inventory: an inventory puts every tag it reads into the quiet state, and a quiet tag
answers the next inventory only after it left the field, after [0x69] RF Reset, or (depending on the configuration)
after a persistence time (H40801 §6.1.1, H60301 §6.1.1). Switching a multiplexer away does power most tags down, but a
card lying across two antennas stays powered and quiet, and on a table with a single antenna nothing switches at all.
[0x69] costs t_rf = 15 ms (H60301 §5.6) per channel and makes every pass report every tag present.

Status bytes (H01113 ANNEX E), and what each becomes:

    ====================  ======================================================================================
    0x00 OK               the answer's data is used
    0x01 No Transponder   an Inventory with no tag (an empty antenna)
    0x94 More Data        the inventory goes on with MORE (H01113 ch. 7 [0x01] Inventory)
    0x93 Data Buffer Ovf  the tags received are used; an error line in the log (the reader's buffer is full)
    0x02 Data False       the channel is tried again (RF reset and inventory), up to ``max_retransmits`` times;
    0x83 RF Comm. Error   then ``antenna_fault`` TUNING with the status as detail (its contents are unknown)
    0x95 ISO Error        (+ ISO error byte) as 0x83
    0x84 RF Warning       ``antenna_fault`` for the channel; the diagnostic [0x6E] tells OPEN, SHORT, TUNING
                          or OVERCURRENT; ``CLEARED`` once the channel reads again
    0xF1 Hardware Warn.   ``antenna_fault`` TUNING for the channel, and an error line
    0x10 EEPROM Failure,  ``incompatible``: the reader cannot serve the table as configured (an output or a
    0x11 Parameter Range, multiplexer channel it does not have, a login or a firmware activation it wants, a
    0x13 Login Request,   command its firmware lacks); the reason names the status; retried with backoff
    0x14 Login Error,
    0x17 FW Activation,
    0x18 Wrong Firmware,
    0x80 Unknown Command,
    0x81 Length Error,
    0x82 Cmd Not Available
    0x03, 0x04, 0x05,     ``command_failed`` (reason names it) and ``antenna_fault`` TUNING with the status as
    0x08, 0x0B, 0x0E,     detail for the channel whose inventory it ended (none of them should answer an
    0x15, 0x16, any other inventory: write, address, type, authentication, collision, general, protection errors)
    no answer in 2 s      ``down`` (or ``connect_failed`` before ``up``), reconnect with backoff
    damaged answer        (CRC error, runt, oversize) the step is asked again, then ``down``
    ====================  ======================================================================================

The reader's diagnostic [0x6E] mode 0x01 (bits from FEDM's report for the MR102 and LR2500): FLAGS-A bit 0 RF
hardware, 1 noise, 2 |Z| < 50 ohm, 3 |Z| > 50 ohm (both: phase error), 4 false power, 5 temperature warning, 6 sync
timeout, 7 temperature alarm; FLAGS-B bit 0 multiplexer not OK, 1 DAT tuner not OK, 2 DC power to the antenna. The
antenna bits decide the fault kind of a channel that cannot be read (|Z| > 50 ohm: OPEN, < 50 ohm: SHORT, both: TUNING,
DC power: OVERCURRENT, multiplexer: OPEN); the reader bits are logged once per change, as is an impedance warning on a
channel that still reads (its reads are real, so it gets no fault).
"""

from __future__ import annotations

import enum
import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Generator, Iterable

from firmware_bridge.codec import DecoderStats, FrameRejection
from firmware_bridge.link import LinkState, ReconnectingLink
from firmware_bridge.messages import (
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
    AntennaFault,
    Capability,
    FaultCode,
    IdentifyReply,
    Inventory,
    InventoryFlag,
    TagEntry,
    TagTechnology,
)
from firmware_bridge.message_types import PLAIN_SERIAL, escaped
from firmware_bridge.transports import SerialTransport, Transport, TransportError

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------
# Protocol constants
# --------------------------------------------------------------------------

DEFAULT_BAUDRATE = 38400  # factory setting of CFG1; H01113 ANNEX D measures its timings "at 38,4Kbaud"
DEFAULT_PARITY = "E"  # factory setting 8 data bits, even parity, 1 stop bit (CFG1); unverified on a reader
BITS_PER_BYTE = 11  # start + 8 data + parity + stop
BROADCAST_ADDRESS = 0xFF  # "The Reader can be addressed via COM-ADR 255 at any time" (H01113 §3.2)
STX = 0x02  # first byte of an advanced frame (H01113 §3.2)
CRC_PRESET = 0xFFFF  # CRC16 start value (H01113 §3.2)
CRC_POLYNOMIAL = 0x8408  # x^16 + x^12 + x^5 + 1, reflected ("Direction: Backward"), H01113 §3.2
STANDARD_MIN, STANDARD_MAX = 6, 255  # LENGTH of a reader's standard frame (H01113 §3.2)
ADVANCED_MIN = 8  # ALENGTH of a reader's advanced frame, at least (H01113 §3.2)
MAX_FRAME_BYTES = 16384  # far above any answer the table causes; a longer ALENGTH is noise, not a frame


class Command(enum.IntEnum):
    """Control bytes the backend sends (H01113 §6, §7; the FU transport from FEDM's naming "[0xBF][0xDD]")."""

    GET_SOFTWARE_VERSION = 0x65  # H01113 ch. 6
    GET_READER_INFO = 0x66  # mode 0x80: device ID
    RF_RESET = 0x69  # field off for t_rf = 15 ms (H60301 §5.6)
    RF_ON_OFF = 0x6A  # RF byte: the reader output to switch on (0: off)
    READER_DIAGNOSTIC = 0x6E  # H01113 §6.10
    ISO_HOST = 0xB0  # ISO 15693 host commands (H01113 §7)
    FU_TRANSPARENT = 0xBF  # a function unit command (H30701) carried to the multiplexer over the antenna cable


ISO_INVENTORY = 0x01  # [0xB0] sub-command (H01113 ch. 7 [0x01] Inventory)
INVENTORY_MORE = 0x80  # MODE bit 7: more data after status 0x94 (H01113 ch. 7 [0x01] Inventory; FEDM MODE_MORE)
INVENTORY_ANT = 0x10  # MODE bit 4: ANT_SEL follows, answers carry antenna records (FEDM MODE_ANT; H90701 §10.1.1)
READER_INFO_DEVICE_ID = 0x80  # [0x66] mode: the reader's device ID, its serial number (FEDM; unverified layout)
DIAG_GENERAL_RF = 0x01  # [0x6E] mode: general RF status, FLAGS-A and FLAGS-B (H01113 §6.10; FEDM)

TR_TYPE_ISO15693 = 0x03  # transponder type of ISO 15693 tags (ANNEX A of the manuals; Amarok79)
RECORD_HAS_UID = 0x01  # FLAGS of an ANT record: TR-TYPE, DSFID, UID_LEN and UID follow (FEDM SetSnr_with_Antenna)
RECORD_HAS_ANTENNAS = 0x10  # FLAGS of an ANT record: ANT_CNT and the antenna entries follow (FEDM)
ANTENNA_ENTRY_BYTES = 7  # ANT_NR, ANT_STATUS, RSSI, 4 reserved (FEDM; H90701 §10.1.1)

FU_SELECT_CHANNEL = 0xDD  # H30701 §2.2.3: OutCh1, OutCh2 (0x00-0x08)
FU_SOFTWARE_VERSION = 0xDF  # FEDM HFAntennaMultiplexer "[0xBF][0xDF] Software Version"
FU_SW_TYPE_HF_MUX = 10  # firmware type of an ID ISC.ANT.MUX (FEDM FunitFirmwareVersion.SwTypeHfMux)
MUX_OUTPUTS = 8  # OUT1-8 (H30701 §2.2.3)
MUX_LEVELS = 3  # cascade depth Feig numbers (H90202 p.180: "the active outputs of the multiplexers on all 3 levels")
READER_OUTPUTS = 8  # ANT_SEL is one byte, one bit per output (H90701 §10.1.1)
MUX_FIRST_ADDRESS = 0x02  # lowest FU address (H30701 §2.2.3: MUX-Adr 0x02-0xFE); level n answers 0x01 + n


def mux_address(level: int) -> int:
    """The FU address this backend expects of a multiplexer at cascade ``level`` (1: on the reader output). Set it with
    the multiplexer's address setting (H30701 §2.1.4); a convention of this backend, see docs/feig.md."""
    return MUX_FIRST_ADDRESS - 1 + level


class Status(enum.IntEnum):
    """The STATUS byte of an answer (H01113 ANNEX E)."""

    OK = 0x00
    NO_TRANSPONDER = 0x01
    DATA_FALSE = 0x02
    WRITE_ERROR = 0x03
    ADDRESS_ERROR = 0x04
    WRONG_TRANSPONDER_TYPE = 0x05
    AUTHENTICATION_ERROR = 0x08
    COLLISION_ERROR = 0x0B
    GENERAL_ERROR = 0x0E
    EEPROM_FAILURE = 0x10
    PARAMETER_RANGE_ERROR = 0x11
    LOGIN_REQUEST = 0x13
    LOGIN_ERROR = 0x14
    READ_PROTECT = 0x15
    WRITE_PROTECT = 0x16
    FIRMWARE_ACTIVATION_REQUIRED = 0x17
    WRONG_FIRMWARE = 0x18
    UNKNOWN_COMMAND = 0x80
    LENGTH_ERROR = 0x81
    COMMAND_NOT_AVAILABLE = 0x82
    RF_COMMUNICATION_ERROR = 0x83
    RF_WARNING = 0x84
    DATA_BUFFER_OVERFLOW = 0x93
    MORE_DATA = 0x94
    ISO15693_ERROR = 0x95
    HARDWARE_WARNING = 0xF1


def status_name(status: int | None) -> str:
    if status is None:  # a frame without one: a request, where an answer was due
        return "no status"
    try:
        return f"0x{status:02X} {Status(status).name.replace('_', ' ').lower()}"
    except ValueError:
        return f"0x{status:02X} (not in the reader's status index)"


# The reader cannot serve the table as configured: refuse it, as ReaderLink refuses another protocol version.
REFUSING_STATUSES = frozenset({
    Status.EEPROM_FAILURE, Status.PARAMETER_RANGE_ERROR, Status.LOGIN_REQUEST, Status.LOGIN_ERROR,
    Status.FIRMWARE_ACTIVATION_REQUIRED, Status.WRONG_FIRMWARE, Status.UNKNOWN_COMMAND, Status.LENGTH_ERROR,
    Status.COMMAND_NOT_AVAILABLE,
})
RETRIED_STATUSES = frozenset({Status.DATA_FALSE, Status.RF_COMMUNICATION_ERROR, Status.ISO15693_ERROR})
INVENTORY_DATA_STATUSES = frozenset({Status.OK, Status.MORE_DATA, Status.DATA_BUFFER_OVERFLOW})

# Reader types in [0x65] SW-TYPE (FEDM FEDM_ISC_TYPE_*; the same numbers in InlayTester.Drivers.Feig's FeigReaderType)
READER_TYPES = {77: "ID ISC.MR102", 43: "ID ISC.LR2500-B", 44: "ID ISC.LR2500-A"}

# [0x6E] mode 0x01 flags (FEDM FedmIscReport_ReaderDiagnostic for the MR102 and LR2000/LR2500)
DIAG_A_RF_HARDWARE, DIAG_A_NOISE, DIAG_A_Z_LOW, DIAG_A_Z_HIGH = 0x01, 0x02, 0x04, 0x08
DIAG_A_FALSE_POWER, DIAG_A_TEMP_WARNING, DIAG_A_SYNC, DIAG_A_TEMP_ALARM = 0x10, 0x20, 0x40, 0x80
DIAG_B_MUX, DIAG_B_DAT, DIAG_B_DC_POWER = 0x01, 0x02, 0x04
_READER_DIAG_TEXT = (
    (DIAG_A_RF_HARDWARE, "RF hardware error"), (DIAG_A_NOISE, "noise level too high (another reader or a switching "
    "power supply near the antennas?)"), (DIAG_A_FALSE_POWER, "false RF power"), (DIAG_A_TEMP_WARNING, "temperature "
    "warning"), (DIAG_A_SYNC, "synchronisation timeout"), (DIAG_A_TEMP_ALARM, "temperature alarm: the reader switches "
    "its RF off"),
)


# --------------------------------------------------------------------------
# CRC and frames
# --------------------------------------------------------------------------


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ CRC_POLYNOMIAL if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def crc16(data: bytes) -> int:
    """CRC16 over ``data``: polynomial 0x8408 reflected, preset 0xFFFF, no final XOR (CRC-16/MCRF4XX). On the wire the
    low byte goes first (H01113 §3.2)."""
    crc = CRC_PRESET
    table = _CRC_TABLE
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc


def _with_crc(body: bytes) -> bytes:
    crc = crc16(body)
    return body + bytes((crc & 0xFF, crc >> 8))


def encode_request(address: int, command: int, data: bytes = b"", advanced: bool = True) -> bytes:
    """A host -> reader frame. Advanced: STX, ALENGTH (MSB first), COM-ADR, CONTROL-BYTE, DATA, CRC16 (LSB first);
    standard: LENGTH, COM-ADR, CONTROL-BYTE, DATA, CRC16 (H01113 §3.2)."""
    if advanced:
        length = 7 + len(data)
        return _with_crc(bytes((STX, length >> 8, length & 0xFF, address, command)) + data)
    length = 5 + len(data)
    if length > STANDARD_MAX:
        raise ValueError(f"{len(data)} data bytes do not fit a standard frame")
    return _with_crc(bytes((length, address, command)) + data)


def encode_answer(address: int, command: int, status: int, data: bytes = b"", advanced: bool = True) -> bytes:
    """A reader -> host frame: as a request with the STATUS byte after the CONTROL-BYTE (H01113 §3.2)."""
    if not advanced and 6 + len(data) > STANDARD_MAX:
        advanced = True  # a longer answer is always advanced (H60301 p.17)
    if advanced:
        length = 8 + len(data)
        return _with_crc(bytes((STX, length >> 8, length & 0xFF, address, command, status)) + data)
    return _with_crc(bytes((6 + len(data), address, command, status)) + data)


@dataclass(frozen=True)
class Frame:
    """One decoded frame. ``status`` is None for a request (host -> reader)."""

    advanced: bool
    address: int
    command: int
    status: int | None
    data: bytes


class FrameDecoder:
    """Splits a byte stream into frames of either kind. Feig frames have no delimiter, so a damaged frame is skipped
    one byte at a time until a frame checks again; ``expire()`` (the line has been quiet) gives up on a frame whose
    announced length never arrives. Each damaged stretch counts once, in the counter of its first fault."""

    def __init__(self, answers: bool = True):
        self.answers = answers  # reader -> host frames carry a STATUS byte
        self.stats = DecoderStats()
        self.last_error: FrameRejection | None = None
        self._buffer = bytearray()
        self._offset = 0  # stream offset of _buffer[0]
        self._damaged = False  # inside a damaged stretch: further faults are not counted again

    @property
    def pending_bytes(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        return self._parse(final=False)

    def expire(self) -> list[Frame]:
        """No more bytes are coming for the frame in progress: skip to any whole frame inside what is held."""
        frames = []
        while self._buffer:
            frames += self._parse(final=True)
            if self._buffer:
                self._reject("runts", "frame cut short: the line went quiet before its announced length", 1)
        self._damaged = False  # the quiet line ends the damaged stretch
        return frames

    def reset(self) -> None:
        self._buffer.clear()
        self._damaged = False

    def _parse(self, final: bool) -> list[Frame]:
        frames = []
        buffer = self._buffer
        extra = 1 if self.answers else 0
        while buffer:
            advanced = buffer[0] == STX
            if advanced:
                if len(buffer) < 3:
                    break
                length = (buffer[1] << 8) | buffer[2]
                minimum = ADVANCED_MIN - 1 + extra
            else:
                length = buffer[0]
                minimum = STANDARD_MIN - 1 + extra
            if length < minimum:
                self._reject("runts", f"length {length} below the minimum {minimum}", 1)
                continue
            if length > MAX_FRAME_BYTES:
                self._reject("oversize", f"length {length} above {MAX_FRAME_BYTES}", 1)
                continue
            if len(buffer) < length:
                if final:
                    self._reject("runts", f"announced {length} bytes, {len(buffer)} arrived", 1)
                    continue
                break
            frame = bytes(buffer[:length])
            if crc16(frame[:-2]) != frame[-2] | (frame[-1] << 8):
                self._reject("crc_errors", f"CRC mismatch in a {length}-byte frame", 1)
                continue
            head = 3 if advanced else 1
            status = frame[head + 2] if self.answers else None
            frames.append(Frame(advanced, frame[head], frame[head + 1], status, frame[head + 2 + extra:-2]))
            del buffer[:length]
            self._offset += length
            self._damaged = False
            self.stats.frames_ok += 1
        return frames

    def _reject(self, counter: str, reason: str, skip: int) -> None:
        if not self._damaged:
            setattr(self.stats, counter, getattr(self.stats, counter) + 1)
            self.last_error = FrameRejection(counter, reason, self._offset, len(self._buffer))
            self._damaged = True
        del self._buffer[:skip]
        self._offset += skip
        self.stats.bytes_discarded += skip

    def note_malformed(self, reason: str) -> None:
        """A CRC-valid frame whose data does not fit its command's layout."""
        self.stats.malformed += 1
        self.last_error = FrameRejection("malformed", reason, self._offset, 0)


# --------------------------------------------------------------------------
# Command data
# --------------------------------------------------------------------------


class FeigFormatError(ValueError):
    """An answer's data does not fit its command's layout."""


@dataclass(frozen=True)
class SoftwareVersion:
    """[0x65] answer: SW-REV (2), D-REV, HW-TYPE, SW-TYPE, TR-TYPE (2) (Amarok79, itek) [, RX-BUF (2), TX-BUF (2) as
    in [0x66] mode 0x00, H90701 §9.5.1]."""

    major: int
    minor: int
    development: int
    hardware_type: int
    reader_type: int
    transponder_types: int
    rx_buffer: int | None = None
    tx_buffer: int | None = None

    @classmethod
    def decode(cls, data: bytes) -> SoftwareVersion:
        if len(data) < 7:
            raise FeigFormatError(f"software version answer of {len(data)} bytes, expected at least 7")
        buffers = (int.from_bytes(data[7:9], "big"), int.from_bytes(data[9:11], "big")) if len(data) >= 11 else ()
        return cls(data[0], data[1], data[2], data[3], data[4], int.from_bytes(data[5:7], "big"), *buffers)

    def encode(self) -> bytes:
        data = bytes((self.major, self.minor, self.development, self.hardware_type, self.reader_type))
        data += self.transponder_types.to_bytes(2, "big")
        if self.rx_buffer is not None and self.tx_buffer is not None:
            data += self.rx_buffer.to_bytes(2, "big") + self.tx_buffer.to_bytes(2, "big")
        return data


@dataclass(frozen=True)
class AntennaRead:
    number: int  # ANT_NR: the reader output (or Feig's decimal multiplexer number, H90202 p.180)
    status: int
    rssi: int


@dataclass(frozen=True)
class TagRecord:
    """One data set of an Inventory answer."""

    uid: bytes  # MSB first, as the reader sends it in host mode (H01113 §3.2): E0 ...
    tr_type: int = TR_TYPE_ISO15693
    dsfid: int = 0
    antennas: tuple[AntennaRead, ...] = ()


def decode_inventory(data: bytes, with_antennas: bool) -> list[TagRecord]:
    """Inventory RESPONSE-DATA: DATA-SETS, then per set TR-TYPE, DSFID, UID (8) (H01113 ch. 7 [0x01] Inventory);
    with the ANT mode per set FLAGS, [TR-TYPE, DSFID, UID_LEN, UID], [ANT_CNT, ANT_CNT x (ANT_NR, ANT_STATUS, RSSI,
    4 reserved)] (FEDM FEDM_ISOTabItem::SetSnr_with_Antenna; H90701 §10.1.1)."""
    if not data:
        raise FeigFormatError("inventory answer without DATA-SETS")
    count, at, records = data[0], 1, []
    try:
        for _ in range(count):
            if not with_antennas:
                tr_type, dsfid, uid = data[at], data[at + 1], data[at + 2:at + 10]
                if len(uid) != 8:
                    raise IndexError
                at += 10
                records.append(TagRecord(bytes(uid), tr_type, dsfid))
                continue
            flags = data[at]
            at += 1
            uid, tr_type, dsfid, antennas = b"", 0, 0, []
            if flags & RECORD_HAS_UID:
                tr_type, dsfid, length = data[at], data[at + 1], data[at + 2]
                uid = bytes(data[at + 3:at + 3 + length])
                if len(uid) != length:
                    raise IndexError
                at += 3 + length
            if flags & RECORD_HAS_ANTENNAS:
                antenna_count = data[at] if flags & RECORD_HAS_UID else 1
                at += 1 if flags & RECORD_HAS_UID else 0
                for _ in range(antenna_count):
                    entry = data[at:at + ANTENNA_ENTRY_BYTES]
                    if len(entry) != ANTENNA_ENTRY_BYTES:
                        raise IndexError
                    antennas.append(AntennaRead(entry[0], entry[1], entry[2]))
                    at += ANTENNA_ENTRY_BYTES
            if uid:
                records.append(TagRecord(uid, tr_type, dsfid, tuple(antennas)))
    except IndexError:
        raise FeigFormatError(f"inventory answer ends inside data set {len(records) + 1} of {count}") from None
    if at != len(data):
        raise FeigFormatError(f"{len(data) - at} bytes after the {count} data sets of an inventory answer")
    return records


def encode_inventory(records: Iterable[TagRecord], with_antennas: bool) -> bytes:
    """The inverse of ``decode_inventory`` (the emulator's answers, the vectors)."""
    records = list(records)
    out = bytearray((len(records),))
    for record in records:
        if not with_antennas:
            out += bytes((record.tr_type, record.dsfid)) + record.uid
            continue
        flags = RECORD_HAS_UID | (RECORD_HAS_ANTENNAS if record.antennas else 0)
        out += bytes((flags, record.tr_type, record.dsfid, len(record.uid))) + record.uid
        if record.antennas:
            out.append(len(record.antennas))
            for antenna in record.antennas:
                out += bytes((antenna.number, antenna.status, antenna.rssi)) + bytes(4)
    return bytes(out)


def inventory_request(channel: Channel, more: bool = False) -> bytes:
    """[0xB0] data of an Inventory on ``channel``'s reader output: 0x01, MODE (ANT, MORE), ANT_SEL."""
    return bytes((ISO_INVENTORY, INVENTORY_ANT | (INVENTORY_MORE if more else 0), channel.antenna_bit))


# --------------------------------------------------------------------------
# Channels: how a table antenna is reached
# --------------------------------------------------------------------------


_CHANNEL_TEXT = re.compile(r"[1-8](\.[1-8]){0,%d}" % MUX_LEVELS)
CHANNEL_NOTATION = "OUTPUT[.MUX[.MUX[.MUX]]], each 1-8 (e.g. '1' for an antenna on reader output 1, '1.3' for " \
                   "multiplexer output 3 on reader output 1, '1.3.5' for output 5 of a multiplexer on that output 3)"


@dataclass(frozen=True, order=True)
class Channel:
    """A table antenna as the reader reaches it: a reader antenna output and the multiplexer outputs on the way, the
    first after the reader (level 1), then the multiplexer cascaded on it (level 2), ..."""

    output: int
    path: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.output <= READER_OUTPUTS:
            raise ValueError(f"reader output {self.output}: the reader has outputs 1-{READER_OUTPUTS}")
        if len(self.path) > MUX_LEVELS or any(not 1 <= out <= MUX_OUTPUTS for out in self.path):
            raise ValueError(f"multiplexer path {self.path}: at most {MUX_LEVELS} levels of outputs 1-{MUX_OUTPUTS}")

    def __str__(self) -> str:
        return ".".join(str(part) for part in (self.output, *self.path))

    @property
    def antenna_bit(self) -> int:
        """ANT_SEL of an Inventory on this channel's output (bit 0: output 1)."""
        return 1 << (self.output - 1)

    @property
    def feig_number(self) -> int:
        """Feig's decimal antenna number of the multiplexer path (H90202 p.180: level 2 output x 10 + level 1 output):
        the number Feig's tools show for this antenna."""
        return sum(out * 10 ** level for level, out in enumerate(self.path))

    def muxes(self) -> list[tuple[int, tuple[int, ...]]]:
        """The multiplexers on the way: (output, path of the multiplexer outputs before it)."""
        return [(self.output, self.path[:level]) for level in range(len(self.path))]


def parse_channel(text: str) -> Channel:
    """A channel as a technician writes it in the table configuration (``CHANNEL_NOTATION``)."""
    cleaned = str(text).strip()
    if not _CHANNEL_TEXT.fullmatch(cleaned):
        raise ValueError(f"channel {text!r}: expected {CHANNEL_NOTATION}")
    output, *path = (int(part) for part in cleaned.split("."))
    return Channel(output, tuple(path))


def default_channels(count: int) -> list[Channel]:
    """Table antennas 1..``count`` on reader output 1: directly for one antenna, through one multiplexer for up to 8,
    through a multiplexer on each output of a first one for up to 64 (1.1.1 ... 1.1.8, 1.2.1, ...)."""
    if count < 1:
        raise ValueError(f"{count} antennas: a table needs at least one")
    if count == 1:
        return [Channel(1)]
    if count <= MUX_OUTPUTS:
        return [Channel(1, (n,)) for n in range(1, count + 1)]
    if count <= MUX_OUTPUTS ** 2:
        return [Channel(1, (n // MUX_OUTPUTS + 1, n % MUX_OUTPUTS + 1)) for n in range(count)]
    raise ValueError(f"{count} antennas: the default wiring reaches {MUX_OUTPUTS ** 2} (two levels of multiplexers on "
                     f"one output); list the channels in the configuration for more")


def check_channels(channels: list[Channel]) -> None:
    """Every channel once, and no antenna where a multiplexer is (a channel cannot be the way to another)."""
    if not channels:
        raise ValueError("no channels: a Feig reader needs at least one antenna")
    seen: set[Channel] = set()
    for channel in channels:
        if channel in seen:
            raise ValueError(f"channel {channel} is listed twice")
        seen.add(channel)
    for channel in channels:
        for other in channels:
            if other.output == channel.output and len(other.path) > len(channel.path) \
                    and other.path[:len(channel.path)] == channel.path:
                raise ValueError(f"channel {channel} is an antenna, but channel {other} puts a multiplexer there")


# --------------------------------------------------------------------------
# Transport
# --------------------------------------------------------------------------


class FeigSerialTransport(SerialTransport):
    """``SerialTransport`` with the reader's parity (factory setting: even, CFG1)."""

    def __init__(self, path: str, baudrate: int = DEFAULT_BAUDRATE, parity: str = DEFAULT_PARITY):
        super().__init__(path, baudrate)
        self.parity = parity

    def open(self) -> None:
        super().open()
        try:
            self._port.parity = self.parity
        except Exception as exc:  # pyserial's ValueError or SerialException
            if (self.device or "").startswith("/dev/pts/"):
                return  # a pseudo-terminal (an emulated reader) has no parity to set
            self.close()
            raise TransportError(f"cannot set parity {self.parity} on {self.path}: {exc}") from exc

    def describe(self) -> str:
        return super().describe() + f" 8{self.parity}1"


# --------------------------------------------------------------------------
# The link
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class FeigTiming:
    """The backend's timing; tests may shorten it, the daemon uses the defaults."""

    answer_timeout_s: float = 2.0  # no valid answer for this long: the reader is gone (as ReaderLink's 2 s) ...
    # ... but an inventory answers once every tag under the antenna has: about 14 ms a tag (docs/feig.md), so a pot of
    # 300 chips takes 4.2 s before its first byte. An inventory gets this long.
    inventory_timeout_s: float = 6.0
    frame_gap_s: float = 0.05  # a frame in progress with no byte for this long is given up
    max_retransmits: int = 2  # a damaged answer, or 0x02/0x83/0x95, asks the step again this many times
    backoff_s: tuple[float, ...] = (1, 2, 4, 8, 16, 30)  # waits between failed connection attempts
    pass_period_s: float = 0.0  # a pass starts no sooner than this after the previous one started (0: at once)
    max_reads_per_poll: int = 64  # bound the work of one poll on a flooding device


@dataclass(frozen=True)
class Request:
    command: int
    data: bytes = b""


class _Refused(Exception):
    """The device is not a reader the table can use as configured: ``incompatible``."""


class _Trouble(Exception):
    """The reader misbehaves: ``down`` and reconnect."""


_Job = Generator[Request, "Frame | None", None]  # sends requests, receives answers (None: damaged)


_EPSILON = 1e-6


class FeigLink(ReconnectingLink):
    """One Feig reader. Call ``poll(now)`` often (every few ms); it never blocks."""

    # The reader answers one command at a time and the next goes out once its answer is taken in: a host that left
    # the answers waiting (the daemon gathers a streaming reader's frames between cycles) would slow the pass.
    paced_by_host = True

    def __init__(
        self,
        transport_factory: Callable[[], Transport],
        *,
        name: str,
        channels: list[Channel],
        bus_address: int = BROADCAST_ADDRESS,
        timing: FeigTiming = FeigTiming(),
    ):
        check_channels(channels)
        if not 0 <= bus_address <= 0xFF:
            raise ValueError(f"bus address {bus_address}: expected 0-254, or 255 for any reader on the line")
        super().__init__(transport_factory, name=name, backoff_s=timing.backoff_s,
                         max_reads_per_poll=timing.max_reads_per_poll, logger=log)
        self.channels = list(channels)
        self.bus_address = bus_address
        self.timing = timing
        self.reader_model: str | None = None  # e.g. "ID ISC.MR102", while up
        self._decoder = FrameDecoder()
        self._job: _Job | None = None
        self._in_flight: Request | None = None
        self._sent_at = 0.0
        self._last_rx_at = 0.0
        self._damaged = False  # a frame was rejected while an answer is awaited
        self._rejections_at_connect = 0
        self._next_pass_at = 0.0
        self._pass_started_at = 0.0
        self._cycle = 0
        self._first_pass = True
        self._rf_output: int | None = None  # the output the reader's RF is on, as far as we set it
        self._mux_state: dict[tuple[int, tuple[int, ...]], int] = {}  # multiplexer -> the output it routes to
        self._faults: dict[int, tuple[int, int]] = {}  # channel index -> (FaultCode, detail) reported
        self._logged: dict[str, object] = {}  # what a once-per-change log line last said

    # ---- connecting ---------------------------------------------------------------------------------

    def _after_open(self, transport: Transport) -> None:
        for _ in range(16):  # whatever the reader had buffered belongs to nobody now
            if not transport.read():
                break

    def _connected(self, now: float) -> None:
        self._decoder = FrameDecoder()
        self._rejections_at_connect = 0
        self._state = LinkState.IDENTIFYING
        self._rf_output, self._mux_state = None, {}
        self._last_rx_at = now
        log.info("%s: connected over %s, identifying the reader", self.name, self._transport_description)
        try:
            self._start_job(self._handshake())
        except TransportError as exc:
            self._go_down(now, str(exc))

    def _handshake(self) -> _Job:
        answer = yield from self._ask(Command.GET_SOFTWARE_VERSION)
        if answer.status != Status.OK:
            raise _Refused(f"the device answers [0x65] Get Software Version with {status_name(answer.status)}")
        version = self._decode(SoftwareVersion.decode, answer.data)
        model = READER_TYPES.get(version.reader_type)
        if model is None:
            raise _Refused(f"the device is a Feig reader of type {version.reader_type}, not one of "
                           f"{', '.join(sorted(READER_TYPES.values()))} (ISO 15693 with ID ISC.ANT.MUX)")
        answer = yield from self._ask(Command.GET_READER_INFO, bytes((READER_INFO_DEVICE_ID,)))
        serial = model
        if answer.status == Status.OK and len(answer.data) >= 4:
            serial = f"{model} {int.from_bytes(answer.data[:4], 'big'):08X}"
        else:
            log.info("%s: no device ID ([0x66] mode 0x80 answered %s); naming the reader by its type", self.name,
                     status_name(answer.status))
        if not PLAIN_SERIAL.fullmatch(serial):
            raise _Refused(f"reader serial '{escaped(serial)}' is refused: letters, digits, space and . _ : / + - only")
        for output, path in sorted({mux for channel in self.channels for mux in channel.muxes()}):
            trouble = yield from self._select(Channel(output, path), route_only=True)
            if trouble is not None:
                raise _Refused(f"cannot reach the multiplexers behind reader output {output}: {trouble[1]}")
            address = mux_address(len(path) + 1)
            answer = yield from self._ask(Command.FU_TRANSPARENT, bytes((FU_SOFTWARE_VERSION, address)))
            where = f"reader output {output}" + "".join(f", multiplexer output {out}" for out in path)
            channels = ", ".join(str(c) for c in self.channels if c.output == output and c.path[:len(path)] == path)
            if answer.status != Status.OK or len(answer.data) < 4 or answer.data[0] != Status.OK:
                status = status_name(answer.status) if answer.status != Status.OK else "no function unit status"
                raise _Refused(f"no ID ISC.ANT.MUX answers at {where} (address {mux_address(len(path) + 1)}), but "
                               f"channels {channels} need one there ({status}): check the cabling and its address")
            if answer.data[3] != FU_SW_TYPE_HF_MUX:
                raise _Refused(f"the function unit at {where} is of type {answer.data[3]}, not an ID ISC.ANT.MUX "
                               f"({FU_SW_TYPE_HF_MUX})")
        self._came_up(version, model, serial)

    def _came_up(self, version: SoftwareVersion, model: str, serial: str) -> None:
        identity = IdentifyReply(
            0, PROTOCOL_MAJOR, PROTOCOL_MINOR, version.major, version.minor, version.development, serial,
            len(self.channels), TagTechnology.ISO15693, Capability(0),
        )
        self.reader_model = model
        self._first_pass = True
        self._cycle = 0
        self._next_pass_at = self._now
        log.info("%s: up: %s, firmware %d.%d.%d, %d channels", self.name, serial, version.major, version.minor,
                 version.development, len(self.channels))
        self._went_up(identity)
        # Every antenna is inventoried afresh in the first pass (flag REQUESTED), as after a REQUEST_INVENTORY.
        self._emit("inventory_requested")

    # ---- polling and going down ---------------------------------------------------------------------

    def _poll_connected(self, now: float) -> None:
        try:
            self._receive(now)
            if self._transport is not None:
                self._supervise(now)
        except _Trouble as exc:
            self._go_down(now, str(exc))
        except _Refused as exc:
            self._refuse(now, str(exc))

    def _handshake_failure(self, reason: str) -> tuple[str, str]:
        rejected = self._decoder.stats.frames_rejected - self._rejections_at_connect
        if not rejected:
            return "connect_failed", f"handshake failed: {reason}"
        # It talks, but nothing it says is a Feig frame: another device, or another baud rate or parity.
        rejection = self._decoder.last_error or self._last_rejection
        why = rejection.reason if rejection else "no frame checks"
        return "incompatible", (f"the device answers, but not in Feig's ISO-host protocol ({rejected} frame(s) "
                                f"rejected: {why}); is it a Feig reader at this baud rate and parity?")

    def _drop_connection(self, reason: str) -> None:
        if self._job is not None:
            self._job.close()
        self._job = None
        self._in_flight = None
        self._damaged = False
        self.reader_model = None

    def _frame_decoder(self) -> FrameDecoder:
        return self._decoder

    # ---- receiving and supervising ------------------------------------------------------------------

    def _take_in(self, now: float, data: bytes) -> None:
        self._last_rx_at = now
        discarded = self._decoder.stats.bytes_discarded
        for frame in self._decoder.feed(data):
            self._answer(frame)
            if self._transport is None:
                return
        if self._decoder.stats.bytes_discarded != discarded and self._in_flight is not None:
            self._damaged = True

    def _supervise(self, now: float) -> None:
        if self._damaged and self._in_flight is not None and now - self._last_rx_at >= self.timing.frame_gap_s:
            for frame in self._decoder.expire():
                self._answer(frame)
            if self._damaged and self._in_flight is not None:  # the answer was damaged: let the job decide
                self._damaged = False
                self._deliver(None)
        elif self._decoder.pending_bytes and now - self._last_rx_at >= self.timing.frame_gap_s:
            for frame in self._decoder.expire():
                self._answer(frame)
        if self._transport is None:
            return
        if self._in_flight is not None:
            command = self._in_flight.command
            limit = self.timing.inventory_timeout_s if command == Command.ISO_HOST else self.timing.answer_timeout_s
            if now - self._sent_at >= limit - _EPSILON:
                raise _Trouble(f"no answer to [0x{command:02X}] within {limit:g} s")
            return
        if self._job is None and self._state is LinkState.UP and now >= self._next_pass_at - _EPSILON:
            self._pass_started_at = now
            self._next_pass_at = now + self.timing.pass_period_s
            self._start_job(self._pass())

    def _answer(self, frame: Frame) -> None:
        request = self._in_flight
        if self.bus_address != BROADCAST_ADDRESS and frame.address != self.bus_address:
            self._counters.stale_replies += 1  # another reader on the RS-485 bus
            return
        if request is None or frame.command != request.command:
            self._counters.stale_replies += 1  # e.g. a late answer to a step asked again
            return
        self._damaged = False
        self._deliver(frame)

    # ---- jobs: the handshake and the passes --------------------------------------------------------

    def _start_job(self, job: _Job) -> None:
        self._job = job
        self._advance(lambda: next(job))

    def _deliver(self, answer: Frame | None) -> None:
        self._in_flight = None
        job = self._job
        if job is not None:
            self._advance(lambda: job.send(answer))

    def _advance(self, step: Callable[[], Request]) -> None:
        try:
            request = step()
        except StopIteration:
            self._job = None
            return
        self._write(request)

    def _write(self, request: Request) -> None:
        data = encode_request(self.bus_address, request.command, request.data)
        self._in_flight = request
        self._sent_at = self._now
        assert self._transport is not None, "a request is written only while a transport is open"
        self._transport.write(data)
        self._counters.bytes_sent += len(data)

    def _ask(self, command: int, data: bytes = b"") -> Generator[Request, Frame | None, Frame]:
        """A step that can simply be asked again when its answer arrives damaged."""
        for _ in range(self.timing.max_retransmits + 1):
            answer = yield Request(command, data)
            if answer is not None:
                return answer
            self._counters.retransmits += 1
        raise _Trouble(f"{self.timing.max_retransmits + 1} damaged answers in a row to [0x{command:02X}]")

    def _decode(self, decoder: Callable[[bytes], Any], data: bytes) -> Any:
        try:
            return decoder(data)
        except FeigFormatError as exc:
            self._decoder.note_malformed(str(exc))
            raise _Trouble(f"malformed answer: {exc}") from exc

    def _pass(self) -> _Job:
        cycle = self._cycle
        self._cycle = (self._cycle + 1) & 0xFFFFFFFF
        requested = self._first_pass
        self._first_pass = False
        last = len(self.channels) - 1
        round_robin = cycle % len(self.channels)  # the channel whose diagnostic this pass reads
        for index, channel in enumerate(self.channels):
            entries, fault = yield from self._read_channel(channel)
            if fault is not None:
                code, detail, why, ask_diagnostic = fault
                if ask_diagnostic:  # the diagnostic tells which fault it is
                    named = yield from self._diagnose(index, channel, readable=False)
                    if named is not None:
                        code, detail, why = named
                self._fault(index, channel, code, detail or 0, why)  # 0: no status came with the fault
                continue  # its contents are unknown, not empty: no Inventory for it this pass
            if index == round_robin:
                yield from self._diagnose(index, channel, readable=True)
            if index in self._faults:
                del self._faults[index]
                log.info("%s: channel %s (antenna %d) reads again", self.name, channel, index + 1)
                self._emit("antenna_fault", message=AntennaFault(self._take_seq(), index, FaultCode.CLEARED, 0))
            flags = (InventoryFlag.REQUESTED if requested else InventoryFlag(0)) | \
                (InventoryFlag.CYCLE_END if index == last else InventoryFlag(0))
            self._emit("inventory", message=Inventory(self._take_seq(), index, cycle, flags, tuple(entries or ())))

    def _read_channel(self, channel: Channel) -> Generator[Request, Frame | None, tuple[
            list[TagEntry] | None, tuple[FaultCode, int | None, str, bool] | None]]:
        """RF to the channel, RF reset, inventory; (entries, None), or (None, (code, detail, why, diagnose?))."""
        trouble = yield from self._select(channel)
        if trouble is not None:
            return None, (FaultCode.OPEN, trouble[0], trouble[1], False)
        status: int | None = Status.OK
        for attempt in range(self.timing.max_retransmits + 1):
            if attempt:
                self._counters.retransmits += 1
            answer = yield from self._ask(Command.RF_RESET)
            if answer.status != Status.OK:
                self._check_reader_status(answer.status, "[0x69] RF Reset")
                status = answer.status
                break
            result = yield from self._inventory(channel)
            if result is None:
                continue  # an answer arrived damaged: the tags it named are quiet now, so start again with the reset
            status, records = result
            if status in (Status.OK, Status.NO_TRANSPONDER, Status.DATA_BUFFER_OVERFLOW):
                if status == Status.DATA_BUFFER_OVERFLOW:
                    log.error("%s: channel %s: the reader's buffer overflowed (0x93); tags beyond it are missing",
                              self.name, channel)
                return self._entries(records), None
            if status not in RETRIED_STATUSES:
                break
        self._check_reader_status(status, f"the inventory of channel {channel}")
        if status == Status.RF_WARNING:
            return None, (FaultCode.TUNING, status, "RF warning (0x84)", True)
        if status in RETRIED_STATUSES:
            return None, (FaultCode.TUNING, status, f"{status_name(status)} {self.timing.max_retransmits + 1} times "
                          "(noise, or a detuned antenna)", True)
        if status == Status.HARDWARE_WARNING:
            log.error("%s: the reader reports a hardware warning (0xF1)", self.name)
            return None, (FaultCode.TUNING, status, "hardware warning (0xF1)", True)
        reason = f"channel {channel}: the inventory ended with {status_name(status)}"
        self._counters.commands_failed += 1
        self._last_error = reason
        log.warning("%s: %s", self.name, reason)
        self._emit("command_failed", reason=reason)
        return None, (FaultCode.TUNING, status, status_name(status), False)

    def _inventory(self, channel: Channel) -> Generator[Request, Frame | None,
                                                         tuple[int | None, list[TagRecord]] | None]:
        answer = yield Request(Command.ISO_HOST, inventory_request(channel))
        records: list[TagRecord] = []
        while True:
            if answer is None:
                return None
            if answer.status in INVENTORY_DATA_STATUSES and answer.data:
                records += self._decode(lambda data: decode_inventory(data, with_antennas=True), answer.data)
            if answer.status != Status.MORE_DATA:
                return answer.status, records
            answer = yield Request(Command.ISO_HOST, inventory_request(channel, more=True))

    def _entries(self, records: list[TagRecord]) -> list[TagEntry]:
        entries: dict[bytes, TagEntry] = {}
        for record in records:
            if record.tr_type != TR_TYPE_ISO15693 or len(record.uid) != 8:
                self._log_once(f"tr_type:{record.tr_type}", True, "%s: ignoring a tag of transponder type 0x%02X "
                               "(the table reads ISO 15693)", self.name, record.tr_type)
                continue
            # One read per inventory; the ANT record's RSSI is a reader level, not dBm (TagEntry.rssi is dBm).
            entries[record.uid] = TagEntry(record.uid, 1, None)
        return list(entries.values())

    def _select(self, channel: Channel, route_only: bool = False
                ) -> Generator[Request, Frame | None, tuple[int | None, str] | None]:
        """Route the reader's RF to ``channel``; None, or (status, why) when a multiplexer does not follow."""
        if self._rf_output != channel.output:
            answer = yield from self._ask(Command.RF_ON_OFF, bytes((channel.output,)))
            if answer.status != Status.OK:
                self._check_reader_status(answer.status, f"[0x6A] RF on output {channel.output}")
                return answer.status, f"RF on output {channel.output}: {status_name(answer.status)}"
            self._rf_output = channel.output
            self._mux_state.clear()  # whether a multiplexer keeps its channel while its output is off is unverified
        for level, out in enumerate(channel.path, start=1):
            key = (channel.output, channel.path[:level - 1])
            if self._mux_state.get(key) == out:
                continue
            self._mux_state.pop(key, None)
            answer = yield from self._ask(Command.FU_TRANSPARENT,
                                          bytes((FU_SELECT_CHANNEL, mux_address(level), out, 0)))
            fu_status = answer.data[0] if answer.status == Status.OK and answer.data else None
            if fu_status != Status.OK:
                why = status_name(answer.status) if answer.status != Status.OK else (
                    "no answer" if fu_status is None else f"multiplexer status {status_name(fu_status)}")
                if not route_only and answer.status in REFUSING_STATUSES:
                    self._check_reader_status(answer.status, "[0xBF] multiplexer select")
                return (answer.status if answer.status != Status.OK else (fu_status or 0)), \
                    f"the level-{level} multiplexer did not switch to output {out} ({why})"
            self._mux_state[key] = out
        return None

    def _diagnose(self, index: int, channel: Channel, readable: bool
                  ) -> Generator[Request, Frame | None, tuple[FaultCode, int, str] | None]:
        """[0x6E] mode 0x01 on the selected channel: reader flags are logged; the antenna's fault, if any, is returned
        (code, detail, why) for a channel that cannot be read and logged for one that still reads."""
        answer = yield from self._ask(Command.READER_DIAGNOSTIC, bytes((DIAG_GENERAL_RF,)))
        if answer.status != Status.OK or len(answer.data) < 2:
            self._log_once("diag", answer.status, "%s: the reader diagnostic [0x6E] answers %s", self.name,
                           status_name(answer.status))
            return None
        flags_a, flags_b = answer.data[0], answer.data[1]
        reader_flags = flags_a & ~(DIAG_A_Z_LOW | DIAG_A_Z_HIGH)
        texts = [text for bit, text in _READER_DIAG_TEXT if reader_flags & bit]
        if texts or self._logged.get("reader_diag"):
            self._log_once("reader_diag", reader_flags, "%s: reader diagnostic: %s", self.name,
                           "; ".join(texts) if texts else "all clear again")
        fault = _antenna_fault_of(flags_a, flags_b)
        if fault is None:
            return None
        code, why = fault
        if readable:
            self._log_once(f"z:{index}", flags_a | flags_b << 8, "%s: channel %s (antenna %d) still reads, but the "
                           "diagnostic says %s", self.name, channel, index + 1, why)
            return None
        return code, flags_a | flags_b << 8, why

    def _fault(self, index: int, channel: Channel, code: FaultCode, detail: int, why: str) -> None:
        if self._faults.get(index) == (code, detail):
            return
        self._faults[index] = (code, detail)
        log.warning("%s: channel %s (antenna %d) cannot be read: %s", self.name, channel, index + 1, why)
        self._emit("antenna_fault", message=AntennaFault(self._take_seq(), index, code, detail))

    def _check_reader_status(self, status: int | None, what: str) -> None:
        if status in REFUSING_STATUSES:
            hints: dict[int | None, str] = {
                Status.LOGIN_REQUEST: "; the reader wants [0xA0] Reader-Login: clear its READER-ID in Feig's tool",
                Status.PARAMETER_RANGE_ERROR: "; the configuration names an output or a multiplexer channel the "
                                              "reader does not have",
                Status.FIRMWARE_ACTIVATION_REQUIRED: "; activate the firmware with Feig's tool",
            }
            raise _Refused(f"the reader refuses {what}: {status_name(status)}{hints.get(status, '')}")

    # ---- logging ------------------------------------------------------------------------------------

    def _log_once(self, key: str, value: object, message: str, *args: object) -> None:
        if self._logged.get(key) != value:
            self._logged[key] = value
            log.warning(message, *args)


def _antenna_fault_of(flags_a: int, flags_b: int) -> tuple[FaultCode, str] | None:
    """The fault a [0x6E] mode 0x01 answer names for the selected antenna, if any."""
    if flags_b & DIAG_B_DC_POWER:
        return FaultCode.OVERCURRENT, "the DC power to the antenna or multiplexer fails (a short on the cable?)"
    if flags_b & DIAG_B_MUX:
        return FaultCode.OPEN, "the multiplexer is not OK (cable, power or address)"
    z = flags_a & (DIAG_A_Z_LOW | DIAG_A_Z_HIGH)
    if z == DIAG_A_Z_HIGH:
        return FaultCode.OPEN, "antenna impedance above 50 ohm (antenna or cable open)"
    if z == DIAG_A_Z_LOW:
        return FaultCode.SHORT, "antenna impedance below 50 ohm (antenna or cable shorted)"
    if z:
        return FaultCode.TUNING, "antenna phase error (detuned: metal or another antenna too close?)"
    return None
