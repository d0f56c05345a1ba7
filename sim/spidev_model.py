"""The Raspberry Pi's side of the board model: stand-ins for spidev and for the header's GPIO, wired to the PN5180
model of :mod:`sim.pn5180`, so the ``pn5180`` backend (:mod:`hal.pn5180_reader`) is proved against the same register
model as the reader firmware on the Pico.

What cannot run here is the kernel's SPI driver and the Pi's pins; each stand-in takes their place at their
interface and nothing more:

* :class:`ModelSpiDev` has the surface of ``spidev.SpiDev`` the backend uses (``xfer2``, ``writebytes``,
  ``readbytes``, ``mode``, ``max_speed_hz``, ``no_cs``, ``close``): a transfer is one SPI frame to the model, framed
  by the device's own CE line as the kernel frames it (unless ``no_cs``);
* :class:`BoardGpio` is the simulated GPIO backend (:class:`hal.gpio.SimulatedGpio`) with its pins wired to the
  model: an output drives the model's NSS, RST, switch select and release lines; the BUSY inputs read the model.

:class:`PiBoard` puts them together for one reader's wiring (the configuration's ``link``), and
:func:`modelled_pi_reader` is the reader ``rfid-table sim --link pn5180`` plays hands through. Both count what the
bus and the pins carry and the time the model itself takes (:class:`BusCounts`), so the backend's own CPU time per
pass can be told apart from the model's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hal.gpio.pins import GpioError
from hal.gpio.simulated import SimulatedGpio
from hal.pn5180_reader import SPI_BUSES, FrontEndWiring, Pn5180Reader, dwell_schedule
from sim.pn5180 import BoardModel


@dataclass
class BusCounts:
    """What crossed the stand-ins, and the model's own time (ns) in answering it."""

    frames: int = 0
    bytes: int = 0
    pin_writes: int = 0
    busy_reads: int = 0
    model_ns: int = 0

    def snapshot(self) -> "BusCounts":
        return BusCounts(self.frames, self.bytes, self.pin_writes, self.busy_reads, self.model_ns)

    def since(self, before: "BusCounts") -> "BusCounts":
        return BusCounts(self.frames - before.frames, self.bytes - before.bytes, self.pin_writes - before.pin_writes,
                         self.busy_reads - before.busy_reads, self.model_ns - before.model_ns)


class ModelSpiDev:
    """``spidev.SpiDev`` as the backend uses it, for ``/dev/spidev<bus>.<chip_select>`` on the board model."""

    def __init__(self, board: BoardModel, counts: BusCounts, bus: int, chip_select: int):
        self.board = board
        self.counts = counts
        self.ce_pin = SPI_BUSES[bus].chip_selects[chip_select]
        self.mode = 0
        self.max_speed_hz = 0
        self.bits_per_word = 8
        self.no_cs = False
        self.closed = False

    def xfer2(self, data) -> list[int]:
        return list(self._frame(bytes(data), True))

    def writebytes(self, data) -> None:
        self._frame(bytes(data), False)

    def readbytes(self, length: int) -> list[int]:
        return list(self._frame(bytes(length), True))

    def close(self) -> None:
        self.closed = True

    def _frame(self, data: bytes, reading: bool) -> bytes:
        if self.closed:
            raise OSError(9, "Bad file descriptor")
        counts = self.counts
        counts.frames += 1
        counts.bytes += len(data)
        started = time.perf_counter_ns()
        board = self.board
        if not self.no_cs:
            board.set_pin(self.ce_pin, 0)
        answer = board.spi(data, reading)
        if not self.no_cs:
            board.set_pin(self.ce_pin, 1)
        counts.model_ns += time.perf_counter_ns() - started
        return answer


