"""An emulator of a Metratec HF reader (QuasarMX class) at the wire: its ASCII protocol on a pseudo-terminal or on TCP.

The host opens it as it would the reader: the emulator's stable path (a symlink, like a udev
``/dev/serial/by-id/...`` link) with pyserial, or ``127.0.0.1:tcp_port``. Metratec's own client (the ``metratec-rfid``
SDK) and :class:`firmware_bridge.metratec.MetratecLink` both talk to it. It looks at a simulated table (anything with
``tags_on(reader, antenna)``, e.g. ``sim.field``): table antenna ``i`` (1-based) lies on reader channel
``channels[i - 1]``, so an inventory of that channel answers the UIDs lying there, each tag once.

It is driven as :class:`sim.firmware.FirmwareEmulator` is: ``step(now)`` on a virtual clock (``sim.firmware.Lockstep``
works with it), or ``start()`` / ``stop()`` for a thread on the monotonic clock.

What it does, with the sources (the same as firmware_bridge/metratec.py's; docs/metratec.md has the list):

* Commands end in CR; answers are lines ending in CR, the last followed by LF in end-of-frame mode (``EOF``/``NEF``).
  In CRC mode (``CON``/``COF``) a command without its valid CRC is answered ``CCE`` and every answer line carries one.
* Session commands: ``BRK`` (``BRA`` when it stops a continuous inventory, else ``NCM``), ``STB`` (``GN8``, then only
  ``WAK`` is heard), ``WAK`` (``GMO``; ``DNS`` when awake), ``REV``, ``RSN``, ``RHR``, ``VBL``, ``HBT``, ``MOD``,
  ``SRI``, ``SET PWR``, ``RIP``, ``WOP``, ``RST``. ``HWR``, ``RFW`` and anything else: ``UCO``, as the SDK expects of a
  first-generation HF reader (``reader_ascii.py`` ``get_reader_info``).
* Antennas: ``SAP MAN n`` or ``SAP n`` (0..15, else ``NOR``), ``SAP AUT n [delay]`` (1..16; the delay parameter only on
  the QuasarMX, ``quasar_lr.py``), ``SAP AUT OFF``, ``SAP PIN p`` (``NOS`` on a reader without outputs), ``SAP ARP
  ON|OFF``. With ``SAP PIN p`` set, antenna n reaches multiplexer channel n on the outputs; without, the reader's own
  port n (``ports`` of them).
* ``INV`` (``SSL``, ``ONT``, ``AFI hh`` accepted) and ``CNR INV``: ``UID CR ... ARP nn CR IVF nn CR LF``. Without
  ``SRI`` first: ``NRF``; after ``MOD`` to another standard: ``NSS``. At ``VBL 0`` an inventory that found nothing is
  not answered ("Inventory only returns an answer if any tag was found", ``MetratecReaderAscii.java``
  ``setVerbosityLevel``).
* Wrong parameters: ``UPA``; a number where it does not fit: ``NOR``; not a number: ``EDX``; not hex: ``EHX``.

Timing (every figure is in :class:`ReaderTiming`, with where it comes from): an antenna switch, then per inventory a
base time plus a time per tag. The pty and the socket move bytes at once; a real USB or serial line adds its own
transfer time, which the per-tag figure includes.

Faults on demand: ``unplug``/``replug`` (USB cable or power), ``drop_connection`` (the network drops the TCP
connection), ``reboot`` (a watchdog reset, ``SRT``; or ``BOD``), ``lose_rf_settings`` (``RNW``, then ``NRF``),
``antenna_fault`` (``ARH`` in that antenna's inventories), ``report`` (an error the reader announces: ``BOF``, ``CRT``,
``URE``, ``PLE``, ``EHF``, ``UER`` ...), ``refuse`` (answer a command with an error code), ``corrupt_next_inventory``
(a damaged character on the wire), ``halt_inventory`` (the continuous inventory stops, heartbeats go on), ``stall``
(hang), ``sleep`` (standby, as after ``STB``).
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from firmware_bridge.metratec import MAX_CHANNELS, Channel, default_channels, strip_crc, with_crc
from sim.pty_link import read_pty, write_pty
from sim.wire_emulator import WireEmulator

log = logging.getLogger(__name__)

TX_BUFFER_BYTES = 16384  # answers waiting for a host that does not read are dropped past this (and counted)


class TagField(Protocol):
    def tags_on(self, reader: str, antenna: int) -> list[str]: ...


@dataclass(frozen=True)
class ReaderTiming:
    """How long the emulated reader takes. Figures and their sources (docs/metratec.md, "Timing"):

    * ``per_tag_s``: 10 ms a tag, the QuasarMX's "reading rate of up to 100 tag-IDs/sec" (rfid-sdk-java
      ``iso/QuasarMX.java`` class comment and ``QuasarMXExample.java``). It includes the UID's line on the wire
      (18 bytes: 1.6 ms at 115,200 baud).
    * ``inventory_s``: 10 ms for an inventory that finds nothing: an ISO/IEC 15693-3 16-slot round at the high data
      rate (request about 1.6 ms, 15 empty slots of about 0.4 ms) is 8 ms, plus the reader's processing and its
      answer ``ARP nn`` ``IVF nn`` (17 bytes, 1.5 ms at 115,200 baud). Derived, not measured.
    * ``switch_s``: 1 ms to switch antennas: a tag must be ready 1 ms after the field comes on (ISO/IEC 15693-3), the
      multiplexer's switch is faster than that. ``SAP AUT n delay`` adds ``delay`` ms (quasar_mx.py via
      reader_ascii.py ``set_antenna_multiplex``). Derived, not measured.
    * ``command_s``: 1 ms for any other command. Assumed.
    """

    per_tag_s: float = 0.010
    inventory_s: float = 0.010
    switch_s: float = 0.001
    command_s: float = 0.001

    def inventory_time(self, tags: int) -> float:
        return self.inventory_s + self.per_tag_s * tags


@dataclass
class EmulatorStats:
    bytes_sent: int = 0
    bytes_received: int = 0
    tx_bytes_dropped: int = 0
    boots: int = 0
    connections: int = 0  # TCP clients accepted
    inventories: int = 0
    crc_errors: int = 0  # commands refused with CCE
    commands: Counter = field(default_factory=Counter)  # command word -> times received intact
    answers: Counter = field(default_factory=Counter)  # first word of each answer frame -> times sent


@dataclass
class _Operation:
    """What the reader is busy with: a command's answer, or one inventory of a continuous one."""

    done_at: float
    answer: list[str] | None  # the lines to send when done (None: computed then, for an inventory)
    inventory: tuple[str, int] | None = None  # ("INV" or "CNR", antenna) while inventorying
    then_reboot: bool = False


