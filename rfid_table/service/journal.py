"""The journal: every controller input and every domain event, on disk, before anything is published.

Why it exists (event sourcing): the controller is deterministic, so the inputs it was fed are enough to rebuild
the hand in progress after a crash or a power cut; the events it produced are kept until every feed's broker
has acknowledged them, so publishing is at least once, in order, with the controller's sequence numbers.

Layout (one SQLite file, WAL, ``synchronous=FULL`` so a commit survives a power cut):

* ``inputs``      what was fed to the controller, in order, at its table time ``t`` (rfid_table.service.timebase): ``kind`` is ``zone``, ``tick``, ``device``, ``command``,
                  ``sensor`` (a seat sensor's change from the GPIO), or ``journal`` (the daemon's own warning that
                  this file is near its limit, numbered like every event so that replay gives the same seqs);
* ``events``      the domain events, by ``seq``; ``input_id`` is the input that caused each one; ``t`` is table
                  time (what delays are measured on), ``wall`` the room's clock that stamps it on MQTT;
* ``delivery``    per feed (``public``, ``secure``, ``delayed``...), the highest ``seq`` the broker acknowledged;
* ``checkpoints`` a controller state saved at a hand boundary, so that older inputs can be pruned (only up to a
                  checkpoint marked ``"base": true``, see :meth:`Journal.prune`);
* ``meta``        key/value: the journal's ``epoch`` (tells a new journal from a restart), the ``table_id`` it
                  belongs to (another table's journal is refused), ``start_count``...

The file and its ``-wal`` and ``-shm`` companions are mode 0600 whatever the umask: they hold hole cards. A new
journal is built under a temporary name and renamed into place, so a file at the journal's path is always a
whole journal: an empty one there was truncated or replaced, and is refused unless the caller says to start
afresh (``fresh=True``, ``rfid-table run --new-journal``).

Every row carries ``crc``, a CRC-32 of its canonical content (:func:`_crc`), so a flipped byte that SQLite's own
``quick_check`` cannot see (it checks the b-trees, not the data in them) is still found by :meth:`self_check`.

Recovery, for the daemon::

    journal = Journal(path, table_id=table_id); check = journal.open()  # JournalRefused: not this table's
    if not check.ok: ...            # refuse to publish; the problems name table and row
    controller, cp, how = rfid_table.service.checkpoint.restore(journal, GameController(...))
    replay(journal, controller, cp)  # feeds the inputs since the checkpoint; the events are already journaled
    # new events go out live; those after the lowest delivered mark go out as a paced backlog, read with
    # journal.events_after(...), and mark_delivered(feed, seq) follows the broker's contiguous acknowledgements

Threading: one writer (the daemon's loop). Calls are serialised by a lock, so an MQTT callback thread may call
:meth:`mark_delivered`, but two processes must never write the same journal (seqs would collide; the second
one gets an ``IntegrityError``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from controller.domain import DomainEvent
from hal.events import DeviceEvent, SensorEvent, ZoneEvent
from rfid_table.service.equity_worker import equity_event

if TYPE_CHECKING:
    from controller.game import GameController

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # in PRAGMA user_version
# What turns an older file into this version, applied at open: version 2 added the events' wall-clock stamp.
_MIGRATIONS = {1: ("ALTER TABLE events ADD COLUMN wall REAL",)}
INPUT_KINDS = ("zone", "tick", "device", "command", "journal", "sensor", "equity")
DEFAULT_FEEDS = ("public", "secure")
# The near-limit warning clears only once the undelivered events are back below this share of the warning level,
# so a backlog hovering at the line does not raise and clear it again and again.
RECOVER_AT = 0.8
MAX_PROBLEMS = 20  # a badly damaged file would otherwise produce one line per row
_READ_CHUNK = 1000

_SCHEMA = """
CREATE TABLE inputs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, t REAL NOT NULL, body TEXT NOT NULL,
                     crc INTEGER NOT NULL);
CREATE TABLE events (seq INTEGER PRIMARY KEY, type TEXT NOT NULL, t REAL NOT NULL, hand INTEGER,
                     public TEXT NOT NULL, secret TEXT NOT NULL, input_id INTEGER, crc INTEGER NOT NULL,
                     wall REAL);
CREATE TABLE delivery (feed TEXT PRIMARY KEY, seq INTEGER NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, input_id INTEGER NOT NULL, state TEXT NOT NULL,
                          crc INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, crc INTEGER NOT NULL);
