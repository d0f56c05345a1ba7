"""The demo as a newcomer runs it: what it installs, the dealer's errors and the floor's answers it shows, its own
log file, nothing it listens on reachable from the network, and nothing left running or in /tmp however it ends."""

import fcntl
import ipaddress
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from rfid_table.config.table import MqttSettings
from rfid_table.mqtt import make_client
from test_end_to_end import rfid_table_command
from test_watch import CHIP_TABLE, Frames, fresh_chip_table, run  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[1]
TEST_ONLY_PACKAGES = ("shellcheck", "udev", "systemd", "openssl")


def stubbed_checkout(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A copy of the scripts on a machine that lacks the test tools: apt-get, pip and rfid-table only record what
    they are asked to do."""
    repo, tools, record = tmp_path / "repo", tmp_path / "bin", tmp_path / "asked"
    (repo / "scripts").mkdir(parents=True)
    for script in ("bootstrap", "demo", "test"):
        shutil.copy(ROOT / "scripts" / script, repo / "scripts" / script)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    tools.mkdir()
    for path, name in ((tools / "apt-get", "apt-get"), (venv / "python", "python"),
                       (venv / "rfid-table", "rfid-table")):
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> {record}\n')
        path.chmod(0o755)
    for tool in ("bash", "python3", "sha1sum", "cut", "rm", "touch", "id", "dirname", "env", "cat"):
        # the system's tools, and nothing else: no shellcheck, udevadm, systemd-analyze
        os.symlink(shutil.which(tool, path="/usr/bin:/bin"), tools / tool)
    return repo, record, {"PATH": str(tools), "HOME": str(tmp_path)}


def test_the_demo_installs_only_what_it_needs_and_the_tests_install_everything(tmp_path):
    repo, record, env = stubbed_checkout(tmp_path)
    done = subprocess.run([str(repo / "scripts" / "demo"), "--hands", "1"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    asked = record.read_text()
    assert not any(package in asked for package in TEST_ONLY_PACKAGES), asked
    assert "python -m pip install -q -e .\n" in asked and "[test]" not in asked
    assert "rfid-table demo --hands 1" in asked
    record.unlink()
    done = subprocess.run([str(repo / "scripts" / "bootstrap")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    asked = record.read_text()
    assert all(f" {package}" in asked for package in ("shellcheck", "udev", "systemd")), asked
    assert "python -m pip install -q -e .[test]" in asked


def test_the_first_run_says_what_it_installs_and_shows_pip_only_when_pip_fails(tmp_path):
    """pip passes a build's notes on even with -q (setuptools' on editable installs): the first line of the demo
    must not come after a page of them. They are shown when the install fails, with the failure."""
    repo, record, env = stubbed_checkout(tmp_path)
    python = repo / ".venv" / "bin" / "python"
    noise = "BuildBackendWarning: Editable installation."
    python.write_text(f'#!/bin/sh\necho "python $*" >> {record}\n'
                      f'case "$*" in *" -e "*) echo "{noise}" >&2; [ -f {tmp_path}/fail ] && exit 1;; esac\nexit 0\n')
    done = subprocess.run([str(repo / "scripts" / "demo"), "--hands", "1"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "bootstrap: installing the project into .venv ...\n", done.stderr
    assert "rfid-table demo --hands 1" in record.read_text()
    (tmp_path / "fail").touch()
    for installed in (repo / ".venv").glob(".installed-*"):
        installed.unlink()
    done = subprocess.run([str(repo / "scripts" / "bootstrap"), "--runtime"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert noise in done.stderr and "bootstrap: installing into .venv failed (pip's output above" in done.stderr


def test_the_simulated_dealer_errs_at_the_rate_asked_and_the_floor_answers(fresh_chip_table):
    """`sim --dealer-errors` on the demo's chip table: the live view shows the misdeal, the exposed card, and the
    simulated floor's answer to what waited for it."""
    broker = fresh_chip_table
    port = ["--host", broker.host, "--port", broker.port]
    watcher = Frames(["watch", "--config", CHIP_TABLE, *port, "--plain", "--exit-after-hands", "12", "--timeout",
                      "120"])
    watcher.wait_for(lambda f: "waiting for the table" in f)
    # twenty times real time: the view draws every event, as it does at the demo's pace
    sim = run("sim", "--config", CHIP_TABLE, *port, "--hands", "10", "--seed", "5", "--speed", "20",
              "--link", "direct", "--dealer-errors", "0.5", "--floor-answers", "2", "--absences-per-hand", "0.2")
    assert sim.returncode == 0, sim.stderr
    assert watcher.proc.wait(120) == 0, watcher.proc.stderr.read()
    seen = "\n".join(watcher.frames)
    assert re.search(r"IRREGULARITY first cards exposed \(stop\): misdeal", seen)
    assert re.search(r"MISDEAL \(first cards exposed\): deal again, the button stays on seat \d+", seen)
    assert re.search(r"IRREGULARITY hole card exposed \(warning\): burn card", seen)
    assert re.search(r"FLOOR (confirmed|overridden) .* \(#\d+\)", seen)
    assert "bet ruling" not in seen and "chip count" not in seen  # the table read every hand dealt again


