"""The register-level PN5180 model's ISO 14443-A side (``sim.pn5180``), against the standard and the data sheet, at
the SPI frame: what the firmware's tests stand on. The reader firmware itself runs on it in tests/test_iso14443a.py."""

import pytest

from sim.pn5180 import (A_BIT_S, A_GUARD_S, COMMAND_S, FC, GENERAL_ERROR_IRQ, RF_ON_S, RX_COLLISION, RX_IRQ,
                        PN5180Model, crc_a)

# WRITE_REGISTER_MULTIPLE entries (data sheet table 9) and the frames the firmware's driver sends
RESTART = bytes((0x03, 0x03, 1, 0xFF, 0xFF, 0x0F, 0x00,  # IRQ_CLEAR: all
                 0x00, 3, 0xF8, 0xFF, 0xFF, 0xFF,  # SYSTEM_CONFIG AND: IDLE
                 0x00, 2, 0x03, 0x00, 0x00, 0x00))  # SYSTEM_CONFIG OR: TRANSCEIVE


def crc(on: bool, align: int = 0) -> bytes:
    """Multiple-write entries: CRC both ways on or off, RX_BIT_ALIGN ``align`` (CRC_TX_CONFIG, CRC_RX_CONFIG)."""
    return bytes((0x19, 2 if on else 3, *((1, 0, 0, 0) if on else (0xFE, 0xFF, 0xFF, 0xFF)),
                  0x12, 3, 0x3E, 0xFE, 0xFF, 0xFF,  # CRC_RX_CONFIG AND ~(CRC | RX_BIT_ALIGN)
                  0x12, 2, (1 if on else 0) | (align << 6) & 0xFF, (align << 6) >> 8, 0, 0))


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class Board:
    """One PN5180 model, driven frame by frame as the firmware's driver drives it."""

    def __init__(self, uids):
        self.clock = Clock()
        self.chip = PN5180Model(lambda: uids, lambda: "ok", self.clock)

    def instruction(self, frame: bytes) -> None:
        self.chip.nss(0)
        self.chip.transfer(frame, False)
        self.chip.nss(1)
        self.clock.t += COMMAND_S

    def read_register(self, register: int) -> int:
        self.instruction(bytes((0x04, register)))
        self.chip.nss(0)
        word = self.chip.transfer(b"\xff" * 4, True)
        self.chip.nss(1)
        return int.from_bytes(word, "little")

    def field_on(self) -> None:
        self.instruction(bytes((0x11, 0x00, 0x80)))  # LOAD_RF_CONFIG ISO 14443-A 106 kbit/s
        self.instruction(bytes((0x16, 0x00)))  # RF_ON
        self.clock.t += RF_ON_S + A_GUARD_S

    def exchange(self, data: bytes, valid_bits: int = 0, settings: bytes = b"", restart: bool = True):
        if restart:
            self.instruction(bytes((0x03,)) + settings + RESTART[1:])
        self.instruction(bytes((0x09, valid_bits)) + data)
        self.clock.t += 0.01
        irq = self.read_register(0x02)
        status = self.read_register(0x13)
        self.instruction(bytes((0x0A, 0x00)))
        self.chip.nss(0)
        data = self.chip.transfer(b"\xff" * (status & 0x1FF), True)
        self.chip.nss(1)
        return irq, status, data


def test_crc_a_gives_the_standards_check_values():
    # ISO/IEC 14443-3 annex B: 00 00 -> A0 1E, 12 34 -> 26 CF; a HLTA as every reader sends it: 50 00 57 CD
    assert crc_a(b"\x00\x00") == b"\xa0\x1e"
    assert crc_a(b"\x12\x34") == b"\x26\xcf"
    assert crc_a(b"\x50\x00") == b"\x57\xcd"


