"""The pipeline's intake: where a cycle's inputs come from, made into input records (:mod:`rfid_table.service.inputs`)
for the controller to decide on.

* :class:`Console`: the table's own commands (a console button, the simulated floor), queued for the next cycle;
* :class:`CommandIntake`: commands from the network, through the command gate (retain flag, rate limit, parser);
* :class:`GpioIntake`: the seat sensors and the console's buttons (and the lights, the GPIO's other direction);
  :class:`NoGpio` for a table without;
* :class:`ReaderIntake`: the readers' cycles through the zone tracker (HAL);
* :class:`NoEquity`: a table that publishes no equity (its worker is :mod:`rfid_table.service.equity_worker`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from controller.stud import GAMES as STUD_GAMES, STREETS as STUD_STREETS
from hal.events import SensorEvent
from hal.zone_names import Zone
from hal.reader_backend import ReaderBackend
from hal.zones import ZoneTracker
from rfid_table.service.commands import AdmittedCommand, CommandError, CommandGate, loggable, sender
from rfid_table.service.diagnostics import DiagnosticsCollector
from rfid_table.service.inputs import DeviceInput, EventInput, SensorInput, ZoneInput
from rfid_table.service.journal_writer import Reply
from rfid_table.service.table_gpio import ButtonCommand, TableGpio, TableLights

if TYPE_CHECKING:
    from controller.game import GameController
    from rfid_table.service.publisher import ReceivedCommand

log = logging.getLogger("rfid_table.service.daemon")  # the pipeline's log lines keep the daemon's name


class Console:
    """Commands from the table itself, applied and journaled in the next cycle like one from the network, without a
    reply. A body has the shape of ``AdmittedCommand.as_input()``."""

    def __init__(self) -> None:
        self._queued: list[dict] = []

    def submit(self, body: dict) -> None:
        self._queued.append(body)

    def take(self) -> list[dict]:
        queued, self._queued = self._queued, []
        return queued


class CommandIntake:
    """Commands from the network at the gate: the retain flag, the rate limit per user and the parser, before a
    command reaches the controller. What it refuses is counted (diagnostics) and answered."""

    LOGGED_REFUSALS = 20  # refusals logged one by one; then one in a thousand (a flood must not flood the log too)

    def __init__(self, gate: CommandGate, base: str, diagnostics: DiagnosticsCollector):
        self.gate = gate
        self.base = base  # the table's topic prefix
        self.diagnostics = diagnostics
        self._refused = 0

    def sender(self, topic: str) -> tuple[str, str] | None:
        """(role, user) of a command's topic; None when it is not a command topic (no one to answer)."""
        return sender(topic, self.base)

    def admit(self, received: ReceivedCommand, controller: GameController) -> AdmittedCommand:
        """The command, parsed for this table's seats and decks; raises :class:`CommandError` when refused."""
        setup = controller.setup
        return self.gate.admit(received.topic, received.payload, received.retained, setup.seats, tuple(setup.decks))

    def refused(self, received: ReceivedCommand, exc: CommandError) -> Reply | None:
        """Count and log a refusal at the gate; the reply to its sender."""
        who = self.sender(received.topic)
        self._refused += 1
        self.diagnostics.count_command(exc.kind)
        if self._refused <= self.LOGGED_REFUSALS or self._refused % 1000 == 0:
            log.warning("refused a command from %s: %s: %s (%d refused so far)",
                        loggable("/".join(who) if who else received.topic), loggable(exc.field),
                        loggable(exc.message), self._refused)
        return who and (*who, {"id": exc.command_id, "ok": False, "field": exc.field, "error": exc.message})


class GpioIntake:
    """The table's GPIO (:class:`~rfid_table.service.table_gpio.TableGpio`): seat sensors' changes become
    ``sensor`` inputs, button presses console commands, and the lights show the table's state."""

    def __init__(self, gpio: TableGpio):
        self.gpio = gpio
        self._synced = False
        self._since: float | None = None  # the first cycle with the GPIO

    def take(self, now: float, controller: GameController) -> list[SensorInput | ButtonCommand]:
        """The sensors changed and the buttons pressed by ``now``. The first cycle once the start-up's levels are
        through the debounce adds what the sensors show where it differs from what the rules know (a player already
        seated at start-up, a device switched off while the daemon was down)."""
        polled: list = self.gpio.poll(now)
        if not self._synced:
            if self._since is None:
                self._since = now
            if now - self._since >= self.gpio.settle_s:
                self._synced = True
                for event in self.gpio.sensors(now):
                    known = controller.sensor_known(event.seat, event.sensor, event.detects)
                    if (known is None and event.active) or (known is not None and known != event.active):
                        polled.append(event)
        return [SensorInput(item) if isinstance(item, SensorEvent) else item for item in polled]

    def show(self, now: float, lights: Callable[[float], TableLights]) -> None:
        self.gpio.show(lights(now), now)


class NoGpio:
    """A table without seat sensors, console buttons or lights."""

    def take(self, now: float, controller: GameController) -> list[SensorInput | ButtonCommand]:
        return []

    def show(self, now: float, lights: Callable[[float], TableLights]) -> None:
        pass


