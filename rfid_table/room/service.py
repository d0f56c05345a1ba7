"""``rfid-table room``: every table's hands into PostgreSQL, and the players' statistics back onto the broker.

Data flows one way: the broker → :meth:`RoomService._on_message` (paho's thread: it acknowledges at once the events
that carry nothing to store, and queues the rest) → the main loop,
which reads each message, stores what it carries in one transaction and only then acknowledges it (MQTT 5 manual
acknowledgement, paho's ``manual_ack``). A message is acknowledged once it is in the database, or once it is found
unusable (logged with its table and seq: redelivering it would not mend it).

* **Shared subscription.** ``$share/<group>/<prefix>/+/<feed>/events``: the broker gives each message to one
  instance of the room, so instances on several machines share the load.
* **Persistent session.** Clean start off, a session expiry interval: while an instance is away the broker keeps
  the messages meant for it, and the ones it had not acknowledged, and delivers them when it comes back.
* **A stop** (SIGTERM) stores what had already been delivered and disconnects: the instance stays in the share,
  and the broker keeps its part of every later hand in its session until it starts again (a restart, an upgrade
  and a crash lose nothing, with one instance as with several). **Retiring** an instance for good
  (``--retire``, :meth:`RoomService.retire`) resumes its session, leaves the share, stores what the session held
  and ends the session, so the broker gives every later hand to the others.
* **The database away.** A write that fails is retried with a doubling wait (up to ``retry_max_s``) until it
  succeeds; nothing to store is acknowledged meanwhile, so the broker stops sending after ``receive_maximum`` such
  messages and keeps the rest, up to its ``max_queued_messages`` for this instance (docs/room.md says how long an
  outage that covers). No hand is lost, none stored twice (the store's keys).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from rfid_table.mqtt import make_client
from rfid_table.room.config import RoomConfig
from rfid_table.room.records import BadEvent, hand_from_event, seating_from_event, start_from_event
from rfid_table.room.store import Store
from rfid_table.service.contract import QOS, encode, without_controls

log = logging.getLogger("rfid_table.room")
T = TypeVar("T")

STORED_TYPES = ("hand_history", "player_seated", "seat_cleared", "hand_started")
FIRST_RETRY_S = 0.5
EX_UNAVAILABLE = 69
DRAIN_S = 5.0  # a stop stores what was delivered for at most this long
RETIRE_QUIET_S = 1.0  # retiring: the session is taken as emptied once nothing came for this long
CONNECT_WAIT_S = 30.0  # retiring: how long to wait for the broker
EX_TEMPFAIL = 75
TABLE_STATS_EVERY_S = 1.0  # a table's statistics at most this often (after each of its hands, when they are apart)
ROOM_STATS_EVERY_S = 5.0  # the room's statistics at most this often


IGNORED = "ignored"  # what _event_type says of an event the room does not store


def _event_type(payload: bytes) -> str | None:
    """IGNORED for a well-formed event of a type the room does not store; its type for one it stores; None for
    anything else, which the main loop reports."""
    try:
        event = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    return event["type"] if event["type"] in STORED_TYPES else IGNORED


@dataclass
class Delivered:
    mid: int
    qos: int
    topic: str
    payload: bytes


@dataclass
class Counts:
    hands: int = 0  # stored now
    copies: int = 0  # hands stored before (a redelivery, a table's replay)
    refused: int = 0  # messages that could not be stored (logged)
    messages: int = 0
    left: int = 0  # delivered, not stored when the stop came (the database away): unacknowledged, in the session


class RoomService:
    def __init__(self, config: RoomConfig, client_id: str, stop: threading.Event | None = None,
                 retire: bool = False):
        self.config = config
        self.retiring = retire  # --retire: leave the share and end the session instead of storing as one of the room
        self.client_id = client_id
        self.stop = stop or threading.Event()
        self.inbox: queue.Queue[Delivered] = queue.Queue()
        self.counts = Counts()
        self.store = Store(config.dsn, config.time_zone)
        self.client = make_client(config.mqtt, client_id)
        self.client.manual_ack_set(True)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_unsubscribe = self._on_unsubscribe
        self.client.on_subscribe = self._on_subscribe
        self._session_present = False
        self._connected = threading.Event()
        self._unsubscribed = threading.Event()
        self._drain_until: float | None = None  # while stopping: store what was delivered until then
        self._room_stats_due = 0.0
        self._room_stats_dirty = False
        self._tables_changed: dict[str, dict] = {}  # table → its newest stored hand_history, statistics not yet out
        self._table_published: dict[str, float] = {}  # table → when its statistics went out (monotonic)

    # ---- the broker (paho's thread) ---------------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: object, flags: Any, reason_code: Any,
                    properties: Any) -> None:
        if reason_code.is_failure:
            log.error("the broker refused the connection: %s", reason_code)
            return
        self._session_present = bool(flags.session_present)
        self._connected.set()
        if self.retiring:  # the session's subscription is left, not renewed (retire)
            return
        # Subscribed at every connection: a retired instance's session had none, and the group may have changed.
        client.subscribe(self.config.subscription, options=SubscribeOptions(qos=QOS))

    def _on_subscribe(self, client: mqtt.Client, userdata: object, mid: int, reason_codes: Any,
                      properties: Any) -> None:
        if any(code.is_failure for code in reason_codes):
            log.error("the broker refused the subscription to %s: %s", self.config.subscription,
                      ", ".join(str(code) for code in reason_codes))
        elif self._session_present:
            log.info("resumed the session: the broker delivers what it kept for %s", self.client_id)
        else:
            log.info("subscribed to %s (a new session)", self.config.subscription)

    def _on_unsubscribe(self, client: mqtt.Client, userdata: object, mid: int, reason_codes: Any,
                        properties: Any) -> None:
        self._unsubscribed.set()

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        payload = bytes(message.payload)
        if _event_type(payload) == IGNORED:
            # Nothing of it is stored: acknowledged at once, while the database is away too, so that what this
            # instance holds unacknowledged is only what it must store. Otherwise the feed's other events (some 25
            # a hand) would fill receive_maximum and then the broker's queue for this instance, and Mosquitto drops
            # what passes its max_queued_messages: a 45 s outage under 12 tables at 5x lost 65 hands that way.
            client.ack(message.mid, message.qos)
            return
        self.inbox.put(Delivered(message.mid, message.qos, message.topic, payload))

    def connect(self) -> None:
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = self.config.session_expiry_s
        properties.ReceiveMaximum = self.config.receive_maximum
        self.client.connect_async(self.config.mqtt.host, self.config.mqtt.port, keepalive=self.config.mqtt.keepalive,
                                  clean_start=False, properties=properties)
        self.client.loop_start()

    # ---- the main loop ----------------------------------------------------------------------------------

    def run(self) -> int:
        try:
            self._database_ready()
        except BadEvent as exc:  # the database refuses the migrations (no right to create tables, say)
            log.error("the room's tables cannot be made: %s", without_controls(str(exc)))
            return EX_UNAVAILABLE
        if self.stop.is_set():
            return 0
        self.connect()
        if self.retiring:
            return self.retire()
        started = time.monotonic()
        try:
            while not self.stop.is_set():
                try:
                    delivered = self.inbox.get(timeout=0.2)
                except queue.Empty:
                    self._publish_stats()
                    continue
                self._handle(delivered)
                self._publish_stats()
            self._drain()
            for table_id in list(self._tables_changed):  # the last hands' statistics, before leaving
                self._publish_table_stats(table_id, self._tables_changed.pop(table_id))
        finally:
            elapsed = time.monotonic() - started
            log.info("stopping: %d hands stored (%d copies skipped, %d messages refused) in %.1f s",
                     self.counts.hands, self.counts.copies, self.counts.refused, elapsed)
            left = self.counts.left + self.inbox.qsize()
            if left:  # the broker keeps them for this client id only, until its session expires (docs/room.md)
                log.warning("%d message(s) delivered and not stored are left in the session of %s, with any the "
                            "broker still held for it: start the room again with this client id (within "
                            "session_expiry_s, %d s) to store them", left, self.client_id,
                            self.config.session_expiry_s)
            self.client.disconnect()  # the session stays: what is unacknowledged or comes later is kept for the next start
            self.client.loop_stop()
            self.store.close()
        return 0

    def _drain(self) -> None:
        """A stop: store what had already been delivered (up to DRAIN_S). The instance stays in the share: the
        broker keeps its part of later hands in its session for its next start."""
        self._drain_until = time.monotonic() + DRAIN_S
        self._store_until_quiet(0.5, lambda: time.monotonic() < (self._drain_until or 0.0))

    def _store_until_quiet(self, quiet_s: float, going_on: Callable[[], bool]) -> None:
        """Store what is delivered until nothing came for ``quiet_s``, or ``going_on`` says stop."""
        quiet_since = time.monotonic()
        while going_on() and time.monotonic() - quiet_since < quiet_s:
            try:
                delivered = self.inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            self._handle(delivered)
            quiet_since = time.monotonic()

    def retire(self) -> int:
        """``--retire``: take this client id out of the room for good without losing a hand. Resume its session,
        leave the share (every later hand goes to the other instances), store what the session held, then end
        the session. Stopped (SIGTERM) or with the database away, the session is kept and nothing is lost."""
        try:
            if not self._connected.wait(CONNECT_WAIT_S):
                log.error("retiring %s: the broker at %s:%d did not answer in %.0f s; nothing changed",
                          self.client_id, self.config.mqtt.host, self.config.mqtt.port, CONNECT_WAIT_S)
                return EX_UNAVAILABLE
            if not self._session_present:
                log.info("retiring %s: the broker holds no session of it: nothing to store, nothing to leave",
                         self.client_id)
                self.client.disconnect()
                return 0
            self.client.unsubscribe(self.config.subscription)
            if not self._unsubscribed.wait(CONNECT_WAIT_S):
                log.error("retiring %s: the broker did not confirm leaving the share; the session is kept",
                          self.client_id)
                self.client.disconnect()
                return EX_UNAVAILABLE
            self._store_until_quiet(RETIRE_QUIET_S, lambda: not self.stop.is_set())
            left = self.counts.left + self.inbox.qsize()
            if self.stop.is_set() or left:
                log.warning("retiring %s: stopped with %d message(s) not stored; the session is kept: retire it "
                            "again (within session_expiry_s, %d s) to store them", self.client_id, left,
                            self.config.session_expiry_s)
                self.client.disconnect()
                return EX_TEMPFAIL
            properties = Properties(PacketTypes.DISCONNECT)
            properties.SessionExpiryInterval = 0  # the session ends with this connection (MQTT 5, 3.14.2.2.2)
            self.client.disconnect(properties=properties)
            log.info("retired %s: %d hands stored (%d copies skipped, %d messages refused); it left the share and "
                     "its session ended", self.client_id, self.counts.hands, self.counts.copies, self.counts.refused)
            return 0
        finally:
            self.client.loop_stop()
            self.store.close()

    def _may_wait(self) -> bool:
        return not self.stop.is_set() or (self._drain_until is not None and time.monotonic() < self._drain_until)

    def _handle(self, delivered: Delivered) -> None:
        self.counts.messages += 1
        table_id = delivered.topic.split("/")[-3]
        try:
            event = json.loads(delivered.payload)
            if not isinstance(event, dict):
                raise BadEvent("not a JSON object")
        except (ValueError, BadEvent) as exc:
            self._refuse(delivered, f"table {table_id}: a message that is no event ({exc})")
            return
        kind = event.get("type")
        if kind in STORED_TYPES:
            try:
                write = self._write_for(table_id, event)
            except BadEvent as exc:
                self._refuse(delivered, str(exc))
                return
            if write is None:
                self.counts.left += 1
                return  # stopping: unacknowledged, the broker delivers it again
            if kind == "hand_history":
                if write:
                    self.counts.hands += 1
                    self._tables_changed[table_id] = event
                    self._room_stats_dirty = True
                else:
                    self.counts.copies += 1
        self.client.ack(delivered.mid, delivered.qos)

    def _write_for(self, table_id: str, event: dict) -> bool | None:
        """Store what the event carries, retrying while the database is away; None: stopped before it was stored."""
        kind = event["type"]
        if kind == "hand_history":
            record = hand_from_event(table_id, event)
            write = lambda: self.store.store_hand(record)  # noqa: E731
        elif kind == "hand_started":
            start = start_from_event(table_id, event)
            write = lambda: self.store.store_start(start)  # noqa: E731
        else:
            seating = seating_from_event(table_id, event)
            write = lambda: self.store.store_seating(seating)  # noqa: E731
        return self._with_database(write)

    def _refuse(self, delivered: Delivered, why: str) -> None:
        self.counts.refused += 1
        log.error("not stored: %s (acknowledged: a copy would be no better)", without_controls(why))
        self.client.ack(delivered.mid, delivered.qos)

    # ---- the database -----------------------------------------------------------------------------------

    def _database_ready(self) -> None:
        """Connect and migrate, waiting for the database as long as it takes."""
        def ready() -> bool:
            applied = self.store.migrate()
            if applied:
                log.info("database migrated: %s", ", ".join(applied))
            return True
        self._with_database(ready)

    def _with_database(self, write: Callable[[], T]) -> T | None:
        import psycopg  # noqa: PLC0415

        wait = FIRST_RETRY_S
        failed_since = None
        while self._may_wait():
            try:
                if self.store.conn is None or self.store.conn.closed:
                    self.store.connect()
                result = write()
                if failed_since is not None:
                    log.info("the database is back after %.1f s; storing again", time.monotonic() - failed_since)
                return result
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                if failed_since is None:
                    failed_since = time.monotonic()
                    log.error("the database cannot be written (%s): acknowledging nothing to store, retrying up to "
                              "every %.0f s", without_controls(str(exc).strip().splitlines()[0] if str(exc) else
                                                         type(exc).__name__), self.config.retry_max_s)
                self.store.close()
                if self.stop.is_set():  # draining: a short wait, within the drain's time
                    time.sleep(min(wait, max(0.0, (self._drain_until or 0.0) - time.monotonic())))
                else:
                    self.stop.wait(wait)
                wait = min(wait * 2, self.config.retry_max_s)
            except psycopg.Error as exc:  # the database refuses this one (a value out of its range): not retried
                raise BadEvent(f"the database refused it: {str(exc).strip()}") from exc
        return None

    # ---- statistics -------------------------------------------------------------------------------------

    def _publish_stats(self) -> None:
        """Each changed table's statistics, at most every TABLE_STATS_EVERY_S (a backlog after an outage stores
        hundreds of a table's hands a second: its overlays need the last), and the room's."""
        now = time.monotonic()
        for table_id in [t for t in self._tables_changed
                         if now - self._table_published.get(t, -TABLE_STATS_EVERY_S) >= TABLE_STATS_EVERY_S]:
            self._table_published[table_id] = now
            self._publish_table_stats(table_id, self._tables_changed.pop(table_id))
        self._publish_room_stats()

    def _publish_table_stats(self, table_id: str, event: dict) -> None:
        """The statistics of the players seated at a table, retained for its overlays."""
        if not self.config.publish_stats:
            return
        try:
            seated = self.store.seated(table_id, str(event.get("epoch")))
            stats = self.store.statistics([p["player_id"] for p in seated.values()]) if seated else {}
        except Exception as exc:  # noqa: BLE001 - statistics never stop the storing
            log.warning("statistics of table %s not published: %s", table_id, exc)
            return
        seats = [{"seat": seat, "player_id": p["player_id"], "name": p["name"], **stats.get(p["player_id"], {})}
                 for seat, p in sorted(seated.items())]
        self.client.publish(self.config.table_stats_topic(table_id),
                            encode({"table": table_id, "hand": event.get("hand"), "epoch": event.get("epoch"),
                                    "t": round(time.time(), 3), "seats": seats}), qos=QOS, retain=True)

    def _publish_room_stats(self) -> None:
        now = time.monotonic()
        if not (self.config.publish_stats and self._room_stats_dirty and now >= self._room_stats_due):
            return
        self._room_stats_due = now + ROOM_STATS_EVERY_S
        self._room_stats_dirty = False
        try:
            stats = self.store.statistics(self.store.players_today())
            names = self.store.names()
        except Exception as exc:  # noqa: BLE001
            log.warning("the room's statistics not published: %s", exc)
            return
        today = {pid: {"name": names.get(pid), **s} for pid, s in stats.items() if "day" in s}
        self.client.publish(self.config.room_stats_topic,
                            encode({"room": self.config.room_id, "t": round(time.time(), 3), "players": today}),
                            qos=QOS, retain=True)
