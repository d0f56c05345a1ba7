"""Publish the table over MQTT (paho-mqtt 2, MQTT 5).

Per table, under ``<prefix>/<table id>/`` (see docs/mqtt.md, the contract):

* ``status``           retained, ``online`` / ``offline`` (the last will)
* ``public/snapshot``  retained, the public table state
* ``public/events``    every domain event, without secrets
* ``secure/snapshot``  retained, with hole and burn cards
* ``secure/events``    every domain event, with secrets

Hole cards only ever go to ``secure/``; the public payloads are built from the events' public parts alone.
"""

import json
import logging
import threading
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


def encode(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def make_client(settings: MqttSettings, client_id: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    if settings.username:
        client.username_pw_set(settings.username, settings.password)
    client.reconnect_delay_set(min_delay=1, max_delay=30)
    return client


class MqttPublisher:
    def __init__(self, settings: MqttSettings, table_id: str, epoch: int):
        self.settings = settings
        self.topics = Topics.for_table(settings.topic_prefix, table_id)
        self.epoch = epoch
        self.connected = threading.Event()
        self.client = make_client(settings, settings.client_id or f"rfid-table-{table_id}")
        self.client.will_set(self.topics.status, b"offline", qos=QOS, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("broker %s:%s refused the connection: %s", self.settings.host, self.settings.port, reason_code)
            return
        log.info("connected to broker %s:%s", self.settings.host, self.settings.port)
        client.publish(self.topics.status, b"online", qos=QOS, retain=True)
        self.connected.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        if reason_code != 0:
            log.warning("lost the broker (%s); reconnecting", reason_code)

    def start(self, wait_s: float = 10.0) -> bool:
        """Connect in the background; wait up to ``wait_s`` for the broker. Messages queue meanwhile."""
        self.client.connect_async(self.settings.host, self.settings.port, keepalive=self.settings.keepalive)
        self.client.loop_start()
        if not self.connected.wait(wait_s):
            log.warning("no broker at %s:%s yet; still trying", self.settings.host, self.settings.port)
            return False
        return True

    def publish(self, events: list[DomainEvent], public_snapshot: dict, secure_snapshot: dict) -> None:
        """Events first, then the snapshots that include them, so a snapshot never runs ahead of the stream."""
        for event in events:
            for secure in (False, True):
                body = event.payload(secure)
                body["epoch"] = self.epoch
                self.client.publish(self.topics.events(secure), encode(body), qos=QOS)
        for secure, snapshot in ((False, public_snapshot), (True, secure_snapshot)):
            self.client.publish(self.topics.snapshot(secure), encode({**snapshot, "epoch": self.epoch}),
                                qos=QOS, retain=True)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Say ``offline`` (the will covers a crash) and disconnect once the queue has gone out."""
        if self.connected.is_set():
            info = self.client.publish(self.topics.status, b"offline", qos=QOS, retain=True)
            try:
                info.wait_for_publish(timeout_s)
            except RuntimeError:
                pass
        self.client.disconnect()
        self.client.loop_stop()
