"""Run the daemon against the simulated table: the same pipeline as on hardware, fed by a virtual dealer.

Two ways for the simulated readers to reach the daemon:

* ``link="pty"`` (the default): each reader is the firmware emulator speaking the wire protocol on a
  pseudo-terminal, and the daemon reads it through pyserial, the link layer and the firmware reader — every
  byte path of a real table, with optional RF noise and injected link faults;
* ``link="direct"``: the HAL reads the simulated field in-process (fast, for the controller's own tests);
* ``link="firmware"``: each reader is the real reader firmware (``firmware/``) in the MicroPython unix port on
  the register-level PN5180 board model (``sim.pn5180``), on a pseudo-terminal; it runs on the wall clock;
* ``link="metratec"`` or ``link="feig"``: each reader is an emulator of a reader one buys (``sim.metratec``,
  ``sim.feig``) speaking its maker's protocol on a pseudo-terminal, read through the backend a table of such
  readers uses (``firmware_bridge.metratec``, ``firmware_bridge.feig``); it runs on the wall clock, and between
  the table's cycles the daemon's own wait (``HardwareWait``) lets the link answer the reader as it talks.

The dealer, the emulators and the daemon run on one table clock in lock step, so a seed replays a run
exactly at any speed.
"""

import argparse
import dataclasses
import logging
import random
import secrets
import select
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hal.firmware_reader import PARK_EVERY_MS, bought_reader, hint_every_of, serial_reader
from hal.pn5180_reader import dwell_schedule
from hal.zone_names import Zone
from hal.reader_backend import ReaderBackend
from hal.readers import SimulatedReader
from controller.rotation import CHANGE_HANDS
from controller.rules import profile as rule_profile
from rfid_table.config.table import ENGINE_VARIANTS, TableConfig
from rfid_table.ops.broker_login import EX_NOPERM, probe_login
from rfid_table.service import systemd
from rfid_table.service.daemon import StopFlag, TablePipeline
from rfid_table.service.sink import Sink
from rfid_table.service.table_gpio import TableGpio
from rfid_table.service.timebase import TableClock, system_clock
from rfid_table.service.journal import Journal
from rfid_table.service.publisher import MqttPublisher
from rfid_table.service.run import HardwareWait, close_journal, open_journal, restore_or_exit
from sim.betting_dealer import BettingDealer
from sim.conduct import ConductInjector, ConductSimOptions, simulated_pin_map
from sim.dealer import DealerSettings, SimDealer
from sim.field import TableField
from sim.firmware import Fault, FirmwareEmulator
from sim.noise import NoiseModel
from sim.players import PLAUSIBLE

log = logging.getLogger(__name__)
command_log = logging.getLogger("rfid_table")  # the command's own messages, named as rfid-table run's
MAX_BACKLOG = 500  # messages
LINK_FAULTS = (Fault.BIT_FLIP, Fault.DROP, Fault.DUPLICATE, Fault.TRUNCATE, Fault.GARBAGE)
PTY_WAIT_S = 0.05  # how long to wait for bytes in flight through the pty before stepping on
# --link: the table firmware's emulator, the HAL in-process, and the readers that run on the wall clock (what they are)
LINKS = ("pty", "direct", "firmware", "metratec", "feig", "pn5180")
SIMULATED_FLOOR = "floor/simulator"  # how the table signs the simulated floor's commands (role/user)
REAL_TIME_LINKS = {"firmware": "firmware on the modelled board", "metratec": "emulator of a Metratec reader",
                   "feig": "emulator of a Feig reader", "pn5180": "PN5180 backend of a Pi on the modelled board"}



def run_cycles(
    step: Callable[[float, float], object],
    cycle_s: float,
    stop: StopFlag,
    speed: float = 1.0,
    before_step: Callable[[float], bool] | None = None,
    idle: Callable[[float], None] | None = None,
    clock: TableClock | None = None,
) -> None:
    """Call ``step(t, wall)`` (a pipeline's) every ``cycle_s`` of simulated table time until ``stop`` (or
    ``before_step`` returns False).

    Table time starts at ``clock``'s (continuing a journal's) and runs ``speed`` times faster than the monotonic
    clock; ``speed=0`` runs as fast as possible (simulation only: a real reader sets its own pace). The events'
    wall stamps run with it from the wall time at the start, so a fast simulation reads like a real table. Time
    between cycles goes to ``idle`` (the publisher's network work) or is slept.
    """
    clock = clock or TableClock()
    start_mono = time.monotonic()
    start_table = t = clock.now()
    start_wall = clock.wall()
    while not stop.is_set():
        if before_step is not None and not before_step(t):
            break
        step(t, start_wall + (t - start_table))
        t += cycle_s
        delay = start_mono + (t - start_table) / speed - time.monotonic() if speed > 0 else 0.0
        if idle is not None:
            idle(max(delay, 0.0))
        elif delay > 0:
            stop.event.wait(delay)


