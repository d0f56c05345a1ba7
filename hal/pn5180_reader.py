"""The ``pn5180`` reader backend: NXP PN5180 front ends wired straight to the Raspberry Pi's SPI bus, no Pico.

One driver, two hosts. The reader firmware's own modules (``firmware/pn5180.py``, ``firmware/iso15693.py`` and
``firmware/iso14443a.py``, the scheduling of ``firmware/reader.py``) run here unmodified, in CPython, as they run on
the Pico in MicroPython. What the driver takes from MicroPython's ``machine`` module is given to it by two small
adapters:

* :class:`GpioLine` is a ``machine.Pin`` (``value()``, ``on()``, ``off()``) on a pin of a GPIO backend
  (:mod:`hal.gpio`: RPi.GPIO, or rpi-lgpio on a Pi 5; the simulated one in the tests) — BUSY, RST, the antenna
  switch's select lines and its release line, and NSS where a front end's chip select is a GPIO;
* :class:`SpiFrame` is a ``machine.SPI`` (``write``, ``write_readinto``) and the front end's NSS pin on a spidev
  device. The driver frames each instruction between NSS low and NSS high, sometimes in two writes (a SEND_DATA's
  command and payload); the adapter gathers the frame and sends it as one spidev transfer when NSS rises (or at once
  when the driver reads), so a chip select driven by the kernel (CE0, CE1) frames it exactly as the driver did, and
  one system call carries each frame.

The firmware's modules import ``micropython`` (for ``const``) and MicroPython's ``time`` (``ticks_us`` ...): they are
loaded (:func:`firmware`) into a private namespace whose imports resolve to stand-ins for those two, and to each
other, without putting a module named ``time`` or ``pn5180`` in ``sys.modules``.

Scheduling is the firmware's: :class:`Pn5180Reader` runs a subclass of ``reader.Reader`` whose pass (which antenna
when, each front end's dwells side by side, a stack's unresolved collisions carried to the antenna's next dwell,
faults from the AGC and from a front end that does not answer) is the firmware's code; only what a finished antenna
and a finished pass become differ: here, :class:`hal.events.InventoryCycle` objects handed to the table in process,
there, frames of the wire protocol. The passes run on a thread of their own, since an ISO 15693 slot waits for the
air in steps of a few hundred microseconds that the table's loop cannot keep; between steps it sleeps
(:data:`POLL_S`), so it does not spin a core while the tags answer.
"""

from __future__ import annotations

import builtins
import functools
import logging
import os
import threading
import time
import types
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from firmware_bridge.message_types import FaultCode
from hal.bursts import Bursts
from hal.events import DeviceEvent, EarlyReads, InventoryCycle, TagRead
from hal.gpio.backend import GpioBackend
from hal.reader_backend import ReaderBackend, ReaderUnavailable
from hal.zone_names import Zone

log = logging.getLogger(__name__)

STANDARDS = ("iso15693", "iso14443a")
DEFAULT_SPI_HZ = 7_000_000  # the PN5180's fastest SPI clock (data sheet)
DEFAULT_AGC = (100, 700, 950)  # firmware/config.json's: open below, detuned above, short above
CARD_DWELL_MS = 25  # an antenna where cards lie alone or in twos
STACK_DWELL_MS = 400  # where stacks lie (bets, pot, muck): a stack of 40 resolves in one dwell, which ends when read
POLL_S = 0.0002  # sleep between two steps of a pass: each step polls a waiting front end once
LINK_REPORTS, LINK_REPORT_WINDOW_S = 5, 10.0  # as hal.firmware_reader's


@dataclass(frozen=True)
class SpiBus:
    """One of the 40-pin header's SPI buses: its pins (BCM) and its chip select lines, CE0 first."""

    mosi: int
    miso: int
    sclk: int
    chip_selects: tuple[int, ...]
    enable: str  # the line of /boot/firmware/config.txt that brings its /dev/spidevB.* devices

    def pins(self, bus: int) -> dict[int, str]:
        named = {self.mosi: "MOSI", self.miso: "MISO", self.sclk: "SCLK"}
        named.update({pin: f"CE{index}" for index, pin in enumerate(self.chip_selects)})
        return {pin: f"SPI{bus} {what}" for pin, what in named.items()}


