"""Publish the table over MQTT (paho-mqtt 2, MQTT 5), on the topics of :mod:`rfid_table.service.contract`.

Events go out live to ``public/events`` and ``secure/events`` (and, after the broadcast delay, ``delayed/events``;
with a reveal policy, ``live/events``); the snapshots, ``status`` and ``delayed/hand`` are retained. Hole cards only
ever go to ``secure/`` (and, after the delay, ``delayed/``); the public payloads are built from the events' public
parts alone, and ``live/events`` carries those the reveal policy shows, as :mod:`rfid_table.service.live_feed` made
them.
"""

import logging
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Callable

import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from controller.domain import DomainEvent
from rfid_table.service.commands import loggable
from rfid_table.config.table import MqttSettings
from rfid_table.service.contract import (QOS, STATUS_OFFLINE, STATUS_ONLINE, Topics, delayed_hand_payload, encode,
                                         snapshot_payload)
from rfid_table.mqtt import make_client
from rfid_table.service.sink import Sink

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReceivedCommand:
    """A message on the commands topic, as the broker delivered it."""

    topic: str
    payload: bytes
    retained: bool  # published with the retain flag (see the subscription in _on_connect)


class _Acks:
    """One feed's acknowledgements, turned into a delivery mark that only moves over a gapless run of seqs.

    Live events overtake the backlog after an outage, so the broker may acknowledge seq 900 long before 12; the
    journal's mark must still stay at 11 until 12 is acknowledged, or a crash would lose 12 to 899.
    """

    def __init__(self, floor: int | None = None):
        self.floor = floor  # every seq up to here is acknowledged; None: from the first seq handed over
        self.outstanding: set[int] = set()  # handed to paho, not acknowledged (paho resends them after a reconnect)
        self.acked: set[int] = set()  # acknowledged above the floor, waiting for the seqs below them
        self.reported = floor

    def seen(self, seq: int) -> bool:
        """Already handed over in this process: paho holds it until the broker acknowledges it."""
        return (self.floor is not None and seq <= self.floor) or seq in self.outstanding or seq in self.acked

    def handed(self, seq: int) -> None:
        if self.floor is None:
            self.floor = self.reported = seq - 1
        self.outstanding.add(seq)

    def ack(self, seq: int) -> None:
        self.outstanding.discard(seq)
        if self.floor is None:  # nothing handed over yet: an acknowledgement of no seq of ours
            return
        if seq > self.floor:
            self.acked.add(seq)
            while self.floor + 1 in self.acked:
                self.floor += 1
                self.acked.remove(self.floor)


