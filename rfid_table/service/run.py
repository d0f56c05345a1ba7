"""The daemon's loop on the table's readers: what ``rfid-table run`` runs once its arguments are parsed.

It opens the journal (refusing one that is damaged, empty or another table's, with a clear message and the exit
status the systemd unit does not restart on), restores the table from it, then steps the pipeline as soon as a
reader's cycle is whole, a command arrives or a commit lands (:class:`HardwareWait`), and every ``RUN_PERIOD_S`` at
the latest (``POLL_PERIOD_S`` with USB readers or GPIO); systemd hears of it (readiness, status, the watchdog)
through :mod:`rfid_table.service.systemd`. ``rfid-table sim`` shares the journal's opening and closing
(:mod:`rfid_table.devtools.simulate`).
"""

import logging
import secrets
import select
import sys
import time
from pathlib import Path
from typing import Any, Callable

from hal.reader_backend import ReaderUnavailable
from hal.readers import open_reader
from rfid_table.config.table import EX_CONFIG, TableConfig
from rfid_table.service import systemd
from rfid_table.service.checkpoint import CheckpointUnusable
from rfid_table.service.daemon import StopFlag, TablePipeline
from rfid_table.service.journal import Journal
from rfid_table.service.journal_file import JournalRefused, JournalWriteFailed
from rfid_table.service.journal_writer import JournalWriter
from rfid_table.service.publisher import MqttPublisher
from rfid_table.service.timebase import TableClock, system_clock

# How often the hardware loop steps at the latest. A serial reader's whole cycle, a command and a landed commit wake
# it at once (HardwareWait), so then only the timers need it (the action clock, a bet's settling, the end of a hand):
# a reader's cycle is precision enough. USB readers (nothing to wait on) and the console's buttons and sensors are
# polled, more often.
RUN_PERIOD_S = 0.05
POLL_PERIOD_S = 0.01
# At shutdown, how long the broker may take to acknowledge what is queued: what it has not acknowledged is in the
# journal and goes out again at the next start, and SIGTERM must end the daemon within 2 s whatever the broker does.
STOP_ACKS_S = 1.0
EX_JOURNAL = 65  # sysexits.h EX_DATAERR: the journal on disk is damaged, empty, or another table's
EX_JOURNAL_DISK = 74  # sysexits.h EX_IOERR: the journal cannot be written (the disk is full); not restarted

log = logging.getLogger("rfid_table")


def run_realtime(step: Callable[[float, float], object], period_s: float, stop: StopFlag,
                 wait: Callable[[float], None], clock: TableClock) -> None:
    """The hardware loop: ``step(table time, wall time)`` every ``period_s`` of table time; ``wait`` sleeps until
    then or until a reader or the broker has something to say.

    Steps on time keep the cadence. A step taken early (a reader's cycle, a command or a commit woke the loop) does
    not push the next one a period further: the loop never waits past one period from now. Otherwise every early
    wake-up would add a period of credit, which the loop would sleep off once the reader fell silent: no reconnect,
    no timer, no watchdog ping meanwhile.
    """
    next_step = clock.now()
    while not stop.is_set():
        step(clock.now(), clock.wall())
        now = clock.now()
        next_step = min(max(next_step + period_s, now), now + period_s)
        wait(next_step - now)


def loop_period_s(config: TableConfig, gpio: bool) -> float:
    """The hardware loop's longest time between steps for ``config``'s readers (and the console's GPIO)."""
    polled = gpio or any(r.backend != "serial" for r in config.readers.values())
    return POLL_PERIOD_S if polled else RUN_PERIOD_S