SPI_BUSES = {
    0: SpiBus(mosi=10, miso=9, sclk=11, chip_selects=(8, 7), enable="dtparam=spi=on"),
    1: SpiBus(mosi=20, miso=19, sclk=21, chip_selects=(18, 17, 16), enable="dtoverlay=spi1-3cs"),
}


@dataclass(frozen=True)
class FrontEndWiring:
    """One PN5180 on the Pi: its chip select (``cs``: the bus's CE line; or ``nss``: a GPIO), BUSY, RST, and the
    antenna switch's select lines (lowest bit first) and release line (low: every antenna detuned, switch open)."""

    busy: int
    rst: int
    select: tuple[int, ...]
    release: int
    antennas: int
    cs: int | None = None
    nss: int | None = None

    @classmethod
    def of(cls, entry: dict) -> "FrontEndWiring":
        return cls(busy=entry["busy"], rst=entry["rst"], select=tuple(entry["select"]), release=entry["release"],
                   antennas=entry["antennas"], cs=entry.get("cs"), nss=entry.get("nss"))


def gpio_chip_select(bus: int, frontends: list[FrontEndWiring]) -> int | None:
    """The CE line whose spidev device carries the frames of the front ends with a GPIO chip select: the first one no
    front end is wired to (the kernel toggles it; nothing listens). None when every CE is taken."""
    taken = {fe.cs for fe in frontends if fe.cs is not None}
    return next((ce for ce in range(len(SPI_BUSES[bus].chip_selects)) if ce not in taken), None)


def dwell_schedule(zones: dict[str, tuple[str, int]], reader: str, antennas: int) -> list[int]:
    """Each antenna's dwell (ms), antenna 1 first: the zones where stacks lie (bets, the pot, the muck) get the long
    one, the others a card's."""
    stacks = {antenna for zone, (name, antenna) in zones.items()
              if name == reader and Zone.parse(zone).holds != "cards"}
    return [STACK_DWELL_MS if antenna in stacks else CARD_DWELL_MS for antenna in range(1, antennas + 1)]




# ---- the firmware's modules on CPython ----------------------------------------------------------------------


def _micropython_time() -> types.ModuleType:
    """MicroPython's ``time`` as the driver uses it. Ticks never wrap here (Python ints), so ``ticks_diff`` is a
    subtraction; the clock is the monotonic one the board model in the tests keeps too."""
    module = types.ModuleType("time")
    monotonic_ns = time.monotonic_ns
    vars(module).update(
        ticks_us=lambda: monotonic_ns() // 1000,
        ticks_ms=lambda: monotonic_ns() // 1_000_000,
        ticks_diff=lambda a, b: a - b,
        ticks_add=lambda a, b: a + b,
        sleep_ms=lambda ms: time.sleep(ms / 1000),
        sleep_us=lambda us: time.sleep(us / 1_000_000),
        time=time.time,
    )
    return module


def _micropython_gc() -> types.ModuleType:
    # the firmware's heap figures (gc.mem_alloc) mean nothing in CPython; its passes here never read them
    module = types.ModuleType("gc")
    vars(module).update(mem_alloc=lambda: 0, mem_free=lambda: 0, collect=lambda: None)
    return module


@functools.cache
def firmware() -> types.SimpleNamespace:
    """The firmware's modules (``firmware.pn5180``, ``firmware.iso15693``, ``firmware.reader`` ...), loaded once per
    process from the installed package ``rfid_table.firmware``."""
    from rfid_table.package_data import FIRMWARE_DIR  # noqa: PLC0415 (only where a table has such a reader)

    micropython = types.ModuleType("micropython")
    vars(micropython)["const"] = lambda value: value
    stand_ins = {"micropython": micropython, "time": _micropython_time(), "gc": _micropython_gc()}
    loaded: dict[str, types.ModuleType] = {}

    def load(name: str) -> types.ModuleType:
        path = FIRMWARE_DIR / f"{name}.py"
        module = types.ModuleType(f"rfid_table.firmware.{name}")
        module.__file__ = str(path)
        vars(module)["__builtins__"] = firmware_builtins
        loaded[name] = module
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)  # noqa: S102
        return module

    def firmware_import(name: str, globals: Any = None, locals: Any = None,  # noqa: A002 (builtins' names)
                        fromlist: Any = (), level: int = 0) -> types.ModuleType:
        # MicroPython's import path: the firmware's directory beside its stand-ins, as main.py sees it on the Pico
        if level == 0 and "." not in name:
            if name in stand_ins:
                return stand_ins[name]
            if name in loaded:
                return loaded[name]
            if (FIRMWARE_DIR / f"{name}.py").is_file():
                return load(name)
        return builtins.__import__(name, globals, locals, fromlist, level)

    firmware_builtins = dict(vars(builtins), __import__=firmware_import)
    for name in ("pn5180", "iso15693", "wire", "reader", "iso14443a"):
        if name not in loaded and (FIRMWARE_DIR / f"{name}.py").is_file():
            load(name)
    return types.SimpleNamespace(**loaded)


