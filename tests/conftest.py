"""Shared fixtures: a real Mosquitto started with the project's own configuration, and an MQTT recorder."""

import json
import threading
import time
from pathlib import Path

import pytest

from rfid_table.ops.broker import PrivateBroker
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.mqtt import make_client
from rfid_table.service.sink import Sink

ROOT = Path(__file__).resolve().parents[1]
TABLE_10 = ROOT / "config" / "table-10.toml"
TABLE_6 = ROOT / "config" / "table-6max.toml"


@pytest.fixture(scope="session")
def broker():
    with PrivateBroker() as running:
        yield running


@pytest.fixture
def mqtt_settings(broker) -> MqttSettings:
    return MqttSettings(host=broker.host, port=broker.port)


@pytest.fixture
def table_config(mqtt_settings):
    """The shipped 10-seat table, pointed at the test broker."""
    config = load_config(TABLE_10)
    return type(config)(**{**config.__dict__, "mqtt": mqtt_settings})


class Recorder:
    """A subscriber that keeps every message it receives, in order."""

    def __init__(self, settings: MqttSettings, topic: str, username: str | None = None, password: str | None = None):
        self.messages: list[tuple[str, bytes, bool]] = []  # topic, payload, retained
        self.lock = threading.RLock()  # predicates given to wait_for may read the recorder again
        self.subscribed = threading.Event()
        self.client = make_client(MqttSettings(host=settings.host, port=settings.port, username=username,
                                               password=password), f"test-recorder-{time.monotonic_ns()}")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect(settings.host, settings.port)
        self.client.loop_start()
        assert self.subscribed.wait(10), "the recorder could not subscribe"

    def _on_message(self, client, userdata, message) -> None:
        with self.lock:
            self.messages.append((message.topic, message.payload, bool(message.retain)))

    def json(self, suffix: str) -> list[dict]:
        with self.lock:
            return [json.loads(p) for t, p, _ in self.messages if t.endswith(suffix)]

    def wait_for(self, predicate, timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(list(self.messages)):
                    return True
            time.sleep(0.02)
        return False

    def sync(self, timeout_s: float = 10.0) -> None:
        """Wait until everything the broker had for this recorder when called has arrived.

        Mosquitto handles one packet at a time and queues a subscriber's messages in that order: a message this
        recorder publishes to itself now arrives after every message the broker took before it (live ones, and
        the retained ones a subscription brought). A condition to wait on, where a sleep would only guess.
        """
        token = f"sync-{time.monotonic_ns()}".encode()
        topic = f"rfid-table-test-sync/{id(self)}"
        arrived = threading.Event()
        self.client.message_callback_add(topic, lambda c, u, m: arrived.set() if m.payload == token else None)
        try:
            self.client.subscribe(topic, qos=1)
            self.client.publish(topic, token, qos=1)
            assert arrived.wait(timeout_s), "the broker did not echo the recorder's sync message"
        finally:
            self.client.message_callback_remove(topic)
            self.client.unsubscribe(topic)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def recorder_factory(mqtt_settings):
    made: list[Recorder] = []

    def make(topic: str = "#", **credentials) -> Recorder:
        made.append(Recorder(mqtt_settings, topic, **credentials))
        return made[-1]

    yield make
    for recorder in made:
        recorder.close()


class ListSink(Sink):
    """The pipeline's sink where no broker is needed: keeps the live events and the latest snapshots; the delayed
    feed takes nothing."""

    def __init__(self):
        self.events: list = []
        self.snapshots: tuple[dict, dict] | None = None

    def publish_events(self, events):
        self.events += events

    def publish_snapshots(self, public_snapshot, secure_snapshot):
        self.snapshots = (public_snapshot, secure_snapshot)

    def take_acknowledged(self):
        return {}

    def take_commands(self):
        return []

    def publish_reply(self, role, user, body):
        pass

    def publish_diagnostics(self, report):
        pass

    def publish_delayed(self, events):
        return 0
