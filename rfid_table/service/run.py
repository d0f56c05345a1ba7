"""The daemon's loop on the table's readers: what ``rfid-table run`` runs once its arguments are parsed.

It opens the journal (refusing one that is damaged, empty or another table's, with a clear message and the exit
status the systemd unit does not restart on), restores the table from it, then steps the pipeline every
``RUN_PERIOD_S`` at the latest, waking as soon as a reader or the broker has something; systemd hears of it
(readiness, status, the watchdog) through :mod:`rfid_table.service.systemd`. ``rfid-table sim`` shares the journal's
opening and closing (:mod:`rfid_table.devtools.simulate`).
"""

import logging
import secrets
import select
import sys
import time
from pathlib import Path
from typing import Callable

from hal.readers import open_reader
from rfid_table.config.table import EX_CONFIG, TableConfig
from rfid_table.service import systemd
from rfid_table.service.checkpoint import CheckpointUnusable
from rfid_table.service.daemon import StopFlag, TablePipeline
from rfid_table.service.journal import Journal, JournalRefused, JournalWriteFailed
from rfid_table.service.publisher import MqttPublisher
from rfid_table.service.timebase import TableClock, system_clock

RUN_PERIOD_S = 0.01  # how often the hardware loop polls the readers at the latest
EX_JOURNAL = 65  # sysexits.h EX_DATAERR: the journal on disk is damaged, empty, or another table's
EX_JOURNAL_DISK = 74  # sysexits.h EX_IOERR: the journal cannot be written (the disk is full); not restarted

log = logging.getLogger("rfid_table")


def run_realtime(step: Callable[[float, float], object], period_s: float, stop: StopFlag,
                 wait: Callable[[float], None], clock: TableClock) -> None:
    """The hardware loop: ``step(table time, wall time)`` every ``period_s`` of table time; ``wait`` sleeps until
    then or until a reader or the broker has something to say."""
    next_step = clock.now()
    while not stop.is_set():
        step(clock.now(), clock.wall())
        next_step = max(next_step + period_s, clock.now())
        wait(max(0.0, next_step - clock.now()))


def open_journal(path: str, config: TableConfig, fresh: bool = False):
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
        print(f"rfid-table: {exc}. The table cannot start without writing its journal: free space on the journal's "
              f"file system (df -h {Path(path).parent}), then start it again", file=sys.stderr)
        raise SystemExit(EX_JOURNAL_DISK)
    except JournalRefused as exc:
        print(f"rfid-table: refusing the journal: {exc}", file=sys.stderr)
        raise SystemExit(EX_JOURNAL)
    if not check.ok:
        print(f"rfid-table: the journal {path} failed its self-check; refusing to publish from it:\n  "
              + "\n  ".join(check.problems), file=sys.stderr)
        raise SystemExit(EX_JOURNAL)
    return journal


def restore_or_exit(pipeline, path: str, now: float) -> None:
    """The table restored from its journal at table time ``now``, or a clear message and EX_JOURNAL when no
    checkpoint can be used."""
    try:
        pipeline.restore(now)
    except CheckpointUnusable as exc:
        print(f"rfid-table: cannot restore the table from the journal {path}: {exc}", file=sys.stderr)
        raise SystemExit(EX_JOURNAL)


def close_journal(journal, publisher) -> None:
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
    journal_path = journal_path or config.journal_path
    journal = open_journal(journal_path, config, new_journal) if journal_path else None
    readers = [open_reader(r.name, r.backend, r.antennas, r.link) for r in config.readers.values()]
    epoch = journal.epoch if journal is not None else secrets.token_hex(8)
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
    stop = StopFlag()
    stop.install()
    if journal is not None:
        systemd.status(f"table {config.table_id}: restoring the journal")
        restore_or_exit(pipeline, journal_path, clock.now())  # before anything new is published
    systemd.settle_heap_for_steady_loop()
    publisher.start(wait_s=5.0)
    if journal is not None:
        pipeline.publish_backlog()
    log.info("table %r running: %d reader(s), publishing to %s:%s", config.table_id, len(readers),
             config.mqtt.host, config.mqtt.port)
    monitor = systemd.ServiceMonitor(config.table_id)  # $WATCHDOG_USEC, $RFID_TABLE_LINK_GRACE_S
    systemd.ready(f"table {config.table_id}: running, {len(readers)} reader(s)")

    def step(now: float, wall: float) -> None:
        pipeline.step(now, wall)
        # systemd's watchdog is fed while every reader link is up, or down for less than the grace period.
        monitor.loop(time.monotonic(), {r.name: r.link.is_up for r in readers}, publisher.connected,
                     f"hand {pipeline.controller.hand}")

    def wait(timeout_s: float) -> None:
        # Wake as soon as a reader sends bytes or the broker answers; otherwise at the next step.
        fds = [r.link.transport.fileno() for r in readers if r.link.transport is not None]
        fds.append(pipeline.writer.fileno() if pipeline.writer is not None else None)  # a commit has landed
        sock = publisher.client.socket()
        try:
            select.select([fd for fd in fds if fd is not None] + ([sock] if sock else []),
                          [sock] if sock and publisher.client.want_write() else [], [], timeout_s)
        except (OSError, ValueError):  # a reader unplugged meanwhile: the link notices on its next poll
            pass
        publisher.service(0)

    try:
        run_realtime(step, RUN_PERIOD_S, stop, wait, clock)
    finally:
        systemd.stopping(f"table {config.table_id}: stopping")
        pipeline.close_journal()  # what the writer still holds, on disk (published at the next start)
        publisher.stop()
        for reader in readers:
            reader.close()
        if gpio is not None:
            gpio.close()  # the lights off, the pins released
        if journal is not None:
            close_journal(journal, publisher)
    log.info("stopped")
    return 0
