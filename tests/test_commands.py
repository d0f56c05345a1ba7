"""Commands to the table over the real broker: validated, answered, journaled; bad ones change nothing."""

import json
import threading
import random
import time

import pytest

from rfid_table.service.commands import CommandGate, CommandRateLimit
from rfid_table.config.table import MqttSettings
from rfid_table.service.daemon import TablePipeline
from rfid_table.ops.diag import render
from rfid_table.service.journal import Journal
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

BASE = "rfid-table/main-1"


def state(table) -> dict:
    """The table's state, less the clock (time passes whatever commands arrive)."""
    snapshot = table.sim.pipeline.controller.snapshot(secure=True)
    snapshot.pop("t")
    return snapshot


class Table:
    """The daemon's pipeline with its publisher, stepped by the test on a table clock."""

    def __init__(self, config):
        self.publisher = MqttPublisher(config.mqtt, config.table_id, epoch="commands")
        self.sim = SimulatedTable(config, SimOptions(hands=None, link="direct"), self.publisher)
        assert self.publisher.start()
        self.t = 1000.0
        self.uid = {card: uid for uid, card in config.decks["A"].items()}

    def run(self, seconds: float) -> None:
        end = self.t + seconds
        while self.t < end:
            self.sim.step(self.t)
            self.publisher.service(0.002)
            self.t += self.sim.cycle_s

    def run_until(self, condition, timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            self.run(0.05)
        return True

    def close(self):
        self.publisher.stop()
        self.sim.close()


@pytest.fixture
def table(table_config):
    running = Table(table_config)
    yield running
    running.close()


@pytest.fixture
def console(mqtt_settings):
    """A floor tablet: publishes commands and collects the replies."""
    replies: list[dict] = []
    client = make_client(MqttSettings(host=mqtt_settings.host, port=mqtt_settings.port), "floor-tablet")
    client.on_message = lambda c, u, m: replies.append(json.loads(m.payload))
    subscribed = threading.Event()
    client.on_subscribe = lambda c, u, mid, codes, p: subscribed.set()
    client.connect(mqtt_settings.host, mqtt_settings.port)
    client.subscribe(f"{BASE}/replies/#", qos=1)
    client.loop_start()
    assert subscribed.wait(10), "the floor tablet could not subscribe to its replies"

    def send(payload, role="floor", user="alice", retain=False) -> None:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        info = client.publish(f"{BASE}/commands/{role}/{user}", raw, qos=1, retain=retain)
        if retain:  # stored by the broker before the table (re)subscribes
            info.wait_for_publish(5)

    yield send, replies
    client.disconnect()
    client.loop_stop()


def test_commands_are_answered_and_bad_ones_name_the_field_and_change_nothing(table, console):
    send, replies = console
    send({"id": "1", "command": "ping"})
    send({"id": "2", "command": "select_deck", "deck": "B"})
    assert table.run_until(lambda: len(replies) == 2)
    assert replies[0] == {"id": "1", "ok": True, "seq": None}
    assert replies[1]["ok"] and table.sim.pipeline.controller.snapshot(secure=False)["deck"] == "B"

    before = state(table)
    bad = [
        (b"not json", "payload"),
        ({"command": "ping"}, "id"),
        ({"id": "3", "command": "reboot"}, "command"),
        ({"id": "4", "command": "select_deck"}, "deck"),
        ({"id": "5", "command": "select_deck", "deck": "Z"}, "deck"),
        ({"id": "6", "command": "declare", "seat": 11, "declaration": "raise"}, "seat"),
        ({"id": "7", "command": "declare", "seat": "3", "declaration": "raise"}, "seat"),
        ({"id": "8", "command": "declare", "seat": 3, "declaration": "raise", "amount": -5}, "amount"),
        ({"id": "9", "command": "ping", "please": True}, "please"),
    ]
    for payload, _field in bad:
        send(payload)
    send({"id": "10", "command": "select_deck", "deck": "A"}, role="dealer", user="bob")  # not the dealer's call
    assert table.run_until(lambda: len(replies) == 2 + len(bad) + 1)
    answers = replies[2:]
    assert [(a["ok"], a["field"]) for a in answers] == [(False, f) for _, f in bad] + [(False, "role")]
    assert all(a["error"] for a in answers)
    assert state(table) == before


def test_a_command_the_state_does_not_allow_is_refused(table, console):
    send, replies = console
    for card, seat in (("As", 1), ("Kd", 2), ("Qs", 1), ("Jd", 2)):  # a hand is running, its deal complete
        table.sim.field.place(table.uid[card], f"seat{seat}.cards")
        table.run(0.3)
    send({"id": "d", "command": "select_deck", "deck": "B"})
    send({"id": "e", "command": "declare", "seat": 1, "declaration": "raise", "amount": 300})
    assert table.run_until(lambda: len(replies) == 2)
    assert replies[0] == {"id": "d", "ok": False, "field": "command",
                          "error": "a hand is running: the deck can be changed between hands"}
    assert replies[1]["ok"]
    assert state(table)["deck"] == "A"


def test_ten_thousand_malformed_commands_leave_the_daemon_running_and_the_state_unchanged(table, console):
    send, replies = console
    rng = random.Random(7)
    valid = json.dumps({"id": "x", "command": "declare", "seat": 3, "declaration": "raise", "amount": 300}).encode()
    before = state(table)
    sent = 0
    for batch in range(20):
        for _ in range(500):
            kind = rng.random()
            if kind < 0.3:
                payload = rng.randbytes(rng.randrange(0, 80))
            elif kind < 0.7:  # a valid command with bytes flipped, cut or doubled
                data = bytearray(valid)
                for _ in range(rng.randrange(1, 4)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                payload = bytes(data[: rng.randrange(1, len(data))]) if rng.random() < 0.3 else bytes(data)
            else:  # well-formed JSON with wrong fields, types and ranges (no hand runs: declare is refused too)
                payload = json.dumps({"id": str(rng.randrange(10**6)), "command": rng.choice(
                    ["declare", "select_deck", "ping", "nope", 5]), rng.choice(["seat", "deck", "amount", "x"]):
                    rng.choice([0, 11, -1, "Z", None, [], 10**12, 2.5])}).encode()
            send(payload, user=f"console-{sent % 250}")  # many users: the rate limit of each stays out of the way
            sent += 1
        assert table.run_until(lambda: len(replies) >= sent, 30), f"batch {batch}: {len(replies)}/{sent} answered"
    assert sent == 10_000 and len(replies) == 10_000
    ok = [r for r in replies if r["ok"]]
    assert all(r["seq"] is None for r in ok)  # only pings can succeed here, and they change nothing
    assert state(table) == before


# ---- the dealing commands, validated before the controller sees them (no broker needed) -----------------------

def parse(payload, role: str = "floor", seats: int = 10):
    from rfid_table.service.commands import parse_command

    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return parse_command(f"{BASE}/commands/{role}/ann", raw, BASE, seats, ("A", "B"))


@pytest.mark.parametrize("payload, role, args", [
    ({"id": "1", "command": "misdeal"}, "dealer", {}),
    ({"id": "1", "command": "misdeal", "note": "two cards stuck"}, "floor", {"note": "two cards stuck"}),
    ({"id": "1", "command": "exposed_card", "seat": 3}, "dealer", {"seat": 3}),
    ({"id": "1", "command": "exposed_card"}, "dealer", {}),
    ({"id": "1", "command": "confirm", "irregularity": 41}, "floor", {"irregularity": 41}),
    ({"id": "1", "command": "override", "irregularity": 41, "note": "seat 3 was away"}, "floor",
     {"irregularity": 41, "note": "seat 3 was away"}),
    ({"id": "1", "command": "floor_pick", "irregularity": 41, "card": "Td"}, "floor",
     {"irregularity": 41, "card": "Td"}),
    ({"id": "1", "command": "set_button", "seat": 10}, "dealer", {"seat": 10}),
    ({"id": "1", "command": "seats", "seats": [1, 4, 9]}, "floor", {"seats": [1, 4, 9]}),
    ({"id": "1", "command": "new_hand"}, "dealer", {}),
    ({"id": "1", "command": "undo"}, "dealer", {}),
    ({"id": "1", "command": "floor_call", "seat": 2, "note": "dispute"}, "dealer", {"seat": 2, "note": "dispute"}),
    ({"id": "1", "command": "start_clock"}, "dealer", {}),
    ({"id": "1", "command": "time_bank", "seat": 2}, "dealer", {"seat": 2}),
])
def test_the_dealing_and_console_commands_are_accepted(payload, role, args):
    command = parse(payload, role)
    assert command.name == payload["command"] and command.args == args
    assert command.as_input()["command"] == payload["command"]


@pytest.mark.parametrize("payload, role, field, error", [
    ({"id": "1", "command": "confirm", "irregularity": 41}, "dealer", "role", "'dealer' may not send confirm"),
    ({"id": "1", "command": "override", "irregularity": 4}, "dealer", "role", "may not send override"),
    ({"id": "1", "command": "floor_pick", "irregularity": 4, "card": "As"}, "dealer", "role", "may not send"),
    ({"id": "1", "command": "confirm"}, "floor", "irregularity", "missing"),
    ({"id": "1", "command": "confirm", "irregularity": 0}, "floor", "irregularity", "an integer from 1 to"),
    ({"id": "1", "command": "confirm", "irregularity": "41"}, "floor", "irregularity", "expected the seq"),
    ({"id": "1", "command": "confirm", "irregularity": True}, "floor", "irregularity", "expected the seq"),
    ({"id": "1", "command": "floor_pick", "irregularity": 4, "card": "10d"}, "floor", "card", "a card, rank then suit"),
    ({"id": "1", "command": "floor_pick", "irregularity": 4, "card": "as"}, "floor", "card", "a card, rank then suit"),
    ({"id": "1", "command": "floor_pick", "irregularity": 4}, "floor", "card", "missing"),
    ({"id": "1", "command": "exposed_card", "seat": 11}, "dealer", "seat", "no seat 11"),
    ({"id": "1", "command": "set_button"}, "floor", "seat", "missing"),
    ({"id": "1", "command": "set_button", "seat": 0}, "floor", "seat", "expected a seat number, from 1, got 0"),
    ({"id": "1", "command": "seats", "seats": [1]}, "floor", "seats", "a list of 2 or more different seat numbers"),
    ({"id": "1", "command": "seats", "seats": [1, 1]}, "floor", "seats", "different seat numbers"),
    ({"id": "1", "command": "seats", "seats": [1, 12]}, "floor", "seats", "no seat 12"),
    ({"id": "1", "command": "seats", "seats": [1, "2"]}, "floor", "seats", "different seat numbers"),
    ({"id": "1", "command": "seats", "seats": "1,2"}, "floor", "seats", "expected the seats dealt in"),
    ({"id": "1", "command": "misdeal", "note": ""}, "floor", "note", "1 to 200 characters"),
    ({"id": "1", "command": "misdeal", "note": "x" * 201}, "floor", "note", "1 to 200 characters"),
    ({"id": "1", "command": "misdeal", "reason": "x"}, "floor", "reason", "unknown field for misdeal"),
    ({"id": "1", "command": "time_bank"}, "dealer", "seat", "missing"),
    ({"id": "1", "command": "new_hand", "seat": 1}, "dealer", "seat", "unknown field for new_hand"),
])
def test_a_malformed_dealing_command_names_the_field_at_fault(payload, role, field, error):
    from rfid_table.service.commands import CommandError

    with pytest.raises(CommandError) as refused:
        parse(payload, role)
    assert refused.value.field == field and error in refused.value.message and refused.value.command_id == "1"


def test_the_command_schema_names_the_same_commands_fields_and_roles_as_the_table():
    from jsonschema import Draft202012Validator

    from conftest import ROOT
    from rfid_table.service.commands import COMMANDS

    schema = json.loads((ROOT / "schemas" / "command.schema.json").read_text())
    assert schema["properties"]["command"]["enum"] == list(COMMANDS)
    for name, (roles, fields) in COMMANDS.items():
        definition = schema["$defs"][name]
        assert set(definition["properties"]) == {"id", "command", *fields}, name
        assert set(definition["required"]) == {"id", "command", *(f for f, (_t, req, _d) in fields.items() if req)}
        assert ("Floor only" in definition["description"]) == (roles == ("floor",)), name
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"id": "1", "command": "floor_pick", "irregularity": 4, "card": "Td"})
    assert not validator.is_valid({"id": "1", "command": "floor_pick", "irregularity": 4, "card": "10d"})
    assert not validator.is_valid({"id": "1", "command": "seats", "seats": [3]})


