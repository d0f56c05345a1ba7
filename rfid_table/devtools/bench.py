"""``rfid-table bench``: latency and memory of the whole chain, through a real broker.

Each part of the bench is a module of its own beside this one; this one runs them in order and reports their figures,
a line each or, with ``--json``, one JSON object.

* ``baseline_*``: a bare paho publish → broker → paho subscriber round trip, measured in the same run with
  the same pacing and payload handling — the floor no daemon can beat on this machine
  (``rfid_table.devtools.bench_e2e``).
* ``e2e_*``: from a tag read entering the HAL to the matching event arriving at a subscriber, through the
  zone tracker, the controller, the publisher and the broker (``rfid_table.devtools.bench_e2e``).
* ``rss_mb``: peak resident memory of ``rfid-table sim`` playing hands against the broker
  (``rfid_table.devtools.bench_table``).
* ``decode_frames_per_s``: the wire-protocol decoder alone (``rfid_table.devtools.bench_tag_reads``).
* ``journaled_events_per_s`` and ``recovery_s``: the pipeline with its durable SQLite journal (no MQTT), and a
  restart from a 10,000-event journal (self-check and replay) to the restored state
  (``rfid_table.devtools.bench_journal``).
* ``tag_reads_per_s`` and ``frame_to_zone_event_p99_ms``: tag reads through the pty, the codec, the link, the
  firmware reader and the zone tracker (no MQTT; ``rfid_table.devtools.bench_tag_reads``).
* ``replay_hands_per_s``: random PHH hands played as physical table activity and read back (``sim.replay``: the
  simulated readers, the zone tracker, the controller with the chip layer; no MQTT), on every core the machine
  has, one table per core; ``replay_hands_per_s_one_core`` on one; ``engine_hands_per_s`` is the betting engine
  alone on the same hands (the floor of the work), for the ratio (``rfid_table.devtools.bench_replay``).
* ``startup_s``, ``daemon_cpu_*``, ``first_read_*`` and the journal's and the disk's figures in the hands (unless
  ``--table-hands 0``): ``rfid-table run`` as a process on a full ten-seat table emulated in another process
  (``rfid_table.devtools.bench_table``, the table in ``rfid_table.devtools.bench_table_world``).
* ``reader_model`` (with ``--reader-model``): the reader firmware in MicroPython on the modelled PN5180 (``rfid_table.devtools.bench_reader``): dwell
  time against load, a whole 10-seat table on 1, 2 and 4 front ends, dealt-card arrival per design, memory.
* ``bought_readers`` (with ``--bought-readers``): the readers one buys (Metratec, Feig) on their emulators at the
  documented rates, read by the daemon's pipeline on the example tables (``rfid_table.devtools.bench_bought``): each
  reader's pass against its emulator's model, a dealt card's time to the subscriber, the reference reader's beside.
* ``felt`` (with ``--felt HANDS``): a full 10-seat table mid-hand on the modelled PN5180 readers (``pn5180``; with
  ``--bought-readers`` also on the Metratec and Feig emulators), from a card, a bet or a fold landing on the felt to
  its event at a subscriber, beside the readers' own time (``rfid_table.devtools.bench_felt``).
* ``host_steal_pct``, ``host_steal_pct_e2e``, ``host_steal_pct_replay``: the share of the CPUs' time a hypervisor
  gave to other guests over the whole bench, the end-to-end part with its baseline, and the replay
  (``rfid_table.devtools.bench_host``; 0 on a Pi): the machine's own minutes, beside the figures they move.
"""

import json
import sys

from rfid_table.devtools.bench_reader import measure_reader, percentile, report_lines
from rfid_table.devtools import bench_bought, bench_felt
from rfid_table.devtools import bench_host, bench_journal
from rfid_table.devtools.bench_journal import measure_journal
from rfid_table.devtools.bench_e2e import measure_baseline, measure_end_to_end
from rfid_table.devtools.bench_replay import measure_replay
from rfid_table.devtools.bench_table import TABLE_NOISE, measure_rss_mb, measure_table_process
from rfid_table.devtools.bench_tag_reads import measure_decode_frames_per_s, measure_tag_reads
from rfid_table.ops.broker import PrivateBroker
from rfid_table.package_data import CONFIG_DIR
from rfid_table.config.table import MqttSettings
from rfid_table.service.equity_worker import measure_equity


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
        progress(f"journal: {args.recovery_events:,} events with durable commits, then a restart from them")
        _per_step_busy, recovery_s = measure_journal(config_path, args.recovery_events)
        progress(f"journal: durable throughput with group commits and with one commit a step"
                 f"{f', then with every fsync {args.fsync_ms:g} ms late' if args.fsync_ms else ''}")
        journal_figures = bench_journal.report(args.journal_events, args.fsync_ms, progress)
        progress(f"memory: rfid-table sim playing {args.rss_hands} hands over the emulated reader link")
        rss = measure_rss_mb(config_path, settings, args.rss_hands)
        progress(f"replay: {args.replay_hands} random hands as cards and chips on the simulated table, read back")
        steal_at["replay from"] = bench_host.cpu_ticks()
        replay = measure_replay(args.replay_hands)
        steal_at["replay"] = bench_host.cpu_ticks()
        progress("equity: 2, 6 and 9 live seats, exact on the flop, sampled preflop")
        equity = measure_equity()
        # The reader firmware on the modelled PN5180 (rfid_table.devtools.bench_reader): a few minutes, so on request.
        reader = measure_reader(progress) if args.reader_model else None
        # The readers one buys, on their emulators in real time (rfid_table.devtools.bench_bought): on request too.
        bought = (bench_bought.measure_bought(settings, progress, reader_model=reader)
                  if args.bought_readers else None)
        # A full table mid-hand, felt to subscriber (rfid_table.devtools.bench_felt): on request, on the modelled PN5180,
        # and with --bought-readers on the Metratec and Feig emulators too.
        felt = {kind: bench_felt.measure_felt(settings, progress, hands=args.felt, kind=kind)
                for kind in (bench_felt.CONFIGS if args.bought_readers else ("pn5180",))} if args.felt else None
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
    parts = {key: value for key, value in (("reader_model", reader), ("bought_readers", bought), ("felt", felt))
             if value is not None}
    if args.json:
        print(json.dumps({**result, **parts}))
    else:
        for key, value in result.items():
            print(f"{key:>28}  {value}")
        if reader is not None:
            print("\n".join(report_lines(reader)))
        if bought is not None:
            print("\n".join(bench_bought.report_lines(bought)))
        for figures in (felt or {}).values():
            print("\n".join(bench_felt.report_lines(figures)))
    return 0
