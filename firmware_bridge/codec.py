"""Framing of the reader <-> host protocol, host side.

A frame before encoding is

    msg_type (u8) | seq (u16 LE) | payload | CRC-16/CCITT-FALSE (u16 BE)

with the CRC taken over type, seq and payload. The CRC alone is sent most
significant byte first: in that order the frame's bits are exactly the
polynomial the CRC was designed for, so an error burst of up to 16 bits is
caught wherever it lies, including across the payload/CRC boundary. The frame is COBS-encoded, so
it contains no 0x00 byte, and a single 0x00 ends it on the wire. A receiver
that loses sync (garbage, a dropped byte) resynchronises at the next 0x00.

``FrameDecoder`` turns a byte stream into messages and never raises: every
rejected frame is counted in ``FrameDecoder.stats`` and the most recent
rejection is kept in ``FrameDecoder.last_error``.
"""

from __future__ import annotations

import binascii
import enum
import struct
from dataclasses import dataclass, fields

from firmware_bridge.layouts import PAYLOAD_DECODERS, encode_payload
from firmware_bridge.message_types import FieldValueError, Message, ProtocolError, UnknownMessageTypeError

HEADER_SIZE = 3  # msg_type + seq
CRC_SIZE = 2
MIN_FRAME_SIZE = HEADER_SIZE + CRC_SIZE
MAX_FRAME_SIZE = 512  # decoded: header + payload + CRC
MAX_PAYLOAD_SIZE = MAX_FRAME_SIZE - MIN_FRAME_SIZE
# COBS adds one code byte per started run of 254 bytes.
MAX_ENCODED_SIZE = MAX_FRAME_SIZE + (MAX_FRAME_SIZE + 253) // 254
DELIMITER = b"\x00"

_HEADER = struct.Struct("<BH")
_CRC = struct.Struct(">H")  # big endian, unlike every other field


class FrameError(ProtocolError):
    """A frame was rejected before its payload could be looked at."""


class CobsError(FrameError):
    """The bytes between two delimiters are not a valid COBS encoding."""


class CrcError(FrameError):
    """The frame's CRC does not match its contents."""


class OversizeFrameError(FrameError):
    """The frame is longer than the protocol allows."""


class RuntFrameError(FrameError):
    """The frame is too short to hold a header and a CRC."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR."""
    return binascii.crc_hqx(data, 0xFFFF)


