"""The whole chain from the code that is flashed to the Pico to an MQTT subscriber: the reader firmware
(firmware/) runs unmodified in the MicroPython unix port on the register-level PN5180 board model
(sim/pn5180.py), fed from the simulated table, behind a pty; the real `rfid-table run` reads it and publishes
through the real broker. A hand with a 30-chip bet, a muck of 40 cards, a broken antenna and an unplug."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT
from micropython_runtime import requires_micropython
from rfid_table.config.table import load_config
from sim.field import TableField
from sim.pn5180 import ModelledReader, firmware_config

pytestmark = requires_micropython

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]
TABLE = ROOT / "config" / "table-chips.toml"
# Card antennas 25 ms; the muck and the betting zones, where stacks lie, up to 400 ms (a stack of 40 is read
# whole in one dwell; the dwell ends as soon as every collision is resolved).
MAIN_SCHEDULE = [(antenna, 25) for antenna in range(12)] + [(12, 400)]
CHIPS_SCHEDULE = [(antenna, 400) for antenna in range(11)]


@pytest.fixture
def table(tmp_path):
    """The shipped two-reader table, each reader the firmware on its own modelled Pico."""
    config = load_config(TABLE)
    field = TableField(config.zones)
    main = ModelledReader(field, reader="main", config=firmware_config([7, 6], MAIN_SCHEDULE),
                          link_path=tmp_path / "reader-main")
    chips = ModelledReader(field, reader="chips", config=firmware_config([6, 5], CHIPS_SCHEDULE),
                           link_path=tmp_path / "reader-chips")
    text = TABLE.read_text()
    for name, reader in (("main", main), ("chips", chips)):
        text = text.replace(f'[readers.{name}]\nbackend = "sim"', f'[readers.{name}]\nbackend = "serial"\n'
                                                                   f'port = "{reader.path}"')
    text = text.replace("antennas = 16", "antennas = 13")
    text = text.replace('path = "/var/lib/rfid-table/main-2.journal"', f'path = "{tmp_path / "journal.db"}"')
    text = text.replace('registry = "chips-demo.toml"', f'registry = "{ROOT / "config" / "chips-demo.toml"}"')
    # The unix port reaches the board model over a socket, a few times slower per SPI frame than the Pico's
    # own bus: a cycle takes longer than on the board, so tags are given longer before they count as gone.
    text = text.replace("absent_after_ms = 600", "absent_after_ms = 2500")
    text = text.replace("absent_after_ms = 1000", "absent_after_ms = 3000")
    path = tmp_path / "table.toml"
    path.write_text(text)
    chip_uids = list(tomllib.loads((ROOT / "config" / "chips-demo.toml").read_text())["sets"]["demo"])
    yield path, field, main, chips, {card: uid for uid, card in config.decks["A"].items()}, chip_uids
    for reader in (main, chips):
        reader.close()


def test_a_hand_read_by_the_firmware_on_modelled_pn5180s_reaches_the_subscriber(table, broker, recorder_factory):
    path, field, main, chips, uid, chip_uids = table
    recorder = recorder_factory("rfid-table/main-2/#")
    daemon = subprocess.Popen(RFID_TABLE + ["run", "--config", str(path), "--host", broker.host,
                                            "--port", str(broker.port)])

    def events(kind=None):
        return [e for e in recorder.json("/secure/events") if kind is None or e["type"] == kind]

    def diag():
        reports = recorder.json("/public/diag")
        return reports[-1] if reports else None

    try:
        assert recorder.wait_for(lambda m: len([e for e in events("reader_link") if e["state"] == "up"]) == 2, 20), \
            main.firmware_log() + chips.firmware_log()
        up = {e["reader"]: e for e in events("reader_link")}
        assert up["main"]["serial"].startswith("RT-E6614C311B4F7A25-7x6-")

        for card, zone in (("As", "seat1.cards"), ("8d", "seat2.cards"), ("Kd", "seat1.cards"),
                           ("8c", "seat2.cards")):
            field.place(uid[card], zone)
        assert recorder.wait_for(lambda m: len(events("card_dealt")) == 4, 15)
        assert {(e["seat"], e["card"]) for e in events("card_dealt")} == {(1, "As"), (1, "Kd"), (2, "8d"),
                                                                          (2, "8c")}

        for chip in chip_uids[:30]:  # a 30-chip bet: one stack on one antenna
            field.place(chip, "seat1.bets")
        assert recorder.wait_for(lambda m: (diag() or {}).get("zones", {}).get("seat1.bets") == 30, 20), diag()

        # The hand is over: 40 cards in the muck, read whole through the collisions of one stack.
        for card_uid in list(uid.values())[:40]:
            field.place(card_uid, "muck")
        assert recorder.wait_for(lambda m: (diag() or {}).get("zones", {}).get("muck") == 40, 20), diag()

        main.break_antenna(2, "open")  # seat3's card antenna loses its coil
        assert recorder.wait_for(lambda m: any(e["state"] == "fault" and e["reader"] == "main"
                                               for e in events("antenna")), 10)
        main.mend_antenna(2)
        assert recorder.wait_for(lambda m: any(e["state"] == "ok" and e["reader"] == "main"
                                               for e in events("antenna")), 10)

        main.unplug()
        assert recorder.wait_for(lambda m: any(e["state"] == "down" and e["reader"] == "main"
                                               for e in events("reader_link")), 5)
        main.replug()  # the Pico boots again; the host reconnects with its backoff
        assert recorder.wait_for(lambda m: len([e for e in events("reader_link") if e["state"] == "up"
                                                and e["reader"] == "main"]) == 2, 15)
        assert main.boots == 2
    finally:
        daemon.terminate()
        daemon.wait(15)
