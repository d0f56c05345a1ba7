"""``rfid-table bench``: latency and memory of the whole chain, through a real broker.

* ``baseline_*``: a bare paho publish → broker → paho subscriber round trip, measured in the same run with
  the same pacing and payload handling — the floor no daemon can beat on this machine.
* ``e2e_*``: from a tag read entering the HAL to the matching event arriving at a subscriber, through the
  zone tracker, the controller, the publisher and the broker.
* ``rss_mb``: peak resident memory of ``rfid-table sim`` playing hands against the broker.
* ``decode_frames_per_s``: the wire-protocol decoder alone.
* ``journaled_events_per_s`` and ``recovery_s``: the pipeline with its durable SQLite journal (no MQTT), and a
  restart from a 10,000-event journal (self-check and replay) to the restored state.
* ``tag_reads_per_s`` and ``frame_to_zone_event_p99_ms``: tag reads through the pty, the codec, the link, the
  firmware reader and the zone tracker (no MQTT).
* ``replay_hands_per_s``: random PHH hands played as physical table activity and read back (``sim.replay``: the
  simulated readers, the zone tracker, the controller with the chip layer; no MQTT), on every core the machine
  has, one table per core; ``replay_hands_per_s_one_core`` on one; ``engine_hands_per_s`` is the betting engine
  alone on the same hands (the floor of the work), for the ratio.
* ``reader_model`` (with ``--reader-model``): the reader firmware in MicroPython on the modelled PN5180 (``rfid_table.devtools.bench_reader``): dwell
  time against load, a whole 10-seat table on 1, 2 and 4 front ends, dealt-card arrival per design, memory.
* ``bought_readers`` (with ``--bought-readers``): the readers one buys (Metratec, Feig) on their emulators at the
  documented rates, read by the daemon's pipeline on the example tables (``rfid_table.devtools.bench_bought``): each
  reader's pass against its emulator's model, a dealt card's time to the subscriber, the reference reader's beside.
* ``host_steal_pct``, ``host_steal_pct_e2e``, ``host_steal_pct_replay``: the share of the CPUs' time a hypervisor
  gave to other guests over the whole bench, the end-to-end part with its baseline, and the replay
  (``rfid_table.devtools.bench_host``; 0 on a Pi): the machine's own minutes, beside the figures they move.
"""

import gc
import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from hal.zone_names import Zone
from rfid_table.devtools.bench_reader import measure_reader, percentile, report_lines
from rfid_table.devtools import bench_bought
from rfid_table.devtools import bench_disk, bench_host, bench_journal
from rfid_table.service import systemd
from rfid_table.ops.broker import PrivateBroker
from rfid_table.package_data import CONFIG_DIR
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.equity_worker import measure_equity
from rfid_table.service.contract import QOS, Topics
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

# Table time per wall time in the end-to-end run: a reader cycle every 2.5 ms of wall time. At 50 (every 1 ms)
# the pipeline alone kept 28 % of a core busy in this process beside the broker and the subscriber on two cores, and
# its tail measured that crowding more than the chain (docs/bench.md, "The end-to-end run's pace").
E2E_SPEED = 20
E2E_PACE_S = 0.1  # a dealer's action every 25-200 ms of table time


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _receive(settings: MqttSettings, topic: str, ready, results) -> None:
    """The subscriber, in its own process as a real one would be: stamps each message's arrival by ``seq``.

    ``time.perf_counter`` is CLOCK_MONOTONIC on Linux, shared by all processes, so stamps compare across them.
    """
    arrived: dict[int, float] = {}
    client = make_client(settings, f"rfid-table-bench-sub-{os.getpid()}")
    client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=QOS)
    client.on_subscribe = lambda c, u, mid, rcs, p: ready.send(True)

    def on_message(c, u, message) -> None:
        now = time.perf_counter()
        arrived.setdefault(json.loads(message.payload)["seq"], now)

    client.on_message = on_message
    client.connect(settings.host, settings.port)
    client.loop_start()
    expected = results.recv()  # the sender says how many it sent, then we wait for them
    deadline = time.monotonic() + 30
    while len(arrived) < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    client.disconnect()
    client.loop_stop()
    results.send(arrived)


class _Receiver:
    def __init__(self, settings: MqttSettings, topic: str):
        ctx = multiprocessing.get_context("spawn")
        ready_recv, ready_send = ctx.Pipe(duplex=False)
        self._results, theirs = ctx.Pipe()
        self._process = ctx.Process(target=_receive, args=(settings, topic, ready_send, theirs), daemon=True)
        self._process.start()
        if not ready_recv.poll(20):
            raise RuntimeError("the bench subscriber could not subscribe")
        ready_recv.recv()

    def collect(self, expected: int) -> dict[int, float]:
        self._results.send(expected)
        arrived = self._results.recv()
        self._process.join(5)
        return arrived


def _latencies_ms(sent: dict[int, float], arrived: dict[int, float]) -> list[float]:
    return [(arrived[seq] - t0) * 1000 for seq, t0 in sent.items() if seq in arrived]


def measure_baseline(settings: MqttSettings, send_times: list[float],
                     progress: Callable[[str], None] = lambda message: None) -> list[float]:
    """Bare paho round trips, one message at each of ``send_times`` (seconds from the start).

    The baseline replays the end-to-end run's timing: latency on an idle machine depends on how often messages
    come (a broker and a subscriber woken every millisecond answer faster than ones woken every ten), so both
    sides of the ratio must see the same rhythm.
    """
    topic = f"rfid-table-bench/{os.getpid()}/baseline"
    receiver = _Receiver(settings, topic)
    sender = make_client(settings, f"rfid-table-bench-pub-{os.getpid()}")
    sender.connect(settings.host, settings.port)
    sender.loop_start()
    sent: dict[int, float] = {}
    start = time.perf_counter()
    for seq, offset in enumerate(send_times, start=1):
        delay = start + offset - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        payload = json.dumps({"seq": seq, "type": "baseline"}, separators=(",", ":")).encode()
        sent[seq] = time.perf_counter()
        sender.publish(topic, payload, qos=QOS)
        if seq % 1000 == 0:
            progress(f"  baseline: {seq}/{len(send_times)} round trips")
    arrived = receiver.collect(len(sent))
    sender.disconnect()
    sender.loop_stop()
    return _latencies_ms(sent, arrived)


