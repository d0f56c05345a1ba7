# Reader firmware entry point: runs at power-up on the Pico (and, unmodified, in the MicroPython unix port
# with firmware/host/machine.py standing in for the board). The pin map is config.json beside this file.
import json
import sys
import select
import time
from binascii import hexlify

import machine
import micropython

import pn5180
import reader
import wire


class UsbPort:
    """The USB CDC serial port, which is MicroPython's stdin and stdout: raw bytes both ways."""

    def __init__(self):
        micropython.kbd_intr(-1)  # 0x03 is an ordinary byte in our frames, not Ctrl-C
        self.rx = sys.stdin.buffer
        self.tx = sys.stdout.buffer
        self.readable = select.poll()
        self.readable.register(sys.stdin, select.POLLIN)
        self.writable = select.poll()
        self.writable.register(sys.stdout, select.POLLOUT)

    def read(self):
        data = bytearray()
        while len(data) < 600 and self.readable.poll(0):
            byte = self.rx.read(1)
            if not byte:
                break
            data.extend(byte)
        return data

    def write(self, data):
        if not self.writable.poll(0):
            return 0  # the host is not reading: keep it queued (the queue's limit drops, and counts, frames)
        chunk = bytes(data[:256])
        self.tx.write(chunk)
        return len(chunk)

    def wait(self, ms):
        self.readable.poll(ms)

    def drain(self):
        time.sleep_ms(20)


def set_usb_id(usb_id):
    """Present the board as ``usb_id`` ("VVVV:PPPP", the udev rule's) instead of MicroPython's 2E8A:0005, keeping
    the built-in CDC serial port (machine.USBDevice, MicroPython 1.23 or later on rp2). Without it, nothing."""
    if not usb_id or not hasattr(machine, "USBDevice"):
        return
    vid, pid = (int(part, 16) for part in usb_id.split(":"))
    usbd = machine.USBDevice()
    usbd.builtin_driver = usbd.BUILTIN_CDC
    device = bytearray(usbd.builtin_driver.desc_dev)
    device[8:12] = bytes((vid & 0xFF, vid >> 8, pid & 0xFF, pid >> 8))  # idVendor, idProduct (USB 2.0 9.6.1)
    usbd.config(device, usbd.builtin_driver.desc_cfg)
    usbd.active(1)


REQUIRED = {"spi": ("id", "baudrate", "sck", "mosi", "miso"), "agc": ("open_below", "detuned_above", "short_above")}
REQUIRED_FRONTEND = ("nss", "busy", "rst", "select", "release", "antennas")
STANDARDS = ("iso15693", "iso14443a")  # the tag standards an antenna runs: the module of each


def antenna_standards(fe):
    """Each antenna's standard on a front end: its "standard", one name for all its antennas or a list with
    one per antenna; ISO 15693 where it says none."""
    standard = fe.get("standard", "iso15693")
    return list(standard) if isinstance(standard, list) else [standard] * fe["antennas"]


def load_config(path="config.json"):
    """The pin map; a ValueError naming the file and the key when it is incomplete (seen on stderr in the unix
    port; on the Pico the reader then never answers IDENTIFY, and the REPL shows the error)."""
    with open(path) as source:
        text = source.read()
    try:
        config = json.loads(text)
    except ValueError as error:
        raise ValueError("%s: not valid JSON (%s)" % (path, error))
    for section, keys in REQUIRED.items():
        for key in keys:
            if key not in config.get(section, {}):
                raise ValueError("%s: %s.%s is missing" % (path, section, key))
    if not config.get("frontends"):
        raise ValueError("%s: frontends is missing or empty" % path)
    for index, fe in enumerate(config["frontends"]):
        for key in REQUIRED_FRONTEND:
            if key not in fe:
                raise ValueError("%s: frontends[%d].%s is missing" % (path, index, key))
        if not 1 <= fe["antennas"] <= 1 << len(fe["select"]):
            raise ValueError("%s: frontends[%d].antennas is %d; %d select lines switch 1 to %d" % (
                path, index, fe["antennas"], len(fe["select"]), 1 << len(fe["select"])))
        standards = antenna_standards(fe)
        if len(standards) != fe["antennas"]:
            raise ValueError("%s: frontends[%d].standard lists %d antennas; the front end has %d" % (
                path, index, len(standards), fe["antennas"]))
        for name in standards:
            if name not in STANDARDS:
                raise ValueError("%s: frontends[%d].standard: %r is neither %s" % (
                    path, index, name, " nor ".join(STANDARDS)))
    return config, wire.crc16(text.encode())


def temperature_sensor():
    sensor = machine.ADC(4)  # the RP2040's own sensor: 27 C at 0.706 V, -1.721 mV per degree

    def tenths():
        volts = sensor.read_u16() * 3.3 / 65535
        return int((27 - (volts - 0.706) / 0.001721) * 10)

    return tenths


def build(config, digest):
    spi_config = config["spi"]
    Pin = machine.Pin
    spi = machine.SPI(spi_config["id"], baudrate=spi_config["baudrate"], polarity=0, phase=0,
                      sck=Pin(spi_config["sck"]), mosi=Pin(spi_config["mosi"]), miso=Pin(spi_config["miso"]))
    agc = config["agc"]
    limits = (agc["open_below"], agc["detuned_above"], agc["short_above"])
    frontends = []
    antennas = []
    for fe in config["frontends"]:
        chip = pn5180.PN5180(spi, Pin(fe["nss"], Pin.OUT, value=1), Pin(fe["busy"], Pin.IN),
                             Pin(fe["rst"], Pin.OUT, value=1))
        chip.reset()
        switch = pn5180.AntennaSwitch([Pin(p, Pin.OUT, value=0) for p in fe["select"]],
                                      Pin(fe["release"], Pin.OUT, value=0))
        frontend = reader.FrontEnd(chip, switch, limits)
        frontends.append(frontend)
        for index, name in enumerate(antenna_standards(fe)):
            reader.standard_module(name)  # loaded now: a module missing from the board stops it here, not mid-pass
            antennas.append(reader.Antenna(len(antennas), frontend, index, name))
    outputs = reader.Outputs([Pin(p, Pin.OUT, value=0) for p in config.get("leds", [])],
                             Pin(config["buzzer"], Pin.OUT, value=0) if config.get("buzzer") is not None else None)
    # The serial says which board and which pin map: name, the RP2040's unique id, front ends x antennas,
    # and the CRC of config.json, so the host's log shows a reflashed or rewired reader.
    layout = "x".join(str(fe["antennas"]) for fe in config["frontends"])
    serial = "%s-%s-%s-%04X" % (config.get("name", "RT"), hexlify(machine.unique_id()).decode().upper(),
                                layout, digest)
    schedule = config.get("schedule")
    return reader.Reader(UsbPort(), frontends, antennas, serial[:32], outputs, temperature_sensor(),
                         [tuple(slot) for slot in schedule] if schedule else None, machine.reset)


def maintenance_requested(window_ms=1000):
    """BOOTSEL pressed within a second of power-up: do not start, so the REPL (and mpremote) stay usable."""
    try:
        import rp2
    except ImportError:  # not a Pico (the unix port)
        return False
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < window_ms:
        if rp2.bootsel_button():
            return True
        time.sleep_ms(20)
    return False


def main():
    if maintenance_requested():
        return
    try:
        config, digest = load_config()
    except (OSError, ValueError) as error:  # no usable pin map: say so and stop (on the Pico: to the REPL)
        sys.stderr.write("reader firmware: %s\n" % error)
        sys.exit(2)
    set_usb_id(config.get("usb_id"))
    build(config, digest).run()


main()
