"""Commands whose output goes into a pipe that closes early (`rfid-table diag --plain | head`): each ends at once,
quietly (no traceback), with status 141 as a tool ended by SIGPIPE, and leaves nothing half done behind."""

import dataclasses
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import Recorder
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.daemon import StopFlag
from rfid_table.service.journal import Journal
from test_end_to_end import rfid_table_command

ROOT = Path(__file__).resolve().parents[1]
EX_OUTPUT_CLOSED = 141  # 128 + SIGPIPE


def into_closed_pipe(*argv, timeout=60) -> subprocess.CompletedProcess:
    """Run the command with its stdout on a pipe whose reader has already gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(rfid_table_command() + list(map(str, argv)), stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=timeout, cwd=ROOT)
    finally:
        os.close(write)


def into_head(*argv, lines=3, timeout=60) -> tuple[int, str, str]:
    """``rfid-table ARGV | head -n LINES``: the command's status and stderr, and what head printed."""
    head = subprocess.Popen(["head", "-n", str(lines)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    command = subprocess.Popen(rfid_table_command() + list(map(str, argv)), stdout=head.stdin,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT)
    head.stdin.close()  # the command holds the pipe's write end alone, as in a shell pipeline
    shown = head.stdout.read()
    head.wait(timeout)
    try:
        status = command.wait(timeout)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    return status, command.stderr.read(), shown


def test_a_command_whose_reader_has_gone_ends_quietly_with_141(tmp_path):
    done = into_closed_pipe("check-config", "config/table-chips.toml")
    assert (done.returncode, done.stderr) == (EX_OUTPUT_CLOSED, "")
    # an error still reaches stderr, with its own status
    done = into_closed_pipe("check-config", tmp_path / "missing.toml")
    assert done.returncode == 78 and "missing.toml: cannot read the file" in done.stderr


def test_export_into_a_closed_pipe_still_writes_its_file_whole(tmp_path):
    config = dataclasses.replace(load_config(ROOT / "config" / "table-chips.toml"), broadcast_delay_s=0.0,
                                 journal_path=None)
    path = tmp_path / "main-2.journal"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    table = SimulatedTable(config, SimOptions(hands=2, seed=3, speed=0, pace_s=0.5, link="direct", players=4), None,
                           journal)
    table.pipeline.restore(time.time())
    table.run(StopFlag())
    journal.close()
    done = into_closed_pipe("export", "--journal", path, "--format", "pokerstars", "--out", tmp_path / "out")
    assert (done.returncode, done.stderr) == (EX_OUTPUT_CLOSED, "")
    (written,) = (tmp_path / "out").iterdir()
    assert written.read_text().count("PokerStars Hand #") == 2


@pytest.fixture
def playing_table(broker, tmp_path):
    """A simulated table of its own on the test broker, playing until stopped; yields its configuration."""
    shutil.copy(ROOT / "config" / "chips-demo.toml", tmp_path / "chips-demo.toml")
    config = tmp_path / "table.toml"
    config.write_text((ROOT / "config" / "table-chips.toml").read_text().replace('id = "main-2"', 'id = "pipes-1"'))
    sim = subprocess.Popen(rfid_table_command() + ["--log-level", "WARNING", "sim", "--config", str(config),
                                                   "--host", broker.host, "--port", str(broker.port), "--hands", "0",
                                                   "--seed", "4", "--speed", "2", "--link", "direct"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # playing before the test begins (and before it is stopped: a SIGTERM during its start-up would find no handler)
    status = Recorder(MqttSettings(host=broker.host, port=broker.port), "rfid-table/pipes-1/status")
    try:
        assert status.wait_for(lambda messages: any(payload == b"online" for _, payload, _ in messages), 60), \
            "the simulated table never came online"
        yield config
    finally:
        status.close()
        sim.terminate()
        assert sim.wait(30) == 0, sim.stderr.read()[-2000:]


@pytest.mark.parametrize("command", ["diag", "watch"])
def test_a_live_view_piped_into_head_ends_when_head_has_its_lines(playing_table, broker, command):
    status, err, shown = into_head(command, "--config", playing_table, "--host", broker.host, "--port", broker.port,
                                   "--plain", "--timeout", "40", lines=3)
    assert status == EX_OUTPUT_CLOSED and err == "", err[-2000:]
    first = {"diag": "table status:", "watch": "Table rfid-table/pipes-1"}[command]
    assert len(shown.splitlines()) == 3 and shown.startswith(first), shown
