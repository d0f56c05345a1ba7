"""The byte layouts of the protocol's payloads: a message to its payload and back (docs/protocol.md).

All payload integers are little endian. Decoding is strict: a payload that is too short, too long or holds a value
the layout forbids raises ``MalformedPayloadError`` naming the field and its byte offset within the payload.
Enumerated values and flag bits that this host does not know are kept as plain integers (newer minor versions may
add them); they are not errors. Framing (type, seq, CRC, COBS) is :mod:`firmware_bridge.codec`'s.
"""

from __future__ import annotations

import enum
import struct
from typing import Any, Callable

from firmware_bridge.message_types import (
    MAX_SCHEDULE_SLOTS,
    MAX_SERIAL_LENGTH,
    PROTOCOL_MAJOR,
    RSSI_NOT_AVAILABLE,
    TEMPERATURE_NOT_AVAILABLE,
    VALID_UID_LENGTHS,
    Ack,
    AckResult,
    AntennaFault,
    Capability,
    FaultCode,
    FieldValueError,
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
    OutputPattern,
    Park,
    RequestInventory,
    Reset,
    ScheduleSlot,
    SetOutput,
    SetSchedule,
    Status,
    TagEntry,
    TagTechnology,
    UnknownMessageTypeError,
)

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


# Decoding builds many TagEntry objects; the frozen-dataclass __init__ costs
# about twice as much as filling the slots directly, so the decoder does that.
_new_object = object.__new__
_set_uid = vars(TagEntry)["uid"].__set__  # the slots' descriptors
_set_read_count = vars(TagEntry)["read_count"].__set__
_set_rssi = vars(TagEntry)["rssi"].__set__


def _new_tag_entry(uid: bytes, read_count: int, rssi: int | None) -> TagEntry:
    entry = _new_object(TagEntry)
    _set_uid(entry, uid)
    _set_read_count(entry, read_count)
    _set_rssi(entry, rssi)
    return entry

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
_PARK = _Layout("PARK", [("antenna", "B"), ("full_every_ms", "H")])
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
    Park: lambda m: _PARK.pack((m.antenna, m.full_every_ms)),
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


def _decode_park(seq: int, payload: bytes) -> Park:
    return Park(seq, *_PARK.unpack(payload))


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
    entries: list[TagEntry] = []
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
        raw_rssi = payload[uid_end + 1]  # a signed byte, or "not measured"
        rssi = None if raw_rssi == RSSI_NOT_AVAILABLE else raw_rssi - 0x100 if raw_rssi > 0x7F else raw_rssi
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
    MessageType.PARK: _decode_park,
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