class BoardGpio(SimulatedGpio):
    """The simulated GPIO backend with the board model on its pins: outputs drive the model, BUSY reads it."""

    def __init__(self, board: BoardModel, counts: BusCounts, busy_pins: set[int]):
        super().__init__()
        self.board = board
        self.counts = counts
        self.busy_pins = frozenset(busy_pins)

    def setup_output(self, pin: int, initial: bool = False) -> None:
        super().setup_output(pin, initial)
        self.board.set_pin(pin, 1 if initial else 0)

    def write(self, pin: int, level: bool) -> None:
        # Not SimulatedGpio.write: it keeps every write, and a pass makes thousands.
        if self.directions.get(pin) != "output":
            raise GpioError(f"BCM {pin} is not set up as an output")
        self.levels[pin] = bool(level)
        self.counts.pin_writes += 1
        started = time.perf_counter_ns()
        self.board.set_pin(pin, 1 if level else 0)
        self.counts.model_ns += time.perf_counter_ns() - started

    def read(self, pin: int) -> bool:
        if pin in self.busy_pins:
            self.counts.busy_reads += 1
            started = time.perf_counter_ns()
            level = self.board.get_pin(pin)
            self.counts.model_ns += time.perf_counter_ns() - started
            return bool(level)
        return super().read(pin)


def board_config(link: dict) -> dict:
    """The board model's configuration (``sim.pn5180.BoardModel``'s, as the firmware's config.json) for a Pi's
    wiring: a front end on a CE line has that line as its NSS."""
    bus = SPI_BUSES[link.get("spi_bus", 0)]
    frontends = []
    for entry in link["frontends"]:
        fe = FrontEndWiring.of(entry)
        nss = bus.chip_selects[fe.cs] if fe.cs is not None else fe.nss
        frontends.append({"nss": nss, "busy": fe.busy, "rst": fe.rst, "select": list(fe.select),
                          "release": fe.release, "antennas": fe.antennas})
    return {"frontends": frontends}


class PiBoard:
    """A reader's PN5180s, switches and antennas as the board model has them, behind a Pi's spidev and pins."""

    def __init__(self, link: dict, field, reader: str, clock=time.monotonic):
        config = board_config(link)
        self.link = link
        self.board = BoardModel(config, field, reader, antenna_base=1, clock=clock)
        self.counts = BusCounts()
        self.gpio = BoardGpio(self.board, self.counts, {fe["busy"] for fe in config["frontends"]})
        self.devices: list[ModelSpiDev] = []

    def open_spi(self, bus: int, chip_select: int, no_cs: bool) -> ModelSpiDev:
        device = ModelSpiDev(self.board, self.counts, bus, chip_select)
        device.no_cs = no_cs
        self.devices.append(device)
        return device

    def reader(self, name: str, antennas: int, cycle_s: float | None = None, **options) -> Pn5180Reader:
        return Pn5180Reader(name, antennas, self.link, self.gpio, self.open_spi, cycle_s, **options)

    def break_antenna(self, antenna: int, condition: str = "open") -> None:
        """Antenna ``antenna`` (numbered from 1, as in the configuration) open, detuned, shorted or overcurrent."""
        self.board.conditions[antenna - 1] = condition

    def mend_antenna(self, antenna: int) -> None:
        self.board.conditions.pop(antenna - 1, None)

    def kill_frontend(self, index: int, dead: bool = True) -> None:
        """Front end ``index`` (from 0) stops answering: its BUSY stays high."""
        self.board.chips[index].dead = dead

    @property
    def air_s(self) -> float:
        return sum(chip.air_s for chip in self.board.chips)


# The wiring docs/pn5180-pi.md shows, for a table whose reader is not a pn5180 one: front ends of at most 8 antennas;
# the first two on SPI0's CE0 and CE1 with the header's pins, further ones (the model only) on pins of their own.
HEADER_FRONTENDS = (
    {"cs": 0, "busy": 25, "rst": 24, "select": [5, 6, 12], "release": 13},
    {"cs": 1, "busy": 23, "rst": 24, "select": [16, 20, 21], "release": 26},
)


