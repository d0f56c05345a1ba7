"""Shared fixtures: a real Mosquitto started with the project's own configuration, and an MQTT recorder."""

import functools
import inspect
import json
import threading
import time
from pathlib import Path

import pytest
from hypothesis import settings

from rfid_table.ops.broker import PrivateBroker
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.mqtt import make_client
from rfid_table.service.sink import Sink

ROOT = Path(__file__).resolve().parents[1]

# The fuzzers' examples: FUZZ_EXAMPLES in CI; `--hypothesis-profile thorough` (README.md, Tests) for a longer hunt.
settings.register_profile("thorough", max_examples=2000)
FUZZ_EXAMPLES = 400
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


# ---- tiers ------------------------------------------------------------------------------------------------------
# `scripts/test --fast` runs the pure tests alone (the controller, the codecs, the HAL, the configuration, the
# simulated table in process) in under a minute. The rest need a part that takes its time to start, and are marked
# here by what they need, in one place, so that a new test is put in its tier without a word from its author: a
# broker (the test or one of its fixtures starts Mosquitto), a browser (its module drives Chromium), MicroPython
# (the firmware's tests), processes (the test, a helper or a fixture of the tests starts the project's command line,
# a daemon, a server or worker processes). What a test needs is read from the names its code uses, and those of the
# helpers, classes and fixtures of tests/ it names, followed from name to name. A test that is pure but takes
# seconds of CPU carries `@pytest.mark.slow` itself; --fast leaves it out too. The full run (CI) runs everything.
TIERS = {
    "broker": "starts Mosquitto",
    "browser": "drives Chromium",
    "micropython": "runs the firmware in MicroPython",
    "process": "starts processes (the command line, a daemon, a server, workers)",
    "slow": "pure, but takes seconds of CPU",
}
BROKER_FIXTURES = {"broker", "mqtt_settings", "recorder_factory", "table_config"}
# in a test's code (not in its comments or strings): the names that start a broker, the parts of the names that
# start a process (os.fork, multiprocessing, subprocess.run, soak._spawn_table...)
BROKER_NAMES = {"PrivateBroker", "CardRoomBroker"}
PROCESS_WORDS = ("subprocess", "Popen", "multiprocessing", "ProcessPool", "fork", "spawn", "pexpect")
TESTS = Path(__file__).resolve().parent


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help="only the pure tests: none that starts a broker, a browser, MicroPython or a process, none "
                          "marked slow (scripts/test --fast)")


def pytest_configure(config):
    for tier, why in TIERS.items():
        config.addinivalue_line("markers", f"{tier}: {why}; left out by --fast")


def _is_code(thing) -> bool:
    """A function, a class or a fixture (whose definition wraps its function): what has names to follow."""
    return inspect.isfunction(thing) or inspect.isclass(thing) or inspect.isfunction(getattr(thing, "__wrapped__", 0))


@functools.cache
def _names_in(thing) -> frozenset[str]:
    """The global and attribute names a function, class or fixture of tests/ uses in its code, read from its
    compiled code (so not from its comments or strings); none for one from elsewhere."""
    thing = inspect.unwrap(thing)
    if not str(getattr(inspect.getmodule(thing), "__file__", "")).startswith(str(TESTS)):
        return frozenset()
    if inspect.isfunction(thing):
        codes, names = [thing.__code__], set()
    else:  # a class: its methods, and its bases by name (a broker of the tests' own made from PrivateBroker)
        codes = [f.__code__ for f in vars(thing).values() if inspect.isfunction(f)]
        names = {base.__name__ for base in thing.__mro__}
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [const for const in code.co_consts if inspect.iscode(const)]  # nested functions, lambdas
    return frozenset(names)


def _names_reached(item) -> set[str]:
    """The names the test uses, and those of every function, class and fixture of tests/ it names, followed from
    name to name (a module's helper that calls another helper that starts a process)."""
    module = getattr(item, "module", None)
    fixtures = getattr(item, "fixturenames", ())
    todo = [getattr(item, "function", None)] + [getattr(module, name, None) for name in fixtures]
    seen: set[int] = set()
    reached: set[str] = set()
    while todo:
        thing = todo.pop()
        if not _is_code(thing) or id(thing) in seen:
            continue
        seen.add(id(thing))
        names = _names_in(thing)
        reached |= names
        home = inspect.getmodule(inspect.unwrap(thing))  # where the names it uses are looked up
        todo += [getattr(home, name, None) for name in names]
    return reached


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)
        names = _names_reached(item)
        if BROKER_FIXTURES & set(getattr(item, "fixturenames", ())) or BROKER_NAMES & names:
            item.add_marker(pytest.mark.broker)
        if module is not None and hasattr(module, "Chromium"):
            item.add_marker(pytest.mark.browser)
        if module is not None and hasattr(module, "requires_micropython"):
            item.add_marker(pytest.mark.micropython)
        if any(word in name for name in names for word in PROCESS_WORDS):
            item.add_marker(pytest.mark.process)
    if config.getoption("fast"):
        tiered = {item: any(item.get_closest_marker(tier) for tier in TIERS) for item in items}
        config.hook.pytest_deselected(items=[item for item in items if tiered[item]])
        items[:] = [item for item in items if not tiered[item]]
