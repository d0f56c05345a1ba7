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
"""

import argparse
import json
import multiprocessing
import os
import re
import resource
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rfid_table.ops.broker import PRIVATE_CONF, PrivateBroker
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.package_data import CONFIG_DIR, MOSQUITTO_DIR

TEMPLATES = (CONFIG_DIR / "table-6max.toml", CONFIG_DIR / "table-10.toml")
CARDROOM_CONF = MOSQUITTO_DIR / "cardroom.conf"
# Taken from the card room's broker configuration into the soak's private broker: how many QoS 1 messages the
# broker holds for a subscriber that falls behind. Mosquitto's default (1000, what private.conf has) is ~1.5 s
# of 50 tables for one subscriber of both feeds; past it the broker drops messages for that subscriber.
CARDROOM_QUEUE_SETTINGS = ("max_queued_messages", "max_queued_bytes", "set_tcp_nodelay")
PROGRESS_S = 10.0  # a progress line on stderr this often
SAMPLE_S = 1.0  # the broker's CPU and memory are read this often
BUCKET_S = 0.1  # arrivals are counted in slots this long, so any window's rate can be computed afterwards
KEEP_UP = 0.95  # a table keeps up when its table clock ran at least this share of --speed
QUIET_S = 1.0  # the subscriber has drained once every table said offline and nothing came for this long
DRAIN_S = 30.0  # ... or after this long at most
FEEDS = ("public", "secure")
CLK_TCK = os.sysconf("SC_CLK_TCK")

# Every key of the report, in the order printed (tests/test_soak.py checks them all).
REPORT_FIELDS = (
    "ok", "tables", "link", "speed", "seed", "duration_s", "wall_s", "broker_queue_limit",
    "events_total", "events_in_window", "events_per_s", "events_per_s_per_table", "hands_completed",
    "messages_received", "subscriber_messages_per_s",
    "broker_messages_in_per_s", "broker_messages_out_per_s", "broker_kb_in_per_s", "broker_kb_out_per_s",
    "broker_dropped",
    "lost_events", "lost_public", "lost_secure", "duplicates", "out_of_order", "feed_mismatches",
    "unended_hands", "epoch_changes", "tail_check", "unverified_tail_events",
    "tables_online", "tables_offline", "table_failures",
    "achieved_speed_min", "achieved_speed_mean", "behind_s_max", "kept_up",
    "tables_cpu_percent", "table_cpu_percent_mean", "table_cpu_percent_max", "table_rss_mb_max",
    "broker_cpu_percent", "broker_rss_start_mb", "broker_rss_end_mb", "broker_rss_peak_mb",
    "subscriber_cpu_percent", "machine_cpu_percent", "cores", "problems",
)


def _progress(message: str) -> None:
    print(f"soak: {message}", file=sys.stderr, flush=True)


# ---- the checking subscriber (its own process) ------------------------------------------------------------


@dataclass
class TableCheck:
    """What the subscriber knows about one table."""

    first_expected: int = 1  # the first seq this run must deliver (after a journal's acknowledged events)
    epoch: str | None = None
    seen: dict = field(default_factory=lambda: {f: set() for f in FEEDS})
    max_seq: dict = field(default_factory=lambda: {f: 0 for f in FEEDS})
    duplicates: int = 0
    out_of_order: int = 0
    other_epoch: int = 0  # messages of another numbering than the first one seen
    pending: dict = field(default_factory=dict)  # seq → (feed, body) until the other feed's copy arrives
    mismatches: list = field(default_factory=list)
    events: int = 0  # distinct seqs
    started: set = field(default_factory=set)
    ended: set = field(default_factory=set)
    t_first: float | None = None  # table time (the events' t) and arrival of the first and last event
    arr_first: float = 0.0
    t_last: float = 0.0
    arr_last: float = 0.0
    behind_s: float = 0.0  # wall seconds the table clock is behind --speed, at the last event
    online: float | None = None  # when its live (not retained) status came
    offline: float | None = None
    snapshot: tuple | None = None  # (epoch, seq) of the retained public snapshot after the run


class Checker:
    def __init__(self, prefix: str, first_expected: dict[str, int], speed: float):
        self.prefix = prefix
        self.speed = speed
        self.tables = {tid: TableCheck(first_expected=first) for tid, first in first_expected.items()}
        self.lock = threading.Lock()
        self.received = 0  # event messages, duplicates included
        self.foreign = 0  # event messages of tables that are not part of this soak
        self.bad = 0  # undecodable payloads
        self.new_by_slot: Counter = Counter()  # distinct events by arrival slot
        self.msgs_by_slot: Counter = Counter()
        self.sys: dict[str, list[tuple[float, int]]] = {}  # $SYS counter → [(arrival, value)]
        self.last_message = time.monotonic()
        self.marks: dict[str, tuple[float, float]] = {}  # name → (time, CPU seconds of this process)

    def on_message(self, topic: str, payload: bytes, retained: bool) -> None:
        now = time.time()
        if topic.startswith("$SYS/"):
            try:
                value = int(payload)
            except ValueError:
                return
            with self.lock:
                self.sys.setdefault(topic.removeprefix("$SYS/broker/"), []).append((now, value))
            return
        parts = topic.split("/")
        table = self.tables.get(parts[-3] if len(parts) >= 3 else "")
        kind = "/".join(parts[-2:])
        with self.lock:
            if parts[-1] == "status":
                table = self.tables.get(parts[-2])
                if table is not None and not retained:
                    if payload == b"online":
                        table.online = now
                    elif payload == b"offline":
                        table.offline = now
                return
            if table is None:
                self.foreign += 1
                return
            if kind == "public/snapshot":
                try:
                    body = json.loads(payload)
                    table.snapshot = (body.get("epoch"), int(body.get("seq") or 0))
                except (ValueError, TypeError):
                    self.bad += 1
                return
            feed = parts[-2]
            if kind not in ("public/events", "secure/events"):
                return
            self.received += 1
            self.last_message = time.monotonic()
            self.msgs_by_slot[int(now / BUCKET_S)] += 1
            try:
                body = json.loads(payload)
                seq, epoch = int(body["seq"]), body.get("epoch")
            except (ValueError, KeyError, TypeError):
                self.bad += 1
                return
            self._event(table, feed, seq, epoch, body, now)

    def _event(self, table: TableCheck, feed: str, seq: int, epoch, body: dict, now: float) -> None:
        if table.epoch is None:
            table.epoch = epoch
        elif epoch != table.epoch:
            table.other_epoch += 1
            return
        seen = table.seen[feed]
        if seq in seen:
            table.duplicates += 1
            return
        if seq < table.max_seq[feed] and not body.get("replay"):  # replayed events follow live ones by design
            table.out_of_order += 1
        seen.add(seq)
        table.max_seq[feed] = max(table.max_seq[feed], seq)
        other = table.pending.pop(seq, None)
        if other is None:
            table.pending[seq] = (feed, body)
            self._new_event(table, body, now)
        else:
            public, secure = (other[1], body) if feed == "secure" else (body, other[1])
            if any(secure.get(k, object()) != v for k, v in public.items() if k != "replay"):
                if len(table.mismatches) < 5:
                    table.mismatches.append({"public": public, "secure": secure})
                else:
                    table.mismatches.append(None)  # counted, not kept

    def _new_event(self, table: TableCheck, body: dict, now: float) -> None:
        """The first copy of an event, on whichever feed it came first."""
        table.events += 1
        self.new_by_slot[int(now / BUCKET_S)] += 1
        hand = body.get("hand")
        if body.get("type") == "hand_started":
            table.started.add(hand)
        elif body.get("type") == "hand_ended":
            table.ended.add(hand)
        t = body.get("t")
        if isinstance(t, (int, float)):
            if table.t_first is None:
                table.t_first, table.arr_first = t, now
            if t >= table.t_last:
                table.t_last, table.arr_last = t, now
                if self.speed > 0:
                    table.behind_s = (now - table.arr_first) - (t - table.t_first) / self.speed

    def stats(self) -> dict:
        with self.lock:
            speeds = [s for s in (self._speed(t) for t in self.tables.values()) if s is not None]
            return {"events": sum(t.events for t in self.tables.values()), "received": self.received,
                    "online": sum(t.online is not None for t in self.tables.values()),
                    "offline": sum(t.offline is not None for t in self.tables.values()),
                    "slowest": min(speeds) if speeds else None,
                    "idle_s": time.monotonic() - self.last_message}

    @staticmethod
    def _speed(table: TableCheck) -> float | None:
        if table.t_first is None or table.arr_last - table.arr_first < 1.0:
            return None
        return (table.t_last - table.t_first) / (table.arr_last - table.arr_first)

    def result(self, tails: dict[str, int], window: tuple[float, float]) -> dict:
        """The verdict per table; ``tails`` gives the last seq each table journaled (``--journal-dir``)."""
        with self.lock:
            per_table = {}
            for tid, table in self.tables.items():
                snapshot_seq = table.snapshot[1] if table.snapshot and table.snapshot[0] == table.epoch else 0
                seen_max = max(table.max_seq.values())
                last = max(seen_max, snapshot_seq, tails.get(tid, 0))
                first = table.first_expected
                lost = {}
                missing_any = set()
                for feed in FEEDS:
                    missing = {s for s in range(first, last + 1) if s not in table.seen[feed]}
                    lost[feed] = len(missing)
                    missing_any |= missing
                running = max(table.started) if table.started else None
                unended = sorted(h for h in table.started - table.ended if h != running)
                if first == 1:  # every hand of the run began in it: an end without a start is wrong too
                    unended += sorted(h for h in table.ended - table.started if h is not None)
                per_table[tid] = {
                    "events": table.events, "last_seq": seen_max, "journal_last_seq": tails.get(tid),
                    "snapshot_seq": snapshot_seq, "lost_events": len(missing_any), "lost_public": lost["public"],
                    "lost_secure": lost["secure"], "first_missing": sorted(missing_any)[:10],
                    "duplicates": table.duplicates, "out_of_order": table.out_of_order,
                    "feed_mismatches": len(table.mismatches),
                    "mismatch_examples": [m for m in table.mismatches if m is not None],
                    "hands_started": len(table.started), "hands_completed": len(table.ended & table.started),
                    "unended_hands": unended, "epoch_changes": table.other_epoch,
                    "unverified_tail": 0 if tid in tails else max(0, seen_max - snapshot_seq),
                    "achieved_speed": self._speed(table), "behind_s": table.behind_s,
                    "online": table.online is not None, "offline": table.offline is not None,
                }
            lo, hi = int(window[0] / BUCKET_S), int(window[1] / BUCKET_S)
            in_window = sum(n for slot, n in self.new_by_slot.items() if lo <= slot < hi)
            msgs_in_window = sum(n for slot, n in self.msgs_by_slot.items() if lo <= slot < hi)
            return {"tables": per_table, "received": self.received, "foreign": self.foreign, "bad": self.bad,
                    "events_in_window": in_window, "messages_in_window": msgs_in_window,
                    "sys": {k: list(v) for k, v in self.sys.items()}, "marks": dict(self.marks)}


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _check(settings: MqttSettings, prefix: str, first_expected: dict[str, int], speed: float, conn) -> None:
    """The checking subscriber's process: answers the main process's commands over ``conn``."""
    from rfid_table.service.contract import QOS
    from rfid_table.mqtt import make_client

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the main process: it stops the run and reports
    checker = Checker(prefix, first_expected, speed)
    subscribed = threading.Event()
    topics = [(f"{prefix}/+/secure/events", QOS), (f"{prefix}/+/public/events", QOS),
              (f"{prefix}/+/status", QOS), ("$SYS/broker/messages/+", 0), ("$SYS/broker/publish/bytes/+", 0),
              ("$SYS/broker/publish/messages/dropped", 0)]
    client = make_client(settings, f"rfid-table-soak-check-{os.getpid()}")
    client.on_connect = lambda c, u, f, rc, p: c.subscribe(topics)
    client.on_subscribe = lambda c, u, mid, rcs, p: subscribed.set()
    client.on_message = lambda c, u, m: checker.on_message(m.topic, m.payload, bool(m.retain))
    client.connect(settings.host, settings.port)
    client.loop_start()
    conn.send(("ready", subscribed.wait(20)))
    while True:
        command, arg = conn.recv()
        if command == "stats":
            conn.send(checker.stats())
        elif command == "mark":
            checker.marks[arg] = (time.time(), _cpu_self())
        elif command == "snapshots":  # the retained snapshots say how far each table got
            got = threading.Event()
            client.on_subscribe = lambda c, u, mid, rcs, p: got.set()
            client.subscribe(f"{prefix}/+/public/snapshot", QOS)
            got.wait(10)
            deadline = time.monotonic() + arg
            while time.monotonic() < deadline and any(t.snapshot is None for t in checker.tables.values()):
                time.sleep(0.05)
            conn.send(True)
        elif command == "result":
            checker.marks["end"] = (time.time(), _cpu_self())
            tails, window = arg
            conn.send(checker.result(tails, window))
            client.disconnect()
            client.loop_stop()
            return


class CheckerProcess:
    def __init__(self, settings: MqttSettings, prefix: str, first_expected: dict[str, int], speed: float):
        ctx = multiprocessing.get_context("spawn")
        self._conn, theirs = ctx.Pipe()
        self.process = ctx.Process(target=_check, args=(settings, prefix, first_expected, speed, theirs),
                                   name="rfid-table-soak-check", daemon=True)
        self.process.start()
        if not self._conn.poll(60):
            raise RuntimeError("the checking subscriber did not start")
        _, ok = self._conn.recv()
        if not ok:
            raise RuntimeError("the checking subscriber could not subscribe")

    def ask(self, command: str, arg=None, timeout_s: float = 60.0):
        self._conn.send((command, arg))
        if command == "mark":
            return None
        if not self._conn.poll(timeout_s):
            raise RuntimeError(f"the checking subscriber did not answer {command!r}")
        return self._conn.recv()

    def close(self) -> None:
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


# ---- the broker's CPU and memory -------------------------------------------------------------------------


def find_listener_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` of this machine (for a broker given with --broker), or None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit():
            continue
        try:
            for fd in (pid_dir / "fd").iterdir():
                if os.readlink(fd) in targets:
                    return int(pid_dir.name)
        except OSError:
            continue
    return None


def _proc_cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def _proc_memory_kb(pid: int) -> tuple[int, int]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all cores."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


@dataclass
class Sample:
    t: float
    broker_ticks: int | None
    rss_kb: int | None
    hwm_kb: int | None
    busy: int
    total: int


class Sampler(threading.Thread):
    """Reads the broker's CPU time and memory, and the machine's CPU, every second."""

    def __init__(self, pid: int | None):
        super().__init__(name="soak-sampler", daemon=True)
        self.pid = pid
        self.samples: list[Sample] = []
        self._halt = threading.Event()
        self.lock = threading.Lock()

    def sample(self) -> None:
        ticks = rss = hwm = None
        if self.pid is not None:
            try:
                ticks = _proc_cpu_ticks(self.pid)
                rss, hwm = _proc_memory_kb(self.pid)
            except (OSError, ValueError, IndexError):
                pass
        busy, total = _machine_ticks()
        with self.lock:
            self.samples.append(Sample(time.time(), ticks, rss, hwm, busy, total))

    def run(self) -> None:
        while not self._halt.wait(SAMPLE_S):
            self.sample()

    def stop(self) -> None:
        self._halt.set()
        self.join(5)
        self.sample()

    def between(self, start: float, end: float) -> list[Sample]:
        with self.lock:
            inside = [s for s in self.samples if start <= s.t <= end + SAMPLE_S]
            return inside if len(inside) >= 2 else list(self.samples)

    def latest(self) -> Sample | None:
        with self.lock:
            return self.samples[-1] if self.samples else None


# ---- the tables ------------------------------------------------------------------------------------------


@dataclass
class Table:
    """One table's process and what is known of it: the soak itself starts it and reaps it (os.wait4), so this
    record, not a ``subprocess.Popen``, says whether it runs (``exited``) and how it ended (``exit_code``)."""

    table_id: str
    config: Path
    journal: Path | None
    stderr: Path
    pid: int | None = None  # None: not started
    started: float = 0.0
    exited: float | None = None  # reaped at (wall time): the pid is no longer the table's
    exit_code: int | None = None
    cpu_s: float = 0.0
    maxrss_kb: int = 0


# How a table's process begins (os.posix_spawn has no hook to run code before the exec): SIGTERM should the soak
# itself die, so that no table runs on (PR_SET_PDEATHSIG, kept across the exec), and yielding the CPU to the broker
# and the checking subscriber, so that on a machine too small for the load the tables fall behind (reported)
# rather than the observer (which would count losses that the broker's queue limit makes of its own starvation).
# Its arguments: the soak's pid, the niceness, then the table's command.
_TABLE_START = """\
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit("the soak ended before this table started")
if int(sys.argv[2]):
    os.nice(int(sys.argv[2]))
