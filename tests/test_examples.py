"""The example client a developer of a floor or stats system starts from (examples/folds_and_winners.py), run as
they would run it, against a simulated chip table through a real broker: it prints every fold, every misdeal and
every hand's winnings the table published."""

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import ROOT, Recorder
from test_watch import CHIP_TABLE, run

EXAMPLE = ROOT / "examples" / "folds_and_winners.py"


def test_the_example_client_prints_each_fold_and_each_hands_winner(broker, mqtt_settings, tmp_path: Path):
    table = tmp_path / "table.toml"  # a table of its own on this worker's broker, with its chip registry beside it
    shutil.copy(CHIP_TABLE.with_name("chips-demo.toml"), tmp_path)
    table.write_text(CHIP_TABLE.read_text(encoding="utf-8").replace('id = "main-2"', 'id = "example-1"'),
                     encoding="utf-8")
    recorder = Recorder(mqtt_settings, "rfid-table/example-1/public/events")
    client = subprocess.Popen([sys.executable, str(EXAMPLE), broker.host, str(broker.port), "example-1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert client.stdout.readline().startswith("following rfid-table/example-1/public/events"), \
            client.stderr.read()
        sim = run("sim", "--config", table, "--host", broker.host, "--port", broker.port, "--hands", "6",
                  "--seed", "1", "--speed", "0", "--link", "direct", "--dealer-errors", "0.3")
        assert sim.returncode == 0, sim.stderr
        recorder.sync()
        events = recorder.json("/public/events")
        # what the client must print, worked out here from the events as published
        expected = []
        for e in events:
            where = f"example-1 hand {e['hand']}"
            if e["type"] == "fold":
                expected.append(f"{where}: seat {e['seat']} folds")
            elif e["type"] == "misdeal":
                expected.append(f"{where}: misdeal, nobody wins")
            elif e["type"] == "showdown":
                expected.append(f"{where}: " + ", ".join(f"seat {s} wins {n}" for s, n in e["payouts"].items()))
        assert any("folds" in line for line in expected) and any("wins" in line for line in expected)
        assert any("misdeal" in line for line in expected), "the seed deals no misdeal: pick another"
        printed = []
        reader = threading.Thread(target=lambda: printed.extend(line.rstrip("\n") for line in client.stdout),
                                  daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while len(printed) < len(expected) and time.monotonic() < deadline and reader.is_alive():
            reader.join(0.05)  # the client prints as the broker delivers: wait for its lines, not a guess
        assert printed[:len(expected)] == expected
    finally:
        client.terminate()
        client.wait(10)
        recorder.close()
