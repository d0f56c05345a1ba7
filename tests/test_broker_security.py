"""The card room broker: config/mosquitto/cardroom.conf with the files `rfid-table broker-setup` makes, run by a real
Mosquitto on free ports (only the ports and the files' directory differ from what ships). Each role reads and
writes what docs/broker.md says, and nothing else.

A test that checks that a message does *not* arrive never sleeps. After the forbidden publish has been
acknowledged, an allowed "marker" follows, and the test waits for it. Mosquitto delivers a subscriber's
messages in the order it routed them, so a forbidden message that got through would have come first.
"""

import io
import itertools
import json
import logging
import os
import re
import shutil
import socket
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.client import WebsocketConnectionError
from paho.mqtt.enums import CallbackAPIVersion

from conftest import TABLE_10
from rfid_table.ops.broker_setup import (CARDROOM_CONF, CardRoom, CardRoomBroker, RoomGrant, SetupError, User,
                                     check_username, main, render_acl)
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.daemon import StopFlag
from rfid_table.ops.diag import render
from rfid_table.service.journal import Journal
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

ROOT = Path(__file__).resolve().parents[1]
P = "rfid-table"
MAIN, OTHER, CLOSED = "main-1", "other-2", "closed-9"
PASSWORDS = {"table-main-1": "main table pw", "table-other-2": "other-pw", "table-closed-9": "closed-pw",
             "floor-1": "floor: s3cret!", "dealer-main-1": "dealer-pw", "web-1": "public-pw"}
# obs-1 (the overlay) gets a generated password: the test reads it from the command's output.
CARD = re.compile(r"\b[2-9TJQKA][shdc]\b")
GRANTED_QOS1 = 1
NOT_AUTHORIZED = 135


def ok(reason_code) -> bool:
    """A PUBACK that accepted the message (0, or 16 "no matching subscribers")."""
    return not reason_code.is_failure


# ---- the broker -------------------------------------------------------------------------------------------------

class Room:
    def __init__(self, broker: CardRoomBroker, directory: Path, passwords: dict[str, str]):
        self.broker, self.directory, self.passwords = broker, directory, passwords


def run_setup(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def workdir():
    # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
    work = Path(tempfile.mkdtemp(prefix="rfid-table-room-"))
    os.chmod(work, 0o755)
    yield work
    shutil.rmtree(work, ignore_errors=True)


ROOM_SETUP = ["--table", MAIN, "--table", OTHER, "--table", CLOSED, "--user", "floor:floor-1",
              "--user", f"dealer:dealer-main-1:{MAIN}", "--user", "overlay:obs-1", "--user", "public:web-1",
              "--tls-ip", "127.0.0.1"]


@pytest.fixture(scope="module")
def room(workdir):
    directory = workdir / "cardroom"
    argv = ["--dir", str(directory), *ROOM_SETUP]
    for name, password in PASSWORDS.items():
        argv += ["--password", f"{name}={password}"]
    code, out, err = run_setup(*argv)
    assert code == 0, err
    generated = re.search(r"^\s*obs-1\s+overlay\s+every table\s+password: (\S+)$", out, re.M)
    assert generated, out
    with CardRoomBroker(directory) as broker:
        yield Room(broker, directory, {**PASSWORDS, "obs-1": generated.group(1)})


_ids = itertools.count(1)


class Client:
    """A paho client (MQTT 5) that keeps what the broker answered, so a test can wait for it."""

    def __init__(self, room: Room, user: str | None, password: str | None = None, *, port: int | None = None,
                 transport: str = "tcp", tls_ca: Path | None | bool = None, client_id: str | None = None):
        self.cond = threading.Condition()
        self.connack = None
        self.disconnect_reason = None
        self.messages: list[tuple[str, bytes, bool, float]] = []  # topic, payload, retained, monotonic time
        self.acks: dict[int, object] = {}
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"test-{next(_ids)}",
                                  protocol=mqtt.MQTTv5, transport=transport, reconnect_on_failure=False)
        if user is not None:
            self.client.username_pw_set(user, room.passwords.get(user) if password is None else password)
        if tls_ca is not None:
            self.client.tls_set(ca_certs=str(tls_ca) if tls_ca else None)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda c, u, mid, codes, p: self._ack(mid, codes)
        self.client.on_publish = lambda c, u, mid, code, p: self._ack(mid, code)
        self.client.connect(room.broker.host, port or room.broker.mqtt_port)
        self.client.loop_start()
        assert self.wait(lambda: self.connack is not None or self.disconnect_reason is not None), "no CONNACK"

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        with self.cond:
            self.connack = reason_code
            self.cond.notify_all()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        with self.cond:
            self.disconnect_reason = reason_code
            self.cond.notify_all()

    def _on_message(self, client, userdata, message):
        with self.cond:
            self.messages.append((message.topic, message.payload, bool(message.retain), time.monotonic()))
            self.cond.notify_all()

    def _ack(self, mid, codes):
        with self.cond:
            self.acks[mid] = codes
            self.cond.notify_all()

    def wait(self, predicate, timeout_s: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout_s)

    @property
    def connected(self) -> bool:
        return self.connack is not None and not self.connack.is_failure

    def subscribe(self, *topics: str) -> list:
        result, mid = self.client.subscribe([(t, 1) for t in topics])
        assert result == mqtt.MQTT_ERR_SUCCESS
        assert self.wait(lambda: mid in self.acks), f"no SUBACK for {topics}"
        return self.acks[mid]

    def publish(self, topic: str, payload: bytes | str, retain: bool = False):
        """Publish with QoS 1 and return the PUBACK's reason code."""
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        assert self.wait(lambda: info.mid in self.acks), f"no PUBACK for {topic}"
        return self.acks[info.mid]

    def topics(self) -> list[str]:
        with self.cond:
            return [t for t, _, _, _ in self.messages]

    def received(self, topic: str) -> bool:
        return self.wait(lambda: any(t == topic for t, _, _, _ in self.messages))

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def connect(room):
    made: list[Client] = []

    def make(user, password=None, **kwargs) -> Client:
        made.append(Client(room, user, password, **kwargs))
        return made[-1]

    yield make
    for client in made:
        client.close()


