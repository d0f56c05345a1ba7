"""Messages of the reader <-> host wire protocol and their payload layouts.

Every message is a frozen dataclass carrying the frame sequence number ``seq``
plus its own fields. ``encode_message`` turns a message into the complete
wire frame (COBS-encoded, 0x00-terminated); ``decode_payload`` turns the
payload of a received frame back into a message. The byte layouts are
specified in docs/protocol.md; all payload integers are little endian.

Decoding is strict: a payload that is too short, too long or holds a value
the layout forbids raises ``MalformedPayloadError`` naming the field and its
byte offset within the payload. Enumerated values and flag bits that this
host does not know are kept as plain integers (newer minor versions may add
them); they are not errors.

``message_to_dict`` / ``message_from_dict`` convert to and from the JSON-able
form used by the test vectors in docs/protocol.md.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 0

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


class InventoryFlag(enum.IntFlag):
    MORE = 0x01  # another INVENTORY frame for the same antenna and cycle follows
    REQUESTED = 0x02  # part of a REQUEST_INVENTORY pass, not of the schedule
    CYCLE_END = 0x04  # the last INVENTORY frame of its cycle: the cycle is complete


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


def _enum_table(enum_cls: type[enum.IntEnum]) -> tuple[int, ...]:
    """Byte value -> enum member, or the plain int for values we do not know."""
    known = {int(member): member for member in enum_cls}
    return tuple(known.get(value, value) for value in range(256))


# Lookup tables: building enum members per decoded frame is slow, indexing is not.
_FAULT_CODES = _enum_table(FaultCode)
_OUTPUT_KINDS = _enum_table(OutputKind)
_OUTPUT_PATTERNS = _enum_table(OutputPattern)
_ACK_RESULTS = _enum_table(AckResult)
_NAK_REASONS = _enum_table(NakReason)
_INVENTORY_FLAGS = tuple(InventoryFlag(value) for value in range(256))
_TAG_TECHNOLOGIES = tuple(TagTechnology(value) for value in range(256))


# --------------------------------------------------------------------------
# Message classes
# --------------------------------------------------------------------------

# Field metadata tells the dict conversion how to render a value.
def _enum_field(enum_cls: type[enum.Enum]) -> Any:
    return field(metadata={"enum": enum_cls})


def _flags_field(flag_cls: type[enum.IntFlag]) -> Any:
    return field(metadata={"flags": flag_cls})


def _hex_field() -> Any:
    return field(metadata={"hex": True})


class Message:
    """Common base of all messages; ``MSG_TYPE`` is the wire type byte."""

    __slots__ = ()
    MSG_TYPE: ClassVar[MessageType]
    seq: int


@dataclass(frozen=True, slots=True)
class TagEntry:
    """One tag seen on one antenna during one inventory cycle."""

    uid: bytes = _hex_field()
    read_count: int  # reads during the dwell, saturating at 255; 0 = not counted
    rssi: int | None  # dBm; None when the reader does not measure it


# Decoding builds many TagEntry objects; the frozen-dataclass __init__ costs
# about twice as much as filling the slots directly, so the decoder does that.
_new_object = object.__new__
_set_uid = TagEntry.uid.__set__  # type: ignore[attr-defined]
_set_read_count = TagEntry.read_count.__set__  # type: ignore[attr-defined]
_set_rssi = TagEntry.rssi.__set__  # type: ignore[attr-defined]


def _new_tag_entry(uid: bytes, read_count: int, rssi: int | None) -> TagEntry:
    entry = _new_object(TagEntry)
    _set_uid(entry, uid)
    _set_read_count(entry, read_count)
    _set_rssi(entry, rssi)
    return entry


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
    kind: OutputKind | int = _enum_field(OutputKind)
    index: int
    pattern: OutputPattern | int = _enum_field(OutputPattern)
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
    tag_technologies: TagTechnology | int = _flags_field(TagTechnology)
    capabilities: Capability | int = _flags_field(Capability)


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
    unparsed: bytes = _hex_field()


@dataclass(frozen=True, slots=True)
class Inventory(Message):
    """Reader -> host: the tags one antenna saw in one inventory cycle."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.INVENTORY
    seq: int
    antenna: int
    cycle: int
    flags: InventoryFlag | int = _flags_field(InventoryFlag)
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
    fault: FaultCode | int = _enum_field(FaultCode)
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
    result: AckResult | int = _enum_field(AckResult)