def test_the_demo_has_help_for_its_options_and_a_log_of_its_own(demo_run):
    help_text = " ".join(run("demo", "--help").stdout.split())
    assert "--seed SEED random seed of the simulated table" in help_text
    assert "--dealer-errors P chance per deal that the simulated dealer makes a dealing error (default 0.2)" \
        in help_text
    demos = [demo_run("--hands", "1", "--speed", "0", "--seed", str(seed)) for seed in (1, 2)]
    logs = []
    for demo in demos:
        assert demo.proc.wait(120) == 0, demo.err.decode()
        logs.append(Path(re.search(r"simulated table log: (\S+)", demo.text()).group(1)))
        # the hands played, it stopped what it started: of its temporary files only the log stays
        assert demo.left_in_tmp() == [logs[-1].name]
    assert logs[0] != logs[1]
    for log in logs:
        assert re.search(r"done: \d+ hands", log.read_text())  # a misdeal makes a deal of its own


# ---- what the demo leaves behind: nothing on the network, nothing running, nothing in /tmp but its log --------------

DEMO_TABLE_STATUS = "rfid-table/main-2/status"  # config/table-chips.toml, the demo's table


def process_table() -> dict[int, tuple[int, str]]:
    """Every process: pid → (parent pid, start time); the start time tells a process from a later one with its pid."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        table[int(entry.name)] = (int(fields[1]), fields[19])
    return table


def descendants(pid: int) -> dict[int, str]:
    """The processes below ``pid``: pid → start time."""
    table = process_table()
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, started) in table.items():
            if ppid == parent and child not in found:
                found[child] = started
                todo.append(child)
    return found


def alive(pid: int, started: str) -> bool:
    """The process ``pid`` that started at ``started`` still runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[19] == started and fields[0] != "Z"