_markers = itertools.count(1)


def marker(table: Client, *readers: Client) -> None:
    """Publish a marker on the table's public branch and wait until every reader has it (see the docstring)."""
    topic = f"{P}/{MAIN}/public/marker-{next(_markers)}"
    assert ok(table.publish(topic, b"marker"))
    for reader in readers:
        assert reader.received(topic), f"marker {topic} did not arrive"


# ---- connecting -------------------------------------------------------------------------------------------------

def test_anonymous_unknown_and_wrong_password_clients_are_refused(room, connect):
    for client in (connect(None), connect("web-1", "wrong"), connect("nobody", "public-pw"),
                   connect(None, port=room.broker.ws_port, transport="websockets", tls_ca=room.directory / "ca.crt"),
                   connect("web-1", "wrong", port=room.broker.tls_port, tls_ca=room.directory / "ca.crt")):
        assert client.connack is not None and client.connack.is_failure, client.connack
        assert client.connack.value in (134, 135), client.connack  # 2.0.11 answers 135 "not authorised" to all
    assert connect("web-1").connected


def test_tls_listener_takes_the_generated_ca_and_a_password(room, connect):
    client = connect("floor-1", port=room.broker.tls_port, tls_ca=room.directory / "ca.crt")
    assert client.connected, client.connack
    assert client.subscribe(f"{P}/+/secure/#") == [GRANTED_QOS1]
    # A client that trusts only the system's CAs refuses the broker's certificate.
    with pytest.raises(ssl.SSLCertVerificationError):
        Client(room, "floor-1", port=room.broker.tls_port, tls_ca=False)


def test_websocket_listener_serves_browser_overlays(room, connect):
    overlay = connect("obs-1", port=room.broker.ws_port, transport="websockets", tls_ca=room.directory / "ca.crt")
    assert overlay.connected, overlay.connack
    overlay.subscribe(f"{P}/+/delayed/#")
    table = connect("table-main-1")
    assert ok(table.publish(f"{P}/{MAIN}/delayed/events", b'{"seq": 1}'))
    assert overlay.received(f"{P}/{MAIN}/delayed/events")


def test_the_websocket_listener_speaks_tls_with_the_certificate_setup_made_and_refuses_plain_ws(room):
    """The overlay's password travels in the page's address: the listener takes wss:// only, with the certificate
    broker-setup made (without being asked for TLS), which a client trusting the private CA accepts."""
    assert "--tls" not in ROOM_SETUP  # made by default
    ca = room.directory / "ca.crt"
    with socket.create_connection((room.broker.host, room.broker.ws_port), timeout=10) as raw:
        with ssl.create_default_context(cafile=str(ca)).wrap_socket(raw, server_hostname=room.broker.host) as tls:
            served = tls.getpeercert(binary_form=True)
    assert served == ssl.PEM_cert_to_DER_cert((room.directory / "server.crt").read_text())
    # a browser that trusts only the system's CAs refuses it (the broadcast machine must trust ca.crt)
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(room.broker.overlay_url(MAIN), timeout=10, context=ssl.create_default_context())
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError), refused.value
    with urllib.request.urlopen(room.broker.overlay_url(MAIN), timeout=10,
                                context=ssl.create_default_context(cafile=str(ca))) as page:
        assert page.status == 200
    # plain ws:// and http:// get no answer at all: no login goes out in clear
    plain = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, transport="websockets",
                        reconnect_on_failure=False)
    plain.username_pw_set("obs-1", room.passwords["obs-1"])
    with pytest.raises(WebsocketConnectionError):
        plain.connect(room.broker.host, room.broker.ws_port)
    with pytest.raises(OSError):  # the connection reset (urllib may wrap it in a URLError)
        urllib.request.urlopen(f"http://{room.broker.host}:{room.broker.ws_port}/index.html", timeout=10)