# ---- machine.Pin and machine.SPI on the Pi ----------------------------------------------------------------------


class GpioLine:
    """``machine.Pin`` as the driver uses it (``value()``, ``value(level)``, ``on()``, ``off()``), on a pin of a GPIO
    backend, set up as an input or an output (at ``initial``)."""

    def __init__(self, gpio: GpioBackend, pin: int, output: bool, initial: bool = False, pull: str = "off"):
        if output:
            gpio.setup_output(pin, initial)
        else:
            gpio.setup_input(pin, pull)
        self.pin = pin
        self._read = gpio.read
        self._write = gpio.write

    def value(self, level: int | bool | None = None) -> int | None:
        if level is None:
            return 1 if self._read(self.pin) else 0
        self._write(self.pin, bool(level))
        return None

    def on(self) -> None:
        self._write(self.pin, True)

    def off(self) -> None:
        self._write(self.pin, False)

    __call__ = value


class SpiDevice(Protocol):
    """What the backend uses of ``spidev.SpiDev`` (or of the stand-in the tests wire to the board model)."""

    def xfer2(self, data: Any) -> list[int]: ...

    def writebytes(self, data: Any) -> None: ...

    def close(self) -> None: ...


class SpiFrame:
    """``machine.SPI`` for one front end's PN5180, and (``select``) the NSS pin the driver frames its instructions
    with: the bytes written between NSS low and NSS high go out as one spidev transfer, under the bus's lock, with the
    GPIO chip select ``nss`` (if any) low around it. ``frames``, ``bytes``: counted for the timing figures."""

    def __init__(self, device: SpiDevice, lock: threading.Lock, nss: GpioLine | None = None):
        self.device = device
        self.lock = lock
        self.nss = nss
        self.pending = bytearray()
        self.select = _FrameSelect(self)
        self.frames = 0
        self.bytes = 0

    def write(self, data: bytes | bytearray) -> None:
        self.pending += data

    def write_readinto(self, out: bytes | bytearray, into: bytearray | memoryview) -> None:
        self.pending += out
        answer = self._send(True)
        into[:] = bytes(answer[len(answer) - len(into):])

    def readinto(self, into: bytearray | memoryview, write: int = 0xFF) -> None:
        self.write_readinto(bytes((write,)) * len(into), into)

    def end(self) -> None:
        if self.pending:
            self._send(False)

    def _send(self, reading: bool) -> list[int]:
        data = bytes(self.pending)
        self.pending.clear()
        self.frames += 1
        self.bytes += len(data)
        with self.lock:
            if self.nss is not None:
                self.nss.value(0)
            try:
                if not reading:
                    self.device.writebytes(data)
                    return []  # a write reads nothing back
                return self.device.xfer2(data)
            finally:
                if self.nss is not None:
                    self.nss.value(1)


class _FrameSelect:
    """The NSS pin the driver holds: low starts a frame, high sends what it gathered."""

    def __init__(self, frame: SpiFrame):
        self._frame = frame
        self._level = 1

    def value(self, level: int | bool | None = None) -> int | None:
        if level is None:
            return self._level
        self._level = 1 if level else 0
        if self._level:
            self._frame.end()
        else:
            self._frame.pending.clear()
        return None

    __call__ = value


_BUS_LOCKS: dict[int, threading.Lock] = {}  # one per SPI bus: a GPIO chip select must not overlap another's frame


def bus_lock(bus: int) -> threading.Lock:
    return _BUS_LOCKS.setdefault(bus, threading.Lock())