def default_link(zones: dict[str, tuple[str, int]], reader: str, antennas: int) -> dict:
    count = -(-antennas // 8)
    sizes = [antennas // count + (1 if i < antennas % count else 0) for i in range(count)]
    frontends = []
    for i, size in enumerate(sizes):
        if count <= len(HEADER_FRONTENDS):
            fe = dict(HEADER_FRONTENDS[i])
        else:  # more front ends than CE lines: every chip select on a pin (frames go through CE0, left unconnected)
            fe = {"nss": 40 + 10 * i, "busy": 41 + 10 * i, "rst": 42 + 10 * i,
                  "select": [43 + 10 * i, 44 + 10 * i, 45 + 10 * i], "release": 46 + 10 * i}
        fe["antennas"] = size
        frontends.append(fe)
    return {"spi_bus": 0, "spi_hz": 7_000_000, "frontends": frontends, "standards": ["iso15693"] * antennas,
            "dwell_ms": dwell_schedule(zones, reader, antennas)}


def modelled_pi_reader(config, settings, field) -> Pn5180Reader:
    """The reader ``settings`` of the table ``config`` as PN5180s on a Pi, on the board model fed from ``field``: its
    own wiring if it is a ``pn5180`` reader, else the wiring above. It runs in real time, as the hardware would."""
    link = settings.link if settings.backend == "pn5180" else default_link(config.zones, settings.name,
                                                                           settings.antennas)
    if settings.backend != "pn5180" and settings.standards:  # another reader's standards, on the Pi's wiring
        link = {**link, "standards": list(settings.standards)}
    return PiBoard(link, field, settings.name).reader(settings.name, settings.antennas, settings.cycle_s)


def measure_table_pass(passes: int = 10, poll_s: float | None = None) -> dict:
    """The figures of docs/pn5180-pi.md: the example table (config/table-pi-pn5180.toml) mid-hand — 10 seats with 2
    cards, the board (5), the burn (3), the muck (20) — read by the pn5180 backend on the board model, ``passes``
    passes after two to settle. Per pass: its wall time, the air time of each front end (the floor any host must
    spend), the scanning thread's CPU time and the model's share of it (what is left is the backend's own: the
    driver, the adapters, the scheduler), and what crossed the bus and the pins."""
    from rfid_table.config.table import load_config  # noqa: PLC0415
    from rfid_table.package_data import CONFIG_DIR  # noqa: PLC0415
    from sim.field import TableField  # noqa: PLC0415

    config = load_config(CONFIG_DIR / "table-pi-pn5180.toml")
    settings = config.readers["main"]
    field = TableField(config.zones)
    uids = iter(config.decks["A"])
    for zone, count in [(f"seat{seat}.cards", 2) for seat in range(1, 11)] + [("board", 5), ("burn", 3),
                                                                                ("muck", 20)]:
        for _ in range(count):
            field.place(next(uids), zone)
    board = PiBoard(settings.link, field, settings.name)
    options = {} if poll_s is None else {"poll_s": poll_s}
    reader = board.reader(settings.name, settings.antennas, 0.0, **options)
    try:
        walls, cpus, models, airs = [], [], [], []
        reads = 0
        while reader.passes < 2:
            time.sleep(0.01)
        before = board.counts.snapshot()
        while len(walls) < passes:
            seen, counts, air = reader.passes, board.counts.snapshot(), [chip.air_s for chip in board.board.chips]
            while reader.passes == seen:
                time.sleep(0.002)
            walls.append(reader.last_pass_s)
            cpus.append(reader.last_pass_cpu_s)
            models.append(board.counts.since(counts).model_ns / 1e9)
            airs.append([chip.air_s - a for chip, a in zip(board.board.chips, air)])
        for cycle in reader.poll(time.monotonic())[-1:]:
            reads = len(cycle.reads)
        total = board.counts.since(before)
    finally:
        reader.close()
    per = len(walls)
    own = sorted(c - m for c, m in zip(cpus, models))
    return {"passes": per, "tags_read": reads, "pass_ms": [round(min(walls) * 1e3, 1), round(max(walls) * 1e3, 1)],
            "air_ms_busiest_front_end": round(max(max(a) for a in airs) * 1e3, 1),
            "cpu_ms": round(sum(cpus) / per * 1e3, 1), "model_ms": round(sum(models) / per * 1e3, 1),
            "backend_cpu_ms": [round(own[0] * 1e3, 1), round(own[len(own) // 2] * 1e3, 1), round(own[-1] * 1e3, 1)],
            "frames": total.frames // per, "bytes": total.bytes // per, "pin_writes": total.pin_writes // per,
            "busy_reads": total.busy_reads // per}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure_table_pass(int(sys.argv[1]) if len(sys.argv) > 1 else 10), indent=1))