# --------------------------------------------------------------------------
# COBS
# --------------------------------------------------------------------------


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data``; the result holds no 0x00 byte (delimiter not added)."""
    out = []
    blocks = bytes(data).split(b"\x00")
    last_index = len(blocks) - 1
    for index, block in enumerate(blocks):
        # A run longer than 254 bytes is cut into 0xFF blocks, which imply no zero.
        while len(block) >= 254:
            out.append(b"\xff")
            out.append(block[:254])
            block = block[254:]
            if not block and index == last_index:
                return b"".join(out)  # canonical form: no empty block at the very end
        out.append(bytes((len(block) + 1,)))
        out.append(block)
    return b"".join(out)


def cobs_decode(encoded: bytes) -> bytes:
    """Decode one COBS-encoded frame (without its delimiter); raise CobsError if invalid."""
    size = len(encoded)
    if size == 0:
        raise CobsError("empty frame")
    if 0 in encoded:
        raise CobsError(f"0x00 inside the frame at offset {bytes(encoded).index(0)}")
    # Fast path: with no 0xFF code, every code byte after the first sits exactly
    # where a zero belongs in the output, so overwrite the codes and drop byte 0.
    buffer = bytearray(encoded)
    position = buffer[0]
    if position != 0xFF:
        while position < size:
            code = buffer[position]
            if code == 0xFF:
                break
            buffer[position] = 0
            position += code
        else:
            if position > size:
                raise CobsError(f"last block runs {position - size} byte(s) past the frame end")
            return bytes(buffer[1:])
    return _cobs_decode_general(bytes(encoded))


def _cobs_decode_general(encoded: bytes) -> bytes:
    """Block-by-block decoder, used for frames that contain 0xFF codes."""
    size = len(encoded)
    out = []
    position = 0
    while position < size:
        code = encoded[position]
        end = position + code
        if end > size:
            raise CobsError(f"block at offset {position} runs {end - size} byte(s) past the frame end")
        out.append(encoded[position + 1 : end])
        if code != 0xFF and end < size:
            out.append(b"\x00")
        position = end
    return b"".join(out)


# --------------------------------------------------------------------------
# Whole frames
# --------------------------------------------------------------------------


def encode_frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """Build the wire bytes of one frame: COBS(type, seq, payload, CRC) + 0x00."""
    if not 0 <= msg_type <= 0xFF:
        raise FieldValueError("frame", "msg_type", f"{msg_type} is outside 0..255")
    if not 0 <= seq <= 0xFFFF:
        raise FieldValueError("frame", "seq", f"{seq} is outside 0..65535")
    if len(payload) > MAX_PAYLOAD_SIZE:
        raise OversizeFrameError(
            f"payload of {len(payload)} bytes exceeds the maximum of {MAX_PAYLOAD_SIZE}"
        )
    body = _HEADER.pack(msg_type, seq) + bytes(payload)
    return cobs_encode(body + _CRC.pack(crc16(body))) + DELIMITER


def decode_frame(encoded: bytes) -> tuple[int, int, bytes]:
    """Check and unpack one encoded frame into (msg_type, seq, payload).

    ``encoded`` is one frame's wire bytes, with or without the trailing 0x00.
    Raises a FrameError subclass when the frame is rejected.
    """
    encoded = bytes(encoded)
    if encoded.endswith(DELIMITER):
        encoded = encoded[:-1]
    if len(encoded) > MAX_ENCODED_SIZE:
        raise OversizeFrameError(
            f"{len(encoded)} encoded bytes, at most {MAX_ENCODED_SIZE} are allowed"
        )
    frame = cobs_decode(encoded)
    return _check_frame(frame)


def _check_frame(frame: bytes) -> tuple[int, int, bytes]:
    if len(frame) < MIN_FRAME_SIZE:
        raise RuntFrameError(f"{len(frame)} decoded bytes, a frame needs at least {MIN_FRAME_SIZE}")
    if len(frame) > MAX_FRAME_SIZE:
        raise OversizeFrameError(f"{len(frame)} decoded bytes, at most {MAX_FRAME_SIZE} are allowed")
    received_crc = frame[-2] << 8 | frame[-1]
    computed_crc = crc16(frame[:-2])
    if received_crc != computed_crc:
        raise CrcError(f"CRC is 0x{received_crc:04X}, contents give 0x{computed_crc:04X}")
    return frame[0], frame[1] | frame[2] << 8, frame[3:-2]


def encode_message(msg: Message) -> bytes:
    """The complete wire frame for ``msg``: COBS-encoded and 0x00-terminated."""
    return encode_frame(int(msg.MSG_TYPE), msg.seq, encode_payload(msg))


def decode_message(encoded: bytes) -> Message:
    """Strictly decode one frame's wire bytes into a message; raises ProtocolError."""
    msg_type, seq, payload = decode_frame(encoded)
    decoder = PAYLOAD_DECODERS.get(msg_type)
    if decoder is None:
        raise UnknownMessageTypeError(msg_type)
    return decoder(seq, payload)


# --------------------------------------------------------------------------
# Stream decoder
# --------------------------------------------------------------------------


@dataclass
class DecoderStats:
    """Counters of a FrameDecoder. Each rejected frame increments exactly one error counter."""

    frames_ok: int = 0
    crc_errors: int = 0
    cobs_errors: int = 0
    oversize: int = 0
    runts: int = 0  # too short to hold header and CRC (often a truncated frame)
    malformed: int = 0  # CRC-valid, known type, payload does not fit the layout
    unknown_type: int = 0  # CRC-valid, message type unknown to this host
    bytes_discarded: int = 0  # encoded bytes of rejected frames, delimiters excluded

    @property
    def frames_rejected(self) -> int:
        return (
            self.crc_errors
            + self.cobs_errors
            + self.oversize
            + self.runts
            + self.malformed
            + self.unknown_type
        )

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class FrameRejection:
    """Why the most recent frame was rejected, for diagnostics."""

    counter: str  # name of the DecoderStats counter that was incremented
    reason: str
    stream_offset: int  # offset of the frame's first byte in everything fed so far
    encoded_length: int


