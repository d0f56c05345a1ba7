"""The readers one buys (Metratec, Feig) on their emulators at the documented rates: a full 10-seat table's pass, and
a dealt card's time to the subscriber, beside the reference reader's figures.

For each kind, its example table (``config/table-metratec.toml``: the cards on one reader, 13 antennas, the chips on
another, 11; ``config/table-feig.toml``: one reader, 24 antennas behind multiplexers) with the 10-seat load of the
reference reader's figures (:data:`rfid_table.devtools.bench_reader.TABLE`: 2 cards a seat, 10 chips a bet, board 5,
burn 3, muck 20, pot 40) on its antennas. Each reader is its emulator (``sim.metratec``, ``sim.feig``) running on the
wall clock in a thread, on a pseudo-terminal (TCP for a Metratec reader the configuration names by host), and the
daemon's own pipeline reads them as ``rfid-table run`` does: the readers the configuration builds
(``hal.readers.open_reader``), :class:`TablePipeline` with an :class:`MqttPublisher`, and the loop
(:func:`run_realtime` with :class:`HardwareWait`); a subscriber in another process stamps each event's arrival.

The load's tags belong to no deck and no chip set (each is reported once as an unknown tag or a foreign chip), so
the table deals a fresh hand over them: each dealt card takes the place of one of its seat's two stand-ins, the
readers read the same load all along, and every card is a ``card_dealt``.

* pass (``pass_*``): the time between two whole cycles handed on by the reader (``FirmwareReader``), for every reader
  of the table, beside the emulator's timing model for the load (``model_pass_ms``: ``sim.metratec.ReaderTiming``,
  ``sim.feig.command_time``), as the ratio ``pass_p50_over_model``;
* card (``card_*``): from a deck card laid on a seat's antenna at a random moment (within a pass after the card
  before was first looked at by its reader, so the cards are read in the order they are dealt) to its
  ``card_dealt`` at the subscriber, and in passes of the cards' reader (``card_p50_over_pass``). A card waits for its
  antenna's turn; the daemon decides on its first read when that whole pass is in, and on each further read that
  ``present_after_cycles`` asks for as soon as its antenna reports, a pass later; then its own milliseconds. So no
  card comes sooner than ``present_after_cycles - 1`` passes (``card_floor_ms``);
* reference: the reference reader's pass and dealt-card report (``bench_reader``) when ``--reader-model`` ran in the
  same invocation, or else the figures docs/hardware.md gives, labelled as not measured in this run.

There is no journal: its commit, a few milliseconds on a steady disk, is the full-table part's to measure.
"""

from __future__ import annotations

import dataclasses
import importlib
import multiprocessing
import os
import random
import secrets
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from hal.readers import open_reader
from hal.zone_names import Zone
from rfid_table.config.table import MqttSettings, TableConfig, load_config
from rfid_table.devtools.bench_reader import DESIGNS, TABLE, percentile
from rfid_table.mqtt import make_client
from rfid_table.package_data import CONFIG_DIR
from rfid_table.service.contract import QOS, Topics
from rfid_table.service.daemon import StopFlag, TablePipeline
from rfid_table.service.publisher import MqttPublisher
from rfid_table.service.run import HardwareWait, loop_period_s, run_realtime
from rfid_table.service.timebase import TableClock
from sim.field import TableField
from sim.reader_process import MirroredField

KINDS = {"metratec": "table-metratec.toml", "feig": "table-feig.toml"}
LOAD = [(zone, count) for zone, _uid_format, count in TABLE if count]
STAND_IN = "E0040150C3%06X"  # tags of no deck and no chip set
CARDS = 20  # dealt cards per kind: a 10-seat hold'em deal
# The reference reader's design laid out as each kind's example table (bench_reader.DESIGNS)
REFERENCE_DESIGN = {"metratec": "cards on a reader of their own, 2 front ends, muck 50 ms a pass",
                    "feig": "one reader for the table, 2 front ends, stacks read whole each pass"}
# docs/hardware.md, "Which design: the figures": the reference reader's figures where this run did not measure them
# (air: the ISO 15693 exchange; ms: the firmware in the MicroPython unix port, as [low, high] over the runs there).
DOCUMENTED_REFERENCE = {
    "table": {"1 front ends": {"air_ms": 1294, "ms": [1700, 2000]},
              "2 front ends": {"air_ms": 963, "ms": [1700, 2400]},
              "4 front ends": {"air_ms": 660, "ms": [900, 2000]}},
    "arrival": dict(zip(DESIGNS, (
        {"pass_air_ms": [719, 757], "p50_ms": [990, 1480], "max_ms": [1200, 2400]},
        {"pass_air_ms": 142, "p50_ms": [254, 281], "max_ms": [700, 900]},
        {"pass_air_ms": [276, 283], "p50_ms": [263, 326], "max_ms": [800, 900]}))),
}