def test_the_retained_delayed_hand_reaches_overlays_and_the_floor_only(room, connect):
    """delayed/hand (what delayed/events released of the hand being played back) is read as delayed/events is:
    the overlay and the floor, not a public client nor the dealer display; only the table writes it."""
    table = connect("table-main-1")
    topic = f"{P}/{MAIN}/delayed/hand"
    assert ok(table.publish(topic, b'{"hand": 1}', retain=True))
    try:
        readers = {user: connect(user) for user in ("obs-1", "floor-1", "web-1", "dealer-main-1")}
        for reader in readers.values():
            reader.subscribe(f"{P}/{MAIN}/#")
        marker(table, *readers.values())
        got = {user: [(t, p, retained) for t, p, retained, _ in r.messages if "/delayed/" in t]
               for user, r in readers.items()}
        assert got == {"obs-1": [(topic, b'{"hand": 1}', True)], "floor-1": [(topic, b'{"hand": 1}', True)],
                       "web-1": [], "dealer-main-1": []}
        for rogue in ("obs-1", "web-1", "dealer-main-1", "floor-1"):
            assert readers[rogue].publish(topic, b"rogue", retain=True).value == NOT_AUTHORIZED, rogue
        late = connect("obs-1")  # (it replaces the first obs-1 connection: one user, one client id)
        late.subscribe(topic)
        assert late.received(topic) and [p for t, p, _, _ in late.messages if t == topic] == [b'{"hand": 1}']
    finally:
        assert ok(table.publish(topic, b"", retain=True))  # the retained message goes


def test_a_client_id_cannot_take_over_another_users_session(room, connect):
    table = connect("table-main-1", client_id=f"rfid-table-{MAIN}")
    # Client ids of other users' sessions, and ones with wildcards: each becomes the username of who connects.
    for client_id in (f"rfid-table-{MAIN}", f"table-{MAIN}", "x/+/#"):
        assert connect("web-1", client_id=client_id).connected
    assert ok(table.publish(f"{P}/{MAIN}/status", b"online", retain=True))
    assert table.disconnect_reason is None, "a public client with the table's client id disconnected the table"
    # The price (docs/broker.md): two connections of one user replace each other. (Mosquitto 2.0.11 closes the
    # older connection without a DISCONNECT packet, so paho reports no reason.)
    newer = connect("table-main-1")
    assert table.wait(lambda: table.disconnect_reason is not None)
    assert newer.connected and newer.disconnect_reason is None


# ---- a full run: public and overlay clients never see a hole card live -----------------------------------------

@pytest.fixture(scope="module")
def full_run(room):
    """A simulated 10-seat table plays 3 hands with its own credentials. Public, overlay, dealer and floor
    clients listen to '#' throughout. Afterwards the table releases the secure events on delayed/, as the
    broadcast delay will."""
    clients = {user: Client(room, user) for user in ("web-1", "obs-1", "floor-1", "dealer-main-1")}
    # The public client also asks for the secure branch by name and through a shared subscription.
    public_subacks = clients["web-1"].subscribe("#", f"{P}/{MAIN}/secure/#", f"$share/room/{P}/#")
    for user in ("obs-1", "floor-1", "dealer-main-1"):
        assert clients[user].subscribe("#") == [GRANTED_QOS1]
    config = load_config(TABLE_10)
    assert config.table_id == MAIN
    settings = MqttSettings(host=room.broker.host, port=room.broker.mqtt_port, username="table-main-1",
                            password=room.passwords["table-main-1"])
    config = type(config)(**{**config.__dict__, "mqtt": settings})
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch=7)
    table = SimulatedTable(config, SimOptions(hands=3, seed=23, speed=0, pace_s=0.5), publisher)
    assert publisher.start(), "the table could not log in to the card-room broker"
    table.run(StopFlag(), publisher)
    publisher.stop()
    floor = clients["floor-1"]
    assert floor.wait(lambda: (f"{P}/{MAIN}/status", b"offline") in [(t, p) for t, p, _, _ in floor.messages])
    releaser = Client(room, "table-main-1")
    marker(releaser, *clients.values())
    live = {user: list(c.messages) for user, c in clients.items()}
    secure_events = [p for t, p, _, _ in floor.messages if t == f"{P}/{MAIN}/secure/events"]
    released_at = time.monotonic()
    for payload in secure_events:
        assert ok(releaser.publish(f"{P}/{MAIN}/delayed/events", payload))
    marker(releaser, *clients.values())
    releaser.close()
    yield {"clients": clients, "public_subacks": public_subacks, "live": live, "secure_events": secure_events,
           "released_at": released_at}
    for c in clients.values():
        c.close()


def hole_cards_by_hand(secure_payloads: list[bytes]) -> dict[int, set[str]]:
    holes: dict[int, set[str]] = {}
    for payload in secure_payloads:
        event = json.loads(payload)
        if event["type"] == "card_dealt":
            holes.setdefault(event["hand"], set()).add(event["card"])
    return holes


def leaked_hole_cards(payload: bytes, holes: dict[int, set[str]]) -> set[str]:
    try:
        hand = json.loads(payload).get("hand")
    except (ValueError, AttributeError):
        return set()
    return set(CARD.findall(payload.decode())) & holes.get(hand, set())


