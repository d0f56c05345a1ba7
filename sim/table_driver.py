"""A simulated table played by hand: tags placed on zones, read by a reader, debounced by the HAL's zone tracker and
fed to the real controller, as the daemon feeds them (the zone events of a reader pass, then a tick).

A scenario test, a developer reproducing a report at the prompt, or a technician trying a rule walks the same path
a tag takes at a real table, with no broker and no threads::

    table = TableDriver(GameController(setup, betting), table_zones(), deck=setup.deck, rack=rack)
    table.put("Ah", "seat1.cards")          # a card dealt; the readers run for ``move_s``
    table.chips(1, 100, 25)                 # two chips pushed into seat 1's betting zone
    table.command("confirm", irregularity=7)
    [ruling] = of(table.events, "bet_ruling", "chips_do_not_play")

Time is table time (``t``, seconds), moved on only by the driver: a pass of the readers every ``cycle_s`` with
:meth:`run`, a single pass after any interval with :meth:`cycle` or at a given time with :meth:`read_at` (a caller
with a schedule of its own: the PHH replay), or a jump with :meth:`skip` (the readers would have read the same tags
meanwhile). Everything the controller produced is kept in ``events``, in order; each method
also returns what it produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from controller.domain import DomainEvent
from hal.events import DeviceEvent
from hal.zone_names import Zone
from hal.zones import DebounceSettings, ZoneTracker
from sim.field import TableField
from sim.noise import NoiseModel
from sim.readers import NoisyReader, PerfectReader

READER = "main"
CARD_DEBOUNCE = DebounceSettings(3, 0.6, max_gap_cycles=2)  # three reads in a row; gone after 0.6 s unread
PILE_DEBOUNCE = DebounceSettings(1, 1.0)  # one read must do: a pile is bigger than a reader gets through in a pass


def debounce_by_pile(zones: Iterable[str]) -> dict[str, DebounceSettings]:
    """The zone tracker's settings of a table that reads cards and chips, as the replayed hands' table has them:
    chips and the muck lie in piles bigger than a reader gets through in one pass, so one read must do there; a card
    takes three."""
    return {zone: PILE_DEBOUNCE if Zone.parse(zone).holds in ("chips", "piles") else CARD_DEBOUNCE for zone in zones}


class CommandRefused(AssertionError):
    """The controller refused a command the scenario expected it to take."""


@dataclass(frozen=True)
class Input:
    """One input handed to the controller, and what it produced: what the daemon's journal records a step from."""

    kind: str  # zone, command, tick or device
    t: float
    body: Any  # the ZoneEvent, the command's body, None for a tick, the DeviceEvent
    produced: list[DomainEvent] = field(default_factory=list)
    refusal: str | None = None  # a refused command's reason