# ---- hostile commands over the real broker ----------------------------------------------------------------------

HOSTILE = [  # (payload, the field the refusal names)
    (b'{"id": "n1", "command": "ping", "x": ' + b"[" * 1500 + b"]" * 1500 + b"}", "payload"),
    (b"[" * 1500 + b"]" * 1500, "payload"),
    ({"id": "n2", "command": "set_stacks", "stacks": {"\u00b2": 100}}, "stacks"),
    ({"id": "n3", "command": "set_stacks", "stacks": {"\u0663": 100}}, "stacks"),  # an Arabic-Indic 3
    ({"id": "n4", "command": "set_stacks", "stacks": {"3\n": 100}}, "stacks"),
    (b'{"id": "n5", "command": "declare", "seat": 3, "declaration": "bet", "amount": 1' + b"0" * 4000 + b"}", "amount"),
    ({"id": "n6", "command": "set_button", "seat": 3.0}, "seat"),
    (b'{"id": "n7", "command": "set_button", "seat": NaN}', "seat"),
    (b'{"id": "n8", "command": "set_button", "seat": Infinity}', "seat"),
    (b'{"id": "n9", "command": "set_button", "seat": 1e400}', "seat"),
    (b'{"id": "n10", "command": "misdeal", "note": "caf\xe9"}', "payload"),  # Latin-1, not UTF-8
    (b'{"id": "n11", "command": "misdeal", "note": "\\ud800"}', "note"),  # a lone surrogate
    ({"id": "x" * 3000, "command": "ping"}, "id"),
    (b'{"id": "n12", "command": "ping", "command": "floor_call"}', "command"),  # given twice
    ({"id": "n13", "command": ["ping"]}, "command"),
    ({"id": "n14", "command": "ping", "": 1}, "payload"),
]


