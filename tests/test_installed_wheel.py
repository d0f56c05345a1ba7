"""The package as a user installs it: a wheel in a fresh virtual environment, run from outside the source tree.

Nothing may be found by walking up from a source file: the Mosquitto configurations, the overlay page, the schemas
and the example tables come from the package's own data (rfid_table/package_data.py). The wheel is built from a
copy of the tree, so files a previous build left in build/ cannot slip into it; the dependencies come from this
environment (a .pth file), so nothing is downloaded.
"""

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from micropython_runtime import MICROPYTHON, requires_micropython

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCE = (".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
              "test-output")

pytestmark = pytest.mark.skipif(not (shutil.which("mosquitto") or Path("/usr/sbin/mosquitto").exists())
                                or not shutil.which("mosquitto_passwd"),
                                reason="needs mosquitto and mosquitto_passwd (scripts/bootstrap installs them)")


def run(argv: list, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin/ directory of a fresh venv holding the wheel of this tree and nothing else of the project."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                 "-q", "-w", str(work / "dist"), str(source)], cwd=work, timeout=120)
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("rfid_table-*.whl")
    venv = work / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=work)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    done = run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                str(wheel)], cwd=work, timeout=120)
    assert done.returncode == 0, done.stderr
    # The dependencies (paho-mqtt, jsonschema, rich, ...) from this environment. A directory named in a .pth file
    # is only added to sys.path: this environment's editable install of the checkout is not activated by it.
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=work)
    Path(purelib.stdout.strip(), "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    shutil.rmtree(source)  # the installed copy must stand on its own
    return venv / "bin"


def test_the_installed_package_is_the_wheel_not_the_checkout(installed, tmp_path):
    where = run([str(installed / "python"), "-c", "import rfid_table.service.commands, rfid_table.package_data as d; "
                 "print(rfid_table.service.commands.__file__); print(d.MOSQUITTO_DIR); print(d.SCHEMA_DIR)"],
                cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.split():
        assert Path(line).is_relative_to(installed.parent), line  # inside the venv, not the source tree
    assert sorted(p.name for p in Path(where.stdout.split()[1]).iterdir() if p.suffix == ".conf") == [
        "cardroom.conf", "private.conf"]


def test_check_config_runs_from_the_installed_command(installed, tmp_path):
    for name in ("table-chips.toml", "chips-demo.toml"):  # the chip table names its registry beside it
        shutil.copy(ROOT / "config" / name, tmp_path / name)
    done = run([str(installed / "rfid-table"), "check-config", "table-chips.toml"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "table-chips.toml: OK" in done.stdout


def test_broker_setup_writes_the_card_room_configuration_and_the_overlay_from_the_package(installed, tmp_path):
    room, conf = tmp_path / "room", tmp_path / "cardroom.conf"
    done = run([str(installed / "rfid-table"), "broker-setup", "--dir", str(room), "--table", "main-1",
                "--password", "table-main-1=secret", "--install-conf", str(conf)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = conf.read_text()
    assert f"password_file {room}/passwd" in text and f"http_dir {room}/overlay" in text
    served = sorted(p.relative_to(room / "overlay").as_posix() for p in (room / "overlay").rglob("*") if p.is_file())
    shipped = sorted([*(p.relative_to(ROOT).as_posix().removeprefix("overlay/")
                        for page in ("overlay", "console") for p in (ROOT / page).rglob("*")
                        if p.is_file() and p.name != "__init__.py" and "__pycache__" not in p.parts),
                      "console/command.schema.js"])  # written from the schema the table validates with
    assert served == shipped  # the overlay and the console, and nothing of the package's own files


def test_the_private_broker_starts_from_the_installed_configuration_and_serves_the_overlay(installed, tmp_path):
    script = (
        "import json, urllib.request\n"
        "from rfid_table.ops.broker import PrivateBroker\n"
        "with PrivateBroker() as broker:\n"
        "    with urllib.request.urlopen(broker.overlay_url('main-1'), timeout=10) as got:\n"
        "        print(json.dumps({'status': got.status, 'page': got.read().decode()}))\n")
    done = run([str(installed / "python"), "-c", script], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["status"] == 200 and got["page"] == (ROOT / "overlay" / "index.html").read_text()


@requires_micropython
def test_the_modelled_reader_boots_the_firmware_shipped_in_the_package_and_it_identifies(installed, tmp_path):
    # `rfid-table sim --link firmware` and the reader benchmark run the firmware from the package, not from a
    # firmware/ directory beside sim/ that an installed wheel does not have.
    script = (
        "import sys, time, serial\n"
        "from firmware_bridge.codec import FrameDecoder\n"
        "from firmware_bridge.messages import Identify, IdentifyReply, encode_message\n"
        "from sim.pn5180 import FIRMWARE_DIR, ModelledReader, firmware_config\n"
        "class Field:\n"
        "    def tags_on(self, reader, antenna): return []\n"
        "device = ModelledReader(Field(), config=firmware_config([2]), micropython=sys.argv[1])\n"
        "port, decoder = serial.Serial(device.path, timeout=0), FrameDecoder()\n"
        "port.write(encode_message(Identify(0, 1, 0)))\n"
        "deadline = time.monotonic() + 20\n"
        "reply = None\n"
        "while reply is None and time.monotonic() < deadline:\n"
        "    reply = next((m for m in decoder.feed(port.read(4096)) if isinstance(m, IdentifyReply)), None)\n"
        "    time.sleep(0.01)\n"
        "port.close(); device.close()\n"
        "print(FIRMWARE_DIR); print(reply.antenna_count if reply else 'no answer')\n")
    done = run([str(installed / "python"), "-c", script, MICROPYTHON], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    firmware, antennas = done.stdout.split()
    assert Path(firmware).is_relative_to(installed.parent)  # the package's copy, not the source tree's
    assert antennas == "2"
