"""The JSON-able form of the protocol's messages, used by the test vectors in docs/protocol.md.

``message_to_dict`` / ``message_from_dict``: ``{"type": "HEARTBEAT", "seq": 1, "uptime_ms": 500}`` and back.
"""

from __future__ import annotations

import enum
from dataclasses import fields
from typing import Any

from firmware_bridge.message_types import (
    MESSAGE_CLASSES,
    PROTOCOL_MAJOR,
    IncompatibleIdentifyReply,
    Message,
    MessageType,
    ScheduleSlot,
    TagEntry,
)

_NESTED_CLASSES: dict[str, type] = {"entries": TagEntry, "slots": ScheduleSlot}


def _flags_to_names(flag_cls: type[enum.IntFlag], value: int) -> list[str]:
    value = int(value)
    names = [member.name for member in flag_cls if member.name is not None and value & member.value]
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
    values: dict[str, Any] = {}
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
