"""Nothing lost to a broker outage: the broker is stopped for twenty seconds in the middle of play and started again.

While it is away the table keeps playing and journaling; when it is back, new events go out live at once and the
journaled ones follow, oldest first, flagged ``replay``, at the pace of ``[mqtt] backlog_per_s`` and
``backlog_in_flight`` (docs/mqtt.md, "Delivery"). The broker is a real Mosquitto with the project's
config/mosquitto/private.conf, on a port of its own so it can be stopped and started again, with persistence
switched on as the card room's broker has it (cardroom.conf): a broker that forgets its sessions when it restarts
loses what it had queued for its subscribers, whatever the table does.
"""

import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from jsonschema import Draft202012Validator
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes

from conftest import ROOT, TABLE_10
from rfid_table.ops.broker import PRIVATE_CONF, PrivateBroker
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.journal import Journal
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]
BASE = "rfid-table/main-1"
OUTAGE_S = 20.0
# Slow enough that the outage's play takes several seconds to send again, so the test can see live events overtake.
IN_FLIGHT, PER_S = 10, 24


def steady_port() -> int:
    """A free port below the range the kernel picks client ports from. The clients keep reconnecting while the
    broker is away, and a client's own port may then be this one (Linux even connects such a socket to itself):
    the broker could not listen on it again."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(10_000, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port below the ephemeral range")


class RestartableBroker(PrivateBroker):
    """private.conf on a fixed port, with persistence on: stopped and started again, it keeps its sessions."""

    def __init__(self):
        # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
        self.data = Path(tempfile.mkdtemp(prefix="rfid-table-outage-"))
        os.chmod(self.data, 0o777)
        conf = self.data / "private-persistent.conf"
        text = PRIVATE_CONF.read_text()
        assert "persistence false" in text
        conf.write_text(text.replace("persistence false", f"persistence true\npersistence_location {self.data}/"))
        os.chmod(conf, 0o644)
        super().__init__(conf=conf, port=steady_port())

    def close(self) -> None:
        self.stop()
        self._dir.cleanup()
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture
def outage_broker():
    broker = RestartableBroker()
    yield broker
    broker.close()


class Subscriber:
    """A floor system's subscriber: a persistent session (an hour's session expiry, and never a clean start:
    Mosquitto 2.0 does not save the session of a connection that began with one), QoS 1 on both event branches
    and the status; it reconnects by itself, as paho's network thread does."""

    def __init__(self, broker: PrivateBroker, topics: list[str]):
        self.lock = threading.Lock()
        self.messages: list[tuple[str, dict | str, float]] = []  # topic, body, wall-clock arrival
        self.connected_at: list[float] = []  # wall-clock time of each connection
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"outage-floor-{os.getpid()}",
                                  protocol=mqtt.MQTTv5)
        self.client.reconnect_delay_set(min_delay=0.2, max_delay=1)
        self.subscribed = threading.Event()
        self.topics = topics
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        self.client.on_message = self._on_message
        session = Properties(PacketTypes.CONNECT)
        session.SessionExpiryInterval = 3600
        self.client.connect(broker.host, broker.port, clean_start=False, properties=session)
        self.client.loop_start()
        assert self.subscribed.wait(10), "the subscriber could not subscribe"

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        with self.lock:
            self.connected_at.append(time.time())
        if not flags.session_present:  # the broker kept the subscriptions otherwise, and queued for them
            client.subscribe([(topic, 1) for topic in self.topics])

    def _on_message(self, client, userdata, message) -> None:
        body = message.payload.decode() if message.topic.endswith("/status") else json.loads(message.payload)
        with self.lock:
            self.messages.append((message.topic, body, time.time()))

    def events(self, branch: str) -> list[tuple[dict, float]]:
        with self.lock:
            return [(body, at) for topic, body, at in self.messages if topic == f"{BASE}/{branch}/events"]

    def status(self) -> list[tuple[str, float]]:
        with self.lock:
            return [(body, at) for topic, body, at in self.messages if topic.endswith("/status")]

    def wait_for(self, predicate, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def first_copies(received: list[tuple[dict, float]]) -> dict[int, tuple[dict, float]]:
    """seq → the first copy received (at least once: later copies are dropped, as a subscriber does)."""
    first: dict[int, tuple[dict, float]] = {}
    for body, at in received:
        first.setdefault(body["seq"], (body, at))
    return first


def delivery_marks(journal_path: Path) -> dict[str, int]:
    """The journal's delivery marks, read without writing (the daemon owns the file)."""
    db = sqlite3.connect(f"file:{journal_path}?mode=ro", uri=True, timeout=5)
    try:
        return dict(db.execute("SELECT feed, seq FROM delivery"))
    finally:
        db.close()


def table_file(tmp_path: Path, **mqtt_keys) -> Path:
    lines = "".join(f"{key} = {value}\n" for key, value in mqtt_keys.items())
    text = TABLE_10.read_text().replace('topic_prefix = "rfid-table"\n', f'topic_prefix = "rfid-table"\n{lines}')
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_twenty_seconds_without_the_broker_lose_nothing_and_live_events_overtake_the_backlog(outage_broker, tmp_path):
    broker = outage_broker.start()
    config = table_file(tmp_path, reconnect_max_s=1, backlog_in_flight=IN_FLIGHT, backlog_per_s=PER_S)
    journal_path = tmp_path / "journal.db"
    log_path = tmp_path / "sim.log"
    floor = Subscriber(broker, [f"{BASE}/public/events", f"{BASE}/secure/events", f"{BASE}/status"])
    log_file = open(log_path, "wb")
    # Real time (speed 1), so an event's t is the wall-clock time the table saw it: its latency can be measured.
    sim = subprocess.Popen(RFID_TABLE + ["sim", "--config", str(config), "--journal", str(journal_path),
                                         "--host", broker.host, "--port", str(broker.port), "--hands", "0",
                                         "--seed", "5", "--speed", "1", "--pace", "0.3"],
                           stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        assert floor.wait_for(lambda: len(floor.events("secure")) >= 20, 20), log_path.read_text()

        broker.stop()
        stopped_at = time.time()
        time.sleep(OUTAGE_S)  # the table plays on
        assert sim.poll() is None, "the table stopped while the broker was away"
        broker.start()
        restarted_at = time.time()

        def online_again():
            return [at for body, at in floor.status() if body == "online" and at > restarted_at]

        assert floor.wait_for(lambda: bool(online_again()), 10), "the table did not come back to the broker"
        online_at = online_again()[0]
        # While the backlog is being delivered, live events beyond it are acknowledged, yet the journal's marks
        # must stay behind the backlog's first unacknowledged event: a crash now must lose nothing.
        samples = []  # (the journal's mark, the newest replayed event received, the newest event received)
        while time.time() < online_at + 60 and "backlog delivered" not in log_path.read_text():
            received = floor.events("public")
            replayed = [body["seq"] for body, _at in received if body.get("replay")]
            if replayed:
                marks = delivery_marks(journal_path)
                samples.append((min(marks["public"], marks["secure"]), max(replayed),
                                max(body["seq"] for body, _at in received)))
            time.sleep(0.5)
        log_text = log_path.read_text()
        assert "backlog delivered" in log_text, log_text[-3000:]
        time.sleep(1.0)  # a little live play after the backlog
    finally:
        sim.send_signal(signal.SIGTERM)
        exit_code = sim.wait(30)
        log_file.close()
    assert exit_code == 0, log_path.read_text()[-3000:]

    with Journal(journal_path) as journal:
        last_seq = journal.last_seq()
        marks = journal.delivery_marks()
    assert marks["public"] == marks["secure"] == last_seq  # the broker acknowledged everything before the stop

    def missing() -> dict[str, list[int]]:
        return {b: sorted(set(range(1, last_seq + 1)) - set(first_copies(floor.events(b))))[:20]
                for b in ("public", "secure")}

    assert floor.wait_for(lambda: not any(missing().values()), 15), missing()
    floor.close()

    for branch in ("public", "secure"):
        received = floor.events(branch)
        first = first_copies(received)
        # Every event exactly once after dropping copies by seq, none missing, none beyond the journal.
        assert sorted(first) == list(range(1, last_seq + 1)), branch
        for body, _at in received:  # a copy is the same event
            assert {k: v for k, v in body.items() if k != "replay"} == \
                {k: v for k, v in first[body["seq"]][0].items() if k != "replay"}
        # In seq order within each stream: the live one, and the replayed one behind it.
        live = [body["seq"] for body, _at in first.values() if not body.get("replay")]
        replayed = [body["seq"] for body, _at in first.values() if body.get("replay")]
        order = sorted(first, key=lambda seq: first[seq][1])
        assert [s for s in order if s in set(live)] == sorted(live), branch
        assert [s for s in order if s in set(replayed)] == sorted(replayed), branch

    public = first_copies(floor.events("public"))
    replayed = sorted(seq for seq, (body, _at) in public.items() if body.get("replay"))
    # The outage's play was journaled while the broker was away, and came back as the backlog.
    assert len(replayed) >= 50, len(replayed)
    assert all(stopped_at - 2 <= public[seq][0]["t"] <= restarted_at + 2 for seq in replayed)
    backlog_start, backlog_end = replayed[0], replayed[-1]
    last_replay_at = max(public[seq][1] for seq in replayed)
    delivery_s = last_replay_at - online_at
    after = [(body, at) for seq, (body, at) in public.items() if seq > backlog_end]
    first_live_at = min(at for _body, at in after)

    # Live events were not held behind the backlog: the first came within seconds of the reconnection, long before
    # the backlog was through; every one that happened in the first half of its delivery arrived before its end;
    # and half of them within a quarter of the delivery's time of happening at the table (held behind the backlog,
    # they would wait half of it on average). Not a fixed number of seconds: an event is published once its
    # commit is on disk, and on two busy cores the other tests' processes and writes hold that up by a second or so.
    assert delivery_s > 5, delivery_s
    assert first_live_at - online_at < 5 and first_live_at < last_replay_at - 2
    early = [(body, at) for body, at in after if body["t"] < online_at + delivery_s / 2]
    assert early and max(at for _body, at in early) < last_replay_at, \
        [(body["seq"], at - last_replay_at) for body, at in early]
    latencies = sorted(at - body["t"] for body, at in after if at < last_replay_at)
    assert len(latencies) >= 10 and latencies[len(latencies) // 2] < delivery_s / 4, (delivery_s, latencies)

    # The pace, as the table reports it (the broker's acknowledgements) and as the subscriber sees it: at most
    # PER_S messages a second (both branches count), at most IN_FLIGHT unacknowledged. What the broker queued
    # for the subscriber before it was back comes in one burst, so the subscriber's count starts a second later.
    reported = [line for line in log_text.splitlines() if "backlog delivered" in line][-1]
    sent_s = float(reported.split(" in ")[1].split(" s,")[0])
    in_flight = int(reported.split("at most ")[1].split(" messages")[0])
    messages = 2 * (backlog_end - backlog_start + 1)
    assert messages / sent_s <= PER_S * 1.05, reported
    assert 0 < in_flight <= IN_FLIGHT, reported
    steady_from = floor.connected_at[-1] + 1.0
    arrivals = sorted(at for branch in ("public", "secure") for body, at in first_copies(floor.events(branch)).values()
                      if body.get("replay") and at >= steady_from)
    busiest = max(sum(1 for at in arrivals if start <= at < start + 1.0) for start in arrivals)
    assert busiest <= PER_S * 1.25, busiest
    # Taken well before the backlog's end (so part of it was surely not yet acknowledged) and after live events
    # beyond it had been received (so acknowledged), the journal's marks had not jumped over the backlog's rest.
    mid_backlog = [mark for mark, replay_seen, newest in samples if replay_seen < backlog_end - 50 < newest - 50]
    assert mid_backlog and all(mark < backlog_end for mark in mid_backlog), (backlog_end, samples)
    print(f"\noutage {OUTAGE_S:.0f} s: backlog of {backlog_end - backlog_start + 1} events ({messages} messages) "
          f"delivered in {sent_s:.1f} s ({messages / sent_s:.0f} messages/s, {busiest} in the busiest second, "
          f"at most {in_flight} in flight); "
          f"first live event {first_live_at - online_at:.2f} s after reconnecting; live latency during the backlog "
          f"max {max(latencies):.2f} s; {sum(len(floor.events(b)) for b in ('public', 'secure')) - 2 * last_seq} "
          f"copies dropped by seq")


# ---- a crash in the middle of a backlog ---------------------------------------------------------------------------

def play_offline(config, journal: Journal, seconds: float, t: float) -> float:
    """Play with no publisher at all, as a table whose broker never answered; returns the table time reached."""
    table = SimulatedTable(config, SimOptions(hands=None, seed=11, speed=0, pace_s=0.5, link="direct"), None, journal)
    end = t + seconds
    while t < end:
        table.advance(t)
        table.step(t)
        t += table.cycle_s
    table.close()
    return t


def test_a_crash_while_the_backlog_is_sent_loses_nothing(outage_broker, tmp_path):
    """The daemon dies (no goodbye, no last acknowledgements taken) while its backlog is half sent and live events
    overtake it; started again, it sends what is missing: the marks had not jumped over the backlog."""
    config = load_config(TABLE_10)
    settings = MqttSettings(host="127.0.0.1", port=outage_broker.port, backlog_in_flight=10, backlog_per_s=100)
    config = type(config)(**{**config.__dict__, "mqtt": settings})
    path = tmp_path / "journal.db"
    with Journal(path) as journal:  # no broker at all: everything stays in the journal
        t = play_offline(config, journal, 120.0, 1000.0)
        backlog = journal.last_seq()
    assert backlog > 100

    outage_broker.start()
    floor = Subscriber(outage_broker, [f"{BASE}/public/events", f"{BASE}/secure/events"])
    journal = Journal(path)
    journal.open()
    publisher = MqttPublisher(settings, config.table_id, epoch=journal.epoch)
    assert publisher.start()
    table = SimulatedTable(config, SimOptions(hands=None, seed=12, speed=0, pace_s=0.2, link="direct"), publisher,
                           journal)
    table.pipeline.restore(t)
    table.pipeline.publish_backlog()
    deadline = time.monotonic() + 0.6  # ~60 of the backlog's messages, and live play
    while time.monotonic() < deadline:
        table.advance(t)
        table.step(t)
        t += table.cycle_s
        publisher.service(0.01)
    live = [b["seq"] for b, _ in floor.events("public") if not b.get("replay")]
    assert live and min(live) > backlog, "no live event overtook the backlog"
    assert floor.wait_for(lambda: any(b["seq"] == max(live) for b, _ in floor.events("public")), 5)
    marks = journal.delivery_marks()
    assert marks["public"] < backlog and marks["secure"] < backlog, marks  # the gap holds the marks back
    journal.close()  # the crash: the publisher's socket is simply dropped
    publisher.client.socket().close()
    table.close()

    journal = Journal(path)
    journal.open()
    # No limit on the rate this time: the window alone holds the backlog back.
    unpaced = MqttSettings(host="127.0.0.1", port=outage_broker.port, backlog_in_flight=10, backlog_per_s=100_000)
    publisher = MqttPublisher(unpaced, config.table_id, epoch=journal.epoch)
    assert publisher.start()
    table = SimulatedTable(config, SimOptions(hands=None, seed=13, speed=0, link="direct"), publisher, journal)
    table.pipeline.restore(t)
    table.pipeline.publish_backlog()
    deadline = time.monotonic() + 15
    while min(journal.delivery_marks()[f] for f in ("public", "secure")) < journal.last_seq() \
            and time.monotonic() < deadline:
        table.step(t)  # the dealer stays away; the restored hand ends once its cards are found gone
        t += table.cycle_s
        publisher.service(0.01)
    last = journal.last_seq()
    assert publisher.max_paced_in_flight == 10  # the window was filled, and never overfilled
    publisher.stop()
    table.close()
    journal.close()
    assert floor.wait_for(lambda: len(first_copies(floor.events("secure"))) >= last, 10)
    floor.close()
    for branch in ("public", "secure"):
        assert sorted(first_copies(floor.events(branch))) == list(range(1, last + 1)), branch


# ---- the journal near its retention limit ------------------------------------------------------------------------

def event_validator(branch: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((ROOT / "schemas" / f"event.{branch}.schema.json").read_text()))


def test_a_journal_filling_up_while_the_broker_is_away_says_so_once_and_once_again_when_it_drains(
        outage_broker, tmp_path, caplog):
    config = load_config(TABLE_10)
    settings = MqttSettings(host="127.0.0.1", port=outage_broker.port, reconnect_max_s=1)
    config = type(config)(**{**config.__dict__, "mqtt": settings})
    caplog.set_level("INFO", logger="rfid_table")
    journal = Journal(tmp_path / "journal.db", retention_events=40)  # warns above 36 undelivered events
    journal.open()
    publisher = MqttPublisher(settings, config.table_id, epoch=journal.epoch)
    table = SimulatedTable(config, SimOptions(hands=None, seed=21, speed=0, pace_s=0.5, link="direct"), publisher,
                           journal)
    floor = None
    try:
        t = 1000.0
        for _ in range(int(60 / table.cycle_s)):  # a minute of play with the broker unreachable
            table.advance(t)
            table.step(t)
            t += table.cycle_s
            publisher.service(0)
        assert not publisher.connected
        warnings = [r for r in caplog.records if "near the limit" in r.getMessage()]
        assert len(warnings) == 1 and warnings[0].levelname == "WARNING"
        stored = [e for e in journal.events_after(0, limit=10_000) if e.type == "journal"]
        assert [e.public["state"] for e in stored] == ["near_limit"]
        assert stored[0].public["undelivered"] > 36 and stored[0].public["limit"] == 40

        outage_broker.start()
        floor = Subscriber(outage_broker, [f"{BASE}/public/events", f"{BASE}/secure/events"])

        def states(branch):
            return [b for b, _ in floor.events(branch) if b["type"] == "journal"]

        deadline = time.monotonic() + 20
        while len(states("secure")) < 2 and time.monotonic() < deadline:
            table.advance(t)
            table.step(t)
            t += table.cycle_s
            publisher.service(0.005)
        for branch in ("public", "secure"):
            near, ok = states(branch)
            assert (near["state"], near.get("replay"), ok["state"], ok.get("replay")) == \
                ("near_limit", True, "ok", None)  # the warning came from the journal, the all-clear live
            assert near["seq"] < ok["seq"] and ok["undelivered"] <= 0.8 * 36
            validator = event_validator(branch)
            assert not list(validator.iter_errors(near)) and not list(validator.iter_errors(ok))
        assert len([r for r in caplog.records if "near the limit" in r.getMessage()]) == 1
        assert any("back to" in r.getMessage() for r in caplog.records)
    finally:
        if floor is not None:
            floor.close()
        publisher.stop()
        table.close()
        journal.close()
