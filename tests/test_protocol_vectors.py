"""The byte-level examples in docs/protocol.md are the test vectors.

Every ```vector block must encode to exactly its wire bytes and decode back to
exactly its message; every ```vector-reject block must be rejected and counted
under the stated counter. The message type table is checked against the code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from firmware_bridge.codec import CRC_SIZE, FrameDecoder, cobs_decode, crc16, decode_message
from firmware_bridge.messages import MessageType, encode_message, message_from_dict, message_to_dict

PROTOCOL_DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
DOC_TEXT = PROTOCOL_DOC.read_text(encoding="utf-8")


def parse_blocks(kind: str) -> list[dict[str, str]]:
    """Fenced blocks of ``kind`` as {key: value}; indented lines continue the previous key."""
    blocks = []
    for body in re.findall(rf"^```{re.escape(kind)}\n(.*?)^```$", DOC_TEXT, re.M | re.S):
        entries: dict[str, str] = {}
        key = None
        for line in body.splitlines():
            if not line.strip():
                continue
            if line[0].isspace():
                assert key is not None, f"continuation line without a key: {line!r}"
                entries[key] += "\n" + line.strip()
            else:
                key, _, value = line.partition(":")
                assert key not in entries, f"duplicate key {key!r} in block"
                entries[key] = value.strip()
        blocks.append(entries)
    return blocks


def hex_bytes(text: str) -> bytes:
    return bytes.fromhex(" ".join(text.split()))


VECTORS = parse_blocks("vector")
REJECT_VECTORS = parse_blocks("vector-reject")


def test_document_has_vectors_with_unique_names():
    names = [vector["name"] for vector in VECTORS + REJECT_VECTORS]
    assert len(VECTORS) >= 20 and len(REJECT_VECTORS) >= 5
    assert len(names) == len(set(names))
    for vector in VECTORS:
        assert set(vector) == {"name", "message", "frame", "wire"}, vector["name"]


def test_every_message_type_has_a_vector():
    covered = {json.loads(vector["message"])["type"] for vector in VECTORS}
    assert covered == set(MessageType.__members__)


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["name"])
def test_vector_encodes_to_wire(vector):
    message = message_from_dict(json.loads(vector["message"]))
    assert encode_message(message).hex(" ") == hex_bytes(vector["wire"]).hex(" ")


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["name"])
def test_vector_wire_decodes_to_message(vector):
    expected = json.loads(vector["message"])
    wire = hex_bytes(vector["wire"])
    decoder = FrameDecoder()
    decoded = decoder.feed(wire)
    assert len(decoded) == 1 and decoder.stats.frames_rejected == 0
    assert message_to_dict(decoded[0]) == expected
    assert decoded[0] == message_from_dict(expected)
    assert decode_message(wire) == decoded[0]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda vector: vector["name"])
def test_vector_frame_line_is_the_unencoded_frame(vector):
    wire = hex_bytes(vector["wire"])
    frame = hex_bytes(vector["frame"])
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    assert cobs_decode(wire[:-1]) == frame
    assert crc16(frame[:-CRC_SIZE]) == int.from_bytes(frame[-CRC_SIZE:], "big")
    assert crc16(frame) == 0  # big-endian CRC: the whole frame checks to zero
    assert frame[0] == MessageType[json.loads(vector["message"])["type"]]
    assert int.from_bytes(frame[1:3], "little") == json.loads(vector["message"])["seq"]


@pytest.mark.parametrize("vector", REJECT_VECTORS, ids=lambda vector: vector["name"])
def test_reject_vector_is_rejected_and_counted(vector):
    decoder = FrameDecoder()
    assert decoder.feed(hex_bytes(vector["wire"])) == []
    counters = decoder.stats.as_dict()
    assert counters[vector["counter"]] == 1
    assert decoder.stats.frames_rejected == 1
    # ...and the decoder is back in sync for the next good frame.
    good = hex_bytes(VECTORS[0]["wire"])
    assert len(decoder.feed(good)) == 1


def test_message_type_table_matches_code():
    rows = re.findall(r"^\| 0x([0-9A-F]{2}) \| ([A-Z_]+) +\|", DOC_TEXT, re.M)
    assert {name: int(code, 16) for code, name in rows} == {
        member.name: member.value for member in MessageType
    }


def test_size_limits_in_document_match_code():
    from firmware_bridge import codec

    assert f"| Decoded frame (type + seq + payload + CRC)     | {codec.MAX_FRAME_SIZE} bytes" in DOC_TEXT
    assert f"| Payload                                        | {codec.MAX_PAYLOAD_SIZE} bytes" in DOC_TEXT
    assert f"| Encoded frame, delimiter excluded              | {codec.MAX_ENCODED_SIZE} bytes" in DOC_TEXT