class MetratecEmulator(WireEmulator):
    def __init__(
        self,
        field: TagField,
        *,
        reader: str = "main",
        antennas: int,
        channels: list[Channel] | None = None,
        link_path: Path | None = None,
        tcp_port: int | None = None,
        serial: str = "2211000042",
        model: str = "QUASAR_MX",
        hardware: str = "0200",
        firmware: str = "0307",
        ports: int = 1,
        outputs: int = 4,
        timing: ReaderTiming = ReaderTiming(),
        seed: int = 0,
    ):
        super().__init__(link_path=link_path, thread_name=f"metratec-{serial}", logger=log)
        self.field = field
        self.reader = reader
        self.antennas = antennas
        self.channels = list(channels) if channels is not None else default_channels(antennas)
        if len(self.channels) != antennas:
            raise ValueError(f"{antennas} antennas but {len(self.channels)} channels")
        self.serial = serial
        self.model = model
        self.hardware = hardware
        self.firmware = firmware
        self.ports = ports  # the reader's own antenna connectors
        self.outputs = outputs  # digital outputs that can drive a multiplexer (SAP PIN); 0: none
        self.timing = timing
        self.seed = seed  # kept for the interface of sim's emulators; the reader's behaviour is deterministic
        self.stats = EmulatorStats()
        self.received: list[tuple[float, str]] = []  # command lines that arrived intact (CRC removed), with the time
        self._lock = threading.RLock()
        self._refusals: dict[str, tuple[str, int | None]] = {}  # command prefix -> (error code, times left or None)
        self._corrupt: tuple[int | None] | None = None  # damage the next inventory answer (of this antenna)
        self._reports: list[str] = []  # errors to announce at the next step
        self._faulted: set[int] = set()  # table antennas (1-based) whose inventories answer ARH
        self._now = 0.0
        self._stall_until = 0.0
        self._powered = True
        self._booted = False
        self._announce: str | None = None  # SRT or BOD at the next boot
        self._rx = bytearray()
        self._tx = bytearray()
        # TCP (else the pty)
        self.tcp_port: int | None = None
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None
        self._wanted_port = tcp_port
        if tcp_port is None:
            self._open_pty()
        else:
            self._listen()

    # ---- where the host finds it --------------------------------------------------------------------------

    @property
    def master_fd(self) -> int | None:
        """The emulator's end of the byte stream (pty master, or the TCP client's socket): Lockstep waits on it."""
        if self._master is not None:
            return self._master
        return self._client.fileno() if self._client is not None else None

    @property
    def plugged(self) -> bool:
        return self._powered

    def _open_pty(self) -> None:
        super()._open_pty()
        log.info("metratec emulator: %s %s on %s", self.model, self.serial, self.path)

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.tcp_port or self._wanted_port or 0))
        listener.listen(1)
        listener.setblocking(False)
        self._listener = listener
        self.tcp_port = listener.getsockname()[1]
        log.info("metratec emulator: %s %s on tcp 127.0.0.1:%d", self.model, self.serial, self.tcp_port)

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except OSError:
                pass

    def close(self) -> None:
        self.stop()
        with self._lock:
            self._power_off()

    def _power_off(self) -> None:
        self._powered = False
        self._booted = False
        self._close_pty()
        self._close_client()
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    # ---- running ------------------------------------------------------------------------------------------

    def _wait_on(self) -> tuple[list[int], float]:
        """Between two steps of the thread: until the host writes or connects, or 2 ms at most (less when the
        operation under way ends sooner)."""
        with self._lock:
            fds = [fd for fd in (self.master_fd, self._listener.fileno() if self._listener else None)
                   if fd is not None]
            due = self._next_due() - time.monotonic()
        return fds, max(0.0, min(0.002, due))

    def step(self, now: float) -> None:
        """Do everything the reader would have done up to time ``now`` (seconds)."""
        with self._lock:
            self._now = now
            if not self._powered:
                return
            if not self._booted:
                self._boot(now)
            if now < self._stall_until:
                return  # hung: neither reads nor answers
            self._accept()
            self._receive(now)
            self._run_reader(now)
            self._flush()

    def _next_due(self) -> float:
        operation = self._operation if self._booted else None
        return operation.done_at if operation is not None else float("inf")

    # ---- faults on demand ---------------------------------------------------------------------------------

    def unplug(self) -> None:
        """Pull the cable (USB) or the power (TCP): the pty or the listening socket goes away."""
        with self._lock:
            self._power_off()
            log.info("metratec emulator: %s unplugged", self.serial)

    def replug(self) -> None:
        """Plug it back in: a new pty (the symlink re-pointed) or the same TCP port again, and a fresh boot."""
        with self._lock:
            if self._powered:
                return
            self._powered = True
            if self._wanted_port is None:
                self._open_pty()
            else:
                self._listen()

    def drop_connection(self) -> None:
        """The network drops the TCP connection; the reader stays on and keeps its state."""
        with self._lock:
            self._close_client()

    def reboot(self, announce: str = "SRT") -> None:
        """A watchdog reset (``SRT``) or a brown-out (``BOD``): the settings are lost, the reader says so."""
        with self._lock:
            self._booted = False
            self._announce = announce

    def lose_rf_settings(self, announce: bool = True) -> None:
        """The RF interface loses its settings (announced with ``RNW``): inventories answer ``NRF`` until ``SRI``."""
        with self._lock:
            self._rf_on = False
            if announce:
                self._reports.append("RNW")

    def halt_inventory(self) -> None:
        """The continuous inventory stops without a word (a firmware hiccup); heartbeats go on."""
        with self._lock:
            self._cnr = None
            self._operation = None

    def corrupt_next_inventory(self, antenna: int | None = None) -> None:
        """One character of the next inventory answer (of reader antenna ``antenna``, if given) is damaged."""
        with self._lock:
            self._corrupt = (antenna,)

    def antenna_fault(self, antenna: int, active: bool = True) -> None:
        """Table antenna ``antenna`` (1-based) reflects its power (cable off): its inventories answer ``ARH``."""
        with self._lock:
            (self._faulted.add if active else self._faulted.discard)(antenna)

    def report(self, code: str) -> None:
        """Announce an error at the next step, as the reader does with hardware errors (``BOF``, ``PLE`` ...)."""
        with self._lock:
            self._reports.append(code)

    def refuse(self, command: str, code: str | None, times: int | None = None) -> None:
        """Answer commands starting with ``command`` (e.g. ``"SAP PIN"``) with ``code``: ``times`` times, or until
        ``refuse(command, None)``."""
        with self._lock:
            if code is None:
                self._refusals.pop(command, None)
            else:
                self._refusals[command] = (code, times)

    def stall(self, seconds: float) -> None:
        """Hang for ``seconds`` from now: nothing is read or sent."""
        with self._lock:
            self._stall_until = self._now + seconds

    def sleep(self) -> None:
        """Standby, as after ``STB``: only ``WAK`` is heard."""
        with self._lock:
            self._asleep = True
            self._cnr = None
            self._operation = None

    @property
    def crc_mode(self) -> bool:
        return self._booted and self._crc

    @property
    def continuous(self) -> bool:
        """Inventorying continuously (CNR INV)."""
        with self._lock:
            return self._booted and self._cnr is not None

    # ---- the reader ---------------------------------------------------------------------------------------

    def _boot(self, now: float) -> None:
        self._booted = True
        self.stats.boots += 1
        self._eof = False
        self._crc = False
        self._asleep = False
        self._verbosity = 1
        self._heartbeat_s = 0
        self._standard = "156"
        self._rf_on = False
        self._pins = 0
        self._report_antenna = False
        self._auto = 0  # SAP AUT n; 0: manual
        self._auto_delay_s = 0.0
        self._auto_next = 0
        self._antenna = 0
        self._cnr: str | None = None  # the parameters of a continuous inventory running
        self._operation: _Operation | None = None
        self._queue: deque[tuple[float, str]] = deque()
        self._free_at = now
        self._last_output_at = now
        self._rx.clear()
        if self._announce is not None:
            self._frame([self._announce])
            self._announce = None

    def _accept(self) -> None:
        if self._listener is None:
            return
        try:
            client, _ = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return
        client.setblocking(False)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._close_client()  # one host at a time: the newer connection wins
        self._client = client
        self._rx.clear()
        self._tx.clear()  # answers for the old connection are not sent on the new one
        self.stats.connections += 1

    def _receive(self, now: float) -> None:
        while True:
            data = self._read()
            if not data:
                break
            self.stats.bytes_received += len(data)
            self._rx += data
        while True:
            end = self._rx.find(b"\r")
            if end < 0:
                if len(self._rx) > 256:  # no CR in sight: the reader's line buffer overflows
                    self._rx.clear()
                    self._frame(["BOF"])
                return
            line = bytes(self._rx[:end]).decode("ascii", "replace").replace("\n", "")
            del self._rx[: end + 1]
            if line:
                self._command(now, line)

    def _read(self) -> bytes:
        try:
            if self._master is not None:
                return read_pty(self._master)
            if self._client is not None:
                data = self._client.recv(4096)
                if not data:  # the host closed the connection
                    self._close_client()
                return data
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.ECONNRESET, errno.EPIPE):
                self._close_client()
                return b""
            raise
        return b""

    def _command(self, now: float, line: str) -> None:
        """A command line has arrived: check its CRC, then queue it (or handle it at once, as BRK and WAK are)."""
        if self._crc:
            text = strip_crc(line)
            if text is None:
                self.stats.crc_errors += 1
                if not self._asleep:
                    self._frame(["CCE"])
                return
        else:
            text = line
        words = text.strip().upper().split()
        if not words:
            return
        self.received.append((now, " ".join(words)))
        self.stats.commands[words[0]] += 1
        if self._asleep:
            if words[0] == "WAK":
                self._asleep = False
                self._frame(["GMO"])
            return
        if words[0] == "BRK" and self._cnr is not None:
            self._cnr = None  # the inventory under way is abandoned
            self._operation = None
            self._free_at = now
            self._frame(["BRA"])
            return
        if self._cnr is not None:
            return  # while inventorying continuously only BRK is heard (an assumption: the SDKs send nothing else)
        self._queue.append((now, " ".join(words)))

    def _run_reader(self, now: float) -> None:
        for code in self._reports:
            self._frame([code])
        self._reports.clear()
        while True:
            operation = self._operation
            if operation is not None:
                if now < operation.done_at - 1e-9:
                    break
                self._operation = None
                self._free_at = operation.done_at
                self._finish(operation)
                continue
            if self._cnr is not None:
                self._start_inventory(self._free_at, "CNR")
                continue
            if not self._queue:
                break
            received_at, command = self._queue.popleft()
            self._execute(max(received_at, self._free_at), command)
        if (self._heartbeat_s and self._operation is None and self._cnr is None and not self._asleep
                and now - self._last_output_at >= self._heartbeat_s):
            self._frame(["HBT"])

    def _finish(self, operation: _Operation) -> None:
        if operation.inventory is not None:
            antenna = operation.inventory[1]
            corrupt = self._corrupt is not None and self._corrupt[0] in (None, antenna)
            if corrupt:
                self._corrupt = None
            lines = self._inventory_answer(antenna)
            if self._verbosity > 0 or len(lines) > 1 + self._report_antenna:
                self._frame(lines, corrupt=corrupt)  # VBL 0: no answer when no tag was found
            return
        if operation.answer is not None:
            self._frame(operation.answer)
        if operation.then_reboot:
            self._booted = False
            self._boot(operation.done_at)

    def _busy(self, start: float, seconds: float, answer: list[str] | None, then_reboot: bool = False) -> None:
        self._operation = _Operation(start + seconds, answer, then_reboot=then_reboot)

    # ---- commands -----------------------------------------------------------------------------------------

    def _execute(self, start: float, command: str) -> None:
        for prefix, (code, times) in list(self._refusals.items()):
            if command.startswith(prefix):
                if times is not None:
                    if times <= 1:
                        del self._refusals[prefix]
                    else:
                        self._refusals[prefix] = (code, times - 1)
                self._busy(start, self.timing.command_s, [code])
                return
        words = command.split()
        name, args = words[0], words[1:]
        handler = getattr(self, f"_cmd_{name.lower()}", None)
        if handler is None:
            self._busy(start, self.timing.command_s, ["UCO"])
            return
        handler(start, args)

    def _ok(self, start: float, seconds: float | None = None) -> None:
        self._busy(start, self.timing.command_s if seconds is None else seconds, ["OK!"])

    def _error(self, start: float, code: str) -> None:
        self._busy(start, self.timing.command_s, [code])

    def _no_args(self, start: float, args: list[str], answer: list[str]) -> None:
        if args:
            self._error(start, "UPA")
        else:
            self._busy(start, self.timing.command_s, answer)

    def _cmd_brk(self, start, args):
        self._no_args(start, args, ["NCM"])  # not in continuous mode (a running one is stopped in _command)

    def _cmd_wak(self, start, args):
        self._busy(start, self.timing.command_s, ["DNS"])  # did not sleep

    def _cmd_stb(self, start, args):
        self._busy(start, self.timing.command_s, ["GN8"])
        self._asleep = True

    def _cmd_eof(self, start, args):
        if args:
            return self._error(start, "UPA")
        self._eof = True
        self._ok(start)

    def _cmd_nef(self, start, args):
        if args:
            return self._error(start, "UPA")
        self._eof = False
        self._ok(start)

    def _cmd_con(self, start, args):
        if args:
            return self._error(start, "UPA")
        self._crc = True  # the OK! already carries a CRC (MetratecReaderAscii.java setCRC)
        self._ok(start)

    def _cmd_cof(self, start, args):
        # COF 4F5E outside CRC mode is what the Java SDK sends to be sure: accepted.
        self._crc = False
        self._ok(start)

    def _cmd_rev(self, start, args):
        self._no_args(start, args, [f"{self.model:<16}{self.hardware}{self.firmware}"])

    def _cmd_rsn(self, start, args):
        self._no_args(start, args, [self.serial])

    def _cmd_rhr(self, start, args):
        self._no_args(start, args, [self.hardware])

    def _cmd_rst(self, start, args):
        if args:
            return self._error(start, "UPA")
        self._busy(start, self.timing.command_s, ["OK!"], then_reboot=True)

    def _cmd_vbl(self, start, args):
        value = self._number(start, args, 0, 2)
        if value is not None:
            self._verbosity = value
            self._ok(start)

    def _cmd_hbt(self, start, args):
        if args == ["OFF"]:
            self._heartbeat_s = 0
            return self._ok(start)
        value = self._number(start, args, 0, 300)  # MetratecReaderAscii.java setHeartbeatInterval: at most 300 s
        if value is not None:
            self._heartbeat_s = value
            self._ok(start)

    def _cmd_mod(self, start, args):
        if len(args) != 1 or args[0] not in ("156", "14A", "14B"):
            return self._error(start, "UPA")
        self._standard = args[0]
        self._ok(start)

    def _cmd_sri(self, start, args):
        if args == ["OFF"]:
            self._rf_on = False
            return self._ok(start)
        if len(args) == 2 and args[0] == "TIM":  # field off for a while, then on again
            value = self._number(start, args[1:], 0, 65535)
            if value is not None:
                self._ok(start, self.timing.command_s + value / 1000)
            return
        if len(args) != 2 or args[0] not in ("SS", "DS"):
            return self._error(start, "UPA")
        if not args[1].isdigit():
            return self._error(start, "EDX")
        if args[1] not in ("10", "100"):
            return self._error(start, "NOR")
        self._rf_on = True
        self._ok(start)

    def _cmd_set(self, start, args):
        if not args or args[0] != "PWR":
            return self._error(start, "UPA")
        # 100..4000 mW, QuasarLR up to 8000 (ISOReaderAscii.java setPower, QuasarLR.java setPower)
        value = self._number(start, args[1:], 100, 8000 if self.model.upper() == "QUASARLR" else 4000)
        if value is not None:
            if value not in (100, 200) and (value < 500 or value % 250):
                return self._error(start, "NOR")
            self._ok(start)

    def _cmd_rip(self, start, args):
        value = self._number(start, args, 0, 1)
        if value is not None:
            self._busy(start, self.timing.command_s, ["LOW"])

    def _cmd_wop(self, start, args):
        if len(args) != 2 or args[1] not in ("HI", "LOW"):
            return self._error(start, "UPA")
        if self._number(start, args[:1], 0, 3) is not None:
            self._ok(start)

    def _cmd_sap(self, start, args):
        if not args:
            return self._error(start, "UPA")
        mode, rest = args[0], args[1:]
        if mode.isdigit():  # "SAP n": the Java and .NET SDKs' form of SAP MAN n
            mode, rest = "MAN", args
        if mode == "MAN":
            value = self._number(start, rest, 0, MAX_CHANNELS - 1)
            if value is not None:
                self._auto = 0
                self._antenna = value
                self._ok(start, self.timing.command_s + self.timing.switch_s)
        elif mode == "AUT":
            if rest == ["OFF"]:
                self._auto = 0
                return self._ok(start)
            delay = 0
            if len(rest) == 2 and self.model.upper() == "QUASAR_MX":  # quasar_mx.py sends "SAP AUT n delay"
                delay = self._number(start, rest[1:], 0, 255)
                if delay is None:
                    return
                rest = rest[:1]
            value = self._number(start, rest, 1, MAX_CHANNELS)
            if value is not None:
                self._auto, self._auto_next, self._auto_delay_s = value, 0, delay / 1000
                self._ok(start)
        elif mode == "PIN":
            if self.outputs == 0:
                return self._error(start, "NOS")
            value = self._number(start, rest, 0, self.outputs)
            if value is not None:
                self._pins = value
                self._ok(start)
        elif mode == "ARP":
            if rest not in (["ON"], ["OFF"]):
                return self._error(start, "UPA")
            self._report_antenna = rest == ["ON"]
            self._ok(start)
        else:
            self._error(start, "UPA")

    def _cmd_inv(self, start, args):
        if self._inventory_args(start, args):
            self._start_inventory(start, "INV")

    def _cmd_cnr(self, start, args):
        if not args or args[0] != "INV":
            return self._error(start, "UPA")
        if self._inventory_args(start, args[1:]):
            self._cnr = " ".join(args[1:])  # no answer of its own: the first inventory is the answer
            self._free_at = start

    def _inventory_args(self, start: float, args: list[str]) -> bool:
        index = 0
        while index < len(args):
            if args[index] in ("SSL", "ONT"):
                index += 1
            elif args[index] == "AFI" and index + 1 < len(args):
                try:
                    int(args[index + 1], 16)
                except ValueError:
                    self._error(start, "EHX")
                    return False
                index += 2
            else:
                self._error(start, "UPA")
                return False
        if not self._rf_on:
            self._error(start, "NRF")
            return False
        if self._standard != "156":
            self._error(start, "NSS")
            return False
        return True

    def _number(self, start: float, args: list[str], low: int, high: int) -> int | None:
        if len(args) != 1:
            self._error(start, "UPA")
            return None
        if not args[0].isdigit():
            self._error(start, "EDX")
            return None
        value = int(args[0])
        if not low <= value <= high:
            self._error(start, "NOR")
            return None
        return value

    # ---- inventory ----------------------------------------------------------------------------------------

    def _start_inventory(self, start: float, kind: str) -> None:
        if not self._rf_on:  # lost its RF settings while inventorying continuously
            self._cnr = None
            self._busy(start, self.timing.command_s, ["NRF"])
            return
        seconds = 0.0
        if self._auto:
            antenna = self._auto_next
            self._auto_next = (self._auto_next + 1) % self._auto
            if self._auto > 1:
                seconds += self.timing.switch_s + self._auto_delay_s
        else:
            antenna = self._antenna
        seconds += self.timing.inventory_time(len(self._uids(antenna)))
        self._operation = _Operation(start + seconds, None, inventory=(kind, antenna))

    def _target(self, antenna: int) -> Channel:
        """Where the RF goes for antenna number ``antenna``: a multiplexer channel when outputs drive one."""
        if self._pins:
            return Channel(antenna & ((1 << self._pins) - 1), multiplexer=True)
        return Channel(antenna)

    def _table_antenna(self, antenna: int) -> int | None:
        target = self._target(antenna)
        if not target.multiplexer and target.number >= self.ports:
            return None  # a port the reader does not have
        for index, channel in enumerate(self.channels):
            if channel == target:
                return index + 1
        return None

    def _uids(self, antenna: int) -> list[str]:
        table_antenna = self._table_antenna(antenna)
        if table_antenna is None or table_antenna in self._faulted:
            return []
        uids = []
        for uid in dict.fromkeys(self.field.tags_on(self.reader, table_antenna)):  # each tag answers once
            text = str(uid).upper()
            if len(text) == 16 and text.startswith("E0") and all(c in "0123456789ABCDEF" for c in text):
                uids.append(text)  # only ISO 15693 tags answer a 13.56 MHz ISO 15693 reader
        return uids

    def _inventory_answer(self, antenna: int) -> list[str]:
        self.stats.inventories += 1
        table_antenna = self._table_antenna(antenna)
        lines = ["ARH"] if table_antenna in self._faulted else self._uids(antenna)
        count = 0 if lines == ["ARH"] else len(lines)
        if self._report_antenna:
            lines = lines + [f"ARP {antenna:02d}"]
        return lines + [f"IVF {min(count, 99):02d}"]  # two characters (hf_reader_ascii.py); past 99: not known

    # ---- sending ------------------------------------------------------------------------------------------

    def _frame(self, lines: list[str], corrupt: bool = False) -> None:
        if lines:
            self.stats.answers[lines[0].split()[0] if lines[0].strip() else lines[0]] += 1
        text = "".join((with_crc(line) if self._crc else line) + "\r" for line in lines)
        if corrupt:  # one bit of the first character flipped: still text, no longer what was sent
            text = chr(ord(text[0]) ^ 0x01) + text[1:]
        if self._eof:
            text += "\n"
        data = text.encode("ascii")
        self._last_output_at = self._now
        if len(self._tx) + len(data) > TX_BUFFER_BYTES:
            self.stats.tx_bytes_dropped += len(data)
            return
        self._tx += data

    def _flush(self) -> None:
        while self._tx:
            try:
                if self._master is not None:
                    written = write_pty(self._master, self._tx)
                elif self._client is not None:
                    written = self._client.send(self._tx)
                else:
                    self._tx.clear()  # no host connected: the bytes go nowhere
                    return
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EIO, errno.ECONNRESET, errno.EPIPE):
                    if self._client is not None:
                        self._close_client()
                    return
                raise
            if not written:
                return  # the pty is full (nobody reading); try again next step
            del self._tx[:written]
            self.stats.bytes_sent += written