os.execv(sys.argv[3], sys.argv[3:])
"""


def _spawn_table(command: list[str], stderr: Path, niceness: int) -> int:
    """Start a table's process in a session of its own, without stdin or stdout, its stderr into ``stderr``; returns
    its pid, which only :func:`_reap` waits for (a ``subprocess.Popen`` would wait for it too, if only when it is
    collected, and might then reap another child that got the same pid)."""
    argv = [sys.executable, "-c", _TABLE_START, str(os.getpid()), str(niceness), *command]
    return os.posix_spawn(sys.executable, argv, os.environ, setsid=True, file_actions=[
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(stderr), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)])


def soak_broker_conf(directory: Path) -> tuple[Path, int | None]:
    """private.conf plus the card room's queue limits; returns the file and its max_queued_messages."""
    settings = [line for line in CARDROOM_CONF.read_text().splitlines()
                if line.split(maxsplit=1)[:1] and line.split(maxsplit=1)[0] in CARDROOM_QUEUE_SETTINGS]
    path = directory / "mosquitto-soak.conf"
    path.write_text(PRIVATE_CONF.read_text() + "\n# From cardroom.conf (rfid_table/devtools/soak.py):\n"
                    + "\n".join(settings) + "\n")
    limit = next((int(line.split()[1]) for line in settings if line.split()[0] == "max_queued_messages"), None)
    return path, limit