class TableDriver:
    """One reader (``READER``) over a simulated field, the zone tracker and a controller, stepped by hand.

    ``controller``: a ``GameController`` or ``TableController``, built by the caller as the table is configured (it
    may be replaced between steps, as a restart from a checkpoint does, or set before the first). ``zones``: zone
    name → (reader, antenna). ``noise``: the reader reads through this RF noise model (None: perfectly).
    ``debounce``: the zone tracker's settings, for every zone or zone name → settings (the rest get the default);
    ``min_rssi_dbm`` and ``order_window_s``: its RSSI floor and arrival order (``hal.zones``).
    ``deck``: tag UID → card, so cards can be named ("Ah") where a tag is wanted. ``rack``: chip value → the chips'
    tag UIDs at hand, taken from the end by :meth:`chips`. ``check``: called with every event produced (an invariant
    the scenario keeps). ``on_input``: called with every :class:`Input` handed to the controller (a journal).
    """

    def __init__(self, controller: Any, zones: Mapping[str, tuple[str, int]], *, noise: NoiseModel | None = None,
                 debounce: DebounceSettings | Mapping[str, DebounceSettings] = DebounceSettings(),
                 min_rssi_dbm: int | None = None, order_window_s: float = 0.0,
                 cycle_s: float = 0.05, move_s: float | None = None, start_t: float = 0.0,
                 deck: Mapping[str, str] | None = None, rack: Mapping[int, Sequence[str]] | None = None,
                 check: Callable[[DomainEvent], None] | None = None,
                 on_input: Callable[[Input], None] | None = None):
        self.controller = controller
        self.zones = dict(zones)
        self.field = TableField(self.zones)
        antennas = max(antenna for _reader, antenna in self.zones.values())
        self.reader = (NoisyReader(READER, antennas, self.field, noise) if noise is not None
                       else PerfectReader(READER, antennas, self.field))
        antenna_zones = {antenna: zone for zone, antenna in self.zones.items()}
        if isinstance(debounce, DebounceSettings):
            by_zone, default = {}, debounce
        else:
            by_zone, default = dict(debounce), DebounceSettings()
        self.tracker = ZoneTracker(antenna_zones, by_zone, default, min_rssi_dbm=min_rssi_dbm,
                                   order_window_s=order_window_s)
        self.cycle_s = cycle_s
        self.move_s = cycle_s if move_s is None else move_s  # how long the readers run after a move
        self.t = start_t  # table time; a scenario may move it on itself between inputs
        self.deck = dict(deck or {})
        self.uid_of = {card: uid for uid, card in self.deck.items()}
        self.rack = {value: list(uids) for value, uids in (rack or {}).items()}
        self.check = check
        self.on_input = on_input
        self.events: list[DomainEvent] = []

    def use(self, controller: Any) -> None:
        """Play on with another controller (a replayed hand whose blinds or variant differ from the last one's): the
        field, the reader and the zone tracker stay as they are."""
        self.controller = controller

    # ---- the table ------------------------------------------------------------------------------------------

    def uid(self, tag: str) -> str:
        """The tag UID of a card of the deck ("Ah"), or ``tag`` itself (a UID)."""
        return self.uid_of.get(tag, tag)

    def place(self, *tags: str, zone: str) -> None:
        """Lay tags (cards or UIDs) on a zone, taking them from wherever they lay; nothing is read yet."""
        for tag in tags:
            self.field.place(self.uid(tag), zone)

    def remove(self, *tags: str) -> None:
        """Take tags off the table (a hand, a pocket, the shuffler); nothing is read yet."""
        for tag in tags:
            self.field.remove(self.uid(tag))

    def clear(self) -> None:
        """Every tag off the table (the cards gathered, the pot pushed and stacked away)."""
        self.field.clear()

    def tags_in(self, zone: str) -> list[str]:
        return self.field.tags_in(zone)

    def take_chips(self, *values: int) -> list[str]:
        """Chips of these values from the rack (their tag UIDs)."""
        return [self.rack[value].pop() for value in values]

    # ---- moves that take time ------------------------------------------------------------------------------

    def put(self, tag: str, zone: str, seconds: float | None = None) -> list[DomainEvent]:
        """A tag laid on a zone, then the readers run ``seconds`` (``move_s``)."""
        self.place(tag, zone=zone)
        return self.run(self.move_s if seconds is None else seconds)

    def take(self, *tags: str, seconds: float | None = None) -> list[DomainEvent]:
        """Tags taken off the table, then the readers run ``seconds`` (``move_s``)."""
        self.remove(*tags)
        return self.run(self.move_s if seconds is None else seconds)

    def chips(self, where: int | str, *values: int, seconds: float = 1.0) -> list[DomainEvent]:
        """Chips of these values from the rack pushed in one motion into a seat's betting zone (``where``: the seat)
        or onto the zone named, then the readers run ``seconds``."""
        self.place(*self.take_chips(*values), zone=f"seat{where}.bets" if isinstance(where, int) else where)
        return self.run(seconds)

    # ---- time --------------------------------------------------------------------------------------------

    def cycle(self, after_s: float | None = None, console: dict | None = None) -> list[DomainEvent]:
        """One reader pass ``after_s`` (``cycle_s``) after the last: its zone events go to the controller, then a
        dealer console input pressed during the pass (``console``: a command body), then a tick."""
        return self._passes(1, self.cycle_s if after_s is None else after_s, console)

    def run(self, seconds: float) -> list[DomainEvent]:
        """The readers pass every ``cycle_s`` for ``seconds`` of table time."""
        return self._passes(round(seconds / self.cycle_s), self.cycle_s)

    def read_at(self, t: float) -> list[DomainEvent]:
        """One reader pass ending at table time ``t`` (not before the driver's), as :meth:`cycle` makes it."""
        self.t = t
        return self._keep(self._pass(t))

    def _passes(self, count: int, step: float, console: dict | None = None) -> list[DomainEvent]:
        """``count`` reader passes ``step`` apart; ``console`` is pressed during the first."""
        produced: list[DomainEvent] = []
        for _ in range(count):
            self.t = t = round(self.t + step, 6)  # no drift over long runs
            produced += self._pass(t, console)
            console = None
        return self._keep(produced)

    def _pass(self, t: float, console: dict | None = None) -> list[DomainEvent]:
        """One reader pass at ``t``: its zone events go to the controller, then the console's press, then a tick."""
        produced: list[DomainEvent] = []
        controller, on_input = self.controller, self.on_input
        for inventory in self.reader.poll(t):
            for zone_event in self.tracker.feed(inventory):
                out = controller.handle(zone_event)
                if on_input is not None:
                    on_input(Input("zone", t, zone_event, out))
                produced += out
        if console is not None:
            produced += self._command({"role": "dealer", "user": "sim", **console}, expect_taken=True)[0]
        out = controller.tick(t)
        if on_input is not None:
            on_input(Input("tick", t, None, out))
        produced += out
        return produced

    def skip(self, seconds: float) -> list[DomainEvent]:
        """Table time jumps ``seconds`` and the controller ticks once; nothing is read (nothing moved meanwhile)."""
        self.t = round(self.t + seconds, 6)
        produced = self.controller.tick(self.t)
        if self.on_input is not None:
            self.on_input(Input("tick", self.t, None, produced))
        return self._keep(produced)

    def read_until_settled(self, timeout_s: float = 5.0) -> list[DomainEvent]:
        """The readers pass until the zone tracker sees every tag where it lies on the field (and no other), at most
        ``timeout_s``; raises ``TimeoutError`` naming what it still sees otherwise."""
        produced: list[DomainEvent] = []
        for _ in range(round(timeout_s / self.cycle_s)):
            if self.settled():
                return produced
            produced += self.cycle()
        if not self.settled():
            raise TimeoutError(f"after {timeout_s} s the zone tracker sees {self.tracker.present()}, the table has "
                               f"{self._on_field()}")
        return produced

    def settled(self) -> bool:
        """Whether the zone tracker's picture is the field's (every tag read into the zone it lies on)."""
        return self.tracker.present() == self._on_field()

    def _on_field(self) -> dict[str, set[str]]:
        return {zone: set(self.field.tags_in(zone)) for zone in self.zones}

    # ---- inputs other than tags -------------------------------------------------------------------------------

    def command(self, name: str, *, role: str = "floor", user: str = "ann", **fields: Any) -> list[DomainEvent]:
        """A command from the floor's tablet or the dealer's console; raises ``CommandRefused`` if refused."""
        produced, _refusal = self._command({"command": name, "role": role, "user": user, **fields}, expect_taken=True)
        return self._keep(produced)

    def try_command(self, name: str, *, role: str = "floor", user: str = "ann",
                    **fields: Any) -> tuple[list[DomainEvent], str | None]:
        """A command that may be refused: (the events it produced, the refusal or None)."""
        produced, refusal = self._command({"command": name, "role": role, "user": user, **fields}, expect_taken=False)
        return self._keep(produced), refusal

    def _command(self, body: dict, expect_taken: bool) -> tuple[list[DomainEvent], str | None]:
        produced, refusal = self.controller.handle_command(body, self.t)
        if self.on_input is not None:
            self.on_input(Input("command", self.t, body, produced, refusal))
        if refusal is not None and expect_taken:
            raise CommandRefused(f"{body['command']}: {refusal}")
        return produced, refusal

    def device(self, kind: str, **detail: Any) -> list[DomainEvent]:
        """A reader reports on its equipment (``antenna_fault``, ``antenna_ok``, ``reader_down``…) now."""
        event = DeviceEvent(kind, READER, self.t, tuple(detail.items()))
        produced = self.controller.handle_device(event)
        if self.on_input is not None:
            self.on_input(Input("device", self.t, event, produced))
        return self._keep(produced)

    # ---- what happened -----------------------------------------------------------------------------------------

    def _keep(self, produced: list[DomainEvent]) -> list[DomainEvent]:
        if self.check is not None:
            for event in produced:
                self.check(event)
        self.events += produced
        return produced

    def forget_events(self) -> None:
        """Drop the events kept so far: a long run (hundreds of hands) keeps only its latest stretch."""
        self.events = []

    def published(self, secure: bool = False) -> list[dict]:
        """Every event as the public (or secure) feed publishes it."""
        return [event.payload(secure) for event in self.events]


def of(events: Iterable[DomainEvent], type_: str, code: str | None = None) -> list[DomainEvent]:
    """The events of a type (and, for rulings, of a ``code``)."""
    return [e for e in events if e.type == type_ and (code is None or e.public.get("code") == code)]


def types(events: Iterable[DomainEvent]) -> list[str]:
    return [e.type for e in events]


def actions(events: Iterable[DomainEvent]) -> list[tuple]:
    """The betting actions read: (seat, action, to)."""
    return [(e.public["seat"], e.public["action"], e.public["to"]) for e in events if e.type == "action"]


def irregular_codes(events: Iterable[DomainEvent]) -> list[str]:
    return [e.public["code"] for e in events if e.type == "irregular_card"]
