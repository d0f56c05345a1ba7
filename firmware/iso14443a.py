# ISO 14443-A inventory on one antenna of a PN5180 (NFC Forum Type 2 tags: NTAG213/215/216, MIFARE Ultralight;
# 4-, 7- and 10-byte UIDs), within a bounded time. A generator that yields whenever it waits for the air, as
# iso15693.py, with the same interface (check_antenna, inventory, AntennaState), so an antenna runs either.
#
# How every UID in the field is read: one REQA puts each tag in READY. An ANTICOLLISION command carrying the
# first n bits of a cascade level's UID (SEL, NVB, the bits) is answered by every READY tag whose UID begins so,
# with the rest of its bits; where the answers differ the PN5180 reports the first bit at which they collide.
# The loop walks the UID tree: at a collision it goes on with that bit 0 and keeps the branch with bit 1 for
# later. A tag whose UID does not begin so stays READY and silent, so one REQA serves a whole level's walk. A
# level that begins with the cascade tag has another level after it: SELECT with that level's UID takes the
# tags that share it into the next level, where the walk goes on (the other tags fall back to IDLE, so the
# next such group takes a new REQA). No tag is selected at its last level nor halted: reading a UID needs
# neither, and it saves a SELECT and a HLTA with its 1 ms wait per tag.
#
# Sources:
#  [ISO]  ISO/IEC 14443-3: REQA 0x26 in a 7-bit short frame; SEL 0x93, 0x95, 0x97 per cascade level; NVB, high
#        nibble the bytes sent (SEL and NVB included), low nibble the further bits: 0x20 to begin, 0x70 for
#        SELECT (with CRC_A); the cascade tag 0x88; BCC, the XOR of a level's 4 UID bytes; SAK bit 3 (0x04):
#        the UID is not complete; frame delay time PCD to PICC (n*128 + 84)/fc, n = 9, at most 1236/fc, and
#        PICC to PCD at least 1172/fc; 128/fc a bit at 106 kbit/s (ISO/IEC 14443-2). Tags answer in the order
#        they transmit, each byte least significant bit first.
#  [NX]  NXP NFC Reader Library, phpalI14443p3a_Sw.c (phpalI14443p3a_Sw_Anticollision, _ActivateCard): the
#        same loop: RX_ALIGN and TX last bits both the valid bits of the split byte, CRC off for ANTICOLLISION
#        and on for SELECT, the first byte received merged with the bits sent, a collision adding one bit to
#        the known UID; phhalHw_Pn5180_Int.c: the valid bits are the collision position from RX_STATUS.
#  [TU]  tueddy/PN5180-Library, PN5180ISO14443.cpp activateTypeA: LOAD_RF_CONFIG(0x00, 0x80); CRC_RX_CONFIG
#        and CRC_TX_CONFIG bit 0 cleared for REQA and ANTICOLLISION, set for SELECT; the 7-bit REQA; 93 20,
#        93 70, 95 20; SAK 0x04 and the cascade tag for a 7-byte UID.
#  [GT]  NXP NFC Reader Library PH_NXPNFCRDLIB_CONFIG_TYPEA_GT = 5100 us of unmodulated field before the
#        first request (ISO/IEC 14443-3: a PICC accepts a request within 5 ms of the field coming on).
#  [DS]  the PN5180 data sheet for the registers (see pn5180.py).
from micropython import const
import time

import pn5180

REQA = const(0x26)  # [ISO], [TU]
REQA_BITS = const(7)  # a short frame [ISO], [TU]
SEL = (0x93, 0x95, 0x97)  # ANTICOLLISION / SELECT, cascade levels 1-3 [ISO], [NX]
NVB_SELECT = const(0x70)  # all 40 bits of a level: SELECT [ISO], [TU]
CASCADE_TAG = const(0x88)  # [ISO], [NX] PHPAL_I14443P3A_CASCADE_TAG
SAK_CASCADE = const(0x04)  # SAK bit 3: the UID goes on [ISO], [NX], [TU]
LEVELS = const(3)  # 4-, 7- and 10-byte UIDs [ISO]

# Timing [ISO]: a bit is 128/fc = 9.44 us; a reader's frame adds a start bit and its end (a logic 0 and
# sequence Y: 2 bits), a tag's a start bit and an end bit; the tag answers at most 1236/fc = 91.2 us after our
# frame, and we wait at least 1172/fc = 86.4 us after its answer before the next frame.
BIT_NS = const(9440)
FDT_US = const(92)
ANSWER_PAUSE_US = const(87)
MARGIN_US = const(150)
GUARD_US = const(5100)  # [GT]
SELECT_TIMEOUT_US = const(1300)  # SELECT 84 bits, 92 us, SAK and CRC_A 29 bits, margin

_RX_ERRORS = pn5180.RX_INTEGRITY_ERROR | pn5180.RX_PROTOCOL_ERROR
_ANSWER = pn5180.RX_IRQ | pn5180.GENERAL_ERROR_IRQ