@dataclass(frozen=True)
class SimOptions:
    hands: int | None = 10  # None: play until stopped
    seed: int | None = None
    speed: float = 1.0  # table time per wall time; 0 = as fast as possible
    pace_s: float = 1.0  # seconds a typical dealer or player action takes
    players: int | None = None  # seats 1..N occupied; None: every seat
    fold_chance: float = 0.3
    link: str = "pty"  # "pty": firmware emulator over a pseudo-terminal; "direct": in-process; "firmware"
    noise: float = 0.0  # realistic RF noise mix (missed reads, cross reads, flicker, stack limit); pty only
    # Each effect on its own (override the mix): probabilities per tag and cycle, tags per antenna and cycle.
    missed_read: float | None = None
    cross_read: float | None = None
    flicker: float | None = None
    stack_limit: int | None = None
    faults_per_minute: float = 0.0  # injected link faults (bit flips, drops, duplicates, truncation, garbage)
    # Conduct at the seats (sim/conduct.py), on the simulated GPIO: device episodes and absences per occupied seat
    # per hour of table time, and chances per seat and hand. Any of them opens the simulated GPIO (with the
    # table's [gpio] pin map, or every sensor, button and light when it has none).
    devices_per_hour: float = 0.0
    devices_per_hand: float = 0.0
    absences_per_hour: float = 0.0
    absences_per_hand: float = 0.0
    gpio: bool = False  # the simulated GPIO even without injected conduct (buttons pressed by tests, lights)
    # The dealer's errors: the chance per deal of a dealing error (sim.dealer for tables without chips: exposed,
    # extra and misplaced cards and a premature board; sim.betting_dealer for tables with chips: exposed cards,
    # half of them a misdeal).
    dealer_errors: float = 0.0
    # On a chip table: the chance that players all-in with board cards to come run it twice (CA Actions 8).
    run_it_twice: float = 0.0
    # On a chip table: how the players decide (sim.players): "plausible" from their cards and position, or
    # "random" (many all-ins: stress runs, and the seeded streams that compare with earlier runs)
    players_style: str = PLAUSIBLE
    # The simulated floor answers what waits for it this long after it was reported; None: nobody answers (a floor
    # console or a test does).
    floor_answer_s: float | None = None

    def conduct(self) -> ConductSimOptions:
        return ConductSimOptions(device_per_hour=self.devices_per_hour, device_per_hand=self.devices_per_hand,
                                 absence_per_hour=self.absences_per_hour, absence_per_hand=self.absences_per_hand,
                                 seed=self.seed)


    def noise_model(self) -> NoiseModel | None:
        """The RF noise the emulated readers add: the realistic mix of ``noise``, any single effect overridden."""
        effects = {"missed_read": self.missed_read, "cross_read": self.cross_read, "flicker": self.flicker,
                   "stack_limit": self.stack_limit}
        if not self.noise and all(v is None for v in effects.values()):
            return None
        mix = NoiseModel.realistic(self.noise, seed=self.seed or 0) if self.noise else NoiseModel(seed=self.seed or 0)
        chosen = {"missed_read": mix.missed_read, "cross_read": mix.cross_read, "flicker": mix.flicker,
                  "stack_limit": mix.stack_limit}
        chosen.update({k: v for k, v in effects.items() if v is not None})
        return NoiseModel(**chosen, seed=self.seed or 0)


