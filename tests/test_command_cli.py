"""`rfid-table command` as a technician or a script runs it, against the card room's broker (the shipped
cardroom.conf with the files `rfid-table broker-setup` makes: logins, the ACL, TLS) and a simulated table that
answers commands with the table's own login: each exit status, values typed from the schema, and the lines `watch`
prints to answer the floor, copied and run.

The table is the daemon's pipeline on the simulated chip table, stepped in the background as the daemon's loop
steps it; it deals nothing by itself, so what waits for the floor waits until the test answers it.
"""

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from conftest import ROOT, Recorder
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.ops.broker import free_port
from rfid_table.ops.broker_login import LinkState, PASSWORD_ENV
from rfid_table.ops.broker_setup import CardRoomBroker, main as broker_setup
from rfid_table.ops.watch import TableView, frame_text
from rfid_table.service.contract import Topics
from rfid_table.service.publisher import MqttPublisher
from test_end_to_end import rfid_table_command
from test_watch import Frames

TABLE = "main-2"  # config/table-chips.toml: 10 seats, cards and chips
PASSWORDS = {"table-main-2": "table pw", "floor-1": "floor: one", "floor-2": "floor two",
             "dealer-main-2": "dealer pw"}
# Mosquitto 2.0 answers a wrong password with "Not authorized" (135), later versions with "Bad user name or
# password" (134): the command repeats the broker's reason.
REFUSED_LOGIN = re.compile(r"the broker refused the login: (Not authorized|Bad user name or password)")


class Room:
    """The card room's broker, and the files a technician has: the table's configuration (the plain listener on
    the loopback, as the table's daemon connects), the same table over TLS (as a console across the room's
    network connects), and a password file per floor user."""

    def __init__(self, work: Path, broker: CardRoomBroker):
        self.work, self.broker = work, broker
        shutil.copy(ROOT / "config" / "chips-demo.toml", work / "chips-demo.toml")
        self.table_config = self._config("table.toml", host="127.0.0.1", port=broker.mqtt_port,
                                         username="table-main-2", password=PASSWORDS["table-main-2"])
        self.tls_config = self._config("table-tls.toml", host="127.0.0.1", port=broker.tls_port, tls=True,
                                       tls_ca_file=str(broker.directory / "ca.crt"))
        for user in ("floor-1", "floor-2"):
            self.password_file(user).write_text(PASSWORDS[user] + "\n")

    def _config(self, name: str, **mqtt) -> Path:
        text = (ROOT / "config" / "table-chips.toml").read_text()
        section = "[mqtt]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in mqtt.items())
        text, replaced = re.subn(r"^\[mqtt\]\n(?:.+\n)*", section, text, count=1, flags=re.M)
        assert replaced == 1
        (self.work / name).write_text(text)
        return self.work / name

    def password_file(self, user: str) -> Path:
        return self.work / f"{user}.pw"

    def login(self, user: str = "floor-1") -> list[str]:
        return ["--username", user, "--password-file", str(self.password_file(user))]


@pytest.fixture(scope="module")
def room():
    # Not pytest's tmp_path: as root, mosquitto drops to the user 'mosquitto', who cannot enter that tree.
    work = Path(tempfile.mkdtemp(prefix="rfid-table-command-"))
    os.chmod(work, 0o755)
    argv = ["--dir", str(work / "cardroom"), "--table", TABLE, "--table", "other-2", "--user", "floor:floor-1",
            "--user", "floor:floor-2", "--user", f"dealer:dealer-main-2:{TABLE}", "--tls-ip", "127.0.0.1"]
    for name, password in PASSWORDS.items():
        argv += ["--password", f"{name}={password}"]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert broker_setup(argv) == 0, err.getvalue()
    try:
        with CardRoomBroker(work / "cardroom") as broker:
            yield Room(work, broker)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class SteppedTable:
    """The chip table's pipeline with its publisher, logged in as the table, stepped in a thread of its own; the
    test places cards under the same lock."""

    def __init__(self, config):
        self.publisher = MqttPublisher(config.mqtt, config.table_id, epoch="command-cli")
        self.sim = SimulatedTable(config, SimOptions(hands=None, link="direct"), self.publisher)
        assert self.publisher.start(), "the table could not log in to the card room's broker"
        self.uid = {deck: {card: uid for uid, card in tags.items()} for deck, tags in config.decks.items()}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="table", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        t = 1000.0
        while not self.stopped.is_set():
            with self.lock:
                self.sim.step(t)
                self.publisher.service(0.002)
            t += self.sim.cycle_s
            self.stopped.wait(0.01)

    def place(self, deck: str, card: str, zone: str) -> None:
        with self.lock:
            self.sim.field.place(self.uid[deck][card], zone)

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(10)
        self.publisher.stop()
        self.sim.close()


