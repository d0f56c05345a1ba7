"""`rfid-table room export` and `rfid-table room check-config`, as a user runs them.

A simulated session with chips is journaled; its events, as the secure feed carries them, are stored in a real
PostgreSQL; the room's export of that table must be, hand for hand, what `rfid-table export` writes from the
table's own journal (the same formatters, the same dates), and pokerkit must read the PokerStars text back.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install psycopg)")

from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.room.records import hand_from_event, start_from_event
from rfid_table.room.store import Store
from rfid_table.service.daemon import StopFlag
from rfid_table.service.journal import Journal
from tests.postgres_fixture import postgres, room_db  # noqa: F401  (fixtures)

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]
COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]
HANDS = 8


@pytest.fixture(scope="module")
def journal_path(tmp_path_factory) -> Path:
    config = dataclasses.replace(load_config(ROOT / "config" / "table-chips.toml"), broadcast_delay_s=0.0,
                                 journal_path=None)
    path = tmp_path_factory.mktemp("room-export") / "main-2.journal"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=HANDS, seed=11, speed=0, pace_s=0.5, link="direct", players=6,
                                              players_style="random"), None, journal)
    table.pipeline.restore(time.time())
    table.run(StopFlag())
    journal.close()
    return path


def feed_events(path: Path) -> list[dict]:
    """The journal's events as the secure feed carries them (its stamps the room's wall clock)."""
    journal = Journal(path, table_id="main-2")
    assert journal.open().ok
    events, seq = [], 0
    while batch := journal.events_after(seq, 1000):
        events += [{"seq": e.seq, "type": e.type, "t": e.wall, "hand": e.hand, "epoch": "e-export", **e.public,
                    **e.secret} for e in batch]
        seq = batch[-1].seq
    journal.close()
    return events


def room_toml(tmp_path: Path, dsn: str) -> Path:
    path = tmp_path / "room.toml"
    path.write_text(f'[room]\nid = "export"\n[database]\ndsn = "{dsn}"\n', encoding="utf-8")
    return path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RFID_TABLE, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_room_export_is_the_tables_own_export(journal_path, room_db, tmp_path):
    with Store(room_db) as store:
        store.migrate()
        for event in feed_events(journal_path):
            if event["type"] == "hand_history":
                store.store_hand(hand_from_event("main-2", event))
            elif event["type"] == "hand_started":
                store.store_start(start_from_event("main-2", event))
        assert store.hand_count() == HANDS
    room = room_toml(tmp_path, room_db)
    for fmt, suffix in (("pokerstars", ".txt"), ("ohh", ".ohh")):
        out = tmp_path / f"room{suffix}"
        done = run("room", "export", "--config", str(room), "--format", fmt, "--table", "main-2", "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert f"{HANDS} hands as {fmt}" in done.stderr
        table_dir = tmp_path / f"table-{fmt}"
        done = run("export", "--journal", str(journal_path), "--format", fmt, "--out", str(table_dir))
        assert done.returncode == 0, done.stderr
        [table_file] = table_dir.iterdir()
        assert out.read_text(encoding="utf-8") == table_file.read_text(encoding="utf-8")
    pokerkit = pytest.importorskip("pokerkit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hands = list(pokerkit.HandHistory.from_pokerstars((tmp_path / "room.txt").read_text(), error_status=True))
    assert len(hands) == HANDS
    # a selection the store has no hand of: an empty file, and says so
    done = run("room", "export", "--config", str(room), "--format", "ohh", "--player", "nobody")
    assert done.returncode == 0 and done.stdout == "" and "0 hands as ohh" in done.stderr
    done = run("room", "export", "--config", str(room), "--format", "ohh", "--day", "yesterday")
    assert done.returncode == 64 and "--day 'yesterday' is no date" in done.stderr


def test_export_without_the_database_says_so(tmp_path):
    room = room_toml(tmp_path, "host=127.0.0.1 port=1 dbname=none user=room connect_timeout=2")
    done = run("room", "export", "--config", str(room), "--format", "ohh")
    assert done.returncode == 69 and "the database cannot be read" in done.stderr


def test_check_config_reports_every_problem_with_its_line(tmp_path):
    """`rfid-table check-config` knows a room's file from a table's, and checks it as `room check-config` does."""
    good = run("check-config", str(ROOT / "config" / "room.toml"))
    assert good.returncode == 0 and "OK — room main-room" in good.stdout, good.stderr
    bad = tmp_path / "room.toml"
    bad.write_text('[room]\nid = "a/b"\nfeed = "public"\n\n[mqtt]\nport = 0\n\n[database]\n', encoding="utf-8")
    done = run("check-config", str(bad))
    assert done.returncode == 78
    assert done.stderr == run("room", "check-config", str(bad)).stderr  # one checker
    assert f"{bad}:2: room.id: expected letters, digits, '-' or '_'" in done.stderr
    assert f"{bad}:3: room.feed: expected 'secure'" in done.stderr
    assert f"{bad}:6: mqtt.port: expected a port from 1 to 65535, got 0" in done.stderr
    assert f"{bad}:8: database.dsn: missing" in done.stderr


def test_the_rooms_file_in_the_docs_is_valid(tmp_path):
    text = (ROOT / "docs" / "room.md").read_text(encoding="utf-8")
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "room.toml"
    path.write_text(example, encoding="utf-8")
    done = run("check-config", str(path))
    assert done.returncode == 0, done.stderr
    assert "room main-room: the tables' secure events under rfid-table/" in done.stdout


def test_each_players_net_is_what_the_tables_stacks_say(journal_path, room_db):
    """What the store counts a seat won and put in (an uncalled bet back excepted) is the change of its stack in
    the table's own PHH record (starting and finishing stacks), on hands with all-ins and side pots."""
    from controller import phh as phhlib  # noqa: PLC0415

    expected = {}
    with Store(room_db) as store:
        store.migrate()
        for event in feed_events(journal_path):
            if event["type"] == "hand_history":
                store.store_hand(hand_from_event("main-2", event))
                phh = phhlib.loads(event["phh_complete"])
                for seat, start, end in zip(phh["seats"], phh["starting_stacks"], phh["finishing_stacks"]):
                    expected[(event["hand"], seat)] = end - start
        rows = store.db.execute("SELECT h.hand, p.seat, p.won - p.put_in AS net FROM hand_players p "
                                "JOIN hands h ON h.id = p.hand_id").fetchall()
    assert {(r["hand"], r["seat"]): r["net"] for r in rows} == expected
    assert any(net < -5000 for net in expected.values())  # an all-in lost: the random players' hands