def test_the_run_really_carried_hole_cards_to_the_floor(full_run):
    holes = hole_cards_by_hand(full_run["secure_events"])
    assert len(holes) == 3 and all(len(cards) >= 4 for cards in holes.values())
    floor_topics = {t for t, _, _, _ in full_run["live"]["floor-1"]}
    assert {f"{P}/{MAIN}/secure/events", f"{P}/{MAIN}/secure/snapshot", f"{P}/{MAIN}/public/events"} <= floor_topics


def test_a_public_client_subscribed_to_everything_gets_no_hole_card_over_a_full_run(full_run):
    public = full_run["clients"]["web-1"]
    # Mosquitto 2.0 grants every subscription (its acl_file does not check subscriptions) and filters
    # each message when it delivers it: the SUBACK says nothing about what will arrive.
    assert full_run["public_subacks"] == [GRANTED_QOS1] * 3
    topics = [t for t, _, _, _ in public.messages]
    assert any(t == f"{P}/{MAIN}/public/events" for t in topics) and f"{P}/{MAIN}/public/snapshot" in topics
    assert f"{P}/{MAIN}/status" in topics
    assert not [t for t in topics if not re.match(rf"^{P}/[^/]+/(status|public/.*)$", t)]
    holes = hole_cards_by_hand(full_run["secure_events"])
    for topic, payload, _, _ in public.messages:
        assert not leaked_hole_cards(payload, holes), f"{topic} carried hole cards: {payload!r}"
        assert b"hole_cards" not in payload


def test_an_overlay_gets_hole_cards_only_from_the_delayed_feed(full_run):
    overlay = full_run["clients"]["obs-1"]
    holes = hole_cards_by_hand(full_run["secure_events"])
    live_topics = [t for t, _, _, _ in full_run["live"]["obs-1"]]
    assert f"{P}/{MAIN}/public/events" in live_topics
    assert not [t for t in live_topics if "/secure/" in t or "/delayed/" in t], "an overlay read secure/ live"
    for topic, payload, _, _ in full_run["live"]["obs-1"]:
        assert not leaked_hole_cards(payload, holes), f"{topic} carried hole cards live: {payload!r}"
    delayed = [(p, at) for t, p, _, at in overlay.messages if t == f"{P}/{MAIN}/delayed/events"]
    assert [p for p, _ in delayed] == full_run["secure_events"]
    assert all(at >= full_run["released_at"] for _, at in delayed)
    assert any(leaked_hole_cards(p, holes) for p, _ in delayed)


def test_a_dealer_sees_its_tables_secure_branch_and_a_public_client_none_of_the_delayed_feed(full_run):
    dealer = [t for t, _, _, _ in full_run["clients"]["dealer-main-1"].messages]
    assert f"{P}/{MAIN}/secure/events" in dealer
    assert not [t for t in dealer if "/delayed/" in t]
    assert not [t for t, _, _, _ in full_run["clients"]["web-1"].messages if "/delayed/" in t]


# ---- who may write where -----------------------------------------------------------------------------------------

def test_floor_commands_reach_the_table_and_nobody_can_sign_as_someone_else(room, connect):
    table = connect("table-main-1")
    table.subscribe(f"{P}/{MAIN}/commands/#")
    floor = connect("floor-1")
    dealer = connect("dealer-main-1")
    allowed = [(floor, f"{P}/{MAIN}/commands/floor/floor-1/confirm"),
               (dealer, f"{P}/{MAIN}/commands/dealer/dealer-main-1/deck")]
    refused = [(floor, f"{P}/{MAIN}/commands/floor/other-floor/confirm"),  # another console's name
               (floor, f"{P}/{MAIN}/commands/dealer/dealer-main-1/deck"),  # another role
               (floor, f"{P}/{MAIN}/secure/snapshot"),  # floor reads secure, never writes it
               (dealer, f"{P}/{OTHER}/commands/dealer/dealer-main-1/deck"),  # not the dealer's table
               (table, f"{P}/{MAIN}/commands/floor/floor-1/confirm")]  # a table only reads its commands
    for client, topic in refused:
        assert client.publish(topic, b"{}").value == NOT_AUTHORIZED, topic
    for client, topic in allowed:
        assert ok(client.publish(topic, b'{"ok": true}')), topic
        assert table.received(topic)
    assert sorted(table.topics()) == sorted(topic for _, topic in allowed)


def test_a_table_writes_only_its_own_topics(room, connect):
    floor = connect("floor-1")
    floor.subscribe(f"{P}/#")
    table = connect("table-main-1")
    for topic in (f"{P}/{OTHER}/status", f"{P}/{OTHER}/public/snapshot", f"{P}/{OTHER}/secure/events",
                  f"{P}/{OTHER}/delayed/events", f"{P}/{OTHER}/replies/floor-1", "elsewhere/x"):
        assert table.publish(topic, b"forged").value == NOT_AUTHORIZED, topic
    own = [f"{P}/{MAIN}/{branch}" for branch in ("public/events", "secure/events", "delayed/events", "replies/x")]
    for topic in own:
        assert ok(table.publish(topic, b"{}")), topic
    marker(table, floor)
    assert not [t for t, p, _, _ in floor.messages if t.startswith(f"{P}/{OTHER}/") or p == b"forged"]
    assert set(own) <= set(floor.topics())


