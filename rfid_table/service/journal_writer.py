"""Making each cycle durable before anything of it is published, with group commits.

Every cycle of the daemon hands its step (inputs, events, the replies to its commands, a checkpoint at a hand's
end) to a :class:`JournalWriter`; the pipeline publishes only what the writer reports on disk. Two ways:

* **in the loop** (``threaded=False``, the simulator's and the tests' way): :meth:`JournalWriter.durable` writes
  what waits, in one transaction, when the pipeline asks. Simple, and the cycle's events go out in the same cycle.
* **grouped** (``threaded=True``, the daemon's way): a thread of its own commits. While one commit's fsync is on its
  way to the disk (5 ms and more on a Raspberry Pi's SD card) the loop goes on reading, and the steps that arrive
  meanwhile are committed together in the next transaction: one fsync for all of them. A slow disk then costs a
  few milliseconds of latency, not throughput, and the loop never waits for the disk. The thread writes a byte to
  a pipe (:meth:`JournalWriter.fileno`) when a commit lands, so the loop's ``select`` wakes to publish it.

Either way each commit is timed (:meth:`JournalWriter.commit_report`, in the diagnostics): a card waits for its
commit before it is published, so a disk whose fsync stalls (an ageing SD card) shows there first.

Either way a full disk (an I/O error, another program holding the write lock) stops here, not the table: the steps
wait in memory, in order, and are tried again every ``retry_s``; the first error is reported by
:meth:`JournalWriter.durable` for the pipeline to log and show, and once the journal takes them they are published,
late but whole.

The retention's deletes (:meth:`JournalWriter.prune`) go the same way: grouped, the writer's thread runs them between
two commits, since a delete is a commit and an fsync of its own, and the loop must never wait for the disk.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from controller import DomainEvent
from rfid_table.service.inputs import TableInput
from rfid_table.service.journal import Journal, Pruned, Step
from rfid_table.service.journal_file import JournalWriteFailed


Reply = tuple[str, str, dict]  # (role, user, body): the answer to a command, sent once its effect is on disk


@dataclass
class StepRecord:
    """What one step of the pipeline took in, in order, and what each input caused: the step's journal entry.

    Every part of the step adds to it the same way (:meth:`add`), and ``caused_by`` points each event at its input."""

    inputs: list[TableInput] = field(default_factory=list)
    events: list[DomainEvent] = field(default_factory=list)
    caused_by: list[int] = field(default_factory=list)

    def add(self, applied: TableInput, produced: list[DomainEvent]) -> None:
        """An input the controller took, and the events it caused."""
        self.inputs.append(applied)
        self.events.extend(produced)
        self.caused_by.extend([len(self.inputs) - 1] * len(produced))

    def stamped(self, wall: float | None) -> list[DomainEvent]:
        """The events, stamped with the room's clock ``wall`` (None: they carry the table time)."""
        if wall is None or not self.events:
            return self.events
        return [DomainEvent(e.seq, e.type, e.t, e.hand, e.public, e.secret, wall) for e in self.events]


@dataclass
class PendingStep:
    """A cycle's step, and the replies to send once it is on disk."""

    inputs: list[TableInput]
    events: list[DomainEvent]
    caused_by: list[int]
    checkpoint: dict[str, Any] | None
    replies: list[Reply]
    snapshots: tuple[dict, dict] | None = None  # (public, secure) taken with the step, published once it is on disk


