"""Running as a systemd service: sd_notify and the watchdog (rfid_table/service/systemd.py), the unit
(systemd/rfid-table@.service), the udev rule (udev/99-rfid-table.rules) and the installer (scripts/install-pi).

sd_notify is checked against a real AF_UNIX datagram socket, byte for byte. The unit is checked by
systemd-analyze (verify, and the offline security review), the rules by udevadm in a private mount namespace,
where the tools are there. The daemon itself runs under the unit's system call filter, memory
write-xor-execute and address-family restriction, applied with libseccomp as systemd applies them.
systemd is not PID 1 here: nothing in this file starts, stops or installs anything on this machine.
"""

import ctypes
import ctypes.util
import inspect
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, TABLE_6, TABLE_10
from rfid_table.service import run, systemd
from rfid_table.config.table import EX_CONFIG, load_config
from rfid_table.service.publisher import MqttPublisher

UNIT_FILE = ROOT / "systemd" / "rfid-table@.service"
RULES_FILE = ROOT / "udev" / "99-rfid-table.rules"
INSTALL = ROOT / "scripts" / "install-pi"
COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]


# ---------------------------------------------------------------------------------------------------------------
# sd_notify over a real socket
# ---------------------------------------------------------------------------------------------------------------


class Receiver:
    """The systemd end: a bound AF_UNIX datagram socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def recv(self, timeout_s: float = 2.0) -> str:
        self.sock.settimeout(timeout_s)
        return self.sock.recv(4096).decode()

    def drain(self) -> list[str]:
        out = []
        self.sock.setblocking(False)
        try:
            while True:
                out.append(self.sock.recv(4096).decode())
        except BlockingIOError:
            return out


@pytest.fixture
def notify_socket(tmp_path, monkeypatch):
    path = tmp_path / "notify"
    if len(str(path)) > 100:  # sun_path holds 108 bytes
        path = Path(tempfile.mkdtemp(prefix="sdn", dir="/tmp")) / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    yield Receiver(sock)
    sock.close()


def test_without_a_notify_socket_every_call_is_a_silent_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert systemd.notify("READY=1") is False
    assert not any((systemd.ready("x"), systemd.stopping(), systemd.status("x"), systemd.watchdog_ping()))
    watchdog = systemd.Watchdog(environ={})
    assert not watchdog.enabled and watchdog.interval_s is None
    assert watchdog.maybe_ping(0.0, healthy=True) is False


def test_ready_status_stopping_and_watchdog_send_exactly_these_datagrams(notify_socket):
    assert systemd.ready("table main-1: restoring done")
    assert notify_socket.recv() == "READY=1\nSTATUS=table main-1: restoring done"
    assert systemd.ready()
    assert notify_socket.recv() == "READY=1"
    assert systemd.status("reader main up;\nbroker connected")  # a newline would start another variable
    assert notify_socket.recv() == "STATUS=reader main up; broker connected"
    assert systemd.watchdog_ping()
    assert notify_socket.recv() == "WATCHDOG=1"
    assert systemd.stopping("table main-1: stopping")
    assert notify_socket.recv() == "STOPPING=1\nSTATUS=table main-1: stopping"
    assert systemd.stopping()
    assert notify_socket.recv() == "STOPPING=1"
    assert systemd.notify("A=1", "B=2")
    assert notify_socket.recv() == "A=1\nB=2"
    assert notify_socket.drain() == []


def test_an_abstract_socket_name_starting_with_at_is_reached_in_the_abstract_namespace(monkeypatch):
    name = f"rfid-table-test-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(b"\0" + name.encode())
        sock.settimeout(2)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert systemd.ready("abstract")
        assert sock.recv(4096) == b"READY=1\nSTATUS=abstract"
        assert systemd.watchdog_ping()
        assert sock.recv(4096) == b"WATCHDOG=1"
    assert not Path("@" + name).exists() and not Path(name).exists()  # no file was involved


def test_an_unreachable_or_invalid_socket_is_logged_once_and_never_raises(monkeypatch, tmp_path, caplog):
    missing = str(tmp_path / f"gone-{time.monotonic_ns()}")
    monkeypatch.setenv("NOTIFY_SOCKET", missing)
    with caplog.at_level("WARNING", logger="rfid_table.service.systemd"):
        assert systemd.watchdog_ping() is False
        assert systemd.watchdog_ping() is False
    assert len([r for r in caplog.records if missing in r.getMessage()]) == 1
    monkeypatch.setenv("NOTIFY_SOCKET", f"relative/path-{time.monotonic_ns()}")
    assert systemd.ready() is False
    assert "neither a path nor an abstract name" in caplog.text


# ---------------------------------------------------------------------------------------------------------------
# the watchdog
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("environ, timeout_s", [
    ({"WATCHDOG_USEC": "10000000"}, 10.0),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "4242"}, 10.0),  # pid given below: ours
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}, None),  # inherited from another process
    ({"WATCHDOG_USEC": "0"}, None),
    ({"WATCHDOG_USEC": "-5"}, None),
    ({"WATCHDOG_USEC": "ten"}, None),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "x"}, None),
    ({}, None),
])
def test_the_watchdog_reads_its_timeout_from_the_environment(environ, timeout_s):
    watchdog = systemd.Watchdog(environ=environ, pid=4242)
    assert watchdog.timeout_s == timeout_s
    assert watchdog.enabled is (timeout_s is not None)
    assert watchdog.interval_s == (None if timeout_s is None else timeout_s / 2)


def test_the_watchdog_is_read_from_os_environ_by_default(monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "3000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert systemd.Watchdog().interval_s == 1.5


def test_pings_come_at_most_every_half_timeout_and_only_while_healthy(notify_socket):
    watchdog = systemd.Watchdog(environ={"WATCHDOG_USEC": "10000000"})
    sent = []
    for tick in range(0, 2000):  # 20 s of a 10 ms loop
        now = 1000.0 + tick * 0.01
        if watchdog.maybe_ping(now, healthy=True):
            sent.append(round(now - 1000.0, 2))
    assert sent == [0.0, 5.0, 10.0, 15.0]
    assert notify_socket.drain() == ["WATCHDOG=1"] * 4

    # Unhealthy: nothing, however long; healthy again: a ping at once.
    assert not any(watchdog.maybe_ping(1020.0 + t, healthy=False) for t in range(0, 30))
    assert notify_socket.drain() == []
    assert watchdog.maybe_ping(1050.0, healthy=True)
    assert not watchdog.maybe_ping(1054.99, healthy=True)
    assert watchdog.maybe_ping(1055.0, healthy=True)
    assert notify_socket.drain() == ["WATCHDOG=1"] * 2
    assert watchdog.pings == 6


def test_a_disabled_watchdog_never_pings_even_with_a_socket(notify_socket):
    watchdog = systemd.Watchdog(environ={})
    assert not any(watchdog.maybe_ping(float(t), healthy=True) for t in range(100))
    assert notify_socket.drain() == []


# ---------------------------------------------------------------------------------------------------------------
# link health: the grace period
# ---------------------------------------------------------------------------------------------------------------


def test_a_link_down_for_less_than_the_grace_period_is_healthy_and_past_it_is_not():
    health = systemd.LinkHealth(grace_s=30.0)
    assert health.update(0.0, {"main": True})
    assert health.update(100.0, {"main": False})  # unplugged
    assert health.update(129.9, {"main": False})
    assert "reader main down for 30 s (grace 30 s)" in health.describe()
    assert not health.update(130.0, {"main": False})
    assert health.failing == ["main"]
    assert "reader main DOWN for 30 s" in health.describe()
    assert health.update(131.0, {"main": True})  # plugged back in
    assert health.describe() == "reader main up"
    assert health.update(200.0, {"main": False})  # a new outage: a new grace period
    assert health.update(229.0, {"main": False})
    assert not health.update(230.0, {"main": False})


def test_a_reader_not_up_once_since_start_is_reported_but_does_not_stop_the_watchdog():
    """A fresh restart meets the same unplugged reader: restarting again and again would not help."""
    health = systemd.LinkHealth(grace_s=30.0)
    for t in range(0, 1000, 10):
        assert health.update(float(t), {"main": False})
    assert health.describe() == "waiting for reader main (not connected since start, 990 s)"
    assert health.update(1000.0, {"main": True})
    assert health.update(1010.0, {"main": False})
    assert not health.update(1040.0, {"main": False})  # it was up in this process: now it counts


def test_one_failing_reader_of_two_is_enough_and_a_reader_removed_is_forgotten():
    health = systemd.LinkHealth(grace_s=5.0)
    assert health.update(0.0, {"cards": True, "chips": True})
    assert health.update(1.0, {"cards": True, "chips": False})
    assert not health.update(6.0, {"cards": True, "chips": False})
    assert health.failing == ["chips"]
    assert health.down_for() == {"chips": 5.0}
    assert health.describe().startswith("reader cards up; reader chips DOWN for 5 s")
    assert health.update(7.0, {"cards": True})
    assert health.down_for() == {}
    assert systemd.LinkHealth(grace_s=5.0).describe() == "no readers"


@pytest.mark.parametrize("value, grace", [("5", 5.0), ("0.5", 0.5), ("0", 30.0), ("-3", 30.0), ("soon", 30.0),
                                          ("inf", 30.0), ("nan", 30.0), ("", 30.0)])
def test_the_grace_period_may_be_set_from_the_environment(value, grace):
    assert systemd.LinkHealth(environ={systemd.GRACE_ENV: value}).grace_s == grace
    assert systemd.link_grace_s({systemd.GRACE_ENV: value}) == grace
    assert systemd.LinkHealth(grace_s=7.0, environ={systemd.GRACE_ENV: value}).grace_s == 7.0


# ---------------------------------------------------------------------------------------------------------------
# the daemon's side, one call per loop cycle, against the socket
# ---------------------------------------------------------------------------------------------------------------


def test_the_monitor_feeds_the_watchdog_through_a_replug_and_starves_it_when_the_link_stays_dead(
        notify_socket, caplog):
    """A 10 ms loop with WatchdogSec=10 and a 30 s grace: a 20 s unplug is survived; a long one lets systemd's
    watchdog fire 40 s after the unplug at the latest; when the link returns, the pings resume."""
    monitor = systemd.ServiceMonitor("main-1", watchdog=systemd.Watchdog(environ={"WATCHDOG_USEC": "10000000"}),
                                     health=systemd.LinkHealth(grace_s=30.0))
    pings: list[float] = []
    statuses: list[tuple[float, str]] = []

    def run(start: float, end: float, up: bool) -> None:
        for tick in range(round(start * 100), round(end * 100)):
            now = tick / 100
            monitor.loop(500.0 + now, {"main": up}, broker_connected=True, detail="hand 7")
            for message in notify_socket.drain():
                if message == "WATCHDOG=1":
                    pings.append(now)
                else:
                    assert message.startswith("STATUS=")
                    statuses.append((now, message.removeprefix("STATUS=")))

    with caplog.at_level("INFO", logger="rfid_table.service.systemd"):
        run(0, 20, up=True)
        run(20, 40, up=False)  # a replug taking 20 s
        run(40, 60, up=True)
        run(60, 130, up=False)  # dead
        run(130, 140, up=True)

    gaps = [(b - a, a) for a, b in zip(pings, pings[1:])]
    assert all(gap <= 5.0 + 1e-9 for gap, at in gaps if at < 60 or at >= 130)  # healthy: every 5 s
    longest, since = max(gaps)
    assert since == 85.0 and longest == 45.0  # last ping at 85 s (grace ends at 90 s), the next at 130 s
    assert since + 10.0 - 60.0 <= 40.0  # systemd's watchdog fires at 95 s: 35 s after the unplug
    assert statuses[0] == (0.0, "table main-1: reader main up; broker connected; hand 7")
    assert (20.0, "table main-1: reader main down for 0 s (grace 30 s); broker connected; hand 7") in statuses
    assert any(text.startswith("table main-1: reader main DOWN for 30 s: watchdog stopped") for t, text in statuses
               if t == 90.0)
    assert all(b - a >= systemd.STATUS_MIN_INTERVAL_S for (a, _), (b, _) in zip(statuses, statuses[1:]))
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == ["reader link(s) main down for 30 s or more: no more watchdog pings, systemd will restart "
                        "the daemon"]
    assert "reader links recovered: watchdog pings resume" in caplog.text


def test_the_monitor_status_says_when_the_broker_is_away(notify_socket):
    monitor = systemd.ServiceMonitor("t1", watchdog=systemd.Watchdog(environ={}))
    assert monitor.loop(0.0, {"main": True}, broker_connected=False)
    assert notify_socket.drain() == ["STATUS=table t1: reader main up; broker NOT connected (journaling, will resend)"]
    assert monitor.loop(0.5, {"main": True}, broker_connected=True)  # changed, but within a second of the last
    assert notify_socket.drain() == []
    assert monitor.loop(1.0, {"main": True}, broker_connected=True)
    assert notify_socket.drain() == ["STATUS=table t1: reader main up; broker connected"]
    assert monitor.loop(5.0, {"main": True}, broker_connected=True)  # unchanged: nothing sent
    assert notify_socket.drain() == []


# ---------------------------------------------------------------------------------------------------------------
# the unit
# ---------------------------------------------------------------------------------------------------------------


def unit_settings(text: str) -> dict[str, dict[str, list[str]]]:
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, sep, value = line.partition("=")
        assert sep and not line.endswith("\\"), f"not a KEY=VALUE line: {raw!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def test_the_unit_has_the_settings_the_daemon_relies_on():
    unit = unit_settings(UNIT_FILE.read_text())
    s = {key: values[-1] for key, values in unit["Service"].items()}
    assert s["Type"] == "notify" and s["NotifyAccess"] == "main"
    assert s["ExecStart"] == "/opt/rfid-table/.venv/bin/rfid-table run --config /etc/rfid-table/%i.toml"
    assert s["WatchdogSec"] == "10" and s["WatchdogSignal"] == "SIGTERM"
    assert s["Restart"] == "on-failure" and s["RestartSec"] == "2"
    # The exit statuses that need a human are the ones the code uses.
    assert set(s["RestartPreventExitStatus"].split()) == {str(EX_CONFIG), str(run.EX_JOURNAL),
                                                          str(run.EX_JOURNAL_DISK)} == {"78", "65", "74"}
    # RestartPreventExitStatus= ignores ExecStartPre= (systemd #11868): "run" checks the configuration itself.
    assert "ExecStartPre" not in unit["Service"]
    assert s["KillSignal"] == "SIGTERM" and s["TimeoutStopSec"] == "15"
    publisher_wait = inspect.signature(MqttPublisher.stop).parameters["timeout_s"].default
    assert publisher_wait + 5 <= float(s["TimeoutStopSec"])  # the offline message has time to go out
    assert s["User"] == s["Group"] == "rfid-table"
    assert set(s["SupplementaryGroups"].split()) == {"dialout", "gpio", "i2c", "plugdev"}
    assert s["StateDirectory"] == "rfid-table" and s["WorkingDirectory"] == "/var/lib/rfid-table"
    assert load_config(TABLE_10).journal_path.startswith("/var/lib/rfid-table/")
    assert "PrivateDevices" not in s and s["DevicePolicy"] == "closed"
    assert set(unit["Service"]["DeviceAllow"]) == {"char-ttyACM rw", "char-ttyUSB rw", "char-ttyAMA rw",
                                                    "char-usb_device rw", "char-gpiochip rw", "char-*gpiomem* rw",
                                                    "char-i2c rw"}
    for key in ("ProtectHome", "PrivateTmp", "NoNewPrivileges", "ProtectKernelTunables", "ProtectKernelModules",
                "ProtectControlGroups", "RestrictRealtime", "LockPersonality", "MemoryDenyWriteExecute"):
        assert s[key] == "yes", key
    assert s["ProtectSystem"] == "strict"
    assert s["RestrictAddressFamilies"].split() == ["AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"]
    assert unit["Service"]["SystemCallFilter"] == ["@system-service", "~@privileged"]
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]
    # The watchdog interval, the grace period and the stop timeout fit together.
    assert systemd.Watchdog(environ={"WATCHDOG_USEC": str(int(s["WatchdogSec"]) * 1_000_000)}).interval_s == 5.0
    assert systemd.LINK_GRACE_S > float(s["WatchdogSec"])


def analyze_root(tmp_path: Path) -> Path:
    """A file system root for systemd-analyze --root: the host's own units, this unit in /etc, and a stand-in
    for the installed command (verify checks that ExecStart= is executable)."""
    root = tmp_path / "root"
    shutil.copytree("/usr/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    shutil.copy(UNIT_FILE, root / "etc/systemd/system" / UNIT_FILE.name)
    command = root / "opt/rfid-table/.venv/bin/rfid-table"
    command.parent.mkdir(parents=True)
    command.write_text("#!/bin/sh\n")
    command.chmod(0o755)
    return root


needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None or
                                   not Path("/usr/lib/systemd/system/sysinit.target").exists(),
                                   reason="systemd-analyze and the systemd units are not installed")


@needs_analyze
def test_systemd_analyze_verify_accepts_the_unit_without_a_single_warning(tmp_path):
    root = analyze_root(tmp_path)
    result = subprocess.run(["systemd-analyze", "verify", f"--root={root}", "--man=no", "rfid-table@main-1.service"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "" and result.stdout == "", result.stderr + result.stdout

    # ... and it does see mistakes (an unknown key, bad device rights): not a verifier that passes anything.
    broken = root / "etc/systemd/system" / UNIT_FILE.name
    broken.write_text(UNIT_FILE.read_text().replace("LockPersonality=yes", "LockPersonality=yes\nLockPersonalty=yes\n"
                                                    "DeviceAllow=char-ttyACM rwz"))
    result = subprocess.run(["systemd-analyze", "verify", f"--root={root}", "--man=no", "rfid-table@main-1.service"],
                            capture_output=True, text=True, timeout=60)
    assert "Unknown key 'LockPersonalty'" in result.stderr and "Invalid device rights 'rwz'" in result.stderr


@needs_analyze
def test_the_offline_security_review_rates_the_unit_ok(tmp_path):
    root = analyze_root(tmp_path)
    result = subprocess.run(["systemd-analyze", "security", "--offline=true", f"--root={root}", "--no-pager",
                             "rfid-table@main-1.service"], capture_output=True, text=True, timeout=60)
    if "Unknown option" in result.stderr or "unrecognized option" in result.stderr:
        pytest.skip("this systemd-analyze has no offline security review (systemd < 250)")
    match = re.search(r"Overall exposure level for rfid-table@main-1\.service: (\d+\.\d)", result.stdout)
    assert match, result.stdout[-2000:] + result.stderr
    assert float(match.group(1)) <= 2.0, result.stdout  # 1.6 when written; "OK" ends at 4.9, "MEDIUM" at 6.9


# ---------------------------------------------------------------------------------------------------------------
# the udev rules
# ---------------------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*([A-Z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_MATCH_KEYS = {"ACTION", "DEVPATH", "KERNEL", "KERNELS", "NAME", "SYMLINK", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER",
               "DRIVERS", "ATTR", "ATTRS", "SYSCTL", "ENV", "CONST", "TAG", "TAGS", "TEST", "PROGRAM", "RESULT"}
_ASSIGN_KEYS = {"NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV", "TAG", "RUN",
                "LABEL", "GOTO", "IMPORT", "OPTIONS"}
_NEED_ATTRIBUTE = {"ATTR", "ATTRS", "ENV", "SYSCTL", "CONST", "SECLABEL", "IMPORT"}


def parse_rules(text: str) -> list[list[tuple[str, str | None, str, str]]]:
    """Each rule as its (key, attribute, operator, value) tokens; fails on anything udev would reject."""
    rules = []
    logical = text.replace("\\\n", "")
    for number, line in enumerate(logical.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        tokens, pos = [], 0
        while pos < len(line):
            m = _TOKEN.match(line, pos)
            assert m, f"line {number}: cannot parse {line[pos:]!r}"
            key, attribute, op, value, _ = m.groups()
            if op in ("==", "!="):
                assert key in _MATCH_KEYS, f"line {number}: {key} cannot be matched"
            else:
                assert key in _ASSIGN_KEYS, f"line {number}: {key} cannot be assigned"
                assert op == "=" or key not in ("LABEL", "GOTO", "OWNER", "GROUP", "MODE"), f"line {number}: {key}{op}"
            assert (attribute is not None) == (key in _NEED_ATTRIBUTE) or key in ("TEST", "RUN"), \
                f"line {number}: {key} and an attribute"
            tokens.append((key, attribute, op, value))
            pos = m.end()
        rules.append(tokens)
    labels = {v for rule in rules for k, _, _, v in rule if k == "LABEL"}
    assert {v for rule in rules for k, _, _, v in rule if k == "GOTO"} <= labels
    return rules


def test_the_rules_name_the_reader_open_it_to_dialout_and_tell_systemd():
    rules = parse_rules(RULES_FILE.read_text())
    readers = [dict(((k, a), (op, v)) for k, a, op, v in rule) for rule in rules
               if any(k in ("ATTR", "ATTRS") and a == "idVendor" for k, a, _, _ in rule)]
    assert len(readers) == 3
    for rule in readers:
        key = "ATTR" if rule[("SUBSYSTEM", None)] == ("==", "usb") else "ATTRS"
        assert rule[(key, "idVendor")] == ("==", "1209") and rule[(key, "idProduct")] == ("==", "0001")
    tty_link, tty, usb = readers
    assert tty_link[("SUBSYSTEM", None)] == ("==", "tty")
    assert tty_link[("SYMLINK", None)] == ("+=", "rfid-reader-%s{serial}")
    assert tty_link[("ATTRS", "serial")] == ("==", "?*")  # no serial number: no link with an empty name
    assert tty_link[("OPTIONS", None)] == ("+=", "string_escape=replace")
    for rule in (tty, usb):
        assert rule[("GROUP", None)] == ("=", "dialout") and rule[("MODE", None)] == ("=", "0660")
        assert rule[("TAG", None)] == ("+=", "systemd")
        assert rule[("ENV", "RFID_TABLE_READER")] == ("=", "1")
    assert usb[("SUBSYSTEM", None)] == ("==", "usb") and usb[("ENV", "DEVTYPE")] == ("==", "usb_device")
    assert rules[0] == [("ACTION", None, "==", "remove"), ("GOTO", None, "=", "rfid_table_end")]


def udevadm_test(rules_dir: Path) -> str:
    """udevadm test with ``rules_dir`` as /etc/udev/rules.d, in a private mount namespace (nothing changes outside
    it); returns its output. The device is a pty master: what is checked is how the files parse."""
    script = (f"mount --bind {rules_dir} /etc/udev/rules.d && mount -t tmpfs tmpfs /run && "
              "udevadm test --action=add /devices/virtual/tty/ptmx")
    result = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    return result.stdout + result.stderr


def _udevadm_usable() -> str | None:
    if shutil.which("udevadm") is None or shutil.which("unshare") is None:
        return "udevadm (package udev) or unshare is not installed"
    if not Path("/sys/devices/virtual/tty/ptmx").exists() or not Path("/etc/udev/rules.d").is_dir():
        return "no /sys/devices/virtual/tty/ptmx or /etc/udev/rules.d here"
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        return "no private mount namespace here (needs root with CAP_SYS_ADMIN)"
    return None


@pytest.mark.skipif(_udevadm_usable() is not None, reason=str(_udevadm_usable()))
def test_udevadm_parses_the_rules_and_the_per_table_rule_without_complaint(tmp_path, install_root):
    rules_dir = install_root / "etc/udev/rules.d"
    output = udevadm_test(rules_dir)
    for name in ("99-rfid-table.rules", "99-rfid-table@main-1.rules"):
        assert f"Reading rules file: /etc/udev/rules.d/{name}" in output, output[-3000:]
    complaints = [line for line in output.splitlines() if line.startswith("/etc/udev/rules.d/99-rfid-table")]
    assert complaints == []
    # The per-table rule is read after the generic one, which sets RFID_TABLE_READER.
    order = re.findall(r"Reading rules file: /etc/udev/rules\.d/(99-rfid-table\S*)", output)
    assert order == ["99-rfid-table.rules", "99-rfid-table@main-1.rules"]

    # ... and udevadm does report a broken line, so the silence above means something.
    (rules_dir / "98-broken.rules").write_text('SUBSYSTEM=="tty", ATTRS{idVendor}="1209", GOTO="nowhere"\n')
    assert "/etc/udev/rules.d/98-broken.rules:1" in udevadm_test(rules_dir)  # "Invalid operator for ATTRS"


def _udevadm_verify_usable() -> bool:
    if shutil.which("udevadm") is None:
        return False
    return subprocess.run(["udevadm", "verify", "--help"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _udevadm_verify_usable(), reason="no 'udevadm verify' (systemd 254 or newer; Bookworm has 252)")
def test_udevadm_verify_accepts_the_rules(install_root):
    files = [str(p) for p in sorted((install_root / "etc/udev/rules.d").glob("*.rules"))] + [str(RULES_FILE)]
    result = subprocess.run(["udevadm", "verify", "--resolve-names=never", *files], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------------------------------------------------------
# scripts/install-pi (with --dry-run and --root only: nothing is installed on this machine)
# ---------------------------------------------------------------------------------------------------------------


def hardware_config(tmp_path: Path, name: str = "main-1.toml", table_id: str = "main-1", **replace: str) -> Path:
    text = TABLE_10.read_text().replace('backend = "sim"', 'backend = "serial"\nport = "/dev/rfid-reader-EMU-0001"')
    text = text.replace('id = "main-1"', f'id = "{table_id}"').replace("/main-1.journal", f"/{table_id}.journal")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def install(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["bash", str(INSTALL), "--python", sys.executable, *args], capture_output=True,
                            text=True, timeout=120)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture
def install_root(tmp_path):
    root = tmp_path / "stage"
    install("--root", str(root), "--config", str(hardware_config(tmp_path)), "--usb-id", "CAFE:BEEF",
            "--reader-serial", "EMU-0001")
    return root


SYSTEM_PATHS = ("/etc/systemd/system/rfid-table@.service", "/etc/udev/rules.d/99-rfid-table.rules",
                "/etc/udev/rules.d/99-rfid-table@main-1.rules", "/etc/rfid-table", "/opt/rfid-table")


def test_install_pi_dry_run_prints_every_step_and_changes_nothing(tmp_path):
    config = hardware_config(tmp_path)
    before = {path: Path(path).exists() and os.stat(path).st_mtime_ns for path in SYSTEM_PATHS}
    result = install("--dry-run", "--config", str(config), "--usb-id", "cafe:beef")
    out = result.stdout
    for step in ("would write: /etc/rfid-table/main-1.toml (mode 0640, group rfid-table)",
                 "would write: /etc/systemd/system/rfid-table@.service (mode 0644, group root)",
                 "would write: /etc/udev/rules.d/99-rfid-table.rules",
                 "would write: /etc/udev/rules.d/99-rfid-table@main-1.rules",
                 "would copy: ", "-m pip install",
                 "would run: systemctl daemon-reload", "would run: udevadm control --reload",
                 "would run: systemctl enable rfid-table@main-1.service",
                 "would run: systemctl restart rfid-table@main-1.service"):
        assert step in out, step
    if subprocess.run(["getent", "passwd", "rfid-table"], capture_output=True).returncode != 0:
        assert "would run: useradd --system --user-group" in out
    assert "OK — table 'main-1'" in result.stderr  # check-config ran first
    assert {path: Path(path).exists() and os.stat(path).st_mtime_ns for path in SYSTEM_PATHS} == before


def test_install_pi_says_what_a_table_of_readers_one_buys_needs(tmp_path):
    """A Metratec table: the cards reader on USB serial needs its chip's USB id for the udev rule (the reference
    reader's id would never match it); the chips reader is on the network and needs none."""
    text = (ROOT / "config" / "table-metratec.toml").read_text()
    shutil.copy(ROOT / "config" / "chips-demo.toml", tmp_path)  # its chip registry, beside it
    config = tmp_path / "metratec-1.toml"
    config.write_text(text)
    result = install("--dry-run", "--config", str(config))
    assert "reader(s) cards:metratec (NAME:maker) reach the Pi through a USB chip of their own" in result.stderr
    config.write_text(text.replace('port = "/dev/serial/by-id/usb-metratec_QuasarMX-if00-port0"', 'host = "10.0.0.20"'))
    result = install("--dry-run", "--config", str(config))
    assert "USB chip" not in result.stderr and "reader(s) cards, chips on the network" in result.stderr


