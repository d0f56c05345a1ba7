"""Start a private Mosquitto on a free loopback port with the project's own configuration.

Used by the demo, the benchmark and the tests, so none of them depends on a broker that happens to run on
the machine.
"""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PRIVATE_CONF = PROJECT_ROOT / "config" / "mosquitto" / "private.conf"


class BrokerError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_mosquitto() -> str:
    for candidate in (shutil.which("mosquitto"), "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BrokerError("mosquitto is not installed: run 'sudo apt-get install mosquitto' (scripts/demo does it)")


class PrivateBroker:
    def __init__(self, conf: Path = PRIVATE_CONF, port: int | None = None):
        self.conf = conf
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self._dir = tempfile.TemporaryDirectory(prefix="rfid-table-broker-")
        self._proc: subprocess.Popen | None = None
        self.log_path = Path(self._dir.name) / "mosquitto.log"

    def start(self, timeout_s: float = 10.0) -> "PrivateBroker":
        text = self.conf.read_text()
        text, count = re.subn(r"(?m)^listener\s+\d+", f"listener {self.port}", text, count=1)
        if count != 1:
            raise BrokerError(f"{self.conf}: expected a 'listener PORT' line to replace")
        conf = Path(self._dir.name) / "mosquitto.conf"
        conf.write_text(text)
        os.chmod(self._dir.name, 0o755)  # mosquitto drops root privileges and must still read its file
        log = open(self.log_path, "wb")
        self._proc = subprocess.Popen([find_mosquitto(), "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BrokerError(f"mosquitto exited at start: {self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise BrokerError(f"mosquitto did not listen on port {self.port} within {timeout_s} s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def __enter__(self) -> "PrivateBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self._dir.cleanup()
