"""The demo as a newcomer runs it: what it installs, the dealer's errors and the floor's answers it shows, and its
own log file."""

import os
import re
import shutil
import subprocess
from pathlib import Path

from test_end_to_end import rfid_table_command
from test_watch import CHIP_TABLE, Frames, fresh_chip_table, run  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[1]
TEST_ONLY_PACKAGES = ("shellcheck", "udev", "systemd", "openssl")


def stubbed_checkout(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A copy of the scripts on a machine that lacks the test tools: apt-get, pip and rfid-table only record what
    they are asked to do."""
    repo, tools, record = tmp_path / "repo", tmp_path / "bin", tmp_path / "asked"
    (repo / "scripts").mkdir(parents=True)
    for script in ("bootstrap", "demo", "test"):
        shutil.copy(ROOT / "scripts" / script, repo / "scripts" / script)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    tools.mkdir()
    for path, name in ((tools / "apt-get", "apt-get"), (venv / "python", "python"),
                       (venv / "rfid-table", "rfid-table")):
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> {record}\n')
        path.chmod(0o755)
    for tool in ("bash", "python3", "sha1sum", "cut", "rm", "touch", "id", "dirname", "env"):
        # the system's tools, and nothing else: no shellcheck, udevadm, systemd-analyze
        os.symlink(shutil.which(tool, path="/usr/bin:/bin"), tools / tool)
    return repo, record, {"PATH": str(tools), "HOME": str(tmp_path)}


def test_the_demo_installs_only_what_it_needs_and_the_tests_install_everything(tmp_path):
    repo, record, env = stubbed_checkout(tmp_path)
    done = subprocess.run([str(repo / "scripts" / "demo"), "--hands", "1"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    asked = record.read_text()
    assert not any(package in asked for package in TEST_ONLY_PACKAGES), asked
    assert "python -m pip install -q -e .\n" in asked and "[test]" not in asked
    assert "rfid-table demo --hands 1" in asked
    record.unlink()
    done = subprocess.run([str(repo / "scripts" / "bootstrap")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    asked = record.read_text()
    assert all(f" {package}" in asked for package in ("shellcheck", "udev", "systemd")), asked
    assert "python -m pip install -q -e .[test]" in asked


def test_the_simulated_dealer_errs_at_the_rate_asked_and_the_floor_answers(fresh_chip_table):
    """`sim --dealer-errors` on the demo's chip table: the live view shows the misdeal, the exposed card, and the
    simulated floor's answer to what waited for it."""
    broker = fresh_chip_table
    port = ["--host", broker.host, "--port", broker.port]
    watcher = Frames(["watch", "--config", CHIP_TABLE, *port, "--plain", "--exit-after-hands", "12", "--timeout",
                      "120"])
    watcher.wait_for(lambda f: "waiting for the table" in f)
    # twenty times real time: the view draws every event, as it does at the demo's pace
    sim = run("sim", "--config", CHIP_TABLE, *port, "--hands", "10", "--seed", "5", "--speed", "20",
              "--link", "direct", "--dealer-errors", "0.5", "--floor-answers", "2", "--absences-per-hand", "0.2")
    assert sim.returncode == 0, sim.stderr
    assert watcher.proc.wait(120) == 0, watcher.proc.stderr.read()
    seen = "\n".join(watcher.frames)
    assert re.search(r"IRREGULARITY first cards exposed \(stop\): misdeal", seen)
    assert re.search(r"MISDEAL \(first cards exposed\): deal again, the button stays on seat \d+", seen)
    assert re.search(r"IRREGULARITY hole card exposed \(warning\): burn card", seen)
    assert re.search(r"FLOOR (confirmed|overridden) .* \(#\d+\)", seen)
    assert "bet ruling" not in seen and "chip count" not in seen  # the table read every hand dealt again


def test_the_demo_has_help_for_its_options_and_a_log_of_its_own():
    help_text = " ".join(run("demo", "--help").stdout.split())
    assert "--seed SEED random seed of the simulated table" in help_text
    assert "--dealer-errors P chance per deal that the simulated dealer makes a dealing error (default 0.2)" \
        in help_text
    demos = [subprocess.Popen(rfid_table_command() + ["demo", "--hands", "1", "--speed", "0", "--seed", str(seed)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    logs = []
    for demo in demos:
        out, err = demo.communicate(timeout=120)
        assert demo.returncode == 0, err
        logs.append(re.search(r"simulated table log: (\S+)", out).group(1))
    assert logs[0] != logs[1]
    for log in logs:
        assert re.search(r"done: \d+ hands", Path(log).read_text())  # a misdeal makes a deal of its own
        Path(log).unlink()
