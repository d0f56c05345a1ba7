"""The journal: every controller input and every domain event, on disk, before anything is published.

Why it exists (event sourcing): the controller is deterministic, so the inputs it was fed are enough to rebuild
the hand in progress after a crash or a power cut; the events it produced are kept until every feed's broker
has acknowledged them, so publishing is at least once, in order, with the controller's sequence numbers.

Layout (one SQLite file, WAL, ``synchronous=FULL`` so a commit survives a power cut):

* ``inputs``      what was fed to the controller, in order, at its table time ``t`` (rfid_table.service.timebase):
                  ``kind`` is ``zone``, ``tick``, ``device``, ``command``, ``sensor`` (a seat sensor's change from
                  the GPIO), ``equity`` (the equity worker's result) or ``journal`` (the daemon's own warning that
                  this file is near its limit, numbered like every event so that replay gives the same seqs); one
                  record class per kind in :mod:`rfid_table.service.inputs`;
* ``events``      the domain events, by ``seq``; ``input_id`` is the input that caused each one; ``t`` is table
                  time (what delays are measured on), ``wall`` the room's clock that stamps it on MQTT;
* ``delivery``    per feed (``public``, ``secure``, ``delayed``...), the highest ``seq`` the broker acknowledged;
* ``checkpoints`` a controller state saved at a hand boundary, so that older inputs can be pruned (only up to a
                  checkpoint marked ``"base": true``, see :meth:`Journal.prune`);
* ``meta``        key/value: the journal's ``epoch`` (tells a new journal from a restart), the ``table_id`` it
                  belongs to (another table's journal is refused), ``start_count``...

The file and its ``-wal`` and ``-shm`` companions are mode 0600 whatever the umask: they hold hole cards; a file at
the journal's path is always a whole journal (:mod:`rfid_table.service.journal_file`).

Every row carries ``crc``, a CRC-32 of its canonical content, so a flipped byte that SQLite's own ``quick_check``
cannot see (it checks the b-trees, not the data in them) is still found by :meth:`self_check`.

This module is the store. Beside it: the rows' canonical form and checksum (:mod:`rfid_table.service.journal_codec`),
the file's schema and its making (:mod:`rfid_table.service.journal_file`), the self-check's scans
(:mod:`rfid_table.service.journal_check`), the inputs a row holds (:mod:`rfid_table.service.inputs`) and the replay
(:mod:`rfid_table.service.replay`).

Recovery, for the daemon::

    journal = Journal(path, table_id=table_id); check = journal.open()  # JournalRefused: not this table's
    if not check.ok: ...            # refuse to publish; the problems name table and row
    controller, cp, how = rfid_table.service.checkpoint.restore(journal, GameController(...))
    rfid_table.service.replay.replay(journal, controller, cp)  # the inputs since; their events are journaled
    # new events go out live; those after the lowest delivered mark go out as a paced backlog, read with
    # journal.events_after(...), and mark_delivered(feed, seq) follows the broker's contiguous acknowledgements

Threading: one writer (the daemon's loop). Calls are serialised by a lock, so an MQTT callback thread may call
:meth:`mark_delivered`, but two processes must never write the same journal (seqs would collide; the second
one gets an ``IntegrityError``).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from controller.domain import DomainEvent
from rfid_table.service.inputs import INPUT_KINDS
from rfid_table.service.journal_check import check_rows, quick_check
from rfid_table.service.journal_codec import (EVENT_FIELDS, JournaledEvent, JournaledInput, crc, dumps, event_row,
                                              input_row, journaled_event)
from rfid_table.service.journal_file import (MIGRATIONS, SCHEMA_VERSION, JournalCorrupt, JournalError,
                                             JournalRefused, create_if_missing, restrict_mode, write_failed,
                                             write_failure)

log = logging.getLogger(__name__)

DEFAULT_FEEDS = ("public", "secure")
# The near-limit warning clears only once the undelivered events are back below this share of the warning level,
# so a backlog hovering at the line does not raise and clear it again and again.
RECOVER_AT = 0.8
MAX_PROBLEMS = 20  # a badly damaged file would otherwise produce one line per row
_READ_CHUNK = 1000
# A base checkpoint (see Journal.prune); json_extract is built into SQLite since 3.38 (Bookworm has 3.40).
# CASE: a state SQLite's JSON cannot parse (Python writes NaN as NaN) is simply not a base, never an error.
_BASE = "WHERE CASE WHEN json_valid(state) THEN json_extract(state, '$.base') = 1 ELSE 0 END"


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

    @property
    def _open_db(self) -> sqlite3.Connection:
        """The database, between open and close."""
        if self._db is None:
            raise JournalError("journal is not open")
        return self._db

    def open(self) -> CheckResult:
        """Open or create the file, then run :meth:`self_check`. Never raises on a damaged file: the result says.

        On failure the journal stays open for reading (forensics) but every write raises :class:`JournalCorrupt`.
        Raises :class:`JournalRefused` when the path is not this table's journal (a directory, an empty file,
        another table's journal) and :class:`JournalWriteFailed` when the disk cannot take the start-up's write.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        create_if_missing(self.path, self.fresh, self.table_id)
        restrict_mode(self.path)
        # isolation_level=None: transactions are ours (BEGIN IMMEDIATE ... COMMIT), not the module's guesses.
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.OperationalError as exc:  # "unable to open database file": permissions, a vanished directory
            raise JournalRefused(f"cannot open the journal {self.path}: {exc}") from exc
        try:
            mode = self._open_db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise JournalError(f"{self.path}: SQLite cannot use WAL here (journal_mode is {mode!r})")
            self._open_db.execute("PRAGMA synchronous=FULL")
            version = self._open_db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and not self._open_db.execute("SELECT 1 FROM sqlite_schema").fetchone():
                self.close()
                raise JournalRefused(f"{self.path} is an SQLite file without a journal in it; move it away, or "
                                     "start a new journal there with --new-journal")
            self._migrate(version)
        except sqlite3.DatabaseError as exc:  # e.g. "file is not a database": the header itself is damaged
            if write_failure(exc):
                self.close()
                raise write_failed("open", self.path, exc) from exc
            return self._fail(CheckResult(False, [f"journal {self.path} cannot be opened: {exc}"]))
        restrict_mode(self.path)  # the -wal and -shm files SQLite has just made
        result = self.self_check()
        if result.ok:
            self._check_table()
            self._load_counters()
            self.set_meta("start_count", str(int(self.meta("start_count") or 0) + 1))
            log.info("%s: %s", self.path, result)
        return result

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

    def _migrate(self, version: int) -> None:
        """Bring a file written by an older version up to this one (its rows and checksums stay as they are)."""
        while version in MIGRATIONS:
            with self._transaction():
                for statement in MIGRATIONS[version]:
                    self._open_db.execute(statement)
                version += 1
                self._open_db.execute(f"PRAGMA user_version={version}")
            log.info("%s: journal upgraded to schema version %d", self.path, version)

    def _load_counters(self) -> None:
        db = self._open_db
        first, last = db.execute("SELECT min(seq), max(seq) FROM events").fetchone()
        self._first_seq, self._last_seq = first or 0, last or 0
        cp = db.execute("SELECT max(id), max(input_id) FROM checkpoints").fetchone()
        self._last_checkpoint = cp[0] or 0
        # Inputs up to the checkpoint may all have been pruned: the numbering still continues after it.
        last_input = db.execute("SELECT max(id) FROM inputs").fetchone()[0] or 0
        last_caused = db.execute("SELECT max(input_id) FROM events").fetchone()[0] or 0
        self._last_input = max(last_input, cp[1] or 0, last_caused)
        for feed in self.feeds:  # a feed starts at 0: it is owed every retained event
            db.execute("INSERT OR IGNORE INTO delivery VALUES (?, 0, ?)", (feed, crc(feed, 0)))
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
                return self._open_db.execute(sql, params).fetchall()
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
            self._open_db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._open_db.execute("COMMIT")
            except BaseException:
                if self._open_db.in_transaction:  # SQLite has rolled back by itself after some errors (a full disk)
                    self._open_db.execute("ROLLBACK")
                raise

    @contextmanager
    def _disk_errors(self) -> Iterator[None]:
        """A full disk or an I/O error as :class:`JournalWriteFailed`, naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            if write_failure(exc):
                raise write_failed("write", self.path, exc) from exc
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
                    input_rows.append(input_row(first_id + i, kind, t, body))
                last_id = first_id + len(inputs) - 1 if inputs else last_input
                if caused_by is not None and (len(caused_by) != len(events)
                                              or any(not 0 <= c < len(inputs) for c in caused_by)):
                    raise ValueError("caused_by needs one index into inputs per event")
                for k, event in enumerate(events):
                    if event.seq != last_seq + 1:
                        raise JournalError(f"event seq {event.seq} does not follow the journal's {last_seq}")
                    input_id = first_id + caused_by[k] if caused_by is not None else (last_id or None)
                    event_rows.append(event_row(event, input_id))
                    last_seq = event.seq
                if checkpoint is not None:
                    last_checkpoint, state = last_checkpoint + 1, dumps(checkpoint)
                    cp_rows.append((last_checkpoint, last_id, state, crc(last_checkpoint, last_id, state)))
                last_input = last_id

            with self._transaction():
                if input_rows:
                    self._open_db.executemany("INSERT INTO inputs VALUES (?, ?, ?, ?, ?)", input_rows)
                if event_rows:
                    self._open_db.executemany("INSERT INTO events (seq, type, t, hand, input_id, public, secret, wall, "
                                         "crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", event_rows)
                if cp_rows:
                    self._open_db.executemany("INSERT INTO checkpoints VALUES (?, ?, ?, ?)", cp_rows)
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
            cp_id, text = self._last_checkpoint + 1, dumps(state)
            with self._transaction():
                self._open_db.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?)",
                                 (cp_id, input_id, text, crc(cp_id, input_id, text)))
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
            self._open_db.execute("PRAGMA synchronous=NORMAL")
            try:
                with self._disk_errors():
                    self._open_db.execute("INSERT INTO delivery VALUES (?, ?, ?) ON CONFLICT(feed) DO UPDATE "
                                     "SET seq = excluded.seq, crc = excluded.crc", (feed, seq, crc(feed, seq)))
            finally:
                self._open_db.execute("PRAGMA synchronous=FULL")
            self._marks[feed] = seq
            return seq

    def set_meta(self, key: str, value: str) -> None:
        self._writable()
        with self._transaction():
            self._open_db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)", (key, value, crc(key, value)))

    # ---- reading ----------------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._open_db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
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
                rows = self._open_db.execute("SELECT id, kind, t, body FROM inputs WHERE id > ? ORDER BY id LIMIT ?",
                                        (after, _READ_CHUNK)).fetchall()
            for id_, kind, t, body in rows:
                yield JournaledInput(id_, kind, t, json.loads(body))
            if len(rows) < _READ_CHUNK:
                return
            after = rows[-1][0]

    def latest_checkpoint(self, base: bool = False) -> Checkpoint | None:
        """The newest checkpoint; ``base``: the newest one whose state says ``"base": true`` (see :meth:`prune`)."""
        with self._lock:
            row = self._open_db.execute(f"SELECT input_id, state FROM checkpoints {_BASE if base else ''} "
                                   "ORDER BY id DESC LIMIT 1").fetchone()
        return Checkpoint(row[0], json.loads(row[1])) if row else None

    def base_checkpoints(self) -> list[Checkpoint]:
        """The newest base checkpoint and the newest one of an earlier hand (see :meth:`prune`), newest first; fewer
        when there are fewer."""
        with self._lock:
            rows = self._base_rows("input_id, state")
        return [Checkpoint(input_id, json.loads(state)) for input_id, state in rows]

    def _base_rows(self, columns: str) -> list[tuple]:
        """``columns`` of the newest base checkpoint and of the newest base before its input, newest first."""
        newest = self._open_db.execute(f"SELECT {columns}, input_id FROM checkpoints {_BASE} ORDER BY id DESC LIMIT 1"
                                       ).fetchone()
        if newest is None:
            return []
        before = self._open_db.execute(f"SELECT {columns}, input_id FROM checkpoints {_BASE} AND input_id < ? "
                                       "ORDER BY id DESC LIMIT 1", (newest[-1],)).fetchone()
        return [row[:-1] for row in (newest, before) if row is not None]

    def first_input_id(self) -> int | None:
        """The oldest input retained (1 while nothing was pruned); None when none is."""
        with self._lock:
            return self._open_db.execute("SELECT min(id) FROM inputs").fetchone()[0]

    def events_after(self, seq: int, limit: int = 1000) -> list[JournaledEvent]:
        rows = self._read(f"SELECT {EVENT_FIELDS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))
        return [journaled_event(row) for row in rows]

    def event_times_after(self, seq: int, limit: int = 1000) -> list[tuple[int, float, int | None, str]]:
        """(seq, t, hand, type) of the events after ``seq``, without their bodies: what the delayed feed decides
        on."""
        return self._read("SELECT seq, t, hand, type FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))

    def last_event(self, type_: str) -> JournaledEvent | None:
        """The newest retained event of a type (one scan, for the start-up: ``type`` has no index)."""
        with self._lock:
            row = self._open_db.execute(f"SELECT {EVENT_FIELDS} FROM events WHERE type = ? ORDER BY seq DESC LIMIT 1",
                                   (type_,)).fetchone()
        return None if row is None else journaled_event(row)

    def latest_t(self) -> float | None:
        """The newest table time in the journal (its last input or event), or None for a new journal."""
        with self._lock:
            times = [row[0] for row in (
                self._open_db.execute("SELECT t FROM inputs ORDER BY id DESC LIMIT 1").fetchone(),
                self._open_db.execute("SELECT t FROM events ORDER BY seq DESC LIMIT 1").fetchone()) if row]
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
        * inputs up to the *base* checkpoint before the newest one — a base's state says ``"base": true``: any
          version of the program can restart from it (``rfid_table.service.checkpoint``) — and the checkpoints
          other than these two bases and the newest one. The newest base's own hand stays: the table between
          hands shows the hand that ended, which a base's state does not hold, so another version replays that
          hand from the base before. With fewer than two bases no input goes: the inputs are what a program that
          cannot load a checkpoint rebuilds the table from.
        """
        self._writable()
        with self._lock:
            delivered = [self.delivered(feed) for feed in self._all_feeds()]
            cut = min(min(delivered, default=0), self._last_seq - self.retention_events)
            latest = self._open_db.execute("SELECT id FROM checkpoints ORDER BY id DESC LIMIT 1").fetchone()
            bases = self._base_rows("id, input_id")
            with self._transaction():
                events = self._open_db.execute("DELETE FROM events WHERE seq <= ?", (cut,)).rowcount if cut > 0 else 0
                inputs = checkpoints = 0
                if bases:
                    if len(bases) == 2:
                        inputs = self._open_db.execute("DELETE FROM inputs WHERE id <= ?", (bases[1][1],)).rowcount
                    kept = (latest[0], *(ident for ident, _ in bases))
                    checkpoints = self._open_db.execute(
                        f"DELETE FROM checkpoints WHERE id NOT IN ({', '.join('?' * len(kept))})", kept).rowcount
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
            db = self._open_db
            db.text_factory = bytes  # a flipped byte may leave invalid UTF-8: count it as a mismatch, not a crash
            try:
                # Each phase on its own: when quick_check cannot even run, the per-table scans still say where.
                problems += quick_check(db)
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version != SCHEMA_VERSION:
                    problems.append(f"schema version {version}, this program reads version {SCHEMA_VERSION}")
                else:
                    rows, found = check_rows(db)
                    problems += found
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
