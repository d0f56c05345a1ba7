"""Messages of the reader <-> host wire protocol, in one import: their types, payload layouts and JSON form.

The parts live apart: the types, enumerations and errors in :mod:`firmware_bridge.message_types`, the byte layouts
(``encode_payload`` / ``decode_payload``) in :mod:`firmware_bridge.layouts`, the frames (``encode_message``, a
message to its complete wire frame) in :mod:`firmware_bridge.codec`, and ``message_to_dict`` /
``message_from_dict`` (the JSON-able form of the test vectors in docs/protocol.md) in
:mod:`firmware_bridge.message_json`. This module names them together for the code that speaks the protocol.
"""

from firmware_bridge.codec import encode_message
from firmware_bridge.layouts import (
    PAYLOAD_DECODERS,
    decode_payload,
    encode_payload,
)
from firmware_bridge.message_json import (
    message_from_dict,
    message_to_dict,
)
from firmware_bridge.message_types import (
    MAX_SCHEDULE_SLOTS,
    MAX_SERIAL_LENGTH,
    MESSAGE_CLASSES,
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
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
    IncompatibleProtocolError,
    Inventory,
    InventoryFlag,
    MalformedPayloadError,
    Message,
    MessageType,
    Nak,
    NakReason,
    OutputKind,
    NO_ANTENNA,
    OutputPattern,
    Park,
    ProtocolError,
    RequestInventory,
    Reset,
    ScheduleSlot,
    SetOutput,
    SetSchedule,
    Status,
    TagEntry,
    TagTechnology,
    UnknownMessageTypeError,
    check_compatible,
)

__all__ = [
    "MAX_SCHEDULE_SLOTS", "MAX_SERIAL_LENGTH", "MESSAGE_CLASSES", "PAYLOAD_DECODERS", "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR", "RSSI_NOT_AVAILABLE", "TEMPERATURE_NOT_AVAILABLE", "VALID_UID_LENGTHS", "Ack", "AckResult",
    "AntennaFault", "Capability", "FaultCode", "FieldValueError", "Heartbeat", "Identify", "IdentifyReply",
    "IncompatibleIdentifyReply", "IncompatibleProtocolError", "Inventory", "InventoryFlag", "MalformedPayloadError",
    "Message", "MessageType", "NO_ANTENNA", "Nak", "NakReason", "OutputKind", "OutputPattern", "Park", "ProtocolError",
    "RequestInventory", "Reset", "ScheduleSlot", "SetOutput", "SetSchedule", "Status", "TagEntry", "TagTechnology",
    "UnknownMessageTypeError", "check_compatible", "decode_payload", "encode_message", "encode_payload",
    "message_from_dict", "message_to_dict",
]
