"""The table's pipeline: readers → zone tracker (HAL) → controller → journal → publisher.

Data flows one way. Each :meth:`TablePipeline.step` polls the readers once, feeds the zone events to the
controller, lets time pass in the controller, and hands whatever happened to the publisher. The loops that call
it are elsewhere: the daemon's in :mod:`rfid_table.service.run`, the simulator's in
:mod:`rfid_table.devtools.simulate`.

With a journal, nothing is lost to a broker outage: events are journaled before they are published; while the
broker is away they stay in the journal only; when it is back, new events go out live at once and the
:class:`Backlog` — a cursor over the journal — sends the ones it missed behind them, oldest first, at the
publisher's pace (docs/mqtt.md, "Delivery").
"""

import logging
import signal
import threading
import time
from typing import Callable

from controller import DomainEvent
from controller.game import GameController
from hal.events import SensorEvent
from hal.reader_backend import ReaderBackend
from hal.zones import ZoneTracker
from rfid_table.service.checkpoint import restore as restore_controller, state_of
from rfid_table.service.commands import CommandError, CommandGate, loggable, sender
from rfid_table.config.table import TableConfig
from rfid_table.service.diagnostics import DiagnosticsCollector
from rfid_table.service.equity_worker import EquityWorker
from rfid_table.service.journal_writer import JournalWriter, PendingStep, StepRecord
from rfid_table.service.sink import Sink
from rfid_table.service.journal import (Journal, device_input, journal_event, journal_input, replay,
                                sensor_input, tick_input, zone_input)
from rfid_table.service.table_gpio import TableGpio, TableLights

log = logging.getLogger(__name__)


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


class DelayedHand:
    """What ``delayed/hand`` holds: the delayed feed's events from the newest released ``hand_started`` on, and the
    hand before it (its end may have gone out moments before the next hand's start, and a late result of it comes
    after that start). A broadcast overlay that missed some of them (a broker outage, a subscription made late) or
    opens during the playback takes it and plays the hand back whole.

    In memory, as they are released (a hand is 100 to 200 events), and read back from the journal after a restart.
    At most LIMIT: after a long stretch without a hand only the newest stay.
    """

    LIMIT = 1000

    def __init__(self) -> None:
        self.events: list[DomainEvent] = []
        self.released: float | None = None  # the stamp at which the newest hand's start went out; None: not known
        self.released_before: float | None = None  # ... and the hand before's, when events begin with its start
        self.changed = False  # since it was last published
        self.restored = False
        self._newest = 0  # where the newest hand starts in events

    def restore(self, journal: Journal, upto: int) -> None:
        """At the first release after a start: the hands as the feed had released them up to ``upto`` (the
        journal's mark: what the broker acknowledged; the rest is released again), their release time unknown."""
        self.restored = True
        if upto > 0:
            read = journal.events_after(max(0, upto - self.LIMIT), limit=self.LIMIT)
            self.add([e.domain_event() for e in read if e.seq <= upto], None)

    def add(self, events: list[DomainEvent], stamp: float | None) -> None:
        for event in events:
            if event.type == "hand_started":
                del self.events[:self._newest]  # the hand before the one before goes
                begins_a_hand = bool(self.events) and self.events[0].type == "hand_started"
                self.released_before = self.released if begins_a_hand else None
                self._newest, self.released = len(self.events), stamp
            elif not self.events:
                self.released = stamp
            self.events.append(event)
        overflow = len(self.events) - self.LIMIT
        if overflow > 0:
            del self.events[:overflow]
            self._newest = max(0, self._newest - overflow)
            self.released_before = None  # the hand before's start is cut off
        self.changed = self.changed or bool(events)