def test_hostile_commands_are_refused_by_field_and_the_table_keeps_answering(table, console):
    send, replies = console
    before = state(table)
    for payload, _field in HOSTILE:
        send(payload)
    send({"id": "after", "command": "ping"})
    assert table.run_until(lambda: len(replies) == len(HOSTILE) + 1), replies
    assert [(r["ok"], r["field"]) for r in replies[:-1]] == [(False, field) for _, field in HOSTILE]
    assert all(r["error"] and len(r["error"]) < 400 for r in replies[:-1])
    assert replies[-1] == {"id": "after", "ok": True, "seq": None}
    assert next(r for r in replies if r["field"] == "note")["id"] == "n11"  # echoed when the id itself is fine
    assert state(table) == before


def test_a_retained_command_is_refused_and_never_executed_at_arrival_or_at_a_restart(table_config, console):
    send, replies = console
    first = Table(table_config)
    try:
        seq = first.sim.pipeline.controller.seq
        send({"id": "r1", "command": "ping"}, retain=True)
        send({"id": "r2", "command": "floor_call", "note": "retained"}, retain=True)
        assert first.run_until(lambda: len(replies) == 2)
        assert [(r["id"], r["ok"], r["field"]) for r in replies] == [("r1", False, "retain"), ("r2", False, "retain")]
        assert "retain" in replies[0]["error"] and "not executed" in replies[0]["error"]
        assert first.sim.pipeline.controller.seq == seq  # no floor_call event
    finally:
        first.close()
    again = Table(table_config)  # a restart: the broker hands the retained command over at the subscription
    try:
        assert again.run_until(lambda: len(replies) == 3)
        assert (replies[2]["id"], replies[2]["ok"], replies[2]["field"]) == ("r2", False, "retain")
        send({"id": "live", "command": "floor_call", "note": "not retained"})
        assert again.run_until(lambda: len(replies) == 4)
        assert replies[3]["ok"] and replies[3]["seq"] == again.sim.pipeline.controller.seq
        assert again.sim.pipeline.diagnostics.commands["retained"] == 1
    finally:
        send(b"", retain=True)  # clears the retained message (refused like any other)
        again.run_until(lambda: len(replies) == 5)
        again.close()