def measure_end_to_end(config_path: str, settings: MqttSettings, min_events: int,
                       progress: Callable[[str], None]) -> tuple[list[float], list[float]]:
    """Latencies of ≥ ``min_events`` events, and when each was read (seconds from the start)."""
    config = load_config(config_path)
    # Without the broadcast's equity: at E2E_SPEED times real time its worker would recompute after every card
    # E2E_SPEED times as often as at a table, a second process as busy as a core beside the broker and the
    # subscriber (its own cost is the equity part's); the full-table part runs it at the table's pace.
    config = type(config)(**{**config.__dict__, "mqtt": settings, "broadcast_equity": False})
    topics = Topics.for_table(settings.topic_prefix, config.table_id)
    receiver = _Receiver(settings, topics.events(secure=False))
    publisher = MqttPublisher(settings, config.table_id, epoch="bench")
    publisher.start()
    table = SimulatedTable(config, SimOptions(hands=None, seed=1, pace_s=E2E_PACE_S, link="direct"), publisher)
    thresholds = gc.get_threshold()
    systemd.settle_heap_for_steady_loop()  # as the daemon does once started
    sent: dict[int, float] = {}
    # Like the daemon, the loop gives the time between reader cycles to the publisher instead of spinning;
    # table time runs E2E_SPEED times faster than real time so that 5,000 events take half a minute, not hours.
    start_table = t = time.time()
    start_wall = time.monotonic()
    while len(sent) < min_events:
        table.advance(t)
        read_at = time.perf_counter()  # the cycle's tag reads enter the HAL in this step
        events = table.pipeline.step(t)
        for event in events:
            sent[event.seq] = read_at
        if events and len(sent) % 1000 < len(events):
            progress(f"  end to end: {len(sent)}/{min_events} events")
        t += table.cycle_s
        publisher.service(max(0.0, start_wall + (t - start_table) / E2E_SPEED - time.monotonic()))
    arrived = receiver.collect(len(sent))
    table.close()
    publisher.stop()
    gc.unfreeze()  # the other measurements run with the interpreter's own settings
    gc.set_threshold(*thresholds)
    first = min(sent.values())
    return _latencies_ms(sent, arrived), sorted(t0 - first for t0 in sent.values())


def measure_rss_mb(config_path: str, settings: MqttSettings, hands: int) -> float:
    """Peak RSS of the simulated table's daemon process, from the kernel's own accounting (wait4)."""
    command = [sys.executable, "-m", "rfid_table.cli", "--log-level", "WARNING", "sim", "--config", config_path,
               "--host", settings.host, "--port", str(settings.port), "--hands", str(hands), "--speed", "0",
               "--seed", "7", "--pace", "0.5"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    # The kernel's own high-water mark of the child's memory (VmHWM), read until it exits. (wait4's ru_maxrss would
    # also count what this process held when it forked the child.)
    peak_kb = 0
    status_file = f"/proc/{proc.pid}/status"
    while proc.poll() is None:
        try:
            with open(status_file) as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    if proc.returncode != 0:
        raise RuntimeError(f"the simulated table exited with {proc.returncode}")
    return peak_kb / 1024


def measure_decode_frames_per_s(frames: int = 50_000) -> float:
    """The codec alone: INVENTORY frames with four tags each, fed in 4 KiB reads as a serial port delivers them."""
    import random

    from firmware_bridge.codec import FrameDecoder
    from firmware_bridge.messages import Inventory, TagEntry, encode_message

    rng = random.Random(1)
    stream = b"".join(
        encode_message(Inventory(seq=i & 0xFFFF, antenna=i % 16, cycle=i // 16, flags=0, entries=tuple(
            TagEntry(uid=bytes([0xE0, 0x04]) + rng.randbytes(6), read_count=3, rssi=-50) for _ in range(4))))
        for i in range(frames))
    chunks = [stream[i:i + 4096] for i in range(0, len(stream), 4096)]
    decoder = FrameDecoder()
    start = time.perf_counter()
    decoded = sum(len(decoder.feed(chunk)) for chunk in chunks)
    elapsed = time.perf_counter() - start
    if decoded != frames:
        raise RuntimeError(f"the decoder returned {decoded} of {frames} frames")
    return frames / elapsed


def measure_tag_reads(cycles: int = 400, antennas: int = 12, tags_per_antenna: int = 40) -> tuple[float, float]:
    """Sustained tag reads through the pty, pyserial, the codec, the link, the firmware reader and the zone
    tracker, with tags moving between antennas every cycle so that zone events keep coming.

    Returns (reads per second of host-side time, p99 milliseconds from the cycle's frames being readable on
    the host to the zone events they cause). The emulator's own time (the reader's side) is not counted.
    """
    import random
    import select
    import tempfile
    from pathlib import Path

    from hal.firmware_reader import serial_reader
    from hal.zones import DebounceSettings, ZoneTracker
    from sim.field import TableField
    from sim.firmware import FirmwareEmulator

    zones = {f"zone{a}": ("main", a) for a in range(1, antennas + 1)}
    field = TableField(zones)
    rng = random.Random(2)
    tags = [f"E0040150{i:08X}" for i in range(antennas * tags_per_antenna)]
    for i, uid in enumerate(tags):
        field.place(uid, f"zone{i % antennas + 1}")
    with tempfile.TemporaryDirectory() as directory:
        emulator = FirmwareEmulator(field, reader="main", antenna_count=antennas, cycle_s=0.05,
                                    link_path=Path(directory) / "reader", heartbeat_s=0.5)
        reader = serial_reader("main", emulator.path, antennas=antennas)
        tracker = ZoneTracker({v: k for k, v in zones.items()}, default=DebounceSettings(1, 0.2))
        t, reads, host_s, latencies = 1000.0, 0, 0.0, []
        try:
            for step in range(cycles + 40):
                for uid in rng.sample(tags, 5):  # players and dealers move things all the time
                    field.place(uid, f"zone{rng.randrange(antennas) + 1}")
                t += 0.05
                emulator.step(t)
                transport = reader.link.transport
                if transport is not None and transport.fileno() is not None:
                    select.select([transport.fileno()], [], [], 0.05)
                readable_at = time.perf_counter()
                cycles_done = reader.poll(t)
                events = [e for cycle in cycles_done for e in tracker.feed(cycle)]
                done_at = time.perf_counter()
                if step >= 40 and reader.link.is_up:  # after the handshake and the first full inventory
                    host_s += done_at - readable_at
                    reads += sum(len(cycle.reads) for cycle in cycles_done)
                    if events:
                        latencies.append((done_at - readable_at) * 1000)
        finally:
            reader.close()
            emulator.close()
    if not reads:
        raise RuntimeError("no tag reads came through the emulated reader link")
    return reads / host_s, percentile(latencies, 99)