@pytest.mark.parametrize("problem, status, message", [
    ({"seats = 10": "seats = 10\ncolour = \"red\""}, EX_CONFIG, "colour: unknown key"),
    ({"/var/lib/rfid-table/main-1.journal": "/home/pi/main-1.journal"}, EX_CONFIG, "must be in /var/lib/rfid-table/"),
    ({'backend = "serial"\nport = "/dev/rfid-reader-EMU-0001"': 'backend = "sim"'}, EX_CONFIG, "simulated backend"),
])
def test_install_pi_stops_on_a_configuration_the_daemon_would_refuse(tmp_path, problem, status, message):
    config = hardware_config(tmp_path)
    text = config.read_text()
    for old, new in problem.items():
        text = text.replace(old, new)
    config.write_text(text)
    root = tmp_path / "stage"
    result = install("--root", str(root), "--config", str(config), check=False)
    assert result.returncode == status, result.stdout + result.stderr
    assert message in result.stderr
    assert not root.exists()  # nothing was written


def test_install_pi_writes_the_files_with_their_modes(tmp_path, install_root):
    root = install_root
    config = root / "etc/rfid-table/main-1.toml"
    assert config.read_text() == hardware_config(tmp_path).read_text()
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    assert stat.S_IMODE((root / "etc/rfid-table").stat().st_mode) == 0o750
    unit = root / "etc/systemd/system/rfid-table@.service"
    assert unit.read_text() == UNIT_FILE.read_text() and stat.S_IMODE(unit.stat().st_mode) == 0o644

    rules = (root / "etc/udev/rules.d/99-rfid-table.rules").read_text()
    matches = [(k, a, v) for rule in parse_rules(rules) for k, a, op, v in rule if a in ("idVendor", "idProduct")]
    assert {v for k, a, v in matches if a == "idVendor"} == {"cafe"}  # lower case, as sysfs writes them
    assert {v for k, a, v in matches if a == "idProduct"} == {"beef"}
    wants = parse_rules((root / "etc/udev/rules.d/99-rfid-table@main-1.rules").read_text())
    assert wants == [[("ACTION", None, "!=", "remove"), ("ENV", "RFID_TABLE_READER", "==", "1"),
                      ("ATTRS", "serial", "==", "EMU-0001"),
                      ("ENV", "SYSTEMD_WANTS", "+=", "rfid-table@main-1.service")]]

    opt = root / "opt/rfid-table"
    for name in ("pyproject.toml", "rfid_table/service/systemd.py", "systemd/rfid-table@.service", "docs/service.md"):
        assert (opt / name).is_file(), name
    assert not (opt / ".git").exists() and not (opt / ".venv").exists()
    assert not list(opt.rglob("__pycache__"))


