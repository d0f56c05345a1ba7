"""`rfid-table sim --link firmware`: the simulated dealer's hands read by the real reader firmware in MicroPython
on modelled PN5180 front ends, for a technician without a board."""

import subprocess
import sys
from pathlib import Path

from conftest import TABLE_6
from micropython_runtime import requires_micropython
from rfid_table.config.table import load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

COMMAND = Path(sys.executable).with_name("rfid-table")
RFID_TABLE = [str(COMMAND)] if COMMAND.exists() else [sys.executable, "-m", "rfid_table.cli"]


@requires_micropython
def test_sim_with_the_firmware_link_plays_a_hand_read_by_the_firmware(broker, recorder_factory, tmp_path):
    # a table id of its own: another test's table on this worker's broker publishes under sixmax-1
    table = tmp_path / "table.toml"
    table.write_text(TABLE_6.read_text(encoding="utf-8").replace('id = "sixmax-1"', 'id = "firmware-link"'),
                     encoding="utf-8")
    recorder = recorder_factory("rfid-table/firmware-link/secure/events")
    done = subprocess.run(RFID_TABLE + ["sim", "--config", str(table), "--link", "firmware", "--hands", "1",
                                        "--pace", "2", "--players", "2", "--seed", "3", "--host", broker.host,
                                        "--port", str(broker.port)], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    assert recorder.wait_for(lambda m: any(e["type"] == "hand_ended" for e in recorder.json("/secure/events")), 10)
    events = recorder.json("/secure/events")
    link = [e for e in events if e["type"] == "reader_link"]
    assert link[0]["state"] == "up" and link[0]["serial"].startswith("RT-")
    assert sum(1 for e in events if e["type"] == "card_dealt") == 4, (events, done.stderr[-3000:])


def test_the_firmware_link_runs_in_real_time_only():
    try:
        SimulatedTable(load_config(TABLE_6), SimOptions(link="firmware", speed=0), None)
    except ValueError as exc:
        assert "--speed 1" in str(exc)
    else:
        raise AssertionError("--link firmware at full speed was accepted")