class JournalWriter:
    SLOW_COMMIT_S = 0.1  # a commit this slow holds its events back by more than a viewer's eye forgives

    def __init__(self, journal: Journal, threaded: bool = False, retry_s: float = 1.0):
        self.journal = journal
        self.retry_s = retry_s
        self._waiting: deque[PendingStep] = deque()  # not yet on disk, oldest first
        self._done: deque[PendingStep] = deque()  # on disk, not yet handed to the pipeline (threaded)
        self._marks: dict[str, int] = {}  # the broker's acknowledgements the journal has not taken yet
        self._prune_asked = False  # grouped: the retention is due, for the thread to run between two commits
        self._pruned: list[Pruned] = []  # what the retention removed, not yet taken by the pipeline
        self._error: JournalWriteFailed | None = None  # the latest write failure, while it lasts
        self._tried_at = float("-inf")  # in the loop: when the last failed write was tried (table time)
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False
        # Commits since the last report (how many, the slowest), and the slow ones since the start.
        self._commits, self._slowest_s, self._slow_commits = 0, 0.0, 0
        self._wake_r = self._wake_w = -1
        if threaded:
            self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._thread = threading.Thread(target=self._run, name="journal-writer", daemon=True)
            self._thread.start()

    # ---- the pipeline's side ------------------------------------------------------------------------------

    def submit(self, step: PendingStep) -> None:
        with self._lock:
            self._waiting.append(step)
            self._lock.notify()

    def mark_delivered(self, feed: str, seq: int) -> None:
        """The broker acknowledged ``feed`` up to ``seq``: into the journal (grouped: by the writer's thread, so
        the loop never waits for a commit under way). Kept while the disk refuses it."""
        with self._lock:
            self._marks[feed] = max(seq, self._marks.get(feed, 0))
            if self._thread is not None:
                self._lock.notify()
                return
        self._write_marks()

    def prune(self) -> None:
        """Apply the journal's retention (:meth:`Journal.prune`): grouped, in the writer's thread after its commit
        under way; in the loop, now. What it removed comes back through :meth:`pruned`. A full disk leaves it for
        the next time (the steps' own writes report the disk)."""
        if self._thread is None:
            self._prune()
            return
        with self._lock:
            self._prune_asked = True
            self._lock.notify()

    def pruned(self) -> list[Pruned]:
        """What the retention removed since the last call."""
        with self._lock:
            done, self._pruned = self._pruned, []
        return done

    def _prune(self) -> None:
        try:
            removed = self.journal.prune()
        except JournalWriteFailed:
            return
        with self._lock:
            self._pruned.append(removed)

    def _write_marks(self) -> None:
        with self._lock:
            marks, self._marks = self._marks, {}
        for feed, seq in marks.items():
            try:
                self.journal.mark_delivered(feed, seq)  # no fsync of its own: the next step's commit makes it durable
            except JournalWriteFailed:
                with self._lock:  # kept for the next try; a newer mark meanwhile wins
                    self._marks[feed] = max(seq, self._marks.get(feed, 0))

    def durable(self, now: float) -> tuple[list[DomainEvent], list[Reply], tuple[dict, dict] | None,
                                           JournalWriteFailed | None]:
        """The events and replies now on disk (to publish, in order), the newest snapshots taken with them, and the
        write failure while one lasts."""
        if self._thread is None:
            self._write_in_loop(now)
        with self._lock:
            done, self._done = self._done, deque()
            error = self._error
        if self._wake_r >= 0:
            try:
                os.read(self._wake_r, 4096)
            except BlockingIOError:
                pass
        events = [event for step in done for event in step.events]
        replies = [reply for step in done for reply in step.replies]
        snapshots = next((step.snapshots for step in reversed(done) if step.snapshots is not None), None)
        return events, replies, snapshots, error

    def commit_report(self) -> dict:
        """The commits since the last report: how many, the slowest (ms), and how many took ``SLOW_COMMIT_S`` or
        more since the start (a total, so that one seen once stays visible)."""
        with self._lock:
            report = {"commits": self._commits, "commit_max_ms": round(self._slowest_s * 1000, 1),
                      "slow_commits": self._slow_commits}
            self._commits, self._slowest_s = 0, 0.0
        return report

    @property
    def waiting(self) -> bool:
        """Anything not on disk yet (the snapshots wait with it: they would show what the journal lacks)."""
        with self._lock:
            return bool(self._waiting) or bool(self._done)

    @property
    def waiting_events(self) -> int:
        with self._lock:
            return sum(len(step.events) for step in self._waiting)

    def fileno(self) -> int | None:
        """Readable when a grouped commit has landed (None in the loop: nothing to wait for)."""
        return self._wake_r if self._wake_r >= 0 else None

    def close(self, timeout_s: float = 5.0) -> None:
        """Commit what waits (a grouped writer: within ``timeout_s``), then stop."""
        if self._thread is not None:
            with self._lock:
                self._closing = True
                self._lock.notify()
            self._thread.join(timeout_s)
            self._thread = None
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            self._wake_r = self._wake_w = -1
        else:
            self._write_in_loop(float("inf"))
        self._write_marks()

    # ---- writing ------------------------------------------------------------------------------------------

    def _write(self, batch: list[PendingStep]) -> bool:
        steps = [Step([each.row() for each in s.inputs], s.events, s.caused_by, s.checkpoint)
                 for s in batch if s.inputs]
        started = time.monotonic()
        try:
            if steps:
                self.journal.record_steps(steps)
        except JournalWriteFailed as exc:
            with self._lock:
                self._error = exc
            return False
        took = time.monotonic() - started
        with self._lock:
            if steps:
                self._commits += 1
                self._slowest_s = max(self._slowest_s, took)
                self._slow_commits += took >= self.SLOW_COMMIT_S
            self._error = None
            for _ in batch:
                self._done.append(self._waiting.popleft())
        return True

    def _write_in_loop(self, now: float) -> None:
        with self._lock:
            batch = list(self._waiting)
        if not batch or (self._error is not None and now - self._tried_at < self.retry_s):
            return
        if not self._write(batch):
            self._tried_at = now

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._waiting and not self._marks and not self._prune_asked and not self._closing:
                    self._lock.wait()
                if self._closing and not self._waiting and not self._marks:
                    return  # closing, and all is on disk (a retention still asked for waits for the next start)
                batch = list(self._waiting)  # everything that arrived during the last commit: one commit
                prune, self._prune_asked = self._prune_asked, False
            if self._marks:
                self._write_marks()
            if prune:
                self._prune()
            if not batch:
                continue
            if self._write(batch):
                try:
                    os.write(self._wake_w, b"\0")
                except BlockingIOError:  # the loop has not read the last ones yet: it will see these too
                    pass
            elif self._closing:
                return  # the disk is full at shutdown: what waits is lost, as it would be in a crash
            else:
                time.sleep(self.retry_s)
