"""``rfid-table soak --room``: a small room soak end to end, and the verdict it gives on a database that lost a hand
or counts a statistic wrong (the journals are the truth)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install psycopg)")

from rfid_table.devtools import soak  # noqa: E402
from rfid_table.devtools.private_postgres import unavailable  # noqa: E402
from rfid_table.devtools.soak_room import SEATS_NAMED  # noqa: E402
from rfid_table.devtools.soak_room_check import STATISTICS, compare, truth_from_journals  # noqa: E402
from rfid_table.room.records import hand_from_event, seating_from_event  # noqa: E402
from rfid_table.room.store import Store  # noqa: E402
from tests.postgres_fixture import postgres, room_db  # noqa: E402, F401  (fixtures)

pytestmark = pytest.mark.process
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_room_soak_stores_every_hand_once_with_the_journals_statistics(capsys):
    if unavailable() is not None:
        pytest.skip(unavailable())
    # three tables as fast as they deal, one instance killed and restarted, the database restarted, players moved
    status = soak.main(["--room", "--tables", "3", "--minutes", "0.2", "--speed", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    room = report["room"]
    assert status == 0, report["problems"]
    assert report["ok"] is True and room["ok"] is True
    assert room["instance_kills"] == room["instance_restarts"] == room["database_restarts"] == 1
    assert room["hands_in_journals"] == room["hands_stored"] >= 3 * 3  # some 10 a table on a loaded machine
    assert room["hands_missing"] == room["hands_extra"] == room["hands_stored_twice"] == 0
    # 9 named players a table, and seat 1's player of each table moved to the next table: a second session
    assert room["players"] == 3 * SEATS_NAMED and room["sessions"] == 3 * SEATS_NAMED + 3
    assert room["days"] >= room["players"]  # a run across midnight has two days for some
    assert room["statistics_compared"] == (room["players"] + room["sessions"] + room["days"]) * len(STATISTICS)
    assert room["statistics_differing"] == 0
    assert room["stats_delays_measured"] > 0 and room["database_mb_per_10000_hands"] > 0


@pytest.mark.slow
def test_the_verdict_names_a_lost_hand_and_a_statistic_counted_wrong(broker, recorder_factory, room_db,  # noqa: F811
                                                                      tmp_path):
    """One table's hands stored as the room stores them, then one hand deleted and one seat's preflop raise
    forgotten: the journal says what the database should hold."""
    text = (ROOT / "config" / "table-chips.toml").read_text(encoding="utf-8")
    text = text.replace('id = "main-2"', 'id = "verdict"', 1).replace(
        'registry = "chips-demo.toml"', f'registry = "{ROOT / "config" / "chips-demo.toml"}"', 1)
    config = tmp_path / "verdict.toml"
    config.write_text(text.replace("port = 1883", f"port = {broker.port}", 1), encoding="utf-8")
    secure = recorder_factory("rfid-table/verdict/secure/events")
    status = recorder_factory("rfid-table/verdict/status")
    journal = tmp_path / "verdict.journal"
    sim = subprocess.Popen([sys.executable, "-m", "rfid_table.cli", "sim", "--config", str(config), "--link", "direct",
                            "--speed", "0", "--hands", "12", "--seed", "4", "--journal", str(journal),
                            "--host", broker.host, "--port", str(broker.port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not any(p == b"online" for _, p, _ in status.messages):
        assert time.monotonic() < deadline and sim.poll() is None, "the table did not come online"
        time.sleep(0.05)
    for seat in (1, 2, 3, 4):
        secure.client.publish("rfid-table/verdict/commands/floor/soak", json.dumps(
            {"id": f"s{seat}", "command": "seat_player", "seat": seat, "name": f"P {seat}",
             "player_id": f"p-{seat}"}), qos=1)
    assert sim.wait(timeout=240) == 0, sim.stderr.read().decode(errors="replace")[-2000:]
    secure.sync()
    with Store(room_db, "UTC") as store:
        store.migrate()
        for event in (json.loads(p) for _, p, _ in secure.messages):
            if event["type"] == "hand_history":
                store.store_hand(hand_from_event("verdict", event))
            elif event["type"] in ("player_seated", "seat_cleared"):
                store.store_seating(seating_from_event("verdict", event))
    truth = truth_from_journals({"verdict": journal})
    whole = compare(room_db, truth)
    assert whole["problems"] == [] and whole["hands_stored"] == whole["hands_in_journals"] >= 10
    assert whole["players"] == whole["sessions"] == 4
    assert whole["statistics_compared"] == (8 + whole["days"]) * len(STATISTICS)

    with psycopg.connect(room_db, autocommit=True) as conn:
        raiser = conn.execute("SELECT hand_id, seat FROM seat_facts WHERE pfr AND seat <= 4 LIMIT 1").fetchone()
        assert raiser is not None, "nobody of seats 1-4 raised before the flop in 11 hands"
        conn.execute("UPDATE seat_facts SET pfr = false WHERE hand_id = %s AND seat = %s", raiser)
    wrong = compare(room_db, truth)
    # the count over all time, the session and the day, and each percentage unless it rounds the same
    assert wrong["hands_missing"] == 0 and wrong["statistics_differing"] in (3, 6)
    assert "pfr_hands: room" in wrong["problems"][0], wrong["problems"]

    with psycopg.connect(room_db, autocommit=True) as conn:
        conn.execute("DELETE FROM hands WHERE id = (SELECT max(id) FROM hands)")
    lost = compare(room_db, truth)
    assert lost["hands_missing"] == 1 and lost["hands_stored"] == whole["hands_stored"] - 1
    assert "1 hand(s) of the journals not stored" in lost["problems"][0]
