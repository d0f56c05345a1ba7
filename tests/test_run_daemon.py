"""`rfid-table run`: the daemon on a serial reader (the firmware emulator on a pty, in this process), through
the real broker — started, stopped with SIGTERM, killed with SIGKILL and restarted from its journal."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TABLE_6
from rfid_table.config.table import load_config
from sim.field import TableField
from sim.firmware import FirmwareEmulator

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]


@pytest.fixture
def reader(tmp_path):
    """The table's reader: the firmware emulator on a pty, running on the wall clock, and the cards' field."""
    config = load_config(TABLE_6)
    field = TableField(config.zones)
    emulator = FirmwareEmulator(field, reader="main", antenna_count=12, cycle_s=0.05,
                                link_path=tmp_path / "reader-main")
    emulator.start()
    yield field, emulator, {card: uid for uid, card in config.decks["A"].items()}
    emulator.close()


@pytest.fixture
def table_file(tmp_path, reader):
    _field, emulator, _uid = reader
    text = TABLE_6.read_text().replace('backend = "sim"', f'backend = "serial"\nport = "{emulator.path}"')
    text = text.replace('path = "/var/lib/rfid-table/sixmax-1.journal"', f'path = "{tmp_path / "journal.db"}"')
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def start_daemon(table_file, broker) -> subprocess.Popen:
    return subprocess.Popen(RFID_TABLE + ["run", "--config", str(table_file), "--host", broker.host,
                                          "--port", str(broker.port)])


def secure_events(recorder) -> list[dict]:
    return recorder.json("/secure/events")


def test_the_daemon_reads_a_serial_reader_publishes_diagnostics_and_stops_cleanly(reader, table_file, broker,
                                                                                 recorder_factory):
    field, emulator, uid = reader
    recorder = recorder_factory("rfid-table/sixmax-1/#")
    daemon = start_daemon(table_file, broker)
    try:
        assert recorder.wait_for(lambda m: any(t.endswith("/status") and p == b"online" for t, p, _ in m), 15)
        for card, zone in (("As", "seat1.cards"), ("8d", "seat2.cards"), ("Kd", "seat1.cards"),
                           ("8c", "seat2.cards")):
            field.place(uid[card], zone)
        assert recorder.wait_for(lambda m: sum(1 for e in secure_events(recorder) if e["type"] == "card_dealt") == 4)
        dealt = {(e["seat"], e["card"]) for e in secure_events(recorder) if e["type"] == "card_dealt"}
        assert dealt == {(1, "As"), (1, "Kd"), (2, "8d"), (2, "8c")}
        links = [e for e in secure_events(recorder) if e["type"] == "reader_link"]
        assert links[0]["state"] == "up" and links[0]["serial"] == "EMU-0001"

        def dealt_in_diag(_messages) -> bool:  # a report taken once the cards lay there (one may come before)
            reports = recorder.json("/public/diag")
            return bool(reports) and reports[-1]["zones"].get("seat2.cards") == 2

        assert recorder.wait_for(dealt_in_diag, 10), recorder.json("/public/diag")[-1:]
        report = recorder.json("/public/diag")[-1]
        main = report["readers"]["main"]
        assert main["link"] == "up" and main["cycles_per_s"] > 5 and main["frames"]["ok"] > 0
        assert report["zones"]["seat1.cards"] == 2 and report["zones"]["seat2.cards"] == 2
        view = subprocess.run(RFID_TABLE + ["diag", "--config", str(table_file), "--host", broker.host, "--port",
                                            str(broker.port), "--plain", "--timeout", "2"],
                              capture_output=True, text=True, timeout=30)
        assert "reader main: link up" in view.stdout and "frames: ok" in view.stdout, view.stdout + view.stderr
        assert "seat1.cards 2" in view.stdout

        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(15) == 0
        assert recorder.wait_for(lambda m: [p for t, p, _ in m if t.endswith("/status")][-1] == b"offline")
    finally:
        if daemon.poll() is None:
            daemon.kill()


KILL_AFTER = {2: 4, 6: 8, 9: 10}  # move index → game events published by then (hand start, cards, fold …)
OFF_THE_DEAL = ("reader_link", "equity")  # events beside the deal's (equity comes from its own process, when it may)
# Game events published once each move is read: the first card starts the hand, the first mucked card folds
# seat 3 (the second adds nothing).
PUBLISHED_AFTER = [2, 3, 4, 5, 6, 7, 8, None, 9, 10, 11, 12]


def game_seqs(recorder) -> set[int]:
    return {e["seq"] for e in secure_events(recorder) if e["type"] not in OFF_THE_DEAL}


def test_killed_and_restarted_the_daemon_continues_the_hand_from_its_journal(reader, table_file, broker,
                                                                            recorder_factory):
    """kill -9 three times mid-hand: each start restores the hand from the journal, nothing is lost, and a
    redelivered copy is the same event, flagged ``replay`` (docs/mqtt.md, "Delivery")."""
    field, emulator, uid = reader
    recorder = recorder_factory("rfid-table/sixmax-1/secure/events")
    deal = [("As", "seat1.cards"), ("8d", "seat2.cards"), ("2c", "seat3.cards"), ("Kd", "seat1.cards"),
            ("8c", "seat2.cards"), ("3c", "seat3.cards"), ("2c", "muck"), ("3c", "muck"), ("Qs", "burn"),
            ("Jh", "board"), ("Th", "board"), ("4s", "board")]
    daemon = start_daemon(table_file, broker)
    try:
        for i, (card, zone) in enumerate(deal):
            field.place(uid[card], zone)
            if i in KILL_AFTER:  # kill -9 in the middle of the hand, three times, and start again
                # ... once what that card caused has been published
                assert recorder.wait_for(lambda m: len(game_seqs(recorder)) >= KILL_AFTER[i], 15), \
                    " ".join(f"{e['seq']}:{e['type']}:{e.get('card')}" for e in secure_events(recorder))
                daemon.send_signal(signal.SIGKILL)
                daemon.wait(10)
                daemon = start_daemon(table_file, broker)
            elif PUBLISHED_AFTER[i] is not None:  # one card at a time, in the dealing order
                assert recorder.wait_for(lambda m: len(game_seqs(recorder)) >= PUBLISHED_AFTER[i], 15), \
                    f"move {i} ({card} to {zone}) was not published"

        def complete(_messages) -> bool:
            seqs = {e["seq"] for e in secure_events(recorder)}
            return sum(1 for e in secure_events(recorder) if e["type"] == "board_card") >= 3 \
                and seqs == set(range(1, max(seqs) + 1))

        assert recorder.wait_for(complete, 20)
        by_seq = {}
        for event in secure_events(recorder):  # at least once: drop the copies by seq
            first = {k: v for k, v in by_seq.setdefault(event["seq"], event).items() if k != "replay"}
            assert first == {k: v for k, v in event.items() if k != "replay"}, "two different events with one seq"
        history = [by_seq[s] for s in sorted(by_seq)]
        assert [e["seq"] for e in history] == list(range(1, len(history) + 1))  # nothing lost
        game = [(e["type"], e.get("seat"), e.get("card")) for e in history if e["type"] not in OFF_THE_DEAL]
        assert game == [("hand_started", None, None),
                        ("card_dealt", 1, "As"), ("card_dealt", 2, "8d"), ("card_dealt", 3, "2c"),
                        ("card_dealt", 1, "Kd"), ("card_dealt", 2, "8c"), ("card_dealt", 3, "3c"),
                        ("fold", 3, None), ("burn", None, "Qs"),
                        ("board_card", None, "Jh"), ("board_card", None, "Th"), ("board_card", None, "4s")]
        assert len({e["hand"] for e in history if e["type"] != "reader_link"}) == 1  # one hand, restored each time
    finally:
        daemon.kill()
        daemon.wait(10)