"""

# Column order is the order _crc() sees the fields in: the checksum is always the last column.
_COLUMNS = {
    "inputs": ("id", "kind", "t", "body", "crc"),
    "events": ("seq", "type", "t", "hand", "input_id", "public", "secret", "wall", "crc"),
    "checkpoints": ("id", "input_id", "state", "crc"),
    "delivery": ("feed", "seq", "crc"),
    "meta": ("key", "value", "crc"),
}
# A base checkpoint (see Journal.prune); json_extract is built into SQLite since 3.38 (Bookworm has 3.40).
# CASE: a state SQLite's JSON cannot parse (Python writes NaN as NaN) is simply not a base, never an error.
_BASE = "WHERE CASE WHEN json_valid(state) THEN json_extract(state, '$.base') = 1 ELSE 0 END"
_KEY = {"inputs": "id", "events": "seq", "checkpoints": "id", "delivery": "feed", "meta": "key"}


class JournalError(Exception):
    """The journal cannot be used as asked (wrong sequence, no WAL on this file system...)."""


class JournalRefused(JournalError):
    """The file at the journal's path is not this table's journal (another table's, empty, a directory...)."""


class JournalWriteFailed(JournalError):
    """SQLite could not write (the disk is full, an I/O error, another program holding the journal's write lock):
    nothing of the write is in the file. ``remedy`` says what a technician does about it."""

    def __init__(self, message: str, remedy: str = ""):
        super().__init__(message)
        self.remedy = remedy


def _write_failure(exc: sqlite3.Error) -> bool:
    """A failure outside the caller: the disk full (SQLITE_FULL), an I/O error (SQLITE_IOERR_*), or the file locked
    by another program for longer than SQLite's busy timeout (SQLITE_BUSY: an ``sqlite3`` shell left in a write
    transaction). Each passes, and the write can be tried again."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code == sqlite3.SQLITE_FULL or code & 0xFF in (sqlite3.SQLITE_IOERR,
                                                                                 sqlite3.SQLITE_BUSY))


def _write_failed(doing: str, path: Path, exc: sqlite3.Error) -> JournalWriteFailed:
    """The :class:`JournalWriteFailed` for a write failure of SQLite's, with what to do about it."""
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY:
        remedy = (f"another program holds the journal's write lock: end its transaction or stop it "
                  f"(fuser -v {path} names it)")
    else:
        remedy = _free_space_on(path)
    return JournalWriteFailed(f"cannot {doing} the journal {path}: {exc}", remedy)


def _free_space_on(path: Path) -> str:
    return f"free space on {path.parent} (df -h {path.parent})"


class JournalCorrupt(JournalError):
    """The self-check failed: nothing may be written (or published) until someone looks at the file."""

    def __init__(self, problems: list[str]):
        super().__init__("journal is corrupt: " + "; ".join(problems))
        self.problems = problems


# ---- what comes out -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    problems: list[str] = field(default_factory=list)
    rows: int = 0  # rows whose checksum was verified
    seconds: float = 0.0

    def __str__(self) -> str:
        if self.ok:
            return f"journal OK ({self.rows} rows checked in {self.seconds:.3f} s)"
        return "journal CORRUPT: " + "; ".join(self.problems)


@dataclass(frozen=True)
class JournaledInput:
    id: int
    kind: str
    t: float
    body: dict[str, Any]

    def device_event(self) -> DeviceEvent:
        body = self.body
        return DeviceEvent(body["kind"], body["reader"], self.t, tuple(body["detail"].items()))

    def zone_event(self) -> ZoneEvent:
        return ZoneEvent(self.body["kind"], self.body["zone"], self.body["uid"], self.t)


@dataclass(frozen=True)
class JournaledEvent:
    """A domain event read back from the journal; publishes exactly like the :class:`DomainEvent` it was."""

    seq: int
    type: str
    t: float
    hand: int | None
    public: dict[str, Any]
    secret: dict[str, Any]
    input_id: int | None = None
    wall: float | None = None

    def payload(self, secure: bool) -> dict[str, Any]:
        return self.domain_event().payload(secure)

    def domain_event(self) -> DomainEvent:
        return DomainEvent(self.seq, self.type, self.t, self.hand, self.public, self.secret, self.wall)


class Step(NamedTuple):
    """One cycle of the daemon as the journal takes it: what was fed to the controller and what it produced."""

    inputs: Sequence[tuple[str, float, dict[str, Any]]]
    events: Sequence[DomainEvent]
    caused_by: Sequence[int] | None = None  # per event, the index in inputs of the input that caused it
    checkpoint: dict[str, Any] | None = None  # the controller's state after the step, when it ended a hand


class Checkpoint(NamedTuple):
    input_id: int  # the state includes every input up to and including this one
    state: dict[str, Any]


class Pruned(NamedTuple):
    events: int
    inputs: int
    checkpoints: int


# ---- canonical form and checksum ------------------------------------------------------------------------


def _dumps(obj: Any) -> str:
    # Key order is kept (not sorted) so that a payload read back serialises to the same bytes it was published as.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _field(value: Any) -> bytes:
    # bytes: self_check reads with text_factory=bytes so that a flip making invalid UTF-8 is a mismatch, not a crash.
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, float):
        return repr(value).encode()  # exact: SQLite REAL round-trips a Python float bit for bit
    if value is None:
        return b""
    return str(value).encode()


def _crc(*fields: Any) -> int:
    # Columns added by a later schema version come last and are NULL in older rows: an absent trailing field
    # does not count, so the rows written before the migration keep their checksums.
    end = len(fields)
    while end and fields[end - 1] is None:
        end -= 1
    return zlib.crc32(b"\x1f".join(map(_field, fields[:end])))


def zone_input(event: ZoneEvent) -> tuple[str, float, dict[str, Any]]:
    """A zone event as :meth:`Journal.record` takes it."""
    return "zone", event.t, {"kind": event.kind, "zone": event.zone, "uid": event.uid}


def tick_input(now: float) -> tuple[str, float, dict[str, Any]]:
    return "tick", now, {}


def device_input(event: DeviceEvent) -> tuple[str, float, dict[str, Any]]:
    return "device", event.t, {"kind": event.kind, "reader": event.reader, "detail": dict(event.detail)}


