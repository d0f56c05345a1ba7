# Stand-in for MicroPython's `machine` module in the unix port: the firmware runs unmodified, and its pins,
# SPI bus, ADC and reset reach a model of the board (sim/pn5180.py, in the host process) over the Unix
# socket named by RFID_TABLE_BOARD. Writes are sent without waiting; reads wait for their answer, which
# keeps every SPI frame and pin change in order at the model.
import os
import socket
import struct
import sys

_link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
_link.connect(struct.pack("H", socket.AF_UNIX) + os.getenv("RFID_TABLE_BOARD").encode())


# Preallocated buffers: the stand-in should allocate as little as the Pico's C machine module (nothing), so the
# firmware's own allocations are what the bench's memory figure shows.
_header = bytearray(3)
_header2 = memoryview(_header)[:2]
_answer = bytearray(2)
_answer1 = memoryview(_answer)[:1]


def _send(data):
    _link.write(data)


def _ask(data, into):
    """Send ``data``; read the answer into the buffer ``into`` (its length is the answer's)."""
    _link.write(data)
    got = _link.readinto(into)  # small answers come whole
    while got is not None and got < len(into):
        count = _link.readinto(memoryview(into)[got:])
        if not count:
            break
        got += count
    if not got or got < len(into):
        sys.exit(4)  # the board model went away: power off
    return into


def _op(code, a, b=0):
    _header[0] = code
    _header[1] = a
    _header[2] = b
    return _header


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, number, mode=IN, pull=None, value=None):
        self.number = number
        if value is not None:
            self.value(value)

    def value(self, level=None):
        if level is None:
            _op(71, self.number)  # "G"
            return _ask(_header2, _answer1)[0]
        _send(_op(80, self.number, 1 if level else 0))  # "P"

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def __call__(self, level=None):
        return self.value(level)


class SPI:
    def __init__(self, bus, baudrate=1000000, polarity=0, phase=0, sck=None, mosi=None, miso=None):
        self.bus = bus

    def write(self, data):
        size = len(data)
        _send(_op(87, size & 0xFF, size >> 8))  # "W", length
        _send(data)

    def write_readinto(self, out, into):
        size = len(out)
        _send(_op(88, size & 0xFF, size >> 8))  # "X", length
        _ask(out, into)

    def readinto(self, into, write=0xFF):
        for i in range(len(into)):
            into[i] = write
        self.write_readinto(into, into)


class ADC:
    def __init__(self, channel):
        self.channel = channel

    def read_u16(self):
        _op(65, self.channel)  # "A"
        answer = _ask(_header2, _answer)
        return answer[0] | answer[1] << 8


def unique_id():
    return bytes(_ask(b"U", bytearray(8)))


def reset():
    sys.exit(3)  # the board model restarts the firmware, as the RP2040 reboots


def freq(hz=None):
    return 125000000
