# PN5180 NFC front end over SPI, the antenna switch in front of it, and what every standard's inventory needs
# from it (an antenna check, a frame out, a wait for the air). The same code runs on the Pico and, through an
# adapter giving it machine.SPI and machine.Pin, on a Raspberry Pi: it touches nothing but the chip.
#
# Sources of the numbers below:
#  [DS]  NXP PN5180A0xx/C3,C4 data sheet (Rev. 4.0, 30 August 2022), section 11.4.3.3 "Host interface command
#        list" and the register map (pp. 80-81 of the C3/C4 edition lists AGC_VALUE 0x1F); by table:
#        9 WRITE_REGISTER_MULTIPLE, 15/16 SEND_DATA (and its precondition: SYSTEM_CONFIG.COMMAND = Transceive,
#        the transceiver in WaitTransmit), 32 LOAD_RF_CONFIG, 74 register addresses, 75 SYSTEM_CONFIG,
#        92 CRC_RX_CONFIG, 93 RX_STATUS, 98 TX_CONFIG, 99 CRC_TX_CONFIG, 103 RF_STATUS; figure 37 the transceive
#        state machine.
#  [NX]  NXP NFC Reader Library, phhalHw_Pn5180_Int.c: phhalHw_Pn5180_Int_LoadCommand restarts the transceive
#        cycle with one WRITE_REGISTER_MULTIPLE (AND-mask the command bits to IDLE, then OR in TRANSCEIVE), and
#        its exchange clears the IRQs before every SEND_DATA.
#  [AN]  NXP AN12650 "Using the PN5180 without library", the ISO 15693 inventory procedure (steps 1-16:
#        load RF config, RF on, clear IRQ, SEND_DATA, per slot RX_STATUS/IRQ_STATUS, READ_DATA, AND-mask
#        TX_CONFIG with 0xFFFFFB3F so the next SEND_DATA sends only an EOF, RF off).
#  [AT]  ATrappmann/PN5180-Library, PN5180.h/.cpp: command and register numbers, IRQ_STATUS bits, the BUSY
#        handshake (wait BUSY low, NSS low, transfer, NSS high, wait BUSY low) and LOAD_RF_CONFIG(0x0D, 0x8D)
#        for ISO 15693 at 26 kbit/s (ASK100).
#  [TG]  bofh69/PN5180-tagomatic, sketch/pn5180_reader.ino (Raspberry Pi Pico): the full command list
#        including WRITE_REGISTER_MULTIPLE 0x03 / READ_REGISTER_MULTIPLE 0x05, and the reset timing.
from micropython import const
import time

# Host interface commands [DS 11.4.3.3], [AT], [TG]
WRITE_REGISTER = const(0x00)
WRITE_REGISTER_OR_MASK = const(0x01)
WRITE_REGISTER_AND_MASK = const(0x02)
WRITE_REGISTER_MULTIPLE = const(0x03)
READ_REGISTER = const(0x04)
READ_EEPROM = const(0x07)
SEND_DATA = const(0x09)
READ_DATA = const(0x0A)
LOAD_RF_CONFIG = const(0x11)
RF_ON = const(0x16)
RF_OFF = const(0x17)

# WRITE_REGISTER_MULTIPLE's action per entry {address, action, value} [DS table 9]
SET = const(0x01)
OR = const(0x02)
AND = const(0x03)

# Registers [DS register map, table 74], [AT]
SYSTEM_CONFIG = const(0x00)
IRQ_ENABLE = const(0x01)
IRQ_STATUS = const(0x02)
IRQ_CLEAR = const(0x03)
CRC_RX_CONFIG = const(0x12)
RX_STATUS = const(0x13)
TX_CONFIG = const(0x18)
CRC_TX_CONFIG = const(0x19)
RF_STATUS = const(0x1D)
AGC_VALUE = const(0x1F)

# SYSTEM_CONFIG bits 2:0, the transceive state machine's command [DS table 75]
COMMAND_BITS = const(0x7)
COMMAND_TRANSCEIVE = const(0x3)  # (IDLE is 0)