@pytest.fixture(scope="module")
def table(room):
    running = SteppedTable(load_config(room.table_config))
    yield running
    running.close()


@pytest.fixture(scope="module")
def events(room, table):
    """What the table publishes, as the dealer console of this table reads it."""
    recorder = Recorder(MqttSettings(host=room.broker.host, port=room.broker.mqtt_port),
                        f"rfid-table/{TABLE}/public/events", username="dealer-main-2",
                        password=PASSWORDS["dealer-main-2"])
    yield recorder
    recorder.close()


def event(recorder: Recorder, predicate) -> dict:
    assert recorder.wait_for(lambda messages: any(predicate(e) for e in recorder.json("/public/events"))), \
        "no such event"
    return next(e for e in recorder.json("/public/events") if predicate(e))


def command(*argv, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """``rfid-table command`` in a process of its own, without a password in the environment unless given."""
    environ = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    return subprocess.run([sys.executable, "-m", "rfid_table.ops.command", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, env={**environ, **(env or {})})


# ---- accepted, refused ------------------------------------------------------------------------------------------

def test_an_accepted_command_exits_0_and_prints_the_reply_its_values_typed_from_the_schema(room, table, events):
    # a console across the room's network: TLS, the floor user's password from a file
    seated = command("--config", room.tls_config, *room.login(), "seat_player", "seat=3", "name=Anna Müller")
    assert seated.returncode == 0, seated.stderr
    reply = json.loads(seated.stdout)
    assert reply["ok"] is True and reply["id"] and isinstance(reply["seq"], int)
    player = event(events, lambda e: e["seq"] == reply["seq"])
    assert (player["type"], player["seat"], player["name"], player["by"]) == \
        ("player_seated", 3, "Anna Müller", "floor/floor-1")
    # stacks.N=... builds the object of the seats' counts; the password from the environment
    counted = command("--config", room.table_config, "--username", "floor-1", "set_stacks", "stacks.3=12000",
                      "stacks.4=800", env={PASSWORD_ENV: PASSWORDS["floor-1"]})
    assert counted.returncode == 0, counted.stderr
    stacks = event(events, lambda e: e["seq"] == json.loads(counted.stdout)["seq"])
    assert (stacks["type"], stacks["stacks"]) == ("stacks_set", {"3": 12000, "4": 800})


def test_a_command_the_table_refuses_exits_1_with_the_field_and_the_reason(room, table):
    refused = command("--config", room.table_config, *room.login(), "seat_player", "seat=11", "name=Max")
    assert refused.returncode == 1, refused.stderr
    reply = json.loads(refused.stdout)
    assert {k: reply[k] for k in ("ok", "field", "error")} == \
        {"ok": False, "field": "seat", "error": "no seat 11: the table has seats 1 to 10"}
    assert "seat_player refused: seat: no seat 11: the table has seats 1 to 10" in refused.stderr


@pytest.mark.parametrize("argv, says", [
    (["seat_player", "seat=three", "name=Anna"], "seat: expected an integer (a seat number, from 1), got 'three'"),
    (["seat_player", "chair=3", "name=Anna"], "chair: unknown field for seat_player (seat_player takes seat, name, "
                                              "player_id (optional))"),
    (["seat_player", "seat=3", "name=Anna  Müller"], "name: leading, trailing or double spaces (expected a display "
                                                     "name"),
    (["set_stacks", "stacks.3=lots"], "stacks.3: expected an integer (seat number (ASCII digits) to chips"),
    (["set_stacks", "stacks=12000"], "stacks: give each entry as stacks.KEY=VALUE (seat number (ASCII digits)"),
    (["floor_pick", "irregularity=42", "card="], "card: expected a card, rank then suit"),
    (["--role", "dealer", "set_stacks", "stacks.3=100"], "set_stacks: the role dealer may not send it; the roles "
                                                         "that may: floor"),
])
def test_a_bad_key_value_or_role_is_refused_before_anything_is_sent(room, argv, says):
    # at a port where no broker listens: a command that tried to go out would wait there and exit 69
    refused = command("--config", room.table_config, "--port", free_port(), "--timeout", "30", *room.login(), *argv)
    assert refused.returncode == 2, refused.stderr
    assert says in refused.stderr and refused.stdout == ""


# ---- the broker refuses, nobody answers -----------------------------------------------------------------------

def test_a_refused_login_exits_77_and_so_does_a_command_the_acl_does_not_let_the_user_send(room, table):
    wrong = room.work / "wrong.pw"
    wrong.write_text("not the password\n")
    refused = command("--config", room.table_config, "--username", "floor-1", "--password-file", wrong, "ping")
    assert refused.returncode == 77, refused.stderr
    assert len(REFUSED_LOGIN.findall(refused.stderr)) == 1, refused.stderr
    # floor-1 writes commands under commands/floor/floor-1 only: as a dealer, the broker refuses the command
    refused = command("--config", room.table_config, *room.login(), "--role", "dealer", "ping")
    assert refused.returncode == 77, refused.stderr
    assert (f"the broker refused the command: Not authorized: its ACL does not let floor-1 write "
            f"rfid-table/{TABLE}/commands/dealer/floor-1") in refused.stderr


def test_no_reply_in_time_exits_69_and_says_what_to_check(room):
    unanswered = command("--config", room.table_config, *room.login(), "--table", "other-2", "--timeout", "1", "ping")
    assert unanswered.returncode == 69, unanswered.stderr
    assert ("no reply in 1 s to the command sent on rfid-table/other-2/commands/floor/floor-1: nothing is known of "
            "the table rfid-table/other-2 on this broker") in unanswered.stderr
    closed = free_port()
    unreachable = command("--config", room.table_config, *room.login(), "--port", closed, "--timeout", "1", "ping")
    assert unreachable.returncode == 69, unreachable.stderr
    assert f"could not reach the broker at 127.0.0.1:{closed} in 1 s: Connection refused" in unreachable.stderr


# ---- watch's lines ----------------------------------------------------------------------------------------------

def test_a_pick_of_the_burn_card_is_answered_by_floor_pick_with_the_card_left_to_type():
    link = LinkState("localhost", 1883, connected=True)
    topics = Topics.for_table("rfid-table", TABLE)
    view = TableView(topics, False, link, ["rfid-table", "command", "--config", "my table.toml"], "ignore")
    view.subscribed_at = 0.0
    pick = {"irregularity": 42, "hand": 7, "type": "irregular_card", "code": "four_card_flop", "severity": "warning",
            "ruling": "floor_picks_burn", "seats": [], "rules": ["TDA 39"], "answers": ["floor_pick", "override"],
            "lapses": "hand_end"}
    view.on_message(topics.snapshot(False), json.dumps({"seq": 42, "hand": 7, "phase": "flop", "seats": [],
                                                        "irregularities": [pick]}).encode())
    # a table whose events say nothing of what answers them: the ruling does
    view.on_message(topics.events(False), json.dumps({"seq": 43, "hand": 7, "type": "irregular_card",
                                                      "code": "flop_without_burn", "ruling": "floor_picks_burn",
                                                      "needs_floor": True}).encode())
    lines = [line.strip() for line in frame_text(view.render()).splitlines() if "rfid-table command" in line]
    assert lines == ["rfid-table command --config 'my table.toml' floor_pick irregularity=42 card=",
                     "rfid-table command --config 'my table.toml' override irregularity=42",
                     "rfid-table command --config 'my table.toml' floor_pick irregularity=43 card=",
                     "rfid-table command --config 'my table.toml' override irregularity=43"]


def test_watch_prints_the_lines_that_answer_the_floor_and_one_copied_and_run_answers_it(room, table, events):
    login = room.login("floor-2")
    watcher = Frames(["watch", "--config", room.table_config, *login, "--plain", "--timeout", "60"])
    try:
        # the deal begins, and a card of the other deck reaches seat 3: a misdeal waits for the floor
        for deck, card, seat in (("A", "As", 1), ("A", "Kd", 2), ("B", "9d", 3)):
            table.place(deck, card, f"seat{seat}.cards")
        seq = event(events, lambda e: e["type"] == "irregular_card" and e.get("needs_floor"))["seq"]
        frame = watcher.wait_for(lambda f: f"irregularity={seq}" in f)
        lines = [line.strip() for line in frame.splitlines() if line.strip().startswith("rfid-table command ")]
        start = shlex.join(["rfid-table", "command", "--config", str(room.table_config), *login])
        assert lines == [f"{start} confirm irregularity={seq}", f"{start} override irregularity={seq}"], frame
        shown = len(watcher.frames)
        answered = subprocess.run(rfid_table_command() + shlex.split(lines[0])[1:], capture_output=True, text=True,
                                  timeout=60)
        assert answered.returncode == 0, answered.stderr
        assert json.loads(answered.stdout)["ok"] is True
        ruling = event(events, lambda e: e["type"] == "floor_ruling" and e["irregularity"] == seq)
        assert (ruling["decision"], ruling["result"], ruling["by"]) == ("confirmed", "misdeal", "floor/floor-2")
        # The command logged in as floor-2 too: the broker closed watch's connection for it, and watch, back,
        # learns from the table's snapshot that nothing waits any more.
        with watcher.cond:
            assert watcher.cond.wait_for(lambda: any("nothing waits for the floor" in f
                                                     for f in watcher.frames[shown:]), 30), watcher.frames[-1]
    finally:
        watcher.stop()
