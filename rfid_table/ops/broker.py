"""Start a private Mosquitto on a free loopback port with the project's own configuration (shipped in the
package: :mod:`rfid_table.package_data`).

Used by the demo, the benchmark, the soak test and the tests, so none of them depends on a broker that happens to
run on the machine; ``rfid-table broker-setup`` tries the card room's configuration on the same runner
(``CardRoomBroker``), which is why it lives with the operator's tools.
"""

import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from rfid_table.package_data import CONSOLE_DIR, MOSQUITTO_DIR, NOT_DATA, OVERLAY_DIR, SCHEMA_DIR

PRIVATE_CONF = MOSQUITTO_DIR / "private.conf"
OVERLAY_USER = "overlay"  # the private broker's one user, for the pages on its WebSocket listener
CONSOLE_PAGE = "console/index.html"  # the floor's console, where install_pages puts it
COMMAND_SCHEMA_SCRIPT = "command.schema.js"  # beside the console page


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


def find_mosquitto_passwd() -> str:
    for candidate in (shutil.which("mosquitto_passwd"), "/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BrokerError("mosquitto_passwd is not installed: run 'sudo apt-get install mosquitto'")


def write_password_file(path: Path, username: str, password: str) -> None:
    """A password file with one user, made by mosquitto_passwd, which reads the password from a pipe (never from
    the command line, where ps shows it), readable by the broker alone."""
    path.touch(mode=0o600)
    done = subprocess.run([find_mosquitto_passwd(), str(path), username], input=f"{password}\n{password}\n",
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise BrokerError(f"mosquitto_passwd failed for {path}: {(done.stderr or done.stdout).strip()}")
    if os.geteuid() == 0:  # mosquitto reads the file after dropping root for its own user
        try:
            user = pwd.getpwnam("mosquitto")
            os.chown(path, user.pw_uid, user.pw_gid)
        except KeyError:  # no such user: mosquitto runs as 'nobody'
            os.chmod(path, 0o644)


def command_schema_script(schema: Path | None = None) -> str:
    """The command schema as a script that sets ``window.rfidTableCommandSchema``: the console builds its forms from
    it. A script, not the JSON file: a page opened as a local file (a broker whose WebSocket listener cannot serve
    pages, docs/broker.md) may load a script beside it, but Chromium and Firefox refuse it a fetch of a file."""
    schema = json.loads((schema or SCHEMA_DIR / "command.schema.json").read_text())
    text = json.dumps(schema, ensure_ascii=True)  # JSON in ASCII is a JavaScript expression
    return ("// Written by rfid-table from schemas/command.schema.json when the pages were installed: the commands\n"
            "// the console offers, with their fields and who may send them (docs/console.md).\n"
            f"window.rfidTableCommandSchema = {text};\n")


def install_pages(target: Path, schema: Path | None = None) -> Path:
    """The pages the brokers' WebSocket listener serves, into ``target`` (made; it must not exist): the overlay
    (``index.html``, ``overlay.js``, ``vendor/``) and the floor's console in ``console/``, which loads the overlay's
    ``vendor/mqtt.min.js`` and the command schema (``command.schema.js``, from ``schema``: by default the one the
    table validates with). The same layout served (``http_dir``) or opened as local files. Readable by everyone:
    the files hold no password."""
    shutil.copytree(OVERLAY_DIR, target, ignore=shutil.ignore_patterns(*NOT_DATA))
    console = target / Path(CONSOLE_PAGE).parent
    shutil.copytree(CONSOLE_DIR, console, ignore=shutil.ignore_patterns(*NOT_DATA))
    (console / COMMAND_SCHEMA_SCRIPT).write_text(command_schema_script(schema))
    for path in [target, *target.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return target


class PrivateBroker:
    overlay_login: tuple[str, str] | None = None  # (username, password) on the WebSocket listener, once started

    def __init__(self, conf: Path = PRIVATE_CONF, port: int | None = None):
        self.conf = conf
        self.port = port or free_port()
        self.ws_port = free_port()  # MQTT over WebSockets, and the pages (overlay, console) over HTTP
        # Ports picked here may be taken between the pick and mosquitto's bind (a client's own port, another
        # process's pick): until the first start succeeds they are picked again.
        self._repick = port is None
        self.host = "127.0.0.1"
        self._dir = tempfile.TemporaryDirectory(prefix="rfid-table-broker-")
        self._proc: subprocess.Popen | None = None
        self.log_path = Path(self._dir.name) / "mosquitto.log"
        self._overlay_password = secrets.token_urlsafe(18)  # the same after a restart: open pages log in again

    def start(self, timeout_s: float = 10.0) -> "PrivateBroker":
        for _attempt in range(3 if self._repick else 1):
            try:
                return self._start(timeout_s)
            except BrokerError as exc:
                if not (self._repick and "Address already in use" in str(exc)):
                    raise
                self.port, self.ws_port = free_port(), free_port()
        return self._start(timeout_s)

    def _start(self, timeout_s: float) -> "PrivateBroker":
        text = self.conf.read_text()
        text, count = re.subn(r"(?m)^listener\s+\d+", f"listener {self.port}", text, count=1)
        if count != 1:
            raise BrokerError(f"{self.conf}: expected a 'listener PORT' line to replace")
        # a second listener, for WebSockets: a free port too, its http_dir a copy mosquitto can read after
        # dropping root (the checkout may lie where the mosquitto user cannot enter)
        text = re.sub(r"(?m)^listener\s+9001\b", f"listener {self.ws_port}", text)
        if re.search(r"(?m)^http_dir\s", text):
            served = Path(self._dir.name) / "overlay"
            if not served.exists():
                install_pages(served)
            text = re.sub(r"(?m)^http_dir\s.*$", f"http_dir {served}", text)
        # A password file named without a directory (private.conf's WebSocket listener) is made here, with one
        # user whose credentials overlay_url() puts in the page's address.
        if re.search(r"(?m)^password_file\s+[^/\s]", text):
            passwd = Path(self._dir.name) / "passwd"
            if not passwd.exists():
                write_password_file(passwd, OVERLAY_USER, self._overlay_password)
            text = re.sub(r"(?m)^password_file\s+[^/\s].*$", f"password_file {passwd}", text)
            self.overlay_login = (OVERLAY_USER, self._overlay_password)
        conf = Path(self._dir.name) / "mosquitto.conf"
        conf.write_text(text)
        os.chmod(self._dir.name, 0o755)  # mosquitto drops root privileges and must still read its file
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen([find_mosquitto(), "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BrokerError(f"mosquitto exited at start: {self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                if "protocol websockets" in text:
                    socket.create_connection((self.host, self.ws_port), timeout=0.2).close()
                self._repick = False  # a restart keeps the ports its clients know
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise BrokerError(f"mosquitto did not listen on port {self.port} within {timeout_s} s")

    @property
    def pid(self) -> int | None:
        """The running Mosquitto's process id (None: not started, or stopped)."""
        return self._proc.pid if self._proc is not None else None

    def overlay_url(self, table: str, **query: str) -> str:
        """The overlay page on this broker's WebSocket listener, for ``table`` (docs/overlay.md), with the
        listener's login."""
        login = dict(zip(("username", "password"), self.overlay_login or ()))
        return f"http://{self.host}:{self.ws_port}/index.html?" + urlencode({"table": table, **login, **query})

    def console_url(self, table: str, **query: str) -> str:
        """The floor's console on this broker's WebSocket listener, for ``table`` (docs/console.md), with the
        listener's login: the page logs in at once (a broker without an ACL takes its commands as any role's:
        ``role`` in ``query``, the floor by default)."""
        login = dict(zip(("username", "password"), self.overlay_login or ()))
        return f"http://{self.host}:{self.ws_port}/{CONSOLE_PAGE}?" + urlencode({"table": table, **login, **query})

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def close(self) -> None:
        """Stop, and remove the broker's directory (its configuration, log, password file and page)."""
        self.stop()
        self._dir.cleanup()

    def __enter__(self) -> "PrivateBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