def test_network_values_in_the_log_are_escaped_and_cannot_forge_a_line(table, console, caplog):
    send, replies = console
    forged = "x\nERROR rfid_table.service.journal: journal corrupt"
    with caplog.at_level("WARNING", logger="rfid_table.service.daemon"):
        send({"id": "l1", "command": "ping", forged: 1})
        # Mosquitto refuses control characters in a topic; a Unicode line separator gets through
        send({"id": "l2", "command": "reboot"}, user="eve\u2028ERROR forged")
        assert table.run_until(lambda: len(replies) == 2)
    refusals = [r.getMessage() for r in caplog.records if "refused a command" in r.getMessage()]
    assert len(refusals) == 2, refusals
    assert all("\n" not in line and "\u2028" not in line for line in refusals)
    assert "x\\nERROR rfid_table.service.journal: journal corrupt" in refusals[0]
    assert "eve\\u2028ERROR forged" in refusals[1]


# ---- the rate limit and the last line of defence, with the journal on disk --------------------------------------

class Stepper:
    """Steps a pipeline (or a simulated table) on a table clock, with the publisher's network work between."""

    def __init__(self, step, publisher, cycle_s: float = 0.05):
        self.step, self.publisher, self.cycle_s, self.t = step, publisher, cycle_s, 1000.0

    def until(self, condition, timeout_s: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < deadline:
            self.step(self.t)
            self.publisher.service(0.002)
            self.t += self.cycle_s
        return condition()


class SteppedClock:
    """A monotonic clock that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_from_one_user_is_rate_limited_and_the_journal_takes_only_what_the_limit_lets_through(
        table_config, console, tmp_path):
    send, replies = console
    clock = SteppedClock()
    journal = Journal(tmp_path / "journal.db")
    journal.open()
    publisher = MqttPublisher(table_config.mqtt, table_config.table_id, epoch=journal.epoch)
    gate = CommandGate(BASE, CommandRateLimit(per_s=10, burst=40, clock=clock))
    pipeline = TablePipeline(table_config, [], publisher, journal, command_gate=gate)
    assert publisher.start()
    run_until = Stepper(pipeline.step, publisher).until

    try:
        for i in range(2000):  # all within one instant of the (stepped) monotonic clock
            send({"id": f"f{i}", "command": "floor_call"})
        assert run_until(lambda: len(replies) == 2000), len(replies)
        accepted = [r for r in replies if r["ok"]]
        refused = [r for r in replies if not r["ok"]]
        assert len(accepted) == 40 and journal.last_seq() == 40  # the burst, and nothing more on disk
        assert {r["field"] for r in refused} == {"rate"} and refused[0]["id"] == "f40"
        assert "commands a second from floor/alice" in refused[0]["error"]
        clock.now += 1.0  # a second later: ten more
        for i in range(30):
            send({"id": f"g{i}", "command": "floor_call"})
        send({"id": "bob-1", "command": "floor_call"}, user="bob")  # another user has his own allowance
        assert run_until(lambda: len(replies) == 2031)
        assert [r["ok"] for r in replies[2000:2030]].count(True) == 10
        assert replies[-1]["id"] == "bob-1" and replies[-1]["ok"]
        assert journal.last_seq() == 51
        assert pipeline.diagnostics.commands["rate_limited"] == 1960 + 20
        assert pipeline.diagnostics.commands["accepted"] == 51
    finally:
        publisher.stop()
        journal.close()


def test_a_token_bucket_refills_with_time_and_forgets_senders_whose_bucket_is_full():
    clock = SteppedClock()
    limit = CommandRateLimit(per_s=2, burst=3, clock=clock)
    assert [limit.allow(("floor", "a")) for _ in range(4)] == [True, True, True, False]
    clock.now += 0.5
    assert [limit.allow(("floor", "a")) for _ in range(2)] == [True, False]
    for i in range(CommandRateLimit.MAX_SENDERS + 10):  # many users, each sending once
        limit.allow(("dealer", f"u{i}"))
    clock.now += 10
    limit.allow(("dealer", "last"))
    assert limit.senders <= CommandRateLimit.MAX_SENDERS
    for i in range(3 * CommandRateLimit.MAX_SENDERS):  # busy senders, all at once: still bounded
        limit.allow(("dealer", f"busy-{i}"))
    assert limit.senders <= CommandRateLimit.MAX_SENDERS


def test_an_input_that_raises_is_skipped_counted_and_logged_once_and_the_table_goes_on(
        table_config, console, tmp_path, caplog, recorder_factory):
    """The table's own console hands its commands to the controller without the MQTT parser; a console body
    without the seat its command needs makes the controller raise. Such an input is skipped: the table keeps
    what it journaled, keeps answering, and says so in diag and (once) in the log."""
    send, replies = console
    diag = recorder_factory(f"{BASE}/public/diag")
    journal = Journal(tmp_path / "journal.db")
    journal.open()
    publisher = MqttPublisher(table_config.mqtt, table_config.table_id, epoch=journal.epoch)
    sim = SimulatedTable(table_config, SimOptions(hands=None, link="direct"), publisher, journal)
    assert publisher.start()
    run_until = Stepper(sim.step, publisher, sim.cycle_s).until

    try:
        send({"id": "1", "command": "floor_call", "note": "before"})
        assert run_until(lambda: len(replies) == 1) and replies[0]["ok"]
        broken = {"id": "c1", "role": "dealer", "user": "console", "command": "set_button"}  # no seat
        with caplog.at_level("ERROR", logger="rfid_table.service.daemon"):
            sim.pipeline.submit(broken)
            sim.pipeline.submit({**broken, "id": "c2"})
            send({"id": "2", "command": "floor_call", "note": "after"})
            assert run_until(lambda: len(replies) == 2) and replies[1]["ok"]
        failures = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert len(failures) == 1, failures  # once, however often it happens
        assert "console input raised KeyError" in failures[0] and "\n" not in failures[0]
        assert [e.public.get("note") for e in journal.events_after(0)] == ["before", "after"]
        def reports() -> list[dict]:  # those published once both failures and both commands were counted
            return [r for r in (json.loads(p) for _, p, _ in diag.messages)
                    if r.get("input_errors") and r["commands"]["accepted"] == 2]

        assert run_until(reports)
        report = reports()[-1]
        assert report["input_errors"] == {"console": 2} and report["last_input_error"].startswith("console: KeyError")
        assert "INPUTS SKIPPED (their handling failed): console 2" in render(report, "online")  # rfid-table diag
    finally:
        publisher.stop()
        sim.close()
        journal.close()


# ---- the daemon itself: `rfid-table run`, stopped and started again ---------------------------------------------

def test_the_daemon_survives_hostile_and_retained_commands_at_run_time_and_at_every_start(broker, recorder_factory,
                                                                                         tmp_path):
    """The commands that stopped the daemon for good — 1,500-deep nesting, a seat written "²", a retained
    floor_call it ran again at every start — sent to the daemon's process (`rfid-table sim`: the daemon's
    pipeline and publisher, with its journal, on the simulated six-max table), stopped and started again."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from conftest import TABLE_6

    base = "rfid-table/sixmax-1"
    recorder = recorder_factory(f"{base}/replies/#")

    def replies() -> list[dict]:
        return recorder.json("/replies/floor/alice")
    command = Path(sys.executable).with_name("rfid-table")
    argv = [str(command)] if command.exists() else [sys.executable, "-m", "rfid_table.cli"]
    argv += ["sim", "--config", str(TABLE_6), "--hands", "0", "--link", "direct", "--journal",
             str(tmp_path / "journal.db"), "--host", broker.host, "--port", str(broker.port)]

    def to_table(payload, retain=False) -> None:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        publisher = make_client(MqttSettings(host=broker.host, port=broker.port), f"dealer-{time.monotonic_ns()}")
        publisher.connect(broker.host, broker.port)
        publisher.loop_start()
        publisher.publish(f"{base}/commands/floor/alice", raw, qos=1, retain=retain).wait_for_publish(5)
        publisher.disconnect()
        publisher.loop_stop()

    def wait(condition, timeout_s: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.05)
        return condition()

    def answered(command_id: str) -> bool:
        return any(r.get("id") == command_id for r in replies())

    def until_listening() -> None:
        """Ping until answered: a command sent before the daemon subscribes reaches nobody."""
        deadline = time.monotonic() + 30
        while not answered("p0"):
            assert time.monotonic() < deadline and daemon.poll() is None, "the daemon did not answer"
            to_table({"id": "p0", "command": "ping"})
            wait(lambda: answered("p0"), 1.0)

    daemon = subprocess.Popen(argv)
    try:
        until_listening()
        to_table(b'{"id": "deep", "command": "ping", "x": ' + b"[" * 1500 + b"]" * 1500 + b"}")
        to_table({"id": "sup", "command": "set_stacks", "stacks": {"\u00b2": 100}})
        to_table({"id": "kept", "command": "floor_call", "note": "retained"}, retain=True)
        to_table({"id": "p1", "command": "ping"})
        assert wait(lambda: answered("p1"))
        assert daemon.poll() is None, "the daemon stopped"
        answers = {r["id"]: r for r in replies() if r["id"]}
        # too deep to be read: the refusal cannot echo its id
        assert [(r["id"], r["field"]) for r in replies() if not r["ok"]][0] == (None, "payload")
        assert answers["sup"]["field"] == "stacks"
        assert answers["kept"]["field"] == "retain"
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(15) == 0
        before = len(replies())
        daemon = subprocess.Popen(argv)  # the broker hands the retained command over again
        assert wait(lambda: len(replies()) > before)
        assert [(r["id"], r["ok"], r["field"]) for r in replies()[before:]] == [("kept", False, "retain")]
        to_table({"id": "p2", "command": "ping"})
        assert wait(lambda: answered("p2")) and daemon.poll() is None
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(15) == 0
        with Journal(tmp_path / "journal.db") as journal:
            assert not [e for e in journal.events_after(0, limit=100_000) if e.type == "floor_call"]  # never run
    finally:
        to_table(b"", retain=True)
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)