# ---- the reader ---------------------------------------------------------------------------------------------


class Pn5180Reader(ReaderBackend):
    """A reader of PN5180 front ends on the Pi's SPI bus: the firmware's passes on a thread, each pass handed to the
    table as an :class:`InventoryCycle` (see the module's docstring).

    ``link``: the configuration's terms (``spi_bus``, ``spi_hz``, ``frontends``, ``agc``, ``standards`` and
    ``dwell_ms`` per antenna; :mod:`rfid_table.config.table`). ``gpio``: the GPIO backend of BUSY, RST, the switches
    and any GPIO chip select. ``open_spi(bus, chip_select, no_cs)``: a spidev device (or the tests' stand-in).

    A faulted antenna's contents are unknown, not empty: its last reads are carried forward until it reads again,
    as for a firmware reader. A pass starts ``cycle_s`` after the last one started, or at once when it took longer.
    """

    link = None  # in process: no link between the reader and the table

    def __init__(self, name: str, antennas: int, link: dict, gpio: GpioBackend,
                 open_spi: Callable[[int, int, bool], SpiDevice], cycle_s: float | None = None,
                 poll_s: float = POLL_S):
        fw = firmware()
        self.name = name
        self.antennas = antennas
        self.cycle_s = cycle_s or 0.0
        self.poll_s = poll_s
        self.gpio = gpio
        self.bus = link.get("spi_bus", 0)
        wiring = [FrontEndWiring.of(entry) for entry in link["frontends"]]
        standards = list(link.get("standards") or ["iso15693"] * antennas)
        dwell = list(link.get("dwell_ms") or [CARD_DWELL_MS] * antennas)
        if sum(fe.antennas for fe in wiring) != antennas:
            raise ValueError(f"reader {name!r}: its front ends have {sum(fe.antennas for fe in wiring)} antennas, "
                             f"the configuration {antennas}")
        self._check_standards(fw, standards)
        self.spi: list[SpiFrame] = []
        self._devices: dict[int, SpiDevice] = {}
        self.frontends = []
        wire_antennas: list[Any] = []  # the firmware's Antenna objects, loaded at run time
        lock = bus_lock(self.bus)
        shared = gpio_chip_select(self.bus, wiring)
        lines: dict[int, GpioLine] = {}  # a RST line may be shared by several front ends

        def line(pin: int, **how: Any) -> GpioLine:
            if pin not in lines:
                lines[pin] = GpioLine(gpio, pin, **how)
            return lines[pin]

        agc = tuple(link.get("agc") or DEFAULT_AGC)
        try:
            for fe in wiring:
                if fe.cs is not None:
                    device = self._device(open_spi, fe.cs, False)
                    frame = SpiFrame(device, lock)
                elif fe.nss is None:
                    raise ValueError(f"reader {name!r}: a front end has no chip select: give it cs (a CE line of "
                                     f"SPI{self.bus}) or nss (a GPIO)")
                else:
                    if shared is None:
                        raise ValueError(f"reader {name!r}: a front end's chip select is GPIO {fe.nss}, but every CE "
                                         f"line of SPI{self.bus} has a front end: its frames have no free device")
                    device = self._device(open_spi, shared, True)
                    frame = SpiFrame(device, lock, line(fe.nss, output=True, initial=True))
                # BUSY pulled up: a front end that is missing or unpowered reads as BUSY stuck, an antenna fault
                chip = fw.pn5180.PN5180(frame, frame.select, line(fe.busy, output=False, pull="up"),
                                        line(fe.rst, output=True, initial=True))
                switch = fw.pn5180.AntennaSwitch([line(pin, output=True) for pin in fe.select],
                                                 line(fe.release, output=True))
                frontend = fw.reader.FrontEnd(chip, switch, agc)
                self.spi.append(frame)
                self.frontends.append(frontend)
                for index in range(fe.antennas):
                    # its standard's module (firmware/iso15693.py or iso14443a.py) runs its dwells
                    wire_antennas.append(fw.reader.Antenna(len(wire_antennas), frontend, index,
                                                           standard=standards[len(wire_antennas)]))
        except BaseException:
            self._close_devices()
            raise
        schedule = [(antenna.number, dwell[antenna.number]) for antenna in wire_antennas]
        self._scanner = _scanner_class()(self, self.frontends, wire_antennas, schedule)
        self._lock = threading.Lock()
        self._ready: list[tuple[TagRead, ...]] = []  # passes done, not yet handed on
        self._pass: dict[int, tuple[TagRead, ...]] = {}  # this pass's reads by antenna (configuration numbers)
        self._last: dict[int, tuple[TagRead, ...]] = {}  # each antenna's last reads, carried while it is faulted
        self._faulted: set[int] = set()
        self._watched: frozenset[int] = frozenset()
        self._early: list[tuple[int, list[TagRead]]] = []
        self._pending_events: list[tuple[str, tuple]] = []
        self._link_reports = Bursts(LINK_REPORTS, LINK_REPORT_WINDOW_S)
        self._now = 0.0
        self._up = False
        self.cycles_emitted = 0
        self.delivering = True
        self.passes = 0
        self.last_pass_s = 0.0  # wall time of the last pass
        self.last_pass_cpu_s = 0.0  # the scanning thread's CPU time in it
        self.versions: list[str] = []
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(target=self._run, name=f"pn5180-{name}", daemon=True)
        self._thread.start()

    def _device(self, open_spi: Callable[[int, int, bool], SpiDevice], chip_select: int, no_cs: bool) -> SpiDevice:
        if chip_select not in self._devices:
            self._devices[chip_select] = open_spi(self.bus, chip_select, no_cs)
        return self._devices[chip_select]

    def _check_standards(self, fw: types.SimpleNamespace, standards: list[str]) -> None:
        wrong = sorted({s for s in standards if s not in STANDARDS})
        if wrong:
            raise ValueError(f"reader {self.name!r}: unknown standard {wrong[0]!r} (expected one of: "
                             f"{', '.join(STANDARDS)})")
        if "iso14443a" in standards and not hasattr(fw, "iso14443a"):
            numbers = [str(i + 1) for i, s in enumerate(standards) if s == "iso14443a"]
            raise ValueError(f"reader {self.name!r}: antennas {', '.join(numbers)} are set to ISO 14443A, which this "
                             "installation's PN5180 driver does not read (firmware/iso14443a.py is missing)")

    # ---- the table's side (its thread) ------------------------------------------------------------------------

    @property
    def link_up(self) -> bool:
        return self._up

    @property
    def watching(self) -> bool:
        return bool(self._watched)

    def fileno(self) -> int:
        """Readable when a pass has ended or something happened to the reader: the table's loop may wait on it."""
        return self._wake_r

    def receive(self, now: float) -> bool:
        """Whether :meth:`poll` has something to hand on (a pass, an event, early reads)."""
        self._now = now
        self._drain_wake()
        with self._lock:
            return bool(self._ready or self._pending_events or self._early
                        or self._link_reports.next_due() <= now)

    def poll(self, now: float) -> list[InventoryCycle]:
        self._now = now
        self._drain_wake()
        with self._lock:
            ready, self._ready = self._ready, []
        self.cycles_emitted += len(ready)
        return [InventoryCycle(self.name, now, reads) for reads in ready]

    def watch_antennas(self, antennas: set[int], park: int | None = None,
                       visit_more: frozenset[int] = frozenset()) -> None:
        self._watched = frozenset(antennas)  # (its scan has no schedule to visit ``visit_more`` more often in)

    def take_early_reads(self) -> list[EarlyReads]:
        with self._lock:
            early, self._early = self._early, []
        return [EarlyReads(antenna, reads, self._now) for antenna, reads in early]

    def device_events(self) -> list[DeviceEvent]:
        with self._lock:
            pending, self._pending_events = self._pending_events, []
        out = []
        for kind, detail in pending:
            event = DeviceEvent(kind, self.name, self._now, detail)
            if kind.startswith("reader_"):
                out += self._summarised(self._link_reports.offer(self.name, self._now, event))
            else:
                out.append(event)
        return out + self._summarised(self._link_reports.due(self._now))

    def _summarised(self, reports: list[tuple[DeviceEvent, int]]) -> list[DeviceEvent]:
        return [DeviceEvent(e.kind, e.reader, self._now, e.detail + ((("summarised", n),) if n > 1 else ()))
                for e, n in reports]

    @property
    def faulted_antennas(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._faulted)

    def close(self) -> None:
        """Stop the passes, the field off and every PN5180 held in reset. The GPIO backend is left open: a table's
        console may share it (RPi.GPIO's cleanup releases every pin of the process), and it releases its pins when
        the process ends."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._close_devices()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def _close_devices(self) -> None:
        for device in self._devices.values():
            try:
                device.close()
            except OSError:
                pass
        self._devices = {}

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_r, 64):
                pass
        except (BlockingIOError, OSError):
            pass

    # ---- the scanning thread ----------------------------------------------------------------------------------

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"\0")
        except (BlockingIOError, OSError):
            pass  # already readable (or closing)

    def _event(self, kind: str, **detail: Any) -> None:
        with self._lock:
            self._pending_events.append((kind, tuple(detail.items())))
        self._wake()

    def _run(self) -> None:
        fw = firmware()
        try:
            self._start_frontends(fw)
            self._up = True
            self._event("reader_up", serial=f"PN5180-SPI{self.bus}-" + "x".join(str(len(fe_antennas))
                                                                               for fe_antennas in self._layout()),
                        antennas=self.antennas, firmware=", ".join(self.versions))
            next_start = time.monotonic()
            while not self._stop.is_set():
                if self._stop.wait(max(0.0, next_start - time.monotonic())):
                    break
                started, cpu = time.monotonic(), time.thread_time()
                next_start = started + self.cycle_s
                if not self._one_pass(fw):
                    break
                self.last_pass_s, self.last_pass_cpu_s = time.monotonic() - started, time.thread_time() - cpu
                self.passes += 1
        except Exception as exc:  # noqa: BLE001 - the table goes on without this reader, and says why
            log.exception("%s: the PN5180 reader stopped", self.name)
            self._up = False
            self._event("reader_down", reason=f"{type(exc).__name__}: {exc}")
        finally:
            self._stop_frontends(fw)

    def _layout(self) -> list[list]:
        by_frontend: dict[int, list] = {}
        for antenna in self._scanner.antennas:
            by_frontend.setdefault(id(antenna.frontend), []).append(antenna)
        return list(by_frontend.values())

    def _start_frontends(self, fw: types.SimpleNamespace) -> None:
        """Each PN5180 out of reset; its firmware version for the log. One that does not come out of reset (BUSY
        stuck) is logged; its antennas then report OPEN every pass, as on the Pico."""
        for number, frontend in enumerate(self.frontends, start=1):
            chip = frontend.chip
            try:
                chip.reset()
                version = chip.read_eeprom(fw.pn5180.FIRMWARE_VERSION, 2)
                self.versions.append(f"{version[1]}.{version[0]}")
            except fw.pn5180.FrontEndError as error:
                log.error("%s: PN5180 %d on SPI%d does not answer after its reset (%s): check its 3.3 V and 5 V "
                          "supply and its wiring", self.name, number, self.bus, error)
                self.versions.append("none")

    def _one_pass(self, fw: types.SimpleNamespace) -> bool:
        """One pass over the schedule; False when stopped in the middle."""
        scanner = self._scanner
        ticks_ms = fw.reader.time.ticks_ms
        sleep, poll_s = time.sleep, self.poll_s
        while scanner.scan(ticks_ms()):
            if self._stop.is_set():
                return False
            sleep(poll_s)
        return True

    def _stop_frontends(self, fw: types.SimpleNamespace) -> None:
        for frontend in self.frontends:
            job, frontend.job = frontend.job, None
            try:
                if job is not None:
                    job.close()  # the dwell's own clean-up: the field off, the switch parked
                frontend.chip.rst.value(0)  # held in reset: no field, least current
            except Exception:  # noqa: BLE001 - closing: a pin or a chip that fails now changes nothing
                log.debug("%s: closing a front end", self.name, exc_info=True)

    # called by the firmware's scheduler (_scanner_class), on the scanning thread
    def antenna_done(self, antenna: Any, fault: Any, seen: dict) -> None:  # the firmware's Antenna and fault
        number = antenna.number + 1
        event = None
        with self._lock:
            if fault is not None:
                if antenna.fault != fault:
                    antenna.fault = fault
                    event = ("antenna_fault", (("antenna", number), ("fault", _fault_name(fault[0]))))
                    log.warning("%s: antenna %d fault %s (detail %d); holding its last reads", self.name, number,
                                _fault_name(fault[0]), fault[1])
                self._faulted.add(number)
                reads = self._last.get(number, ())
            else:
                if antenna.fault is not None:
                    antenna.fault = None
                    event = ("antenna_ok", (("antenna", number), ("fault", "cleared")))
                    log.info("%s: antenna %d fault cleared", self.name, number)
                self._faulted.discard(number)
                reads = tuple(TagRead(number, uid.hex().upper(), count) for uid, count in seen.items())
                self._last[number] = reads
                if number in self._watched:
                    self._early.append((number, list(reads)))
            self._pass[number] = reads
            if event is not None:
                self._pending_events.append(event)
        if event is not None or number in self._watched:
            self._wake()

    def pass_done(self) -> None:
        with self._lock:
            reads = tuple(read for number in sorted(self._pass) for read in self._pass[number])
            self._pass = {}
            self._ready.append(reads)
            self._early.clear()  # the pass carries those reads now
        self._wake()


def _fault_name(code: int) -> str:
    try:
        return FaultCode(code).name.lower()
    except ValueError:
        return str(code)


@functools.cache
def _scanner_class() -> type:
    """The firmware's ``reader.Reader`` with its passes' ends turned to the host's: an antenna's reads and faults
    and the end of a pass go to the :class:`Pn5180Reader` instead of onto the wire."""
    fw = firmware()
    reader_class: Any = fw.reader.Reader  # the firmware's, loaded at run time: no type to check against

    class Scanner(reader_class):
        def __init__(self, host: Pn5180Reader, frontends: list[Any], antennas: list[Any],
                     schedule: list[tuple[int, int]]) -> None:
            super().__init__(None, frontends, antennas, host.name, fw.reader.Outputs([], None), None, schedule)
            self.host = host

        def finished(self, antenna: Any, fault: Any, seen: dict, now: int) -> None:
            self.host.antenna_done(antenna, fault, seen)

        def end_pass(self) -> None:
            self.pass_cycle = None
            self.host.pass_done()

    return Scanner


# ---- construction from the table configuration's terms ------------------------------------------------------


def open_spidev(bus: int, chip_select: int, no_cs: bool, hz: int = DEFAULT_SPI_HZ) -> SpiDevice:
    """``/dev/spidev<bus>.<chip_select>`` in SPI mode 0 at ``hz``; with ``no_cs`` its own CE line left alone where the
    kernel allows it (an unconnected CE that toggles does no harm)."""
    try:
        import spidev  # noqa: PLC0415 (only on a Pi with such a reader)
    except ImportError as exc:
        raise ReaderUnavailable("the pn5180 backend needs the spidev module, which is not installed in this Python "
                                f"environment ({exc}): pip install spidev (or 'rfid-table[pn5180]')") from exc
    device = spidev.SpiDev()
    path = f"/dev/spidev{bus}.{chip_select}"
    try:
        device.open(bus, chip_select)
    except FileNotFoundError as exc:
        raise ReaderUnavailable(f"{path} does not exist: enable SPI{bus} ({SPI_BUSES[bus].enable} in "
                                "/boot/firmware/config.txt, then reboot)") from exc
    except PermissionError as exc:
        raise ReaderUnavailable(f"{path}: permission denied: add the service's user to the spi group") from exc
    device.mode = 0  # the PN5180: clock idle low, data sampled on the rising edge
    device.max_speed_hz = hz
    if no_cs:
        try:
            device.no_cs = True
        except OSError:
            pass
    return device


def pn5180_reader(name: str, link: dict, antennas: int, cycle_s: float | None = None) -> Pn5180Reader:
    """The reader of a table configuration's ``backend = "pn5180"``: spidev, and the header's pins through the
    ``rpi`` GPIO backend (RPi.GPIO, or rpi-lgpio on a Pi 5)."""
    from hal.gpio.rpi import RpiGpioBackend  # noqa: PLC0415 (imports RPi.GPIO)

    hz = link.get("spi_hz", DEFAULT_SPI_HZ)
    return Pn5180Reader(name, antennas, link, RpiGpioBackend(),
                        lambda bus, chip_select, no_cs: open_spidev(bus, chip_select, no_cs, hz), cycle_s)