def _no_crc(align):
    # CRC off both ways and the first received bit at ``align``: ANTICOLLISION and REQA [NX], [TU], [DS table 92]
    return pn5180.frame_settings(
        (pn5180.CRC_TX_CONFIG, pn5180.AND, ~pn5180.CRC_ENABLE & 0xFFFFFFFF),
        (pn5180.CRC_RX_CONFIG, pn5180.AND, ~(pn5180.CRC_ENABLE | pn5180.RX_BIT_ALIGN_BITS) & 0xFFFFFFFF),
        (pn5180.CRC_RX_CONFIG, pn5180.OR, align << pn5180.RX_BIT_ALIGN_SHIFT))


NO_CRC = tuple(_no_crc(align) for align in range(8))
# CRC_A on both ways, no alignment: SELECT and its SAK [NX], [TU]
WITH_CRC = pn5180.frame_settings(
    (pn5180.CRC_TX_CONFIG, pn5180.OR, pn5180.CRC_ENABLE),
    (pn5180.CRC_RX_CONFIG, pn5180.AND, ~pn5180.RX_BIT_ALIGN_BITS & 0xFFFFFFFF),
    (pn5180.CRC_RX_CONFIG, pn5180.OR, pn5180.CRC_ENABLE))

_frame = bytearray(7)  # SEL, NVB, 4 UID bytes, BCC
_frames = tuple(memoryview(_frame)[:n] for n in range(8))
_ROOT = ((), b"\x00\x00\x00\x00", 0)


class AntennaState:
    """What one antenna's inventory carries from one dwell to the next: the walks still to make, each
    (path, prefix, known): the UID parts to SELECT first (a tuple of 4-byte levels beginning with the cascade
    tag), then this level's first ``known`` bits, ``prefix`` (4 bytes, least significant bit first)."""

    def __init__(self):
        self.pending = []


def check_antenna(chip, limits):
    """The field on in the ISO 14443-A configuration, and the antenna judged by its AGC value (pn5180.check_antenna)."""
    yield from pn5180.check_antenna(chip, limits, pn5180.RF_CONFIG_ISO14443A_106_TX,
                                    pn5180.RF_CONFIG_ISO14443A_106_RX)


def _timeout_us(out_bits, in_bits):
    """How long to wait for an answer of ``in_bits`` to a frame of ``out_bits`` (parity bits included)."""
    return (out_bits + 3 + in_bits + 2) * BIT_NS // 1000 + FDT_US + MARGIN_US


def _pause(answered_at):
    while time.ticks_diff(time.ticks_us(), answered_at) < ANSWER_PAUSE_US:
        yield


def _request(chip):
    """REQA; True when any tag answered (ATQAs of different tags may collide: someone is there all the same)."""
    _frame[0] = REQA
    chip.transceive(_frames[1], REQA_BITS, NO_CRC[0])
    irq = yield from pn5180.wait_irq(chip, _ANSWER, _timeout_us(REQA_BITS, 18))
    if not irq & pn5180.RX_IRQ:
        return False
    answered_at = time.ticks_us()
    rx = chip.rx_status()
    yield from _pause(answered_at)
    return bool(rx & (pn5180.RX_NUM_BYTES_MASK | pn5180.RX_COLLISION))


def _select(chip, level, part):
    """SELECT one level's UID (``part``, 4 bytes): the SAK of the tags that share it (bit 3: their UID goes on,
    they are READY at the next level now), or None."""
    frame = _frame
    frame[0] = SEL[level]
    frame[1] = NVB_SELECT
    frame[2:6] = part
    frame[6] = part[0] ^ part[1] ^ part[2] ^ part[3]
    chip.transceive(_frames[7], 0, WITH_CRC)
    irq = yield from pn5180.wait_irq(chip, _ANSWER, SELECT_TIMEOUT_US)
    if not irq & pn5180.RX_IRQ:
        return None
    answered_at = time.ticks_us()
    rx = chip.rx_status()
    sak = None
    if not rx & (_RX_ERRORS | pn5180.RX_COLLISION) and rx & pn5180.RX_NUM_BYTES_MASK == 1:
        sak = chip.read_data(1)[0]  # the PN5180 has checked and removed the CRC_A
    yield from _pause(answered_at)
    return sak


def _read(seen, path, last):
    uid = bytearray()
    for level in path:
        uid.extend(level[1:])  # without the cascade tag
    uid.extend(last)
    uid = bytes(uid)
    seen[uid] = seen.get(uid, 0) + 1


def _level_read(path, part, walks, seen):
    """A cascade level's 4 UID bytes are known: the UID goes on at the next level (a walk for the group that
    shares it), or it is whole. A UID may not have the cascade tag where it could be one [ISO], [NX]; one that
    has is read when its SELECT's SAK says it is whole."""
    if part[0] == CASCADE_TAG and len(path) < LEVELS - 1:
        walks.append((path + (part,), _ROOT[1], 0))
    else:
        _read(seen, path, part)