# CRC_RX_CONFIG [DS table 92]: bit 0 RX_CRC_ENABLE, bits 8:6 RX_BIT_ALIGN (where the first received bit goes
# in the first byte, for an answer that completes a byte the reader began); CRC_TX_CONFIG bit 0 TX_CRC_ENABLE
# [DS table 99]
CRC_ENABLE = const(1 << 0)
RX_BIT_ALIGN_SHIFT = const(6)
RX_BIT_ALIGN_BITS = const(0x7 << 6)

# EEPROM [AT]
DIE_IDENTIFIER = const(0x00)  # 16 bytes
FIRMWARE_VERSION = const(0x12)  # 2 bytes

# IRQ_STATUS bits [AT]
RX_IRQ = const(1 << 0)  # end of reception
TX_IRQ = const(1 << 1)  # end of transmission
IDLE_IRQ = const(1 << 2)
TX_RFON_IRQ = const(1 << 9)  # our field is on
RX_SOF_DET_IRQ = const(1 << 14)  # a tag's start of frame was seen
GENERAL_ERROR_IRQ = const(1 << 17)
ALL_IRQS = const(0x000FFFFF)  # [AN] step 3

# RX_STATUS fields [AN], [DS table 93]: bits 8:0 bytes received, 15:13 valid bits of the last byte (0: all),
# 16 data integrity (parity or CRC), 17 protocol error, 18 collision, 25:19 the first collision's bit position
# (RX_BIT_ALIGN included)
RX_NUM_BYTES_MASK = const(0x1FF)
RX_LAST_BITS_SHIFT = const(13)
RX_INTEGRITY_ERROR = const(1 << 16)
RX_PROTOCOL_ERROR = const(1 << 17)
RX_COLLISION = const(1 << 18)
RX_COLL_POS_SHIFT = const(19)

# TX_CONFIG AND-mask: the next SEND_DATA sends only an EOF (the next inventory slot) [AN] step 11
TX_CONFIG_EOF_ONLY = const(0xFFFFFB3F)

# LOAD_RF_CONFIG for ISO 15693, 26 kbit/s, ASK 100 % [AT], [DS table 32 "RF configurations"]
RF_CONFIG_ISO15693_TX = const(0x0D)
RF_CONFIG_ISO15693_RX = const(0x8D)
# and for ISO 14443-A at 106 kbit/s [DS table 32]
RF_CONFIG_ISO14443A_106_TX = const(0x00)
RF_CONFIG_ISO14443A_106_RX = const(0x80)

BUSY_TIMEOUT_US = const(5000)  # the slowest command we use (RF on) completes well within this
RF_ON_WAIT_US = const(5000)


def register_entries(*entries):
    """WRITE_REGISTER_MULTIPLE entries {address, action (SET, OR, AND), value little-endian} [DS table 9]."""
    out = bytearray()
    for address, action, value in entries:
        out.append(address)
        out.append(action)
        for shift in (0, 8, 16, 24):
            out.append((value >> shift) & 0xFF)
    return bytes(out)


# Before every frame: clear the IRQs, then restart the transceive cycle (IDLE, then TRANSCEIVE), so the
# transceiver is in WaitTransmit whatever the last frame left it in (no answer leaves it waiting for one)
# [DS tables 15, 75, figure 37], [NX], [AN] steps 3-5 and 12-14.
_RESTART = register_entries((IRQ_CLEAR, SET, ALL_IRQS), (SYSTEM_CONFIG, AND, ~COMMAND_BITS & 0xFFFFFFFF),
                            (SYSTEM_CONFIG, OR, COMMAND_TRANSCEIVE))


def frame_settings(*entries):
    """Register settings a frame needs (CRC, bit alignment, TX_CONFIG), written with the restart in one SPI
    frame before SEND_DATA: built once, at import, so sending allocates nothing."""
    return register_entries(*entries) + _RESTART


PLAIN_FRAME = frame_settings()


class FrontEndError(Exception):
    """The PN5180 does not answer (BUSY stuck): the whole front end is out."""


class AntennaFault(Exception):
    def __init__(self, code, detail=0):
        self.code = code
        self.detail = detail


def until_us(deadline):
    """Yield until ``deadline`` (ticks_us), touching no chip: the other front end has the SPI bus and the CPU."""
    while time.ticks_diff(deadline, time.ticks_us()) > 0:
        yield


