"""The messages of the reader <-> host wire protocol: their types, enumerations, errors and limits.

Every message is a frozen dataclass carrying the frame sequence number ``seq`` plus its own fields; docs/protocol.md
specifies them. Their byte layouts are in :mod:`firmware_bridge.layouts`, their framing in
:mod:`firmware_bridge.codec`, their JSON-able form in :mod:`firmware_bridge.message_json`.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 2

MAX_SERIAL_LENGTH = 32
MAX_SCHEDULE_SLOTS = 64
RSSI_NOT_AVAILABLE = 0x7F  # i8 value meaning "reader did not measure RSSI"
TEMPERATURE_NOT_AVAILABLE = 0x7FFF  # i16 value meaning "no temperature sensor"
VALID_UID_LENGTHS = frozenset({4, 7, 8, 10})  # ISO 14443A: 4/7/10, ISO 15693: 8


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


class ProtocolError(ValueError):
    """Base class of every error raised by the protocol code."""


class UnknownMessageTypeError(ProtocolError):
    """A frame carried a message type this host does not know."""

    def __init__(self, msg_type: int) -> None:
        super().__init__(f"unknown message type 0x{msg_type:02X}")
        self.msg_type = msg_type


class MalformedPayloadError(ProtocolError):
    """A payload does not match the layout of its message type."""

    def __init__(self, type_name: str, field_name: str, offset: int, problem: str) -> None:
        super().__init__(f"{type_name}: field '{field_name}' at payload offset {offset}: {problem}")
        self.type_name = type_name
        self.field_name = field_name
        self.offset = offset


class FieldValueError(ProtocolError):
    """A message to be encoded holds a value its layout cannot carry."""

    def __init__(self, type_name: str, field_name: str, problem: str) -> None:
        super().__init__(f"{type_name}: field '{field_name}': {problem}")
        self.type_name = type_name
        self.field_name = field_name


class IncompatibleProtocolError(ProtocolError):
    """The reader speaks a protocol major version this host does not support."""


# --------------------------------------------------------------------------
# Numbering
# --------------------------------------------------------------------------


class MessageType(enum.IntEnum):
    # Host -> reader commands use 0x01..0x7F.
    IDENTIFY = 0x01
    SET_SCHEDULE = 0x02
    SET_OUTPUT = 0x03
    RESET = 0x04
    REQUEST_INVENTORY = 0x05
    PARK = 0x06  # (1.2)
    # Reader -> host messages use 0x80..0xFF.
    IDENTIFY_REPLY = 0x81
    INVENTORY = 0x82
    ANTENNA_FAULT = 0x83
    STATUS = 0x84
    HEARTBEAT = 0x85
    ACK = 0x86
    NAK = 0x87


class TagTechnology(enum.IntFlag):
    ISO15693 = 0x01
    ISO14443A = 0x02


class Capability(enum.IntFlag):
    RSSI = 0x0001
    READ_COUNTS = 0x0002
    LEDS = 0x0004
    BUZZER = 0x0008
    SCHEDULE = 0x0010
    PARK = 0x0020  # (1.2) PARK: a front end held on one antenna, its known tags kept quiet


class InventoryFlag(enum.IntFlag):
    MORE = 0x01  # another INVENTORY frame for the same antenna and cycle follows
    REQUESTED = 0x02  # part of a REQUEST_INVENTORY pass, not of the schedule
    CYCLE_END = 0x04  # the last INVENTORY frame of its cycle: the cycle is complete
    UNRESOLVED = 0x08  # (1.1) collisions left for the antenna's next dwell: a part of the tags in its field
    QUIET = 0x10  # (1.2) a parked antenna's round: only the tags new since its last report; the others still lie there


class FaultCode(enum.IntEnum):
    CLEARED = 0
    OPEN = 1
    SHORT = 2
    OVERCURRENT = 3
    TUNING = 4


class OutputKind(enum.IntEnum):
    LED = 1
    BUZZER = 2


class OutputPattern(enum.IntEnum):
    OFF = 0
    ON = 1
    BLINK_SLOW = 2
    BLINK_FAST = 3
    PULSE = 4


class AckResult(enum.IntEnum):
    OK = 0
    INVALID_ARGUMENT = 1
    UNSUPPORTED = 2
    BUSY = 3


class NakReason(enum.IntEnum):
    UNKNOWN_TYPE = 1
    MALFORMED_PAYLOAD = 2


# --------------------------------------------------------------------------
# Message classes
# --------------------------------------------------------------------------

# Field metadata tells the dict conversion how to render a value: {"enum": its class}, {"flags": its class}, or HEX.
# Written as field() calls where the fields are declared, so that the type checker knows they have no default.
HEX = {"hex": True}


class Message:
    """Common base of all messages; ``MSG_TYPE`` is the wire type byte."""

    __slots__ = ()
    MSG_TYPE: ClassVar[MessageType]
    __dataclass_fields__: ClassVar[dict[str, Any]]  # every message is a dataclass (dataclasses.replace takes one)
    seq: int


@dataclass(frozen=True, slots=True)
class TagEntry:
    """One tag seen on one antenna during one inventory cycle."""

    uid: bytes = field(metadata=HEX)
    read_count: int  # reads during the dwell, saturating at 255; 0 = not counted
    rssi: int | None  # dBm; None when the reader does not measure it



@dataclass(frozen=True, slots=True)
class ScheduleSlot:
    antenna: int
    dwell_ms: int


@dataclass(frozen=True, slots=True)
class Identify(Message):
    """Host -> reader: who are you? Carries the host's protocol version."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.IDENTIFY
    seq: int
    protocol_major: int = PROTOCOL_MAJOR
    protocol_minor: int = PROTOCOL_MINOR


