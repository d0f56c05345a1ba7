"""The example client a developer of a floor or stats system starts from (examples/folds_and_winners.py), run as
they would run it, against simulated tables through a real broker: it prints every fold, every hand's winners (a
chip table's winnings, a cards-only table's best hand) and every misdeal — and each hand's result comes before its
hand_ended, as docs/mqtt.md promises."""

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, TABLE_6, Recorder
from test_watch import CHIP_TABLE, run

EXAMPLE = ROOT / "examples" / "folds_and_winners.py"


def what_the_client_must_print(table_id: str, events: list[dict]) -> list[str]:
    """Worked out here from the events as published."""
    lines = []
    for e in events:
        where = f"{table_id} hand {e['hand']}"
        if e["type"] == "fold":
            lines.append(f"{where}: seat {e['seat']} folds")
        elif e["type"] == "showdown":
            won = [f"seat {s} wins {e['payouts'].get(str(s), 'by the cards')}" for s in e["winners"]]
            lines.append(f"{where}: {', '.join(won) or 'no winner read'}")
        elif e["type"] == "hand_ended" and e["misdeal"]:
            lines.append(f"{where}: misdeal, nobody wins")
    return lines


@pytest.mark.parametrize("source, table_id, seed", [(CHIP_TABLE, "example-chips", "1"), (TABLE_6, "example-cards", "1")],
                         ids=["chips", "cards only"])
def test_the_example_client_prints_each_fold_and_each_hands_winners(broker, mqtt_settings, tmp_path: Path, source,
                                                                     table_id, seed):
    table = tmp_path / "table.toml"  # a table of its own on this worker's broker, with its chip registry beside it
    if (source.parent / "chips-demo.toml").exists():
        shutil.copy(source.parent / "chips-demo.toml", tmp_path)
    table.write_text(source.read_text(encoding="utf-8").replace('id = "main-2"', f'id = "{table_id}"')
                     .replace('id = "sixmax-1"', f'id = "{table_id}"'), encoding="utf-8")
    recorder = Recorder(mqtt_settings, f"rfid-table/{table_id}/public/events")
    client = subprocess.Popen([sys.executable, str(EXAMPLE), broker.host, str(broker.port), table_id],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert client.stdout.readline().startswith(f"following rfid-table/{table_id}/public/events"), \
            client.stderr.read()
        sim = run("sim", "--config", table, "--host", broker.host, "--port", broker.port, "--hands", "6",
                  "--seed", seed, "--speed", "0", "--link", "direct", "--dealer-errors", "0.3")
        assert sim.returncode == 0, sim.stderr
        recorder.sync()
        events = recorder.json("/public/events")
        expected = what_the_client_must_print(table_id, events)
        assert any("folds" in line for line in expected) and any(" wins " in line for line in expected)
        assert any("misdeal" in line for line in expected), "the seed deals no misdeal: pick another"
        # each hand's result before its end; a misdealt hand has none
        for hand in {e["hand"] for e in events if e["type"] == "hand_ended"}:
            of_hand = [e["type"] for e in events if e["hand"] == hand and e["type"] in ("showdown", "hand_ended")]
            misdealt = any(e["type"] == "hand_ended" and e["hand"] == hand and e["misdeal"] for e in events)
            assert of_hand == (["hand_ended"] if misdealt else ["showdown", "hand_ended"]), (hand, of_hand)
        printed: list[str] = []
        reader = threading.Thread(target=lambda: printed.extend(line.rstrip("\n") for line in client.stdout),
                                  daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while len(printed) < len(expected) and time.monotonic() < deadline and reader.is_alive():
            reader.join(0.05)  # the client prints as the broker delivers: wait for its lines, not a guess
        assert printed[:len(expected)] == expected
        if source == TABLE_6:
            assert any("wins by the cards" in line for line in printed)
    finally:
        client.terminate()
        client.wait(10)
        recorder.close()
