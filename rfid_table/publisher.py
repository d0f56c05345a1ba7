"""Publish the table over MQTT (paho-mqtt 2, MQTT 5).

Per table, under ``<prefix>/<table id>/`` (see docs/mqtt.md, the contract):

* ``status``           retained, ``online`` / ``offline`` (the last will)
* ``public/snapshot``  retained, the public table state
* ``public/events``    every domain event, without secrets
* ``secure/snapshot``  retained, with hole and burn cards
* ``secure/events``    every domain event, with secrets
* ``delayed/events``   the secure events, released to broadcast overlays after the broadcast delay

Hole cards only ever go to ``secure/``; the public payloads are built from the events' public parts alone.
"""

import json
import logging
import socket
import time
from dataclasses import dataclass

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.domain import DomainEvent
from rfid_table.config import MqttSettings

log = logging.getLogger(__name__)
QOS = 1


@dataclass(frozen=True)
class Topics:
    base: str

    @classmethod
    def for_table(cls, prefix: str, table_id: str) -> "Topics":
        return cls(f"{prefix}/{table_id}")

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    def snapshot(self, secure: bool) -> str:
        return f"{self.base}/{'secure' if secure else 'public'}/snapshot"

    def events(self, secure: bool) -> str:
        return f"{self.base}/{'secure' if secure else 'public'}/events"

    @property
    def commands(self) -> str:
        return f"{self.base}/commands/#"

    def reply(self, role: str, user: str) -> str:
        return f"{self.base}/replies/{role}/{user}"

    @property
    def delayed_events(self) -> str:
        return f"{self.base}/delayed/events"

    @property
    def diagnostics(self) -> str:
        return f"{self.base}/public/diag"


def encode(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def make_client(settings: MqttSettings, client_id: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    if settings.username:
        client.username_pw_set(settings.username, settings.password)
    client.reconnect_delay_set(min_delay=1, max_delay=30)
    # paho's default of 20 unacknowledged QoS 1 messages stalls a burst (a whole deal arrives in a second).
    client.max_inflight_messages_set(200)
    return client


class MqttPublisher:
    """Publishes from the daemon's own thread: no network thread, so an event goes onto the socket the moment
    it is published instead of waiting for another thread to be scheduled. The daemon calls :meth:`service`
    whenever it would otherwise sleep; that reads acknowledgements, keeps the connection alive and reconnects.
    """

    def __init__(self, settings: MqttSettings, table_id: str, epoch: str):
        self.settings = settings
        self.topics = Topics.for_table(settings.topic_prefix, table_id)
        self.epoch = epoch
        self.connected = False
        self.client = make_client(settings, settings.client_id or f"rfid-table-{table_id}")
        self.client.will_set(self.topics.status, b"offline", qos=QOS, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self._commands: list[tuple[str, bytes]] = []  # (topic, payload) received, not yet handled
        self._sent = 0
        self._acked = 0
        self._awaiting: dict[int, tuple[str, int]] = {}  # message id → (feed, seq) of an event not yet acked
        self._acked_seq: dict[str, int] = {}  # feed → highest seq the broker acknowledged
        self._socket_open = False
        self._next_attempt = 0.0
        self._backoff_s = 1.0

    # ---- connection -----------------------------------------------------------------------------------

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("broker %s:%s refused the connection: %s", self.settings.host, self.settings.port, reason_code)
            return
        log.info("connected to broker %s:%s", self.settings.host, self.settings.port)
        self.connected, self._backoff_s = True, 1.0
        self._publish(self.topics.status, b"online", retain=True)
        client.subscribe(self.topics.commands, qos=QOS)

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected = False
        self._socket_open = False
        if reason_code != 0:
            log.warning("lost the broker %s:%s (%s); reconnecting", self.settings.host, self.settings.port,
                        reason_code)

    def _try_connect(self) -> None:
        try:
            self.client.connect(self.settings.host, self.settings.port, keepalive=self.settings.keepalive)
            self._socket_open = True
            # A public and a secure copy of each event leave back to back; without this, Nagle's algorithm
            # holds the second small packet until the first is acknowledged.
            self.client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            log.warning("no broker at %s:%s (%s); retrying in %.0f s", self.settings.host, self.settings.port,
                        exc.strerror or exc, self._backoff_s)
            self._next_attempt = time.monotonic() + self._backoff_s
            self._backoff_s = min(self._backoff_s * 2, 30.0)

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

    def start(self, wait_s: float = 10.0) -> bool:
        """Connect, waiting up to ``wait_s`` for the broker; messages queue in memory until it answers."""
        deadline = time.monotonic() + wait_s
        while not self.connected and time.monotonic() < deadline:
            self.service(0.05)
        return self.connected

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        self._acked += 1
        feed_seq = self._awaiting.pop(mid, None)
        if feed_seq is not None:
            feed, seq = feed_seq
            if seq > self._acked_seq.get(feed, 0):
                self._acked_seq[feed] = seq

    def _on_message(self, client, userdata, message) -> None:
        self._commands.append((message.topic, message.payload))

    def take_commands(self) -> list[tuple[str, bytes]]:
        """Commands received since the last call, in order of arrival (topic, raw payload)."""
        commands, self._commands = self._commands, []
        return commands

    def publish_reply(self, role: str, user: str, body: dict) -> None:
        self._publish(self.topics.reply(role, user), encode(body))

    def take_acknowledged(self) -> dict[str, int]:
        """Feed → highest event seq the broker acknowledged since the last call (for the journal's marks)."""
        acked, self._acked_seq = self._acked_seq, {}
        return acked

    @property
    def pending(self) -> int:
        """Messages handed to paho that the broker has not acknowledged yet (they sit in memory)."""
        return self._sent - self._acked

    def _publish(self, topic: str, payload: bytes, retain: bool = False) -> int:
        self._sent += 1
        return self.client.publish(topic, payload, qos=QOS, retain=retain).mid

    # ---- what the pipeline hands over -------------------------------------------------------------------

    def publish_events(self, events: list[DomainEvent]) -> None:
        for event in events:
            for secure in (False, True):
                body = event.payload(secure)
                body["epoch"] = self.epoch
                mid = self._publish(self.topics.events(secure), encode(body))
                self._awaiting[mid] = ("secure" if secure else "public", event.seq)

    def publish_snapshots(self, public_snapshot: dict, secure_snapshot: dict) -> None:
        for secure, snapshot in ((False, public_snapshot), (True, secure_snapshot)):
            self._publish(self.topics.snapshot(secure), encode({**snapshot, "epoch": self.epoch}), retain=True)

    def publish_delayed(self, events: list[DomainEvent]) -> None:
        """The secure payloads, released to broadcast overlays after the delay."""
        for event in events:
            body = event.payload(True)
            body["epoch"] = self.epoch
            mid = self._publish(self.topics.delayed_events, encode(body))
            self._awaiting[mid] = ("delayed", event.seq)

    def publish_diagnostics(self, report: dict) -> None:
        self._publish(self.topics.diagnostics, encode(report), retain=True)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Send what is queued, say ``offline`` (the will covers a crash) and disconnect."""
        if self.connected:
            self._publish(self.topics.status, b"offline", retain=True)
            deadline = time.monotonic() + timeout_s
            while self.connected and self.pending > 0 and time.monotonic() < deadline:
                self.service(0.05)
            if self.pending:
                log.warning("%d messages were not acknowledged by the broker before shutdown", self.pending)
        self.client.disconnect()