def wait_irq(chip, bits, timeout_us, none_before_us=0):
    """Yield until one of ``bits`` is set in IRQ_STATUS or the time is up; the generator's value is the status.

    ``none_before_us``: the air's own timing says no bit can be set before then (a tag answers t1 after our frame
    ends, its answer lasts as long as its bits): IRQ_STATUS is first read then. The bits latch, so a later first
    reading loses nothing, and the SPI bus and the CPU are left to the other front end meanwhile."""
    start = time.ticks_us()
    if none_before_us:
        yield from until_us(time.ticks_add(start, none_before_us))
    while True:
        irq = chip.irq_status()
        if irq & bits:
            return irq
        if time.ticks_diff(time.ticks_us(), start) >= timeout_us:
            return chip.irq_status()  # decided by a reading taken after the deadline, never by a late one
        yield


def check_antenna(chip, limits, tx_config, rx_config):
    """Load the antenna's RF configuration, switch the field on and read the AGC value, which follows the
    antenna's load: no coil, a short, or a coil far off tune moves it out of the band measured when the table
    was commissioned. A generator; raises AntennaFault."""
    chip.load_rf_config(tx_config, rx_config)  # [AN] step 1
    chip.clear_irq()
    chip.rf_on()  # [AN] step 2
    irq = yield from wait_irq(chip, TX_RFON_IRQ, RF_ON_WAIT_US)
    if not irq & TX_RFON_IRQ:
        raise AntennaFault(3)  # OVERCURRENT: the driver did not bring the field up (its protection tripped)
    chip.rf_on_us = time.ticks_us()  # seen on: a standard's guard time before its first request counts from here
    agc = chip.agc_value()
    if agc < limits[0]:
        raise AntennaFault(1, 0)  # OPEN
    if agc > limits[2]:
        raise AntennaFault(2, 0)  # SHORT
    if agc > limits[1]:
        raise AntennaFault(4, 0)  # TUNING (the PN5180 cannot measure the resonance: detail 0)


_MULTIPLE = bytes((WRITE_REGISTER_MULTIPLE,))


