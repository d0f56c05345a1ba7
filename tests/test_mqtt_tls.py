"""The table's own MQTT connection over TLS: the ``tls*`` keys of [mqtt], checked by check-config and used by the
daemon, against the TLS listener of the card room's broker (config/mosquitto/cardroom.conf with the files
`rfid-table broker-setup --tls` makes, run by a real Mosquitto on free ports)."""

import io
import json
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from conftest import TABLE_6, TABLE_10
from rfid_table.ops.broker_setup import CardRoomBroker, main as broker_setup
from rfid_table.cli import main
from rfid_table.config.table import load_config
from rfid_table.service.daemon import StopFlag
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

PASSWORDS = {"table-main-1": "table pw", "floor-1": "floor pw"}


@pytest.fixture(scope="module")
def room():
    # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
    work = Path(tempfile.mkdtemp(prefix="rfid-table-tls-"))
    os.chmod(work, 0o755)
    directory = work / "cardroom"
    argv = ["--dir", str(directory), "--table", "main-1", "--user", "floor:floor-1", "--tls", "--tls-ip", "127.0.0.1"]
    for name, password in PASSWORDS.items():
        argv += ["--password", f"{name}={password}"]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
        assert broker_setup(argv) == 0, err.getvalue()
    # A client certificate from the room's CA, and a second CA the broker's certificate does not chain to.
    openssl = shutil.which("openssl")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for args in (["req", "-new", *ec, "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=table-main-1"],
                 ["x509", "-req", "-in", "client.csr", "-CA", str(directory / "ca.crt"), "-CAkey",
                  str(directory / "ca.key"), "-set_serial", "0x1234", "-days", "2", "-out", "client.crt"],
                 ["req", "-x509", "-new", *ec, "-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "2",
                  "-subj", "/CN=another CA"]):
        subprocess.run([openssl, *args], cwd=work, check=True, capture_output=True, timeout=60)
    with CardRoomBroker(directory) as broker:
        yield work, directory, broker
    shutil.rmtree(work, ignore_errors=True)


def table_file(directory: Path, port: int, host: str = "127.0.0.1", base: Path = TABLE_10, **keys) -> Path:
    """The shipped table with [mqtt] pointing at the room's TLS listener, written into ``directory``."""
    lines = {"host": json.dumps(host), "port": port, "username": '"table-main-1"', "password": '"table pw"',
             **{key: json.dumps(value) for key, value in keys.items()}}
    text = base.read_text()
    start = text.index("[mqtt]\n")
    end = text.index("\n[", start + 1)
    mqtt_table = "[mqtt]\n" + "".join(f"{key} = {value}\n" for key, value in lines.items())
    path = directory / "table.toml"
    path.write_text(text[:start] + mqtt_table + text[end:])
    return path


class Floor:
    """The floor's subscriber, over TLS with the room's CA."""

    def __init__(self, broker: CardRoomBroker, ca: Path):
        from rfid_table.config.table import MqttSettings

        self.messages: list[tuple[str, bytes]] = []
        self.ready = threading.Event()
        settings = MqttSettings(host="127.0.0.1", port=broker.tls_port, username="floor-1", password="floor pw",
                                tls=True, tls_ca_file=str(ca))
        self.client = make_client(settings, "floor-1")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe("rfid-table/main-1/#", qos=1)
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.ready.set()
        self.client.on_message = lambda c, u, m: self.messages.append((m.topic, m.payload))
        self.client.connect(settings.host, settings.port)
        self.client.loop_start()
        assert self.ready.wait(10), "the floor could not subscribe over TLS"

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_the_table_plays_to_the_floor_over_the_tls_listener(room):
    work, directory, broker = room
    # A path relative to the configuration file: the CA handed out with it, kept beside it.
    shutil.copy(directory / "ca.crt", work / "ca.crt")
    config = load_config(table_file(work, broker.tls_port, tls_ca_file="ca.crt"))
    assert config.mqtt.tls and config.mqtt.tls_ca_file == str(work / "ca.crt")
    floor = Floor(broker, directory / "ca.crt")
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch="tls")
    table = SimulatedTable(config, SimOptions(hands=1, seed=3, speed=0, pace_s=0.5, link="direct"), publisher)
    try:
        assert publisher.start(), "the table could not connect over TLS"
        assert publisher.client.socket().version().startswith("TLSv1.")  # really TLS, 1.2 or newer
        table.run(StopFlag(), publisher)
    finally:
        publisher.stop()
        floor.close()
    topics = [topic.removeprefix("rfid-table/main-1/") for topic, _ in floor.messages]
    assert {"status", "public/events", "secure/events", "secure/snapshot"} <= set(topics)
    assert any(json.loads(payload)["type"] == "hand_ended" for topic, payload in floor.messages
               if topic.endswith("/secure/events"))


def test_a_client_certificate_is_presented_with_its_key(room):
    work, directory, broker = room
    config = load_config(table_file(work, broker.tls_port, tls_ca_file=str(directory / "ca.crt"),
                                    tls_cert_file="client.crt", tls_key_file="client.key"))
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch="tls")
    try:
        assert publisher.start(), "the table could not connect with its client certificate"
    finally:
        publisher.stop()