@pytest.mark.parametrize("rogue", ["web-1", "obs-1"])
def test_a_reading_user_cannot_publish_to_any_table_topic(room, connect, rogue):
    floor = connect("floor-1")
    floor.subscribe("#")
    table = connect("table-main-1")
    table.subscribe(f"{P}/{MAIN}/#")
    client = connect(rogue)
    topics = [f"{P}/{MAIN}/{branch}" for branch in ("status", "public/snapshot", "public/events", "secure/events",
                                                     "delayed/events", "replies/floor-1", "commands/floor/floor-1/x",
                                                     f"commands/public/{rogue}/x")]
    for topic in topics:
        assert client.publish(topic, b"rogue").value == NOT_AUTHORIZED, topic
    marker(table, floor, table)
    assert not [t for t, p, _, _ in floor.messages if p == b"rogue"]
    assert not [t for t, p, _, _ in table.messages if p == b"rogue"]


def test_an_unauthorised_retained_message_does_not_replace_the_tables_snapshot(room, connect):
    table = connect("table-other-2")
    topic = f"{P}/{OTHER}/public/snapshot"
    assert ok(table.publish(topic, b'{"real": true}', retain=True))
    for forger in (connect("web-1"), connect("obs-1"), connect("table-main-1"), connect("dealer-main-1")):
        assert forger.publish(topic, b'{"real": false}', retain=True).value == NOT_AUTHORIZED
        assert forger.publish(topic, b"", retain=True).value == NOT_AUTHORIZED  # an empty one would delete it
    late = connect("web-1")
    late.subscribe(topic)
    assert late.received(topic)
    assert [(p, r) for t, p, r, _ in late.messages] == [(b'{"real": true}', True)]


def test_a_removed_table_loses_its_login_and_its_retained_secure_snapshot(room, connect):
    """check_retain_source: a retained message stays only as good as its publisher's current rights."""
    closed = connect("table-closed-9")
    secret, barrier = f"{P}/{CLOSED}/secure/snapshot", f"{P}/{MAIN}/replies/retained-barrier"
    assert ok(closed.publish(secret, b'{"hole_cards": ["As", "Ad"]}', retain=True))
    assert ok(connect("table-main-1").publish(barrier, b"barrier", retain=True))
    closed.close()

    def retained_for_a_new_floor_client() -> list[str]:
        floor = connect("floor-1")
        floor.subscribe(secret, barrier)  # retained messages come in the order of the filters
        assert floor.received(barrier)
        return floor.topics()

    assert secret in retained_for_a_new_floor_client()
    code, out, err = run_setup("--dir", str(room.directory), "--remove-table", CLOSED)
    assert code == 0, err
    assert "table-closed-9" in out and "removed" in out
    room.broker.reload()
    deadline = time.monotonic() + 10
    while secret in retained_for_a_new_floor_client():
        assert time.monotonic() < deadline, "the removed table's retained snapshot is still served"
    refused = connect("table-closed-9")
    assert refused.connack.is_failure


# ---- the setup command -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, why", [
    ("a+b", "wildcard"), ("tv#", "wildcard"), ("#", "wildcard"), ("floor/1", "'/'"), ("bell\x07", "control"),
    ("new\nline", "control"), ("two words", "white space"), ("-dash", "letters"), ("table-main-9", "tables' own"),
])
def test_setup_refuses_bad_usernames_and_writes_nothing(tmp_path, name, why):
    code, out, err = run_setup("--dir", str(tmp_path / "room"), "--table", MAIN, "--user", f"public:{name}")
    assert code == 2
    assert "refused" in err and why in err, err
    assert not (tmp_path / "room").exists()


def test_setup_refuses_bad_table_ids_prefixes_roles_and_passwords(tmp_path):
    d = str(tmp_path / "room")
    for argv, why in [(["--table", "main/1"], "'/'"), (["--table", "+"], "wildcard"),
                      (["--prefix", "rfid/#"], "wildcard"), (["--prefix", "rfid//x"], "empty topic level"),
                      (["--user", "admin:root"], "unknown role"), (["--user", "dealer:d1"], "dealer's table"),
                      (["--user", "dealer:d1:nowhere"], "not set up"),
                      (["--table", MAIN, "--password", "table-main-1="], "non-empty"),
                      (["--table", MAIN, "--password", "ghost=x"], "no such user")]:
        code, _, err = run_setup("--dir", d, *argv)
        assert code == 2 and why in err, (argv, err)
    assert not (tmp_path / "room").exists()
    with pytest.raises(SetupError, match="':'"):
        check_username("a:b")


def test_setup_run_again_adds_a_table_and_keeps_every_password(workdir):
    d = workdir / "again"
    code, first, err = run_setup("--dir", str(d), "--table", MAIN, "--user", "public:web-1")
    assert code == 0, err
    assert first.count("password: ") == 2
    before = (d / "passwd").read_text().splitlines()
    code, second, err = run_setup("--dir", str(d), "--table", "sixmax-1", "--install-conf", str(workdir / "c.conf"))
    assert code == 0, err
    assert re.search(r"table-sixmax-1 .* password: \S+", second) and second.count("password: ") == 1
    after = (d / "passwd").read_text().splitlines()
    assert set(before) < set(after) and len(after) == 3
    assert "user table-sixmax-1" in (d / "acl").read_text()
    assert json.loads((d / "cardroom.json").read_text())["tables"] == [MAIN, "sixmax-1"]
    installed = (workdir / "c.conf").read_text()
    assert f"password_file {d}/passwd" in installed and "/etc/mosquitto/cardroom" not in installed


