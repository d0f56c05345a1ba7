"""The Raspberry Pi budget, the full-table part of ``rfid-table bench``: the daemon as a process, on a full table.

:func:`measure_table_process` runs ``rfid-table run`` on a ten-seat table with cards and chips whose readers, players
and dealer are emulated in another process (``rfid_table.devtools.bench_table_world``), and measures its start-up,
its CPU at rest and in hands, and each card's time from its first read to its event at a subscriber, with the
journal's disk and the host's CPUs beside it (``rfid_table.devtools.bench_disk``, ``rfid_table.devtools.bench_host``).
:func:`measure_rss_mb` is the peak memory of ``rfid-table sim`` playing hands.
"""

import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from hal.zone_names import Zone
from rfid_table.devtools.bench_reader import percentile
from rfid_table.devtools import bench_disk, bench_host
from rfid_table.devtools.bench_table_world import DEAL_S, HAND_PACE_S, table_world
from rfid_table.package_data import CONFIG_DIR
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.contract import QOS, Topics
from rfid_table.mqtt import make_client

TABLE_CONFIG = "table-chips.toml"  # ten seats, cards and chips: 27 antennas on two readers at 20 cycles a second
TABLE_NOISE = 0.05  # realistic RF noise (sim.noise): misses, cross reads, flicker, stack limits
REST_TAGS = 80  # by the river: 20 hole cards, 5 board cards, 3 burns and the chips in the pot
REST_SETTLE_S = 3.0  # after the tags are placed, before the CPU is counted
REST_MEASURE_S = 10.0
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
        world_process = ctx.Process(target=table_world, daemon=True, args=(
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