class SimulatedTable:
    """The virtual table, its readers and the daemon's pipeline, ready to step."""

    def __init__(self, config: TableConfig, options: SimOptions, sink: Sink | None, journal: Journal | None = None,
                 group_commit: bool = False):
        most = min(config.seats, config.game.max_players)  # the seats, or fewer where the variant allows fewer
        players = list(range(1, (options.players or most) + 1))
        if not 2 <= len(players) <= most:
            raise ValueError(f"--players must be from 2 to {most} (the table's seats"
                             f"{', [game] max_players' if most < config.seats else ''}), not {len(players)}")
        if options.link not in LINKS:
            raise ValueError(f"--link must be one of {', '.join(LINKS)}, not {options.link!r}")
        if options.link in REAL_TIME_LINKS and (options.speed != 1 or options.noise_model()
                                                or options.faults_per_minute):
            raise ValueError(f"--link {options.link} runs the reader {REAL_TIME_LINKS[options.link]} in real time: "
                             "use --speed 1, without --noise or --faults")
        if options.link == "direct" and (options.noise_model() or options.faults_per_minute):
            raise ValueError("--noise and --faults need the firmware emulator: use --link pty")
        try:
            conduct = options.conduct()
        except ValueError as exc:  # named as the command's options
            message = str(exc)
            for field, option in (("device_per_hour", "--devices-per-hour"), ("device_per_hand", "--devices-per-hand"),
                                  ("absence_per_hour", "--absences-per-hour"),
                                  ("absence_per_hand", "--absences-per-hand")):
                message = message.replace(f"{field}:", f"{option}:")
            raise ValueError(message) from None
        self.config = config
        self.options = options
        self.field = TableField(config.zones)
        if not 0.0 <= options.dealer_errors <= 1.0:
            raise ValueError(f"--dealer-errors must be a chance per deal from 0 to 1, not {options.dealer_errors}")
        exposed_procedure = rule_profile(config.game.rules).exposed_hole_card
        if config.chips is not None:  # the players bet with the table's chips
            game = config.game
            self.dealer = BettingDealer(
                self.field, config.decks[config.active_deck], config.chips.chips, players,
                variant=ENGINE_VARIANTS[game.variant], blinds=(game.small_blind, game.big_blind), ante=game.ante,
                command=self._floor_command, pace_s=options.pace_s, seed=options.seed,
                error_rate=options.dealer_errors, exposed_procedure=exposed_procedure,
                run_it_twice=options.run_it_twice, hand_over_s=table_hand_over_s(config),
                read_s=table_read_s(config), players_style=options.players_style,
                games=game.games() if game.rotation and game.change == CHANGE_HANDS else None,
                stud=(game.bring_in, game.small_bet, game.big_bet) if game.stud else None, rules=game.rules)
        else:
            each = options.dealer_errors / 4  # the errors a single deck can make, equally often
            self.dealer = SimDealer(
                self.field,
                config.decks[config.active_deck],
                DealerSettings(players, config.game.hole_cards, options.pace_s, options.fold_chance,
                               exposed_rate=each, extra_card_rate=each, wrong_seat_rate=each,
                               premature_board_rate=each, exposed_procedure=exposed_procedure,
                               exposed_by=config.exposed_by, hand_over_s=table_hand_over_s(config),
                               stud=config.game.stud,
                               games=config.game.games() if config.game.rotation
                               and config.game.change == CHANGE_HANDS else None),
                options.seed,
            )
        self._floor_answers: list[tuple[float, int, str]] = []  # (table time due, seq, confirm or override)
        self.emulators: list[FirmwareEmulator] = []
        self.modelled: list = []  # sim.pn5180.ModelledReader, with link="firmware"
        self._links_dir: tempfile.TemporaryDirectory | None = None
        self._rng = random.Random(options.seed)
        readers = [self._reader(r) for r in config.readers.values()]
        self.gpio: TableGpio | None = None
        self.injector: ConductInjector | None = None
        self._t = 0.0  # the table time of the cycle under way (the simulated pins' clock)
        if config.gpio is not None or conduct.enabled or options.gpio:
            self.gpio = TableGpio(config.gpio or simulated_pin_map(config.seats), "sim", clock=lambda: self._t)
            self.injector = ConductInjector(self.gpio.backend, players, conduct)
        self.pipeline = TablePipeline(config, readers, sink, journal, gpio=self.gpio, group_commit=group_commit)
        self.cycle_s = min(r.cycle_s for r in config.readers.values())
        self._moves = self.dealer.hands(options.hands)
        self._next = next(self._moves, None)
        self._due: float | None = None

    def _floor_command(self, body: dict) -> None:
        """The simulated floor's input (the stacks it counted), entered as the table's console would."""
        self.pipeline.submit({**body, "role": "floor", "user": "simulator"})

    def _reader(self, settings) -> ReaderBackend:
        if self.options.link == "direct":
            return SimulatedReader(settings.name, settings.antennas, self.field)
        if self.options.link == "pn5180":
            from sim.spidev_model import modelled_pi_reader  # noqa: PLC0415 (only when asked)

            return modelled_pi_reader(self.config, settings, self.field)
        if self._links_dir is None:
            self._links_dir = tempfile.TemporaryDirectory(prefix="rfid-table-sim-")
        if self.options.link == "firmware":
            from sim.pn5180 import ModelledReader, table_firmware_config  # noqa: PLC0415 (only when asked)

            firmware = table_firmware_config(self.config, settings.name, settings.antennas)
            device = ModelledReader(self.field, reader=settings.name, config=firmware,
                                    link_path=Path(self._links_dir.name) / f"reader-{settings.name}")
            self.modelled.append(device)
            # told what comes next and parked as `rfid-table run` does a reader whose schedule it is given
            # (docs/configuration.md "A reader told what comes next")
            return serial_reader(settings.name, device.path, antennas=settings.antennas, cycle_s=settings.cycle_s,
                                 dwells=dwell_schedule(self.config.zones, settings.name, settings.antennas),
                                 hint_every=hint_every_of(self.config.zones, settings.name),
                                 front_ends=[front_end["antennas"] for front_end in firmware["frontends"]],
                                 park_every_ms=PARK_EVERY_MS)
        if self.options.link in ("metratec", "feig"):
            return self._bought_reader(settings)
        noise = self.options.noise_model()
        emulator = FirmwareEmulator(
            self.field, reader=settings.name, antenna_count=settings.antennas, cycle_s=settings.cycle_s,
            noise=noise, link_path=Path(self._links_dir.name) / f"reader-{settings.name}",
            serial=f"SIM-{settings.name}", seed=self.options.seed or 0)
        self.emulators.append(emulator)
        return serial_reader(settings.name, emulator.path, antennas=settings.antennas, cycle_s=settings.cycle_s)

    def _bought_reader(self, settings) -> ReaderBackend:
        """The reader ``settings`` as an emulator of a reader one buys (``--link metratec`` or ``feig``), on a
        pseudo-terminal, and the backend a table of them uses, on its default channels."""
        import importlib  # noqa: PLC0415 (only when asked)

        kind = self.options.link
        protocol = importlib.import_module(f"firmware_bridge.{kind}")
        emulators = importlib.import_module(f"sim.{kind}")
        # a table of such readers keeps its own channels and line speed; another table takes the reader's defaults
        configured = settings.backend == kind
        channels = ([protocol.parse_channel(text) for text in settings.link["channels"]] if configured
                    else protocol.default_channels(settings.antennas))
        baudrate = settings.link.get("baudrate", protocol.DEFAULT_BAUDRATE) if configured else protocol.DEFAULT_BAUDRATE
        path = Path(self._links_dir.name) / f"reader-{settings.name}"
        emulator_class = emulators.MetratecEmulator if kind == "metratec" else emulators.FeigEmulator
        bus = {"bus_address": settings.link["bus_address"]} if configured and "bus_address" in settings.link else {}
        options = {"baudrate": baudrate, **bus} if kind == "feig" else {}
        # each reader a serial of its own, written as the maker's are (Metratec: digits; Feig: a 32-bit device ID)
        code = zlib.crc32(settings.name.encode())
        serial = f"{code:08X}" if kind == "feig" else f"{code % 10**10:010d}"
        device = emulator_class(self.field, reader=settings.name, antennas=settings.antennas, channels=channels,
                                link_path=path, serial=serial, seed=self.options.seed or 0, **options)
        device.start()  # on the wall clock, as a reader on its cable
        self.modelled.append(device)
        link = {"port": str(path), "baudrate": baudrate, "channels": [str(c) for c in channels], **bus}
        return bought_reader(settings.name, kind, link, settings.antennas, settings.cycle_s)

    def advance(self, t: float) -> bool:
        """Apply the dealer's moves due by table time ``t``; False once the last hand is over."""
        while self._next is not None:
            if self._due is None:
                self._due = t + self._next.delay_s
            if self._due > t:
                break
            log.debug("%s", self._next.describe)
            self._next.apply()
            if self._next.command is not None:  # the dealer's console input made with the move
                self._floor_command(self._next.command)
            self._next = next(self._moves, None)
            self._due = None if self._next is None else self._due + self._next.delay_s
        return self._next is not None or self.pipeline.controller.in_hand

    def step(self, t: float, wall: float | None = None) -> list:
        """One cycle at table time ``t`` (``wall`` stamps its events): the readers (emulated firmware) report,
        the seat sensors change as the simulated players do, the daemon reads."""
        self._t = t
        if self.injector is not None:
            self.injector.start(t)  # the players sit down (once)
            self.injector.advance(t)
        for emulator, reader in zip(self.emulators, self.pipeline.readers):
            if self.options.faults_per_minute and self._rng.random() < self.options.faults_per_minute * self.cycle_s / 60:
                emulator.inject(self._rng.choice(LINK_FAULTS))
            sent = emulator.stats.bytes_sent
            emulator.step(t)
            if emulator.stats.bytes_sent != sent:
                _wait_readable(reader.link.transport)
        written = [reader.link.bytes_sent for reader in self.pipeline.readers if reader.link is not None]
        events = self.pipeline.step(t, wall)
        if self.injector is not None:
            for event in events:
                if event.type == "hand_started":
                    self.injector.hand_started(event.t)
        if self.options.floor_answer_s is not None:
            self._answer_the_floor(t, events)
        if isinstance(self.dealer, BettingDealer):  # what a floor counted at the table, its players now hold
            for event in events:
                if event.type == "stacks_set" and event.public.get("by") != SIMULATED_FLOOR:
                    self.dealer.floor_counted({int(seat): amount for seat, amount in event.public["stacks"].items()})
        for emulator, reader, before in zip(self.emulators, self.pipeline.readers, written):
            if reader.link.bytes_sent != before and emulator.master_fd is not None:
                _wait_fd(emulator.master_fd)  # a command is on its way to the reader
        return events

    def _answer_the_floor(self, t: float, events: list) -> None:
        """The simulated floor comes to the table and answers each ruling that waits for it: it confirms the
        dealing rulings, and overrides the others (the simulated players play on as dealt, whatever the seat
        sensors saw, so the floor lets them)."""
        self._floor_answers += [(t + self.options.floor_answer_s, e.seq,
                                 "confirm" if e.type == "irregular_card" else "override")
                                for e in events if e.public.get("needs_floor")]
        while self._floor_answers and self._floor_answers[0][0] <= t:
            _, seq, answer = self._floor_answers.pop(0)
            self._floor_command({"command": answer, "irregularity": seq, "note": "simulated floor"})

    def run(self, stop: StopFlag, publisher: MqttPublisher | None = None, clock: TableClock | None = None) -> None:
        """Play until the last hand is over, giving the publisher the time between cycles. A table running
        faster than real time pauses while many messages still wait for the broker, so memory stays bounded."""

        def before_step(t: float) -> bool:
            while publisher is not None and publisher.pending > MAX_BACKLOG and not stop.is_set():
                publisher.service(0.005)
            return self.advance(t)

        idle = publisher.service if publisher is not None else None
        if publisher is not None and self.options.link in ("metratec", "feig"):
            # a reader that answers each command: the link must answer it as it talks, not once a cycle
            idle = self._talking(publisher, clock or TableClock())
        try:
            run_cycles(self.step, self.cycle_s, stop, self.options.speed, before_step=before_step,
                       idle=idle, clock=clock)
        finally:
            self.pipeline.finish_delayed_hand()  # before the caller stops the publisher
            self.close()

    def _talking(self, publisher: MqttPublisher, clock: TableClock) -> Callable[[float], None]:
        """The time between the table's cycles, spent as the daemon spends it (``HardwareWait``): the broker's
        network work, and each reader's answers taken in, and the next command sent, as they arrive."""
        wait = HardwareWait(self.pipeline.readers, publisher, self.pipeline.writer, clock.now)

        def idle(seconds: float) -> None:
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                wait(left)

        return idle

    def close(self) -> None:
        for reader in self.pipeline.readers:
            reader.close()
        for emulator in self.emulators:
            emulator.close()
        self.emulators = []
        for device in self.modelled:
            device.close()
        self.modelled = []
        if self.gpio is not None:
            self.gpio.close()
            self.gpio = None
        if self._links_dir is not None:
            self._links_dir.cleanup()
            self._links_dir = None


