"""The soak's checks: a subscriber in a process of its own takes both event feeds of every table at QoS 1 and
checks, per table and feed, the ``seq`` numbers (no gap, nothing missing at the start or at the end, duplicates
counted apart), that both feeds carry the same events, and that every hand that started ended; it also counts the
arrivals, by slot, for the report's rates.
"""

import json
import multiprocessing
import os
import resource
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from rfid_table.config.table import MqttSettings

BUCKET_S = 0.1  # arrivals are counted in slots this long, so any window's rate can be computed afterwards
FEEDS = ("public", "secure")


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
