"""The table's pipeline: readers → zone tracker (HAL) → controller → journal → publisher.

Data flows one way. Each :meth:`TablePipeline.step` runs four stages:

1. **intake** (:mod:`rfid_table.service.intake`): the console's and the network's commands, the GPIO's sensors and
   buttons, the readers' cycles through the zone tracker — each made an input record
   (:mod:`rfid_table.service.inputs`);
2. **decide**: each input applied to the controller, in order, with time passing and the table's own inputs (the
   equity worker's result, the journal's state) after them; what each caused goes into the step's record;
3. **persist** (:mod:`rfid_table.service.persist`): the step on disk before anything of it goes out;
4. **deliver** (:mod:`rfid_table.service.delivery`): what is on disk to the sink — events, snapshots, replies, the
   delayed feed, diagnostics — and the lights.

A table without a journal, a sink, GPIO or equity gets a stage that does nothing for it (``NoJournal``,
``NoDelivery``, ``NoGpio``, ``NoEquity``), chosen once here. The loops that call the pipeline are elsewhere: the
daemon's in :mod:`rfid_table.service.run`, the simulator's in :mod:`rfid_table.devtools.simulate`.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import TYPE_CHECKING

from controller import DomainEvent
from controller.game import GameController
from hal.reader_backend import ReaderBackend
from hal.zones import ZoneTracker
from rfid_table.config.table import TableConfig
from rfid_table.service.commands import CommandError, CommandGate, loggable
from rfid_table.service.delayed_feed import DelayedFeed, NoDelayedFeed
from rfid_table.service.live_feed import LiveFeed
from rfid_table.service.delivery import Backlog, Delivery, JournaledDelivery, NoDelivery, TableReport
from rfid_table.service.diagnostics import DiagnosticsCollector
from rfid_table.service.equity_worker import EquityWorker
from rfid_table.service.inputs import CommandInput, EventInput, SensorInput, TickInput, input_of
from rfid_table.service.intake import CommandIntake, Console, GpioIntake, NoEquity, NoGpio, ReaderIntake
from rfid_table.service.journal import Journal
from rfid_table.service.journal_writer import Reply, StepRecord
from rfid_table.service.persist import Durable, JournalStage, NoJournal
from rfid_table.service.sink import Sink
from rfid_table.service.table_gpio import ButtonCommand, GpioConsole, TableGpio, TableLights

if TYPE_CHECKING:
    from rfid_table.service.publisher import ReceivedCommand

log = logging.getLogger(__name__)

# The reply to a command whose handling raised: it was not applied.
INTERNAL_ERROR = {"id": None, "ok": False, "field": "command",
                  "error": "the table could not handle this command (an internal error, logged): it was not applied"}


class InputFailures:
    """The last line of defence: an input whose handling raised is skipped and counted (``input_errors`` in
    diagnostics); the first failure of each kind and exception goes to the log, escaped on one line, with its
    traceback. What is journaled stays journaled, and the table goes on."""

    def __init__(self, diagnostics: DiagnosticsCollector):
        self.diagnostics = diagnostics
        self._logged: set[tuple[str, str]] = set()  # (input kind, exception) already in the log

    def skipped(self, kind: str, what: object, exc: Exception) -> None:
        self.diagnostics.count_input_error(kind, f"{type(exc).__name__}: {loggable(exc)}"[:200])
        key = (kind, type(exc).__name__)
        if key in self._logged:
            return
        self._logged.add(key)
        log.error("a %s input raised %s and was skipped; the table goes on (input: %s; %s)", kind,
                  type(exc).__name__, loggable(what)[:300],
                  loggable(logging.Formatter().formatException((type(exc), exc, exc.__traceback__))))


class TablePipeline:
    def __init__(self, config: TableConfig, readers: list[ReaderBackend], sink: Sink | None,
                 journal: Journal | None = None, gpio: TableGpio | None = None,
                 command_gate: CommandGate | None = None, group_commit: bool = False):
        """``sink`` None: nothing is published (a simulation without a broker); ``journal`` None: nothing is
        journaled; ``gpio`` None: no seat sensors, buttons or lights. ``group_commit``: the journal's commits in a
        thread of their own (rfid_table/service/journal_writer.py)."""
        self.readers = readers
        self.tracker = ZoneTracker(config.antenna_zones(), config.debounce_by_zone(),
                                   min_rssi_dbm=config.min_rssi_dbm, order_window_s=config.order_window_s)
        self.controller = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
        self.diagnostics = DiagnosticsCollector()
        self.gpio = gpio  # the hardware, as given (its owner closes it)
        self.failures = InputFailures(self.diagnostics)
        # intake
        self.console = Console()
        base = f"{config.mqtt.topic_prefix}/{config.table_id}"
        self.command_intake = CommandIntake(command_gate or CommandGate(base), base, self.diagnostics)
        self.gpio_intake = GpioIntake(gpio) if gpio is not None else NoGpio()
        self.reader_intake = ReaderIntake(readers, self.tracker, self.diagnostics, config.zones,
                                          expect_bets=bool(config.debounce["chips"].still_after_reads))
        # equity for the broadcast, computed in a process of its own (rfid_table/service/equity_worker.py)
        self.equity = (EquityWorker(config.game.hole_cards, config.game.omaha, config.game.hi_lo,
                                    config.game.games().games)
                       if sink is not None and config.broadcast_equity else NoEquity())
        # persist: each cycle's step goes to the journal's writer; only what it has on disk goes on
        self.persist = JournalStage(journal, group_commit) if journal is not None else NoJournal()
        self.writer = self.persist.writer  # for the loop, to wake when a grouped commit lands (None: no journal)
        # deliver
        self.backlog = Backlog()
        self.delivery = self._delivery(config, sink, journal)
        self._started = False

    def _delivery(self, config: TableConfig, sink: Sink | None, journal: Journal | None
                  ) -> Delivery | NoDelivery:
        if sink is None:
            return NoDelivery()
        report = TableReport(self.diagnostics, self.readers, self.tracker, self.gpio, self.persist.figures)
        live = LiveFeed(config.broadcast_reveal) if config.broadcast_reveal != "never" else None
        if journal is None or self.writer is None:  # the writer is there with the journal
            return Delivery(sink, report, live)
        delayed = (DelayedFeed(journal, sink, config.broadcast_delay_s, config.broadcast_release,
                               config.broadcast_board_offset_s)
                   if config.broadcast_delay_s else NoDelayedFeed())
        return JournaledDelivery(sink, report, journal, self.writer, self.backlog, delayed, live)

    # ---- for the loops ------------------------------------------------------------------------------------

    def restore(self, now: float) -> int:
        """Rebuild the controller from the journal; returns how many inputs were replayed.

        The HAL starts with the controller's picture of the table, so a card that was taken away while the
        daemon was down leaves after the usual absence time instead of staying on the table for ever.
        """
        self.controller, replayed = self.persist.restore(self.controller)
        self.tracker.seed(self.controller.on_table(), now)
        if replayed.inputs:
            log.info("restored hand %s (seq %s) from %d journaled inputs", self.controller.hand,
                     self.controller.seq, replayed.inputs)
        return replayed.inputs

    def submit(self, body: dict) -> None:
        """A command from the table itself (a console button, the simulated floor): applied and journaled in the
        next cycle like one from MQTT, without a reply. ``body`` has the shape of ``AdmittedCommand.as_input()``."""
        self.console.submit(body)

    def publish_backlog(self) -> int:
        """Start delivering the journaled events some feed has not had acknowledged, oldest first, at the
        publisher's pace (each :meth:`step` goes on with it). Returns how many there are.

        Subscribers may see an event twice (at least once); its seq lets them drop the copy.
        """
        self._start()
        return self.delivery.publish_backlog()

    def journal_state(self) -> dict:
        """The journal as diagnostics show it: ``ok``, or ``cannot_write`` with why, since when and what waits."""
        return self.persist.state()

    def close_journal(self, timeout_s: float = 5.0) -> None:
        """Commit what the writer still holds (at shutdown, before the journal closes)."""
        self.persist.close(timeout_s)

    def finish_delayed_hand(self) -> None:
        """At shutdown, before the publisher stops: delayed/hand with all the feed has released, the last second's
        release too, so that the retained copy an overlay gets while the table is down is the playback as far as
        it went."""
        self.delivery.finish()

    # ---- the step -----------------------------------------------------------------------------------------

    def step(self, now: float, wall: float | None = None) -> list[DomainEvent]:
        """One cycle of the whole chain at table time ``now``; returns the domain events it produced.

        ``now`` is table time (rfid_table.service.timebase): every timer, debounce and delay runs on it. ``wall``, the
        room's clock, only stamps the cycle's events and snapshots (None: they carry the table time).
        With a journal, the cycle's inputs and events are committed to disk before anything is published.
        """
        self._start()
        record, replies = self._decide(now)
        events = record.stamped(wall)
        # taken now, with the step, and sent once it is on disk: they never show what the journal does not hold
        snapshots = self.delivery.snapshots_due(now, events, wall, self.controller)
        durable = self.persist.write(now, record, events, replies, snapshots, self.controller)
        self.gpio_intake.show(now, self._lights)
        self._deliver(now, wall, durable)
        self.equity.offer(self.controller)  # the spot after this cycle, once its events are out
        for event in events:
            if event.type == "hand_ended":
                log.info("hand %s ended: board %s, live seats %s", event.hand,
                         " ".join(event.public["board"]) or "-", event.public["live_seats"])
        return events

    def _start(self) -> None:
        """Once, before the first step or backlog: the journal's stages pick up where the last run left off."""
        if self._started:
            return
        self._started = True
        self.persist.start()
        self.delivery.start()

    # ---- intake → decide ----------------------------------------------------------------------------------

    def _decide(self, now: float) -> tuple[StepRecord, list[Reply]]:
        """Every source's inputs applied to the controller, source by source: the console's commands, the
        network's, the GPIO's, the readers'; then time passes, and the table's own inputs follow. A source is taken
        in once the ones before it are decided (a console button's seat to act is the one the commands left)."""
        record = StepRecord()
        replies: list[Reply] = []
        self._console_commands(now, record)
        self._network_commands(now, record, replies)
        self._gpio_inputs(now, record)
        self.reader_intake.expect(self.controller, now)  # where the table expects a card, as the commands left it
        for reading in self.reader_intake.take(now):
            self._apply(reading, record, reading.kind)
        self._tick(now, record)
        self._table_inputs(now, record)
        return record, replies

    def _tick(self, now: float, record: StepRecord) -> None:
        """Time passes (timers: the action clock, a bet settling, a hand's end)."""
        tick = TickInput(now)
        produced = tick.apply(self.controller)
        if produced or self.controller.tick_changed:
            # a tick that changes nothing need not be journaled: the next input moves the clock
            record.add(tick, produced)

    def _table_inputs(self, now: float, record: StepRecord) -> None:
        """The table's own inputs, numbered like the controller's events: the equity worker's result for the spot
        as it still is, then the journal's state when it changed."""
        result = self.equity.collect(self.controller, now, record.events)
        if result is not None:
            row, event = result  # applied by the worker's side already: the event is numbered
            record.add(input_of(*row), [event])
        for state in self.persist.inputs(now):
            record.add(state, state.apply(self.controller))

    def _apply(self, item: EventInput, record: StepRecord, kind: str) -> None:
        """One input of the HAL through the controller, into the record with the events it caused; an input
        whose handling raises is skipped (:class:`InputFailures`)."""
        try:
            produced = item.apply(self.controller)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            self.failures.skipped(kind, item.event, exc)
            return
        record.add(item, produced)

    def _console_commands(self, now: float, record: StepRecord) -> None:
        """The commands the table's console submitted since the last cycle: applied, refusals logged."""
        for body in self.console.take():
            command = CommandInput(now, body)
            try:
                produced, refusal = command.try_apply(self.controller)
            except Exception as exc:  # noqa: BLE001 - the last line of defence
                self.failures.skipped("console", body, exc)
                continue
            if refusal is None:
                record.add(command, produced)
            else:
                log.warning("console command %s refused: %s", body.get("command"), refusal)

    def _network_commands(self, now: float, record: StepRecord, replies: list[Reply]) -> None:
        """The commands received since the last cycle: admitted, applied, each answered."""
        for received in self.delivery.commands():
            try:
                reply = self._network_command(received, now, record)
            except Exception as exc:  # noqa: BLE001 - the last line of defence: skipped, counted, logged once
                self.failures.skipped("command", received.topic, exc)
                who = self.command_intake.sender(received.topic)
                reply = who and (*who, dict(INTERNAL_ERROR))
            if reply:
                replies.append(reply)

    def _network_command(self, received: ReceivedCommand, now: float, record: StepRecord) -> Reply | None:
        try:
            admitted = self.command_intake.admit(received, self.controller)
        except CommandError as exc:
            return self.command_intake.refused(received, exc)
        command = CommandInput(now, admitted.as_input())
        produced, refusal = command.try_apply(self.controller)
        if refusal is None:
            self.diagnostics.count_command("accepted")
            record.add(command, produced)
            return admitted.role, admitted.user, {"id": admitted.id, "ok": True,
                                                  "seq": produced[-1].seq if produced else None}
        self.diagnostics.count_command("not_allowed")
        return admitted.role, admitted.user, {"id": admitted.id, "ok": False, "field": "command", "error": refusal}

    def _gpio_inputs(self, now: float, record: StepRecord) -> None:
        """The seat sensors' changes (judged by the conduct rules) and the console's button presses (console
        commands for the next cycle, completed from the table as the inputs before them left it)."""
        for item in self.gpio_intake.take(now, self.controller):
            if isinstance(item, SensorInput):
                self._apply(item, record, "gpio")
                continue
            self._press(item)

    def _press(self, press: ButtonCommand) -> None:
        body, problem = GpioConsole.command(press, self.controller.seat_to_act(), self.controller.floor_pending())
        if problem is not None:
            log.warning("console button %s ignored: %s", press.button, problem)
            return
        self.submit(body)

    # ---- deliver ------------------------------------------------------------------------------------------

    def _deliver(self, now: float, wall: float | None, durable: Durable) -> None:
        """What is on disk to the sink: the replies (a command is answered once its effect is on disk), then the
        events, snapshots, delayed feed and diagnostics."""
        for role, user, body in durable.replies:
            try:
                self.delivery.reply(role, user, body)
            except Exception as exc:  # noqa: BLE001 - the last line of defence: the command itself is journaled
                self.failures.skipped("command", f"reply to {role}/{user}", exc)
        self.delivery.deliver(now, wall, durable.events, durable.snapshots, self.controller)

    def _lights(self, now: float) -> TableLights:
        """What the seat lights and the status light show, from the controller's state."""
        controller = self.controller
        link_down = not all(r.link_up and r.delivering for r in self.readers)  # either way, no cards seen
        to_act, clock_lights = controller.turn_lights(now)
        return TableLights(to_act=to_act, clock=clock_lights, link_down=link_down,
                           journal_failing=self.persist.failing, awaiting_floor=bool(controller.floor_pending()),
                           deck_not_registered=controller.deck_unregistered, broker_refuses=self.delivery.refusing,
                           game_stopped=controller.game_stopped)


class StopFlag:
    """Set by SIGTERM / SIGINT so the loop can finish its cycle and shut down cleanly."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.event.set())

    def is_set(self) -> bool:
        return self.event.is_set()