def make_configs(count: int, directory: Path, templates: list[Path]) -> list[tuple[str, Path]]:
    """One configuration per table: a copy of a template (taken in turn) with a distinct ``[table] id``."""
    width = max(2, len(str(count - 1)))
    made = []
    for i in range(count):
        table_id = f"soak-{i:0{width}d}"
        template = templates[i % len(templates)]
        text, n = re.subn(r'(?m)^id\s*=\s*"[^"]*"', f'id = "{table_id}"', template.read_text(), count=1)
        if n != 1:
            raise ValueError(f"{template}: no [table] id line to replace")
        text = re.sub(r'(?m)^name\s*=\s*"[^"]*"', f'name = "Soak table {i} ({template.stem})"', text, count=1)
        path = directory / f"{table_id}.toml"
        path.write_text(text)
        config = load_config(path)
        if config.table_id != table_id:
            raise ValueError(f"{template}: the first 'id =' line is not [table] id")
        made.append((table_id, path))
    return made


def read_journal(path: Path) -> dict | None:
    """Epoch, last seq and acknowledged seqs of a journal, read without writing to it; None when absent."""
    if not path.exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        epoch = db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        last = db.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
        delivered = dict(db.execute("SELECT feed, seq FROM delivery").fetchall())
    finally:
        db.close()
    return {"epoch": epoch[0] if epoch else None, "last_seq": last, "delivered": delivered}


