"""The pipeline's deliver stage: what is on disk goes to the sink (the MQTT publisher; in tests, anything that
records) — the events, the retained snapshots, the delayed feed and the diagnostics report.

* :class:`JournaledDelivery`, with a journal: nothing is lost to a broker outage. Events are journaled before they
  are published; while the broker is away they stay in the journal only; when it is back, new events go out live at
  once and the :class:`Backlog` — a cursor over the journal — sends the ones it missed behind them, oldest first, at
  the publisher's pace (docs/mqtt.md, "Delivery"). The delayed feed is released from the journal too.
* :class:`Delivery`, without a journal: events go out as they come, and paho's memory is all there is.
* :class:`NoDelivery`, without a sink (the simulator without a broker, a benchmark): nothing is taken or published.

With a reveal policy the events that go out live go to ``live/events`` too, as the policy
(:class:`rfid_table.service.live_feed.LiveFeed`) made them; it reads every event, published or not, in order.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Callable

from controller import DomainEvent
from rfid_table.service.delayed_feed import DelayedFeed, NoDelayedFeed
from rfid_table.service.diagnostics import DiagnosticsCollector
from rfid_table.service.journal import Journal
from rfid_table.service.journal_writer import JournalWriter
from rfid_table.service.live_feed import LiveFeed
from rfid_table.service.sink import Sink

if TYPE_CHECKING:
    from controller.game import GameController
    from hal.reader_backend import ReaderBackend
    from hal.zones import ZoneTracker
    from rfid_table.service.table_gpio import TableGpio

log = logging.getLogger("rfid_table.service.daemon")  # the pipeline's log lines keep the daemon's name


class Backlog:
    """Journaled events that went out neither live nor yet from here: seqs ``next`` to ``end``, oldest first.

    They are read from the journal a batch at a time, never held in paho's memory: an outage of hours costs
    disk, not RAM, and a crash loses nothing.
    """

    BATCH = 200

    def __init__(self) -> None:
        self.next = 1
        self.end = 0
        self.batch: list[DomainEvent] = []  # read ahead from the journal, from ``next`` on
        # The delivery under way, for its log lines: monotonic start (None: none), and its first and last seq.
        self.started_at: float | None = None
        self.first = self.upto = 0

    def __bool__(self) -> bool:
        return self.next <= self.end

    def __len__(self) -> int:
        return self.end - self.next + 1 if self else 0

    def add(self, first: int, last: int) -> None:
        if not self:
            self.next = first
        self.end = max(self.end, last)

    def take(self, journal: Journal, offer: Callable[[list[DomainEvent]], int]) -> int:
        """Offer the events from ``next`` on until the publisher takes no more; returns how many it took."""
        total = 0
        while self:
            if not self.batch:
                read = journal.events_after(self.next - 1, limit=min(self.BATCH, self.end - self.next + 1))
                self.batch = [e.domain_event() for e in read if e.seq <= self.end]
                if not self.batch:  # cannot happen (undelivered events are never pruned), but must not spin
                    self.next = self.end + 1
                    break
            taken = offer(self.batch)
            if not taken:
                break
            self.next = self.batch[taken - 1].seq + 1
            del self.batch[:taken]
            total += taken
        return total


class Snapshots:
    """When the retained snapshots are due. They are copies for late subscribers; the event stream is what is live:
    after events, at most every INTERVAL_S (table time), which keeps the broker's load and the events' latency low
    during a deal; a hand's end at once (the retained picture is what the table shows until the next hand, and a
    table that stops then must not leave a picture of the hand still running)."""

    INTERVAL_S = 0.25

    def __init__(self) -> None:
        self.due = False
        self._taken_at = float("-inf")

    def take(self, now: float, events: list[DomainEvent], wall: float | None, controller: GameController
             ) -> tuple[dict, dict] | None:
        """The public and secure snapshots when they are due, stamped with ``wall`` (None: table time)."""
        if events:
            self.due = True
        if not self.due or (now - self._taken_at < self.INTERVAL_S
                            and not any(event.type == "hand_ended" for event in events)):
            return None
        public, secure = controller.snapshot(secure=False), controller.snapshot(secure=True)
        if wall is not None:
            public["t"] = secure["t"] = round(wall, 3)
        self.due, self._taken_at = False, now
        return public, secure


class TableReport:
    """The diagnostics report as published: the collector's figures over the readers, the zones, the controller and
    the GPIO, stamped like the events, with the journal's figures."""

    def __init__(self, collector: DiagnosticsCollector, readers: list[ReaderBackend], tracker: ZoneTracker,
                 gpio: TableGpio | None, journal_figures: Callable[[], dict]):
        self.collector = collector
        self.readers = readers
        self.tracker = tracker
        self.gpio = gpio
        self.journal_figures = journal_figures

    def due(self, now: float, wall: float | None, controller: GameController, delivery: dict | None) -> dict | None:
        """The report once its interval is over (None before); ``delivery``: the sink's delivery report."""
        report = self.collector.report(now, self.readers, self.tracker, controller, self.gpio, delivery)
        if report is not None:
            if wall is not None:
                report["t"] = round(wall, 3)  # a stamp, like the events'
            report.update(self.journal_figures())
        return report


