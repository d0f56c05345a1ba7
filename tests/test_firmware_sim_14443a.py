"""`rfid-table sim --link firmware` with a deck of NTAG cards: the hand dealt and read over ISO 14443-A by the reader
firmware in MicroPython on the modelled PN5180, through the broker."""

import random
import subprocess
import sys
from pathlib import Path

from conftest import TABLE_6
from micropython_runtime import requires_micropython

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]
RANKS, SUITS = "23456789TJQKA", "shdc"


def ntag_deck(seed: int = 34) -> str:
    rng = random.Random(seed)
    uids: list[str] = []
    while len(uids) < 52:
        serial = bytes(rng.randrange(256) for _ in range(6))
        uid = ("04" + serial.hex()).upper()
        if serial[2] != 0x88 and uid not in uids:
            uids.append(uid)
    cards = [rank + suit for suit in SUITS for rank in RANKS]
    return "\n".join(f'{uid} = "{card}"' for uid, card in zip(uids, cards))


def play_a_hand(link: str, broker, recorder_factory, tmp_path: Path) -> list[dict]:
    """One hand of the 6-max table with a deck of NTAG cards, read over ISO 14443-A by ``link``; its secure events.
    A table id of its own: another test's sixmax-1 on this worker's broker is not this one."""
    table_id = f"ntag-{link}"
    text = TABLE_6.read_text().replace('id = "sixmax-1"', f'id = "{table_id}"')
    text = text.replace('[readers.main]\nbackend = "sim"', '[readers.main]\nbackend = "sim"\nstandard = "iso14443a"')
    text = text.replace('active_deck = "A"', 'active_deck = "N"')
    text += "\n[decks.N]\n" + ntag_deck() + "\n"
    path = tmp_path / "table.toml"
    path.write_text(text)
    recorder = recorder_factory(f"rfid-table/{table_id}/secure/events")
    done = subprocess.run(RFID_TABLE + ["sim", "--config", str(path), "--link", link, "--hands", "1",
                                        "--pace", "2", "--players", "2", "--seed", "3", "--host", broker.host,
                                        "--port", str(broker.port)], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    assert recorder.wait_for(lambda m: any(e["type"] == "hand_ended" for e in recorder.json("/secure/events")), 10)
    return recorder.json("/secure/events")


@requires_micropython
def test_sim_with_the_firmware_link_plays_a_hand_with_a_deck_of_ntag_cards(broker, recorder_factory, tmp_path):
    events = play_a_hand("firmware", broker, recorder_factory, tmp_path)
    assert sum(1 for e in events if e["type"] == "card_dealt") == 4, [(e["type"], e.get("card")) for e in events]


def test_sim_with_the_pis_pn5180_link_plays_a_hand_with_a_deck_of_ntag_cards(broker, recorder_factory, tmp_path):
    """The same deck read by the Pi's own backend: the firmware's driver in the daemon's process."""
    dealt = [e["card"] for e in play_a_hand("pn5180", broker, recorder_factory, tmp_path) if e["type"] == "card_dealt"]
    assert len(dealt) == 4, dealt