def test_the_shipped_example_acl_is_what_the_command_generates():
    room = CardRoom()
    for table in ("main-1", "sixmax-1"):
        room.add_table(table)
    for user in (User("floor-1", "floor"), User("dealer-main-1", "dealer", ("main-1",)), User("obs-1", "overlay"),
                 User("web-1", "public"), User("room-a", "room", None, RoomGrant("main-room", "secure", "rfid-table-room"))):
        room.add_user(user)
    assert (ROOT / "config" / "mosquitto" / "acl.example").read_text() == render_acl(room)
    assert "pattern" not in render_acl(room).replace("`pattern`", "")


def test_the_shipped_configuration_keeps_its_security_settings():
    lines = {line.strip() for line in CARDROOM_CONF.read_text().splitlines() if not line.startswith("#")}
    for required in ("per_listener_settings false", "allow_anonymous false", "check_retain_source true",
                     "password_file /etc/mosquitto/cardroom/passwd", "acl_file /etc/mosquitto/cardroom/acl",
                     "listener 1883 127.0.0.1", "listener 8883", "listener 9001", "protocol websockets"):
        assert required in lines, required
    text = CARDROOM_CONF.read_text()
    assert text.count("use_username_as_clientid true") == text.count("\nlistener ") == 3
    # both listeners that face the room's network speak TLS only
    listeners = {block.split()[0]: block for block in re.split(r"(?m)^listener ", text)[1:]}
    for port in ("8883", "9001"):
        settings = {line.strip() for line in listeners[port].splitlines() if not line.startswith("#")}
        assert {"certfile /etc/mosquitto/cardroom/server.crt", "keyfile /etc/mosquitto/cardroom/server.key"} \
            <= settings, port


# ---- what the broker refuses -------------------------------------------------------------------------------------

def test_events_the_broker_refuses_stay_undelivered_in_the_journal_and_go_out_once_the_topics_are_right(
        room, tmp_path, caplog):
    """A topic_prefix the ACL does not cover: Mosquitto answers every event with PUBACK 0x87 (not authorized). None
    is marked delivered, the refusal is logged once per topic, diag and the status light say so, the events are
    offered again at a slow pace; started again with the right prefix, the table delivers every one of them."""
    config = load_config(TABLE_10)
    wrong = MqttSettings(host=room.broker.host, port=room.broker.mqtt_port, username="table-main-1",
                         password=room.passwords["table-main-1"], topic_prefix="elsewhere")
    config = type(config)(**{**config.__dict__, "mqtt": wrong})
    uid = {card: tag for tag, card in config.decks["A"].items()}
    journal = Journal(tmp_path / "journal.db")
    journal.open()
    publisher = MqttPublisher(wrong, config.table_id, epoch=journal.epoch, denied_retry_s=0.5)
    sim = SimulatedTable(config, SimOptions(hands=None, link="direct", gpio=True), publisher, journal)
    t = 1000.0

    def run_until(condition, timeout_s: float = 15.0) -> bool:
        nonlocal t
        deadline = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < deadline:
            sim.step(t)
            publisher.service(0.005)
            t += sim.cycle_s
        return condition()

    try:
        with caplog.at_level("ERROR", logger="rfid_table.service.publisher"):
            assert publisher.start(), "the table could not log in"
            for card, seat in (("As", 1), ("Kd", 2), ("Qs", 1), ("Jd", 2)):
                sim.field.place(uid[card], f"seat{seat}.cards")
                assert run_until(lambda: journal.last_seq() >= 1)
            assert run_until(lambda: journal.last_seq() >= 5 and publisher.delivery_report()["events_waiting"]
                             >= 2 * journal.last_seq())
            first = publisher.refused_total
            assert run_until(lambda: publisher.refused_total > first + 10)  # offered again, refused again
        marks = journal.delivery_marks()
        assert marks.get("public", 0) == marks.get("secure", 0) == 0  # nothing counted as delivered
        refusals = [r.getMessage() for r in caplog.records if "the broker refused" in r.getMessage()]
        for branch in ("public", "secure"):  # once per topic, however many events and retries
            assert sum(f"elsewhere/{MAIN}/{branch}/events: Not authorized (0x87)" in line for line in refusals) == 1
        report = publisher.delivery_report()
        assert report["topics"][f"elsewhere/{MAIN}/secure/events"] == "Not authorized (0x87)"
        diag = sim.pipeline.diagnostics.report(t + 5, sim.pipeline.readers, sim.pipeline.tracker,
                                               sim.pipeline.controller, sim.gpio, report)
        assert diag["broker_refused"]["events_waiting"] >= 10
        assert f"BROKER REFUSES: {diag['broker_refused']['events_waiting']} events wait" in render(diag, "online")
        assert sim.gpio.outputs.status_shown == "broker_refuses"
        produced = journal.last_seq()
    finally:
        publisher.stop()
        sim.close()
        journal.close()

    # The prefix put right: what the journal kept undelivered goes out, every event once or more.
    right = MqttSettings(**{**wrong.__dict__, "topic_prefix": P})
    floor = Client(room, "floor-1")
    floor.subscribe(f"{P}/{MAIN}/secure/events")
    journal = Journal(tmp_path / "journal.db")
    journal.open()
    publisher = MqttPublisher(right, config.table_id, epoch=journal.epoch)
    sim = SimulatedTable(type(config)(**{**config.__dict__, "mqtt": right}), SimOptions(hands=None, link="direct"),
                         publisher, journal)
    try:
        assert publisher.start()
        sim.pipeline.restore(t)
        assert sim.pipeline.publish_backlog() >= produced
        assert run_until(lambda: journal.delivered("secure") >= produced)
        seqs = {json.loads(p)["seq"] for topic, p, _, _ in floor.messages if topic.endswith("/secure/events")}
        assert set(range(1, produced + 1)) <= seqs
        assert publisher.refused_total == 0 and not publisher.refusing
    finally:
        floor.close()
        publisher.stop()
        sim.close()
        journal.close()