class Delivery:
    """To the sink, without a journal: each cycle's events as they come."""

    def __init__(self, sink: Sink, report: TableReport, live: LiveFeed | None = None):
        self.sink = sink
        self.report = report
        self.live = live  # None: no reveal policy, no live/events
        self.snapshots = Snapshots()

    def start(self) -> None:
        """Before the first step (with a journal: where the last run's delivery stopped)."""

    @property
    def refusing(self) -> bool:
        """The broker refuses what the table publishes (a status light condition)."""
        return self.sink.refusing

    def commands(self) -> list:
        """The commands received since the last cycle."""
        return self.sink.take_commands()

    def snapshots_due(self, now: float, events: list[DomainEvent], wall: float | None,
                      controller: GameController) -> tuple[dict, dict] | None:
        return self.snapshots.take(now, events, wall, controller)

    def reply(self, role: str, user: str, body: dict) -> None:
        self.sink.publish_reply(role, user, body)

    def deliver(self, now: float, wall: float | None, events: list[DomainEvent],
                snapshots: tuple[dict, dict] | None, controller: GameController) -> None:
        """What is on disk: its events, the snapshots taken with them, the delayed feed, the diagnostics."""
        live = self.live.payloads(events) if self.live is not None else []
        if self._send(events) and live:
            self.sink.publish_live(live)
        if snapshots is not None:
            self.sink.publish_snapshots(*snapshots)
        self._release_delayed(now, wall)
        report = self.report.due(now, wall, controller, self.sink.delivery_report())
        if report is not None:
            self.sink.publish_diagnostics(report)

    def _send(self, events: list[DomainEvent]) -> bool:
        """Publish ``events``; whether they went out live."""
        if events:
            self.sink.publish_events(events)  # no journal: paho's memory is all there is
        return True

    def _release_delayed(self, now: float, wall: float | None) -> None:
        """No journal: nothing to release a delayed feed from."""

    def publish_backlog(self) -> int:
        return 0

    def finish(self) -> None:
        """At shutdown, before the publisher stops."""