def place_load(field: TableField | MirroredField, load: list[tuple[str, int]]) -> dict[str, list[str]]:
    """Lay ``load`` (zone, tag count) on the table as tags of no deck and no chip set; the tags laid, by zone."""
    stand_ins: dict[str, list[str]] = {}
    for index, (zone, count) in enumerate(load):
        stand_ins[zone] = [STAND_IN % (index * 100 + i + 1) for i in range(count)]
        for uid in stand_ins[zone]:
            field.place(uid, zone)
    return stand_ins


class _WatchedField(TableField):
    """The table the emulators read, telling when a reader first looks at an antenna holding an awaited tag."""

    def __init__(self, zones: dict[str, tuple[str, int]]):
        super().__init__(zones)
        self._awaited: dict[str, threading.Event] = {}

    def await_look(self, uid: str) -> threading.Event:
        self._awaited[uid] = looked = threading.Event()
        return looked

    def tags_on(self, reader: str, antenna: int) -> list[str]:
        tags = super().tags_on(reader, antenna)
        if self._awaited:
            for uid in tags:
                looked = self._awaited.pop(uid, None)
                if looked is not None:
                    looked.set()
        return tags


def model_pass_s(kind: str, reader, tags: dict[int, list[str]]) -> float:
    """The emulator's timing model of one pass of ``reader`` (a ``ReaderSettings``) with ``tags`` on its antennas."""
    protocol = importlib.import_module(f"firmware_bridge.{kind}")
    channels = [protocol.parse_channel(text) for text in reader.link["channels"]]
    if kind == "metratec":
        from sim.metratec import ReaderTiming  # noqa: PLC0415

        timing = ReaderTiming()
        # SAP AUT n: every antenna from 0 to the highest channel, each switched to, then inventoried
        wired = {channel.number: antenna for antenna, channel in enumerate(channels, start=1)}
        scanned = max(wired) + 1
        switch = timing.switch_s if scanned > 1 else 0.0
        return sum(switch + timing.inventory_time(len(tags.get(wired.get(n), []))) for n in range(scanned))
    from sim.feig import command_time  # noqa: PLC0415

    baudrate = reader.link["baudrate"]
    total, routes = command_time("diagnostic", baudrate=baudrate), {}  # one channel's diagnostic a pass
    for antenna, channel in enumerate(channels, start=1):
        for level, out in enumerate(channel.path, start=1):  # a multiplexer is switched only when it changes
            key = (channel.output, channel.path[:level - 1])
            if routes.get(key) != out:
                total += command_time("select", baudrate=baudrate)
                routes[key] = out
        total += command_time("reset", baudrate=baudrate) + command_time("inventory", len(tags.get(antenna, [])),
                                                                          baudrate)
    return total


def _emulator(kind: str, field: TableField, reader, directory: str):
    """The emulator of ``reader`` and the link settings that reach it where the configuration's would reach the
    reader: its pty, or a TCP port on this machine for a Metratec reader named by host."""
    protocol = importlib.import_module(f"firmware_bridge.{kind}")
    emulators = importlib.import_module(f"sim.{kind}")
    channels = [protocol.parse_channel(text) for text in reader.link["channels"]]
    link = {key: value for key, value in reader.link.items() if key not in ("port", "host", "tcp_port")}
    if kind == "metratec" and "host" in reader.link:
        device = emulators.MetratecEmulator(field, reader=reader.name, antennas=reader.antennas, channels=channels,
                                            tcp_port=0)
        return device, {**link, "host": "127.0.0.1", "tcp_port": device.tcp_port}
    path = Path(directory) / f"reader-{reader.name}"
    if kind == "metratec":
        device = emulators.MetratecEmulator(field, reader=reader.name, antennas=reader.antennas, channels=channels,
                                            link_path=path)
    else:  # timed at the configured line speed, as a reader set to it
        device = emulators.FeigEmulator(field, reader=reader.name, antennas=reader.antennas, channels=channels,
                                        link_path=path, baudrate=reader.link["baudrate"],
                                        **({"bus_address": link["bus_address"]} if "bus_address" in link else {}))
    return device, {**link, "port": device.path}