class TablePipeline:
    # Snapshots are retained copies for late subscribers; the event stream is what is live. Publishing them
    # at most this often (table time) keeps the broker's load and the events' latency low during a deal.
    SNAPSHOT_INTERVAL_S = 0.25
    # Messages the broker has not acknowledged past which new events wait in the journal instead of paho's
    # memory: a connection that died without a word (noticed only after 1.5 keepalives) or a broker that stalls.
    LIVE_PENDING_LIMIT = 1000
    JOURNAL_CHECK_S = 1.0  # how often (table time) the journal's distance to its limit is looked at
    JOURNAL_PRUNE_S = 60.0  # how often (table time) delivered events past the retention are removed
    JOURNAL_RETRY_S = 1.0  # while the journal cannot be written: how often (table time) it is tried again
    JOURNAL_REMIND_S = 60.0  # ... and how often the log says so again
    # delayed/hand is sent again with the newest released events at most this often (table time): with release =
    # "time" the feed releases one event at a time, and each message carries the whole hand so far.
    DELAYED_HAND_INTERVAL_S = 1.0

    def __init__(self, config: TableConfig, readers: list[ReaderBackend], sink: Sink | None,
                 journal: Journal | None = None, gpio: TableGpio | None = None,
                 command_gate: CommandGate | None = None, group_commit: bool = False):
        self.readers = readers
        self.tracker = ZoneTracker(config.antenna_zones(), config.debounce_by_zone(),
                                   min_rssi_dbm=config.min_rssi_dbm, order_window_s=config.order_window_s)
        self.controller = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
        self._console: list[dict] = []  # inputs from the table's own console (GPIO buttons, the simulated floor)
        self.sink = sink
        self.journal = journal
        self._snapshot_due = False
        self._snapshot_at = float("-inf")
        self.diagnostics = DiagnosticsCollector()
        self.broadcast_delay_s = config.broadcast_delay_s
        self.broadcast_release = config.broadcast_release
        self._delayed_upto = 0  # the last seq handed to the delayed feed (the journal keeps what was acked)
        self._release_at = float("-inf")  # table time before which no delayed event can be due
        self.delayed_hand = DelayedHand()
        self._delayed_hand_at = float("-inf")  # table time delayed/hand was last published
        self._base = f"{config.mqtt.topic_prefix}/{config.table_id}"
        self._refused = 0  # commands refused as malformed or unauthorised
        # the retain flag, the rate limit per user and the parser, before a command reaches the controller
        self.command_gate = command_gate or CommandGate(self._base)
        self._failures_logged: set[tuple[str, str]] = set()  # (input kind, exception) already in the log
        self.backlog = Backlog()
        self._delivery_started = False
        self._near_limit = False  # the last journal event said near_limit
        self._limit_checked_at = float("-inf")
        self._pruned_at = float("-inf")
        # Each cycle's step goes to the writer; only what it has on disk is published (rfid_table/service/journal_writer.py).
        # group_commit: a thread of its own commits, the steps that arrive during one commit together.
        self.writer = (JournalWriter(journal, threaded=group_commit, retry_s=self.JOURNAL_RETRY_S)
                       if journal is not None else None)
        # A journal that cannot be written (disk full): the steps wait in the writer, in order, and are written
        # (then published) as soon as it can; the table meanwhile goes on reading. (message, since, last try, last log)
        self._journal_failure: tuple[str, float, float, float] | None = None
        self.gpio = gpio  # the seat sensors, console buttons and lights (None: the table has none)
        self._gpio_synced = False
        self._gpio_since: float | None = None  # the first cycle with the GPIO
        # equity for the broadcast, computed in a process of its own (rfid_table/service/equity_worker.py)
        self.equity = (EquityWorker(config.game.hole_cards, config.game.variant.startswith("plo"))
                       if sink is not None and config.broadcast_equity else None)

    def restore(self, now: float) -> int:
        """Rebuild the controller from the journal (it is deterministic: replaying its inputs restores it).

        The HAL starts with the controller's picture of the table, so a card that was taken away while the
        daemon was down leaves after the usual absence time instead of staying on the table for ever.
        Returns how many inputs were replayed.
        """
        # the state at the end of a hand: only the inputs since are replayed
        self.controller, checkpoint, how = restore_controller(self.journal, self.controller)
        if how in ("state", "legacy"):
            log.warning("the journal's last checkpoint was written by another version of the program: the table "
                        "restarts from the %s at the end of hand %s and replays the inputs since",
                        "explicit state" if how == "state" else "unversioned pickle", self.controller.hand)
        replayed = replay(self.journal, self.controller, checkpoint)
        for problem in replayed.mismatches:
            log.error("journal replay differs from what was journaled: %s", problem)
        self.tracker.seed(self.controller.on_table(), now)
        if replayed.inputs:
            log.info("restored hand %s (seq %s) from %d journaled inputs", self.controller.hand,
                     self.controller.seq, replayed.inputs)
        return replayed.inputs

    def submit(self, body: dict) -> None:
        """A command from the table itself (a console button, the simulated floor): applied and journaled in the
        next cycle like one from MQTT, without a reply. ``body`` has the shape of ``AdmittedCommand.as_input()``."""
        self._console.append(body)

    def _gpio_inputs(self, now: float, record: StepRecord) -> None:
        """The seat sensors' changes (journaled as ``sensor`` inputs, judged by the conduct rules) and the
        console's button presses (queued as console commands for the next cycle). The first cycle tells the
        rules what the sensors show where it differs from what they know (a player already seated at start-up, a
        device switched off while the daemon was down)."""
        polled: list = self.gpio.poll(now)
        if not self._gpio_synced:
            if self._gpio_since is None:
                self._gpio_since = now
            if now - self._gpio_since >= self.gpio.settle_s:  # the levels at start-up are through the debounce
                self._gpio_synced = True
                for event in self.gpio.sensors(now):
                    known = self.controller.sensor_known(event.seat, event.sensor, event.detects)
                    if (known is None and event.active) or (known is not None and known != event.active):
                        polled.append(event)
        for item in polled:
            if isinstance(item, SensorEvent):
                self._apply("gpio", item, self.controller.handle_sensor, sensor_input, record)
                continue
            body, problem = self.gpio.console.command(item, self.controller.seat_to_act(),
                                                      self.controller.floor_pending())
            if problem is not None:
                log.warning("console button %s ignored: %s", item.button, problem)
                continue
            self.submit(body)

    def _show_lights(self, now: float) -> None:
        """The seat lights and the status light from the controller's state."""
        controller = self.controller
        link_down = not all(r.link_up and r.delivering for r in self.readers)  # either way, no cards seen
        to_act, clock_lights = controller.turn_lights(now)
        self.gpio.show(TableLights(to_act=to_act, clock=clock_lights, link_down=link_down,
                                   journal_failing=self._journal_failure is not None,
                                   awaiting_floor=bool(controller.floor_pending()),
                                   deck_not_registered=controller.deck_unregistered,
                                   broker_refuses=self.sink is not None and self.sink.refusing,
                                   game_stopped=controller.game_stopped), now)

    def _commands(self, now: float, record: StepRecord) -> list[tuple[str, str, dict]]:
        """Validate and apply the commands received since the last cycle; return the replies to send."""
        replies = []
        console, self._console = self._console, []
        for body in console:
            try:
                produced, refusal = self.controller.handle_command(body, now)
            except Exception as exc:  # noqa: BLE001 - the last line of defence
                self._input_failed("console", body, exc)
                continue
            if refusal is None:
                record.add(("command", now, body), produced)
            else:
                log.warning("console command %s refused: %s", body.get("command"), refusal)
        if self.sink is None:
            return replies
        for received in self.sink.take_commands():
            who = sender(received.topic, self._base)
            try:
                reply = self._command(received, now, record)
            except Exception as exc:  # noqa: BLE001 - the last line of defence: skipped, counted, logged once
                self._input_failed("command", received.topic, exc)
                reply = who and (*who, {"id": None, "ok": False, "field": "command",
                                        "error": "the table could not handle this command (an internal error, "
                                                 "logged): it was not applied"})
            if reply:
                replies.append(reply)
        return replies

    def _command(self, received, now: float, record: StepRecord) -> tuple | None:
        """One command from the network: admitted (retain flag, rate limit, parser), applied; returns its reply."""
        setup = self.controller.setup
        try:
            command = self.command_gate.admit(received.topic, received.payload, received.retained, setup.seats,
                                              tuple(setup.decks))
        except CommandError as exc:
            who = sender(received.topic, self._base)
            self._refused += 1
            self.diagnostics.count_command(exc.kind)
            if self._refused <= 20 or self._refused % 1000 == 0:  # a flood must not flood the log too
                log.warning("refused a command from %s: %s: %s (%d refused so far)",
                            loggable("/".join(who) if who else received.topic), loggable(exc.field),
                            loggable(exc.message), self._refused)
            return who and (*who, {"id": exc.command_id, "ok": False, "field": exc.field, "error": exc.message})
        body = command.as_input()
        produced, refusal = self.controller.handle_command(body, now)
        if refusal is None:
            self.diagnostics.count_command("accepted")
            record.add(("command", now, body), produced)
            return command.role, command.user, {"id": command.id, "ok": True,
                                                "seq": produced[-1].seq if produced else None}
        self.diagnostics.count_command("not_allowed")
        return command.role, command.user, {"id": command.id, "ok": False, "field": "command", "error": refusal}

    def _apply(self, kind: str, item, handle, as_input, record: StepRecord) -> None:
        """One input through the controller, journaled as ``as_input(item)`` with the events it caused; an input
        whose handling raises is skipped (:meth:`_input_failed`)."""
        try:
            produced = handle(item)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            self._input_failed(kind, item, exc)
            return
        record.add(as_input(item), produced)

    def _input_failed(self, kind: str, what: object, exc: Exception) -> None:
        """The last line of defence: an input whose handling raised is skipped and counted (``input_errors`` in
        diagnostics); the first failure of each kind and exception goes to the log, escaped on one line, with
        its traceback. What is journaled stays journaled, and the table goes on."""
        self.diagnostics.count_input_error(kind, f"{type(exc).__name__}: {loggable(exc)}"[:200])
        key = (kind, type(exc).__name__)
        if key in self._failures_logged:
            return
        self._failures_logged.add(key)
        log.error("a %s input raised %s and was skipped; the table goes on (input: %s; %s)", kind,
                  type(exc).__name__, loggable(what)[:300],
                  loggable(logging.Formatter().formatException((type(exc), exc, exc.__traceback__))))

    def _release_delayed(self, now: float, stamp: float) -> None:
        """Hand the delayed feed every journaled event whose delay is over, in order (``stamp``: the cycle's wall
        stamp, for delayed/hand).

        The journal's mark for the ``delayed`` feed says what the broker has acknowledged, so after a restart
        the release goes on where it stopped and never early. ``time``: an event goes out ``delay`` seconds
        after it happened; ``hand``: a hand's events go out together, ``delay`` seconds after the hand ended
        (events outside any hand, like a reader going down, follow the time rule).
        """
        if now < self._release_at:
            return
        start = max(self._delayed_upto, self.journal.delivered("delayed"))
        if not self.delayed_hand.restored:
            self.delayed_hand.restore(self.journal, start)
        # Which events are due, from their times alone: their bodies are read (and decoded) only when they go.
        due = 0
        ended_at: dict[int, float | None] = {}
        times = self.journal.event_times_after(start, limit=500)
        # Nothing journaled can come due before the delay has passed from now (an event not yet journaled, or a
        # hand that has not ended yet, happens from now on): look again then, unless something says sooner.
        self._release_at = now + self.broadcast_delay_s
        for _seq, t, hand in times:
            if self.broadcast_release == "hand" and hand is not None:
                if hand not in ended_at:
                    ended_at[hand] = self.journal.hand_ended_at(hand)
                at = ended_at[hand]
            else:
                at = t
            if at is None:
                break  # the hand is still running
            if at > now - self.broadcast_delay_s:
                self._release_at = at + self.broadcast_delay_s
                break
            due += 1
        else:
            if len(times) == 500:
                self._release_at = now  # more may be due: the next cycle goes on
        if due:
            events = [e.domain_event() for e in self.journal.events_after(start, limit=due)]
            taken = self.sink.publish_delayed(events)
            taken = len(events) if taken is None else taken
            if taken:
                self._delayed_upto = events[taken - 1].seq
                self.delayed_hand.add(events[:taken], stamp)
            if taken < len(events):
                self._release_at = now  # the publisher's pace: the rest in the next cycles

    def _publish_delayed_hand(self, now: float) -> None:
        """delayed/hand with what the feed has released since it was last sent, at most every
        DELAYED_HAND_INTERVAL_S (the publisher keeps the latest for a broker that is away)."""
        if now - self._delayed_hand_at >= self.DELAYED_HAND_INTERVAL_S and self._send_delayed_hand():
            self._delayed_hand_at = now

    def finish_delayed_hand(self) -> None:
        """At shutdown, before the publisher stops: delayed/hand with all the feed has released, the last second's
        release too, so that the retained copy an overlay gets while the table is down is the playback as far as
        it went."""
        if self.sink is not None and self.broadcast_delay_s and self.journal is not None:
            self._send_delayed_hand()

    def _send_delayed_hand(self) -> bool:
        hand = self.delayed_hand
        if not hand.changed:
            return False
        hand.changed = False
        self.sink.publish_delayed_hand(list(hand.events), hand.released, hand.released_before)
        return True

    def publish_backlog(self) -> int:
        """Start delivering the journaled events some feed has not had acknowledged, oldest first, at the
        publisher's pace (each :meth:`step` goes on with it). Returns how many there are.

        Subscribers may see an event twice (at least once); its seq lets them drop the copy.
        """
        self._start_delivery()
        count = self.backlog.end - self.backlog.next + 1 if self.backlog else 0
        if self.backlog and self._sink_connected():
            self._begin_backlog()
            self._send_backlog()
        return count

    def _start_delivery(self) -> None:
        """Once, before the first event goes out: acknowledgements count on from the journal's marks, and the
        events after the lowest mark of the event branches make the first backlog."""
        if self._delivery_started or self.journal is None:
            return
        self._delivery_started = True
        marks = self.journal.delivery_marks()
        if self.sink is not None:
            self.sink.resume(marks)
        first = min(marks.get("public", 0), marks.get("secure", 0)) + 1
        if first <= self.journal.last_seq():
            self.backlog.add(first, self.journal.last_seq())
        last = self.journal.last_event("journal")
        self._near_limit = last is not None and last.public.get("state") == "near_limit"
        self._snapshot_due = self.journal.last_seq() > 0  # the restored table, for subscribers that come now

    def _sink_connected(self) -> bool:
        return self.sink is None or self.sink.connected

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
        if not self.backlog or not self._sink_connected():
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

    def _check_journal_limit(self, now: float, record: StepRecord) -> None:
        """Raise a ``journal`` event once when the undelivered events near the journal's retention limit, and
        once when they are back below it. Journaled as an input, so a restart neither repeats nor loses it."""
        if now - self._limit_checked_at < self.JOURNAL_CHECK_S:
            return
        self._limit_checked_at = now
        journal = self.journal
        if now - self._pruned_at >= self.JOURNAL_PRUNE_S:
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
            return
        self._near_limit = state == "near_limit"
        rows, limit = journal.usage()
        undelivered = journal.slowest_undelivered()
        entry = journal_input(now, state, rows, undelivered, limit)
        record.add(entry, [journal_event(self.controller, now, entry[2])])
        if self._near_limit:
            log.warning("journal %s: %d events not acknowledged by the broker, near the limit of %d "
                        "([journal] retention_events); nothing is dropped, the file grows until the broker "
                        "takes them", journal.path, undelivered, limit)
        else:
            log.info("journal %s: back to %d events not acknowledged by the broker (limit %d)", journal.path,
                     undelivered, limit)

    def _write_journal(self, now: float) -> tuple[list[DomainEvent], list[tuple[str, str, dict]], tuple | None]:
        """What the writer has on disk now: its events and replies, and the newest snapshots taken with them.

        A full disk (an I/O error, another program's write lock) stops in the writer, not the table: the steps wait
        in memory, in order, and are tried again every ``JOURNAL_RETRY_S``; once the journal takes them they are
        published, late but whole.
        """
        events, replies, snapshots, error = self.writer.durable(now)
        if error is not None:
            self._journal_failed(now, str(error), error.remedy)
        elif self._journal_failure is not None and not self.writer.waiting:
            log.warning("journal %s written again after %.0f s: the events that waited are journaled and go out now",
                        self.journal.path, now - self._journal_failure[1])
            self._journal_failure = None
        return events, replies, snapshots

    def _snapshots_due(self, now: float, events: list[DomainEvent], wall: float | None) -> tuple[dict, dict] | None:
        """The public and secure snapshots, when they are due: after events, at most every SNAPSHOT_INTERVAL_S; a
        hand's end at once (the retained picture is what the table shows until the next hand, and a table that stops
        then must not leave a picture of the hand still running)."""
        if events:
            self._snapshot_due = True
        if not self._snapshot_due or (now - self._snapshot_at < self.SNAPSHOT_INTERVAL_S
                                      and not any(event.type == "hand_ended" for event in events)):
            return None
        public, secure = self.controller.snapshot(secure=False), self.controller.snapshot(secure=True)
        if wall is not None:
            public["t"] = secure["t"] = round(wall, 3)
        self._snapshot_due, self._snapshot_at = False, now
        return public, secure

    def close_journal(self, timeout_s: float = 5.0) -> None:
        """Commit what the writer still holds (at shutdown, before the journal closes)."""
        if self.writer is not None:
            self.writer.close(timeout_s)

    def _journal_failed(self, now: float, message: str, remedy: str) -> None:
        waiting = self.writer.waiting_events
        failure = self._journal_failure
        if failure is None:
            log.error("%s. Nothing more is published until the journal takes it; the table goes on reading, "
                      "keeps what it sees in memory and journals and publishes it by itself once it can "
                      "(a crash meanwhile loses it): %s", message, remedy)
            self._journal_failure = (message, now, now, now)
        elif now - failure[3] >= self.JOURNAL_REMIND_S:
            log.error("%s, for %.0f s now: %d events wait to be journaled and published", message, now - failure[1],
                      waiting)
            self._journal_failure = (message, failure[1], now, now)
        else:
            self._journal_failure = (message, failure[1], now, failure[3])

    def journal_state(self) -> dict:
        """The journal as diagnostics show it: ``ok``, or ``cannot_write`` with why, since when and what waits."""
        if self._journal_failure is None:
            return {"state": "ok"}
        message, since, _tried, _logged = self._journal_failure
        return {"state": "cannot_write", "error": message, "since": round(since, 3),
                "waiting_events": self.writer.waiting_events}

    def _deliver(self, events: list[DomainEvent]) -> None:
        """With a journal: record the broker's acknowledgements, publish this cycle's events live if the broker
        can take them now (or leave them to the backlog), then let the backlog go on."""
        for feed, seq in self.sink.take_acknowledged().items():
            self.writer.mark_delivered(feed, seq)  # kept until the journal takes it (a mark never goes back)
        connected = self._sink_connected()
        if events:
            if connected and self.sink.pending < self.LIVE_PENDING_LIMIT:
                self.sink.publish_events(events)
            else:
                self.backlog.add(events[0].seq, events[-1].seq)
        if connected and self.backlog:
            self._begin_backlog()
            self._send_backlog()
        self._backlog_delivered()

    def step(self, now: float, wall: float | None = None) -> list[DomainEvent]:
        """One cycle of the whole chain at table time ``now``; returns the domain events it produced.

        ``now`` is table time (rfid_table.service.timebase): every timer, debounce and delay runs on it. ``wall``, the
        room's clock, only stamps the cycle's events and snapshots (None: they carry the table time).
        With a journal, the cycle's inputs and events are committed to disk before anything is published.
        """
        record = StepRecord()
        self._start_delivery()
        replies = self._commands(now, record)
        if self.gpio is not None:
            self._gpio_inputs(now, record)
        for reader in self.readers:
            cycles = reader.poll(now)
            for device_event in reader.device_events():
                self._apply("device", device_event, self.controller.handle_device, device_input,
                            record)
            zone_events = []
            for cycle in cycles:
                self.diagnostics.count_cycle(cycle)
                zone_events += self.tracker.feed(cycle)
            # then the antennas of the cycle still being read that settle a card now (ZoneTracker.feed_antenna)
            for antenna, reads, t in reader.take_early_reads():
                zone_events += self.tracker.feed_antenna(reader.name, antenna, reads, t)
            for zone_event in zone_events:
                self._apply("zone", zone_event, self.controller.handle, zone_input, record)
            reader.watch_antennas(self.tracker.awaiting(reader.name))
        produced = self.controller.tick(now)
        if produced or self.controller.tick_changed:
            # a tick that changes nothing need not be journaled: the next input moves the clock
            record.add(tick_input(now), produced)
        if self.equity is not None:  # the worker's result for the spot as it still is: a journaled input
            result = self.equity.collect(self.controller, now, record.events)
            if result is not None:
                equity_input, event = result
                record.add(equity_input, [event])
        if self.journal is not None:
            self._check_journal_limit(now, record)
        events = journaled = record.events
        if wall is not None and events:
            events = [DomainEvent(e.seq, e.type, e.t, e.hand, e.public, e.secret, wall) for e in events]
            journaled = events
        snapshots = None
        if self.journal is not None:
            # a hand boundary: a restart starts from here, and the retention may drop the inputs before
            checkpoint = state_of(self.controller) if any(e.type == "hand_ended" for e in events) else None
            # The snapshots are taken now, with the step, and go out once it is on disk: they never show what
            # the journal does not hold.
            taken = self._snapshots_due(now, events, wall) if self.sink is not None else None
            if record.inputs or replies or taken:
                self.writer.submit(PendingStep(record.inputs, events, record.caused_by, checkpoint, replies, taken))
            journaled, replies, snapshots = self._write_journal(now)
        if self.gpio is not None:
            self._show_lights(now)
        for role, user, body in replies:  # answered once the command's effect is on disk
            try:
                self.sink.publish_reply(role, user, body)
            except Exception as exc:  # noqa: BLE001 - the last line of defence: the command itself is journaled
                self._input_failed("command", f"reply to {role}/{user}", exc)
        if self.sink is not None:
            if self.journal is not None:
                self._deliver(journaled)
            else:
                if events:
                    self.sink.publish_events(events)  # no journal: paho's memory is all there is
                snapshots = self._snapshots_due(now, events, wall)
            if snapshots is not None:
                self.sink.publish_snapshots(*snapshots)
            if self.broadcast_delay_s and self.journal is not None:
                if self._sink_connected():
                    self._release_delayed(now, now if wall is None else wall)
                self._publish_delayed_hand(now)
            delivery = self.sink.delivery_report()
            report = self.diagnostics.report(now, self.readers, self.tracker, self.controller, self.gpio, delivery)
            if report is not None:
                if wall is not None:
                    report["t"] = round(wall, 3)  # a stamp, like the events'
                if self.journal is not None:
                    report["journal"] = {**self.journal_state(), **self.writer.commit_report()}
                self.sink.publish_diagnostics(report)
        if self.equity is not None:  # the spot after this cycle, once its events are out
            self.equity.offer(self.controller)
        for event in events:
            if event.type == "hand_ended":
                log.info("hand %s ended: board %s, live seats %s", event.hand,
                         " ".join(event.public["board"]) or "-", event.public["live_seats"])
        return events


class StopFlag:
    """Set by SIGTERM / SIGINT so the loop can finish its cycle and shut down cleanly."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.event.set())

    def is_set(self) -> bool:
        return self.event.is_set()