class HardwareWait:
    """The hardware loop's time between steps (the ``wait`` of :func:`run_realtime`): the broker's network work,
    and each reader's frames taken in as they arrive (``FirmwareReader.receive``), until the next step is due or
    the table has work sooner: a reader's cycle is complete or its link changed, a journal commit has landed (its
    events go out now), a command has arrived.

    A reader reports each antenna at the end of its dwell (27 frames a cycle on a full table), and only a whole
    cycle gives the zone tracker anything to do: a wake-up for every frame was most of the daemon's CPU at rest.
    So once a reader's cycle has ended, its frames are left to gather in the port's buffer until half an antenna's
    dwell before its next cycle ends (every antenna's frame but the last one's is in by then; ``QUIET_SHARE`` of
    the cycle for a reader whose antenna count is not known) and are then taken in together; the last frame, which
    ends the cycle, is watched for as closely as before.

    The cycle counted on is the shorter of the configured one (``cycle_s``: reader name → its cycle) and the
    reader's own period, measured between cycle ends seen as they came, so a reader that runs faster than
    configured is not read late. A cycle whose end was already waiting among the gathered frames says only that
    the window closed late: the next cycle's frames are then taken in as they come, to see its end on time again.
    Not while the reader is watching antennas for a card's deciding read (``FirmwareReader.watching``): then each
    frame is taken in as it comes, and one of those antennas wakes the table at once. Nor for a reader paced by the
    host (``paced_by_host``: it sends its next answer only once the last was taken in).
    """

    QUIET_SHARE = 0.9  # of a cycle, for a reader whose antenna count is not known

    # ``readers``: the table's readers, of every backend; the wait reads what only the readers that wake it have
    # (``receive``, ``watching``, ``cycles_emitted``: the firmware and PN5180 links), not the ReaderBackend protocol.
    def __init__(self, readers: list[Any], publisher: MqttPublisher, writer: JournalWriter | None,
                 now: Callable[[], float], cycle_s: dict[str, float] | None = None):
        self.readers = readers
        self.publisher = publisher
        self.writer = writer
        self.now = now  # table time, which stamps the cycles taken in
        self.cycle_s = cycle_s or {}
        self._quiet_until = {reader.name: 0.0 for reader in readers}  # monotonic; its fd is not watched before
        # the share of a cycle its frames gather for: all but the last half dwell of an antenna
        self._quiet_share = {reader.name: 1 - 0.5 / reader.antennas if reader.antennas else self.QUIET_SHARE
                             for reader in readers}
        # reader → (when, its cycles_emitted then) of the last cycle end seen as it came (monotonic)
        self._cycle_ended: dict[str, tuple[float, int]] = {}
        self._gathered: set[str] = set()  # readers whose next read takes in the frames of a quiet window
        self._cycles_seen = {reader.name: reader.cycles_emitted for reader in readers}

    def __call__(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        client = self.publisher.client
        for reader in self.readers:  # a cycle the step's own poll completed (its end came in the meantime)
            self._after_receive(reader, time.monotonic(), reader.name in self._gathered)
        while True:
            mono = time.monotonic()
            reader_at: dict[int, Any] = {}
            until = deadline
            for reader in self.readers:
                quiet_until = self._quiet_until[reader.name]
                if mono < quiet_until and not reader.watching:
                    until = min(until, quiet_until)
                    continue
                fd = reader.fileno()
                if fd is not None:
                    reader_at[fd] = reader
            committed = self.writer.fileno() if self.writer is not None else None
            sock = client.socket()
            watched = [*reader_at, *(fd for fd in (committed, sock) if fd is not None)]
            try:
                readable, writable, _ = select.select(watched, [sock] if sock and client.want_write() else [], [],
                                                      max(0.0, until - mono))
            except (OSError, ValueError):  # a reader unplugged meanwhile: the link notices in the next step
                readable, writable, deadline = [], [], 0.0
            network = sock is None or sock in readable or bool(writable)
            if network:
                self.publisher.service(0)
            work = self.publisher.has_commands or (committed is not None and committed in readable)
            now = self.now()
            for fd in readable:
                reader = reader_at.get(fd) if isinstance(fd, int) else None  # (not the broker's socket)
                if reader is None:
                    continue
                gathered = reader.name in self._gathered
                self._gathered.discard(reader.name)
                if reader.receive(now):
                    work = True
                    self._after_receive(reader, time.monotonic(), gathered)
            if work or time.monotonic() >= deadline:
                if not network:
                    self.publisher.service(0)  # keepalive, reconnection
                return

    def _after_receive(self, reader: Any, mono: float, gathered: bool) -> None:
        """The reader's frames were taken in at ``mono``: a quiet window follows each cycle that ended."""
        cycles = reader.cycles_emitted
        if cycles != self._cycles_seen[reader.name]:
            self._cycles_seen[reader.name] = cycles
            if reader.name in self.cycle_s and not reader.paced_by_host:
                self._quiet_after_cycle(reader.name, mono, cycles, gathered)

    def _quiet_after_cycle(self, name: str, mono: float, cycles: int, gathered: bool) -> None:
        """A cycle of reader ``name`` has ended (``cycles``: its cycles so far), taken in at ``mono``, with frames
        gathered in a quiet window (``gathered``) or as they came."""
        if gathered:  # its end may have waited in the buffer: when cycles end is not known, so no window now
            self._quiet_until[name] = 0.0
            return
        cycle_s = self.cycle_s[name]
        last = self._cycle_ended.get(name)
        if last is not None:
            cycle_s = min(cycle_s, (mono - last[0]) / (cycles - last[1]))
        self._cycle_ended[name] = (mono, cycles)
        self._quiet_until[name] = mono + self._quiet_share[name] * cycle_s
        self._gathered.add(name)


def open_journal(path: str, config: TableConfig, fresh: bool = False) -> Journal:
    """The table's journal, checked; exits with a clear message (never a traceback) when it cannot be used."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"rfid-table: cannot create the journal's directory for {path}: {exc.strerror}", file=sys.stderr)
        raise SystemExit(EX_JOURNAL)
    journal = Journal(path, retention_events=config.journal_retention, table_id=config.table_id, fresh=fresh,
                      feeds=("public", "secure", "delayed") if config.broadcast_delay_s else ("public", "secure"))
    try:
        check = journal.open()
    except JournalWriteFailed as exc:
        print(f"rfid-table: {exc}. The table cannot start without writing its journal: {exc.remedy}, then start it "
              "again", file=sys.stderr)
        raise SystemExit(EX_JOURNAL_DISK)
    except JournalRefused as exc:
        print(f"rfid-table: refusing the journal: {exc}", file=sys.stderr)
        raise SystemExit(EX_JOURNAL)
    if not check.ok:
        print(f"rfid-table: the journal {path} failed its self-check; refusing to publish from it:\n  "
              + "\n  ".join(check.problems), file=sys.stderr)
        raise SystemExit(EX_JOURNAL)
    return journal


def restore_or_exit(pipeline: TablePipeline, path: str, now: float) -> None:
    """The table restored from its journal at table time ``now``, or a clear message and EX_JOURNAL when no
    checkpoint can be used."""
    try:
        pipeline.restore(now)
    except CheckpointUnusable as exc:
        print(f"rfid-table: cannot restore the table from the journal {path}: {exc}", file=sys.stderr)
        raise SystemExit(EX_JOURNAL)


def close_journal(journal: Journal, publisher: MqttPublisher) -> None:
    """The broker's last acknowledgements into the journal, then close it."""
    try:
        for feed, seq in publisher.take_acknowledged().items():
            journal.mark_delivered(feed, seq)
    except JournalWriteFailed as exc:
        log.error("%s: the last acknowledgements are not journaled; those events go out again at the next start", exc)
    journal.close()


def run_table(config: TableConfig, config_path: str, journal_path: str | None = None, new_journal: bool = False) -> int:
    """Run the table of ``config`` (read from ``config_path``) until SIGTERM or SIGINT; the exit status.

    ``journal_path`` overrides ``[journal] path``; ``new_journal`` lets an empty file there become a new journal.
    """
    sim_readers = [r.name for r in config.readers.values() if r.backend == "sim"]
    if sim_readers:
        print(f"rfid-table run: reader(s) {', '.join(sim_readers)} use the simulated backend; "
              f"run the simulated table with 'rfid-table sim --config {config_path}'", file=sys.stderr)
        return EX_CONFIG
    stop = StopFlag()
    stop.install()  # from the start: SIGTERM during the start-up ends the daemon as cleanly as later
    journal_path = journal_path or config.journal_path
    journal = open_journal(journal_path, config, new_journal) if journal_path else None
    try:
        readers = [open_reader(r.name, r.backend, r.antennas, r.link, cycle_s=r.cycle_s)
                   for r in config.readers.values()]
    except ReaderUnavailable as exc:  # no SPI device, no permission: nothing to retry, the technician must act
        print(f"rfid-table run: {exc}", file=sys.stderr)
        return EX_CONFIG
    epoch = journal.epoch if journal is not None else secrets.token_hex(8)
    assert epoch is not None  # a journal that passed its self-check has the epoch it was created with
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch=epoch, journaled=journal is not None)
    clock = system_clock()  # table time for every timer and the delay; the wall clock only stamps events
    if journal is not None:
        clock.resume(journal)
    gpio = None
    if config.gpio is not None:  # the seat sensors, console buttons and lights: [gpio] backend (rpi on the table)
        from hal.gpio import GpioError
        from rfid_table.service.table_gpio import TableGpio

        try:
            gpio = TableGpio(config.gpio, config.gpio.backend, clock=clock.now)
        except GpioError as exc:
            print(f"rfid-table run: [gpio]: {exc}", file=sys.stderr)
            for reader in readers:
                reader.close()
            return EX_CONFIG
    # group commits: the journal's fsync runs beside the loop, the steps that arrive meanwhile share the next one
    pipeline = TablePipeline(config, readers, publisher, journal, gpio=gpio, group_commit=True)
    if journal is not None and journal_path is not None:
        systemd.status(f"table {config.table_id}: restoring the journal")
        restore_or_exit(pipeline, journal_path, clock.now())  # before anything new is published
    systemd.settle_heap_for_steady_loop()
    publisher.start(wait_s=5.0, stop=stop.is_set)
    if journal is not None:
        pipeline.publish_backlog()
    log.info("table %r running: %d reader(s), publishing to %s:%s", config.table_id, len(readers),
             config.mqtt.host, config.mqtt.port)
    monitor = systemd.ServiceMonitor(config.table_id)  # $WATCHDOG_USEC, $RFID_TABLE_LINK_GRACE_S
    systemd.ready(f"table {config.table_id}: running, {len(readers)} reader(s)")

    period_s = loop_period_s(config, gpio is not None)

    def step(now: float, wall: float) -> None:
        pipeline.step(now, wall)
        # systemd's watchdog is fed while every reader link is up, or down for less than the grace period.
        monitor.loop(time.monotonic(), {r.name: r.link_up for r in readers}, publisher.connected,
                     f"hand {pipeline.controller.hand}")

    try:
        run_realtime(step, period_s, stop, HardwareWait(readers, publisher, pipeline.writer, clock.now,
                                                        {r.name: r.cycle_s for r in config.readers.values()}),
                     clock)
    finally:
        systemd.stopping(f"table {config.table_id}: stopping")
        pipeline.close_journal()  # what the writer still holds, on disk (published at the next start)
        pipeline.finish_delayed_hand()
        publisher.stop(timeout_s=STOP_ACKS_S)
        for reader in readers:
            reader.close()
        if gpio is not None:
            gpio.close()  # the lights off, the pins released
        if journal is not None:
            close_journal(journal, publisher)
    log.info("stopped")
    return 0