class _Daemon:
    """The daemon's pipeline and loop on ``readers`` in a thread, noting when each reader hands on a whole cycle: the
    loop of ``rfid-table run``, at its period for these readers."""

    def __init__(self, config: TableConfig, readers: list, settings: MqttSettings):
        self.ends: dict[str, list[float]] = {reader.name: [] for reader in readers}  # table time of each cycle's end
        for reader in readers:
            self._note_cycles(reader)
        self.publisher = MqttPublisher(dataclasses.replace(config.mqtt, host=settings.host, port=settings.port),
                                       config.table_id, epoch=secrets.token_hex(8), journaled=False)
        self.pipeline = TablePipeline(config, readers, self.publisher, None)
        self.stop = StopFlag()
        clock = TableClock()
        wait = HardwareWait(readers, self.publisher, None, clock.now,
                            {r.name: r.cycle_s for r in config.readers.values()})
        self._thread = threading.Thread(target=run_realtime, name="bench-daemon", daemon=True,
                                        args=(self.pipeline.step, loop_period_s(config, False), self.stop, wait,
                                              clock))

    def _note_cycles(self, reader) -> None:
        poll, ends = reader.poll, self.ends[reader.name]

        def poll_noting(now: float):
            cycles = poll(now)
            ends.extend(cycle.t for cycle in cycles)
            return cycles

        reader.poll = poll_noting

    def start(self) -> None:
        if not self.publisher.start(wait_s=10.0):
            raise RuntimeError("the bench's table could not connect to the broker")
        self._thread.start()

    def close(self) -> None:
        self.stop.event.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self.publisher.stop(timeout_s=1.0)
        for reader in self.pipeline.readers:
            reader.close()


def _subscribe(settings: MqttSettings, topic: str, ready, arrivals, stop, types: tuple[str, ...]) -> None:
    """A subscriber in its own process, as a viewer's would be: each event of ``types`` as it arrives (perf_counter,
    the same clock in every process), sent on at once with its topic and the event."""
    import json  # noqa: PLC0415

    client = make_client(settings, f"rfid-table-bench-bought-{os.getpid()}")
    client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=QOS)
    client.on_subscribe = lambda c, u, mid, rcs, p: ready.send(True)

    def on_message(c, u, message) -> None:
        now = time.perf_counter()
        event = json.loads(message.payload)
        if event["type"] in types:
            arrivals.send((message.topic, event, now))

    client.on_message = on_message
    client.connect(settings.host, settings.port)
    client.loop_start()
    stop.recv()
    client.disconnect()
    client.loop_stop()


class _Subscriber:
    def __init__(self, settings: MqttSettings, topic: str, types: tuple[str, ...] = ("card_dealt", "irregular_card")):
        ctx = multiprocessing.get_context("spawn")
        ready_recv, ready_send = ctx.Pipe(duplex=False)
        self.arrivals, arrivals_send = ctx.Pipe(duplex=False)
        stop_recv, self._stop = ctx.Pipe(duplex=False)
        self._process = ctx.Process(target=_subscribe, daemon=True,
                                    args=(settings, topic, ready_send, arrivals_send, stop_recv, types))
        self._process.start()
        if not ready_recv.poll(20):
            self._process.kill()
            raise RuntimeError("the bench subscriber could not subscribe")
        ready_recv.recv()

    def close(self) -> None:
        self._stop.send("stop")
        self._process.join(5)


