"""A table built from readers one buys (Metratec, Feig): their backends play hands end to end through the simulated
table and the broker, their configuration is checked like every other, and `rfid-table reader-emulator` serves one
alone to a client, which the daemon reads as it would a real reader (diag, register-chips).

The protocols and emulators themselves: tests/test_metratec.py, tests/test_feig.py.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, TABLE_6
from rfid_table.config.checker import ConfigError
from rfid_table.config.table import load_config
from test_run_daemon import RFID_TABLE

KINDS = ("metratec", "feig")
EXAMPLES = {"metratec": ROOT / "config" / "table-metratec.toml", "feig": ROOT / "config" / "table-feig.toml"}


@pytest.mark.parametrize("kind", KINDS)
def test_sim_plays_a_hand_read_through_a_reader_one_buys(kind, broker, recorder_factory):
    """`rfid-table sim --link KIND`: the dealer's cards lie on the emulated reader's antennas, the backend reads them
    over its maker's protocol on a pseudo-terminal, the table publishes the hand."""
    recorder = recorder_factory("rfid-table/sixmax-1/secure/events")
    done = subprocess.run(RFID_TABLE + ["sim", "--config", str(TABLE_6), "--link", kind, "--hands", "1", "--pace", "1",
                                        "--players", "2", "--seed", "3", "--host", broker.host, "--port",
                                        str(broker.port)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert recorder.wait_for(lambda m: any(e["type"] == "hand_ended" for e in recorder.json("/secure/events")), 10)
    events = recorder.json("/secure/events")
    up = [e for e in events if e["type"] == "reader_link"]
    assert up[0]["state"] == "up" and up[0]["antennas"] == 12
    dealt = [(e["seat"], e["card"]) for e in events if e["type"] == "card_dealt"]
    assert len(dealt) == 4 and {seat for seat, _ in dealt} == {1, 2}, dealt


def test_the_link_of_a_reader_one_buys_runs_in_real_time_only():
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable  # noqa: PLC0415

    for kind in KINDS:
        with pytest.raises(ValueError, match="--speed 1"):
            SimulatedTable(load_config(TABLE_6), SimOptions(link=kind, speed=0), None)


@pytest.mark.parametrize("kind", KINDS)
def test_the_example_tables_of_readers_one_buys_pass_check_config(kind):
    done = subprocess.run(RFID_TABLE + ["check-config", str(EXAMPLES[kind])], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    config = load_config(EXAMPLES[kind])
    assert {reader.backend for reader in config.readers.values()} == {kind}
    assert sum(reader.antennas for reader in config.readers.values()) >= 24  # cards and chips of 10 seats


MISTAKES = [
    # (backend, the reader's lines, the problem's key and words)
    ("metratec", 'port = "/dev/ttyACM0"\nhost = "10.0.0.7"\nantennas = 4',
     "readers.main.host", "either port"),
    ("metratec", "antennas = 4", "readers.main.port", "or host"),
    ("feig", 'host = "10.0.0.7"\nantennas = 4', "readers.main.host", "not used by backend 'feig'"),
    ("feig", 'port = "/dev/ttyUSB0"\nantennas = 3\nchannels = ["1.1", "1.9", "1.3"]', "readers.main.channels",
     "antenna 2: '1.9'"),
    ("feig", 'port = "/dev/ttyUSB0"\nantennas = 3\nchannels = ["1.1", "1.2"]', "readers.main.channels",
     "2 channels for 3 antennas"),
    ("feig", 'port = "/dev/ttyUSB0"\nantennas = 2\nchannels = ["1.1", "1.1"]', "readers.main.channels", "twice"),
    ("feig", 'port = "/dev/ttyUSB0"\nantennas = 2\nchannels = ["1.3", "1.3.5"]', "readers.main.channels",
     "puts a multiplexer there"),
    ("feig", 'port = "/dev/ttyUSB0"\nantennas = 2\nbus_address = 300', "readers.main.bus_address",
     "a bus address from 0 to 255"),
    ("metratec", 'port = "/dev/ttyUSB0"\nantennas = 2\nbus_address = 3', "readers.main.bus_address",
     "not used by backend 'metratec'"),
]


@pytest.mark.parametrize("backend,lines,key,words", MISTAKES)
def test_a_mistake_in_a_reader_one_buys_is_named_with_its_line(backend, lines, key, words, tmp_path):
    text = TABLE_6.read_text().replace('[readers.main]\nbackend = "sim"\nantennas = 12\ncycle_ms = 50',
                                       f'[readers.main]\nbackend = "{backend}"\n{lines}')
    assert f'backend = "{backend}"' in text
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    problems = [p for p in raised.value.problems if p.key == key]
    assert problems and words in problems[0].message, [p.render(str(path)) for p in raised.value.problems]
    line = problems[0].line  # the key's line, or the reader's table where a key is missing
    assert line is not None and (key.rsplit(".", 1)[1] in text.split("\n")[line - 1]
                                 or text.split("\n")[line - 1] == "[readers.main]")


def start_emulator(kind: str, where: str, tags: Path, antennas: int = 12) -> tuple[subprocess.Popen, str]:
    """`rfid-table reader-emulator`, and the first line it prints: the pty's path or the TCP port."""
    place = ["--tcp", "0"] if where == "tcp" else ["--pty"]
    process = subprocess.Popen(RFID_TABLE + ["reader-emulator", "--kind", kind, *place, "--tags", str(tags),
                                             "--antennas", str(antennas)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline().strip()
    assert first, process.stderr.read()
    return process, first


def stopped(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(15)
    finally:
        if process.poll() is None:
            process.kill()


@pytest.mark.parametrize("kind,where", [("metratec", "tcp"), ("feig", "pty")])
def test_a_technician_registers_chips_and_runs_the_table_on_an_emulated_reader(kind, where, broker, recorder_factory,
                                                                               tmp_path):
    """What a technician does with a reader one buys, on its emulator alone: register chips on an antenna, run the
    table (two cards lying on seat 1 are dealt to it), and watch `diag` show each antenna's reads."""
    uid = {card: tag for tag, card in load_config(TABLE_6).decks["A"].items()}
    chips = [f"E0040150E100{i:04X}" for i in range(1, 6)]
    tags = tmp_path / "tags.toml"
    tags.write_text(f'[antennas]\n1 = ["{uid["As"]}", "{uid["Kd"]}"]\n10 = [{", ".join(f"{c!r}" for c in chips)}]\n'
                    .replace("'", '"'))
    emulator, first = start_emulator(kind, where, tags)
    try:
        reader = f'host = "127.0.0.1"\ntcp_port = {first}' if where == "tcp" else f'port = "{first}"'
        text = TABLE_6.read_text().replace('backend = "sim"', f'backend = "{kind}"\n{reader}')
        text = text.replace('path = "/var/lib/rfid-table/sixmax-1.journal"', f'path = "{tmp_path / "journal.db"}"')
        config = tmp_path / "table.toml"
        config.write_text(text)
        registry = tmp_path / "chips.toml"
        done = subprocess.run(RFID_TABLE + ["register-chips", str(registry), "--set", "main", "--denomination", "25",
                                            "--count", "5", "--config", str(config), "--antenna", "10"],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        assert all(chip in registry.read_text() for chip in chips)

        recorder = recorder_factory("rfid-table/sixmax-1/#")
        daemon = subprocess.Popen(RFID_TABLE + ["run", "--config", str(config), "--host", broker.host, "--port",
                                                str(broker.port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        try:
            def dealt(_messages) -> set:
                return {(e["seat"], e["card"]) for e in recorder.json("/secure/events") if e["type"] == "card_dealt"}

            assert recorder.wait_for(lambda m: dealt(m) == {(1, "As"), (1, "Kd")}, 20), recorder.json("/secure/events")

            def antennas_read(_messages) -> bool:
                reports = recorder.json("/public/diag")
                rates = reports[-1]["readers"]["main"]["reads_per_s"] if reports else {}
                return rates.get("1", 0) > 0 and rates.get("10", 0) > 0

            assert recorder.wait_for(antennas_read, 15), recorder.json("/public/diag")[-1:]
            view = subprocess.run(RFID_TABLE + ["diag", "--config", str(config), "--host", broker.host, "--port",
                                                str(broker.port), "--plain", "--timeout", "2"],
                                  capture_output=True, text=True, timeout=30)
            assert "reader main: link up" in view.stdout and "antenna reads/s: 1:" in view.stdout, view.stdout
            assert " ms   reconnects" in view.stdout.split("a pass ", 1)[1]  # the reader's pace, whatever its speed
            last = [frame for frame in view.stdout.split("\n\n") if frame.strip()][-1]
            assert "nothing published yet" not in last  # reports came: diag waits for nothing
        finally:
            assert stopped(daemon) == 0, daemon.stderr.read()[-2000:]
    finally:
        assert stopped(emulator) == 0


def test_a_tags_file_with_a_mistake_is_named_with_its_line(tmp_path):
    tags = tmp_path / "tags.toml"
    tags.write_text('[antennas]\n1 = ["E004015000000001"]\n2 = ["not a uid"]\n')
    done = subprocess.run(RFID_TABLE + ["reader-emulator", "--kind", "metratec", "--pty", "--tags", str(tags)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and f"{tags}:3: antennas.2: 'not a uid' is not an ISO 15693 UID" in done.stderr
