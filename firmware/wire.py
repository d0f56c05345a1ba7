# Reader side of the wire protocol (docs/protocol.md): CRC, COBS, frames, the commands the reader
# receives and the messages it sends. Plain MicroPython: it runs on the Pico and, unmodified, in the
# MicroPython unix port (the test vectors of docs/protocol.md section 8 are checked that way).
from micropython import const
import struct

PROTOCOL_MAJOR = const(1)
PROTOCOL_MINOR = const(2)

# Message types (section 6)
IDENTIFY = const(0x01)
SET_SCHEDULE = const(0x02)
SET_OUTPUT = const(0x03)
RESET = const(0x04)
REQUEST_INVENTORY = const(0x05)
PARK = const(0x06)  # 1.2: a front end held on one antenna, its known tags quiet (6.13)
IDENTIFY_REPLY = const(0x81)
INVENTORY = const(0x82)
ANTENNA_FAULT = const(0x83)
STATUS = const(0x84)
HEARTBEAT = const(0x85)
ACK = const(0x86)
NAK = const(0x87)

# ACK results (7.5) and NAK reasons (7.6)
OK = const(0)
INVALID_ARGUMENT = const(1)
UNSUPPORTED = const(2)
BUSY = const(3)
UNKNOWN_TYPE = const(1)
MALFORMED_PAYLOAD = const(2)

# INVENTORY flags (7.3)
MORE = const(1)
REQUESTED = const(2)
CYCLE_END = const(4)
UNRESOLVED = const(8)  # 1.1: collisions left for the antenna's next dwell
QUIET = const(16)  # 1.2: a parked antenna's round: the tags new since its last report (6.13)

# Fault codes (7.4)
CLEARED = const(0)
OPEN = const(1)
SHORT = const(2)
OVERCURRENT = const(3)
TUNING = const(4)

# Size limits (2.4)
MAX_FRAME = const(512)
MAX_PAYLOAD = const(507)
MAX_ENCODED = const(515)
MIN_FRAME = const(5)
MAX_SLOTS = const(64)
RSSI_NONE = const(0x7F)
TEMPERATURE_NONE = const(0x7FFF)
NO_ANTENNA = const(0xFF)  # PARK: none parked

# Fixed payload lengths of the host -> reader commands (6.1 ... 6.5); SET_SCHEDULE is 1 + 3 per slot.
_COMMAND_LENGTHS = {IDENTIFY: 2, SET_OUTPUT: 5, RESET: 0, REQUEST_INVENTORY: 0, PARK: 3}


def _crc_table():
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (2.2): poly 0x1021, init 0xFFFF, no reflection, no final XOR."""
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFF00) ^ table[(crc >> 8) ^ byte]
    return crc


def cobs_encode(data):
    """COBS (2.3), canonical form: a frame ending in a run of 254 non-zero bytes gets no empty last block."""
    out = bytearray()
    blocks = bytes(data).split(b"\x00")
    last = len(blocks) - 1
    for index, block in enumerate(blocks):
        while len(block) >= 254:  # a long run: FF blocks, which imply no zero
            out.append(0xFF)
            out.extend(block[:254])
            block = block[254:]
            if not block and index == last:
                return out
        out.append(len(block) + 1)
        out.extend(block)
    return out


def cobs_decode(encoded):
    """Decode one frame's COBS bytes (no delimiter); None if invalid."""
    size = len(encoded)
    out = bytearray()
    position = 0
    while position < size:
        code = encoded[position]
        if code == 0:
            return None
        end = position + code
        if end > size:
            return None
        out.extend(encoded[position + 1:end])
        if code != 0xFF and end < size:
            out.append(0)
        position = end
    return out


def encode_frame(msg_type, seq, payload):
    """The wire bytes of one frame: COBS(type, seq LE, payload, CRC BE) and the 00 delimiter."""
    body = bytearray(3 + len(payload) + 2)
    body[0] = msg_type
    body[1] = seq & 0xFF
    body[2] = (seq >> 8) & 0xFF
    body[3:3 + len(payload)] = payload
    crc = crc16(memoryview(body)[:3 + len(payload)])
    body[-2] = crc >> 8
    body[-1] = crc & 0xFF
    wire = cobs_encode(body)
    wire.append(0)
    return wire


# ---- receiving (2.5) ------------------------------------------------------------------------------

class RxCounters:
    def __init__(self):
        self.frames_ok = 0
        self.crc_errors = 0
        self.framing_errors = 0
        self.malformed = 0