class PN5180:
    """One PN5180 on a shared SPI bus: its own NSS, BUSY and RST pins."""

    def __init__(self, spi, nss, busy, rst):
        self.spi = spi
        self.nss = nss
        self.busy = busy
        self.rst = rst
        self._cmd = bytearray(6)
        self._cmd2 = memoryview(self._cmd)[:2]
        self._cmd3 = memoryview(self._cmd)[:3]
        self._word = bytearray(4)
        self._rx = bytearray(16)  # READ_DATA of an inventory answer, READ_EEPROM of an id
        self.rf_on_us = 0  # when check_antenna saw the field come on (ticks_us)
        self.nss.value(1)

    def reset(self):
        # [TG] reset(): RST low 10 ms, then high and 50 ms until the chip is ready
        self.rst.value(0)
        time.sleep_ms(10)
        self.rst.value(1)
        time.sleep_ms(50)
        self._wait_ready()

    def _wait_ready(self):
        start = time.ticks_us()
        busy = self.busy
        while busy.value():
            # Judge by a reading taken after the timeout, so a late reading never counts as a stuck chip.
            if time.ticks_diff(time.ticks_us(), start) > BUSY_TIMEOUT_US and busy.value():
                raise FrontEndError("BUSY stuck high")

    def _transfer(self, out, into=None, more=None):
        # BUSY handshake [AT transceiveCommand], [DS 11.4.1]: BUSY must be low before NSS goes low; every
        # transfer ends by waiting for BUSY low, so the check before the next one is already done. ``more``:
        # further bytes in the same NSS frame (a SEND_DATA's payload), written without joining buffers.
        self.nss.value(0)
        if into is None:
            self.spi.write(out)
            if more:
                self.spi.write(more)
        else:
            self.spi.write_readinto(out, into)
        self.nss.value(1)
        self._wait_ready()

    def command(self, data):
        self._transfer(data)

    def write_register(self, register, value, op=WRITE_REGISTER):
        cmd = self._cmd
        cmd[0] = op
        cmd[1] = register
        cmd[2] = value & 0xFF
        cmd[3] = (value >> 8) & 0xFF
        cmd[4] = (value >> 16) & 0xFF
        cmd[5] = (value >> 24) & 0xFF
        self._transfer(cmd)

    def and_mask(self, register, mask):
        self.write_register(register, mask, WRITE_REGISTER_AND_MASK)

    def read_register(self, register):
        cmd = self._cmd
        cmd[0] = READ_REGISTER
        cmd[1] = register
        self._transfer(self._cmd2)
        word = self._word
        self._transfer(b"\xff\xff\xff\xff", word)  # the answer is clocked out in a second NSS frame [DS]
        return word[0] | word[1] << 8 | word[2] << 16 | word[3] << 24

    def _command2(self, code, argument):
        self._cmd[0] = code
        self._cmd[1] = argument
        self._transfer(self._cmd2)

    def _read_out(self, length):
        """The answer of the previous instruction, clocked out in its own NSS frame into a reused buffer."""
        out = memoryview(self._rx)[:length] if length <= len(self._rx) else bytearray(length)
        for i in range(length):
            out[i] = 0xFF
        self._transfer(out, out)
        return out

    def _command3(self, code, first, second):
        cmd = self._cmd
        cmd[0] = code
        cmd[1] = first
        cmd[2] = second
        self._transfer(self._cmd3)

    def read_eeprom(self, address, length):
        self._command3(READ_EEPROM, address, length)
        return bytes(self._read_out(length))

    def irq_status(self):
        return self.read_register(IRQ_STATUS)

    def clear_irq(self, mask=ALL_IRQS):
        self.write_register(IRQ_CLEAR, mask)

    def rx_status(self):
        return self.read_register(RX_STATUS)

    def load_rf_config(self, tx, rx):
        self._command3(LOAD_RF_CONFIG, tx, rx)

    def rf_on(self):
        self._command2(RF_ON, 0)  # no collision avoidance [DS]

    def rf_off(self):
        self._command2(RF_OFF, 0)  # [DS]

    def send_data(self, data, valid_bits=0):
        # SEND_DATA: command, number of valid bits in the last byte (0 = all), the frame [DS], [AT sendData]
        self._cmd[0] = SEND_DATA
        self._cmd[1] = valid_bits
        self._transfer(self._cmd2, None, data)

    def transceive(self, data, valid_bits=0, settings=PLAIN_FRAME):
        """One frame to the tags: ``settings`` (from frame_settings: the IRQs cleared, the transceive cycle
        restarted, and whatever the frame needs) in one WRITE_REGISTER_MULTIPLE, then SEND_DATA. The answer is
        the caller's to wait for (RX_IRQ)."""
        self._transfer(_MULTIPLE, None, settings)
        self.send_data(data, valid_bits)

    def read_data(self, length):
        """The received frame; the returned buffer is reused by the next read (copy what must be kept)."""
        self._command2(READ_DATA, 0)  # [DS], [TG read_data]
        return self._read_out(length)

    def agc_value(self):
        return self.read_register(AGC_VALUE) & 0x3FF


class AntennaSwitch:
    """Up to 8 antennas on one PN5180 behind a 1-of-8 RF switch, with the idle antennas detuned.

    A plain RF switch is not enough past a few antennas: an idle coil tuned to 13.56 MHz still resonates,
    couples to the active one, pulls its tuning and reads its neighbour's tags (NXP AN11535 / ST AN4974 on
    multi-antenna readers). So each antenna has a detuning MOSFET across its tuning capacitor, driven by a
    3-to-8 decoder with active-low outputs (74HC138) on the same select lines as the switch: the selected
    antenna's MOSFET is off (tuned), all others are on (detuned). The decoder's enable is the ``release``
    pin: low detunes every antenna and opens the switch, so changing antennas never leaves two tuned."""

    def __init__(self, select_pins, release_pin):
        self.select_pins = select_pins
        self.release = release_pin
        self.selected = None
        self.release.value(0)

    def select(self, index):
        self.release.value(0)  # everything detuned while the lines change
        for bit, pin in enumerate(self.select_pins):
            pin.value((index >> bit) & 1)
        self.release.value(1)
        self.selected = index

    def park(self):
        self.release.value(0)
        self.selected = None
