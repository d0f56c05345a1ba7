"""Player names: the floor seats a player with a display name (and a player id), and clears the seat; validated,
journaled, in both snapshots, as events on both branches, and in the hand histories."""

import dataclasses
import json
import time
import tomllib

import pytest

from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.journal import Journal
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from conftest import ROOT, ListSink

BASE = "rfid-table/main-1"


def seat(table, number, name, **extra):
    table.pipeline.submit({"id": f"s{number}", "command": "seat_player", "seat": number, "name": name,
                           "role": "floor", "user": "anna", **extra})


def test_names_over_mqtt_are_validated_answered_and_published(table_config, mqtt_settings, recorder_factory):
    recorder = recorder_factory(f"{BASE}/#")
    publisher = MqttPublisher(table_config.mqtt, table_config.table_id, epoch="names")
    table = SimulatedTable(table_config, SimOptions(hands=None, link="direct"), publisher)
    assert publisher.start()
    replies = []
    tablet = make_client(MqttSettings(host=mqtt_settings.host, port=mqtt_settings.port), "names-tablet")
    tablet.on_message = lambda c, u, m: replies.append(json.loads(m.payload))
    tablet.connect(mqtt_settings.host, mqtt_settings.port)
    tablet.subscribe(f"{BASE}/replies/#", qos=1)
    tablet.loop_start()
    try:
        time.sleep(0.2)
        commands = [
            ("floor", {"id": "1", "command": "seat_player", "seat": 3, "name": "Anna Müller", "player_id": "p-17"}),
            ("floor", {"id": "2", "command": "seat_player", "seat": 4, "name": "<script>"}),
            ("floor", {"id": "3", "command": "seat_player", "seat": 4, "name": "  Bob"}),
            ("floor", {"id": "4", "command": "seat_player", "seat": 4, "name": "B" * 33}),
            ("floor", {"id": "5", "command": "seat_player", "seat": 11, "name": "Bob"}),
            ("dealer", {"id": "6", "command": "seat_player", "seat": 4, "name": "Bob"}),
            ("floor", {"id": "7", "command": "seat_player", "seat": 5, "name": "Ann", "player_id": "p-17"}),
            ("floor", {"id": "8", "command": "seat_player", "seat": 4, "name": "李小龍"}),
            ("floor", {"id": "9", "command": "clear_seat", "seat": 4}),
            ("floor", {"id": "10", "command": "clear_seat", "seat": 4}),
        ]
        for role, body in commands:
            tablet.publish(f"{BASE}/commands/{role}/anna", json.dumps(body).encode(), qos=1)
        t = 1000.0
        deadline = time.monotonic() + 10
        while len(replies) < len(commands) and time.monotonic() < deadline:
            table.step(t)
            publisher.service(0.01)
            t += table.cycle_s
        answers = {r["id"]: r for r in replies}
        assert answers["1"]["ok"] and answers["8"]["ok"] and answers["9"]["ok"]
        assert (answers["2"]["field"], answers["3"]["field"], answers["4"]["field"]) == ("name", "name", "name")
        assert "'<' is not allowed" in answers["2"]["error"] and "33 characters" in answers["4"]["error"]
        assert answers["5"]["field"] == "seat" and answers["6"]["field"] == "role"
        assert "p-17 already sits at seat 3" in answers["7"]["error"]
        assert "no player to clear" in answers["10"]["error"]
        for _ in range(20):  # the snapshot follows within its interval
            table.step(t)
            publisher.service(0.01)
            t += 0.05
        assert recorder.wait_for(lambda m: any(b'"seat_cleared"' in p for t_, p, _ in m if t_.endswith("public/events")))
        for branch in ("public", "secure"):
            events = [e for e in recorder.json(f"{branch}/events") if e["type"] in ("player_seated", "seat_cleared")]
            assert [(e["type"], e["seat"], e["name"]) for e in events] == [
                ("player_seated", 3, "Anna Müller"), ("player_seated", 4, "李小龍"), ("seat_cleared", 4, "李小龍")]
            assert events[0]["player_id"] == "p-17" and events[0]["by"] == "floor/anna"
            snapshot = recorder.json(f"{branch}/snapshot")[-1]
            players = {s["seat"]: s["player"] for s in snapshot["seats"]}
            assert players[3] == {"name": "Anna Müller", "player_id": "p-17"} and players[4] is None
    finally:
        tablet.disconnect()
        tablet.loop_stop()
        publisher.stop()
        table.close()


def test_names_are_in_the_hand_history_and_survive_a_restart(tmp_path):
    config = load_config(ROOT / "config" / "table-chips.toml")
    config = dataclasses.replace(config, broadcast_delay_s=0.0, broadcast_equity=False, journal_path=None)
    journal = Journal(tmp_path / "journal.db")
    journal.open()
    sink = ListSink()
    table = SimulatedTable(config, SimOptions(hands=1, seed=3, speed=0, pace_s=0.3, link="direct", players=4),
                           sink, journal)
    names = {1: "Anna", 2: "Bo Li", 3: "Chris O'Neil", 4: "Dana"}
    for number, name in names.items():
        seat(table, number, name, player_id=f"p-{number}")
    t = 1000.0
    while table.advance(t):
        table.step(t)
        t += table.cycle_s
    table.close()
    history = next(e for e in sink.events if e.type == "hand_history")
    for text in (history.public["phh"], history.secret["phh_complete"]):
        phh = tomllib.loads(text)
        assert phh["players"] == [names[s] for s in phh["seats"]]
    journal.close()

    again = Journal(tmp_path / "journal.db")
    again.open()
    restored = SimulatedTable(config, SimOptions(hands=0, link="direct"), ListSink(), again)
    restored.pipeline.restore(t)
    players = {s["seat"]: s["player"] for s in restored.pipeline.controller.snapshot(secure=False)["seats"]}
    assert players[2] == {"name": "Bo Li", "player_id": "p-2"} and players[5] is None
    restored.close()
    again.close()


@pytest.mark.parametrize("name,problem", [("", "0 characters"), ("a\tb", "character .* is not allowed"),
                                          ("Anna ", "spaces"), ("Anna  B", "spaces"), ("Anna\n", "not allowed")])
def test_a_bad_name_says_what_is_wrong(name, problem):
    from rfid_table.service.commands import CommandError, parse_command

    with pytest.raises(CommandError, match=problem) as refused:
        parse_command(f"{BASE}/commands/floor/anna", json.dumps({"id": "1", "command": "seat_player", "seat": 1,
                                                                  "name": name}).encode(), BASE, 10, ("A",))
    assert refused.value.field == "name"
