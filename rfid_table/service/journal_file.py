"""The journal's file: its schema, a new one made whole, kept private, and the errors of a file that cannot be used.

The file and its ``-wal`` and ``-shm`` companions are mode 0600 whatever the umask: they hold hole cards. A new
journal is built under a temporary name and renamed into place, so a file at the journal's path is always a
whole journal: an empty one there was truncated or replaced, and is refused unless the caller says to start
afresh (``fresh=True``, ``rfid-table run --new-journal``).
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import sqlite3
import stat
import time
from pathlib import Path

from rfid_table.service.journal_codec import crc

log = logging.getLogger("rfid_table.service.journal")  # the journal's log lines, whichever of its modules

SCHEMA_VERSION = 2  # in PRAGMA user_version
# What turns an older file into this version, applied at open: version 2 added the events' wall-clock stamp.
MIGRATIONS = {1: ("ALTER TABLE events ADD COLUMN wall REAL",)}

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


# ---- errors ---------------------------------------------------------------------------------------------


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


class JournalCorrupt(JournalError):
    """The self-check failed: nothing may be written (or published) until someone looks at the file."""

    def __init__(self, problems: list[str]):
        super().__init__("journal is corrupt: " + "; ".join(problems))
        self.problems = problems


def write_failure(exc: sqlite3.Error) -> bool:
    """A failure outside the caller: the disk full (SQLITE_FULL), an I/O error (SQLITE_IOERR_*), or the file locked
    by another program for longer than SQLite's busy timeout (SQLITE_BUSY: an ``sqlite3`` shell left in a write
    transaction). Each passes, and the write can be tried again."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code == sqlite3.SQLITE_FULL or code & 0xFF in (sqlite3.SQLITE_IOERR,
                                                                                 sqlite3.SQLITE_BUSY))


def write_failed(doing: str, path: Path, exc: sqlite3.Error) -> JournalWriteFailed:
    """The :class:`JournalWriteFailed` for a write failure of SQLite's, with what to do about it."""
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY:
        remedy = (f"another program holds the journal's write lock: end its transaction or stop it "
                  f"(fuser -v {path} names it)")
    else:
        remedy = _free_space_on(path)
    return JournalWriteFailed(f"cannot {doing} the journal {path}: {exc}", remedy)


def _free_space_on(path: Path) -> str:
    return f"free space on {path.parent} (df -h {path.parent})"


# ---- making the file ------------------------------------------------------------------------------------


def create_if_missing(path: Path, fresh: bool, table_id: str | None) -> None:
    """A new journal when there is none; refuse what is at the path when it cannot be one. ``fresh``: an empty file
    there is replaced by a new journal instead of refused."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _create_file(path, table_id)
        return
    if stat.S_ISDIR(info.st_mode):
        raise JournalRefused(f"{path} is a directory, not a journal file (the journal's path names the "
                             "file itself, e.g. /var/lib/rfid-table/main-1.journal)")
    if not stat.S_ISREG(info.st_mode):
        raise JournalRefused(f"{path} is not a regular file")
    if info.st_size == 0:  # SQLite writes the header before anything else in WAL mode: this is no journal
        if not fresh:
            raise JournalRefused(
                f"{path} is empty (0 bytes): it should hold this table's journal, and the hand in progress "
                "with it (a new journal is never left empty: the file was truncated or replaced). Find out what "
                "happened to it; to start a new journal there, run once with --new-journal")
        log.warning("%s is empty: starting a new journal there, as asked (--new-journal)", path)
        for stale in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            stale.unlink(missing_ok=True)
        _create_file(path, table_id)


def _create_file(path: Path, table_id: str | None) -> None:
    """Build the new journal under a temporary name, then rename it into place: whoever finds a file at the
    path finds a whole journal (a crash half-way leaves only the temporary file, replaced next time)."""
    building = path.with_name(path.name + ".new")
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
            _create_schema(db, path, table_id)
        finally:
            db.close()  # folds the WAL into the file and removes it
        fd = os.open(building, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(building, path)
        fd = os.open(path.parent, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)  # the rename itself survives a power cut
        finally:
            os.close(fd)
    except sqlite3.Error as exc:
        building.unlink(missing_ok=True)
        if write_failure(exc):
            raise write_failed("create", path, exc) from exc
        raise
    except OSError as exc:
        building.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise JournalWriteFailed(f"cannot create the journal {path}: {exc.strerror}",
                                     _free_space_on(path)) from exc
        raise JournalRefused(f"cannot create the journal {path}: {exc.strerror}") from exc


def _create_schema(db: sqlite3.Connection, path: Path, table_id: str | None) -> None:
    """The tables, the schema version and the first meta rows, in one transaction."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            meta = [("epoch", secrets.token_hex(8)), ("created_at", repr(time.time())), ("start_count", "0")]
            if table_id is not None:
                meta.append(("table_id", table_id))
            for key, value in meta:
                db.execute("INSERT INTO meta VALUES (?, ?, ?)", (key, value, crc(key, value)))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite has rolled back by itself after some errors (a full disk)
                db.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        if write_failure(exc):
            raise write_failed("write", path, exc) from exc
        raise


def restrict_mode(path: Path) -> None:
    """Owner read/write only, on the journal and its WAL and shared-memory files (they hold hole cards)."""
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            if stat.S_IMODE(os.stat(name).st_mode) != 0o600:
                os.chmod(name, 0o600)
        except FileNotFoundError:
            pass
        except PermissionError:
            log.warning("%s: cannot make it private (mode 0600): not its owner", name)