def _reap(table: Table, block: bool) -> bool:
    """Collect an exited table with its rusage (os.wait4: its own CPU time and peak memory), once: after that its
    pid is never waited for or signalled again."""
    if table.exited is not None:
        return True
    pid, status, usage = os.wait4(table.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return False
    table.exited = time.time()
    table.exit_code = os.waitstatus_to_exitcode(status)
    table.cpu_s = usage.ru_utime + usage.ru_stime
    table.maxrss_kb = usage.ru_maxrss
    return True


def _running(table: Table) -> bool:
    """Started and not reaped yet: its pid is still the table's (at worst a zombie), safe to signal."""
    return table.pid is not None and table.exited is None


def _stop_tables(tables: list[Table], timeout_s: float = 30.0) -> list[str]:
    problems = []
    for table in tables:
        if _running(table):
            os.kill(table.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(_reap(t, block=False) for t in tables if t.pid is not None):
        time.sleep(0.05)
    for table in tables:
        if _running(table):
            problems.append(f"{table.table_id} did not stop within {timeout_s:.0f} s of SIGTERM; killed")
            os.kill(table.pid, signal.SIGKILL)
            _reap(table, block=True)
    return problems


# ---- the run ---------------------------------------------------------------------------------------------


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
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.tables < 1 or args.minutes <= 0 or args.speed < 0:
        print("rfid-table soak: --tables must be at least 1, --minutes above 0 and --speed 0 or more",
              file=sys.stderr)
        return 2
    report = soak(args)
    if args.json:
        print(json.dumps(report))
    else:
        for key in REPORT_FIELDS:
            if key != "problems":
                print(f"{key:>26}  {report[key]}")
        for problem in report["problems"]:
            print(f"  {problem}" if problem.startswith("note:") else f"  problem: {problem}")
        print("OK: nothing lost" if report["ok"] else "FAILED: see the problems above")
    return 0 if report["ok"] else 1


def _start_broker(conf: Path) -> PrivateBroker:
    """Ctrl-C in a terminal reaches the whole foreground process group. The broker must outlive it, so that the
    tables can still deliver what they hold while the soak stops them: it starts with SIGINT blocked (the
    signal mask is inherited across exec). The tables run in sessions of their own for the same reason."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return PrivateBroker(conf).start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def soak(args: argparse.Namespace) -> dict:
    broker = None
    broker_pid = None
    workdir = tempfile.TemporaryDirectory(prefix="rfid-table-soak-")
    queue_limit = None
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        settings = MqttSettings(host=host or "127.0.0.1", port=int(port))
        if settings.host in ("127.0.0.1", "localhost", "::1"):
            broker_pid = find_listener_pid(settings.port)
    else:
        conf, queue_limit = soak_broker_conf(Path(workdir.name))
        broker = _start_broker(conf)
        settings = MqttSettings(host=broker.host, port=broker.port)
        broker_pid = broker.pid
    tables: list[Table] = []
    checker = None
    sampler = Sampler(broker_pid)
    problems: list[str] = []
    try:
        directory = Path(workdir.name)
        templates = [Path(c) for c in args.config] if args.config else list(TEMPLATES)
        journal_dir = Path(args.journal_dir) if args.journal_dir else None
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
        window_start = time.time()
        checker.ask("mark", "start")
        _progress(f"{stats['online']}/{len(tables)} tables online after {window_start - run_start:.1f} s; "
                  f"running {args.minutes:g} min")
        window_end = window_start + args.minutes * 60
        last_events, last_at = stats["events"], time.time()
        try:
            while time.time() < window_end:
                time.sleep(max(0.0, min(PROGRESS_S - (time.time() - last_at), window_end - time.time())))
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
        end = time.time()
    finally:
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
    report = _report(args, tables, result, sampler, (run_start, window_start, stop_at, end), problems, logs)
    report["broker_queue_limit"] = queue_limit
    return report


def _rate(samples: list[tuple[float, int]], start: float, end: float) -> float | None:
    """Per second of a cumulative $SYS counter, from its updates during [start, end] (every 10 s or so)."""
    inside = [(t, v) for t, v in samples if start <= t <= end + 1.0]
    if len(inside) < 2:
        inside = samples[-2:] if len(samples) >= 2 else []
    if len(inside) < 2 or inside[-1][0] - inside[0][0] <= 0:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def _report(args, tables: list[Table], result: dict, sampler: Sampler, times: tuple, problems: list[str],
            logs: dict[str, str]) -> dict:
    run_start, window_start, stop_at, end = times
    duration = max(stop_at - window_start, 1e-9)
    per = result["tables"]
    n = len(tables)
    total = lambda key: sum(t[key] for t in per.values())  # noqa: E731

    for tid, t in per.items():
        if t["lost_events"]:
            problems.append(f"{tid}: {t['lost_events']} event(s) lost (public {t['lost_public']}, secure "
                            f"{t['lost_secure']}), first missing seqs {t['first_missing']}")
        if t["feed_mismatches"]:
            problems.append(f"{tid}: {t['feed_mismatches']} event(s) differ between the feeds, e.g. "
                            f"{t['mismatch_examples'][:1]}")
        if t["unended_hands"]:
            problems.append(f"{tid}: hand(s) {t['unended_hands'][:10]} started without an end (or ended "
                            "without a start)")
        if t["epoch_changes"]:
            problems.append(f"{tid}: {t['epoch_changes']} message(s) of another epoch (the table restarted?)")
        if t["events"] == 0:
            problems.append(f"{tid}: no event received")
    for table in tables:
        if table.exit_code != 0:
            problems.append(f"{table.table_id} exited with status {table.exit_code}: "
                            f"{logs.get(table.table_id, '').strip()[-300:]}")
        elif logs.get(table.table_id, "").strip():  # the tables log at WARNING: anything there is worth a look
            lines = logs[table.table_id].strip().splitlines()
            problems.append(f"note: {table.table_id} logged {len(lines)} line(s), the last: {lines[-1][:200]}")
    offline = sum(t["offline"] for t in per.values())
    if offline < n:
        problems.append(f"only {offline} of {n} tables said offline at the end")
    if result["bad"]:
        problems.append(f"{result['bad']} undecodable message(s)")
    dropped = [v for _, v in result["sys"].get("publish/messages/dropped", [])]
    broker_dropped = (dropped[-1] - dropped[0]) if len(dropped) >= 2 else (dropped[-1] if dropped else None)
    if broker_dropped:
        problems.append(f"the broker dropped {broker_dropped} message(s) ($SYS/broker/publish/messages/dropped)")

    speeds = [t["achieved_speed"] for t in per.values() if t["achieved_speed"] is not None]
    kept_up = (bool(speeds) and min(speeds) >= KEEP_UP * args.speed) if args.speed > 0 else None
    cpu_percent = [100 * t.cpu_s / max((t.exited or end) - t.started, 1e-9) for t in tables]

    window = sampler.between(window_start, stop_at)
    broker_cpu = rss_start = rss_end = rss_peak = machine = None
    with_broker = [s for s in window if s.broker_ticks is not None]
    if len(with_broker) >= 2:
        first, last = with_broker[0], with_broker[-1]
        broker_cpu = 100 * (last.broker_ticks - first.broker_ticks) / CLK_TCK / max(last.t - first.t, 1e-9)
    all_broker = [s for s in sampler.samples if s.rss_kb]
    if all_broker:
        rss_start, rss_end = all_broker[0].rss_kb / 1024, all_broker[-1].rss_kb / 1024
        rss_peak = max(max(s.hwm_kb or 0, s.rss_kb) for s in all_broker) / 1024
    if len(window) >= 2:
        share = (window[-1].busy - window[0].busy) / max(window[-1].total - window[0].total, 1)
        machine = 100 * share * (os.cpu_count() or 1)  # like the other CPU figures: 100 = one core busy
    marks = result["marks"]
    subscriber_cpu = None
    if "start" in marks and "stop" in marks:
        (t0, c0), (t1, c1) = marks["start"], marks["stop"]
        subscriber_cpu = 100 * (c1 - c0) / max(t1 - t0, 1e-9)

    def sys_rate(counter: str, unit: float = 1.0) -> float | None:
        rate = _rate(result["sys"].get(counter, []), window_start, stop_at)
        return None if rate is None else rate / unit

    r2 = lambda x: None if x is None else round(x, 2)  # noqa: E731
    lost = total("lost_events")
    report = {
        "tables": n,
        "link": args.link,
        "speed": args.speed,
        "seed": args.seed,
        "duration_s": round(duration, 1),
        "wall_s": round(end - run_start, 1),
        "broker_queue_limit": None,
        "events_total": total("events"),
        "events_in_window": result["events_in_window"],
        "events_per_s": r2(result["events_in_window"] / duration),
        "events_per_s_per_table": r2(result["events_in_window"] / duration / n),
        "hands_completed": total("hands_completed"),
        "messages_received": result["received"],
        "subscriber_messages_per_s": r2(result["messages_in_window"] / duration),
        "broker_messages_in_per_s": r2(sys_rate("messages/received")),
        "broker_messages_out_per_s": r2(sys_rate("messages/sent")),
        "broker_kb_in_per_s": r2(sys_rate("publish/bytes/received", 1024)),
        "broker_kb_out_per_s": r2(sys_rate("publish/bytes/sent", 1024)),
        "broker_dropped": broker_dropped,
        "lost_events": lost,
        "lost_public": total("lost_public"),
        "lost_secure": total("lost_secure"),
        "duplicates": total("duplicates"),
        "out_of_order": total("out_of_order"),
        "feed_mismatches": total("feed_mismatches"),
        "unended_hands": sum(len(t["unended_hands"]) for t in per.values()),
        "epoch_changes": total("epoch_changes"),
        "tail_check": "journal" if args.journal_dir else "snapshot",
        "unverified_tail_events": total("unverified_tail"),
        "tables_online": sum(t["online"] for t in per.values()),
        "tables_offline": offline,
        "table_failures": sum(t.exit_code != 0 for t in tables),
        "achieved_speed_min": r2(min(speeds)) if speeds else None,
        "achieved_speed_mean": r2(sum(speeds) / len(speeds)) if speeds else None,
        "behind_s_max": r2(max(t["behind_s"] for t in per.values())),
        "kept_up": kept_up,
        "tables_cpu_percent": r2(100 * sum(t.cpu_s for t in tables) / max(end - run_start, 1e-9)),
        "table_cpu_percent_mean": r2(sum(cpu_percent) / n),
        "table_cpu_percent_max": r2(max(cpu_percent)),
        "table_rss_mb_max": r2(max(t.maxrss_kb for t in tables) / 1024),
        "broker_cpu_percent": r2(broker_cpu),
        "broker_rss_start_mb": r2(rss_start),
        "broker_rss_end_mb": r2(rss_end),
        "broker_rss_peak_mb": r2(rss_peak),
        "subscriber_cpu_percent": r2(subscriber_cpu),
        "machine_cpu_percent": r2(machine),
        "cores": os.cpu_count(),
    }
    if kept_up is False:
        problems.append(f"note: the slowest table ran at {min(speeds):.2f}x of {args.speed:g}x: the machine "
                        "cannot keep this many tables at this speed (nothing is lost for it, but the load is "
                        "lower than asked)")
    failures = [p for p in problems if not p.startswith("note:")]
    report["ok"] = lost == 0 and not failures
    report["problems"] = problems
    if getattr(args, "details", False):
        report["per_table"] = per
    return {key: report[key] for key in REPORT_FIELDS} | ({"per_table": per} if "per_table" in report else {})


if __name__ == "__main__":
    sys.exit(main())