def measure_journal(config_path: str, events: int = 10_000) -> tuple[float, float]:
    """Durable journaling and recovery: play simulated hands through the pipeline with an SQLite journal
    (WAL, synchronous=FULL, one commit per reader cycle) until ``events`` events are on disk; then time a
    restart: open with the self-check, replay every input into a new controller.

    Returns (journaled events per second, seconds from opening the journal to the restored state).
    """
    import tempfile
    from pathlib import Path

    from rfid_table.service.journal import Journal

    config = load_config(config_path)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.journal"
        journal = Journal(path)
        journal.open()
        # A brisk dealer (an action every 25-200 ms): several events share a reader cycle, and so a commit,
        # as they do when a table is busy — the daemon commits once per cycle, whatever the cycle holds.
        table = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, pace_s=0.1, link="direct"), None,
                               journal)
        t, journaled, busy_s = 1000.0, 0, 0.0
        while journaled < events:
            table.advance(t)
            start = time.perf_counter()
            journaled += len(table.pipeline.step(t))
            busy_s += time.perf_counter() - start
            t += table.cycle_s
        journal.close()
        start = time.perf_counter()
        journal = Journal(path)
        if not journal.open().ok:
            raise RuntimeError("the bench journal failed its self-check")
        restored = SimulatedTable(config, SimOptions(hands=None, link="direct"), None, journal)
        restored.pipeline.restore(t)
        recovery_s = time.perf_counter() - start
        if restored.pipeline.controller.seq != table.pipeline.controller.seq:
            raise RuntimeError("the restored controller differs from the one that wrote the journal")
        journal.close()
    return journaled / busy_s, recovery_s


ONE_CORE_RUNS = 3


def _replay_chunk(texts: list[str]) -> tuple[int, float]:
    from controller import phh  # noqa: PLC0415
    from sim.replay import ReplayTable  # noqa: PLC0415

    table = ReplayTable(pace_s=0.5, settle_s=0.4, deal_s=0.05)  # a brisk dealer; the readers cycle as ever
    started = time.perf_counter()
    exact = sum(table.replay(phh.loads(text)).ok for text in texts)
    return exact, time.perf_counter() - started


def _replay_worker_start() -> None:
    """A replay process's imports, before it is timed."""
    from controller import phh  # noqa: F401, PLC0415
    from sim.replay import ReplayTable  # noqa: F401, PLC0415


