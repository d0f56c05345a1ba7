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


def _send(data):
    _link.write(data)


def _ask(data, size):
    _link.write(data)
    answer = b""
    while len(answer) < size:
        chunk = _link.read(size - len(answer))
        if not chunk:
            sys.exit(4)  # the board model went away: power off
        answer += chunk
    return answer


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
            return _ask(b"G" + bytes((self.number,)), 1)[0]
        _send(b"P" + bytes((self.number, 1 if level else 0)))

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
        _send(b"W" + struct.pack("<H", len(data)) + bytes(data))

    def write_readinto(self, out, into):
        into[:] = _ask(b"X" + struct.pack("<H", len(out)) + bytes(out), len(out))

    def readinto(self, into, write=0xFF):
        self.write_readinto(bytes((write,)) * len(into), into)


class ADC:
    def __init__(self, channel):
        self.channel = channel

    def read_u16(self):
        return struct.unpack("<H", _ask(b"A" + bytes((self.channel,)), 2))[0]


def unique_id():
    return _ask(b"U", 8)


def reset():
    sys.exit(3)  # the board model restarts the firmware, as the RP2040 reboots


def freq(hz=None):
    return 125000000
