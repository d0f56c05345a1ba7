"""The registration antenna read: the reader and antenna the command line names, opened through the HAL, and the
loop that feeds a registration session the antenna's inventory cycles and the technician's typed lines.

Tags are read through the HAL exactly as the daemon reads them: the configured reader's backend (``serial``
or ``usb`` over the firmware protocol, ``pn5180`` on the Pi's own SPI bus), one inventory cycle at a time. A tag
whose UID no deck or chip set can hold (a 4-byte ISO 14443A one) is refused as it is read. For a ``sim`` reader,
``--simulate`` lets a virtual technician place new tags on a simulated field (``rfid_table.devtools.register_sim``,
handed in by the command line).
"""

from __future__ import annotations

import os
import select
import sys
import time
from typing import Any, Callable, TextIO

from hal.reader_backend import ReaderBackend
from hal.readers import SimulatedReader, open_reader
from rfid_table.config.registry import uid_problem
from rfid_table.config.table import TableConfig
from rfid_table.ops.register_config import Abort

POLL_S = 0.01  # the longest wait between two polls of a firmware reader
WAITING_HINT_S = 3.0  # a reader not up this long after the start: say why


def registration_antenna(config: TableConfig, zone: str | None, reader: str | None,
                         antenna: int | None) -> tuple[str, int, str]:
    """(reader, antenna, description) from --zone or --reader/--antenna."""
    if zone is not None:
        if reader is not None or antenna is not None:
            raise Abort("give either --zone or --reader/--antenna, not both", 2)
        if zone not in config.zones:
            raise Abort(f"no zone {zone!r} in the configuration (zones: {', '.join(config.zones)})")
        name, number = config.zones[zone]
        return name, number, f"reader {name} antenna {number} (zone {zone})"
    if antenna is None:
        raise Abort("give the registration antenna: --zone NAME (an antenna of the table, e.g. muck) or "
                    "--reader NAME --antenna N", 2)
    if reader is None:
        if len(config.readers) != 1:
            raise Abort(f"the table has {len(config.readers)} readers: name one with --reader "
                        f"({', '.join(config.readers)})", 2)
        reader = next(iter(config.readers))
    if reader not in config.readers:
        raise Abort(f"no reader {reader!r} in the configuration (readers: {', '.join(config.readers)})")
    if not 1 <= antenna <= config.readers[reader].antennas:
        raise Abort(f"reader {reader!r} has antennas 1 to {config.readers[reader].antennas}, not {antenna}")
    zone_of = {where: name for name, where in config.zones.items()}
    used = f" (zone {zone_of[(reader, antenna)]})" if (reader, antenna) in zone_of else ""
    return reader, antenna, f"reader {reader} antenna {antenna}{used}"


class Console:
    """Lines the technician types, read without blocking (none when stdin is not a readable descriptor)."""

    def __init__(self, stream: TextIO | None = None):
        stream = sys.stdin if stream is None else stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self._buffer = b""

    def lines(self) -> list[str]:
        if self.fd is None:
            return []
        try:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return []
            data = os.read(self.fd, 4096)
        except (OSError, ValueError):
            data = b""
        if not data:
            self.fd = None  # end of input (or none to read): the typed commands are over, the tool is not
            return [self._buffer.decode(errors="replace")] if self._buffer else []
        self._buffer += data
        *complete, self._buffer = self._buffer.split(b"\n")
        return [line.decode(errors="replace") for line in complete]


def open_registration_reader(config: TableConfig, reader: str, antenna: int, simulation: Any = None):
    """The HAL reader for the registration antenna; with ``simulation`` (``--simulate``: the developer's tools'
    ``SimulatedRegistration`` class, given by the command line), also the simulated registration it reads: its
    field, and the virtual technicians that place tags on it."""
    settings = config.readers[reader]
    if settings.backend == "sim" and simulation is None:
        raise Abort(f"reader {reader!r} uses the simulated backend: add --simulate, and a virtual technician "
                    "places new tags on it", 2)
    if simulation is not None and settings.backend != "sim":
        raise Abort(f"--simulate needs a reader with backend \"sim\"; reader {reader!r} is {settings.backend!r} "
                    "(made-up tags have no place in a real table's files)", 2)
    simulated = simulation(reader, antenna) if simulation is not None else None
    field = simulated.field if simulated is not None else None
    return open_reader(settings.name, settings.backend, settings.antennas, settings.link, field=field), simulated


def run_session(session, reader: ReaderBackend, antenna: int, say: Callable[[str], None], *,
                console: Console | None = None, technician=None, cycle_s: float = 0.05,
                virtual_clock: bool = False) -> None:
    """Poll the reader and feed the session the registration antenna's reads until it is done.

    A firmware reader is polled whenever it has bytes (or every ``POLL_S``); a simulated one once per
    ``cycle_s``, on the wall clock or, with ``virtual_clock``, as fast as it goes.
    """
    simulated = isinstance(reader, SimulatedReader)
    link = reader.link
    unusable: set[str] = set()  # tags whose UID no deck or chip set can hold (said once each)
    started = now = time.monotonic() if not virtual_clock else 0.0
    cycle = 0
    hinted = False
    session.start()
    while not session.done:
        for inventory in reader.poll(now):
            cycle += 1
            uids = [read.uid for read in inventory.reads if read.antenna == antenna]
            for uid in uids:
                problem = uid_problem(uid) if uid not in unusable else None
                if problem:
                    unusable.add(uid)
                    say(f"     !  refused: tag {uid} is {problem}: take it off")
            session.feed(cycle, inventory.t, (uid for uid in uids if uid not in unusable))
            if session.done:
                return
        for event in reader.device_events():
            detail = dict(event.detail)
            if event.kind == "reader_up" and detail:
                say(f"        reader {reader.name}: up — reader {detail['serial']}, firmware {detail['firmware']}, "
                    f"{detail['antennas']} antennas")
                if antenna > detail["antennas"]:
                    say(f"     !  the reader has {detail['antennas']} antennas: antenna {antenna} reads nothing")
            elif event.kind in ("reader_down", "reader_incompatible"):
                state = event.kind.removeprefix("reader_")
                say(f"     !  reader {reader.name}: {state}: {detail.get('reason')}; reconnecting")
        if link is not None and not link.is_up and not hinted and now - started >= WAITING_HINT_S:
            hinted = True
            say(f"     !  waiting for reader {reader.name}: {link.stats.last_error or 'no answer'} (plugged in? "
                "the table's service stopped? it holds the reader while it runs)")
        for line in console.lines() if console is not None else ():
            session.command(line)
        if technician is not None:
            technician.step(now, session)
        if session.done:
            return
        if virtual_clock:
            now += cycle_s
            continue
        if simulated:
            _wait_input(console, max(0.0, started + (cycle + 1) * cycle_s - time.monotonic()))
        else:
            transport = link.transport if link is not None else None
            fd = transport.fileno() if transport is not None else None
            _wait_input(console, POLL_S, fd)
        now = time.monotonic()


def _wait_input(console: Console | None, timeout_s: float, fd: int | None = None) -> None:
    fds = [f for f in (fd, console.fd if console is not None else None) if f is not None]
    try:
        if fds:
            select.select(fds, [], [], timeout_s)
        else:
            time.sleep(timeout_s)
    except (OSError, ValueError):  # the reader unplugged meanwhile: the link notices on its next poll
        time.sleep(min(timeout_s, POLL_S))

