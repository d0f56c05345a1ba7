"""The pipeline's persist stage: each cycle's step on disk before anything of it goes out.

:class:`JournalStage` hands the step (its inputs, its events, the replies to its commands, the snapshots taken with
it, a checkpoint at a hand's end) to the :class:`~rfid_table.service.journal_writer.JournalWriter` and passes on only
what the writer reports on disk. It also watches the journal: a full disk stops here, not the table; the retention
runs every ``PRUNE_S``; and the journal's distance to its limit becomes an input of the table (a ``journal``
event). It restores the controller from the journal at a start.

:class:`NoJournal` is the stage of a table without a journal (a simulation, a benchmark): a step goes on at once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NamedTuple

from controller import DomainEvent
from rfid_table.service.checkpoint import restore as restore_controller, state_of
from rfid_table.service.inputs import JournalStateInput
from rfid_table.service.journal import Journal
from rfid_table.service.journal_writer import JournalWriter, PendingStep, Reply, StepRecord
from rfid_table.service.replay import Replayed, replay

if TYPE_CHECKING:
    from controller.game import GameController

log = logging.getLogger("rfid_table.service.daemon")  # the pipeline's log lines keep the daemon's name


class Durable(NamedTuple):
    """What of the steps is on disk now, to go out in order: their events, the replies to their commands, and the
    newest snapshots taken with them (None: none)."""

    events: list[DomainEvent]
    replies: list[Reply]
    snapshots: tuple[dict, dict] | None


class JournalStage:
    CHECK_S = 1.0  # how often (table time) the journal's distance to its limit is looked at
    PRUNE_S = 60.0  # how often (table time) delivered events past the retention are removed
    RETRY_S = 1.0  # while the journal cannot be written: how often (table time) it is tried again
    REMIND_S = 60.0  # ... and how often the log says so again

    def __init__(self, journal: Journal, group_commit: bool):
        self.journal = journal
        # group_commit: a thread of its own commits, the steps that arrive during one commit together
        self.writer = JournalWriter(journal, threaded=group_commit, retry_s=self.RETRY_S)
        # A journal that cannot be written (disk full): the steps wait in the writer, in order, and are written
        # (then published) as soon as it can; the table meanwhile goes on reading. (message, since, last try, last log)
        self._failure: tuple[str, float, float, float] | None = None
        self._near_limit = False  # the last journal event said near_limit
        self._checked_at = float("-inf")
        self._pruned_at = float("-inf")

    def restore(self, fresh: GameController) -> tuple[GameController, Replayed]:
        """The controller rebuilt from the journal (it is deterministic: replaying its inputs restores it): from its
        last checkpoint, then the inputs since. ``fresh``: a controller made from the table's configuration."""
        controller, checkpoint, how = restore_controller(self.journal, fresh)
        if how in ("state", "legacy"):
            log.warning("the journal's last checkpoint was written by another version of the program: the table "
                        "restarts from the %s at the end of hand %s and replays the inputs since",
                        "explicit state" if how == "state" else "unversioned pickle", controller.hand)
        replayed = replay(self.journal, controller, checkpoint)
        for problem in replayed.mismatches:
            log.error("journal replay differs from what was journaled: %s", problem)
        return controller, replayed

    def start(self) -> None:
        """Before the first step: whether the journal's last word on its limit was a warning."""
        last = self.journal.last_event("journal")
        self._near_limit = last is not None and last.public.get("state") == "near_limit"

    def inputs(self, now: float) -> list[JournalStateInput]:
        """The journal's own state as an input of the table, once when the undelivered events near the journal's
        retention limit and once when they are back below it: journaled, so a restart neither repeats nor loses
        it. Also where the retention runs."""
        if now - self._checked_at < self.CHECK_S:
            return []
        self._checked_at = now
        journal = self.journal
        if now - self._pruned_at >= self.PRUNE_S:
            # retention: events every feed has delivered and older than the newest retention_events go, in the
            # writer's thread (a delete is a commit of its own: the loop does not wait for it)
            self._pruned_at = now
            self.writer.prune()
        for pruned in self.writer.pruned():
            if pruned.events:
                log.info("journal %s: %d delivered events past the retention of %d removed", journal.path,
                         pruned.events, journal.retention_events)
        if not self._near_limit and journal.near_limit:
            state = "near_limit"
        elif self._near_limit and journal.back_from_limit:
            state = "ok"
        else:
            return []
        self._near_limit = state == "near_limit"
        rows, limit = journal.usage()
        undelivered = journal.slowest_undelivered()
        if self._near_limit:
            log.warning("journal %s: %d events not acknowledged by the broker, near the limit of %d "
                        "([journal] retention_events); nothing is dropped, the file grows until the broker "
                        "takes them", journal.path, undelivered, limit)
        else:
            log.info("journal %s: back to %d events not acknowledged by the broker (limit %d)", journal.path,
                     undelivered, limit)
        return [JournalStateInput(now, state, rows, undelivered, limit)]

    def write(self, now: float, record: StepRecord, events: list[DomainEvent], replies: list[Reply],
              snapshots: tuple[dict, dict] | None, controller: GameController) -> Durable:
        """The step to the writer (``events``: the record's, stamped), and what the writer has on disk now.

        A full disk (an I/O error, another program's write lock) stops in the writer, not the table: the steps wait
        in memory, in order, and are tried again every ``RETRY_S``; once the journal takes them they go out, late
        but whole.
        """
        # a hand boundary: a restart starts from here, and the retention may drop the inputs before
        checkpoint = state_of(controller) if any(e.type == "hand_ended" for e in events) else None
        if record.inputs or replies or snapshots:
            self.writer.submit(PendingStep(record.inputs, events, record.caused_by, checkpoint, replies, snapshots))
        events, replies, snapshots, error = self.writer.durable(now)
        if error is not None:
            self._failed(now, str(error), error.remedy)
        elif self._failure is not None and not self.writer.waiting:
            log.warning("journal %s written again after %.0f s: the events that waited are journaled and go out now",
                        self.journal.path, now - self._failure[1])
            self._failure = None
        return Durable(events, replies, snapshots)

    def _failed(self, now: float, message: str, remedy: str) -> None:
        waiting = self.writer.waiting_events
        failure = self._failure
        if failure is None:
            log.error("%s. Nothing more is published until the journal takes it; the table goes on reading, "
                      "keeps what it sees in memory and journals and publishes it by itself once it can "
                      "(a crash meanwhile loses it): %s", message, remedy)
            self._failure = (message, now, now, now)
        elif now - failure[3] >= self.REMIND_S:
            log.error("%s, for %.0f s now: %d events wait to be journaled and published", message, now - failure[1],
                      waiting)
            self._failure = (message, failure[1], now, now)
        else:
            self._failure = (message, failure[1], now, failure[3])

    @property
    def failing(self) -> bool:
        """The journal cannot be written now (a status light condition)."""
        return self._failure is not None

    def state(self) -> dict:
        """The journal as diagnostics show it: ``ok``, or ``cannot_write`` with why, since when and what waits."""
        if self._failure is None:
            return {"state": "ok"}
        message, since, _tried, _logged = self._failure
        return {"state": "cannot_write", "error": message, "since": round(since, 3),
                "waiting_events": self.writer.waiting_events}

    def figures(self) -> dict:
        """The journal's part of the diagnostics report: its state and its commits."""
        return {"journal": {**self.state(), **self.writer.commit_report()}}

    def close(self, timeout_s: float) -> None:
        """Commit what the writer still holds (at shutdown, before the journal closes)."""
        self.writer.close(timeout_s)


class NoJournal:
    """A table without a journal: a step goes on at once, and a restart starts afresh."""

    writer = None
    failing = False

    def restore(self, fresh: GameController) -> tuple[GameController, Replayed]:
        return fresh, Replayed(0, [], [])

    def start(self) -> None:
        pass

    def inputs(self, now: float) -> list[JournalStateInput]:
        return []

    def write(self, now: float, record: StepRecord, events: list[DomainEvent], replies: list[Reply],
              snapshots: tuple[dict, dict] | None, controller: GameController) -> Durable:
        return Durable(events, replies, snapshots)

    def state(self) -> dict:
        return {"state": "ok"}

    def figures(self) -> dict:
        return {}

    def close(self, timeout_s: float) -> None:
        pass
