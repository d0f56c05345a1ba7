"""Two rooms' brokers bridged to a central one, as docs/broker.md deploys them: each room's cardroom.conf with the
bridge broker-setup makes (TLS to the central broker's listener, the room's bridge user there), the central broker
the same configuration with a `bridge` user per room. A subscriber at the central office with a persistent session
gets every table's events; the central broker stops while the tables go on publishing, and starts again: nothing
published meanwhile is lost on the way to it.
"""

import io
import json
import os
import re
import shutil
import tempfile
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from rfid_table.ops.broker_setup import CardRoomBroker, main

pytestmark = pytest.mark.process

ROOMS = {"room-east": "east-1", "room-west": "west-1"}  # a room's bridge user at the central office → its table
EVENTS = 120  # per table: a third before the cut, a third while the central broker is away, a third after


def setup(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return out.getvalue()


class Client:
    """A paho MQTT 5 client with a persistent session (clean start off from the first connection: Mosquitto 2.0.11
    keeps no session across its restart otherwise, docs/broker.md), reconnecting by itself."""

    def __init__(self, host: str, port: int, user: str, password: str, subscribe: str | None = None,
                 ca: Path | None = None):
        self.seen: dict[str, set[int]] = {}
        self.cond = threading.Condition()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user, protocol=mqtt.MQTTv5)
        self.client.username_pw_set(user, password)
        if ca:
            self.client.tls_set(ca_certs=str(ca))
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self.subscribed = threading.Event()

        def on_connect(client, userdata, flags, reason_code, properties):
            if subscribe and not reason_code.is_failure:
                client.subscribe(subscribe, qos=1)

        def on_message(client, userdata, message):
            with self.cond:
                self.seen.setdefault(message.topic.split("/")[1], set()).add(json.loads(message.payload)["seq"])
                self.cond.notify_all()

        self.client.on_connect = on_connect
        self.client.on_subscribe = lambda *args: self.subscribed.set()
        self.client.on_message = on_message
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600
        self.client.connect(host, port, clean_start=False, properties=properties)
        self.client.loop_start()

    def wait(self, predicate, timeout_s: float) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout_s)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def work():
    # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
    path = Path(tempfile.mkdtemp(prefix="rfid-table-bridge-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_two_rooms_bridged_to_the_central_broker_lose_nothing_while_it_is_away(work):
    central_dir = work / "central"
    users = [f"--user=bridge:{user}:{table}" for user, table in ROOMS.items()]
    setup("--dir", str(central_dir), *[f"--table={t}" for t in ROOMS.values()], *users, "--user=floor:hq-floor",
          "--password=hq-floor=hq-pw", *[f"--password={user}={user}-pw" for user in ROOMS], "--tls-ip", "127.0.0.1")
    acl = (central_dir / "acl").read_text()
    assert "user room-east\ntopic write rfid-table/east-1/status\ntopic write rfid-table/east-1/public/#\n" \
           "topic write rfid-table/east-1/secure/#\n" in acl
    central = CardRoomBroker(central_dir)
    rooms: dict[str, CardRoomBroker] = {}
    clients: list[Client] = []
    try:
        central.start()
        for user, table in ROOMS.items():
            room_dir = work / user
            out = setup("--dir", str(room_dir), f"--table={table}", f"--password=table-{table}=t-pw",
                        "--bridge-to", f"127.0.0.1:{central.tls_port}", "--bridge-user", user,
                        "--bridge-password", f"{user}-pw", "--bridge-cafile", str(central_dir / "ca.crt"))
            assert f"bridge to 127.0.0.1:{central.tls_port} as {user}" in out, out
            conf = (room_dir / "bridge.conf").read_text()
            assert re.search(rf"^topic rfid-table/\+/secure/# out 1$", conf, re.M) and "cleansession false" in conf
            assert oct((room_dir / "bridge.conf").stat().st_mode & 0o777) in ("0o600", "0o640"), "it holds a password"
            rooms[user] = CardRoomBroker(room_dir).start()
        # the central office's subscriber, over TLS, and each room's table on its own broker
        office = Client(central.host, central.tls_port, "hq-floor", "hq-pw", "rfid-table/+/secure/events",
                        ca=central_dir / "ca.crt")
        clients.append(office)
        assert office.subscribed.wait(20)
        tables = {}
        for user, table in ROOMS.items():
            tables[table] = Client(rooms[user].host, rooms[user].mqtt_port, f"table-{table}", "t-pw")
            clients.append(tables[table])

        def publish(seqs: range) -> None:
            for seq in seqs:
                for table, client in tables.items():
                    info = client.client.publish(f"rfid-table/{table}/secure/events",
                                                 json.dumps({"seq": seq, "type": "journal"}), qos=1)
                    info.wait_for_publish(10)  # the room's broker has it (PUBACK)

        def received(upto: int) -> bool:
            return all(office.seen.get(t, set()) >= set(range(1, upto + 1)) for t in ROOMS.values())

        third = EVENTS // 3
        deadline = time.monotonic() + 30  # the bridges connect within their restart timeout
        while not received(1):
            publish(range(1, 2))
            assert time.monotonic() < deadline, f"the bridges did not forward: {central.log()[-2000:]}"
            office.wait(lambda: received(1), 1)
        publish(range(2, third + 1))
        assert office.wait(lambda: received(third), 30), office.seen
        central.stop()  # the bridge is cut: the rooms' brokers keep what it has to forward
        publish(range(third + 1, 2 * third + 1))
        central.start()
        publish(range(2 * third + 1, EVENTS + 1))
        assert office.wait(lambda: received(EVENTS), 60), {t: sorted(set(range(1, EVENTS + 1)) - s)[:10]
                                                           for t, s in office.seen.items()}
    finally:
        for client in clients:
            client.close()
        for broker in rooms.values():
            broker.close()
        central.close()