@dataclass(frozen=True, slots=True)
class SetSchedule(Message):
    """Host -> reader: scan these antennas in this order, each for dwell_ms."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.SET_SCHEDULE
    seq: int
    slots: tuple[ScheduleSlot, ...]

    def __post_init__(self) -> None:
        if type(self.slots) is not tuple:  # keep messages hashable and comparable
            object.__setattr__(self, "slots", tuple(self.slots))


@dataclass(frozen=True, slots=True)
class SetOutput(Message):
    """Host -> reader: drive an LED or buzzer; duration_ms 0 = until changed."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.SET_OUTPUT
    seq: int
    kind: OutputKind | int = field(metadata={"enum": OutputKind})
    index: int
    pattern: OutputPattern | int = field(metadata={"enum": OutputPattern})
    duration_ms: int


@dataclass(frozen=True, slots=True)
class Reset(Message):
    """Host -> reader: reboot after acknowledging."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.RESET
    seq: int


@dataclass(frozen=True, slots=True)
class RequestInventory(Message):
    """Host -> reader: run one full inventory pass over all antennas now."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.REQUEST_INVENTORY
    seq: int


NO_ANTENNA = 0xFF  # PARK's antenna: no antenna is parked


@dataclass(frozen=True, slots=True)
class Park(Message):
    """Host -> reader (1.2): hold ``antenna``'s front end on it with the field on, its known tags quiet, and read
    it whole every ``full_every_ms``; ``NO_ANTENNA``: back to the schedule."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.PARK
    seq: int
    antenna: int
    full_every_ms: int


@dataclass(frozen=True, slots=True)
class IdentifyReply(Message):
    """Reader -> host: answer to IDENTIFY (protocol major version matches ours)."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.IDENTIFY_REPLY
    seq: int
    protocol_major: int
    protocol_minor: int
    firmware_major: int
    firmware_minor: int
    firmware_patch: int
    serial: str
    antenna_count: int
    tag_technologies: TagTechnology | int = field(metadata={"flags": TagTechnology})
    capabilities: Capability | int = field(metadata={"flags": Capability})


@dataclass(frozen=True, slots=True)
class IncompatibleIdentifyReply(Message):
    """Reader -> host: IDENTIFY_REPLY of a protocol major version we do not speak.

    Only the two version bytes are frozen across major versions, so the rest
    of the payload is kept unparsed. Pass it to ``check_compatible`` to get a
    clear error.
    """

    MSG_TYPE: ClassVar[MessageType] = MessageType.IDENTIFY_REPLY
    seq: int
    protocol_major: int
    protocol_minor: int
    unparsed: bytes = field(metadata=HEX)


