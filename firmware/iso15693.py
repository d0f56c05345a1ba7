# ISO 15693 inventory on one antenna of a PN5180: 16-slot rounds with an EOF per slot and collision
# resolution by mask, within a bounded time. Written as a generator that yields whenever it waits for the
# air, so the scanner can run several front ends side by side on one CPU.
#
# ISO/IEC 15693-3 inventory request: flags, command 0x01, mask length in bits, mask (LSB first), the CRC is
# added by the PN5180. Flags 0x06 = high data rate + inventory, 16 slots; a tag answers in the slot equal to
# the 4 UID bits above the mask. The procedure follows NXP AN12650 (see pn5180.py for the sources).
from micropython import const
import time

import pn5180
from pn5180 import AntennaFault  # noqa: F401 (also importable from here)

INVENTORY_FLAGS_16_SLOTS = const(0x06)
INVENTORY_FLAGS_1_SLOT = const(0x26)  # the Nb_slots flag (0x20): one slot, every tag answers in it at once
ALONE = const(-1)  # the mask length that stands for a round of one slot (no mask)
INVENTORY = const(0x01)
# Stay Quiet, addressed (ISO/IEC 15693-3 command 0x02; flags 0x22: address + high data rate, then the UID LSB first).
# The tag answers nothing, and no inventory, until it loses power: a tag in the quiet state takes only addressed
# requests, so neither a round nor a Reset to Ready (0x26) sent to all wakes it (ISO/IEC 15693-3 states; NXP's
# reader library, phpalSli15693_Sw_StayQuiet: "no response to the command allowed", a timeout is its success).
STAY_QUIET = const(0x02)
ADDRESSED_FLAGS = const(0x22)
UID_RESPONSE_BYTES = const(10)  # flags, DSFID, UID (8, LSB first); the PN5180 strips the CRC
SOF_WAIT_US = const(700)  # after our EOF: ISO 15693 t1 (320.9 us) + the tag's SOF (151 us) + margin
T1_MIN_US = const(318)  # ISO 15693 t1 at its least (4320/fc): no tag's SOF begins sooner after our EOF
RESPONSE_WAIT_US = const(6000)  # a 12-byte answer at 26.48 kbit/s takes 3.8 ms
ANSWER_US = const(3900)  # a tag's answer, SOF to EOF: 151 us, 12 bytes at 37.76 us a bit (3,625 us), 151 us
T2_US = const(310)  # ISO 15693 t2 (4192/fc): quiet time after an answer before the next EOF
REQUEST_BYTE_US = const(302)  # reader to tag, 1-of-4 coding: 4 x 75.52 us per byte
REQUEST_FRAMING_US = const(113)  # SOF 75.52 us + EOF 37.76 us
EOF_US = const(38)

# The next slot's frame: TX_CONFIG AND-masked so SEND_DATA sends only an EOF [AN] step 11, with the IRQs
# cleared and the transceive cycle restarted [AN] steps 12-14.
EOF_SLOT = pn5180.frame_settings((pn5180.TX_CONFIG, pn5180.AND, pn5180.TX_CONFIG_EOF_ONLY))


class AntennaState:
    """What one antenna's inventory carries from one dwell to the next: the mask sub-trees still to read; parked
    (PARK, 1.2), when its last whole reading began (ticks_ms; None: one is due), the tags read in the last visit,
    to be told to stay quiet, and the quiet visits with nothing new still to come before a whole reading may (a
    stack growing: see the reader's GROWING_VISITS)."""

    def __init__(self):
        self.pending = []
        self.full_ms = None
        self.to_quiet = []
        self.growing = 0


_QUIET_FRAME = bytearray(10)
_QUIET_TX_US = REQUEST_BYTE_US * (len(_QUIET_FRAME) + 2) + REQUEST_FRAMING_US  # with its CRC


def stay_quiet(chip, uid):
    """Put the tag ``uid`` (MSB first, as read) in the quiet state: a generator, one addressed frame of 3.7 ms on
    the air and the wait in which an answer would have begun (none is allowed)."""
    frame = _QUIET_FRAME
    frame[0] = ADDRESSED_FLAGS
    frame[1] = STAY_QUIET
    for i in range(8):
        frame[2 + i] = uid[7 - i]  # the air sends the UID LSB first
    # The configuration again: the EOF-only slots of a round left TX_CONFIG masked [AN] step 1.
    chip.load_rf_config(pn5180.RF_CONFIG_ISO15693_TX, pn5180.RF_CONFIG_ISO15693_RX)
    chip.transceive(frame)
    yield from pn5180.wait_irq(chip, pn5180.RX_SOF_DET_IRQ | pn5180.RX_IRQ, _QUIET_TX_US + SOF_WAIT_US,
                               _QUIET_TX_US + T1_MIN_US)