def test_a_broker_certificate_from_another_ca_or_for_another_host_is_refused(room, caplog):
    work, directory, broker = room
    caplog.set_level(logging.WARNING, logger="rfid_table.service.publisher")
    wrong_ca = load_config(table_file(work, broker.tls_port, tls_ca_file="other-ca.crt"))
    publisher = MqttPublisher(wrong_ca.mqtt, wrong_ca.table_id, epoch="tls")
    assert not publisher.start(wait_s=1.0)
    publisher.stop()
    assert "TLS: the broker's certificate was refused: self-signed certificate in certificate chain" in caplog.text

    # 127.0.0.2 is this host too, but the certificate does not name it: refused, unless tls_insecure.
    caplog.clear()
    other_name = load_config(table_file(work, broker.tls_port, host="127.0.0.2", tls_ca_file=str(directory / "ca.crt")))
    publisher = MqttPublisher(other_name.mqtt, other_name.table_id, epoch="tls")
    assert not publisher.start(wait_s=1.0)
    publisher.stop()
    assert "TLS: the broker's certificate was refused: IP address mismatch" in caplog.text
    insecure = load_config(table_file(work, broker.tls_port, host="127.0.0.2", tls_ca_file=str(directory / "ca.crt"),
                                      tls_insecure=True))
    publisher = MqttPublisher(insecure.mqtt, insecure.table_id, epoch="tls")
    assert publisher.start(wait_s=5.0)
    publisher.stop()


def test_tls_to_a_plain_listener_says_so(room, caplog):
    work, directory, broker = room
    caplog.set_level(logging.WARNING, logger="rfid_table.service.publisher")
    config = load_config(table_file(work, broker.mqtt_port, tls_ca_file=str(directory / "ca.crt")))
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch="tls")
    assert not publisher.start(wait_s=1.0)
    publisher.stop()
    assert "TLS handshake failed" in caplog.text and f"is port {broker.mqtt_port} a TLS listener?" in caplog.text


# ---- check-config --------------------------------------------------------------------------------------------------

def problems(path: Path, capsys) -> list[str]:
    with pytest.raises(SystemExit) as exc:
        main(["check-config", str(path)])
    assert exc.value.code == 78
    return capsys.readouterr().err.splitlines()[1:]


def line_of(path: Path, fragment: str) -> int:
    lines = path.read_text().split("\n")
    return next(number for number, line in enumerate(lines, 1) if line.startswith(fragment))


def test_check_config_reports_missing_and_unreadable_tls_files_with_their_lines(tmp_path, capsys):
    (tmp_path / "not-a-cert.pem").write_text("hello\n")
    (tmp_path / "certs").mkdir()
    path = table_file(tmp_path, 8883, base=TABLE_6, tls_ca_file="missing/ca.crt", tls_cert_file="certs",
                      tls_key_file="not-a-cert.pem")
    found = problems(path, capsys)
    assert found == [
        f"  {path}:{line_of(path, 'tls_ca_file')}: mqtt.tls_ca_file: {tmp_path / 'missing/ca.crt'} does not exist",
        f"  {path}:{line_of(path, 'tls_cert_file')}: mqtt.tls_cert_file: {tmp_path / 'certs'} is a directory "
        "(expected a file)",
    ]


def test_check_config_loads_the_tls_files_as_the_client_will(room, tmp_path, capsys):
    work, directory, _broker = room
    (tmp_path / "not-a-cert.pem").write_text("hello\n")
    path = table_file(tmp_path, 8883, base=TABLE_6, tls_ca_file=str(tmp_path / "not-a-cert.pem"),
                      tls_cert_file=str(work / "client.crt"), tls_key_file=str(work / "other-ca.key"))
    found = problems(path, capsys)
    assert len(found) == 2, found
    assert found[0].startswith(f"  {path}:{line_of(path, 'tls_ca_file')}: mqtt.tls_ca_file: "
                               f"{tmp_path / 'not-a-cert.pem'} holds no PEM certificate")
    assert found[1].startswith(f"  {path}:{line_of(path, 'tls_cert_file')}: mqtt.tls_cert_file: {work / 'client.crt'}"
                               f" with {work / 'other-ca.key'}: not a PEM certificate and its unencrypted private key")


@pytest.mark.parametrize("keys, key, message", [
    ({"tls": False, "tls_ca_file": "ca.crt"}, "tls_ca_file", "not used with tls = false (remove it, or set tls = true)"),
    ({"tls": False, "tls_insecure": True}, "tls_insecure", "not used with tls = false (remove it, or set tls = true)"),
    ({"tls_key_file": "client.key"}, "tls_key_file", "a client key needs its certificate: add tls_cert_file"),
    ({"tls_insecure": "yes"}, "tls_insecure", "expected true or false, got str 'yes'"),
    ({"backlog_per_s": 1}, "backlog_per_s", "expected messages per second from 2 to 100000, got 1"),
    ({"reconnect_max_s": 0}, "reconnect_max_s", "expected seconds from 1 to 300, got 0"),
])
def test_check_config_refuses_tls_keys_that_do_not_fit_together(room, keys, key, message, capsys):
    work, _directory, _broker = room
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("ca.crt", "client.key"):
            shutil.copy(work / ("other-ca.crt" if name == "ca.crt" else name), Path(scratch) / name)
        path = table_file(Path(scratch), 8883, base=TABLE_6, **keys)
        assert problems(path, capsys) == [f"  {path}:{line_of(path, key)}: mqtt.{key}: {message}"]


def test_tls_defaults_to_the_systems_authorities_and_stays_off_without_tls_keys(tmp_path):
    config = load_config(table_file(tmp_path, 8883, base=TABLE_6, tls=True))
    assert (config.mqtt.tls, config.mqtt.tls_ca_file, config.mqtt.tls_insecure) == (True, None, False)
    assert load_config(TABLE_6).mqtt.tls is False