@dataclass(frozen=True, slots=True)
class Nak(Message):
    """Reader -> host: a CRC-valid command could not be understood."""

    MSG_TYPE: ClassVar[MessageType] = MessageType.NAK
    seq: int
    rejected_seq: int
    received_type: int
    reason: NakReason | int = _enum_field(NakReason)


MESSAGE_CLASSES: tuple[type[Message], ...] = (
    Identify,
    SetSchedule,
    SetOutput,
    Reset,
    RequestInventory,
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
    """Return ``reply`` if its protocol major version is ours, else raise a clear error."""
    if isinstance(reply, IncompatibleIdentifyReply) or reply.protocol_major != PROTOCOL_MAJOR:
        raise IncompatibleProtocolError(
            f"reader speaks protocol {reply.protocol_major}.{reply.protocol_minor}, "
            f"this host speaks {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}; the major versions must "
            f"match, so update the host software or the reader firmware"
        )
    return reply


# --------------------------------------------------------------------------
# Fixed layouts
# --------------------------------------------------------------------------

_FORMAT_RANGES = {
    "B": (0, 0xFF),
    "b": (-0x80, 0x7F),
    "H": (0, 0xFFFF),
    "h": (-0x8000, 0x7FFF),
    "I": (0, 0xFFFFFFFF),
}


class _Layout:
    """A run of fixed-size little-endian fields with names for error messages."""

    def __init__(self, type_name: str, spec: list[tuple[str, str]]) -> None:
        self.type_name = type_name
        self.names = [name for name, _ in spec]
        self.formats = [fmt for _, fmt in spec]
        self.struct = struct.Struct("<" + "".join(self.formats))
        self.size = self.struct.size
        self.offsets = []
        offset = 0
        for fmt in self.formats:
            self.offsets.append(offset)
            offset += struct.calcsize("<" + fmt)

    def unpack(self, payload: bytes, offset: int = 0, *, last: bool = True) -> tuple:
        """Unpack at ``offset``; with ``last`` the payload must end right after."""
        end = offset + self.size
        available = len(payload)
        if available < end or (last and available > end):
            raise self._length_error(available, offset)
        return self.struct.unpack_from(payload, offset)

    def _length_error(self, available: int, offset: int) -> MalformedPayloadError:
        if available > offset + self.size:
            extra = available - offset - self.size
            if not self.names:
                return MalformedPayloadError(
                    self.type_name, "payload", offset, f"{extra} byte(s), but this message has none"
                )
            return MalformedPayloadError(
                self.type_name,
                self.names[-1],
                offset + self.offsets[-1],
                f"{extra} unexpected byte(s) after this last field",
            )
        for name, field_offset, fmt in zip(self.names, self.offsets, self.formats):
            field_end = offset + field_offset + struct.calcsize("<" + fmt)
            if field_end > available:
                return MalformedPayloadError(
                    self.type_name,
                    name,
                    offset + field_offset,
                    f"payload ends after {available} byte(s), field needs {field_end}",
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def pack(self, values: tuple) -> bytes:
        for name, fmt, value in zip(self.names, self.formats, values):
            low, high = _FORMAT_RANGES[fmt]
            _check_int(self.type_name, name, value, low, high)
        return self.struct.pack(*values)


def _check_int(type_name: str, field_name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldValueError(type_name, field_name, f"expected an integer, got {value!r}")
    if not low <= value <= high:
        raise FieldValueError(type_name, field_name, f"{value} is outside {low}..{high}")
    return value


_IDENTIFY = _Layout("IDENTIFY", [("protocol_major", "B"), ("protocol_minor", "B")])
_SCHEDULE_HEAD = _Layout("SET_SCHEDULE", [("slot_count", "B")])
_SET_OUTPUT = _Layout(
    "SET_OUTPUT", [("kind", "B"), ("index", "B"), ("pattern", "B"), ("duration_ms", "H")]
)
_RESET = _Layout("RESET", [])
_REQUEST_INVENTORY = _Layout("REQUEST_INVENTORY", [])
_IDENTIFY_REPLY_HEAD = _Layout(
    "IDENTIFY_REPLY",
    [
        ("protocol_major", "B"),
        ("protocol_minor", "B"),
        ("firmware_major", "B"),
        ("firmware_minor", "B"),
        ("firmware_patch", "B"),
        ("serial_length", "B"),
    ],
)
_IDENTIFY_REPLY_TAIL = _Layout(
    "IDENTIFY_REPLY",
    [("antenna_count", "B"), ("tag_technologies", "B"), ("capabilities", "H")],
)
_INVENTORY_HEAD = _Layout(
    "INVENTORY", [("antenna", "B"), ("cycle", "I"), ("flags", "B"), ("entry_count", "B")]
)
_ANTENNA_FAULT = _Layout("ANTENNA_FAULT", [("antenna", "B"), ("fault", "B"), ("detail", "H")])
_STATUS = _Layout(
    "STATUS",
    [
        ("uptime_ms", "I"),
        ("temperature_tenths_c", "h"),
        ("rx_frames_ok", "I"),
        ("rx_crc_errors", "I"),
        ("rx_framing_errors", "I"),
        ("rx_malformed", "I"),
        ("tx_frames_dropped", "I"),
    ],
)
_HEARTBEAT = _Layout("HEARTBEAT", [("uptime_ms", "I")])
_ACK = _Layout("ACK", [("acked_seq", "H"), ("result", "B")])
_NAK = _Layout("NAK", [("rejected_seq", "H"), ("received_type", "B"), ("reason", "B")])
_SCHEDULE_SLOT = struct.Struct("<BH")


# --------------------------------------------------------------------------
# Payload encoders
# --------------------------------------------------------------------------


def _encode_serial(serial: Any) -> bytes:
    if not isinstance(serial, str):
        raise FieldValueError("IDENTIFY_REPLY", "serial", f"expected a string, got {serial!r}")
    if len(serial) > MAX_SERIAL_LENGTH:
        raise FieldValueError(
            "IDENTIFY_REPLY", "serial", f"{len(serial)} characters, at most {MAX_SERIAL_LENGTH}"
        )
    for index, char in enumerate(serial):
        if not " " <= char <= "~":
            raise FieldValueError(
                "IDENTIFY_REPLY", "serial", f"character {index} ({char!r}) is not printable ASCII"
            )
    return serial.encode("ascii")


def _encode_identify_reply(msg: IdentifyReply) -> bytes:
    if msg.protocol_major != PROTOCOL_MAJOR:
        raise FieldValueError(
            "IDENTIFY_REPLY",
            "protocol_major",
            f"this layout is protocol {PROTOCOL_MAJOR}; use IncompatibleIdentifyReply for others",
        )
    serial = _encode_serial(msg.serial)
    head = _IDENTIFY_REPLY_HEAD.pack(
        (
            msg.protocol_major,
            msg.protocol_minor,
            msg.firmware_major,
            msg.firmware_minor,
            msg.firmware_patch,
            len(serial),
        )
    )
    tail = _IDENTIFY_REPLY_TAIL.pack(
        (msg.antenna_count, int(msg.tag_technologies), int(msg.capabilities))
    )
    return head + serial + tail


def _encode_incompatible_identify_reply(msg: IncompatibleIdentifyReply) -> bytes:
    _check_int("IDENTIFY_REPLY", "protocol_major", msg.protocol_major, 0, 0xFF)
    if msg.protocol_major == PROTOCOL_MAJOR:
        raise FieldValueError(
            "IDENTIFY_REPLY", "protocol_major", "equals ours; use IdentifyReply instead"
        )
    _check_int("IDENTIFY_REPLY", "protocol_minor", msg.protocol_minor, 0, 0xFF)
    return bytes((msg.protocol_major, msg.protocol_minor)) + bytes(msg.unparsed)


def _encode_schedule(msg: SetSchedule) -> bytes:
    if len(msg.slots) > MAX_SCHEDULE_SLOTS:
        raise FieldValueError(
            "SET_SCHEDULE", "slots", f"{len(msg.slots)} slots, at most {MAX_SCHEDULE_SLOTS}"
        )
    parts = [bytes((len(msg.slots),))]
    for index, slot in enumerate(msg.slots):
        _check_int("SET_SCHEDULE", f"slots[{index}].antenna", slot.antenna, 0, 0xFF)
        _check_int("SET_SCHEDULE", f"slots[{index}].dwell_ms", slot.dwell_ms, 0, 0xFFFF)
        parts.append(_SCHEDULE_SLOT.pack(slot.antenna, slot.dwell_ms))
    return b"".join(parts)


def _encode_inventory(msg: Inventory) -> bytes:
    entries = msg.entries
    if len(entries) > 0xFF:
        raise FieldValueError("INVENTORY", "entries", f"{len(entries)} entries, at most 255")
    parts = [
        _INVENTORY_HEAD.pack((msg.antenna, msg.cycle, int(msg.flags), len(entries)))
    ]
    for index, entry in enumerate(entries):
        uid = entry.uid
        if not isinstance(uid, (bytes, bytearray)) or len(uid) not in VALID_UID_LENGTHS:
            raise FieldValueError(
                "INVENTORY", f"entries[{index}].uid", f"{uid!r} is not 4, 7, 8 or 10 bytes"
            )
        _check_int("INVENTORY", f"entries[{index}].read_count", entry.read_count, 0, 0xFF)
        if entry.rssi is None:
            rssi = RSSI_NOT_AVAILABLE
        else:
            # 0x7F itself is reserved for "not available"
            rssi = _check_int("INVENTORY", f"entries[{index}].rssi", entry.rssi, -128, 126)
        parts.append(bytes((len(uid),)) + bytes(uid) + struct.pack("<Bb", entry.read_count, rssi))
    return b"".join(parts)


def _encode_status(msg: Status) -> bytes:
    temperature = msg.temperature_tenths_c
    if temperature is None:
        temperature = TEMPERATURE_NOT_AVAILABLE
    elif temperature == TEMPERATURE_NOT_AVAILABLE:
        raise FieldValueError(
            "STATUS", "temperature_tenths_c", "0x7FFF is reserved; use None for no sensor"
        )
    return _STATUS.pack(
        (
            msg.uptime_ms,
            temperature,
            msg.rx_frames_ok,
            msg.rx_crc_errors,
            msg.rx_framing_errors,
            msg.rx_malformed,
            msg.tx_frames_dropped,
        )
    )


_ENCODERS: dict[type[Message], Callable[[Any], bytes]] = {
    Identify: lambda m: _IDENTIFY.pack((m.protocol_major, m.protocol_minor)),
    SetSchedule: _encode_schedule,
    SetOutput: lambda m: _SET_OUTPUT.pack((int(m.kind), m.index, int(m.pattern), m.duration_ms)),
    Reset: lambda m: b"",
    RequestInventory: lambda m: b"",
    IdentifyReply: _encode_identify_reply,
    IncompatibleIdentifyReply: _encode_incompatible_identify_reply,
    Inventory: _encode_inventory,
    AntennaFault: lambda m: _ANTENNA_FAULT.pack((m.antenna, int(m.fault), m.detail)),
    Status: _encode_status,
    Heartbeat: lambda m: _HEARTBEAT.pack((m.uptime_ms,)),
    Ack: lambda m: _ACK.pack((m.acked_seq, int(m.result))),
    Nak: lambda m: _NAK.pack((m.rejected_seq, m.received_type, int(m.reason))),
}


def encode_payload(msg: Message) -> bytes:
    """The payload bytes of ``msg`` (without type, seq, CRC or framing)."""
    try:
        encoder = _ENCODERS[type(msg)]
    except KeyError:
        raise TypeError(f"not a protocol message: {msg!r}") from None
    return encoder(msg)


def encode_message(msg: Message) -> bytes:
    """The complete wire frame for ``msg``: COBS-encoded and 0x00-terminated."""
    # codec imports this module, so import it here rather than at the top.
    from firmware_bridge.codec import encode_frame

    return encode_frame(int(msg.MSG_TYPE), msg.seq, encode_payload(msg))


# --------------------------------------------------------------------------
# Payload decoders
# --------------------------------------------------------------------------


def _decode_identify(seq: int, payload: bytes) -> Identify:
    return Identify(seq, *_IDENTIFY.unpack(payload))


def _decode_schedule(seq: int, payload: bytes) -> SetSchedule:
    (count,) = _SCHEDULE_HEAD.unpack(payload, last=False)
    if count > MAX_SCHEDULE_SLOTS:
        raise MalformedPayloadError(
            "SET_SCHEDULE", "slot_count", 0, f"{count} slots, at most {MAX_SCHEDULE_SLOTS}"
        )
    expected = 1 + 3 * count
    if len(payload) != expected:
        bad_offset = min(len(payload), expected)
        raise MalformedPayloadError(
            "SET_SCHEDULE",
            "slots",
            bad_offset,
            f"{count} slots need {expected} payload bytes, got {len(payload)}",
        )
    slots = tuple(
        ScheduleSlot(antenna, dwell_ms) for antenna, dwell_ms in _SCHEDULE_SLOT.iter_unpack(payload[1:])
    )
    return SetSchedule(seq, slots)


def _decode_set_output(seq: int, payload: bytes) -> SetOutput:
    kind, index, pattern, duration_ms = _SET_OUTPUT.unpack(payload)
    return SetOutput(seq, _OUTPUT_KINDS[kind], index, _OUTPUT_PATTERNS[pattern], duration_ms)


def _decode_reset(seq: int, payload: bytes) -> Reset:
    _RESET.unpack(payload)
    return Reset(seq)


def _decode_request_inventory(seq: int, payload: bytes) -> RequestInventory:
    _REQUEST_INVENTORY.unpack(payload)
    return RequestInventory(seq)


def _decode_identify_reply(seq: int, payload: bytes) -> IdentifyReply | IncompatibleIdentifyReply:
    # The two version bytes come first in every major version, so check them
    # before trusting the rest of the layout.
    if len(payload) >= 2 and payload[0] != PROTOCOL_MAJOR:
        return IncompatibleIdentifyReply(seq, payload[0], payload[1], bytes(payload[2:]))
    major, minor, fw_major, fw_minor, fw_patch, serial_length = _IDENTIFY_REPLY_HEAD.unpack(
        payload, last=False
    )
    if serial_length > MAX_SERIAL_LENGTH:
        raise MalformedPayloadError(
            "IDENTIFY_REPLY", "serial_length", 5, f"{serial_length}, at most {MAX_SERIAL_LENGTH}"
        )
    serial_end = 6 + serial_length
    if len(payload) < serial_end:
        raise MalformedPayloadError(
            "IDENTIFY_REPLY",
            "serial",
            6,
            f"needs {serial_length} byte(s), payload ends after {len(payload)}",
        )
    serial_bytes = payload[6:serial_end]
    for index, char in enumerate(serial_bytes):
        if not 0x20 <= char <= 0x7E:
            raise MalformedPayloadError(
                "IDENTIFY_REPLY", "serial", 6 + index, f"byte 0x{char:02X} is not printable ASCII"
            )
    antenna_count, technologies, capabilities = _IDENTIFY_REPLY_TAIL.unpack(payload, serial_end)
    return IdentifyReply(
        seq,
        major,
        minor,
        fw_major,
        fw_minor,
        fw_patch,
        serial_bytes.decode("ascii"),
        antenna_count,
        _TAG_TECHNOLOGIES[technologies],
        Capability(capabilities),
    )


def _decode_inventory(seq: int, payload: bytes) -> Inventory:
    antenna, cycle, flags, count = _INVENTORY_HEAD.unpack(payload, last=False)
    size = len(payload)
    offset = 7
    entries = []
    append = entries.append
    for index in range(count):
        if offset >= size:
            raise MalformedPayloadError(
                "INVENTORY",
                f"entries[{index}].uid_length",
                offset,
                f"payload ends after {size} byte(s) but entry_count is {count}",
            )
        uid_length = payload[offset]
        if uid_length not in VALID_UID_LENGTHS:
            raise MalformedPayloadError(
                "INVENTORY",
                f"entries[{index}].uid_length",
                offset,
                f"{uid_length} is not a valid UID length (4, 7, 8 or 10)",
            )
        uid_end = offset + 1 + uid_length
        if uid_end + 2 > size:
            raise MalformedPayloadError(
                "INVENTORY",
                f"entries[{index}]",
                offset,
                f"entry needs {uid_length + 3} byte(s), only {size - offset} left",
            )
        rssi = payload[uid_end + 1]
        if rssi == RSSI_NOT_AVAILABLE:
            rssi = None
        elif rssi > 0x7F:
            rssi -= 0x100
        append(_new_tag_entry(payload[offset + 1 : uid_end], payload[uid_end], rssi))
        offset = uid_end + 2
    if offset != size:
        raise MalformedPayloadError(
            "INVENTORY",
            "entries" if count else "entry_count",
            offset,
            f"{size - offset} unexpected byte(s) after {count} entries",
        )
    return Inventory(seq, antenna, cycle, _INVENTORY_FLAGS[flags], tuple(entries))


def _decode_antenna_fault(seq: int, payload: bytes) -> AntennaFault:
    antenna, fault, detail = _ANTENNA_FAULT.unpack(payload)
    return AntennaFault(seq, antenna, _FAULT_CODES[fault], detail)


def _decode_status(seq: int, payload: bytes) -> Status:
    values = _STATUS.unpack(payload)
    temperature = None if values[1] == TEMPERATURE_NOT_AVAILABLE else values[1]
    return Status(seq, values[0], temperature, *values[2:])


def _decode_heartbeat(seq: int, payload: bytes) -> Heartbeat:
    return Heartbeat(seq, *_HEARTBEAT.unpack(payload))


def _decode_ack(seq: int, payload: bytes) -> Ack:
    acked_seq, result = _ACK.unpack(payload)
    return Ack(seq, acked_seq, _ACK_RESULTS[result])


def _decode_nak(seq: int, payload: bytes) -> Nak:
    rejected_seq, received_type, reason = _NAK.unpack(payload)
    return Nak(seq, rejected_seq, received_type, _NAK_REASONS[reason])


# Message type byte -> decoder(seq, payload). The stream decoder uses this
# table directly; decode_payload is the checked entry point.
_DECODERS_BY_TYPE: dict[MessageType, Callable[[int, bytes], Message]] = {
    MessageType.IDENTIFY: _decode_identify,
    MessageType.SET_SCHEDULE: _decode_schedule,
    MessageType.SET_OUTPUT: _decode_set_output,
    MessageType.RESET: _decode_reset,
    MessageType.REQUEST_INVENTORY: _decode_request_inventory,
    MessageType.IDENTIFY_REPLY: _decode_identify_reply,
    MessageType.INVENTORY: _decode_inventory,
    MessageType.ANTENNA_FAULT: _decode_antenna_fault,
    MessageType.STATUS: _decode_status,
    MessageType.HEARTBEAT: _decode_heartbeat,
    MessageType.ACK: _decode_ack,
    MessageType.NAK: _decode_nak,
}
# Plain int keys: the stream decoder looks up raw byte values.
PAYLOAD_DECODERS: dict[int, Callable[[int, bytes], Message]] = {
    int(msg_type): decoder for msg_type, decoder in _DECODERS_BY_TYPE.items()
}


def decode_payload(msg_type: int, seq: int, payload: bytes) -> Message:
    """Build the message for a received frame's type, seq and payload.

    Raises UnknownMessageTypeError or MalformedPayloadError (both ProtocolError).
    """
    decoder = PAYLOAD_DECODERS.get(msg_type)
    if decoder is None:
        raise UnknownMessageTypeError(msg_type)
    return decoder(seq, bytes(payload))


# --------------------------------------------------------------------------
# Dict form (used by the test vectors in docs/protocol.md)
# --------------------------------------------------------------------------

_NESTED_CLASSES: dict[str, type] = {"entries": TagEntry, "slots": ScheduleSlot}


def _flags_to_names(flag_cls: type[enum.IntFlag], value: int) -> list[str]:
    value = int(value)
    names = [member.name for member in flag_cls if value & member.value]
    known_bits = 0
    for member in flag_cls:
        known_bits |= member.value
    unknown = value & ~known_bits
    names += [f"BIT{bit}" for bit in range(unknown.bit_length()) if unknown >> bit & 1]
    return names


def _flags_from_names(flag_cls: type[enum.IntFlag], names: Any, where: str) -> enum.IntFlag:
    if isinstance(names, int):
        return flag_cls(names)
    value = 0
    for name in names:
        if name in flag_cls.__members__:
            value |= flag_cls[name].value
        elif name.startswith("BIT") and name[3:].isdigit():
            value |= 1 << int(name[3:])
        else:
            raise ValueError(f"{where}: unknown flag {name!r} for {flag_cls.__name__}")
    return flag_cls(value)


def _enum_from_name(enum_cls: type[enum.IntEnum], value: Any, where: str) -> int:
    if isinstance(value, int):
        try:
            return enum_cls(value)
        except ValueError:  # a value this host does not know stays a number
            return value
    try:
        return enum_cls[value]
    except KeyError:
        raise ValueError(f"{where}: unknown {enum_cls.__name__} name {value!r}") from None


def _value_to_plain(dc_field: Any, value: Any) -> Any:
    meta = dc_field.metadata
    if "hex" in meta:
        return bytes(value).hex().upper()
    if "flags" in meta:
        return _flags_to_names(meta["flags"], value)
    if "enum" in meta:
        try:
            return meta["enum"](value).name
        except ValueError:  # a value a newer minor version added
            return int(value)
    if dc_field.name in _NESTED_CLASSES:
        return [_dataclass_to_plain(item) for item in value]
    return value


def _dataclass_to_plain(obj: Any) -> dict[str, Any]:
    return {f.name: _value_to_plain(f, getattr(obj, f.name)) for f in fields(obj)}


def _dataclass_from_plain(cls: type, data: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    unknown = set(data) - set(known)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
    values = {}
    for name, value in data.items():
        meta = known[name].metadata
        if "hex" in meta:
            values[name] = bytes.fromhex(value)
        elif "flags" in meta:
            values[name] = _flags_from_names(meta["flags"], value, f"{where}.{name}")
        elif "enum" in meta:
            values[name] = _enum_from_name(meta["enum"], value, f"{where}.{name}")
        elif name in _NESTED_CLASSES:
            values[name] = tuple(
                _dataclass_from_plain(_NESTED_CLASSES[name], item, f"{where}.{name}[{index}]")
                for index, item in enumerate(value)
            )
        else:
            values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:  # missing fields
        raise ValueError(f"{where}: {exc}") from None


def message_to_dict(msg: Message) -> dict[str, Any]:
    """``{"type": "HEARTBEAT", "seq": 1, "uptime_ms": 500}``-style plain data."""
    return {"type": msg.MSG_TYPE.name, **_dataclass_to_plain(msg)}


def message_from_dict(data: dict[str, Any]) -> Message:
    """Inverse of ``message_to_dict``; raises ValueError on unknown names or fields."""
    data = dict(data)
    type_name = data.pop("type", None)
    if type_name not in MessageType.__members__:
        raise ValueError(f"unknown message type name {type_name!r}")
    msg_type = MessageType[type_name]
    if msg_type is MessageType.IDENTIFY_REPLY and data.get("protocol_major") != PROTOCOL_MAJOR:
        cls: type[Message] = IncompatibleIdentifyReply
    else:
        cls = next(c for c in MESSAGE_CLASSES if c.MSG_TYPE is msg_type)
    return _dataclass_from_plain(cls, data, type_name)