def table_hand_over_s(config: TableConfig) -> float:
    """How long after the dealer gathers the cards the table ends the hand: the last card zone's absence time,
    then ``clear_after_s`` of a clear table, and two reader cycles for the last reads and the tick."""
    absent_s = max(config.debounce[Zone.parse(zone).holds].absent_after_s for zone in config.zones
                   if Zone.parse(zone).holds != "chips")
    return absent_s + config.clear_after_s + _two_cycles(config)


def table_read_s(config: TableConfig) -> float:
    """How long after a push the table has read the bet: its chips settled (``TableConfig.bet_settle_s``: ``[game]
    settle_ms`` or more), and two reader cycles for the last reads and the tick."""
    return config.bet_settle_s + _two_cycles(config)


def _two_cycles(config: TableConfig) -> float:
    return 2 * max(r.cycle_s for r in config.readers.values())


def _wait_readable(transport) -> None:
    fd = transport.fileno() if transport is not None else None
    if fd is not None:
        _wait_fd(fd)


def _wait_fd(fd: int) -> None:
    try:
        select.select([fd], [], [], PTY_WAIT_S)
    except (OSError, ValueError):  # closed meanwhile (an unplug)
        pass


def run_simulated(config: TableConfig, args: argparse.Namespace) -> int:
    """``rfid-table sim``: the daemon on the simulated table of ``config`` (read from ``args.config``), with the
    options of the command line; the exit status."""
    refusal = probe_login(config.mqtt)
    if refusal:  # playing on would publish nothing, and look like success
        print(f"rfid-table sim: {refusal} (user {config.mqtt.username or '(none)'} at {config.mqtt.host}:"
              f"{config.mqtt.port}; [mqtt] of {args.config})", file=sys.stderr)
        return EX_NOPERM
    if args.delay is not None:  # a short broadcast delay for a trial of the overlay (docs/overlay.md)
        if args.delay and not args.journal:
            print("rfid-table sim: --delay needs --journal (the delayed feed is released from the journal)",
                  file=sys.stderr)
            return 2
        config = dataclasses.replace(config, broadcast_delay_s=args.delay,
                                     broadcast_equity=config.broadcast_equity or bool(args.delay))
    options = SimOptions(hands=args.hands or None, seed=args.seed, speed=args.speed, pace_s=args.pace,
                         players=args.players, link=args.link, noise=args.noise, faults_per_minute=args.faults,
                         missed_read=args.missed_read, cross_read=args.cross_read, flicker=args.flicker,
                         stack_limit=args.stack_limit, devices_per_hour=args.devices_per_hour,
                         devices_per_hand=args.devices_per_hand, absences_per_hour=args.absences_per_hour,
                         absences_per_hand=args.absences_per_hand, dealer_errors=args.dealer_errors,
                         floor_answer_s=args.floor_answers, run_it_twice=args.run_it_twice,
                         players_style=args.players_style)
    journal = open_journal(args.journal, config, args.new_journal) if args.journal else None
    epoch = journal.epoch if journal is not None else secrets.token_hex(8)
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch=epoch, journaled=journal is not None)
    try:
        table = SimulatedTable(config, options, publisher, journal)
    except ValueError as exc:
        print(f"rfid-table sim: {exc}", file=sys.stderr)
        return 2
    stop = StopFlag()
    stop.install()
    command_log.info("simulated table %r: %s hands, seed %s, speed %s, publishing to %s:%s", config.table_id,
             args.hands or "endless", args.seed, args.speed or "max", config.mqtt.host, config.mqtt.port)
    clock = system_clock()
    if journal is not None:
        clock.resume(journal)
        restore_or_exit(table.pipeline, args.journal, clock.now())
    systemd.settle_heap_for_steady_loop()
    # No broker at the start: every hand would be played into nothing and the run end 0, as if it had worked. A
    # broker lost later is waited for, as the daemon waits (the publisher's warnings say so about once a minute).
    wait_s = 10.0
    if not publisher.start(wait_s=wait_s, stop=stop.is_set) and not stop.is_set():
        from rfid_table.ops.broker_login import EX_UNAVAILABLE  # noqa: PLC0415

        table.close()
        publisher.stop()
        if journal is not None:
            close_journal(journal, publisher)
        print(f"rfid-table sim: gave up: no broker answered at {config.mqtt.host}:{config.mqtt.port} within "
              f"{wait_s:g} s, so nothing was played. Start Mosquitto there, or give the broker's address with "
              f"--host and --port (or in [mqtt] of {args.config})", file=sys.stderr)
        return EX_UNAVAILABLE
    try:
        if journal is not None:
            table.pipeline.publish_backlog()
        table.run(stop, publisher, clock)
    finally:
        publisher.stop()
        if journal is not None:
            close_journal(journal, publisher)
    command_log.info("done: %d hands", table.pipeline.controller.hand)
    return 0
