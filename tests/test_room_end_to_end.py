"""The room end to end: two simulated tables → a real Mosquitto → two room instances sharing the subscription,
one killed mid-run and started again → a real PostgreSQL: every hand of both tables stored exactly once.

The truth is an independent subscriber to both tables' secure events (a plain subscription, not the share):
every hand_history it saw must be in the database, once, and nothing else.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install psycopg)")

from tests.postgres_fixture import postgres, room_db  # noqa: F401  (fixtures)

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]
COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]
HANDS = 25
TABLES = ("room-t1", "room-t2")
PLAYERS = {1: "p-anna", 2: "p-bo", 3: "p-cem", 4: "p-dora"}


def table_file(tmp: Path, table_id: str, broker) -> Path:
    text = (ROOT / "config" / "table-chips.toml").read_text(encoding="utf-8")
    text = text.replace('id = "main-2"', f'id = "{table_id}"', 1)
    text = text.replace('registry = "chips-demo.toml"', f'registry = "{ROOT / "config" / "chips-demo.toml"}"', 1)
    text = text.replace('port = 1883', f'port = {broker.port}', 1).replace('host = "localhost"', 'host = "127.0.0.1"')
    path = tmp / f"{table_id}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def room_file(tmp: Path, dsn: str, broker, room_id: str) -> Path:
    path = tmp / "room.toml"
    path.write_text(f'[room]\nid = "{room_id}"\n[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n'
                    f'session_expiry_s = 600\n[database]\ndsn = "{dsn}"\nretry_max_s = 2\n', encoding="utf-8")
    return path


class Instance:
    """One `rfid-table room` process, its log in a file."""

    def __init__(self, config: Path, client_id: str, tmp: Path):
        self.config, self.client_id, self.tmp = config, client_id, tmp
        self.starts = 0
        self.proc: subprocess.Popen | None = None

    @property
    def log(self) -> Path:
        return self.tmp / f"{self.client_id}-{self.starts}.log"

    def start(self) -> None:
        self.starts += 1
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([*RFID_TABLE, "room", "--config", str(self.config), "--client-id",
                                          self.client_id], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        wait_until(lambda: b"subscribed to" in self.log.read_bytes() or b"resumed the session" in self.log.read_bytes(),
                   60, lambda: f"{self.client_id} did not subscribe: {self.log.read_text(errors='replace')}")

    def retire(self) -> str:
        """`--retire` under this client id: stores what its session holds, leaves the share, ends the session."""
        self.starts += 1
        with open(self.log, "wb") as log:
            done = subprocess.run([*RFID_TABLE, "room", "--config", str(self.config), "--client-id", self.client_id,
                                   "--retire"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, timeout=60)
        text = self.log.read_text(errors="replace")
        assert done.returncode == 0, text[-2000:]
        return text

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=20)
        return self.log.read_text(errors="replace")


def wait_until(condition, timeout_s: float, message) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(message() if callable(message) else message)


def stored(dsn: str) -> list[tuple[str, str, int]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT table_id, epoch, hand FROM hands").fetchall()


def test_two_tables_two_instances_one_killed_every_hand_stored_once(broker, room_db, recorder_factory, tmp_path):
    truth = recorder_factory("rfid-table/+/secure/events")
    stats = recorder_factory("rfid-table-room/#")
    room = room_file(tmp_path, room_db, broker, "two-tables")
    instances = [Instance(room, "room-a", tmp_path), Instance(room, "room-b", tmp_path)]
    for instance in instances:
        instance.start()
    sims = []
    for table_id in TABLES:
        sims.append(subprocess.Popen([*RFID_TABLE, "sim", "--config", str(table_file(tmp_path, table_id, broker)),
                                      "--link", "direct", "--speed", "0", "--hands", str(HANDS), "--seed", "7"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT))
    status = recorder_factory("rfid-table/+/status")
    wait_until(lambda: {t.split("/")[1] for t, p, _ in status.messages if p == b"online"} >= set(TABLES), 60,
               "the tables did not come online")
    floor = recorder_factory("rfid-table/+/replies/#")
    for table_id in TABLES:  # the floor seats four named players at each table
        for seat, player in PLAYERS.items():
            floor.client.publish(f"rfid-table/{table_id}/commands/floor/floor-1",
                                 json.dumps({"id": f"s{seat}", "command": "seat_player", "seat": seat,
                                             "name": player[2:].title(), "player_id": f"{player}-{table_id}"}), qos=1)
    try:
        # mid-run: the first instance is killed without a goodbye, and comes back a little later
        wait_until(lambda: len(stored(room_db)) >= 10, 120, "no hands stored")
        instances[0].proc.kill()
        instances[0].proc.wait(timeout=10)
        wait_until(lambda: len(stored(room_db)) >= 25, 120, "the other instance stored nothing more")
        instances[0].start()
        for sim in sims:
            assert sim.wait(timeout=240) == 0, sim.stderr.read().decode(errors="replace")[-2000:]
        truth.sync()
        seen = {(t.split("/")[1], e["epoch"], e["hand"]) for t, e in
                ((t, json.loads(p)) for t, p, _ in truth.messages) if e["type"] == "hand_history"}
        assert len(seen) >= 2 * HANDS * 0.9, f"the tables played {len(seen)} hands"
        wait_until(lambda: set(stored(room_db)) == seen, 120,
                   lambda: f"stored {len(stored(room_db))} of {len(seen)}; missing "
                           f"{sorted(seen - set(stored(room_db)))[:5]}")
        rows = stored(room_db)
        assert len(rows) == len(set(rows)) == len(seen)
    finally:
        for sim in sims:
            if sim.poll() is None:
                sim.kill()
        logs = [instance.stop() if instance.proc.poll() is None else "" for instance in instances]
    # stopped, both keep their share: a hand published now waits in their sessions (nothing is lost to a restart);
    # retired, they leave it, and a hand published then goes to the instance that is running
    retired = [instance.retire() for instance in instances]
    assert all("its session ended" in log for log in retired), retired
    newcomer = Instance(room, "room-c", tmp_path)
    newcomer.start()
    late = {**json.loads(next(p for _, p, _ in truth.messages if b'"hand_history"' in p)), "epoch": "late", "hand": 1}
    truth.client.publish("rfid-table/room-t1/secure/events", json.dumps(late), qos=1)
    try:
        wait_until(lambda: ("room-t1", "late", 1) in stored(room_db), 60, "the hand went to a retired instance's queue")
    finally:
        newcomer.stop()
    # both instances stored a share; the restarted one says it resumed its session
    for instance, log in zip(instances, logs):
        assert "hands stored" in log, log[-2000:]
    assert "resumed the session" in logs[0]
    # the statistics reached the broker: each table's seated players with their hands counted
    # (another test's room may publish its own tables' statistics on this worker's broker: these tables' are read)
    table_stats = [json.loads(p) for t, p, _ in stats.messages if t.endswith("/stats") and "/tables/" in t
                   and t.split("/tables/")[1].split("/")[0] in TABLES]
    assert {s["table"] for s in table_stats} == set(TABLES)
    latest = list({s["table"]: s for s in table_stats if s["epoch"] != "late"}.values())
    assert all(len(s["seats"]) == len(PLAYERS) for s in latest), latest
    assert all(seat["all"]["hands"] > 0 for s in latest for seat in s["seats"]), latest
    assert b"ok\":true" in b"".join(p for _, p, _ in floor.messages)


def test_the_database_away_loses_no_hand(broker, recorder_factory, tmp_path):
    """The database stops while hands come in, and the instance is killed while it waits for it: once both are
    back every hand is stored, once (nothing was acknowledged that was not stored). Then it is stopped while the
    database is away: it names what it leaves unstored, and stores it, and the hands published while it was stopped,
    at its next start."""
    from tests.postgres_fixture import private_postgres  # noqa: PLC0415
    from tests.test_room_statistics import HAND_1  # noqa: PLC0415

    publisher = recorder_factory("rfid-table-test-none/#")

    def publish(hands: range) -> None:
        for number in hands:
            event = {**HAND_1, "hand": number, "seq": number * 100, "epoch": "db-test"}
            publisher.client.publish("rfid-table/db-table/secure/events", json.dumps(event), qos=1)

    with private_postgres() as server:
        dsn = server.database("outage")
        room = room_file(tmp_path, dsn, broker, "outage")
        instance = Instance(room, "room-db", tmp_path)
        instance.start()
        try:
            # bad input first: logged with where it came from, acknowledged, and the service goes on
            publisher.client.publish("rfid-table/db-table/secure/events", b"\xffnot json", qos=1)
            broken = {**HAND_1, "hand": 99, "ohh_complete": {"ohh": {"players": [{"id": 0}]}}}
            publisher.client.publish("rfid-table/db-table/secure/events", json.dumps(broken), qos=1)
            publish(range(1, 11))
            wait_until(lambda: len(stored(dsn)) == 10, 60, "the first ten hands were not stored")
            server.stop()
            publish(range(11, 41))
            wait_until(lambda: b"the database cannot be written" in instance.log.read_bytes(), 60,
                       "the instance did not notice the database was away")
            instance.proc.kill()  # what it held unacknowledged stays with the broker
            instance.proc.wait(timeout=10)
            server.start()
            instance.start()
            wait_until(lambda: len(stored(dsn)) == 40, 120, lambda: f"{len(stored(dsn))} of 40 hands stored")
            assert sorted(hand for _, _, hand in stored(dsn)) == list(range(1, 41))
            # stopped (SIGTERM) while the database is away: it says what it leaves in its session, and its next
            # start under the same client id stores it
            server.stop()
            publish(range(41, 51))
            wait_until(lambda: b"the database cannot be written" in instance.log.read_bytes(), 60,
                       "the instance did not notice the database was away again")
            stopping = instance.stop()
            assert "left in the session of room-db" in stopping, stopping[-2000:]
            publish(range(51, 56))  # while it is stopped: the broker keeps them in its session
            server.start()
            instance.start()
            wait_until(lambda: len(stored(dsn)) == 55, 120, lambda: f"{len(stored(dsn))} of 55 hands stored")
            assert sorted(hand for _, _, hand in stored(dsn)) == list(range(1, 56))
            first_log = (tmp_path / "room-db-1.log").read_text(errors="replace")
            assert "not stored: table db-table: a message that is no event" in first_log
            assert "not stored: table db-table, hand_history seq 20, ohh player: 'seat' is missing" in first_log
        finally:
            if instance.proc.poll() is None:
                instance.stop()


def test_the_delayed_feed_serves_a_room_too(broker, room_db, recorder_factory, tmp_path):
    """`feed = "delayed"`: what an overlay user may read. The hands come after the broadcast delay, all of them."""
    truth = recorder_factory("rfid-table/+/delayed/events")
    room = tmp_path / "room.toml"
    room.write_text(f'[room]\nid = "delayed"\nfeed = "delayed"\n[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n'
                    f'[database]\ndsn = "{room_db}"\n', encoding="utf-8")
    instance = Instance(room, "room-delayed", tmp_path)
    instance.start()
    try:
        done = subprocess.run([*RFID_TABLE, "sim", "--config", str(table_file(tmp_path, "room-t3", broker)),
                               "--link", "direct", "--speed", "0", "--hands", "6", "--seed", "3",
                               "--journal", str(tmp_path / "t3.journal"), "--new-journal", "--delay", "1"],
                              capture_output=True, text=True, timeout=240, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        truth.sync()
        seen = {(t.split("/")[1], e["epoch"], e["hand"]) for t, e in
                ((t, json.loads(p)) for t, p, _ in truth.messages) if e["type"] == "hand_history"}
        assert len(seen) >= 5 and all(e.get("ohh_complete") for e in truth.json("/delayed/events")
                            if e["type"] == "hand_history")
        wait_until(lambda: set(stored(room_db)) == seen, 60, lambda: f"stored {stored(room_db)}, seen {seen}")
    finally:
        instance.stop()
