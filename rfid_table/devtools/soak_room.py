"""The room of ``rfid-table soak --room``: a private PostgreSQL, two ``rfid-table room`` instances sharing the
tables' secure feed through the shared subscription, the floor seating named players, and what the run does to
them: one instance killed (SIGKILL) and started again, players moved between tables, the database stopped
(``pg_ctl stop -m fast``) and started again, all while the tables play.

At the end, once the tables have stopped, it waits for the database to hold every hand the observer saw, stops the
instances (SIGTERM) and compares the database with the tables' journals (:mod:`rfid_table.devtools.soak_room_check`).
It also measures what docs/room.md gives as figures: how fast the instances store a backlog (the hands that waited
while the database was away), the delay from a hand's ``hand_history`` to its table's statistics, both as a
subscriber receives them, and the database's size per 10,000 hands.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from rfid_table.config.table import MqttSettings
from rfid_table.devtools.private_postgres import PrivatePostgres, private_postgres
from rfid_table.devtools.soak_room_check import compare, truth_from_journals
from rfid_table.mqtt import make_client

ROOM_ID = "soak"
STATS_PREFIX = "rfid-table-room"
SEATS_NAMED = 9  # seats 1..9 get a named player; the others play for nobody (the statistics count them for no one)
INSTANCES = ("room-a", "room-b")
# When, as a share of the window, the run does what it does to the room (the tables go on playing throughout).
SCHEDULE = ((0.20, "kill"), (0.35, "restart"), (0.50, "move"), (0.60, "database_stop"), (0.75, "database_start"))
STORED_WAIT_S = 120.0  # at the end, how long the instances may take to store what the tables played


class Instance:
    """One ``rfid-table room`` process, its log in a file of its own per start."""

    def __init__(self, config: Path, client_id: str, directory: Path):
        self.config, self.client_id, self.directory = config, client_id, directory
        self.starts = 0
        self.proc: subprocess.Popen | None = None

    @property
    def log(self) -> Path:
        return self.directory / f"{self.client_id}-{self.starts}.log"

    def start(self) -> None:
        self.starts += 1
        with open(self.log, "wb") as log:
            # a session of its own: the terminal's Ctrl-C reaches the soak, which stops the instances in order
            self.proc = subprocess.Popen([sys.executable, "-m", "rfid_table.cli", "room", "--config",
                                          str(self.config), "--client-id", self.client_id],
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def subscribed(self) -> bool:
        text = self.log.read_bytes()
        return b"subscribed to" in text or b"resumed the session" in text

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=10)

    def stored(self) -> list[tuple[int, float]]:
        """(hands stored, seconds) of each start that ended with its log line (a killed one has none)."""
        out = []
        for n in range(1, self.starts + 1):
            for line in (self.directory / f"{self.client_id}-{n}.log").read_text(errors="replace").splitlines():
                if "stopping:" in line and "hands stored" in line:
                    words = line.split("stopping:")[1].split()
                    out.append((int(words[0]), float(line.rsplit(" in ", 1)[1].split()[0])))
        return out


class Observer:
    """A plain subscriber (not the share) in this process: the hand_history events as they arrive, the tables'
    statistics as they arrive, and the floor's replies; it also sends the floor's commands."""

    def __init__(self, settings: MqttSettings, prefix: str):
        self.prefix = prefix
        self.lock = threading.Lock()
        self.histories: dict[tuple[str, str, int], float] = {}  # (table, epoch, hand) → arrival (monotonic)
        self.delays_s: list[float] = []  # hand_history → its table's statistics naming that hand
        self.replies: dict[str, bool] = {}  # command id → ok
        self.client = make_client(settings, f"rfid-table-soak-room-{os.getpid()}")
        self.client.on_connect = lambda c, *_: c.subscribe([(f"{prefix}/+/secure/events", 1),
                                                            (f"{STATS_PREFIX}/{ROOM_ID}/tables/+/stats", 1),
                                                            (f"{prefix}/+/replies/#", 1)])
        self.client.on_message = self._on_message
        self.client.connect(settings.host, settings.port)
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        now = time.monotonic()
        topic, payload = message.topic, bytes(message.payload)
        if topic.endswith("/secure/events"):
            if b'"hand_history"' not in payload:
                return
            event = json.loads(payload)
            if event.get("type") == "hand_history":
                with self.lock:
                    self.histories.setdefault((topic.split("/")[-3], event["epoch"], event["hand"]), now)
        elif topic.endswith("/stats"):
            stats = json.loads(payload)
            with self.lock:
                ended = self.histories.get((stats.get("table"), stats.get("epoch"), stats.get("hand")))
                if ended is not None and not message.retain:
                    self.delays_s.append(now - ended)
        elif "/replies/" in topic:
            reply = json.loads(payload)
            with self.lock:
                self.replies[str(reply.get("id"))] = bool(reply.get("ok"))

    def command(self, table_id: str, command_id: str, **fields: Any) -> None:
        self.client.publish(f"{self.prefix}/{table_id}/commands/floor/soak",
                            json.dumps({"id": command_id, **fields}), qos=1)

    def hands_seen(self) -> int:
        with self.lock:
            return len(self.histories)

    def close(self) -> None:
        # the network thread stopped first: paho 2.2's loop_stop after a disconnect can find the thread gone
        # (it clears its own handle as it ends) and fail
        self.client.loop_stop()
        self.client.disconnect()


def _wait(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


class Room:
    """The room's part of a soak: :meth:`start` before the tables, :meth:`step` as :data:`SCHEDULE` says,
    :meth:`finish` once the tables have stopped, :meth:`close` always."""

    def __init__(self, directory: Path, settings: MqttSettings, prefix: str, progress: Callable[[str], None]):
        self.directory, self.settings, self.prefix, self.progress = directory, settings, prefix, progress
        self._stack = contextlib.ExitStack()
        self.server: PrivatePostgres | None = None
        self.dsn = ""
        self.instances: list[Instance] = []
        self.observer: Observer | None = None
        self.problems: list[str] = []
        self.done: list[str] = []  # the steps of SCHEDULE done
        self.empty_bytes = 0
        self.outage: dict[str, float] = {}
        self.backlog: dict[str, float] = {}
        self.seatings = 0
        self._backlog_thread: threading.Thread | None = None

    # ---- the start ----------------------------------------------------------------------------------------

    def start(self) -> None:
        self.server = self._stack.enter_context(private_postgres())
        self.dsn = self.server.database("soak_room")
        config = self.directory / "room.toml"
        config.write_text(f'[room]\nid = "{ROOM_ID}"\ntime_zone = "UTC"\n[mqtt]\nhost = "{self.settings.host}"\n'
                          f'port = {self.settings.port}\ntopic_prefix = "{self.prefix}"\nsession_expiry_s = 3600\n'
                          f'[database]\ndsn = "{self.dsn}"\nretry_max_s = 2\n'
                          f'[statistics]\ntopic_prefix = "{STATS_PREFIX}"\n', encoding="utf-8")
        self.observer = Observer(self.settings, self.prefix)
        self.instances = [Instance(config, client_id, self.directory) for client_id in INSTANCES]
        for instance in self.instances:
            instance.start()
        if not _wait(lambda: all(i.subscribed() for i in self.instances), 60):
            raise RuntimeError("the room's instances did not subscribe: "
                               + " | ".join(i.log.read_text(errors="replace")[-500:] for i in self.instances))
        self.empty_bytes = self._size()  # migrated, no hand yet

    def seat_players(self, table_ids: list[str]) -> None:
        """The floor seats a named player at seats 1..SEATS_NAMED of every table."""
        for table_id in table_ids:
            for seat in range(1, SEATS_NAMED + 1):
                self._seat(table_id, seat, f"p-{table_id}-{seat}")

    def _seat(self, table_id: str, seat: int, player_id: str) -> None:
        self.seatings += 1
        self.observer.command(table_id, f"seat-{self.seatings}", command="seat_player", seat=seat,
                              name=f"P {player_id[2:]}", player_id=player_id)

    # ---- what the run does to the room ------------------------------------------------------------------

    def step(self, name: str, table_ids: list[str]) -> None:
        if name in self.done:
            return
        self.done.append(name)
        if name == "kill":
            self.instances[0].kill()
            self.progress(f"room: {self.instances[0].client_id} killed (SIGKILL)")
        elif name == "restart":
            self.instances[0].start()
            self.progress(f"room: {self.instances[0].client_id} started again")
        elif name == "move":
            # seat 1's player of each table moves to the next table's seat 1: a second session, at another table
            for table_id in table_ids:
                self.seatings += 1
                self.observer.command(table_id, f"clear-{self.seatings}", command="clear_seat", seat=1)
            for i, table_id in enumerate(table_ids):
                self._seat(table_id, 1, f"p-{table_ids[i - 1]}-1")
            self.progress(f"room: {len(table_ids)} players moved to another table")
        elif name == "database_stop":
            self.outage = {"stopped": time.monotonic()}
            self.server.stop()
            self.progress("room: the database stopped (pg_ctl stop -m fast)")
        elif name == "database_start":
            self.server.start()
            self.outage["started"] = time.monotonic()
            self.progress(f"room: the database started again after "
                          f"{self.outage['started'] - self.outage['stopped']:.1f} s")
            # timed beside the run, which goes on meanwhile
            self._backlog_thread = threading.Thread(target=self._measure_backlog, name="room-backlog", daemon=True)
            self._backlog_thread.start()

    def _measure_backlog(self) -> None:
        """How fast the instances store the hands that waited while the database was away: from the first hand
        stored after the restart until the database holds every hand the observer had seen by then."""
        before = self._count()
        if not _wait(lambda: self._count() > before, 30):
            self.problems.append("no hand stored within 30 s of the database's restart")
            return
        first, counted = time.monotonic(), self._count()
        target = self.observer.hands_seen()
        if target - counted < 20:  # too few waited to time
            return
        if _wait(lambda: self._count() >= target, 60):
            elapsed = time.monotonic() - first
            self.backlog = {"hands": self._count() - counted, "seconds": round(elapsed, 2)}

    def finish_steps(self, table_ids: list[str]) -> None:
        """A run cut short still restores what it broke: the instance runs, the database is up."""
        for broke, mended in (("kill", "restart"), ("database_stop", "database_start")):
            if broke in self.done:
                self.step(mended, table_ids)

    # ---- the end ----------------------------------------------------------------------------------------

    def finish(self, journals: dict[str, Path]) -> dict[str, Any]:
        """Wait for the database to hold every hand the observer saw, stop the instances, compare with the
        journals; the room's part of the report."""
        if self._backlog_thread is not None:
            self._backlog_thread.join()
        seen = self.observer.hands_seen()
        waited = time.monotonic()
        if not _wait(lambda: self._count() >= seen, STORED_WAIT_S):
            self.problems.append(f"the room stored {self._count()} of the {seen} hands seen within "
                                 f"{STORED_WAIT_S:.0f} s of the tables' stop")
        catch_up_s = time.monotonic() - waited
        size = self._size()
        exits = {i.client_id: i.stop() for i in self.instances}
        for client_id, code in exits.items():
            if code != 0:
                self.problems.append(f"room instance {client_id} exited with status {code}")
        verdict = compare(self.dsn, truth_from_journals(journals))
        self.problems += verdict.pop("problems")
        refused = [line for i in self.instances for n in range(1, i.starts + 1)
                   for line in (self.directory / f"{i.client_id}-{n}.log").read_text(errors="replace").splitlines()
                   if "not stored:" in line]
        if refused:
            self.problems.append(f"{len(refused)} message(s) refused by the room, e.g. {refused[:2]}")
        refused_seatings = sum(not ok for ok in self.observer.replies.values())
        if refused_seatings:
            self.problems.append(f"{refused_seatings} of the floor's {self.seatings} commands refused")
        stored_per_instance = {i.client_id: i.stored() for i in self.instances}
        delays = sorted(self.observer.delays_s)
        hands = verdict["hands_stored"]
        report = {
            **verdict,
            "instance_kills": int("kill" in self.done),
            "instance_restarts": int("restart" in self.done),
            "database_restarts": int("database_start" in self.done),
            "database_outage_s": round(self.outage["started"] - self.outage["stopped"], 1)
            if "started" in self.outage else None,
            "floor_commands": self.seatings,
            "catch_up_s": round(catch_up_s, 1),
            "hands_stored_by_instance": {k: sum(n for n, _ in v) for k, v in stored_per_instance.items()},
            "backlog_hands": self.backlog.get("hands"),
            "backlog_s": self.backlog.get("seconds"),
            "backlog_per_s_per_instance": round(self.backlog["hands"] / self.backlog["seconds"] / len(INSTANCES), 1)
            if self.backlog else None,
            "stats_delay_ms_median": round(1000 * statistics.median(delays)) if delays else None,
            "stats_delay_ms_p95": round(1000 * delays[int(0.95 * (len(delays) - 1))]) if delays else None,
            "stats_delay_ms_max": round(1000 * delays[-1]) if delays else None,
            "stats_delays_measured": len(delays),
            "database_bytes": size,
            "database_mb_per_10000_hands": round((size - self.empty_bytes) / hands * 10000 / 1e6, 1)
            if hands else None,
        }
        report["ok"] = not self.problems
        report["problems"] = list(self.problems)
        return report

    def _count(self) -> int:
        try:
            return int(self._one("SELECT count(*) FROM hands"))
        except Exception:  # noqa: BLE001 - the database away: nothing counted
            return -1

    def _size(self) -> int:
        return int(self._one("SELECT pg_database_size(current_database())"))

    def _one(self, query: str) -> Any:
        import psycopg  # noqa: PLC0415

        with psycopg.connect(self.dsn, connect_timeout=5) as conn:
            return conn.execute(query).fetchone()[0]

    def close(self) -> None:
        for instance in self.instances:
            instance.stop()
        if self.observer is not None:
            self.observer.close()
        self._stack.close()
