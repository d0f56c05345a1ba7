# Runs docs/protocol.md's test vectors through the firmware's own encoder and decoder, in the MicroPython
# unix port: reads the vectors (prepared by tests/test_firmware_vectors.py) as JSON from the file named on
# the command line and prints one JSON line per vector with what the firmware made of it.
import sys
import json
from binascii import hexlify, unhexlify

import wire


def hexstr(data):
    return hexlify(bytes(data)).decode()


def encode(vector):
    f = vector["fields"]
    t = vector["type"]
    if t == wire.IDENTIFY_REPLY:
        payload = wire.identify_reply((f["firmware_major"], f["firmware_minor"], f["firmware_patch"]), f["serial"],
                                      f["antenna_count"], f["tag_technologies"], f["capabilities"])
    elif t == wire.INVENTORY:
        entries = [(unhexlify(e["uid"]), e["read_count"], wire.RSSI_NONE if e["rssi"] is None else e["rssi"])
                   for e in f["entries"]]
        payloads = wire.inventory_payloads(f["antenna"], f["cycle"], f["flags"], entries)
        assert len(payloads) == 1, "one frame expected"
        payload = payloads[0]
    elif t == wire.ANTENNA_FAULT:
        payload = wire.antenna_fault(f["antenna"], f["fault"], f["detail"])
    elif t == wire.STATUS:
        counters = wire.RxCounters()
        counters.frames_ok = f["rx_frames_ok"]
        counters.crc_errors = f["rx_crc_errors"]
        counters.framing_errors = f["rx_framing_errors"]
        counters.malformed = f["rx_malformed"]
        temperature = f["temperature_tenths_c"]
        payload = wire.status(f["uptime_ms"], wire.TEMPERATURE_NONE if temperature is None else temperature,
                              counters, f["tx_frames_dropped"])
    elif t == wire.HEARTBEAT:
        payload = wire.heartbeat(f["uptime_ms"])
    elif t == wire.ACK:
        payload = wire.ack(f["acked_seq"], f["result"])
    elif t == wire.NAK:
        payload = wire.nak(f["rejected_seq"], f["received_type"], f["reason"])
    else:
        raise ValueError("no encoder for type %d" % t)
    return {"wire": hexstr(wire.encode_frame(t, vector["seq"], payload))}


def decode(vector):
    counters = wire.RxCounters()
    reader = wire.FrameReader(counters)
    data = unhexlify(vector["wire"])
    # Split in two reads: a frame may arrive in pieces (section 1).
    frames = reader.feed(data[:3]) + reader.feed(data[3:])
    result = {"frames": []}
    for msg_type, seq, payload in frames:
        reason, fields = wire.parse_command(counters, msg_type, payload)
        result["frames"].append({"type": msg_type, "seq": seq, "nak": reason,
                                 "fields": fields if isinstance(fields, (list, tuple)) else None,
                                 "payload": hexstr(payload)})
    result["counters"] = [counters.frames_ok, counters.crc_errors, counters.framing_errors, counters.malformed]
    return result


def main(path):
    with open(path) as source:
        vectors = json.load(source)
    for vector in vectors:
        try:
            out = encode(vector) if vector["kind"] == "encode" else decode(vector)
        except Exception as exc:  # report, do not stop: every vector gets its line
            out = {"error": "%s: %s" % (type(exc).__name__, exc)}
        out["name"] = vector["name"]
        out["kind"] = vector["kind"]
        print(json.dumps(out))


main(sys.argv[1])
