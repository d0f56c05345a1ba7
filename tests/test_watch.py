"""`rfid-table watch`, `diag` and `sim` as a user runs them, against a real Mosquitto: what the live view draws
from a real session, and the failures that used to look like success (a refused login, no broker, no table, a
broker that withholds hole cards)."""

import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from rfid_table.ops.broker import PrivateBroker, free_port
from test_end_to_end import rfid_table_command

ROOT = Path(__file__).resolve().parents[1]
CHIP_TABLE = ROOT / "config" / "table-chips.toml"
TABLE_PASSWORD, VIEWER_PASSWORD = "table secret", "viewer secret"
# Mosquitto 2.0 answers a wrong password with "Not authorized" (135), later versions with "Bad user name or
# password" (134): the command repeats the broker's reason.
REFUSED = re.compile(r"the broker refused the login: (Not authorized|Bad user name or password)")


def run(*argv, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(rfid_table_command() + ["--log-level", "WARNING", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def frames(text: str) -> list[str]:
    return [f for f in text.split("\n\n") if f.strip()]


class Frames:
    """A running `watch --plain`: its frames as they come (a blank line ends each)."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(rfid_table_command() + list(map(str, argv)), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        self.frames: list[str] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        lines = []
        for line in self.proc.stdout:
            if line.strip():
                lines.append(line)
                continue
            with self.cond:
                self.frames.append("".join(lines))
                self.cond.notify_all()
            lines = []

    def wait_for(self, predicate, timeout_s=60.0):
        with self.cond:
            assert self.cond.wait_for(lambda: any(predicate(f) for f in self.frames), timeout_s), \
                (self.frames[-1] if self.frames else "no frame")
            return next(f for f in self.frames if predicate(f))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def locked_broker():
    """Mosquitto with logins: `table` may do anything; `viewer` may read the public branch only."""
    work = Path(tempfile.mkdtemp(prefix="rfid-table-watch-"))
    os.chmod(work, 0o755)  # as root, mosquitto drops to its own user and must still read these files
    passwd = work / "passwd"
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(passwd), "table", TABLE_PASSWORD], check=True)
    subprocess.run(["mosquitto_passwd", "-b", str(passwd), "viewer", VIEWER_PASSWORD], check=True)
    acl = work / "acl"
    acl.write_text("user table\ntopic readwrite rfid-table/#\n\n"
                   "user viewer\ntopic read rfid-table/+/status\ntopic read rfid-table/+/public/#\n")
    for path in (passwd, acl):
        os.chmod(path, 0o644)
    conf = work / "mosquitto.conf"
    conf.write_text(f"listener 1883 127.0.0.1\nallow_anonymous false\npassword_file {passwd}\nacl_file {acl}\n"
                    "persistence false\nlog_dest stderr\n")
    with PrivateBroker(conf=conf) as broker:
        yield broker
    shutil.rmtree(work, ignore_errors=True)


def table_config(directory: Path, password: str) -> Path:
    """The chip table's configuration, logging in as `table` with ``password``."""
    shutil.copy(ROOT / "config" / "chips-demo.toml", directory / "chips-demo.toml")
    text = CHIP_TABLE.read_text().replace('# username = "table-main-2"', 'username = "table"')
    text = text.replace('# password = "..."', f'password = "{password}"')
    path = directory / "table.toml"
    path.write_text(text)
    return path


@pytest.fixture
def fresh_chip_table(broker):
    """The session's broker without what an earlier run of the chip table left retained (its status and
    snapshots), so the view starts from nothing, as at a table seen for the first time."""
    from rfid_table.config.table import MqttSettings  # noqa: PLC0415
    from rfid_table.mqtt import make_client  # noqa: PLC0415

    client = make_client(MqttSettings(host=broker.host, port=broker.port), "test-clear-retained")
    client.connect(broker.host, broker.port)
    client.loop_start()
    for topic in ("status", "public/snapshot", "secure/snapshot", "public/diag"):
        client.publish(f"rfid-table/main-2/{topic}", b"", qos=1, retain=True).wait_for_publish(10)
    client.disconnect()
    client.loop_stop()
    return broker


# ---- what the live view draws --------------------------------------------------------------------------------

def test_the_live_view_draws_stacks_bets_pots_blinds_whose_action_and_what_waits_for_the_floor(fresh_chip_table):
    broker = fresh_chip_table
    port = ["--host", broker.host, "--port", broker.port]
    watcher = Frames(["watch", "--config", CHIP_TABLE, *port, "--secure", "--plain", "--exit-after-hands", "4",
                      "--timeout", "90"])
    watcher.wait_for(lambda f: "waiting for the table rfid-table/main-2" in f)
    # ten times real time: fast, and the view still draws every moment of the deal
    sim = run("sim", "--config", CHIP_TABLE, *port, "--hands", "4", "--seed", "3", "--speed", "10", "--link", "direct",
              "--absences-per-hand", "0.2", "--players-style", "random")
    assert sim.returncode == 0, sim.stderr
    assert watcher.proc.wait(90) == 0, watcher.proc.stderr.read()
    shown = watcher.frames
    last = shown[-1]
    # the table: every seat with its stack, the button, the pot and its side pots, the board with suit symbols
    assert re.search(r"button seat \d+", last)
    assert re.search(r"^ +\d+ +D\b", last, re.M), last
    assert re.search(r"pot [\d,]+ +main [\d,]+ +side 1 [\d,]+ \(seats [\d, ]+\)", "\n".join(shown)), last
    assert re.search(r"board  ([2-9TJQKA][♠♥♦♣] ){3}", last)
    assert re.search(r"^ +\d+ .*[2-9TJQKA][♠♥♦♣] [2-9TJQKA][♠♥♦♣] +[\d,]+ ", last, re.M)  # hole cards, a stack
    during = "\n".join(shown)
    assert re.search(r"^ +\d+ +SB\b", during, re.M) and re.search(r"^ +\d+ +BB\b", during, re.M)
    assert re.search(r"^ +\d+ .* [\d,]+ +[\d,]+ +TO ACT", during, re.M)  # a bet in front, whose action
    assert re.search(r"^ +\d+ .*not dealt", during, re.M)  # in the deal: seated, no cards yet
    # what waits for the floor stays on screen, with how to answer, until answered or until its hand ends
    panel = re.search(r"floor: (\d+) waiting.*?#(\d+) +(\d+) +(\d+) +seat \d+ (?:left during the hand|away at the "
                      r"deal) +(?:the floor decides|the hand is dead) +confirm or override #(\d+)", during, re.S)
    assert panel and panel.group(2) == panel.group(5), during
    seq, hand = panel.group(2), panel.group(3)
    first_shown = next(i for i, f in enumerate(shown) if f"confirm or override #{seq}" in f)
    ended = next((i for i, f in enumerate(shown) if f"hand {hand} over" in f), len(shown))
    assert ended > first_shown + 1
    assert all(f"confirm or override #{seq}" in f for f in shown[first_shown:ended])
    assert all(f"confirm or override #{seq}" not in f for f in shown[ended:])  # dropped with its hand
    # events in words: no internal names or raw data, one line per fold
    assert "post_bb" not in during and "post_sb" not in during and "{'" not in during and "None" not in during
    assert re.search(r"seat \d+ posts the big blind 100", during)
    assert re.search(r"showdown: seat \d+ wins [\d,]+", during)
    events = re.findall(r"^  #(\d+) (.*)$", during, re.M)
    folds = {(seq, text) for seq, text in events if " folds" in text}
    per_seat_and_hand = {}
    for seq, text in folds:
        per_seat_and_hand.setdefault(text.split(" folds")[0], set()).add(int(seq))
    assert folds and all(len(seqs) <= 4 for seqs in per_seat_and_hand.values())  # at most once a hand


def test_the_floor_panel_keeps_an_item_until_the_floor_answers_it(fresh_chip_table, recorder_factory):
    broker = fresh_chip_table
    port = ["--host", broker.host, "--port", broker.port]
    sim = subprocess.Popen(rfid_table_command() + ["--log-level", "WARNING", "sim", "--config", str(CHIP_TABLE),
                                                   *map(str, port), "--hands", "0", "--seed", "11", "--speed", "4",
                                                   "--pace", "0.3", "--link", "direct", "--absences-per-hand", "0.3"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watcher = Frames(["watch", "--config", CHIP_TABLE, *port, "--plain", "--timeout", "120"])
    try:
        frame = watcher.wait_for(lambda f: re.search(r"floor: \d+ waiting", f))
        seq = int(re.search(r"confirm or override #(\d+)", frame).group(1))
        replies = recorder_factory("rfid-table/main-2/replies/#")
        from rfid_table.mqtt import make_client  # noqa: PLC0415
        from rfid_table.config.table import MqttSettings  # noqa: PLC0415

        floor = make_client(MqttSettings(host=broker.host, port=broker.port), "test-floor-console")
        floor.connect(broker.host, broker.port)
        floor.loop_start()
        floor.publish("rfid-table/main-2/commands/floor/tester",
                      f'{{"command": "confirm", "irregularity": {seq}, "id": "c1"}}', qos=1).wait_for_publish(10)
        assert replies.wait_for(lambda msgs: msgs, 20), "no reply to the floor's answer"
        floor.disconnect()
        floor.loop_stop()
        answered = watcher.wait_for(lambda f: f"(#{seq}):" in f and "FLOOR confirmed" in f)
        assert f"confirm or override #{seq}" not in answered
    finally:
        watcher.stop()
        sim.terminate()
        sim.wait(20)


def test_the_seats_show_the_players_the_floor_seated(fresh_chip_table):
    broker = fresh_chip_table
    port = ["--host", broker.host, "--port", broker.port]
    sim = subprocess.Popen(rfid_table_command() + ["--log-level", "WARNING", "sim", "--config", str(CHIP_TABLE),
                                                   *map(str, port), "--hands", "0", "--seed", "8", "--speed", "4",
                                                   "--link", "direct"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watcher = Frames(["watch", "--config", CHIP_TABLE, *port, "--plain", "--timeout", "90"])
    try:
        watcher.wait_for(lambda f: "button seat" in f)
        for fields in (["seat=3", "name=Anna Müller", "player_id=p-17"],
                       ["seat=4", "name=Maximiliane Wolkenstein-Ro"]):  # 27 characters
            done = run("command", "--config", CHIP_TABLE, *port, "seat_player", *fields)
            assert done.returncode == 0, done.stdout + done.stderr
        watcher.wait_for(lambda f: re.search(r"^ +3 +Anna Müller +.*[\d,]+", f, re.M)
                         and re.search(r"^ +4 +Maximiliane Wol… ", f, re.M))  # a long name is cut
        # the event's line, in the frame that drew it (on a loaded machine later events may have pushed it out since)
        watcher.wait_for(lambda f: "seat 3: Anna Müller sits down (by floor/" in f, 1)
        done = run("command", "--config", CHIP_TABLE, *port, "clear_seat", "seat=3")
        assert done.returncode == 0, done.stdout + done.stderr
        # the event comes first, the snapshot without her right after it: the view drops her row then
        assert watcher.wait_for(lambda f: "seat 3: Anna Müller leaves the table" in f
                                and not re.search(r"^ +3 +Anna", f, re.M))
    finally:
        watcher.stop()
        sim.terminate()
        sim.wait(20)


# ---- failures that used to look like success ------------------------------------------------------------------

def test_a_refused_login_is_said_once_with_the_brokers_reason_and_fails(locked_broker, tmp_path):
    port = ["--host", locked_broker.host, "--port", locked_broker.port]
    wrong = tmp_path / "wrong-password"
    wrong.write_text("not the password\n")
    watch = run("watch", "--table", "main-2", *port, "--username", "viewer", "--password-file", wrong, "--plain",
                "--timeout", "20")
    assert watch.returncode == 77, watch.stdout + watch.stderr
    assert len(REFUSED.findall(watch.stderr)) == 1, watch.stderr
    sim = run("sim", "--config", table_config(tmp_path, "not the password"), *port, "--hands", "1", "--speed", "0",
              "--link", "direct")
    assert sim.returncode == 77, sim.stderr
    assert len(REFUSED.findall(sim.stderr)) == 1, sim.stderr
    assert "done:" not in sim.stderr
    diag = run("diag", "--config", CHIP_TABLE, *port, "--username", "viewer", "--plain", "--timeout", "20",
               env={"RFID_TABLE_PASSWORD": "not the password either"})
    assert diag.returncode == 77, diag.stdout + diag.stderr
    assert len(REFUSED.findall(diag.stderr)) == 1, diag.stderr


def test_watch_and_diag_say_what_they_wait_for(fresh_chip_table):
    broker = fresh_chip_table
    closed = free_port()
    watch = run("watch", "--table", "main-2", "--port", closed, "--host", "127.0.0.1", "--plain", "--timeout", "3")
    assert f"waiting for the broker at 127.0.0.1:{closed}: Connection refused" in watch.stdout, watch.stdout
    assert watch.returncode == 69 and "gave up" in watch.stderr
    port = ["--host", broker.host, "--port", broker.port]
    watch = run("watch", "--table", "no-such-table", *port, "--plain", "--timeout", "2")
    assert watch.returncode == 0, watch.stderr
    assert ("waiting for the table rfid-table/no-such-table: nothing published yet. Is its daemon running against "
            "this broker") in watch.stdout.replace("\n", " ")
    diag = run("diag", "--config", CHIP_TABLE, *port, "--plain", "--timeout", "2")
    assert "waiting for the daemon's diagnostics on rfid-table/main-2/public/diag" in diag.stdout, diag.stdout


def test_sim_without_a_broker_plays_nothing_and_says_where_it_looked():
    closed = free_port()
    sim = run("sim", "--config", CHIP_TABLE, "--host", "127.0.0.1", "--port", closed, "--hands", "2", "--speed", "0",
              "--link", "direct", timeout=60)
    assert sim.returncode == 69, sim.stderr
    assert f"gave up: no broker answered at 127.0.0.1:{closed} within 10 s, so nothing was played" in sim.stderr
    assert "--host and --port" in sim.stderr and "done:" not in sim.stderr


def test_watch_secure_says_when_the_broker_withholds_hole_cards(locked_broker, tmp_path):
    port = ["--host", locked_broker.host, "--port", locked_broker.port]
    config = table_config(tmp_path, TABLE_PASSWORD)
    sim = run("sim", "--config", config, *port, "--hands", "1", "--speed", "0", "--link", "direct", "--seed", "2")
    assert sim.returncode == 0, sim.stderr
    # the viewer's password from the environment, as Mosquitto's own clients keep it off the command line
    watch = run("watch", "--table", "main-2", *port, "--secure", "--username", "viewer", "--plain", "--timeout", "6",
                env={"RFID_TABLE_PASSWORD": VIEWER_PASSWORD})
    assert watch.returncode == 0, watch.stderr
    last = frames(watch.stdout)[-1]
    assert "hole cards withheld: the broker delivers nothing from the secure feed" in last.replace("\n", " "), last
    assert "hand 1" in last and "##" in last  # the public view: cards face down
    secret = tmp_path / "password"
    secret.write_text(TABLE_PASSWORD + "\n")
    full = run("watch", "--table", "main-2", *port, "--secure", "--username", "table", "--password-file", secret,
               "--plain", "--timeout", "6")
    assert "withheld" not in full.stdout and re.search(r"[2-9TJQKA][♠♥♦♣] [2-9TJQKA][♠♥♦♣]", frames(full.stdout)[-1])


def test_help_says_where_the_password_comes_from_and_the_version_is_known():
    for command in ("watch", "diag"):
        help_text = " ".join(run(command, "--help").stdout.split())
        assert "--password-file FILE" in help_text and "RFID_TABLE_PASSWORD" in help_text, help_text
        assert "need not be on the command line, where ps shows it" in help_text
    assert "--username" in run("watch", "--help").stdout
    version = run("--version")
    assert version.returncode == 0 and re.fullmatch(r"rfid-table \d+\.\d+\.\d+\n", version.stdout)


def test_broker_setup_without_a_target_directory_writes_nothing_and_says_what_is_missing():
    system = Path("/etc/mosquitto/cardroom")
    before = sorted(system.iterdir()) if system.exists() else None
    done = subprocess.run(rfid_table_command() + ["broker-setup", "--table", "main-9"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "the following arguments are required: --dir" in done.stderr
    assert (sorted(system.iterdir()) if system.exists() else None) == before


def test_on_a_terminal_the_view_redraws_one_screen(fresh_chip_table):
    """Without --plain, on a terminal: the alternate screen, redrawn in place, in colour, left at the end."""
    import pty  # noqa: PLC0415
    import select  # noqa: PLC0415

    broker = fresh_chip_table
    port = ["--host", broker.host, "--port", str(broker.port)]
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "LINES": "50", "TERM": "xterm-256color"}
    watcher = subprocess.Popen(rfid_table_command() + ["watch", "--config", str(CHIP_TABLE), *port, "--secure",
                                                       "--exit-after-hands", "1", "--timeout", "60"],
                               stdin=slave, stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    sim = run("sim", "--config", CHIP_TABLE, *port, "--hands", "1", "--seed", "3", "--speed", "0", "--link", "direct")
    assert sim.returncode == 0, sim.stderr
    screen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        try:
            chunk = os.read(master, 65536) if ready else b""
        except OSError:  # the watcher closed the terminal
            chunk = b""
        if not chunk:
            break
        screen += chunk
    os.close(master)
    assert watcher.wait(30) == 0, watcher.stderr.read()
    text = screen.decode(errors="replace")
    assert "\x1b[?1049h" in text and "\x1b[?1049l" in text  # the alternate screen, and back at the end
    assert "\x1b[31m" in text or "\x1b[1;31m" in text  # red suits
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert "Table rfid-table/main-2" in plain and re.search(r"pot [\d,]+", plain) and "hand 1 over" in plain