def test_install_pi_twice_changes_nothing_and_prints_the_system_steps_it_skipped(tmp_path, install_root):
    result = install("--root", str(install_root), "--config", str(hardware_config(tmp_path)), "--usb-id",
                     "CAFE:BEEF", "--reader-serial", "EMU-0001")
    for path in ("etc/rfid-table/main-1.toml", "etc/systemd/system/rfid-table@.service",
                 "etc/udev/rules.d/99-rfid-table.rules", "etc/udev/rules.d/99-rfid-table@main-1.rules"):
        assert f"unchanged: {install_root / path}" in result.stdout
    assert "wrote:" not in result.stdout and not list((install_root / "etc/rfid-table").glob("*.bak-*"))
    for step in ("-m venv", "-m pip install", "systemctl daemon-reload", "udevadm control --reload",
                 "systemctl enable rfid-table@main-1.service"):
        assert any(line.startswith("skipped (--root): ") and step in line for line in result.stdout.splitlines()), step


def test_install_pi_takes_the_usb_id_from_a_usb_reader_and_backs_up_a_changed_configuration(tmp_path):
    root = tmp_path / "stage"
    serial = 'backend = "serial"\nport = "/dev/rfid-reader-EMU-0001"'
    first = hardware_config(tmp_path, **{serial: 'backend = "usb"\nvendor_id = 0x1209\nproduct_id = 0xA1B2'})
    result = install("--root", str(root), "--config", str(first))
    assert "keeps 1209:0001" not in result.stderr
    rules = (root / "etc/udev/rules.d/99-rfid-table.rules").read_text()
    assert 'ATTR{idVendor}=="1209", ATTR{idProduct}=="a1b2"' in rules
    wants = (root / "etc/udev/rules.d/99-rfid-table@main-1.rules").read_text()
    assert 'ENV{RFID_TABLE_READER}=="1", ENV{SYSTEMD_WANTS}+="rfid-table@main-1.service"' in wants  # any reader

    second = hardware_config(tmp_path, "changed.toml", **{"small_blind = 50": "small_blind = 25"})
    result = install("--root", str(root), "--config", str(second))
    assert "keeps 1209:0001, the id of the" in result.stderr  # a serial reader: the reference firmware's ids
    assert (root / "etc/rfid-table/main-1.toml").read_text() == second.read_text()
    backups = list((root / "etc/rfid-table").glob("main-1.toml.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == first.read_text()


def test_install_pi_uninstall_keeps_the_journals_unless_purged_and_spares_the_other_tables(tmp_path):
    root = tmp_path / "stage"
    install("--root", str(root), "--config", str(hardware_config(tmp_path)), "--usb-id", "cafe:beef")
    install("--root", str(root), "--config", str(hardware_config(tmp_path, "t2.toml", "side-2")), "--usb-id",
            "cafe:beef")
    (root / "var/lib/rfid-table").mkdir(parents=True)
    (root / "var/lib/rfid-table/main-1.journal").write_text("hands")
    rules = root / "etc/udev/rules.d"

    result = install("--root", str(root), "--uninstall", "--table", "main-1", "--dry-run")
    assert "would run: systemctl disable --now rfid-table@main-1.service" in result.stdout
    assert (rules / "99-rfid-table@main-1.rules").exists()  # a dry run

    result = install("--root", str(root), "--uninstall", "--table", "main-1")
    assert "skipped (--root): systemctl disable --now rfid-table@main-1.service" in result.stdout
    assert not (rules / "99-rfid-table@main-1.rules").exists() and (rules / "99-rfid-table@side-2.rules").exists()
    assert (rules / "99-rfid-table.rules").exists() and (root / "opt/rfid-table").exists()
    assert "still installed: table(s) side-2" in result.stderr

    install("--root", str(root), "--uninstall")
    assert not (rules / "99-rfid-table@side-2.rules").exists() and not (rules / "99-rfid-table.rules").exists()
    assert not (root / "etc/systemd/system/rfid-table@.service").exists() and not (root / "opt/rfid-table").exists()
    assert (root / "var/lib/rfid-table/main-1.journal").read_text() == "hands"  # the journals stay
    assert (root / "etc/rfid-table/main-1.toml").exists()

    result = install("--root", str(root), "--uninstall", "--purge")
    assert not (root / "var/lib/rfid-table").exists() and not (root / "etc/rfid-table").exists()
    assert "skipped (--root): userdel rfid-table" in result.stdout


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_install_pi_passes_shellcheck():
    result = subprocess.run(["shellcheck", str(INSTALL)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout


# ---------------------------------------------------------------------------------------------------------------
# the daemon under the unit's sandbox
# ---------------------------------------------------------------------------------------------------------------

# Run in a fresh interpreter that then execs the daemon: what systemd does between fork and exec for
# SystemCallFilter=@system-service ~@privileged, SystemCallErrorNumber=EPERM, MemoryDenyWriteExecute=yes and
# RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK, with libseccomp, as systemd does. Filters stack;
# the kernel takes the strictest answer. The allow list is loaded last, since it does not allow seccomp().
SANDBOX = r"""
import ctypes, errno, json, os, sys

allowed, argv = json.loads(sys.argv[1]), sys.argv[2:]
lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)

class Cmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]

lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                       ctypes.POINTER(Cmp)]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
ALLOW, ERRNO = 0x7FFF0000, lambda e: 0x00050000 | e
EQ, MASKED_EQ = 4, 7
PROT_WRITE, PROT_EXEC, SHM_EXEC = 2, 4, 0o100000

def nr(name):
    n = lib.seccomp_syscall_resolve_name(name.encode())
    return n if n >= 0 else None

def rule(ctx, action, name, *cmps):
    n = nr(name)
    if n is not None:
        array = (Cmp * max(len(cmps), 1))(*[Cmp(*c) for c in cmps])
        assert lib.seccomp_rule_add_array(ctx, action, n, len(cmps), array) == 0, name

mdwe = lib.seccomp_init(ALLOW)
for name in ("mmap", "mmap2"):
    rule(mdwe, ERRNO(errno.EPERM), name, (2, MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC))
for name in ("mprotect", "pkey_mprotect"):
    rule(mdwe, ERRNO(errno.EPERM), name, (2, MASKED_EQ, PROT_EXEC, PROT_EXEC))
rule(mdwe, ERRNO(errno.EPERM), "shmat", (2, MASKED_EQ, SHM_EXEC, SHM_EXEC))
families = lib.seccomp_init(ALLOW)
for family in range(0, 46):
    if family not in (1, 2, 10, 16):  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
        rule(families, ERRNO(errno.EAFNOSUPPORT), "socket", (0, EQ, family, 0))
filter_ = lib.seccomp_init(ERRNO(errno.EPERM))
for name in allowed:
    rule(filter_, ALLOW, name)
for ctx in (mdwe, families, filter_):
    assert lib.seccomp_load(ctx) == 0
os.execv(argv[0], argv)
"""


def allowed_syscalls() -> list[str]:
    """@system-service less @privileged, expanded with systemd-analyze (the groups of the systemd installed)."""
    def expand(group: str, seen: set[str]) -> set[str]:
        out = subprocess.run(["systemd-analyze", "syscall-filter", group], capture_output=True, text=True,
                             check=True).stdout
        names: set[str] = set()
        for line in out.splitlines()[1:]:
            item = line.strip()
            if not item or item.startswith("#"):
                continue
            if item.startswith("@"):
                if item not in seen:
                    seen.add(item)
                    names |= expand(item, seen)
            else:
                names.add(item)
        return names

    return sorted(expand("@system-service", set()) - expand("@privileged", set()))


def sandboxed(argv: list[str]) -> list[str]:
    return [sys.executable, "-c", SANDBOX, json.dumps(allowed_syscalls()), *argv]


def _sandbox_usable() -> str | None:
    if shutil.which("systemd-analyze") is None:
        return "systemd-analyze is not installed (it names the system calls of @system-service)"
    if ctypes.util.find_library("seccomp") is None:
        return "libseccomp is not installed"
    return None


@pytest.mark.skipif(_sandbox_usable() is not None, reason=str(_sandbox_usable()))
def test_the_sandbox_refuses_what_the_unit_refuses():
    """The emulation is not a no-op: the refused things fail, with the errors systemd would give."""
    probe = r"""
import ctypes, errno, mmap, socket
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    print("packet socket: allowed")
except OSError as exc:
    print("packet socket:", errno.errorcode[exc.errno])
try:
    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    print("wx mapping: allowed")
except OSError as exc:
    print("wx mapping:", errno.errorcode[exc.errno])
libc = ctypes.CDLL(None, use_errno=True)
print("sethostname:", libc.sethostname(b"x", 1), errno.errorcode[ctypes.get_errno()])
print("ctypes callback:", ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 7)())
socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15).close()
print("netlink: allowed")
"""
    result = subprocess.run(sandboxed([sys.executable, "-c", probe]), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["packet socket: EAFNOSUPPORT", "wx mapping: EPERM", "sethostname: -1 EPERM",
                                          "ctypes callback: 7", "netlink: allowed"]


@pytest.fixture
def serial_reader(tmp_path):
    from sim.field import TableField
    from sim.firmware import FirmwareEmulator

    config = load_config(TABLE_6)
    field = TableField(config.zones)
    emulator = FirmwareEmulator(field, reader="main", antenna_count=12, cycle_s=0.05,
                                link_path=tmp_path / "reader-main")
    emulator.start()
    text = TABLE_6.read_text().replace('backend = "sim"', f'backend = "serial"\nport = "{emulator.path}"')
    text = text.replace('path = "/var/lib/rfid-table/sixmax-1.journal"', f'path = "{tmp_path / "journal.db"}"')
    table_file = tmp_path / "table.toml"
    table_file.write_text(text)
    yield field, emulator, {card: uid for uid, card in config.decks["A"].items()}, table_file
    emulator.close()


@pytest.mark.skipif(_sandbox_usable() is not None, reason=str(_sandbox_usable()))
def test_the_daemon_runs_reads_and_stops_cleanly_under_the_units_sandbox(serial_reader, broker, recorder_factory):
    field, _emulator, uid, table_file = serial_reader
    recorder = recorder_factory("rfid-table/sixmax-1/#")
    daemon = subprocess.Popen(sandboxed(RFID_TABLE + ["run", "--config", str(table_file), "--host", broker.host,
                                                      "--port", str(broker.port)]),
                              stderr=subprocess.PIPE, text=True)
    try:
        assert recorder.wait_for(lambda m: any(t.endswith("/status") and p == b"online" for t, p, _ in m), 20)
        field.place(uid["As"], "seat1.cards")
        field.place(uid["Kd"], "seat2.cards")
        assert recorder.wait_for(lambda m: sum(1 for e in recorder.json("/secure/events")
                                               if e["type"] == "card_dealt") == 2, 15)
        daemon.send_signal(signal.SIGTERM)
        _, errors = daemon.communicate(timeout=20)
        assert daemon.returncode == 0, errors
        assert "Operation not permitted" not in errors and "Traceback" not in errors, errors
        assert recorder.wait_for(lambda m: [p for t, p, _ in m if t.endswith("/status")][-1] == b"offline")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)


# ---------------------------------------------------------------------------------------------------------------
# the real daemon talking to "systemd" (once rfid-table run uses rfid_table.service.systemd: see docs/service.md)
# ---------------------------------------------------------------------------------------------------------------

INTEGRATED = "systemd." in inspect.getsource(run.run_table)


@pytest.mark.skipif(not INTEGRATED, reason="rfid-table run does not call rfid_table.service.systemd yet "
                                           "(the lines to add are in docs/service.md)")
def test_the_daemon_notifies_ready_pings_the_watchdog_starves_it_on_a_dead_link_and_says_stopping(
        serial_reader, broker, recorder_factory, notify_socket):
    _field, emulator, _uid, table_file = serial_reader
    recorder = recorder_factory("rfid-table/sixmax-1/status")
    env = dict(os.environ, WATCHDOG_USEC="2000000", RFID_TABLE_LINK_GRACE_S="1")  # pings every second
    daemon = subprocess.Popen(RFID_TABLE + ["run", "--config", str(table_file), "--host", broker.host, "--port",
                                            str(broker.port)], env=env)
    received: list[tuple[float, str]] = []

    def wait_for(predicate, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                received.append((time.monotonic(), notify_socket.recv(timeout_s=0.2)))
            except (TimeoutError, socket.timeout):
                pass
            if predicate([m for _, m in received]):
                return True
        return False

    try:
        assert wait_for(lambda ms: any(m.startswith("READY=1") for m in ms), 20), received
        assert recorder.wait_for(lambda m: m and m[-1][1] == b"online", 10)
        assert wait_for(lambda ms: ms.count("WATCHDOG=1") >= 3, 10), received
        assert wait_for(lambda ms: any("reader main up" in m for m in ms), 5), received

        emulator.unplug()  # the link goes down; 1 s of grace; then no more pings
        assert wait_for(lambda ms: any("reader main DOWN" in m for m in ms), 15), received
        starved_at = time.monotonic()
        wait_for(lambda ms: False, 3)
        assert not [m for t, m in received if m == "WATCHDOG=1" and t > starved_at + 0.5], received

        emulator.replug()
        recovered = len(received)
        assert wait_for(lambda ms: "WATCHDOG=1" in ms[recovered:], 40), received  # the link's backoff ≤ 30 s

        daemon.send_signal(signal.SIGTERM)
        assert wait_for(lambda ms: any(m.startswith("STOPPING=1") for m in ms), 10), received
        assert daemon.wait(20) == 0
        assert recorder.wait_for(lambda m: m[-1][1] == b"offline", 10)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)