def measure_kind(kind: str, settings: MqttSettings, subscriber: _Subscriber, cards: int = CARDS,
                 load: list[tuple[str, int]] = LOAD, seed: int = 1,
                 progress: Callable[[str], None] = lambda message: None) -> dict:
    """One kind's example table with ``load`` on it: each reader's pass, and ``cards`` dealt cards' time to the
    subscriber (``subscriber``, listening to every bench table's secure events)."""

    source = load_config(str(CONFIG_DIR / KINDS[kind]))
    # The broadcast's equity off: its process would share this machine's cores with the emulated readers, which on
    # a table are hardware of their own (its cost is the equity part's figure).
    config = dataclasses.replace(source, table_id=f"bench-bought-{kind}-{os.getpid()}", broadcast_equity=False)
    field = _WatchedField(config.zones)
    stand_ins = place_load(field, load)
    readers = list(config.readers.values())
    on_reader = {r.name: {antenna: field.tags_on(r.name, antenna) for antenna in range(1, r.antennas + 1)}
                 for r in readers}
    models = {r.name: model_pass_s(kind, r, on_reader[r.name]) for r in readers}
    card_reader = config.zones[Zone("cards", 1).name][0]
    deck = config.decks[config.active_deck]
    cards = min(cards, config.seats * config.game.hole_cards)
    progress(f"bought readers: {kind}: {len(readers)} reader(s) of {KINDS[kind]} on their emulators, "
             f"{sum(len(uids) for uids in stand_ins.values())} tags, {cards} cards to deal")
    devices, daemon = [], None
    with tempfile.TemporaryDirectory(prefix="rfid-table-bench-") as directory:
        try:
            backends = []
            for reader in readers:
                device, link = _emulator(kind, field, reader, directory)
                devices.append(device)
                device.start()  # on the wall clock, as a reader on its cable
                backends.append(open_reader(reader.name, reader.backend, reader.antennas, link, cycle_s=reader.cycle_s))
            daemon = _Daemon(config, backends, settings)
            daemon.start()
            # the load settled: as many whole cycles of every reader as its tags' debounce asks (two at least)
            settle = max(2, *(d.present_after_cycles for d in config.debounce_by_zone().values()))
            deadline = time.monotonic() + 30 + (settle + 2) * max(models.values())
            while min(len(ends) for ends in daemon.ends.values()) < settle:
                if time.monotonic() > deadline:
                    counts = ", ".join(f"{name} {len(ends)}" for name, ends in daemon.ends.items())
                    raise RuntimeError(f"{kind}: the readers did not settle: whole cycles handed on: {counts}")
                time.sleep(0.01)
            passes = ", ".join(f"{name} {len(ends)}" for name, ends in daemon.ends.items())
            progress(f"bought readers: {kind}: the load read (whole cycles: {passes}); dealing")
            rng = random.Random(seed)
            placed: dict[str, float] = {}
            looked: threading.Event | None = None
            zone = ""
            for n, uid in enumerate(list(deck)[:cards]):
                if n and n % 5 == 0:
                    progress(f"bought readers: {kind}: {n}/{cards} cards dealt")
                # the card before is on its reader's way: this one is read after it, as dealt
                if looked is not None and not looked.wait(10 * models[card_reader] + 5):
                    raise RuntimeError(f"{kind}: no reader looked at the card dealt to {zone}")
                zone = Zone("cards", n % config.seats + 1).name
                time.sleep(rng.uniform(0, models[card_reader]))
                looked = field.await_look(uid)
                waiting = stand_ins.get(zone)
                placed[deck[uid]] = time.perf_counter()
                if waiting:
                    field.remove(waiting.pop())
                field.place(uid, zone)
            topic_of_table = Topics.for_table(config.mqtt.topic_prefix, config.table_id).events(secure=True)
            arrived: dict[str, float] = {}
            irregular = 0
            deadline = time.monotonic() + 4 * models[card_reader] + 5
            while len(arrived) < cards and (left := deadline - time.monotonic()) > 0:
                if subscriber.arrivals.poll(left):
                    topic, event, t = subscriber.arrivals.recv()
                    if topic != topic_of_table:
                        continue
                    if event["type"] == "irregular_card":
                        irregular += 1
                    elif event.get("card") in placed:
                        arrived.setdefault(event["card"], t)
        finally:
            if daemon is not None:
                daemon.close()
            for device in devices:
                device.close()
    latencies = sorted((arrived[card] - placed[card]) * 1000 for card in arrived)
    present_after = config.debounce_by_zone()[Zone("cards", 1).name].present_after_cycles
    figures: dict = {"config": f"config/{KINDS[kind]}", "readers": {}}
    for reader in readers:
        ends = daemon.ends[reader.name]
        passes = [(b - a) * 1000 for a, b in zip(ends, ends[1:])]
        tags = sum(len(uids) for uids in on_reader[reader.name].values())
        model_ms = models[reader.name] * 1000
        figures["readers"][reader.name] = {
            "antennas": reader.antennas, "tags": tags, "passes": len(passes),
            "pass_p50_ms": round(statistics.median(passes), 1), "pass_max_ms": round(max(passes), 1),
            "model_pass_ms": round(model_ms, 1), "pass_p50_over_model": round(statistics.median(passes) / model_ms, 3)}
    pass_ms = figures["readers"][card_reader]["pass_p50_ms"]
    figures.update({"card_reader": card_reader, "present_after_cycles": present_after, "cards": len(latencies),
                    "cards_missed": cards - len(latencies), "irregular_cards": irregular,
                    # the reads after the first that make a dealt card present, a pass apart
                    "card_floor_ms": round((present_after - 1) * pass_ms, 1)})
    if latencies:
        figures.update({"card_min_ms": round(latencies[0], 1), "card_p50_ms": round(percentile(latencies, 50), 1),
                        "card_p99_ms": round(percentile(latencies, 99), 1), "card_max_ms": round(latencies[-1], 1),
                        "card_p50_over_pass": round(percentile(latencies, 50) / pass_ms, 2),
                        "card_p99_over_pass": round(percentile(latencies, 99) / pass_ms, 2)})
    figures["reference_design"] = REFERENCE_DESIGN[kind]
    return figures