def _anticollision(chip, walk, walks, seen):
    """One ANTICOLLISION frame of ``walk``: its answer either ends a UID (into ``seen``), opens the next level of
    a group (a walk in ``walks``) or collides (both branches into ``walks``, bit 0 to be taken first)."""
    path, prefix, known = walk
    level = len(path)
    whole, bits = known >> 3, known & 7
    sent = whole + (1 if bits else 0)
    frame = _frame
    frame[0] = SEL[level]
    frame[1] = (2 + whole) << 4 | bits  # NVB [ISO]
    for i in range(sent):
        frame[2 + i] = prefix[i]
    if bits:
        frame[2 + whole] &= (1 << bits) - 1
    # The split byte's remaining bits come first in the answer, stored from bit ``bits`` on [NX], [DS table 92].
    chip.transceive(_frames[2 + sent], bits, NO_CRC[bits])
    irq = yield from pn5180.wait_irq(chip, _ANSWER, _timeout_us(18 + known + whole, 45 - known - whole))
    if not irq & pn5180.RX_IRQ:
        return  # nobody: the branch's tags have left the field
    answered_at = time.ticks_us()
    rx = chip.rx_status()
    received = rx & pn5180.RX_NUM_BYTES_MASK
    collided = rx & pn5180.RX_COLLISION
    at = (whole << 3) + ((rx >> pn5180.RX_COLL_POS_SHIFT) & 0x7F)  # the first colliding bit of the level
    if collided:
        needed = (at >> 3) - whole + 1  # up to the byte holding the collision
        usable = known <= at < 32 and received >= needed  # a collision in the BCC cannot happen
    else:
        needed = 5 - whole
        usable = not rx & _RX_ERRORS and received == needed and not (rx >> pn5180.RX_LAST_BITS_SHIFT) & 7
    if usable:
        data = chip.read_data(needed)
        value = bytearray(5)
        for i in range(whole):
            value[i] = prefix[i]
        keep = (1 << bits) - 1
        value[whole] = (prefix[whole] & keep if bits else 0) | (data[0] & ~keep & 0xFF)  # [NX] the merge
        for i in range(1, needed):
            value[whole + i] = data[i]
        if collided:
            value[at >> 3] &= (1 << (at & 7)) - 1  # the known bits only, bit ``at`` 0
            zero = bytes(value[:4])
            value[at >> 3] |= 1 << (at & 7)
            one = bytes(value[:4])
            if at == 31:  # the last bit: both UIDs are whole (each tag's BCC follows from them)
                _level_read(path, one, walks, seen)
                _level_read(path, zero, walks, seen)
            else:
                walks.append((path, one, at + 1))
                walks.append((path, zero, at + 1))
        elif value[0] ^ value[1] ^ value[2] ^ value[3] == value[4]:  # BCC [ISO]
            _level_read(path, bytes(value[:4]), walks, seen)
    # else: a garbled answer; the walk is given up here and the next dwell walks again from the top
    yield from _pause(answered_at)


def _take(walks, ready):
    """The next walk: one on the level the READY tags are at, else one those tags reach by SELECTs alone, else
    the latest (which costs a REQA). Newest first: a walk finishes a branch before the next."""
    if ready is not None:
        depth = len(ready)
        for exact in (True, False):
            for i in range(len(walks) - 1, -1, -1):
                path = walks[i][0]
                if (path == ready) if exact else (path[:depth] == ready):
                    return walks.pop(i)
    return walks.pop()


def inventory(chip, state, deadline_ms, seen):
    """Read the tags in the field into ``seen`` (UID bytes in the order the tag sends them, cascade tags and BCCs
    left out -> answers) until done or the deadline, which is checked after each step. The walks left when
    the time runs out stay in ``state.pending`` for this antenna's next dwell, so a stack bigger than one dwell
    resolves is still read whole over a few dwells."""
    walks = state.pending or [_ROOT]
    state.pending = []
    while time.ticks_diff(time.ticks_us(), chip.rf_on_us) < GUARD_US:  # the tags power up [GT]
        yield
    ready = None  # the SELECTs the READY tags have been through; None: no tag is READY
    while walks:
        walk = _take(walks, ready)
        path = walk[0]
        if ready is None or path[:len(ready)] != ready:
            if not (yield from _request(chip)):
                walks = []  # nobody in the field any more
                break
            ready = ()
        while ready is not None and len(ready) < len(path):
            level = len(ready)
            group = path[:level + 1]
            sak = yield from _select(chip, level, path[level])
            if sak is not None and sak & SAK_CASCADE:
                ready = group
                continue
            walks = [w for w in walks if w[0][:level + 1] != group]  # nothing more under it
            if sak is not None:  # whole at this level after all
                _read(seen, path[:level], path[level])
            ready = None  # the others are IDLE (the group has left the field, or its tag is ACTIVE)
        if ready == path:
            yield from _anticollision(chip, walk, walks, seen)
        if time.ticks_diff(deadline_ms, time.ticks_ms()) <= 0:
            break  # checked after a step, not before: a dwell shorter than the guard time still gets on
    state.pending.extend(walks)