class FrameDecoder:
    """Incremental decoder: feed it bytes as they arrive, get messages back.

    ``feed`` never raises on any input. Bytes after the last 0x00 are kept
    until the next call; a frame that grows past the maximum size is dropped
    at once and everything up to the next 0x00 is discarded.
    """

    def __init__(self) -> None:
        self.stats = DecoderStats()
        self.last_error: FrameRejection | None = None
        self._pending = b""  # bytes after the last delimiter seen
        self._skipping = False  # inside an oversize frame, waiting for its delimiter
        self._stream_offset = 0  # bytes fed before the current call

    @property
    def pending_bytes(self) -> int:
        """Bytes of a frame that has started but not yet ended."""
        return len(self._pending)

    def feed(self, data: bytes) -> list[Message]:
        """Consume ``data`` and return the messages completed by it, in order."""
        if type(data) is not bytes:
            data = bytes(data)
        messages: list[Message] = []
        last_delimiter = data.rfind(0)
        if last_delimiter < 0:
            self._keep_pending(data)
            return messages

        chunk_offset = self._stream_offset - len(self._pending)
        chunk = self._pending + data[:last_delimiter] if self._pending else data[:last_delimiter]
        rest = data[last_delimiter + 1 :]
        self._stream_offset += len(data)
        self._pending = b""
        parts = chunk.split(b"\x00")
        if self._skipping:
            # The first part is the tail of an oversize frame already counted.
            self._skipping = False
            self.stats.bytes_discarded += len(parts[0])
            chunk_offset += len(parts[0]) + 1
            parts = parts[1:]
        self._decode_parts(parts, chunk_offset, messages)
        self._keep_pending(rest, already_counted=True)
        return messages

    def _keep_pending(self, data: bytes, already_counted: bool = False) -> None:
        if not already_counted:
            self._stream_offset += len(data)
        if self._skipping:
            self.stats.bytes_discarded += len(data)
            return
        pending = self._pending + data if self._pending else data
        if len(pending) > MAX_ENCODED_SIZE:
            # Do not buffer without bound while waiting for a delimiter.
            self._reject(
                "oversize",
                f"no delimiter within {MAX_ENCODED_SIZE} bytes",
                self._stream_offset - len(pending),
                len(pending),
            )
            self._pending = b""
            self._skipping = True
        else:
            self._pending = pending

    def _decode_parts(self, parts: list[bytes], offset: int, messages: list[Message]) -> None:
        stats = self.stats
        decoders = PAYLOAD_DECODERS
        crc_hqx = binascii.crc_hqx
        append = messages.append
        for part in parts:
            size = len(part)
            if size == 0:
                offset += 1  # back-to-back delimiters are allowed and ignored
                continue
            if size > MAX_ENCODED_SIZE:
                self._reject("oversize", f"{size} encoded bytes", offset, size)
                offset += size + 1
                continue
            try:
                frame = cobs_decode(part)
            except CobsError as exc:
                self._reject("cobs_errors", str(exc), offset, size)
                offset += size + 1
                continue
            frame_size = len(frame)
            if frame_size < MIN_FRAME_SIZE:
                self._reject("runts", f"{frame_size} decoded bytes", offset, size)
            elif frame_size > MAX_FRAME_SIZE:
                self._reject("oversize", f"{frame_size} decoded bytes", offset, size)
            elif crc_hqx(frame[:-2], 0xFFFF) != frame[-2] << 8 | frame[-1]:
                self._reject("crc_errors", "CRC mismatch", offset, size)
            else:
                msg_type = frame[0]
                decoder = decoders.get(msg_type)
                if decoder is None:
                    self._reject("unknown_type", f"message type 0x{msg_type:02X}", offset, size)
                else:
                    try:
                        append(decoder(frame[1] | frame[2] << 8, frame[3:-2]))
                    except ProtocolError as exc:
                        self._reject("malformed", str(exc), offset, size)
                    except Exception as exc:  # a decoder bug must not kill the link
                        self._reject("malformed", f"decoder failure: {exc!r}", offset, size)
                    else:
                        stats.frames_ok += 1
            offset += size + 1

    def _reject(self, counter: str, reason: str, offset: int, encoded_length: int) -> None:
        stats = self.stats
        setattr(stats, counter, getattr(stats, counter) + 1)
        stats.bytes_discarded += encoded_length
        self.last_error = FrameRejection(counter, reason, offset, encoded_length)


# --------------------------------------------------------------------------
# Sequence numbers
# --------------------------------------------------------------------------


class SeqVerdict(enum.Enum):
    FIRST = "first"  # first frame seen since start or reset()
    IN_ORDER = "in_order"
    GAP = "gap"  # frames were lost just before this one
    DUPLICATE = "duplicate"  # same seq as the previous frame
    RESTART = "restart"  # seq jumped backwards: the counter was restarted


class SequenceTracker:
    """Counts lost and duplicated frames from the reader's u16 sequence numbers.

    A forward jump of less than half the sequence space is a gap (those frames
    were lost); a backward jump is taken as a restart of the sender's counter.
    A reader reboot that lands its counter "ahead" cannot be told from a gap by
    seq alone, so call ``reset()`` when a reboot is detected another way
    (e.g. uptime going backwards).
    """

    _HALF = 0x8000

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.last_seq: int | None = None
        self.received = 0
        self.lost = 0
        self.duplicates = 0
        self.restarts = 0
        self.last_gap = 0  # frames lost just before the most recent frame

    def observe(self, seq: int) -> SeqVerdict:
        self.received += 1
        self.last_gap = 0
        last = self.last_seq
        if last is None:
            self.last_seq = seq
            return SeqVerdict.FIRST
        if seq == last:
            self.duplicates += 1
            return SeqVerdict.DUPLICATE
        self.last_seq = seq
        gap = (seq - last - 1) & 0xFFFF
        if gap == 0:
            return SeqVerdict.IN_ORDER
        if gap < self._HALF:
            self.lost += gap
            self.last_gap = gap
            return SeqVerdict.GAP
        self.restarts += 1
        return SeqVerdict.RESTART