def test_a_frame_without_the_transceive_cycle_started_is_refused_and_sends_nothing():
    board = Board(["04A1B2C3D4E5F6"])
    board.field_on()
    irq, _status, _data = board.exchange(b"\x26", 7, crc(False), restart=False)
    assert irq & GENERAL_ERROR_IRQ and not irq & RX_IRQ  # the data sheet's exception: SEND_DATA needs WaitTransmit
    irq, _status, data = board.exchange(b"\x26", 7, crc(False))
    assert irq & RX_IRQ and data == b"\x44\x00"  # an NTAG's ATQA: double-size UID, bit frame anticollision
    # The next REQA finds the tag READY: it falls back to IDLE, silent (ISO/IEC 14443-3), and the transceiver is
    # left waiting for an answer, so only a restarted cycle sends again.
    irq, _status, _data = board.exchange(b"\x26", 7, crc(False))
    assert not irq & RX_IRQ
    irq, _status, _data = board.exchange(b"\x26", 7, crc(False), restart=False)
    assert irq & GENERAL_ERROR_IRQ


def test_two_tags_collide_at_the_first_bit_their_uids_differ_with_the_alignment_counted():
    # Single-size UIDs differing first in bit 13 (byte 1, bit 5 from the least significant).
    board = Board(["1A2B3C4D", "1A0B3C4D"])
    board.field_on()
    board.exchange(b"\x26", 7, crc(False))
    _irq, status, data = board.exchange(b"\x93\x20", 0, crc(False))
    assert status & RX_COLLISION and (status >> 19) & 0x7F == 13
    assert data[0] == 0x1A and data[1] & 0x1F == 0x0B  # the bits before the collision; after it cleared
    # Eleven bits known (NVB 0x33), the answer aligned at bit 3: it collides again at the same bit, now 2 into it.
    _irq, status, data = board.exchange(b"\x93\x33\x1a\x03", 3, crc(False, 3))
    assert status & RX_COLLISION and (status >> 19) & 0x7F == 3 + 2
    # Fourteen bits (bit 13 = 1): only the first tag answers, its bits from bit 6 of the split byte on.
    _irq, status, data = board.exchange(b"\x93\x36\x1a\x2b", 6, crc(False, 6))
    assert not status & RX_COLLISION and (status & 0x1FF, (status >> 13) & 7) == (4, 0)
    assert data[0] & 0xC0 == 0x2B & 0xC0 and data[1:] == bytes((0x3C, 0x4D, 0x1A ^ 0x2B ^ 0x3C ^ 0x4D))


def test_a_select_answers_with_the_sak_that_says_the_uid_goes_on_and_the_air_time_is_the_standards():
    board = Board(["04A1B2C3D4E5F6"])
    board.field_on()
    before = board.chip.air_s
    board.exchange(b"\x26", 7, crc(False))
    # REQA: 7 bits and 3 of framing; 1172/fc after its last bit (a 0); ATQA 16 bits, 2 parity, 2 framing; the pause
    reqa = (10 + 20) * A_BIT_S + 1172 / FC + 1172 / FC
    assert board.chip.air_s - before == pytest.approx(A_GUARD_S + reqa)
    level = bytes((0x88, 0x04, 0xA1, 0xB2))
    level += bytes((level[0] ^ level[1] ^ level[2] ^ level[3],))
    _irq, status, data = board.exchange(b"\x93\x70" + level, 0, crc(True))
    assert (status & 0x1FF, data) == (1, b"\x04")  # the CRC_A checked and removed: SAK with the cascade bit
    _irq, _status, data = board.exchange(b"\x95\x20", 0, crc(False))
    assert data == bytes((0xC3, 0xD4, 0xE5, 0xF6, 0xC3 ^ 0xD4 ^ 0xE5 ^ 0xF6))  # cascade level 2


def test_a_tag_answers_only_once_the_field_has_been_on_five_milliseconds():
    board = Board(["04A1B2C3D4E5F6"])
    board.instruction(bytes((0x11, 0x00, 0x80)))
    board.instruction(bytes((0x16, 0x00)))
    board.clock.t += RF_ON_S + 0.002
    irq, _status, _data = board.exchange(b"\x26", 7, crc(False))
    assert not irq & RX_IRQ
    board.clock.t += 0.004
    irq, _status, _data = board.exchange(b"\x26", 7, crc(False))
    assert irq & RX_IRQ


def test_tags_of_the_other_standard_do_not_answer():
    board = Board(["E0040150C3000001"])
    board.field_on()
    irq, _status, _data = board.exchange(b"\x26", 7, crc(False))
    assert not irq & RX_IRQ