@dataclass(frozen=True, slots=True)
class Inventory(Message):
    """Reader -> host: the tags one antenna saw in one inventory cycle."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.INVENTORY
    seq: int
    antenna: int
    cycle: int
    flags: InventoryFlag | int = field(metadata={"flags": InventoryFlag})
    entries: tuple[TagEntry, ...] = ()

    def __post_init__(self) -> None:
        if type(self.entries) is not tuple:  # keep messages hashable and comparable
            object.__setattr__(self, "entries", tuple(self.entries))


@dataclass(frozen=True, slots=True)
class AntennaFault(Message):
    """Reader -> host: an antenna fault started, persists or cleared."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.ANTENNA_FAULT
    seq: int
    antenna: int
    fault: FaultCode | int = field(metadata={"enum": FaultCode})
    detail: int = 0  # OVERCURRENT: driver current in mA; TUNING: resonance in kHz


@dataclass(frozen=True, slots=True)
class Status(Message):
    """Reader -> host: periodic health report (every 5 s)."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.STATUS
    seq: int
    uptime_ms: int
    temperature_tenths_c: int | None  # 0.1 degC units; None = no sensor
    rx_frames_ok: int
    rx_crc_errors: int
    rx_framing_errors: int  # bad COBS, oversize or too short
    rx_malformed: int  # unknown type or bad payload
    tx_frames_dropped: int  # transmit queue overflow; they still consumed a seq


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Reader -> host: alive signal every 500 ms."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT
    seq: int
    uptime_ms: int


@dataclass(frozen=True, slots=True)
class Ack(Message):
    """Reader -> host: the command with seq ``acked_seq`` was handled."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.ACK
    seq: int
    acked_seq: int
    result: AckResult | int = field(metadata={"enum": AckResult})


@dataclass(frozen=True, slots=True)
class Nak(Message):
    """Reader -> host: a CRC-valid command could not be understood."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.NAK
    seq: int
    rejected_seq: int
    received_type: int
    reason: NakReason | int = field(metadata={"enum": NakReason})


MESSAGE_CLASSES: tuple[type[Message], ...] = (
    Identify,
    SetSchedule,
    SetOutput,
    Reset,
    RequestInventory,
    Park,
    IdentifyReply,
    IncompatibleIdentifyReply,
    Inventory,
    AntennaFault,
    Status,
    Heartbeat,
    Ack,
    Nak,
)


def check_compatible(reply: IdentifyReply | IncompatibleIdentifyReply) -> IdentifyReply:
    """Return ``reply`` if its protocol major version is ours and its serial plain (``PLAIN_SERIAL``), else raise a
    clear error."""
    if isinstance(reply, IncompatibleIdentifyReply) or reply.protocol_major != PROTOCOL_MAJOR:
        raise IncompatibleProtocolError(
            f"reader speaks protocol {reply.protocol_major}.{reply.protocol_minor}, "
            f"this host speaks {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}; the major versions must "
            f"match, so update the host software or the reader firmware"
        )
    if not PLAIN_SERIAL.fullmatch(reply.serial):
        # The serial goes into events, the diagnostics and the log, and from there to web pages and terminals.
        raise IncompatibleProtocolError(
            f"reader serial '{escaped(reply.serial)}' is refused: a serial may hold only letters, digits, space "
            f"and . _ : / + - (set the reader's name in its configuration)"
        )
    return reply


# What a reader's serial may hold: it is printed in events, logs, the diagnostics and pages.
PLAIN_SERIAL = re.compile(r"[A-Za-z0-9._:/+ -]{0,%d}" % MAX_SERIAL_LENGTH)


def escaped(text: str) -> str:
    """``text`` with every character a serial may not hold written as ``\\xNN`` (or ``\\uNNNN``): fit for any log
    line, terminal or page."""
    return "".join(char if PLAIN_SERIAL.fullmatch(char) else
                   (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}") for char in text)