def measure_replay(hands: int = 400) -> dict[str, float]:
    from controller import phh  # noqa: PLC0415
    from controller.showdown import award  # noqa: PLC0415
    from sim.handgen import random_hands  # noqa: PLC0415

    texts = [phh.dumps(h) for h in random_hands(hands, seed=20261129)]
    started = time.perf_counter()
    for text in texts:
        hand, hole, board, _ = phh.replay(phh.loads(text))
        award(hand, hole if hand.status == "showdown" else None, board)
    engine_rate = hands / (time.perf_counter() - started)
    # The replays run in processes of their own, started afresh: what the bench's earlier parts left in this
    # process's heap (every full collection walks it) is not the replay's cost, and varied it from run to run.
    ctx = multiprocessing.get_context("spawn")
    # On one core three times, each in a fresh process: the figure is the fastest of the three. Another process on
    # the machine only ever slows a run (by up to two fifths here, while the engine alone ran at its usual speed),
    # so the fastest is the nearest to what the replay itself costs, as the timeit module advises for the same
    # reason; the three are reported, and their median.
    one_core_rates = []
    for _ in range(ONE_CORE_RUNS):
        with ctx.Pool(1, initializer=_replay_worker_start) as pool:
            exact, one_core_s = pool.apply(_replay_chunk, (texts,))
        if exact != hands:
            break
        one_core_rates.append(hands / one_core_s)
    cores = os.cpu_count() or 1
    chunks = [texts[i::cores] for i in range(cores)]
    with ctx.Pool(cores, initializer=_replay_worker_start) as pool:
        pool.map(_replay_chunk, [[text] for text in texts[:2 * cores]], chunksize=1)  # the workers up and warm
        started = time.perf_counter()
        results = pool.map(_replay_chunk, chunks, chunksize=1)
        all_cores_s = time.perf_counter() - started
    if exact != hands or sum(r[0] for r in results) != hands:
        raise RuntimeError(f"the replay read {exact} of {hands} hands exactly: the benchmark is not valid")
    return {"replay_hands_per_s": hands / all_cores_s,
            "replay_hands_per_s_one_core": max(one_core_rates),
            "replay_hands_per_s_one_core_median": sorted(one_core_rates)[len(one_core_rates) // 2],
            "replay_one_core_runs": one_core_rates, "replay_cores": cores, "engine_hands_per_s": engine_rate}


# ---- the Raspberry Pi budget: the daemon as a process, on a full table -----------------------------------------

TABLE_CONFIG = "table-chips.toml"  # ten seats, cards and chips: 27 antennas on two readers at 20 cycles a second
TABLE_NOISE = 0.05  # realistic RF noise (sim.noise): misses, cross reads, flicker, stack limits
REST_TAGS = 80  # by the river: 20 hole cards, 5 board cards, 3 burns and the chips in the pot
REST_SETTLE_S = 3.0  # after the tags are placed, before the CPU is counted
REST_MEASURE_S = 10.0
HAND_PACE_S = 0.5  # a brisk dealer, an action every 0.5 s: enough cards for a p99 in a few minutes
# A card pitched every 0.3 s, a fast dealer's pace. At 0.15 s, twice as fast as anyone pitches, a card read late (at
# a zone's edge) overtook the next card about once in 1,200, and the table asked the floor, as it must when it cannot
# tell that from a card dealt out of turn (read_order uncertain): a false event, since this dealer makes no mistakes.
DEAL_S = 0.3
FIRST_READ_EVENTS = {"card_dealt": "seat", "board_card": "board", "burn": "burn"}  # one card each


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/<pid>/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _listen(settings: MqttSettings, topics: list[str], ready, results) -> None:
    """A subscriber in its own process: every message on ``topics`` with its arrival (perf_counter), until told."""
    received: list[tuple[str, bytes, float]] = []
    client = make_client(settings, f"rfid-table-bench-listen-{os.getpid()}")
    client.on_connect = lambda c, u, f, rc, p: c.subscribe([(topic, QOS) for topic in topics])
    client.on_subscribe = lambda c, u, mid, rcs, p: ready.send(True)
    client.on_message = lambda c, u, m: received.append((m.topic, m.payload, time.perf_counter()))
    client.connect(settings.host, settings.port)
    client.loop_start()
    results.recv()
    client.disconnect()
    client.loop_stop()
    results.send(received)


def _table_world(conn, config_path: str, link_dir: str, noise: float, seed: int, settings: MqttSettings,
                 commands_topic: str) -> None:
    """The table outside the daemon, in its own process so that the daemon's CPU is its own: the field, a firmware
    emulator per reader on a pty (with RF noise), and players who bet with chips and a dealer, on the monotonic
    clock; the floor's stacks go to the daemon as MQTT commands. Records when each tag placed on a zone is first
    read there (perf_counter, shared by all processes)."""
    import select as select_module
    from pathlib import Path

    from rfid_table.config.table import ENGINE_VARIANTS
    from sim.betting_dealer import TABLE_CLEAR, BettingDealer
    from sim.field import TableField
    from sim.firmware import FirmwareEmulator
    from sim.noise import NoiseModel

    config = load_config(config_path)
    waiting: dict[tuple[str, int, str], float] = {}  # (reader, antenna, uid) → when placed, until first read
    first_reads: list[tuple[str, str, float, float]] = []  # (uid, zone, placed, first read)
    zone_at = {where: zone for zone, where in config.zones.items()}

    class WatchedField(TableField):
        def place(self, uid: str, zone: str) -> None:
            super().place(uid, zone)
            reader, antenna = config.zones[zone]
            waiting[(reader, antenna, uid)] = time.perf_counter()

    class WatchedNoise(NoiseModel):
        reader = ""

        def antenna_reads(self, cycle, antenna, tags, neighbour_tags={}):
            reads = super().antenna_reads(cycle, antenna, tags, neighbour_tags)
            if waiting:
                now = time.perf_counter()
                for read in reads:
                    placed = waiting.pop((self.reader, antenna + 1, read.uid), None)  # the wire counts from 0
                    if placed is not None:
                        first_reads.append((read.uid, zone_at[(self.reader, antenna + 1)], placed, now))
            return reads

    field = WatchedField(config.zones)
    emulators = []
    for index, reader in enumerate(config.readers.values()):
        model = WatchedNoise.realistic(noise, seed=seed + index)
        model.reader = reader.name
        emulators.append(FirmwareEmulator(field, reader=reader.name, antenna_count=reader.antennas,
                                          cycle_s=reader.cycle_s, noise=model, serial=f"BENCH-{reader.name}",
                                          link_path=Path(link_dir) / reader.name, seed=seed))
    floor = make_client(settings, f"rfid-table-bench-floor-{os.getpid()}")
    floor.connect(settings.host, settings.port)
    floor.loop_start()
    commands = iter(range(1, 1 << 30))

    def command(body: dict) -> None:
        floor.publish(commands_topic, json.dumps({"id": f"bench-{next(commands)}", **body}), qos=QOS)

    game = config.game
    dealer = BettingDealer(field, config.decks[config.active_deck], config.chips.chips,
                           list(range(1, config.seats + 1)), variant=ENGINE_VARIANTS[game.variant],
                           blinds=(game.small_blind, game.big_blind), ante=game.ante, command=command,
                           pace_s=HAND_PACE_S, deal_s=DEAL_S, seed=seed)
    conn.send("ready")
    moves, due = None, 0.0
    try:
        while True:
            now = time.monotonic()
            if conn.poll(0):
                what, *arguments = conn.recv()
                if what == "stop":
                    break
                if what == "rest":  # the river: every card out, the bets in the pot
                    (count,) = arguments
                    field.clear()
                    deck = list(config.decks[config.active_deck])
                    cards = [Zone("cards", s).name for s in range(1, config.seats + 1) for _ in range(2)]
                    cards += ["board"] * 5 + ["burn"] * 3
                    for uid, zone in zip(deck, cards):
                        field.place(uid, zone)
                    for uid in list(config.chips.chips)[:count - len(cards)]:
                        field.place(uid, "pot")
                    conn.send(("placed", field.version))
                elif what == "clear":
                    field.clear()
                    conn.send(("cleared", field.version))
                elif what == "hands":
                    (hands,) = arguments
                    field.clear()
                    first_reads.clear()
                    waiting.clear()
                    # The floor opens the game: who plays, where the button is (the tags at rest were no hand).
                    button = next((p for p in dealer.players if p > dealer.button), dealer.players[0])
                    command({"command": "seats", "seats": dealer.players})
                    command({"command": "set_button", "seat": button})
                    moves, due, hands_dealt = dealer.hands(hands), now + 1.0, 0
                    current = next(moves)
            while moves is not None and now >= due:
                current.apply()
                if current.describe == TABLE_CLEAR:
                    hands_dealt += 1
                    conn.send(("hand dealt", hands_dealt))
                current = next(moves, None)
                if current is None:
                    moves = None
                    conn.send(("hands done", list(first_reads)))
                else:
                    due += current.delay_s
            for emulator in emulators:
                emulator.step(now)
            select_module.select([e.master_fd for e in emulators if e.master_fd is not None], [], [], 0.002)
    finally:
        floor.disconnect()
        floor.loop_stop()
        for emulator in emulators:
            emulator.close()


def _table_config(directory: str, settings: MqttSettings, table_id: str) -> str:
    """The full table's configuration with serial readers on the emulators' links and a unique table id."""
    import re
    from pathlib import Path

    source = CONFIG_DIR / TABLE_CONFIG
    text = source.read_text()
    text = re.sub(r'(?m)^id = "[^"]*"', f'id = "{table_id}"', text, count=1)
    text = re.sub(r'(?m)^registry = "([^"]*)"', lambda m: f'registry = "{source.parent / m.group(1)}"', text, count=1)
    for name in ("main", "chips"):
        text = re.sub(rf'(?ms)^(\[readers\.{name}\]\s*\n)backend = "sim"',
                      rf'\1backend = "serial"\nport = "{Path(directory) / name}"', text, count=1)
    path = Path(directory) / "table.toml"
    path.write_text(text)
    return str(path)


def measure_table_process(settings: MqttSettings, hands: int, progress: Callable[[str], None],
                          journal_dir: str | None = None, fsync_ms: float = 5.0) -> dict:
    """``rfid-table run`` as a process, on a full ten-seat table emulated in another process (two readers on ptys,
    27 antennas at 20 cycles a second, noise ``TABLE_NOISE``), with its journal, against the broker:

    * start-up: from starting the process to its ``online`` status at a subscriber, and the same for a bare paho
      client process that connects and publishes one status (the floor: Python, paho and the broker);
    * its CPU share of one core with ``REST_TAGS`` tags lying still, and during ``hands`` hands dealt;
    * the time from a card's first read by a reader to its event at a subscriber (debouncing included), and the
      events that do not match what the dealer did (the dealer makes no mistakes: every irregularity is false);
    * the daemon's journal commits during the hands, as its diagnostics time them: how many, the slowest, and how
      many took 100 ms or more (every card waits for its commit, so a stalling disk shows in the first read's tail);
    * the disk's own sync latency in the same minutes (:class:`bench_disk.DiskProbe` beside the journal), and the
      cards whose commit and publication spanned one of its stalls.

    The journal is on the disk :func:`bench_disk.journal_disk` gives for ``journal_dir`` and ``fsync_ms``: by
    default a steady disk with every fsync ``fsync_ms`` late, and the probe then watches the machine's disk.
    """
    import signal
    import tempfile
    from contextlib import ExitStack, suppress

    table_id = f"bench-{os.getpid()}"
    topics = Topics.for_table(settings.topic_prefix, table_id)
    baseline_topic = f"rfid-table-bench/{os.getpid()}/status"
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="rfid-table-bench-") as directory, ExitStack() as made:
        disk_of_journal = bench_disk.journal_disk(made, journal_dir, fsync_ms, directory)
        config_path = _table_config(directory, settings, table_id)
        world, theirs = ctx.Pipe()
        world_process = ctx.Process(target=_table_world, daemon=True, args=(
            theirs, config_path, directory, TABLE_NOISE, 5, settings, f"{topics.base}/commands/floor/bench"))
        world_process.start()
        if not world.poll(30) or world.recv() != "ready":
            raise RuntimeError("the emulated table did not start")
        ready_recv, ready_send = ctx.Pipe(duplex=False)
        listener, listener_end = ctx.Pipe()
        listen_process = ctx.Process(target=_listen, args=(settings, [topics.status, topics.events(secure=True),
                                                                      topics.diagnostics, baseline_topic],
                                                           ready_send, listener_end),
                                     daemon=True)
        listen_process.start()
        if not ready_recv.poll(20):
            raise RuntimeError("the bench subscriber could not subscribe")
        ready_recv.recv()
        bare = ("import sys, paho.mqtt.client as m\n"
                "c = m.Client(m.CallbackAPIVersion.VERSION2, protocol=m.MQTTv5)\n"
                "c.connect(sys.argv[1], int(sys.argv[2])); c.loop_start()\n"
                "c.publish(sys.argv[3], b'online', qos=1).wait_for_publish(10); c.disconnect(); c.loop_stop()\n")
        baseline_started = time.perf_counter()
        subprocess.run([sys.executable, "-c", bare, settings.host, str(settings.port), baseline_topic], check=True)
        progress(f"  table: starting rfid-table run on the emulated readers, its journal on "
                 f"{disk_of_journal.description}")
        log_file = open(os.path.join(directory, "daemon.log"), "w")
        started = time.perf_counter()
        daemon = subprocess.Popen(
            [*disk_of_journal.command_prefix, sys.executable, "-m", "rfid_table.cli", "--log-level", "WARNING", "run",
             "--config", config_path, "--journal", os.path.join(disk_of_journal.directory, "table.journal"),
             "--host", settings.host, "--port", str(settings.port)], stdout=log_file, stderr=subprocess.STDOUT)
        # Under strace the daemon is strace's child: its CPU and its signal are its own.
        try:
            daemon_pid = bench_disk.traced_pid(daemon.pid) if disk_of_journal.command_prefix else daemon.pid
        except RuntimeError:
            daemon.kill()
            raise

        def rest() -> float:
            """The daemon's CPU share with REST_TAGS tags lying still."""
            world.send(("rest", REST_TAGS))
            world.recv()
            progress(f"  table: {REST_TAGS} tags at rest, {REST_SETTLE_S + REST_MEASURE_S:.0f} s")
            time.sleep(REST_SETTLE_S)
            cpu, wall = _cpu_s(daemon_pid), time.perf_counter()
            time.sleep(REST_MEASURE_S)
            return (_cpu_s(daemon_pid) - cpu) / (time.perf_counter() - wall)

        disk = bench_disk.DiskProbe(disk_of_journal.probe_directory)
        host = bench_host.StealProbe()
        try:
            time.sleep(2.0)  # the readers' handshakes, the first inventories
            rest_share = rest()
            world.send(("clear",))  # an empty table: the hand at rest ends
            world.recv()
            time.sleep(3.0)
            progress(f"  table: {hands} hands with chips, an action every {HAND_PACE_S:g} s, "
                     f"a card every {DEAL_S:g} s")
            cpu, hands_from = _cpu_s(daemon_pid), time.perf_counter()
            disk.start()
            host.start()
            world.send(("hands", hands))
            deadline = time.monotonic() + 120 * hands
            while True:
                if not world.poll(max(0.0, deadline - time.monotonic())):
                    raise RuntimeError("the emulated dealer did not finish")
                what, detail = world.recv()
                if what != "hand dealt":
                    first_reads = detail
                    break
                progress(f"  table: hand {detail}/{hands} dealt")
            hand_share = (_cpu_s(daemon_pid) - cpu) / (time.perf_counter() - hands_from)
            time.sleep(2.0)  # the last events on their way
            hands_until = time.perf_counter()
            disk_syncs = disk.stop()
            steal = host.stop()
            rest_after_share = rest()  # the hands' events now wait in the journal for the broadcast delay
            if daemon.poll() is not None:
                raise RuntimeError(f"rfid-table run exited with {daemon.returncode}")
        finally:
            disk.stop()
            host.stop()
            if daemon.poll() is None:
                with suppress(ProcessLookupError):  # ended meanwhile
                    os.kill(daemon_pid, signal.SIGTERM)  # strace, if there, ends with it
            daemon.wait(10)
            log_file.close()
            world.send(("stop",))
            world_process.join(10)
        listener.send("stop")
        received = listener.recv()
        listen_process.join(5)
    online = [t for topic, payload, t in received if topic == topics.status and payload == b"online"]
    bare_online = [t for topic, _payload, t in received if topic == baseline_topic]
    if not online or not bare_online:
        raise RuntimeError("no online status arrived from the daemon or the bare client")
    events = [(json.loads(payload), t) for topic, payload, t in received if topic == topics.events(secure=True)]
    # The daemon's own timing of its journal commits, from its diagnostics (once a second) during the hands: the
    # disk's share of the latency, measured where it happens.
    commits = [json.loads(payload)["journal"] for topic, payload, t in received
               if topic == topics.diagnostics and hands_from < t < hands_until]
    sync_s = [seconds for _start, seconds in disk_syncs]
    disk_stalls = bench_disk.stalls(disk_syncs)
    steal_bursts = bench_host.bursts(steal)
    config = load_config(str(CONFIG_DIR / TABLE_CONFIG))
    cards = config.debounce_by_zone()[Zone("cards", 1).name]
    # The least a card can take: the reads in a row that make it present, one reader cycle apart.
    floor_ms = (cards.present_after_cycles - 1) * config.readers["main"].cycle_s * 1000
    return {"journal_disk": disk_of_journal.description,
            "startup_s": online[0] - started, "startup_baseline_s": bare_online[0] - baseline_started,
            "cpu_rest": rest_share, "cpu_hand": hand_share, "cpu_rest_after_hands": rest_after_share,
            "first_read_floor_ms": floor_ms,
            "journal_commits": sum(c["commits"] for c in commits),
            "journal_commit_max_ms": max((c["commit_max_ms"] for c in commits), default=float("nan")),
            "journal_slow_commits": commits[-1]["slow_commits"] - commits[0]["slow_commits"] if commits else 0,
            "disk_syncs": len(sync_s),
            "disk_sync_p50_ms": percentile(sync_s, 50) * 1000,
            "disk_sync_p99_ms": percentile(sync_s, 99) * 1000,
            "disk_sync_max_ms": max(sync_s) * 1000,
            "disk_stalls": len(disk_stalls),
            "host_steal_share": bench_host.share(steal),
            "host_steal_bursts": len(steal_bursts),
            "host_steal_windows": len(steal),
            **_first_read_latencies(first_reads, [(e, t) for e, t in events if hands_from < t < hands_until],
                                    time.time() - time.perf_counter(),
                                    # a card waits on a stall of its journal's disk only
                                    disk_stalls if disk_of_journal.probe_beside_journal else [], steal_bursts)}