EXPECTED_AHEAD = 2  # the seats ahead in the dealing order the readers are told of (a schedule changes a pass late)
# A reader parked on the next seat in the dealing order that has read no card there for CARD_PARK_S scans its
# schedule for CARD_FREE_S (two passes or more of the reference reader), then parks again: a card pitched to another
# seat on the parked front end is not left unseen for longer. A deal that flows reads a card well within it.
CARD_PARK_S = 2.0
CARD_FREE_S = 1.0
STUD_PHASES = ("waiting", *STUD_STREETS)  # a stud hand deals cards to the seats on every street


def expected_card_zones(snapshot: dict, hole_cards: int, ahead: int = EXPECTED_AHEAD, stud: bool = False
                        ) -> list[str]:
    """The zones of the next ``ahead`` seats in the dealing order, in that order, while hole cards are being dealt
    or the next hand's deal is awaited (``snapshot``: the table's public snapshot), where a new card may be believed
    on its first read; none otherwise. The next seat's and the one after: a reader told to visit a seat more often
    does so from its next pass, by when the dealer may have pitched the next card. ``stud``: the hand (between
    hands, the next one) is a stud game, dealt from the dealer's left street by street to the live seats, its third
    to sixth cards on the seat's up-card zone (``seatN.up``), the others on its down-card zone."""
    phase = snapshot.get("phase")
    dealing = STUD_PHASES if stud else ("waiting", "preflop")
    if phase not in dealing or not snapshot.get("players") or (snapshot.get("button") is None and not stud):
        return []
    seats = {entry["seat"]: entry for entry in snapshot["seats"]} if phase != "waiting" else {}
    if stud:
        order = sorted(snapshot["players"])  # from the dealer's left: a stud game is dealt without a button
        hole_cards = 7
    else:
        button = snapshot["button"]  # between hands, the next hand's
        order = sorted(snapshot["players"], key=lambda seat: (seat <= button, seat))  # from the seat after it
    # the deal goes round the table a card at a time: the seats still owed a card, in the order they get it
    # (a folded hand gets no more: its cards went to the muck, and its seat's count of cards with them)
    owed = [(seats[seat]["cards"] if seat in seats else 0, index, seat) for index, seat in enumerate(order)
            if not (seat in seats and seats[seat].get("folded"))]
    owed = [entry for entry in owed if entry[0] < hole_cards]
    return [Zone("up" if stud and 2 <= count <= 5 else "cards", seat).name
            for count, _index, seat in sorted(owed)[:ahead]]


# Burns dealt by the time each board card is due: the flop's three after the first, the turn after the second, the
# river after the third (a board of five: the showdown).
BURNS_BEFORE_BOARD = (1, 1, 1, 2, 3)


def after_the_deal(snapshot: dict, facing_bet: bool) -> tuple[str | None, list[str]]:
    """Where the next card comes once the hole cards are dealt, at a table that reads the bets (``snapshot``: its
    public snapshot; ``facing_bet``: the seat to act must call, raise or fold, ``GameController.facing_bet``): the
    zone its reader parks on, and the seats' card zones it visits more often. While a seat faces a bet its fold
    comes next: the muck (a board card then would be premature). Once nobody has to call, the next street: the
    burn, then the board once the street's burn is read. At the showdown the seats still in are visited more often,
    parked on nowhere: the table is cleared next, and a parked zone tells a tag gone only at its whole reading.
    Nothing while a hand is run more than once, or with one seat left."""
    if snapshot.get("phase") in (None, "waiting") or "boards" in snapshot:
        return None, []
    live = [entry["seat"] for entry in snapshot["seats"] if entry["cards"] and not entry.get("folded")]
    if len(live) < 2:
        return None, []
    if facing_bet:
        return "muck", []
    board = len(snapshot["board"])
    if board < len(BURNS_BEFORE_BOARD):
        return ("burn" if snapshot["burns"] < BURNS_BEFORE_BOARD[board] else "board"), []
    return None, [Zone("cards", seat).name for seat in live]


def expected_bet_zones(seat_to_act: int | None) -> set[str]:
    """The betting zone of the seat to act, where the table expects chips next: its reader visits it more often, so
    a push there is read whole, and still, sooner (``DebounceSettings.still_after_reads``)."""
    return {Zone("bets", seat_to_act).name} if seat_to_act is not None else set()


