"""The protocol's test vectors (docs/protocol.md section 8) through the reader firmware's own encoder and decoder,
in real MicroPython: every reader -> host message encodes to exactly its wire bytes, every host -> reader command
decodes to exactly its fields, every frame that must be rejected is rejected and counted as the reader counts it."""

import dataclasses
import json

import pytest

from firmware_bridge.messages import IncompatibleIdentifyReply, message_from_dict
from micropython_runtime import FIRMWARE, requires_micropython, run_micropython
from test_protocol_vectors import REJECT_VECTORS, VECTORS, hex_bytes

pytestmark = requires_micropython

# The host's counter of a rejected frame, as the reader's STATUS counts it (2.5), and the NAK it sends.
READER_COUNTER = {"crc_errors": ("crc", None), "cobs_errors": ("framing", None), "runts": ("framing", None),
                  "unknown_type": ("malformed", 1), "malformed": ("malformed", 1)}


def plain(value):
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return int(value) if isinstance(value, int) else value


def firmware_jobs():
    jobs = []
    for vector in VECTORS:
        message = message_from_dict(json.loads(vector["message"]))
        fields = plain(message)
        wire = hex_bytes(vector["wire"]).hex()
        direction = "reader" if message.MSG_TYPE >= 0x80 else "host"
        if direction == "reader" and not isinstance(message, IncompatibleIdentifyReply):
            jobs.append({"name": vector["name"], "kind": "encode", "type": int(message.MSG_TYPE),
                         "seq": message.seq, "fields": fields, "wire": wire})
        jobs.append({"name": vector["name"], "kind": "decode", "wire": wire})
    for vector in REJECT_VECTORS:
        jobs.append({"name": vector["name"], "kind": "decode", "wire": hex_bytes(vector["wire"]).hex()})
    return jobs


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("vectors") / "vectors.json"
    path.write_text(json.dumps(firmware_jobs()))
    done = run_micropython(FIRMWARE / "host" / "vectors.py", str(path))
    assert done.returncode == 0, done.stderr
    return {(r["name"], r["kind"]): r for r in map(json.loads, done.stdout.splitlines())}


ENCODED = [v for v in VECTORS if json.loads(v["message"])["type"] not in
           ("IDENTIFY", "SET_SCHEDULE", "SET_OUTPUT", "RESET", "REQUEST_INVENTORY", "PARK")
           and v["name"] != "identify_reply_other_major"]
COMMANDS = [v for v in VECTORS if v not in ENCODED and json.loads(v["message"])["type"] != "IDENTIFY_REPLY"]


@pytest.mark.parametrize("vector", ENCODED, ids=lambda v: v["name"])
def test_firmware_encodes_the_vector_to_its_wire_bytes(vector, results):
    result = results[(vector["name"], "encode")]
    assert "error" not in result, result["error"]
    assert bytes.fromhex(result["wire"]).hex(" ") == hex_bytes(vector["wire"]).hex(" ")


@pytest.mark.parametrize("vector", COMMANDS, ids=lambda v: v["name"])
def test_firmware_decodes_the_command_to_its_fields(vector, results):
    message = message_from_dict(json.loads(vector["message"]))
    result = results[(vector["name"], "decode")]
    assert result["counters"] == [1, 0, 0, 0]
    (frame,) = result["frames"]
    assert (frame["type"], frame["seq"], frame["nak"]) == (message.MSG_TYPE, message.seq, None)
    fields = plain(message)
    expected = {"IDENTIFY": [fields.get("protocol_major"), fields.get("protocol_minor")],
                "SET_SCHEDULE": [[s["antenna"], s["dwell_ms"]] for s in fields.get("slots", [])],
                "SET_OUTPUT": [fields.get(k) for k in ("kind", "index", "pattern", "duration_ms")],
                "PARK": [fields.get("antenna"), fields.get("full_every_ms")],
                }.get(message.MSG_TYPE.name, [])
    assert frame["fields"] == expected


@pytest.mark.parametrize("vector", [v for v in VECTORS if v not in COMMANDS], ids=lambda v: v["name"])
def test_firmware_accepts_every_reader_frame_and_naks_it_as_the_wrong_direction(vector, results):
    result = results[(vector["name"], "decode")]
    assert result["counters"] == [0, 0, 0, 1]  # CRC-valid, counted rx_malformed
    (frame,) = result["frames"]
    assert frame["nak"] == 1  # UNKNOWN_TYPE: a reader -> host type sent to the reader (section 6)
    assert frame["payload"] == hex_bytes(vector["frame"])[3:-2].hex()


@pytest.mark.parametrize("vector", REJECT_VECTORS, ids=lambda v: v["name"])
def test_firmware_rejects_the_bad_frame_and_counts_it(vector, results):
    result = results[(vector["name"], "decode")]
    counter, nak = READER_COUNTER[vector["counter"]]
    ok, crc, framing, malformed = result["counters"]
    expected = {"crc": [0, 1, 0, 0], "framing": [0, 0, 1, 0], "malformed": [0, 0, 0, 1]}[counter]
    assert [ok, crc, framing, malformed] == expected
    if nak is None:  # never answered (its seq cannot be trusted)
        assert result["frames"] == []
    else:  # CRC-valid: answered with NAK UNKNOWN_TYPE (0x42, or a reader -> host type such as 0x85)
        (frame,) = result["frames"]
        assert frame["nak"] == nak