def reference_figures(reader_model: dict | None) -> dict:
    """The reference reader's 10-seat pass and dealt-card report: measured by ``--reader-model`` in this run, or the
    figures docs/hardware.md gives."""
    if reader_model and "skipped" not in reader_model:
        return {"source": "measured in this run (--reader-model)",
                "table": {name: {"air_ms": f["air_ms"], "ms": f["ms"]} for name, f in reader_model["table"].items()},
                "arrival": reader_model["arrival"]}
    return {"source": "docs/hardware.md, not measured in this run", **DOCUMENTED_REFERENCE}


def measure_bought(settings: MqttSettings | None = None, progress: Callable[[str], None] = lambda message: None,
                   cards: int = CARDS, load: list[tuple[str, int]] = LOAD, kinds=tuple(KINDS),
                   reader_model: dict | None = None) -> dict:
    """Every kind's figures (:func:`measure_kind`) and the reference reader's beside them; a private broker unless
    ``settings`` names one."""
    broker = None
    if settings is None:
        from rfid_table.ops.broker import PrivateBroker  # noqa: PLC0415

        broker = PrivateBroker().start()
        settings = MqttSettings(host=broker.host, port=broker.port)
    try:
        prefix = load_config(str(CONFIG_DIR / KINDS[kinds[0]])).mqtt.topic_prefix
        subscriber = _Subscriber(settings, f"{prefix}/+/secure/events")
        try:
            results = {kind: measure_kind(kind, settings, subscriber, cards, load, progress=progress) for kind in kinds}
        finally:
            subscriber.close()
    finally:
        if broker is not None:
            broker.stop()
    results["reference"] = reference_figures(reader_model)
    return results


def _range(value) -> str:
    return f"{value[0]}–{value[1]}" if isinstance(value, list) else f"{value}"


def report_lines(results: dict) -> list[str]:
    lines = ["bought readers (emulators at their documented rates; the example tables, 10 seats mid-hand):"]
    for kind, figures in results.items():
        if kind == "reference":
            continue
        lines.append(f"  {kind} ({figures['config']}):")
        for name, r in figures["readers"].items():
            lines.append(f"    reader {name}, {r['antennas']} antennas, {r['tags']} tags: pass p50 "
                         f"{r['pass_p50_ms']} ms, max {r['pass_max_ms']} ms over {r['passes']} "
                         f"({r['pass_p50_over_model']}× the model's {r['model_pass_ms']} ms)")
        if figures["cards"]:
            lines.append(f"    dealt card to the subscriber ({figures['cards']} cards, present after "
                         f"{figures['present_after_cycles']} read(s)): p50 {figures['card_p50_ms']} ms "
                         f"({figures['card_p50_over_pass']} passes of reader {figures['card_reader']}), p99 "
                         f"{figures['card_p99_ms']} ms ({figures['card_p99_over_pass']}), max "
                         f"{figures['card_max_ms']} ms")
        lines.append(f"    cards missed {figures['cards_missed']}, irregular_card events {figures['irregular_cards']}")
    reference = results.get("reference")
    if reference:
        lines.append(f"  reference reader, modelled PN5180 ({reference['source']}):")
        for name, f in reference["table"].items():
            lines.append(f"    10-seat table, {name}: pass {_range(f['ms'])} ms (air {_range(f['air_ms'])} ms)")
        for design, f in reference["arrival"].items():
            lines.append(f"    dealt card reported by the reader, {design}: p50 {_range(f['p50_ms'])} ms, max "
                         f"{_range(f['max_ms'])} ms (air of a pass {_range(f['pass_air_ms'])} ms)")
    return lines


if __name__ == "__main__":
    import json
    import sys

    figures = measure_bought(progress=lambda message: print(message, file=sys.stderr, flush=True))
    print("\n".join(report_lines(figures)))
    print(json.dumps(figures))