class ReaderIntake:
    """The readers, polled once a cycle: each reader's device events (a link up or down, an antenna's fault), then
    the zone events its cycles settle (the zone tracker's verdict). The readings do not depend on the controller's
    decisions in the cycle: they are all taken before it decides on them. What the table expects next, from its
    state after the last cycle (``expect``), only lets the tracker believe a card there sooner, and the readers
    visit those zones more often. A reader that can is parked (PARK, protocol 1.2) where the next tag is expected on
    it: the next seat's card zone while hole cards are dealt or the next hand's first card is awaited, and at a
    table that reads the bets the muck, the burn or the board after the deal (``after_the_deal``), each
    ``CARD_PARK_S`` at a time; the seat to act's betting zone during the betting (``expect_bets``)."""

    def __init__(self, readers: list[ReaderBackend], tracker: ZoneTracker, diagnostics: DiagnosticsCollector,
                 zones: dict[str, tuple[str, int]], expect_bets: bool = False):
        self.readers = readers
        self.tracker = tracker
        self.diagnostics = diagnostics
        self.zones = zones  # zone → (reader, antenna): where a reader parks
        # the seat to act's betting zone too, where a push is read once its zone reads still ([hal.chips]
        # still_after_reads): elsewhere its early visits would only cost the daemon a step each
        self.expect_bets = expect_bets
        self._expected_at: int | None = None  # the controller's seq the expectation was taken at
        self._next_card: str | None = None  # where the next card comes: the next seat's, the muck, the board ...
        self._next_card_since = 0.0  # ... expected there since (monotonic)
        self._visit_more: set[str] = set()  # zones visited more often, where no new tag is believed sooner
        self._bets: str | None = None  # the seat to act's betting zone (expect_bets)

    def expect(self, controller: GameController, now: float) -> None:
        """Tell the tracker where the table expects a card next, and note where the readers are to park, when the
        table has changed since last time."""
        if controller.seq == self._expected_at:
            return
        self._expected_at = controller.seq
        try:
            self._expect(controller, now)
        except Exception:  # noqa: BLE001 - a hint to the readers; the table reads on without it
            log.exception("where the table expects tags next could not be worked out; the readers scan their "
                          "schedules")
            self.tracker.expect(set())
            self._next_card, self._bets, self._visit_more = None, None, set()

    def _expect(self, controller: GameController, now: float) -> None:
        # the hole cards of the hand's game (a mixed game's change between hands)
        bets = expected_bet_zones(controller.next_to_act()) if self.expect_bets else set()
        game = controller.game
        stud = (game.name or controller.setup.variant) in STUD_GAMES  # (a table of one game names it in its setup)
        snapshot = controller.snapshot(secure=False)
        cards = expected_card_zones(snapshot, game.hole_cards, stud=stud)
        self._visit_more = set()
        if not cards and not stud and controller.betting is not None:
            after, visit_more = after_the_deal(snapshot, controller.facing_bet())
            self._visit_more = set(visit_more)
            if after == "burn" and "burn" not in self.zones:
                after = "board"  # a table with no burn zone: its board
            # the burn and the board are where the next new card comes; a fold is a move, believed as any
            cards = [after] if after in ("burn", "board") else []
        else:
            after = None
        self.tracker.expect(set(cards) | bets)
        # parked on the next seat from the moment it became the next (between hands the last hand's cards are gone:
        # it ends once the table has been clear for clear_after_s), or on the muck, the burn or the board
        next_card = cards[0] if cards else after
        if next_card != self._next_card:
            self._next_card, self._next_card_since = next_card, now
        self._bets = next(iter(bets), None)

    def park_zone(self, reader: str, now: float) -> str | None:
        """The zone ``reader`` is parked on now: where the next card comes (``CARD_PARK_S`` of every ``CARD_PARK_S +
        CARD_FREE_S`` that it waits for it), else the seat to act's bets, where that zone is on this reader."""
        waited = (now - self._next_card_since) % (CARD_PARK_S + CARD_FREE_S)
        card = self._next_card if waited < CARD_PARK_S else None
        for zone in (card, self._bets):
            if zone is not None and zone in self.zones and self.zones[zone][0] == reader:
                return zone
        return None

    def take(self, now: float) -> list[EventInput]:
        inputs: list[EventInput] = []
        for reader in self.readers:
            cycles = reader.poll(now)
            inputs += [DeviceInput(event) for event in reader.device_events()]
            zone_events = []
            for cycle in cycles:
                self.diagnostics.count_cycle(cycle)
                zone_events += self.tracker.feed(cycle)
            # then the antennas of the cycle still being read that settle a card now (ZoneTracker.feed_antenna)
            for visit in reader.take_early_reads():
                zone_events += self.tracker.feed_antenna(reader.name, visit.antenna, visit.reads, visit.t, visit.whole)
            inputs += [ZoneInput(event) for event in zone_events]
            park = self.park_zone(reader.name, now)
            # the seats watched after the deal are visited more often; their reads can wait for the cycle (no card
            # is due there, and a table woken by each report of theirs spends its CPU on nothing)
            visit_more = frozenset(self.zones[zone][1] for zone in self._visit_more
                                   if self.zones.get(zone, ("",))[0] == reader.name)
            reader.watch_antennas(self.tracker.awaiting(reader.name), self.zones[park][1] if park else None,
                                  visit_more=visit_more)
        return inputs


class NoEquity:
    """A table that publishes no equity (or has no sink to publish it to)."""

    pending = False

    def collect(self, controller: GameController, now: float, events: list) -> None:
        return None

    def offer(self, controller: GameController) -> None:
        pass
