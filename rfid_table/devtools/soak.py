"""``rfid-table soak``: many simulated tables against one broker for minutes; nothing may be lost.

N ``rfid-table sim`` daemons run as separate processes (each with its own configuration, a copy of a shipped
one with a distinct ``[table] id``) and publish to one broker. A checking subscriber in a process of its own
takes both event feeds of every table at QoS 1 and checks, per table and feed:

* the ``seq`` numbers: no gap, nothing missing at the start or at the end (the journal's last ``seq`` with
  ``--journal-dir``, else the retained snapshot's), duplicates counted apart (delivery is at least once);
* both feeds carry the same events (the public payload is the secure one without its secrets);
* every ``hand_started`` has its ``hand_ended``, except the hand still running when the table is stopped.

At the end the tables get SIGTERM (they publish ``offline``), the subscriber drains, and the report gives the
throughput, the CPU of the tables, the broker and the subscriber, and the broker's memory. The exit status is
0 only when nothing was lost and every check passed. See docs/soak.md.

The soak is made of the world it runs (``rfid_table.devtools.soak_world``: the private broker and the tables'
processes), the checking subscriber (``rfid_table.devtools.soak_checker``), the broker's and the machine's CPU and
memory sampled meanwhile (``rfid_table.devtools.soak_sampler``) and the report (``rfid_table.devtools.soak_report``);
this module is its command line and the run, from the tables' start to the subscriber's drain.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from rfid_table.config.table import MqttSettings, load_config
from rfid_table.devtools.soak_checker import FEEDS, CheckerProcess
from rfid_table.devtools.private_postgres import unavailable
from rfid_table.devtools.soak_report import REPORT_FIELDS, build_report
from rfid_table.devtools.soak_room import SCHEDULE, Room
from rfid_table.devtools.soak_sampler import Sampler, find_listener_pid
from rfid_table.devtools.soak_world import (
    ROOM_TEMPLATES,
    TEMPLATES,
    Table,
    _reap,
    _running,
    _spawn_table,
    _stop_tables,
    make_configs,
    read_journal,
    soak_broker_conf,
    start_broker,
)

PROGRESS_S = 10.0  # a progress line on stderr this often
QUIET_S = 1.0  # the subscriber has drained once every table said offline and nothing came for this long
DRAIN_S = 30.0  # ... or after this long at most


def _progress(message: str) -> None:
    print(f"soak: {message}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rfid-table soak", description="N simulated tables against one broker; "
                                "checks that no event is lost and reports throughput, CPU and broker memory")
    p.add_argument("--tables", type=int, default=10, help="simulated tables, each its own process (default 10)")
    p.add_argument("--minutes", type=float, default=1.0, help="how long to run once every table is online "
                                                               "(default 1)")
    p.add_argument("--speed", type=float, default=5.0, help="table time per wall time of each table (default 5)")
    p.add_argument("--broker", default=None, help="HOST:PORT of a broker to use instead of a private Mosquitto")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--journal-dir", default=None, metavar="DIR",
                   help="each table journals to DIR/<table>.journal; the check then knows each table's last seq")
    p.add_argument("--seed", type=int, default=1, help="table i plays seed S+i (default 1)")
    p.add_argument("--link", choices=("direct", "pty"), default="direct",
                   help="direct (default): the simulated readers in-process; pty: the reader firmware emulator "
                        "on a pseudo-terminal, ~4x the CPU per table (see docs/soak.md)")
    p.add_argument("--config", action="append", default=None, metavar="FILE",
                   help="template configuration (repeatable; taken in turn). Default: config/table-6max.toml "
                        "and config/table-10.toml alternately")
    p.add_argument("--nice", type=int, default=10, help="niceness of the table processes, so the broker and the "
                   "checking subscriber come first on a small machine (default 10; 0 to not renice)")
    p.add_argument("--details", action="store_true", help="with --json: add the per-table figures")
    p.add_argument("--room", action="store_true",
                   help="add a card room: a private PostgreSQL and two `rfid-table room` instances sharing the "
                        "tables' hands, one killed and restarted, the database restarted; at the end every hand of "
                        "every journal stored once and the players' statistics equal to the journals' (tables "
                        "with chips: config/table-chips.toml by default; see docs/soak.md)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.tables < 1 or args.minutes <= 0 or args.speed < 0:
        print("rfid-table soak: --tables must be at least 1, --minutes above 0 and --speed 0 or more",
              file=sys.stderr)
        return 2
    if args.room and args.journal_dir and any(Path(args.journal_dir).glob("*.journal")):
        print(f"rfid-table soak: --room needs journals of this run only, and {args.journal_dir} holds some",
              file=sys.stderr)
        return 2
    if args.room and unavailable() is not None:
        print(f"rfid-table soak: --room: {unavailable()}", file=sys.stderr)
        return 2
    report = soak(args)
    if args.json:
        print(json.dumps(report))
    else:
        for key in REPORT_FIELDS:
            if key != "problems":
                print(f"{key:>26}  {report[key]}")
        for key, value in report.get("room", {}).items():
            print(f"{'room.' + key:>26}  {value}")
        for problem in report["problems"]:
            print(f"  {problem}" if problem.startswith("note:") else f"  problem: {problem}")
        print("OK: nothing lost" if report["ok"] else "FAILED: see the problems above")
    return 0 if report["ok"] else 1


def soak(args: argparse.Namespace) -> dict:
    broker = None
    broker_pid = None
    workdir = tempfile.TemporaryDirectory(prefix="rfid-table-soak-", ignore_cleanup_errors=True)
    queue_limit = None
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        settings = MqttSettings(host=host or "127.0.0.1", port=int(port))
        if settings.host in ("127.0.0.1", "localhost", "::1"):
            broker_pid = find_listener_pid(settings.port)
    else:
        conf, queue_limit = soak_broker_conf(Path(workdir.name))
        broker = start_broker(conf)
        settings = MqttSettings(host=broker.host, port=broker.port)
        broker_pid = broker.pid
    tables: list[Table] = []
    checker = None
    room = None
    room_report = None
    sampler = Sampler(broker_pid)
    problems: list[str] = []
    try:
        directory = Path(workdir.name)
        templates = [Path(c) for c in args.config] if args.config else list(ROOM_TEMPLATES if args.room
                                                                              else TEMPLATES)
        journal_dir = Path(args.journal_dir) if args.journal_dir else None
        if args.room and journal_dir is None:  # the journals are the room's truth
            journal_dir = directory / "journals"
        if journal_dir is not None:
            journal_dir.mkdir(parents=True, exist_ok=True)
        prefix = load_config(templates[0]).mqtt.topic_prefix
        first_expected = {}
        for table_id, path in make_configs(args.tables, directory, templates):
            journal = journal_dir / f"{table_id}.journal" if journal_dir is not None else None
            before = read_journal(journal) if journal is not None else None
            # A journal from an earlier run: its unacknowledged events are republished first.
            first_expected[table_id] = 1 + (min(before["delivered"].get(feed, 0) for feed in FEEDS) if before else 0)
            tables.append(Table(table_id, path, journal, directory / f"{table_id}.log"))
        checker = CheckerProcess(settings, prefix, first_expected, args.speed)
        if args.room:
            room = Room(directory, settings, prefix, _progress)
            room.start()
        sampler.sample()
        run_start = time.time()
        for i, table in enumerate(tables):
            command = [sys.executable, "-m", "rfid_table.cli", "--log-level", "WARNING", "sim",
                       "--config", str(table.config), "--hands", "0", "--speed", repr(args.speed),
                       "--seed", str(args.seed + i), "--link", args.link,
                       "--host", settings.host, "--port", str(settings.port)]
            if table.journal is not None:
                command += ["--journal", str(table.journal)]
            table.pid = _spawn_table(command, table.stderr, args.nice)
            table.started = time.time()
        sampler.start()
        _progress(f"{len(tables)} tables started ({args.link} link, speed {args.speed:g}), broker "
                  f"{settings.host}:{settings.port}; waiting for every table to come online")
        online_deadline = time.monotonic() + 30 + 0.5 * len(tables)
        next_line = time.monotonic() + PROGRESS_S
        while True:
            stats = checker.ask("stats")
            exited = [t for t in tables if _reap(t, block=False)]
            if stats["online"] == len(tables) or exited or time.monotonic() > online_deadline:
                break
            if time.monotonic() >= next_line:
                _progress(f"{stats['online']}/{len(tables)} tables online")
                next_line += PROGRESS_S
            time.sleep(0.1)
        if stats["online"] < len(tables):
            problems.append(f"only {stats['online']} of {len(tables)} tables came online")
        table_ids = [t.table_id for t in tables]
        if room is not None:
            room.seat_players(table_ids)
        window_start = time.time()
        checker.ask("mark", "start")
        _progress(f"{stats['online']}/{len(tables)} tables online after {window_start - run_start:.1f} s; "
                  f"running {args.minutes:g} min")
        window_end = window_start + args.minutes * 60
        steps = [(window_start + share * (window_end - window_start), name)
                 for share, name in (SCHEDULE if room is not None else ())]
        last_events, last_at = stats["events"], time.time()
        try:
            while time.time() < window_end:
                while steps and time.time() >= steps[0][0]:
                    room.step(steps.pop(0)[1], table_ids)
                next_step = steps[0][0] if steps else window_end
                time.sleep(max(0.0, min(PROGRESS_S - (time.time() - last_at), next_step - time.time())))
                if time.time() - last_at < PROGRESS_S and time.time() < window_end:
                    continue
                stats = checker.ask("stats")
                running = sum(not _reap(t, block=False) for t in tables)
                now = time.time()
                rate = (stats["events"] - last_events) / max(now - last_at, 1e-9)
                latest = sampler.latest()
                broker_text = (f", broker {latest.rss_kb / 1024:.1f} MB" if latest and latest.rss_kb else "")
                slowest = f", slowest table {stats['slowest']:.2f}x" if stats["slowest"] else ""
                _progress(f"{now - window_start:.0f}/{window_end - window_start:.0f} s, {running}/{len(tables)} "
                          f"tables running, {stats['events']} events ({rate:.0f}/s){slowest}{broker_text}")
                last_events, last_at = stats["events"], now
                if running < len(tables):
                    problems.append(f"{len(tables) - running} table(s) exited during the run")
                    break
        except KeyboardInterrupt:
            _progress("interrupted: stopping the tables and reporting")
        stop_at = time.time()
        checker.ask("mark", "stop")
        if room is not None:
            room.finish_steps(table_ids)
        problems += _stop_tables(tables)
        _progress(f"tables stopped in {time.time() - stop_at:.1f} s; draining the subscriber")
        drain_deadline = time.monotonic() + DRAIN_S
        while time.monotonic() < drain_deadline:
            stats = checker.ask("stats")
            if stats["offline"] >= sum(t.exit_code == 0 for t in tables) and stats["idle_s"] >= QUIET_S:
                break
            time.sleep(0.1)
        tails = {}
        if journal_dir is not None:
            for table in tables:
                after = read_journal(table.journal)
                if after is None:
                    problems.append(f"{table.table_id}: no journal at {table.journal}")
                else:
                    tails[table.table_id] = after["last_seq"]
        checker.ask("snapshots", 3.0)
        sampler.stop()
        result = checker.ask("result", (tails, (window_start, stop_at)))
        if room is not None:
            room_report = room.finish({t.table_id: t.journal for t in tables})
            problems += [f"room: {p}" for p in room_report.pop("problems")]
        end = time.time()
    finally:
        if room is not None:
            room.close()
        problems += _stop_tables(tables) if any(_running(t) for t in tables) else []
        if checker is not None:
            checker.close()
        if sampler.is_alive():
            sampler.stop()
        if broker is not None:
            broker.stop()
        logs = {t.table_id: t.stderr.read_text(errors="replace") for t in tables if t.stderr.exists()}
        workdir.cleanup()
    if args.broker:
        problems.append("note: broker given with --broker: its own queue limits apply")
    report = build_report(args, tables, result, sampler, (run_start, window_start, stop_at, end), problems, logs)
    report["broker_queue_limit"] = queue_limit
    if room_report is not None:
        report["room"] = room_report
    return report


if __name__ == "__main__":
    sys.exit(main())