def _request(mask, mask_len):
    mask_bytes = (mask_len + 7) // 8
    out = bytearray(3 + mask_bytes)
    out[0] = INVENTORY_FLAGS_16_SLOTS
    out[1] = INVENTORY
    out[2] = mask_len
    for i in range(mask_bytes):
        out[3 + i] = (mask >> (8 * i)) & 0xFF
    return out


_ONE_SLOT_REQUEST = bytes((INVENTORY_FLAGS_1_SLOT, INVENTORY, 0))  # no mask


def check_antenna(chip, limits):
    """The field on in the ISO 15693 configuration, and the antenna judged by its AGC value (pn5180.check_antenna)."""
    yield from pn5180.check_antenna(chip, limits, pn5180.RF_CONFIG_ISO15693_TX, pn5180.RF_CONFIG_ISO15693_RX)


def inventory(chip, state, deadline_ms, seen, one_slot_first=False):
    """Read the tags in the field into ``seen`` (UID bytes MSB first -> answers) until done or the deadline.

    ``one_slot_first``: begin with a round of one slot, where few tags are expected (a parked antenna's quiet
    round, answered only by the tags put down since): nobody (2 ms of air) or one tag alone ends it; two or more
    collide, and 16-slot rounds sort them out as any.

    A round once started runs to its 16th slot (a round cannot be resumed), so a dwell lasts at most its
    deadline plus one round (16 answers: 73 ms at most, an empty round about 12 ms). Sub-trees left when the
    time runs out stay in ``state.pending`` for this antenna's next dwell, so a stack bigger than one dwell
    resolves is still read whole over a few dwells."""
    masks = state.pending or [(0, ALONE if one_slot_first else 0)]
    state.pending = []
    while masks:
        if time.ticks_diff(deadline_ms, time.ticks_ms()) <= 0:
            break
        mask, mask_len = masks.pop(0)
        alone = mask_len == ALONE
        # Reloading the ISO 15693 configuration restores TX_CONFIG after the EOF-only slots [AN] step 1.
        chip.load_rf_config(pn5180.RF_CONFIG_ISO15693_TX, pn5180.RF_CONFIG_ISO15693_RX)
        request = _ONE_SLOT_REQUEST if alone else _request(mask, mask_len)
        chip.transceive(request)  # [AN] steps 3-6
        tx_us = REQUEST_BYTE_US * (len(request) + 2) + REQUEST_FRAMING_US
        for slot in range(16):
            # A tag's SOF comes t1 after our frame ends: wait that long (the frame's own time included)
            # for it, with no extra poll for the end of transmission.
            sent = time.ticks_us()
            irq = yield from pn5180.wait_irq(chip, pn5180.RX_SOF_DET_IRQ | pn5180.RX_IRQ, SOF_WAIT_US + tx_us,
                                             tx_us + T1_MIN_US)
            # an answer ends no sooner than t1 and its own length after our frame, however late its SOF was seen
            answer_end = time.ticks_add(sent, tx_us + T1_MIN_US + ANSWER_US)
            tx_us = EOF_US
            if irq & (pn5180.RX_SOF_DET_IRQ | pn5180.RX_IRQ):
                if not irq & pn5180.RX_IRQ:
                    irq = yield from pn5180.wait_irq(chip, pn5180.RX_IRQ, RESPONSE_WAIT_US,
                                                     max(0, time.ticks_diff(answer_end, time.ticks_us())))
                answered_at = time.ticks_us()
                rx = chip.rx_status()  # [AN] step 7
                if rx & pn5180.RX_COLLISION:
                    if alone:  # two or more at once: a 16-slot round sorts them out
                        masks.append((0, 0))
                    elif mask_len + 4 <= 60:  # two tags in this slot: split it by 4 more mask bits
                        masks.append((mask | slot << mask_len, mask_len + 4))
                elif irq & pn5180.RX_IRQ and rx & pn5180.RX_NUM_BYTES_MASK >= UID_RESPONSE_BYTES:
                    data = chip.read_data(UID_RESPONSE_BYTES)  # [AN] step 9
                    if not data[0] & 1:  # no error flag
                        uid = bytes(reversed(data[2:10]))  # the air sends LSB first; the wire wants MSB first
                        seen[uid] = seen.get(uid, 0) + 1
                yield from pn5180.until_us(time.ticks_add(answered_at, T2_US))
            if slot == 15 or alone:
                break
            chip.transceive(b"", 0, EOF_SLOT)  # [AN] steps 11-15: the next slot's EOF
    state.pending.extend(masks)