class JournaledDelivery(Delivery):
    """To the sink, from the journal: live while the broker takes them, the backlog behind, the delayed feed."""

    # Messages the broker has not acknowledged past which new events wait in the journal instead of paho's
    # memory: a connection that died without a word (noticed only after 1.5 keepalives) or a broker that stalls.
    LIVE_PENDING_LIMIT = 1000

    # At a start the reveal policy reads back this many of the journal's newest events: the hand under way, and what
    # it showed (a hand is 100 to 200 events).
    LIVE_PRIMING = 1000

    def __init__(self, sink: Sink, report: TableReport, journal: Journal, writer: JournalWriter, backlog: Backlog,
                 delayed: DelayedFeed | NoDelayedFeed, live: LiveFeed | None = None):
        super().__init__(sink, report, live)
        self.journal = journal
        self.writer = writer  # the broker's acknowledgements go to the journal through it
        self.backlog = backlog
        self.delayed = delayed

    def start(self) -> None:
        """Acknowledgements count on from the journal's marks, and the events after the lowest mark of the event
        branches make the first backlog."""
        journal = self.journal
        marks = journal.delivery_marks()
        self.sink.resume(marks)
        first = min(marks.get("public", 0), marks.get("secure", 0)) + 1
        if first <= journal.last_seq():
            self.backlog.add(first, journal.last_seq())
        self.snapshots.due = journal.last_seq() > 0  # the restored table, for subscribers that come now
        if self.live is not None:
            read = journal.events_after(max(0, journal.last_seq() - self.LIVE_PRIMING), limit=self.LIVE_PRIMING)
            self.live.prime([e.domain_event() for e in read])

    def _send(self, events: list[DomainEvent]) -> bool:
        """Record the broker's acknowledgements, publish this cycle's events live if the broker can take them now
        (or leave them to the backlog), then let the backlog go on. Whether they went out live."""
        for feed, seq in self.sink.take_acknowledged().items():
            self.writer.mark_delivered(feed, seq)  # kept until the journal takes it (a mark never goes back)
        connected = self.sink.connected
        live = connected and self.sink.pending < self.LIVE_PENDING_LIMIT
        if events:
            if live:
                self.sink.publish_events(events)
            else:
                self.backlog.add(events[0].seq, events[-1].seq)
        if connected and self.backlog:
            self._begin_backlog()
            self._send_backlog()
        self._backlog_delivered()
        return live

    def _release_delayed(self, now: float, wall: float | None) -> None:
        if self.sink.connected:
            self.delayed.release(now, now if wall is None else wall)
        self.delayed.publish_hand(now)

    def publish_backlog(self) -> int:
        """Start delivering the journaled events some feed has not had acknowledged; how many there are."""
        count = len(self.backlog)
        if self.backlog and self.sink.connected:
            self._begin_backlog()
            self._send_backlog()
        return count

    def finish(self) -> None:
        """delayed/hand with all the feed has released, so that the retained copy an overlay gets while the table
        is down is the playback as far as it went."""
        self.delayed.finish()

    def _begin_backlog(self) -> None:
        """Note (and log) the start of a delivery: once connected with a backlog that is not under way yet."""
        backlog = self.backlog
        if backlog.started_at is not None:
            return
        backlog.started_at, backlog.first, backlog.upto = time.monotonic(), backlog.next, backlog.end
        self.sink.backlog_started()
        log.info("%d journaled events (seq %d to %d) await the broker's acknowledgement: sending them behind the "
                 "live events, oldest first", backlog.end - backlog.next + 1, backlog.next, backlog.end)

    def _send_backlog(self) -> None:
        if not self.backlog or not self.sink.connected:
            return
        self.backlog.take(self.journal, self.sink.publish_backlog_events)

    def _backlog_delivered(self) -> None:
        """Log once the broker has acknowledged the delivery under way on both event branches."""
        backlog = self.backlog
        if backlog.started_at is None or backlog.next <= backlog.upto:
            return
        if min(self.journal.delivered("public"), self.journal.delivered("secure")) < backlog.upto:
            return
        log.info("backlog delivered: %d events (seq %d to %d) in %.1f s, at most %s messages in flight",
                 backlog.upto - backlog.first + 1, backlog.first, backlog.upto, time.monotonic() - backlog.started_at,
                 self.sink.max_paced_in_flight)
        backlog.started_at = None


class NoDelivery:
    """No sink: nothing is taken from it and nothing published (nor made for it: snapshots, reports)."""

    refusing = False

    def start(self) -> None:
        pass

    def commands(self) -> list:
        return []

    def snapshots_due(self, now: float, events: list[DomainEvent], wall: float | None,
                      controller: GameController) -> tuple[dict, dict] | None:
        return None

    def reply(self, role: str, user: str, body: dict) -> None:
        pass

    def deliver(self, now: float, wall: float | None, events: list[DomainEvent],
                snapshots: tuple[dict, dict] | None, controller: GameController) -> None:
        pass

    def publish_backlog(self) -> int:
        return 0

    def finish(self) -> None:
        pass