def _first_read_latencies(first_reads: list[tuple[str, str, float, float]], events: list[tuple[dict, float]],
                          wall_offset_s: float, disk_stalls: list[tuple[float, float]],
                          steal_bursts: Sequence[tuple[float, float]] = ()) -> dict:
    """Match each card event, in order of arrival, to the earliest first read of that card in the zone it names;
    an event that matches no read is false (each is named, as the subscriber got it, for the run's report), a read
    that no event matches is a missed card.

    Each latency is also split at the event's wall stamp (``t``: the daemon's step that made it; ``wall_offset_s``
    takes it to perf_counter): before it, the debouncing, the order window and the daemon's loop; after it, the
    journal's commit and the broker. A card whose time after the stamp spans one of ``disk_stalls`` (start, end on
    perf_counter) waited on the disk: the p99 of the others is the table's latency on a disk that does not stall.
    Of those, a card whose whole span, first read to arrival, shares a moment with one of ``steal_bursts`` waited
    on the host (a virtual machine's CPUs given to other guests): the p99 of the cards clear of both is the table's
    own."""
    from collections import defaultdict, deque

    config = load_config(str(CONFIG_DIR / TABLE_CONFIG))
    card_of = config.decks[config.active_deck]
    reads: dict[tuple[str, str], deque[float]] = defaultdict(deque)  # (card, zone) → first reads, oldest first
    expected = 0
    for uid, zone, _placed, read_at in sorted(first_reads, key=lambda r: r[3]):
        if Zone.parse(zone).place in ("seat", "board", "burn"):
            reads[(card_of.get(uid), zone)].append(read_at)
            expected += 1
    latencies, false_events = [], []
    to_stamp: list[float] = []  # first read → the event's stamp
    from_stamp: list[float] = []  # the stamp → the subscriber
    clear_of_stalls: list[float] = []  # the latencies of the cards that did not wait on a stalled disk
    clear_of_both: list[float] = []  # ... nor on a host that took the CPUs
    for event, arrived in sorted(events, key=lambda e: e[1]):
        kind = event["type"]
        if kind == "irregular_card":
            false_events.append(event)
            continue
        if kind not in FIRST_READ_EVENTS:
            continue
        zone = Zone("cards", event["seat"]).name if kind == "card_dealt" else FIRST_READ_EVENTS[kind]
        waiting = reads.get((event.get("card"), zone))
        if not waiting or waiting[0] > arrived:
            false_events.append(event)
            continue
        read_at = waiting.popleft()
        latencies.append((arrived - read_at) * 1000)
        stamped = event["t"] - wall_offset_s
        to_stamp.append((stamped - read_at) * 1000)
        from_stamp.append((arrived - stamped) * 1000)
        if not bench_disk.overlaps((stamped, arrived), disk_stalls):
            clear_of_stalls.append(latencies[-1])
            if not bench_disk.overlaps((read_at, arrived), steal_bursts):
                clear_of_both.append(latencies[-1])
    nan = float("nan")
    return {"first_read_events": len(latencies), "first_read_missed": expected - len(latencies),
            "false_events": len(false_events),
            # what each said, without its wall stamp: the type, the seq and the fields that name the card and seat
            "false_events_seen": [{k: v for k, v in e.items() if k != "t"} for e in false_events],
            "first_read_p50_ms": percentile(latencies, 50) if latencies else nan,
            "first_read_p99_ms": percentile(latencies, 99) if latencies else nan,
            "first_read_max_ms": max(latencies, default=nan),
            "first_read_to_event_p99_ms": percentile(to_stamp, 99) if to_stamp else nan,
            "first_read_event_to_subscriber_p99_ms": percentile(from_stamp, 99) if from_stamp else nan,
            "first_read_in_disk_stalls": len(latencies) - len(clear_of_stalls),
            "first_read_p99_outside_disk_stalls_ms": percentile(clear_of_stalls, 99) if clear_of_stalls else nan,
            "first_read_in_steal_bursts": len(clear_of_stalls) - len(clear_of_both),
            "first_read_p99_outside_stalls_and_steal_ms": percentile(clear_of_both, 99) if clear_of_both else nan}