def sensor_input(event: SensorEvent) -> tuple[str, float, dict[str, Any]]:
    """A seat sensor's change (``hal.gpio``), as :meth:`Journal.record` takes it."""
    return "sensor", event.t, {"seat": event.seat, "sensor": event.sensor, "active": event.active,
                               "detects": event.detects, "duration_s": event.duration_s}


def sensor_event(t: float, body: dict[str, Any]) -> SensorEvent:
    return SensorEvent(t, body["seat"], body["sensor"], body["active"], body.get("detects"), body.get("duration_s"))


def journal_input(t: float, state: str, rows: int, undelivered: int, limit: int) -> tuple[str, float, dict[str, Any]]:
    """The journal's own state (``near_limit`` or ``ok``), as :meth:`Journal.record` takes it."""
    return "journal", t, {"state": state, "rows": rows, "undelivered": undelivered, "limit": limit}


def journal_event(controller: Any, t: float, body: dict[str, Any]) -> DomainEvent:
    """The ``journal`` event of a ``journal`` input. The controller numbers it like its own events (the daemon
    raises it, not the game), so seqs stay one gapless sequence and replay re-creates it with the same seq."""
    return controller.numbered_event("journal", t, dict(body))


# ---- the journal ----------------------------------------------------------------------------------------


class Journal:
    """The on-disk journal. ``open()`` before use; also a context manager.

    Retention: :meth:`prune` keeps the newest ``retention_events`` events plus every event some feed has not
    yet delivered. **Undelivered events are never pruned.** If the broker stays away so long that the undelivered
    events of the slowest feed reach the limit, the journal keeps growing past it (nothing is lost, the file is
    the buffer) and :attr:`near_limit` stays raised from ``warn_at * retention_events`` on, so the daemon can
    warn loudly (event + log line) and an operator can act before the disk fills.
    """

    def __init__(self, path: str | os.PathLike, retention_events: int = 200_000, warn_at: float = 0.9,
                 feeds: Sequence[str] = DEFAULT_FEEDS, table_id: str | None = None, fresh: bool = False):
        """``table_id``: the table this journal belongs to (stored in a new one; another table's is refused; None:
        not checked). ``fresh``: an empty file at ``path`` is replaced by a new journal instead of refused."""
        if retention_events < 1:
            raise ValueError("retention_events must be at least 1 (the newest event is what seq continues from)")
        self.path = Path(path)
        self.retention_events = retention_events
        self.warn_at = warn_at
        self.feeds = tuple(feeds)
        self.table_id = table_id
        self.fresh = fresh
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._corrupt: list[str] = []
        self.last_check: CheckResult | None = None
        # Kept in memory so a step needs no read before its write; loaded at open, advanced after each commit.
        self._last_input = 0
        self._last_seq = 0
        self._first_seq = 0  # first retained; 0 when there are no events
        self._last_checkpoint = 0
        self._marks: dict[str, int] = {}  # feed → delivered seq, as the delivery table has it
        self._hand_ended: dict[int, float] = {}  # hand → when it ended (table time), once known
        self._reads: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()

    # ---- opening ----------------------------------------------------------------------------------------

    def open(self) -> CheckResult:
        """Open or create the file, then run :meth:`self_check`. Never raises on a damaged file: the result says.

        On failure the journal stays open for reading (forensics) but every write raises :class:`JournalCorrupt`.
        Raises :class:`JournalRefused` when the path is not this table's journal (a directory, an empty file,
        another table's journal) and :class:`JournalWriteFailed` when the disk cannot take the start-up's write.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._create_if_missing()
        self._restrict_mode()
        # isolation_level=None: transactions are ours (BEGIN IMMEDIATE ... COMMIT), not the module's guesses.
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.OperationalError as exc:  # "unable to open database file": permissions, a vanished directory
            raise JournalRefused(f"cannot open the journal {self.path}: {exc}") from exc
        try:
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise JournalError(f"{self.path}: SQLite cannot use WAL here (journal_mode is {mode!r})")
            self._db.execute("PRAGMA synchronous=FULL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and not self._db.execute("SELECT 1 FROM sqlite_schema").fetchone():
                self.close()
                raise JournalRefused(f"{self.path} is an SQLite file without a journal in it; move it away, or "
                                     "start a new journal there with --new-journal")
            self._migrate(version)
        except sqlite3.DatabaseError as exc:  # e.g. "file is not a database": the header itself is damaged
            if _write_failure(exc):
                self.close()
                raise _write_failed("open", self.path, exc) from exc
            return self._fail(CheckResult(False, [f"journal {self.path} cannot be opened: {exc}"]))
        self._restrict_mode()  # the -wal and -shm files SQLite has just made
        result = self.self_check()
        if result.ok:
            self._check_table()
            self._load_counters()
            self.set_meta("start_count", str(int(self.meta("start_count") or 0) + 1))
            log.info("%s: %s", self.path, result)
        return result

    def _create_if_missing(self) -> None:
        """A new journal when there is none; refuse what is at the path when it cannot be one."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self._create_file()
            return
        if stat.S_ISDIR(info.st_mode):
            raise JournalRefused(f"{self.path} is a directory, not a journal file (the journal's path names the "
                                 "file itself, e.g. /var/lib/rfid-table/main-1.journal)")
        if not stat.S_ISREG(info.st_mode):
            raise JournalRefused(f"{self.path} is not a regular file")
        if info.st_size == 0:  # SQLite writes the header before anything else in WAL mode: this is no journal
            if not self.fresh:
                raise JournalRefused(
                    f"{self.path} is empty (0 bytes): it should hold this table's journal, and the hand in progress "
                    "with it (a new journal is never left empty: the file was truncated or replaced). Find out what "
                    "happened to it; to start a new journal there, run once with --new-journal")
            log.warning("%s is empty: starting a new journal there, as asked (--new-journal)", self.path)
            for stale in (Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
                stale.unlink(missing_ok=True)
            self._create_file()

    def _create_file(self) -> None:
        """Build the new journal under a temporary name, then rename it into place: whoever finds a file at the
        path finds a whole journal (a crash half-way leaves only the temporary file, replaced next time)."""
        building = self.path.with_name(self.path.name + ".new")
        for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
            leftover.unlink(missing_ok=True)
        try:
            fd = os.open(building, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            os.fchmod(fd, 0o600)  # the umask only ever removes bits; this sets exactly owner read/write
            os.close(fd)
            db = sqlite3.connect(building, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                self._db = db
                self._create()
            finally:
                self._db = None
                db.close()  # folds the WAL into the file and removes it
            fd = os.open(building, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(building, self.path)
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)  # the rename itself survives a power cut
            finally:
                os.close(fd)
        except sqlite3.Error as exc:
            building.unlink(missing_ok=True)
            if _write_failure(exc):
                raise _write_failed("create", self.path, exc) from exc
            raise
        except OSError as exc:
            building.unlink(missing_ok=True)
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise JournalWriteFailed(f"cannot create the journal {self.path}: {exc.strerror}",
                                         _free_space_on(self.path)) from exc
            raise JournalRefused(f"cannot create the journal {self.path}: {exc.strerror}") from exc

    def _restrict_mode(self) -> None:
        """Owner read/write only, on the journal and its WAL and shared-memory files (they hold hole cards)."""
        for name in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            try:
                if stat.S_IMODE(os.stat(name).st_mode) != 0o600:
                    os.chmod(name, 0o600)
            except FileNotFoundError:
                pass
            except PermissionError:
                log.warning("%s: cannot make it private (mode 0600): not its owner", name)

    def _check_table(self) -> None:
        """Refuse another table's journal; a journal from before table ids were stored is this table's."""
        if self.table_id is None:
            return
        owner = self.meta("table_id")
        if owner is None:
            self.set_meta("table_id", self.table_id)
        elif owner != self.table_id:
            self.close()
            raise JournalRefused(f"{self.path} is the journal of table {owner!r}, not of table {self.table_id!r}: "
                                 "refusing to play another table's hands on; check [table] id and [journal] path")

    def _create(self) -> None:
        with self._transaction():
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            meta = [("epoch", secrets.token_hex(8)), ("created_at", repr(time.time())), ("start_count", "0")]
            if self.table_id is not None:
                meta.append(("table_id", self.table_id))
            for key, value in meta:
                self._db.execute("INSERT INTO meta VALUES (?, ?, ?)", (key, value, _crc(key, value)))

    def _migrate(self, version: int) -> None:
        """Bring a file written by an older version up to this one (its rows and checksums stay as they are)."""
        while version in _MIGRATIONS:
            with self._transaction():
                for statement in _MIGRATIONS[version]:
                    self._db.execute(statement)
                version += 1
                self._db.execute(f"PRAGMA user_version={version}")
            log.info("%s: journal upgraded to schema version %d", self.path, version)

    def _load_counters(self) -> None:
        db = self._db
        first, last = db.execute("SELECT min(seq), max(seq) FROM events").fetchone()
        self._first_seq, self._last_seq = first or 0, last or 0
        cp = db.execute("SELECT max(id), max(input_id) FROM checkpoints").fetchone()
        self._last_checkpoint = cp[0] or 0
        # Inputs up to the checkpoint may all have been pruned: the numbering still continues after it.
        last_input = db.execute("SELECT max(id) FROM inputs").fetchone()[0] or 0
        last_caused = db.execute("SELECT max(input_id) FROM events").fetchone()[0] or 0
        self._last_input = max(last_input, cp[1] or 0, last_caused)
        for feed in self.feeds:  # a feed starts at 0: it is owed every retained event
            db.execute("INSERT OR IGNORE INTO delivery VALUES (?, 0, ?)", (feed, _crc(feed, 0)))
        # Kept in memory from here on: the loop reads the marks every cycle, and must not wait for the writer.
        self._marks = dict(db.execute("SELECT feed, seq FROM delivery"))
        # A second connection for what the loop reads (the delayed feed, the backlog): in WAL mode it reads the
        # last commit while the writer's next one is on its way to the disk, so a read never waits for an fsync.
        self._reads = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._reads.execute("PRAGMA query_only=1")

    def close(self) -> None:
        with self._read_lock:
            if self._reads is not None:
                self._reads.close()
                self._reads = None
        with self._lock:
            if self._db is not None:
                self._db.close()  # the last connection to close checkpoints the WAL into the file and removes it
                self._db = None

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        """A query of committed rows, on the reading connection (the writing one before the journal is open)."""
        if self._reads is None:
            with self._lock:
                return self._db.execute(sql, params).fetchall()
        with self._read_lock:
            return self._reads.execute(sql, params).fetchall()

    def __enter__(self) -> "Journal":
        result = self.open()
        if not result.ok:
            self.close()
            raise JournalCorrupt(result.problems)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front: a step never fails half-way for want of it.
        with self._lock, self._disk_errors():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLite has rolled back by itself after some errors (a full disk)
                    self._db.execute("ROLLBACK")
                raise

    @contextmanager
    def _disk_errors(self) -> Iterator[None]:
        """A full disk or an I/O error as :class:`JournalWriteFailed`, naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            if _write_failure(exc):
                raise _write_failed("write", self.path, exc) from exc
            raise

    def _writable(self) -> None:
        if self._db is None:
            raise JournalError("journal is not open")
        if self._corrupt:
            raise JournalCorrupt(self._corrupt)

    # ---- writing ----------------------------------------------------------------------------------------

    def record(self, inputs: Sequence[tuple[str, float, dict[str, Any]]], events: Sequence[DomainEvent], *,
               caused_by: Sequence[int] | None = None, checkpoint: dict[str, Any] | None = None) -> None:
        """Journal one step — its inputs and the events they produced — in one durable transaction.

        After a crash either the whole step is in the journal or none of it. ``caused_by[k]`` is the index in
        ``inputs`` of the input that caused ``events[k]``; without it every event points at the step's last input.
        ``checkpoint``, if given, is the controller state after this step, saved in the same transaction.

        Event seqs must continue the journal's (``last_seq() + 1``, ``+ 2``...): a controller that was not
        restored from the journal would break the numbering, and is refused here rather than published.
        Ticks that produced no event need not be journaled (they only move the clock, which the next input moves).
        """
        self.record_steps([Step(inputs, events, caused_by, checkpoint)])

    def record_steps(self, steps: Sequence[Step]) -> None:
        """Journal several steps, in order, in one durable transaction: one commit (one fsync) for all of them.

        The daemon groups the steps that arrived while the previous commit was on its way to the disk, so a slow
        disk costs a little latency, not throughput. After a crash either every step of the group is in the
        journal or none of it: none of them was published, so nothing published is lost.
        """
        self._writable()
        with self._lock:
            last_input, last_seq, last_checkpoint = self._last_input, self._last_seq, self._last_checkpoint
            input_rows, event_rows, cp_rows = [], [], []
            for inputs, events, caused_by, checkpoint in steps:
                first_id = last_input + 1
                for i, (kind, t, body) in enumerate(inputs):
                    if kind not in INPUT_KINDS:
                        raise ValueError(f"input kind {kind!r} is not one of {INPUT_KINDS}")
                    id_, t, text = first_id + i, float(t), _dumps(body)
                    input_rows.append((id_, kind, t, text, _crc(id_, kind, t, text)))
                last_id = first_id + len(inputs) - 1 if inputs else last_input
                if caused_by is not None and (len(caused_by) != len(events)
                                              or any(not 0 <= c < len(inputs) for c in caused_by)):
                    raise ValueError("caused_by needs one index into inputs per event")
                for k, event in enumerate(events):
                    if event.seq != last_seq + 1:
                        raise JournalError(f"event seq {event.seq} does not follow the journal's {last_seq}")
                    input_id = first_id + caused_by[k] if caused_by is not None else (last_id or None)
                    t, public, secret = float(event.t), _dumps(event.public), _dumps(event.secret)
                    wall = None if event.wall is None else float(event.wall)
                    crc = _crc(event.seq, event.type, t, event.hand, input_id, public, secret, wall)
                    event_rows.append((event.seq, event.type, t, event.hand, input_id, public, secret, wall, crc))
                    last_seq = event.seq
                if checkpoint is not None:
                    last_checkpoint, state = last_checkpoint + 1, _dumps(checkpoint)
                    cp_rows.append((last_checkpoint, last_id, state, _crc(last_checkpoint, last_id, state)))
                last_input = last_id

            with self._transaction():
                if input_rows:
                    self._db.executemany("INSERT INTO inputs VALUES (?, ?, ?, ?, ?)", input_rows)
                if event_rows:
                    self._db.executemany("INSERT INTO events (seq, type, t, hand, input_id, public, secret, wall, "
                                         "crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", event_rows)
                if cp_rows:
                    self._db.executemany("INSERT INTO checkpoints VALUES (?, ?, ?, ?)", cp_rows)
            # Only now, once committed: a failed commit leaves the counters where the file is.
            self._last_input, self._last_checkpoint = last_input, last_checkpoint
            for row in event_rows:
                if row[1] == "hand_ended" and row[3] is not None:
                    self._hand_ended[row[3]] = row[2]
            if event_rows:
                self._last_seq = last_seq
                self._first_seq = self._first_seq or event_rows[0][0]

    def save_checkpoint(self, input_id: int, state: dict[str, Any]) -> None:
        """Save the controller state as of ``input_id`` (included). Call it at a hand boundary."""
        self._writable()
        with self._lock:
            latest = self.latest_checkpoint()
            if not (latest.input_id if latest else 0) <= input_id <= self._last_input:
                raise JournalError(f"checkpoint at input {input_id} is outside "
                                   f"[{latest.input_id if latest else 0}, {self._last_input}]")
            cp_id, text = self._last_checkpoint + 1, _dumps(state)
            with self._transaction():
                self._db.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?)",
                                 (cp_id, input_id, text, _crc(cp_id, input_id, text)))
            self._last_checkpoint = cp_id

    def mark_delivered(self, feed: str, seq: int) -> int:
        """The broker acknowledged every event of ``feed`` up to ``seq``. Never goes backwards; returns the mark.

        Marks are committed without an fsync of their own (``synchronous=NORMAL`` for that one statement): the
        next :meth:`record` makes them durable. A mark lost to a power cut only means those events are published
        again — at least once allows it — and the broker's acks cost no disk flush each.
        """
        self._writable()
        with self._lock:
            if seq > self._last_seq:
                raise JournalError(f"feed {feed!r}: cannot acknowledge seq {seq}, "
                                   f"the last journaled is {self._last_seq}")
            current = self.delivered(feed)
            if seq <= current:
                return current
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                with self._disk_errors():
                    self._db.execute("INSERT INTO delivery VALUES (?, ?, ?) ON CONFLICT(feed) DO UPDATE "
                                     "SET seq = excluded.seq, crc = excluded.crc", (feed, seq, _crc(feed, seq)))
            finally:
                self._db.execute("PRAGMA synchronous=FULL")
            self._marks[feed] = seq
            return seq

    def set_meta(self, key: str, value: str) -> None:
        self._writable()
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)", (key, value, _crc(key, value)))

    # ---- reading ----------------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def epoch(self) -> str | None:
        """Random, set when the file is created: seqs restart at 1 only with a new epoch."""
        return self.meta("epoch")

    def last_seq(self) -> int:
        return self._last_seq

    def last_input_id(self) -> int:
        return self._last_input

    def inputs_since(self, checkpoint: Checkpoint | int | None = None) -> Iterator[JournaledInput]:
        """The inputs after ``checkpoint`` (a :class:`Checkpoint`, an input id, or None for all), in order.

        Read in chunks, so replaying a long journal does not hold it all in memory twice.
        """
        after = checkpoint.input_id if isinstance(checkpoint, Checkpoint) else (checkpoint or 0)
        while True:
            with self._lock:
                rows = self._db.execute("SELECT id, kind, t, body FROM inputs WHERE id > ? ORDER BY id LIMIT ?",
                                        (after, _READ_CHUNK)).fetchall()
            for id_, kind, t, body in rows:
                yield JournaledInput(id_, kind, t, json.loads(body))
            if len(rows) < _READ_CHUNK:
                return
            after = rows[-1][0]

    def latest_checkpoint(self, base: bool = False) -> Checkpoint | None:
        """The newest checkpoint; ``base``: the newest one whose state says ``"base": true`` (see :meth:`prune`)."""
        with self._lock:
            row = self._db.execute(f"SELECT input_id, state FROM checkpoints {_BASE if base else ''} "
                                   "ORDER BY id DESC LIMIT 1").fetchone()
        return Checkpoint(row[0], json.loads(row[1])) if row else None

    def first_input_id(self) -> int | None:
        """The oldest input retained (1 while nothing was pruned); None when none is."""
        with self._lock:
            return self._db.execute("SELECT min(id) FROM inputs").fetchone()[0]

    def events_after(self, seq: int, limit: int = 1000) -> list[JournaledEvent]:
        rows = self._read("SELECT seq, type, t, hand, public, secret, input_id, wall FROM events "
                          "WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))
        return [JournaledEvent(s, ty, t, h, json.loads(p), json.loads(x), i, w) for s, ty, t, h, p, x, i, w in rows]

    def event_times_after(self, seq: int, limit: int = 1000) -> list[tuple[int, float, int | None]]:
        """(seq, t, hand) of the events after ``seq``, without their bodies: what the delayed feed decides on."""
        return self._read("SELECT seq, t, hand FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))

    def last_event(self, type_: str) -> JournaledEvent | None:
        """The newest retained event of a type (one scan, for the start-up: ``type`` has no index)."""
        with self._lock:
            row = self._db.execute("SELECT seq, type, t, hand, public, secret, input_id, wall FROM events "
                                   "WHERE type = ? ORDER BY seq DESC LIMIT 1", (type_,)).fetchone()
        if row is None:
            return None
        s, ty, t, h, p, x, i, w = row
        return JournaledEvent(s, ty, t, h, json.loads(p), json.loads(x), i, w)

    def latest_t(self) -> float | None:
        """The newest table time in the journal (its last input or event), or None for a new journal."""
        with self._lock:
            times = [row[0] for row in (
                self._db.execute("SELECT t FROM inputs ORDER BY id DESC LIMIT 1").fetchone(),
                self._db.execute("SELECT t FROM events ORDER BY seq DESC LIMIT 1").fetchone()) if row]
        return max(times, default=None)

    def hand_ended_at(self, hand: int) -> float | None:
        """When hand ``hand`` ended (its ``hand_ended`` event), or None while it runs."""
        if hand in self._hand_ended:  # ``type`` has no index: each hand is looked up once
            return self._hand_ended[hand]
        rows = self._read("SELECT t FROM events WHERE type = 'hand_ended' AND hand = ? LIMIT 1", (hand,))
        if rows:
            self._hand_ended[hand] = rows[0][0]
        return rows[0][0] if rows else None

    def delivered(self, feed: str) -> int:
        return self._marks.get(feed, 0)

    def delivery_marks(self) -> dict[str, int]:
        """Every feed's mark: the highest seq up to which the broker acknowledged every event."""
        return dict(self._marks)

    def undelivered_count(self, feed: str) -> int:
        if not self._last_seq:
            return 0
        # Seqs are contiguous, so this is arithmetic, not a count over the table.
        return self._last_seq - max(self.delivered(feed), self._first_seq - 1)

    # ---- retention --------------------------------------------------------------------------------------

    def usage(self) -> tuple[int, int]:
        """(event rows in the journal, ``retention_events``). Rows may exceed the limit only while undelivered."""
        rows = self._last_seq - self._first_seq + 1 if self._last_seq else 0
        return rows, self.retention_events

    def slowest_undelivered(self) -> int:
        """The undelivered events of the feed furthest behind: what prune cannot remove."""
        return max((self.undelivered_count(feed) for feed in self._all_feeds()), default=0)

    @property
    def near_limit(self) -> bool:
        """The slowest feed's undelivered events exceed ``warn_at * retention_events``.

        Measured on what prune cannot remove: once the journal has run for a while it always holds exactly
        ``retention_events`` rows (that is what retention means), so the total alone would warn forever.
        """
        return self.slowest_undelivered() > self.warn_at * self.retention_events

    @property
    def back_from_limit(self) -> bool:
        """After :attr:`near_limit`: the undelivered events are back below ``RECOVER_AT`` of the warning level."""
        return self.slowest_undelivered() <= RECOVER_AT * self.warn_at * self.retention_events

    def _all_feeds(self) -> list[str]:
        return list(self._marks)

    def prune(self) -> Pruned:
        """Delete what is no longer needed, in one transaction; returns how many rows of each kind went.

        * events every feed has delivered *and* older than the newest ``retention_events``;
        * inputs up to the newest *base* checkpoint — one whose state says ``"base": true``: any version of the
          program can restart from it (``rfid_table.service.checkpoint``) — and the checkpoints older than it, or between
          it and the newest one. Without a base checkpoint no input goes: the inputs are what a program that
          cannot load a checkpoint rebuilds the table from.
        """
        self._writable()
        with self._lock:
            delivered = [self.delivered(feed) for feed in self._all_feeds()]
            cut = min(min(delivered, default=0), self._last_seq - self.retention_events)
            latest = self._db.execute("SELECT id FROM checkpoints ORDER BY id DESC LIMIT 1").fetchone()
            base = self._db.execute(f"SELECT id, input_id FROM checkpoints {_BASE} ORDER BY id DESC LIMIT 1").fetchone()
            with self._transaction():
                events = self._db.execute("DELETE FROM events WHERE seq <= ?", (cut,)).rowcount if cut > 0 else 0
                inputs = checkpoints = 0
                if base:
                    inputs = self._db.execute("DELETE FROM inputs WHERE id <= ?", (base[1],)).rowcount
                    checkpoints = self._db.execute("DELETE FROM checkpoints WHERE id < ? AND id != ?",
                                                   (latest[0], base[0])).rowcount
            if events:
                self._first_seq = cut + 1
        return Pruned(events, inputs, checkpoints)

    # ---- self-check -------------------------------------------------------------------------------------

    def self_check(self) -> CheckResult:
        """Verify the file: ``PRAGMA quick_check``, every row's checksum, contiguous seqs and input ids, delivery
        marks not beyond the last seq. One pass per table; each problem names the table and the row.

        A failed check is logged as an error and blocks every later write (:class:`JournalCorrupt`): the daemon
        must not publish from it.
        """
        if self._db is None:
            raise JournalError("journal is not open")
        started = time.perf_counter()
        problems: list[str] = []
        rows = 0
        with self._lock:
            db = self._db
            db.text_factory = bytes  # a flipped byte may leave invalid UTF-8: count it as a mismatch, not a crash
            try:
                # Each phase on its own: when quick_check cannot even run, the per-table scans still say where.
                problems += self._quick_check()
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version != SCHEMA_VERSION:
                    problems.append(f"schema version {version}, this program reads version {SCHEMA_VERSION}")
                else:
                    bounds: dict[str, tuple[int, int, int]] = {}
                    for table in _COLUMNS:
                        checked, found, bounds[table] = self._verify_table(table)
                        rows += checked
                        problems += found
                    problems += self._check_links(bounds)
            except sqlite3.DatabaseError as exc:
                problems.append(f"journal unreadable: {exc}")
            finally:
                db.text_factory = str
        if len(problems) > MAX_PROBLEMS:
            problems = problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more problems"]
        result = CheckResult(not problems, problems, rows, time.perf_counter() - started)
        return self._fail(result) if problems else self._pass(result)

    def _pass(self, result: CheckResult) -> CheckResult:
        self._corrupt = []
        self.last_check = result
        return result

    def _fail(self, result: CheckResult) -> CheckResult:
        self._corrupt = result.problems
        self.last_check = result
        log.error("journal %s failed its self-check, refusing to publish from it: %s",
                  self.path, "; ".join(result.problems))
        return result

    def _quick_check(self) -> list[str]:
        try:
            rows = [row[0] for row in self._db.execute("PRAGMA quick_check(50)")]
        except sqlite3.DatabaseError as exc:
            return [f"quick_check could not run: {exc}"]
        if rows == [b"ok"]:
            return []
        # quick_check names b-trees by page ("Tree 4 page 9", "On tree page 3"): say which table a root page is.
        roots = {str(root): name.decode() for name, root in
                 self._db.execute("SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0")}

        def name_tree(match: re.Match) -> str:
            table = roots.get(match.group(1))
            return f"{match.group(0)} (table {table})" if table else match.group(0)

        lines = (line for row in rows for line in row.decode(errors="replace").splitlines())
        return ["quick_check: " + re.sub(r"(?:Tree|tree page) (\d+)", name_tree, line)
                for line in lines if not line.startswith("*** in database")]

    def _verify_table(self, table: str) -> tuple[int, list[str], tuple[int, int, int]]:
        """Checksums, and contiguous keys for ``inputs`` and ``events``.

        Returns (rows checked, problems, (first key, last key, row count)).
        """
        columns = _COLUMNS[table]
        key = _KEY[table]
        contiguous = table in ("inputs", "events")
        problems: list[str] = []
        first = previous = None
        count = 0
        try:
            for row in self._db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {key}"):
                count += 1
                row_key = row[0].decode(errors="replace") if isinstance(row[0], bytes) else row[0]
                if _crc(*row[:-1]) != row[-1]:
                    problems.append(f"{table} row {row_key}: checksum mismatch")
                if contiguous:
                    if previous is not None and row_key != previous + 1:
                        problems.append(f"{table}: {key} jumps from {previous} to {row_key} (rows missing)")
                    first = row_key if first is None else first
                previous = row_key
        except sqlite3.DatabaseError as exc:
            where = f"after row {previous}" if previous is not None else "at its first row"
            problems.append(f"{table}: unreadable {where}: {exc}")
        return count, problems, (first or 0, previous if contiguous and previous else 0, count)

    def _check_links(self, bounds: dict[str, tuple[int, int, int]]) -> list[str]:
        problems = []
        last_seq = bounds["events"][1]
        for feed, seq in self._db.execute("SELECT feed, seq FROM delivery"):
            if isinstance(seq, int) and seq > last_seq:
                problems.append(f"delivery row {feed.decode(errors='replace')}: "
                                f"acknowledged seq {seq} beyond the last journaled {last_seq}")
        # Replay needs every input after the latest checkpoint (or every input at all, without one).
        cp = self._db.execute("SELECT id, input_id FROM checkpoints ORDER BY id DESC LIMIT 1").fetchone()
        first_input, last_input, n_inputs = bounds["inputs"]
        base = cp[1] if cp else 0
        if n_inputs and first_input > base + 1:
            where = f"checkpoint {cp[0]} covers up to input {base}" if cp else "there is no checkpoint"
            problems.append(f"inputs: first retained is {first_input} but {where} (inputs missing)")
        if cp and isinstance(cp[1], int) and cp[1] > max(last_input, base):
            problems.append(f"checkpoints row {cp[0]}: input {cp[1]} beyond the last input {last_input}")
        return problems


# ---- replay ---------------------------------------------------------------------------------------------


@dataclass
class Replayed:
    inputs: int
    events: list[DomainEvent]
    mismatches: list[str]  # empty when the replay re-created exactly the journaled events


def replay(journal: Journal, controller: GameController, checkpoint: Checkpoint | int | None = None) -> Replayed:
    """Feed the journaled inputs since ``checkpoint`` to ``controller`` (already restored to that checkpoint).

    The events this re-creates are already journaled (and published or queued), so they are compared with the
    journal rather than published again: a mismatch means the controller is not the one that wrote the
    journal (an upgrade changed the rules mid-hand) and deserves a log line.
    """
    produced: list[DomainEvent] = []
    n = 0
    for item in journal.inputs_since(checkpoint):
        n += 1
        if item.kind == "zone":
            produced += controller.handle(item.zone_event())
        elif item.kind == "tick":
            produced += controller.tick(item.t)
        elif item.kind == "device":
            produced += controller.handle_device(item.device_event())
        elif item.kind == "command":
            produced += controller.handle_command(item.body, item.t)[0]
        elif item.kind == "journal":
            produced.append(journal_event(controller, item.t, item.body))
        elif item.kind == "sensor":
            produced += controller.handle_sensor(sensor_event(item.t, item.body))
        elif item.kind == "equity":
            produced.append(equity_event(controller, item.t, item.body))
    mismatches = []
    if produced:
        stored = {e.seq: e for e in journal.events_after(produced[0].seq - 1, limit=len(produced))}
        for event in produced:
            kept = stored.get(event.seq)
            if kept is None:
                continue  # pruned after delivery; nothing to compare with
            again = (event.type, float(event.t), event.hand, json.loads(_dumps(event.public)),
                     json.loads(_dumps(event.secret)))
            if again != (kept.type, kept.t, kept.hand, kept.public, kept.secret):
                mismatches.append(f"seq {event.seq}: replay gave {event.type} {event.public}, "
                                  f"journal has {kept.type} {kept.public}")
    if controller.seq != journal.last_seq():
        mismatches.append(f"replay ends at seq {controller.seq}, the journal at {journal.last_seq()}")
    return Replayed(n, produced, mismatches)
