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
* ``reader_model`` (with ``--reader-model``): the reader firmware in MicroPython on the modelled PN5180 (``rfid_table.bench_reader``): dwell
  time against load, a whole 10-seat table on 1, 2 and 4 front ends, dealt-card arrival per design, memory.
"""

import json
import math
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable

from rfid_table.bench_reader import measure_reader, report_lines
from rfid_table.broker import PROJECT_ROOT, PrivateBroker
from rfid_table.config import MqttSettings, load_config
from rfid_table.equity_worker import measure_equity
from rfid_table.contract import QOS, Topics
from rfid_table.mqtt_client import make_client
from rfid_table.publisher import MqttPublisher
from rfid_table.simulate import SimOptions, SimulatedTable

E2E_SPEED = 50  # table time per wall time in the end-to-end run: a reader cycle every 1 ms of wall time
E2E_PACE_S = 0.1  # a dealer's action every 25-200 ms of table time


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


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


def measure_baseline(settings: MqttSettings, send_times: list[float]) -> list[float]:
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
    arrived = receiver.collect(len(sent))
    sender.disconnect()
    sender.loop_stop()
    return _latencies_ms(sent, arrived)


def measure_end_to_end(config_path: str, settings: MqttSettings, min_events: int,
                       progress: Callable[[str], None]) -> tuple[list[float], list[float]]:
    """Latencies of ≥ ``min_events`` events, and when each was read (seconds from the start)."""
    config = load_config(config_path)
    config = type(config)(**{**config.__dict__, "mqtt": settings})
    topics = Topics.for_table(settings.topic_prefix, config.table_id)
    receiver = _Receiver(settings, topics.events(secure=False))
    publisher = MqttPublisher(settings, config.table_id, epoch="bench")
    publisher.start()
    table = SimulatedTable(config, SimOptions(hands=None, seed=1, pace_s=E2E_PACE_S, link="direct"), publisher)
    sent: dict[int, float] = {}
    # Like the daemon, the loop gives the time between reader cycles to the publisher instead of spinning;
    # table time runs E2E_SPEED times faster than real time so that 5,000 events take seconds, not hours.
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
    publisher.stop()
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

    from rfid_table.journal import Journal

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


def _replay_chunk(texts: list[str]) -> tuple[int, float]:
    from controller import phh  # noqa: PLC0415
    from sim.replay import ReplayTable  # noqa: PLC0415

    table = ReplayTable(pace_s=0.5, settle_s=0.4, deal_s=0.05)  # a brisk dealer; the readers cycle as ever
    started = time.perf_counter()
    exact = sum(table.replay(phh.loads(text)).ok for text in texts)
    return exact, time.perf_counter() - started


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
    exact, one_core_s = _replay_chunk(texts)
    cores = os.cpu_count() or 1
    chunks = [texts[i::cores] for i in range(cores)]
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(cores) as pool:
        results = pool.map(_replay_chunk, chunks)
    all_cores_s = time.perf_counter() - started
    if exact != hands or sum(r[0] for r in results) != hands:
        raise RuntimeError(f"the replay read {exact} of {hands} hands exactly: the benchmark is not valid")
    return {"replay_hands_per_s": hands / all_cores_s, "replay_hands_per_s_one_core": hands / one_core_s,
            "replay_cores": cores, "engine_hands_per_s": engine_rate}


def bench(args) -> int:
    config_path = str(PROJECT_ROOT / "config" / "table-10.toml")
    broker = None
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        settings = MqttSettings(host=host or "127.0.0.1", port=int(port))
    else:
        broker = PrivateBroker().start()
        settings = MqttSettings(host=broker.host, port=broker.port)
    progress = _progress
    try:
        progress(f"end to end: tag read → HAL → controller → publisher → broker → subscriber, ≥{args.events} events")
        e2e, send_times = measure_end_to_end(config_path, settings, args.events, progress)
        progress(f"baseline: {len(send_times)} bare publish → broker → subscriber round trips, same timing")
        baseline = measure_baseline(settings, send_times)
        progress("codec: decoding 50,000 INVENTORY frames")
        decode_rate = measure_decode_frames_per_s()
        progress("reader link: tag reads through pty, codec, link, firmware reader and zone tracker")
        read_rate, read_p99 = measure_tag_reads()
        progress("journal: 10,000 events with durable commits, then a restart from them")
        journal_rate, recovery_s = measure_journal(config_path)
        progress(f"memory: rfid-table sim playing {args.rss_hands} hands over the emulated reader link")
        rss = measure_rss_mb(config_path, settings, args.rss_hands)
        progress("replay: 400 random hands as cards and chips on the simulated table, read back")
        replay = measure_replay()
        progress("equity: 2, 6 and 9 live seats, exact on the flop, sampled preflop")
        equity = measure_equity()
        # The reader firmware on the modelled PN5180 (rfid_table.bench_reader): a few minutes, so on request.
        reader = measure_reader(progress) if args.reader_model else None
    finally:
        if broker is not None:
            broker.stop()
    result = {
        "e2e_events": len(e2e),
        "e2e_p50_ms": round(percentile(e2e, 50), 3),
        "e2e_p99_ms": round(percentile(e2e, 99), 3),
        "baseline_messages": len(baseline),
        "baseline_p50_ms": round(percentile(baseline, 50), 3),
        "baseline_p99_ms": round(percentile(baseline, 99), 3),
        "rss_mb": round(rss, 1),
        "decode_frames_per_s": round(decode_rate),
        "tag_reads_per_s": round(read_rate),
        "frame_to_zone_event_p99_ms": round(read_p99, 3),
        "journaled_events_per_s": round(journal_rate),
        "recovery_s": round(recovery_s, 3),
        "replay_hands_per_s": round(replay["replay_hands_per_s"]),
        "replay_hands_per_s_one_core": round(replay["replay_hands_per_s_one_core"]),
        "replay_cores": replay["replay_cores"],
        "engine_hands_per_s": round(replay["engine_hands_per_s"]),
        **{key: round(ms, 2) for key, ms in equity.items()},
    }
    result["e2e_p99_over_baseline_p99"] = round(result["e2e_p99_ms"] / result["baseline_p99_ms"], 2)
    if args.json:
        print(json.dumps({**result, "reader_model": reader} if reader is not None else result))
    else:
        for key, value in result.items():
            print(f"{key:>28}  {value}")
        if reader is not None:
            print("\n".join(report_lines(reader)))
    return 0