class MqttPublisher(Sink):
    """Publishes from the daemon's own thread: no network thread, so an event goes onto the socket the moment
    it is published instead of waiting for another thread to be scheduled. The daemon calls :meth:`service`
    whenever it would otherwise sleep; that reads acknowledgements, keeps the connection alive and reconnects.

    Two kinds of event messages: **live** ones (:meth:`publish_events`) go out at once; **paced** ones — the
    backlog of journaled events the broker never acknowledged (:meth:`publish_backlog_events`) and the delayed
    feed (:meth:`publish_delayed`) — go out at most ``backlog_per_s`` a second with at most ``backlog_in_flight``
    unacknowledged, and only while connected: those methods take what the pace allows and say how much.
    """

    # A message the broker refuses (PUBACK reason code 0x80 or more: its ACL, a quota) is not delivered. Refused
    # events are offered again this often (by default), oldest first, at most DENIED_BATCH at a time; at most DENIED_KEPT are kept
    # in memory (the journal keeps all of them undelivered: a restart sends the rest).
    DENIED_RETRY_S = 30.0
    DENIED_BATCH = 100
    DENIED_KEPT = 10_000

    def __init__(self, settings: MqttSettings, table_id: str, epoch: str, denied_retry_s: float = DENIED_RETRY_S,
                 journaled: bool = True):
        self.settings = settings
        self.journaled = journaled  # whether a journal keeps what the broker has not taken (for what the log says)
        self.topics = Topics.for_table(settings.topic_prefix, table_id)
        self.epoch = epoch
        self.connected = False
        self.client = make_client(settings, settings.client_id or f"rfid-table-{table_id}")
        self.client.will_set(self.topics.status, STATUS_OFFLINE, qos=QOS, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self._commands: list[ReceivedCommand] = []  # received, not yet handled
        self._sent = 0
        self._acked = 0
        self._awaiting: dict[int, tuple[str, int, bool, bytes]] = {}  # message id → (feed, seq, paced, payload)
        self._topic_of: dict[int, str] = {}  # message id → topic, of every message not yet acknowledged
        # (feed, seq) → (topic, payload): events the broker refused, offered again every DENIED_RETRY_S
        self._denied: dict[tuple[str, int], tuple[str, bytes]] = {}
        self._denied_retry_at = 0.0
        self.denied_retry_s = denied_retry_s
        self.refusals: dict[str, str] = {}  # topic → the broker's reason, while it refuses that topic
        self.refused_total = 0  # messages the broker refused since the start
        self._feeds: dict[str, _Acks] = {}
        self._snapshots: tuple[bytes, bytes] | None = None  # the latest, sent again at every (re)connection
        self._delayed_hand: bytes | None = None  # the latest delayed/hand, likewise
        self._socket_open = False
        self._next_attempt = 0.0
        self._backoff_s = 1.0
        self._failures = 0  # connection attempts failed in a row (only some are logged)
        self.paced_in_flight = 0
        self.max_paced_in_flight = 0  # the most seen at once, for the backlog's log line
        self._tokens = 0.0
        self._tokens_at = time.monotonic()

    # ---- connection -----------------------------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: mqtt.ConnectFlags, reason_code: ReasonCode,
                    properties: Properties | None) -> None:
        if reason_code.is_failure:
            log.error("broker %s:%s refused the connection: %s", self.settings.host, self.settings.port, reason_code)
            return
        log.info("connected to broker %s:%s", self.settings.host, self.settings.port)
        self.connected, self._backoff_s, self._failures = True, 1.0, 0
        self._publish(self.topics.status, STATUS_ONLINE, retain=True)
        if self._snapshots is not None:  # a broker without persistence lost them; one that kept them gets news
            for secure, payload in zip((False, True), self._snapshots):
                self._publish(self.topics.snapshot(secure), payload, retain=True)
        if self._delayed_hand is not None:
            self._publish(self.topics.delayed_hand, self._delayed_hand, retain=True)
        # retainAsPublished: a command published retained keeps its flag even when it arrives live, so the table can
        # refuse it; one already retained arrives with it at every (re)subscription and is refused again.
        client.subscribe(self.topics.commands, options=SubscribeOptions(qos=QOS, retainAsPublished=True))

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: mqtt.DisconnectFlags,
                       reason_code: ReasonCode, properties: Properties | None) -> None:
        self.connected = False
        self._socket_open = False
        if reason_code != 0:
            log.warning("lost the broker %s:%s (%s); reconnecting, %s", self.settings.host, self.settings.port,
                        reason_code, "journaling meanwhile" if self.journaled
                        else "without a journal: what happens meanwhile waits in memory only")

    def _try_connect(self) -> None:
        try:
            self.client.connect(self.settings.host, self.settings.port, keepalive=self.settings.keepalive)
            self._socket_open = True
            # A public and a secure copy of each event leave back to back; without this, Nagle's algorithm
            # holds the second small packet until the first is acknowledged.
            connection = self.client.socket()
            if isinstance(connection, socket.socket):  # TLS's too (ssl.SSLSocket is one)
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            self._failures += 1
            if isinstance(exc, ssl.SSLCertVerificationError):
                why = f"TLS: the broker's certificate was refused: {exc.verify_message}"
            elif self.settings.tls and isinstance(exc, (ssl.SSLError, ConnectionResetError)):
                # A plain listener answers a TLS greeting by dropping the connection.
                why = (f"TLS handshake failed: {getattr(exc, 'reason', None) or exc.strerror or exc} "
                       f"(is port {self.settings.port} a TLS listener?)")
            else:
                why = exc.strerror or str(exc)
            # The first failures, then one a minute or so: an outage of hours must not fill the log.
            if self._failures <= 3 or self._failures % max(1, 60 // self.settings.reconnect_max_s) == 0:
                log.warning("cannot connect to the broker at %s:%s (%s); retrying in %.0f s (attempt %d)",
                            self.settings.host, self.settings.port, why, self._backoff_s, self._failures)
            self._next_attempt = time.monotonic() + self._backoff_s
            self._backoff_s = min(self._backoff_s * 2, float(self.settings.reconnect_max_s))

    def service(self, timeout_s: float) -> None:
        """Do the network work for up to ``timeout_s`` seconds (the daemon's idle time)."""
        if not self._socket_open:
            wait = self._next_attempt - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, timeout_s))
                return
            self._try_connect()
            if not self._socket_open:
                return
        self._retry_denied()
        deadline = time.monotonic() + timeout_s
        while True:
            # loop() returns early whenever something was published (paho wakes its select through a socket
            # pair), so keep going until the time is really spent.
            if self.client.loop(timeout=max(0.0, deadline - time.monotonic())) != mqtt.MQTT_ERR_SUCCESS:
                self.connected = self._socket_open = False
                self._next_attempt = time.monotonic() + self._backoff_s
                return
            if time.monotonic() >= deadline:
                return

    def start(self, wait_s: float = 10.0, stop: Callable[[], bool] | None = None) -> bool:
        """Connect, waiting up to ``wait_s`` for the broker (or until ``stop()``: the daemon is told to end); messages
        queue in memory until it answers."""
        deadline = time.monotonic() + wait_s
        while not self.connected and time.monotonic() < deadline and not (stop is not None and stop()):
            self.service(0.05)
        return self.connected

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason_code: ReasonCode,
                    properties: Properties) -> None:
        self._acked += 1
        awaited = self._awaiting.pop(mid, None)
        topic = self._topic_of.pop(mid, "?")
        if awaited is not None and awaited[2]:
            self.paced_in_flight -= 1
        if reason_code.is_failure:  # a PUBACK that refuses the message: it was not delivered
            self._refused(topic, reason_code, awaited)
            return
        if topic in self.refusals:
            del self.refusals[topic]
            log.info("the broker accepts messages on %s again", loggable(topic))
        if awaited is not None:
            feed, seq, _paced, _payload = awaited
            self._feeds[feed].ack(seq)

    def _refused(self, topic: str, reason_code: ReasonCode, awaited: tuple[str, int, bool, bytes] | None) -> None:
        """The broker refused a message. An event stays unacknowledged (the journal keeps it undelivered) and is
        offered again every DENIED_RETRY_S; the refusal is logged once for its topic and reason."""
        self.refused_total += 1
        reason = f"{reason_code} (0x{reason_code.value:02x})"
        if self.refusals.get(topic) != reason:
            self.refusals[topic] = reason
            log.error("the broker refused the message on %s: %s. Its ACL does not let this table's user publish "
                      "there (check [mqtt] topic_prefix and the user's rights in the broker); events stay "
                      "undelivered in the journal and are offered again every %.0f s", loggable(topic), reason,
                      self.denied_retry_s)
        if awaited is None:
            return  # a snapshot, the status, a reply or diagnostics: the next one replaces it
        feed, seq, _paced, payload = awaited
        if len(self._denied) < self.DENIED_KEPT:
            self._denied[(feed, seq)] = (topic, payload)
            self._denied_retry_at = max(self._denied_retry_at, time.monotonic() + self.denied_retry_s)

    def _retry_denied(self) -> None:
        """Offer the oldest refused events again (the ACL may have been fixed and the broker reloaded)."""
        if not self._denied or not self.connected or time.monotonic() < self._denied_retry_at:
            return
        self._denied_retry_at = time.monotonic() + self.denied_retry_s
        for key in sorted(self._denied, key=lambda k: k[1])[:self.DENIED_BATCH]:
            topic, payload = self._denied.pop(key)
            feed, seq = key
            self._awaiting[self._publish(topic, payload)] = (feed, seq, False, payload)

    def backlog_started(self) -> None:
        """A backlog delivery begins: the most in flight at once is counted from now (for its log line)."""
        self.max_paced_in_flight = self.paced_in_flight

    @property
    def refusing(self) -> bool:
        """The broker refuses what the table publishes (events wait undelivered): for the status light."""
        return bool(self.refusals)

    def delivery_report(self) -> dict:
        """What diagnostics show of the broker's refusals."""
        return {"refused": self.refused_total, "events_waiting": len(self._denied),
                "topics": {topic: reason for topic, reason in sorted(self.refusals.items())}}

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        self._commands.append(ReceivedCommand(message.topic, bytes(message.payload), bool(message.retain)))

    @property
    def has_commands(self) -> bool:
        """Commands have arrived that :meth:`take_commands` has not handed on yet."""
        return bool(self._commands)

    def take_commands(self) -> list[ReceivedCommand]:
        """Commands received since the last call, in order of arrival."""
        commands, self._commands = self._commands, []
        return commands

    def publish_reply(self, role: str, user: str, body: dict) -> None:
        self._publish(self.topics.reply(role, user), encode(body))

    # ---- delivery marks -----------------------------------------------------------------------------------

    def resume(self, delivered: dict[str, int]) -> None:
        """Feed → the journal's delivery mark: acknowledgements count on from there (see :class:`_Acks`)."""
        for feed, seq in delivered.items():
            self._feeds[feed] = _Acks(seq)

    def take_acknowledged(self) -> dict[str, int]:
        """Feed → the seq up to which the broker has acknowledged every event, where it moved since the last call
        (for the journal's marks)."""
        moved = {}
        for feed, acks in self._feeds.items():
            if acks.floor is not None and acks.floor != acks.reported:
                moved[feed] = acks.reported = acks.floor
        return moved

    @property
    def pending(self) -> int:
        """Messages handed to paho that the broker has not acknowledged yet (they sit in memory)."""
        return self._sent - self._acked

    def _publish(self, topic: str, payload: bytes, retain: bool = False) -> int:
        self._sent += 1
        mid = self.client.publish(topic, payload, qos=QOS, retain=retain).mid
        self._topic_of[mid] = topic
        return mid

    def _publish_event(self, feed: str, topic: str, body: dict, seq: int, paced: bool = False) -> None:
        acks = self._feeds.setdefault(feed, _Acks())
        acks.handed(seq)
        payload = encode(body)
        self._awaiting[self._publish(topic, payload)] = (feed, seq, paced, payload)
        if paced:
            self.paced_in_flight += 1
            self.max_paced_in_flight = max(self.max_paced_in_flight, self.paced_in_flight)
            self._tokens -= 1

    def _room(self) -> int:
        """How many paced messages may go now: a token bucket refilled at ``backlog_per_s`` (holding a tenth of a
        second's worth, so no burst beats the rate by much), within the window of ``backlog_in_flight``."""
        if not self.connected:
            return 0
        now = time.monotonic()
        rate = self.settings.backlog_per_s
        self._tokens = min(max(2.0, rate / 10), self._tokens + (now - self._tokens_at) * rate)
        self._tokens_at = now
        window = max(2, self.settings.backlog_in_flight)  # an event needs two messages, or it never goes
        return max(0, min(int(self._tokens), window - self.paced_in_flight))

    # ---- what the pipeline hands over -------------------------------------------------------------------

    def publish_events(self, events: list[DomainEvent]) -> None:
        """Live events: out at once, on both branches."""
        for event in events:
            for secure in (False, True):
                body = event.payload(secure)
                body["epoch"] = self.epoch
                self._publish_event("secure" if secure else "public", self.topics.events(secure), body, event.seq)

    def publish_backlog_events(self, events: list[DomainEvent]) -> int:
        """Journaled events the broker has not acknowledged, oldest first, flagged ``replay``: as many as the pace
        allows now. Returns how many were taken; the caller offers the rest again later. A copy still held by
        paho from before a lost connection is not sent twice (paho resends it itself)."""
        room = self._room()
        taken = 0
        for event in events:
            branches = [secure for secure in (False, True)
                        if not self._feeds.setdefault("secure" if secure else "public", _Acks()).seen(event.seq)]
            if len(branches) > room:
                break
            for secure in branches:
                body = event.payload(secure)
                body["epoch"] = self.epoch
                body["replay"] = True
                self._publish_event("secure" if secure else "public", self.topics.events(secure), body, event.seq,
                                    paced=True)
            room -= len(branches)
            taken += 1
        return taken

    def publish_live(self, bodies: list[dict]) -> None:
        """``live/events``: the messages the reveal policy made of this cycle's events (each public payload, and the
        hole cards it shows), live only. Not journaled as delivered and not sent again: a live display ignores what
        is late anyway, and takes the public snapshot after a ``seq`` gap."""
        if self.connected:
            for body in bodies:
                event = {**body["event"], "epoch": self.epoch}
                self._publish(self.topics.live_events, encode({**body, "event": event}))

    def publish_snapshots(self, public_snapshot: dict, secure_snapshot: dict) -> None:
        self._snapshots = (snapshot_payload(public_snapshot, self.epoch), snapshot_payload(secure_snapshot, self.epoch))
        if self.connected:  # otherwise the latest goes out on connection: paho need not queue every one of them
            for secure, payload in zip((False, True), self._snapshots):
                self._publish(self.topics.snapshot(secure), payload, retain=True)

    def publish_delayed(self, events: list[DomainEvent]) -> int:
        """The secure payloads, released to broadcast overlays after the delay, paced like the backlog (a whole
        hand is released at once, and after an outage many hands). Returns how many were taken."""
        room = self._room()
        taken = 0
        for event in events[:room]:
            self._publish_event("delayed", self.topics.delayed_events, self._delayed_body(event), event.seq,
                                paced=True)
            taken += 1
        return taken

    def publish_delayed_hand(self, events: list[DomainEvent], released: float | None,
                             released_before: float | None) -> None:
        """The retained ``delayed/hand``: what the delayed feed has released of the hand being played back, for an
        overlay that missed some of it or opens late. Sent again at every (re)connection, like the snapshots."""
        self._delayed_hand = delayed_hand_payload([self._delayed_body(e) for e in events], self.epoch, released,
                                                  released_before)
        if self.connected:
            self._publish(self.topics.delayed_hand, self._delayed_hand, retain=True)

    def _delayed_body(self, event: DomainEvent) -> dict:
        body = event.payload(True)
        body["epoch"] = self.epoch
        return body

    def publish_diagnostics(self, report: dict) -> None:
        if self.connected:  # retained and sent every second: a stale one queued during an outage is worth nothing
            self._publish(self.topics.diagnostics, encode(report), retain=True)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Send what is queued, say ``offline`` (the will covers a crash) and disconnect."""
        if self.connected:
            self._publish(self.topics.status, STATUS_OFFLINE, retain=True)
            deadline = time.monotonic() + timeout_s
            while self.connected and self.pending > 0 and time.monotonic() < deadline:
                self.service(0.05)
            if self.pending:
                log.warning("%d messages were not acknowledged by the broker before shutdown", self.pending)
        self.client.disconnect()