# ---- a room service's user ---------------------------------------------------------------------------------------

class LogWatch(logging.Handler):
    """Sets an event when a log line containing ``words`` is written."""

    def __init__(self, words: str, seen: threading.Event):
        super().__init__()
        self.words, self.seen = words, seen

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.seen.set()


def room_toml(path: Path, broker: CardRoomBroker, room_id: str, feed: str, user: str, dsn: str) -> Path:
    path.write_text(f'[room]\nid = "{room_id}"\nfeed = "{feed}"\n[mqtt]\nhost = "{broker.host}"\n'
                    f'port = {broker.mqtt_port}\nusername = "{user}"\npassword = "{user}-pw"\nsession_expiry_s = 600\n'
                    f'[database]\ndsn = "{dsn}"\nretry_max_s = 2\n', encoding="utf-8")
    return path


@pytest.fixture
def room_db_if_any(request):
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install psycopg)")
    from tests.postgres_fixture import private_postgres  # noqa: PLC0415

    with private_postgres() as server:
        yield server.database("cardroom")


def test_a_room_service_stores_its_feed_and_publishes_its_statistics_with_its_users_rights_and_no_more(
        workdir, room_db_if_any):
    """broker-setup --room ROOM.toml makes the room file's user: it reads every table's feed that the file names
    (secure or delayed) and writes its own room's statistics, which the overlays read; nothing else. The real
    service then runs with those rights: it stores a table's hand and the overlay shows its players' statistics."""
    from rfid_table.room.config import load_room_config  # noqa: PLC0415
    from rfid_table.room.service import RoomService  # noqa: PLC0415
    from tests.test_room_statistics import HAND_1  # noqa: PLC0415

    directory = workdir / "with-rooms"
    broker = CardRoomBroker(directory)
    main_room = room_toml(workdir / "main-room.toml", broker, "main-room", "secure", "room-a", room_db_if_any)
    studio = room_toml(workdir / "studio.toml", broker, "studio", "delayed", "room-d", room_db_if_any)
    passwords = {"table-main-1": "t1", "table-other-2": "t2", "obs-1": "o1", "obs-main": "o2", "web-1": "w1",
                 "dealer-main-1": "d1", "room-a": "room-a-pw", "room-d": "room-d-pw"}
    code, out, err = run_setup("--dir", str(directory), "--table", MAIN, "--table", OTHER, "--user", "overlay:obs-1",
                               "--user", f"overlay:obs-main:{MAIN}", "--user", "public:web-1",
                               "--user", f"dealer:dealer-main-1:{MAIN}", "--room", str(main_room), "--room",
                               str(studio), "--tls-ip", "127.0.0.1",
                               *[f"--password={name}={pw}" for name, pw in passwords.items()])
    assert code == 0, err
    assert re.search(r"room-a\s+room\s+room main-room: the secure feed, writes rfid-table-room/main-room/#", out), out
    assert re.search(r"room-d\s+room\s+room studio: the delayed feed", out), out
    stats = "rfid-table-room/main-room/tables/main-1/stats"
    with broker.start():
        room = Room(broker, directory, passwords)
        made: list[Client] = []

        def connect(user: str) -> Client:
            made.append(Client(room, user))
            assert made[-1].connected, (user, made[-1].connack)
            return made[-1]

        try:
            # the rights, one user at a time (a user's second connection would take over the first)
            table, other = connect("table-main-1"), connect("table-other-2")
            room_a, room_d = connect("room-a"), connect("room-d")
            for reader in (room_a, room_d):
                reader.subscribe("#")
            for branch in ("status", "public/events", "secure/events", "delayed/events", "replies/floor-1"):
                assert ok(table.publish(f"{P}/{MAIN}/{branch}", b"{}")), branch
            assert ok(other.publish(f"{P}/{OTHER}/secure/events", b"{}"))
            assert ok(other.publish(f"{P}/{OTHER}/delayed/events", b"{}"))
            assert ok(table.publish(f"{P}/{MAIN}/secure/marker", b"marker"))
            assert ok(table.publish(f"{P}/{MAIN}/delayed/marker", b"marker"))
            assert room_a.received(f"{P}/{MAIN}/secure/marker") and room_d.received(f"{P}/{MAIN}/delayed/marker")
            assert sorted(room_a.topics()) == sorted([f"{P}/{MAIN}/secure/events", f"{P}/{OTHER}/secure/events",
                                                      f"{P}/{MAIN}/secure/marker"])
            assert sorted(room_d.topics()) == sorted([f"{P}/{MAIN}/delayed/events", f"{P}/{OTHER}/delayed/events",
                                                      f"{P}/{MAIN}/delayed/marker"])
            for topic in (f"{P}/{MAIN}/secure/events", f"{P}/{MAIN}/public/snapshot", f"{P}/{MAIN}/status",
                          f"{P}/{MAIN}/commands/floor/room-a/confirm", "rfid-table-room/studio/stats",
                          "rfid-table-room/studio/tables/main-1/stats", "elsewhere/x"):
                assert room_a.publish(topic, b"forged").value == NOT_AUTHORIZED, topic
            assert room_d.publish("rfid-table-room/main-room/stats", b"forged").value == NOT_AUTHORIZED
            assert ok(room_d.publish("rfid-table-room/studio/stats", b"{}"))
            for client in (room_a, room_d):
                client.close()

            # the service itself, with the room file's user
            overlay, overlay_main, public = connect("obs-1"), connect("obs-main"), connect("web-1")
            for reader in (overlay, overlay_main, public):
                reader.subscribe("rfid-table-room/#")
            stop, subscribed = threading.Event(), threading.Event()
            service = RoomService(load_room_config(main_room), "ignored-the-broker-uses-the-username", stop)
            listener = LogWatch("subscribed to", subscribed)
            room_log = logging.getLogger("rfid_table.room")
            room_log.addHandler(listener)
            level, room_log.level = room_log.level, logging.INFO
            runner = threading.Thread(target=service.run, daemon=True)
            runner.start()
            try:
                assert subscribed.wait(60), broker.log()[-2000:]
                seatings = [{"seq": 1 + seat, "type": "player_seated", "t": HAND_1["t"] - 60, "epoch": "e1",
                             "seat": seat, "player_id": f"p-{seat}", "name": name}
                            for seat, name in ((1, "Anna"), (2, "Bo"), (3, "Cem"))]
                for event in [*seatings, HAND_1]:
                    assert ok(table.publish(f"{P}/{MAIN}/secure/events", json.dumps(event)))
                assert overlay.wait(lambda: stats in overlay.topics(), 60), broker.log()[-2000:]
                shown = json.loads(next(p for t, p, _, _ in overlay.messages if t == stats))
                assert [(s["seat"], s["name"], s["all"]["hands"], s["all"]["net"]) for s in shown["seats"]] == [
                    (1, "Anna", 1, -50), (2, "Bo", 1, 750), (3, "Cem", 1, -700)]
                assert overlay.wait(lambda: "rfid-table-room/main-room/stats" in overlay.topics(), 30)
                assert overlay_main.wait(lambda: stats in overlay_main.topics(), 30)
                assert public.wait(lambda: stats in public.topics(), 30)
            finally:
                stop.set()
                runner.join(30)
                room_log.removeHandler(listener)
                room_log.setLevel(level)
            assert service.counts.hands == 1 and service.counts.refused == 0
            # retained: an overlay of one table reads that table's statistics, not the room's players; a dealer
            # neither (a barrier every one of them reads comes after whatever retained message arrives)
            for user, expected in (("obs-main", [stats]), ("dealer-main-1", [])):
                late = connect(user)
                late.subscribe("rfid-table-room/#")
                late.subscribe(f"{P}/{MAIN}/public/barrier")
                assert ok(table.publish(f"{P}/{MAIN}/public/barrier", b"barrier"))
                assert late.received(f"{P}/{MAIN}/public/barrier")
                assert [t for t in late.topics() if t.startswith("rfid-table-room/")] == expected, user
        finally:
            for client in made:
                client.close()


def test_setup_refuses_a_room_file_it_cannot_give_rights_by(tmp_path):
    d = str(tmp_path / "room")
    cases = [('[room]\nid = "r"\n[database]\ndsn = "dbname=x"\n', "no [mqtt] username"),
             ('[room]\nid = "r"\n[mqtt]\nusername = "room-a"\ntopic_prefix = "other"\n[database]\ndsn = "dbname=x"\n',
              "under 'other'"),
             ('[room]\nid = "r/x"\n[database]\ndsn = "dbname=x"\n', "room.toml:2"),
             (None, "does not exist")]
    for text, why in cases:
        path = tmp_path / "room.toml"
        path.unlink(missing_ok=True)
        if text is not None:
            path.write_text(text)
        code, _, err = run_setup("--dir", d, "--table", MAIN, "--room", str(path))
        assert code == 2 and why in err, (text, err)
    code, _, err = run_setup("--dir", d, "--table", MAIN, "--user", "room:room-a")
    assert code == 2 and "--room ROOM.toml" in err, err
    assert not (tmp_path / "room").exists()