def bench(args) -> int:
    config_path = str(CONFIG_DIR / "table-10.toml")
    broker = None
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        settings = MqttSettings(host=host or "127.0.0.1", port=int(port))
    else:
        broker = PrivateBroker().start()
        settings = MqttSettings(host=broker.host, port=broker.port)
    progress = _progress
    steal_at = {"start": bench_host.cpu_ticks()}  # the host's steal over the whole bench and its parts
    try:
        progress(f"end to end: tag read → HAL → controller → publisher → broker → subscriber, ≥{args.events} events")
        e2e, send_times = measure_end_to_end(config_path, settings, args.events, progress)
        progress(f"baseline: {len(send_times)} bare publish → broker → subscriber round trips, same timing")
        baseline = measure_baseline(settings, send_times, progress)
        steal_at["e2e"] = bench_host.cpu_ticks()
        progress("codec: decoding 50,000 INVENTORY frames")
        decode_rate = measure_decode_frames_per_s()
        progress("reader link: tag reads through pty, codec, link, firmware reader and zone tracker")
        read_rate, read_p99 = measure_tag_reads()
        progress("journal: 10,000 events with durable commits, then a restart from them")
        _per_step_busy, recovery_s = measure_journal(config_path)
        progress(f"journal: durable throughput with group commits and with one commit a step"
                 f"{f', then with every fsync {args.fsync_ms:g} ms late' if args.fsync_ms else ''}")
        journal_figures = bench_journal.report(args.journal_events, args.fsync_ms, progress)
        progress(f"memory: rfid-table sim playing {args.rss_hands} hands over the emulated reader link")
        rss = measure_rss_mb(config_path, settings, args.rss_hands)
        progress("replay: 400 random hands as cards and chips on the simulated table, read back")
        steal_at["replay from"] = bench_host.cpu_ticks()
        replay = measure_replay()
        steal_at["replay"] = bench_host.cpu_ticks()
        progress("equity: 2, 6 and 9 live seats, exact on the flop, sampled preflop")
        equity = measure_equity()
        # The reader firmware on the modelled PN5180 (rfid_table.devtools.bench_reader): a few minutes, so on request.
        reader = measure_reader(progress) if args.reader_model else None
        # The readers one buys, on their emulators in real time (rfid_table.devtools.bench_bought): on request too.
        bought = (bench_bought.measure_bought(settings, progress, reader_model=reader)
                  if args.bought_readers else None)
        table = None
        if args.table_hands:
            progress(f"table: rfid-table run as a process on a full ten-seat table (emulated readers, noise "
                     f"{TABLE_NOISE}): start-up, CPU at rest and in {args.table_hands} hands, first read to subscriber")
            table = measure_table_process(settings, args.table_hands, progress, args.table_journal_dir, args.fsync_ms)
    finally:
        if broker is not None:
            broker.stop()
    steal_at["end"] = bench_host.cpu_ticks()
    steal = {"host_steal_pct": bench_host.share_between(steal_at["start"], steal_at["end"]),
             "host_steal_pct_e2e": bench_host.share_between(steal_at["start"], steal_at["e2e"]),
             "host_steal_pct_replay": bench_host.share_between(steal_at["replay from"], steal_at["replay"])}
    result = {
        "e2e_events": len(e2e),
        "e2e_p50_ms": round(percentile(e2e, 50), 3),
        "e2e_p99_ms": round(percentile(e2e, 99), 3),
        "e2e_p999_ms": round(percentile(e2e, 99.9), 3),
        "e2e_max_ms": round(max(e2e), 3),
        "baseline_messages": len(baseline),
        "baseline_p50_ms": round(percentile(baseline, 50), 3),
        "baseline_p99_ms": round(percentile(baseline, 99), 3),
        "baseline_p999_ms": round(percentile(baseline, 99.9), 3),
        "baseline_max_ms": round(max(baseline), 3),
        "rss_mb": round(rss, 1),
        "decode_frames_per_s": round(decode_rate),
        "tag_reads_per_s": round(read_rate),
        "frame_to_zone_event_p99_ms": round(read_p99, 3),
        **journal_figures,  # journaled_events_per_s and its baselines (rfid_table.devtools.bench_journal)
        "recovery_s": round(recovery_s, 3),
        "replay_hands_per_s": round(replay["replay_hands_per_s"]),
        "replay_hands_per_s_one_core": round(replay["replay_hands_per_s_one_core"]),
        "replay_hands_per_s_one_core_median": round(replay["replay_hands_per_s_one_core_median"]),
        "replay_one_core_runs": [round(rate) for rate in replay["replay_one_core_runs"]],
        "replay_cores": replay["replay_cores"],
        "engine_hands_per_s": round(replay["engine_hands_per_s"]),
        **{key: round(ms, 2) for key, ms in equity.items()},
        # the machine's own minutes: the CPU time its host gave to other guests (None where the kernel does not say)
        **{key: None if value is None else round(value * 100, 2) for key, value in steal.items()},
    }
    if table is not None:
        result.update({
            "table_journal_disk": table["journal_disk"],
            "startup_s": round(table["startup_s"], 3),
            "startup_baseline_s": round(table["startup_baseline_s"], 3),
            "daemon_cpu_rest_pct": round(table["cpu_rest"] * 100, 2),
            "daemon_cpu_hand_pct": round(table["cpu_hand"] * 100, 2),
            "daemon_cpu_rest_after_hands_pct": round(table["cpu_rest_after_hands"] * 100, 2),
            "first_read_events": table["first_read_events"],
            "first_read_missed": table["first_read_missed"],
            "false_events": table["false_events"],
            "false_events_seen": table["false_events_seen"],
            "first_read_p50_ms": round(table["first_read_p50_ms"], 1),
            "first_read_p99_ms": round(table["first_read_p99_ms"], 1),
            "first_read_max_ms": round(table["first_read_max_ms"], 1),
            "first_read_to_event_p99_ms": round(table["first_read_to_event_p99_ms"], 1),
            "first_read_event_to_subscriber_p99_ms": round(table["first_read_event_to_subscriber_p99_ms"], 1),
            "first_read_floor_ms": round(table["first_read_floor_ms"], 1),
            "journal_commits_in_hands": table["journal_commits"],
            "journal_commit_max_ms_in_hands": round(table["journal_commit_max_ms"], 1),
            "journal_slow_commits_in_hands": table["journal_slow_commits"],
            "disk_syncs_in_hands": table["disk_syncs"],
            "disk_sync_p50_ms": round(table["disk_sync_p50_ms"], 2),
            "disk_sync_p99_ms": round(table["disk_sync_p99_ms"], 1),
            "disk_sync_max_ms": round(table["disk_sync_max_ms"], 1),
            "disk_stalls_in_hands": table["disk_stalls"],
            "first_read_in_disk_stalls": table["first_read_in_disk_stalls"],
            "first_read_p99_outside_disk_stalls_ms": round(table["first_read_p99_outside_disk_stalls_ms"], 1),
            "host_steal_pct_in_hands": round(table["host_steal_share"] * 100, 2),
            "host_steal_bursts_in_hands": table["host_steal_bursts"],
            "host_steal_windows_in_hands": table["host_steal_windows"],
            "first_read_in_steal_bursts": table["first_read_in_steal_bursts"],
            "first_read_p99_outside_stalls_and_steal_ms":
                round(table["first_read_p99_outside_stalls_and_steal_ms"], 1),
        })
    result["e2e_p99_over_baseline_p99"] = round(result["e2e_p99_ms"] / result["baseline_p99_ms"], 2)
    result["e2e_p999_over_baseline_p999"] = round(result["e2e_p999_ms"] / result["baseline_p999_ms"], 2)
    result["replay_one_core_over_engine"] = round(replay["replay_hands_per_s_one_core"]
                                                  / replay["engine_hands_per_s"], 3)
    if table is not None:
        result["startup_over_baseline"] = round(table["startup_s"] / table["startup_baseline_s"], 2)
        result["first_read_p99_over_floor"] = round(table["first_read_p99_ms"] / table["first_read_floor_ms"], 2)
    parts = {key: value for key, value in (("reader_model", reader), ("bought_readers", bought)) if value is not None}
    if args.json:
        print(json.dumps({**result, **parts}))
    else:
        for key, value in result.items():
            print(f"{key:>28}  {value}")
        if reader is not None:
            print("\n".join(report_lines(reader)))
        if bought is not None:
            print("\n".join(bench_bought.report_lines(bought)))
    return 0