class FrameReader:
    """Cuts the byte stream at 00 delimiters and checks each frame in the order of section 2.5.

    ``feed`` returns a list of (msg_type, seq, payload) for CRC-valid frames; type and payload are checked
    by ``parse_command``. A run of more than 515 bytes without a delimiter is dropped at once (one framing
    error) and everything up to the next 00 is discarded."""

    def __init__(self, counters):
        self.counters = counters
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data):
        frames = []
        start = 0
        buffer = self._buffer
        while True:
            end = data.find(b"\x00", start) if start < len(data) else -1
            if end < 0:
                if not self._discarding:
                    buffer.extend(data[start:])
                    if len(buffer) > MAX_ENCODED:
                        self.counters.framing_errors += 1
                        buffer[:] = b""
                        self._discarding = True
                return frames
            if self._discarding:
                self._discarding = False
            else:
                buffer.extend(data[start:end])
                if buffer:
                    frame = self._check(buffer)
                    if frame is not None:
                        frames.append(frame)
            buffer[:] = b""
            start = end + 1

    def _check(self, encoded):
        counters = self.counters
        if len(encoded) > MAX_ENCODED:
            counters.framing_errors += 1
            return None
        frame = cobs_decode(encoded)
        if frame is None or len(frame) < MIN_FRAME or len(frame) > MAX_FRAME:
            counters.framing_errors += 1
            return None
        if crc16(frame) != 0:  # big-endian CRC: an intact frame checks to zero (2.2)
            counters.crc_errors += 1
            return None
        return frame[0], frame[1] | frame[2] << 8, bytes(frame[3:-2])


def parse_command(counters, msg_type, payload):
    """Check a CRC-valid frame's type and payload (2.5 checks 6 and 7) and count it.

    Returns (None, fields) for a good command or (nak_reason, None). Fields: IDENTIFY (major, minor);
    SET_SCHEDULE a list of (antenna, dwell_ms); SET_OUTPUT (kind, index, pattern, duration_ms); PARK (antenna,
    full_every_ms); else ()."""
    reason, fields = _parse(msg_type, payload)
    if reason is None:
        counters.frames_ok += 1
    else:
        counters.malformed += 1
    return reason, fields


def _parse(msg_type, payload):
    if msg_type == SET_SCHEDULE:
        if not payload or len(payload) != 1 + 3 * payload[0] or payload[0] > MAX_SLOTS:
            return MALFORMED_PAYLOAD, None
        slots = []
        for i in range(payload[0]):
            slots.append((payload[1 + 3 * i], payload[2 + 3 * i] | payload[3 + 3 * i] << 8))
        return None, slots
    length = _COMMAND_LENGTHS.get(msg_type)
    if length is None:  # unknown, or a reader -> host type sent to the reader
        return UNKNOWN_TYPE, None
    if len(payload) != length:
        return MALFORMED_PAYLOAD, None
    if msg_type == IDENTIFY:
        return None, (payload[0], payload[1])
    if msg_type == SET_OUTPUT:
        return None, struct.unpack("<BBBH", payload)
    if msg_type == PARK:
        return None, struct.unpack("<BH", payload)
    return None, ()


# ---- what the reader sends (6.6 ... 6.12) ---------------------------------------------------------

def identify_reply(firmware_version, serial, antenna_count, technologies, capabilities):
    serial = serial.encode() if isinstance(serial, str) else serial
    return (struct.pack("<BBBBBB", PROTOCOL_MAJOR, PROTOCOL_MINOR, firmware_version[0], firmware_version[1],
                        firmware_version[2], len(serial))
            + serial + struct.pack("<BBH", antenna_count, technologies, capabilities))


def inventory_payloads(antenna, cycle, flags, entries):
    """INVENTORY payloads for one antenna scan: ``entries`` is a list of (uid_msb_first, read_count, rssi).

    Entries that do not fit one frame's 507 bytes go on in further frames with MORE set (6.7); there is
    always at least one frame, so an empty antenna is reported explicitly."""
    payloads = []
    chunk = bytearray()
    count = 0
    for uid, read_count, rssi in entries:
        size = 3 + len(uid)
        if 7 + len(chunk) + size > MAX_PAYLOAD or count == 255:
            payloads.append((chunk, count))
            chunk = bytearray()
            count = 0
        chunk.append(len(uid))
        chunk.extend(uid)
        chunk.append(min(255, read_count))
        chunk.append(rssi & 0xFF)
        count += 1
    payloads.append((chunk, count))
    last = len(payloads) - 1
    out = []
    for index, (chunk, count) in enumerate(payloads):
        frame_flags = (flags & ~CYCLE_END) | (MORE if index < last else 0)
        if index == last:
            frame_flags |= flags & CYCLE_END
        out.append(struct.pack("<BIBB", antenna, cycle, frame_flags, count) + chunk)
    return out


def antenna_fault(antenna, fault, detail):
    return struct.pack("<BBH", antenna, fault, detail)


def status(uptime_ms, temperature_tenths_c, counters, tx_frames_dropped):
    return struct.pack("<IhIIIII", uptime_ms & 0xFFFFFFFF, temperature_tenths_c,
                       counters.frames_ok & 0xFFFFFFFF, counters.crc_errors & 0xFFFFFFFF,
                       counters.framing_errors & 0xFFFFFFFF, counters.malformed & 0xFFFFFFFF,
                       tx_frames_dropped & 0xFFFFFFFF)


def heartbeat(uptime_ms):
    return struct.pack("<I", uptime_ms & 0xFFFFFFFF)


def ack(acked_seq, result):
    return struct.pack("<HB", acked_seq, result)


def nak(rejected_seq, received_type, reason):
    return struct.pack("<HBB", rejected_seq, received_type, reason)