def listening_sockets(pid: int) -> list[tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    """What ``ss -ltnu`` lists for ``pid``: its TCP sockets that listen and its bound UDP sockets, as (protocol,
    address, port), read from /proc (no traffic)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for proto, state in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
        for line in Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != state or fields[9] not in inodes:
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)  # 32-bit words in the host's byte order (little-endian here)
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            found.append((proto, ipaddress.ip_address(raw), int(port, 16)))
    return found


def loopback(address) -> bool:
    return address.is_loopback or (address.version == 6 and address.ipv4_mapped is not None
                                   and address.ipv4_mapped.is_loopback)


class RunningDemo:
    """`rfid-table demo` in the background, as a user starts it, with a temporary directory of its own (TMPDIR) so
    that what it leaves there can be counted. With ``terminal``, on a pseudo-terminal of its own, whose controlling
    process it is: :meth:`hang_up` closes that terminal as a closed window or a lost SSH session does."""

    def __init__(self, *argv: str, terminal: bool = False, size: tuple[int, int] = (50, 120)):
        # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
        self.tmp = Path(tempfile.mkdtemp(prefix="rfid-table-demo-test-"))
        os.chmod(self.tmp, 0o755)
        command, env = rfid_table_command() + ["demo", *argv], {**os.environ, "TMPDIR": str(self.tmp)}
        self.out, self.err = bytearray(), bytearray()
        self.cond = threading.Condition()
        self.terminal: int | None = None
        self._hung_up = threading.Event()
        if terminal:
            self.terminal, tty = os.openpty()
            rows, columns = size
            fcntl.ioctl(tty, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            env.update(TERM="xterm", LINES=str(rows), COLUMNS=str(columns))
            self.proc = subprocess.Popen(command, stdin=tty, stdout=tty, stderr=tty, env=env,
                                         start_new_session=True,
                                         preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
            os.close(tty)
            self.readers = [threading.Thread(target=self._read_terminal, daemon=True)]
        else:
            self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            self.readers = [threading.Thread(target=self._read, args=(pipe, buffer), daemon=True)
                            for pipe, buffer in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self.readers:
            reader.start()
        self.started: dict[int, str] = {}  # the processes the demo started: pid → start time

    def _read(self, pipe, buffer: bytearray) -> None:
        # The live view redraws all the time: its pipe is drained, or the demo would block on a full pipe.
        while chunk := pipe.read1(65536):
            with self.cond:
                buffer += chunk
                self.cond.notify_all()

    def _read_terminal(self) -> None:
        while not self._hung_up.is_set():
            if not select.select([self.terminal], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(self.terminal, 65536)
            except OSError:  # EIO: the demo's side of the terminal is closed
                return
            with self.cond:
                self.out += chunk
                self.cond.notify_all()

    def hang_up(self) -> None:
        """Close the terminal: the kernel sends SIGHUP to the demo and to its process group."""
        self._hung_up.set()
        self.readers[0].join()
        os.close(self.terminal)
        self.terminal = None

    def text(self) -> str:
        with self.cond:
            return self.out.decode(errors="replace")

    def wait_until_playing(self, timeout_s: float = 90.0) -> int:
        """Wait until the simulated table is online on the demo's broker; returns the broker's MQTT port."""
        with self.cond:
            assert self.cond.wait_for(lambda: b"private broker on 127.0.0.1:" in self.out or
                                      self.proc.poll() is not None, timeout_s), self.out[-2000:]
        found = re.search(r"private broker on 127\.0\.0\.1:(\d+)", self.text())
        assert found, (self.text()[-2000:], self.err.decode(errors="replace"))
        port = int(found.group(1))
        online = threading.Event()
        client = make_client(MqttSettings(host="127.0.0.1", port=port), f"demo-test-{os.getpid()}")
        client.on_connect = lambda c, u, f, rc, p: c.subscribe(DEMO_TABLE_STATUS)
        client.on_message = lambda c, u, msg: msg.payload == b"online" and online.set()
        client.connect("127.0.0.1", port)
        client.loop_start()
        try:
            assert online.wait(timeout_s), f"the demo's table did not come online: {self.err.decode()[-2000:]}"
        finally:
            client.disconnect()
            client.loop_stop()
        self.started = descendants(self.proc.pid)
        return port

    def commands(self) -> dict[int, str]:
        """The command line of each process the demo started (that still runs)."""
        names = {}
        for pid in self.started:
            try:
                names[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                pass
        return names

    def left_running(self) -> list[str]:
        return [f"{pid}: {command}" for pid, command in self.commands().items()
                if alive(pid, self.started[pid])]

    def left_in_tmp(self) -> list[str]:
        return sorted(p.name for p in self.tmp.iterdir())

    def close(self) -> None:
        if self.terminal is not None:
            self.hang_up()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid, started in self.started.items():  # what a failing demo left: not left to the next test
            if alive(pid, started):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def demo_run():
    made: list[RunningDemo] = []

    def start(*argv: str, terminal: bool = False, **options) -> RunningDemo:
        made.append(RunningDemo(*argv, terminal=terminal, **options))
        return made[-1]

    yield start
    for demo in made:
        demo.close()


def last_screen(demo: RunningDemo) -> list[str]:
    """The rows of the last screen the live view drew whole (each frame starts at the top left, \x1b[H)."""
    frames = demo.text().split("\x1b[H")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", frames[-2] if len(frames) > 2 else "")
    return text.replace("\r", "").split("\n")


def test_on_an_80_by_24_terminal_the_addresses_and_the_floor_stay_on_screen(demo_run):
    """What the demo prints before the live view is hidden by it (the terminal's alternate screen): the overlay's
    and the console's addresses are drawn above the table, whole, and the events give way to the floor's panel."""
    demo = demo_run("--hands", "0", "--speed", "5", "--seed", "4", terminal=True, size=(24, 80))
    demo.wait_until_playing()
    overlay = re.search(r"http://127\.0\.0\.1:\d+/index\.html\?\S+&speed=5\.0", demo.text()).group(0)
    console = re.search(r"http://127\.0\.0\.1:\d+/console/index\.html\?\S+", demo.text()).group(0)
    with demo.cond:
        assert demo.cond.wait_for(lambda: "button seat" in "\n".join(last_screen(demo)), 60), demo.text()[-3000:]
    rows = last_screen(demo)
    assert len(rows) <= 24
    joined = "".join(row.rstrip() for row in rows)
    assert f"overlay, hole cards 20 s late: {overlay}" in joined and f"floor's console: {console}" in joined, rows
    broker = re.search(r"private broker on 127\.0\.0\.1:(\d+)", demo.text()).group(1)
    assert f"MQTT broker for your own client (examples/): 127.0.0.1 {broker}" in joined, rows
    assert all(len(row) <= 80 for row in rows) and "Table rfid-table/main-2" in rows[5], rows
    assert re.search(r"nothing waits for the floor|floor: \d+ waiting", "\n".join(rows)), rows


def test_every_socket_the_demo_listens_on_is_on_loopback(demo_run):
    """The demo's broker lets anyone in without a password: on a card room's network, none of its listening sockets
    may be reachable from another machine. Read from /proc as `ss -ltnup` would list them; no traffic leaves the
    loopback interface."""
    demo = demo_run("--hands", "0", "--speed", "5", "--seed", "4")
    port = demo.wait_until_playing()
    ws_port = int(re.search(r"http://127\.0\.0\.1:(\d+)/index\.html", demo.text()).group(1))
    sockets = {pid: listening_sockets(pid) for pid in [demo.proc.pid, *demo.started]}
    listening = [(pid, proto, str(address), p) for pid, found in sockets.items() for proto, address, p in found]
    ports = {p for _, _, _, p in listening}
    assert {port, ws_port} <= ports, listening  # the broker's MQTT and WebSocket listeners were found
    assert [s for s in listening if not loopback(ipaddress.ip_address(s[2]))] == [], demo.commands()


@pytest.mark.parametrize("end, status", [("closed terminal", 129), (signal.SIGHUP, 129), (signal.SIGTERM, 143),
                                         (signal.SIGINT, 0)])
def test_the_demo_ended_by_a_signal_stops_what_it_started_and_removes_its_temporary_files(demo_run, end, status):
    """A closed terminal window or a lost SSH session hangs up the demo's terminal: the kernel sends SIGHUP to the
    demo and its process group. SIGHUP also comes from `kill -HUP`, SIGTERM from `kill` and a shutdown, SIGINT from
    Ctrl-C. The demo's Mosquitto and simulated table stop with it, and of what it wrote to /tmp only its log stays."""
    demo = demo_run("--hands", "0", "--speed", "5", "--seed", "4", terminal=end == "closed terminal")
    demo.wait_until_playing()
    commands = demo.commands()
    assert any("mosquitto" in c for c in commands.values()) and any(" sim " in c for c in commands.values()), \
        commands
    log = Path(re.search(r"simulated table log: (\S+)", demo.text()).group(1))
    if end == "closed terminal":
        demo.hang_up()
    else:
        demo.proc.send_signal(end)
    assert demo.proc.wait(60) == status
    assert demo.left_running() == []
    assert demo.left_in_tmp() == [log.name]
    assert re.search(r"done: \d+ hands", log.read_text()), "the simulated table did not stop cleanly"


def test_the_demo_ends_when_its_simulated_table_dies_and_says_so(demo_run):
    demo = demo_run("--hands", "0", "--speed", "5", "--seed", "4")
    demo.wait_until_playing()
    (sim,) = [pid for pid, command in demo.commands().items() if " sim " in command]
    os.kill(sim, signal.SIGKILL)  # it cannot clean up after itself: the demo does
    assert demo.proc.wait(60) == 1
    assert "the simulated table stopped (killed by SIGKILL); see its log" in demo.err.decode()
    assert demo.left_running() == []
    assert [name for name in demo.left_in_tmp() if not name.endswith(".log")] == []


def test_the_demo_broker_lets_no_one_in_on_its_websocket_listener_without_the_overlay_login(broker):
    """Should a Mosquitto bind the WebSocket listener beyond loopback after all, it holds nothing for a stranger.
    The overlay page gets the login in its address."""
    results = {}
    for login in (None, (broker.overlay_login[0], "guess"), broker.overlay_login):
        answered = threading.Event()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, transport="websockets",
                             reconnect_on_failure=False)
        client.on_connect = lambda c, u, f, rc, p: (results.__setitem__(login, rc), answered.set())
        if login:
            client.username_pw_set(*login)
        client.connect(broker.host, broker.ws_port)
        client.loop_start()
        try:
            assert answered.wait(10), login
        finally:
            client.disconnect()
            client.loop_stop()
    assert [str(rc) for rc in results.values()] == ["Not authorized", "Not authorized", "Success"]
    query = parse_qs(urlsplit(broker.overlay_url("main-2")).query)
    assert (query["username"], query["password"]) == ([broker.overlay_login[0]], [broker.overlay_login[1]])
