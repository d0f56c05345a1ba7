"""Logging in to the broker from the viewers (``watch``, ``diag``) and the simulated table, and saying what happens.

The password never has to be on the command line, where ``ps`` shows it to every user of the machine: like
Mosquitto's own clients, which read their options from a private file instead, the commands take
``--password-file FILE`` (its first line) or the environment variable ``RFID_TABLE_PASSWORD``.

A refused login is an error, said once with the broker's reason; a broker that cannot be reached is waited for,
and the viewers say what they are waiting for.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt

from rfid_table.config.table import MqttSettings
from rfid_table.mqtt import make_client

PASSWORD_ENV = "RFID_TABLE_PASSWORD"
EX_NOPERM = 77  # sysexits.h: the broker refused these credentials
EX_UNAVAILABLE = 69  # sysexits.h: the broker never answered within the time given
PASSWORD_HELP = (f"The password need not be on the command line, where ps shows it to every user of the machine: "
                 f"like Mosquitto's own clients, which keep it in an options file, give --password-file FILE (its "
                 f"first line) or set the environment variable {PASSWORD_ENV}.")


class LoginError(ValueError):
    """Credentials that cannot be used as given (an unreadable password file)."""


def read_password(password_file: str | None, environ: dict | None = None) -> str | None:
    """The password: the first line of ``password_file``, else ``$RFID_TABLE_PASSWORD``, else None."""
    environ = os.environ if environ is None else environ
    if password_file:
        path = Path(password_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise LoginError(f"--password-file {path}: cannot read: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise LoginError(f"--password-file {path}: not UTF-8 text") from None
        lines = text.splitlines()
        if not lines or not lines[0]:
            raise LoginError(f"--password-file {path}: the first line is empty")
        return lines[0]
    return environ.get(PASSWORD_ENV) or None


def with_login(settings: MqttSettings, username: str | None, password_file: str | None) -> MqttSettings:
    """``settings`` with the login of the command line; the configuration's own otherwise."""
    password = read_password(password_file)
    if username:
        if password is None and username == settings.username:
            return settings  # the configuration's own login
        return dataclasses.replace(settings, username=username, password=password)
    if password is not None:
        if not settings.username:
            raise LoginError("a password without a user name: give --username too")
        return dataclasses.replace(settings, password=password)
    return settings


@dataclass
class LinkState:
    """What the connection to the broker is doing, for a viewer to show (updated from paho's thread)."""

    host: str
    port: int
    connected: bool = False
    refused: str | None = None  # the broker's reason for a refused login: final
    unreachable: str | None = None  # why the last attempt to reach the broker failed
    attempts: int = 0

    def waiting_for(self) -> str | None:
        """A line saying what the viewer waits for, or None once connected."""
        if self.connected:
            return None
        if self.unreachable:
            return (f"waiting for the broker at {self.host}:{self.port}: {self.unreachable} "
                    "(is Mosquitto running there? retrying)")
        return f"connecting to the broker at {self.host}:{self.port} …"


    def exit_status(self, command: str, username: str | None, err) -> int:
        """At the end of a viewer: a refused login or a broker never reached is said once and is the exit status."""
        if self.refused:
            print(f"rfid-table {command}: {self.refused} (user {username or '(none)'} at {self.host}:{self.port})",
                  file=err)
            return EX_NOPERM
        if not self.connected and self.unreachable:
            print(f"rfid-table {command}: gave up: {self.waiting_for()}", file=err)
            return EX_UNAVAILABLE
        return 0


def refused_text(reason_code) -> str:
    return f"the broker refused the login: {reason_code}"


def connect_viewer(client: mqtt.Client, settings: MqttSettings, state: LinkState, changed: threading.Event,
                   stop: threading.Event, retry_s: float = 2.0) -> None:
    """Reach the broker in the background: each failed attempt's reason goes to ``state``; once the TCP
    connection stands, paho's loop takes over (its own reconnects after a later loss)."""

    def attempt() -> None:
        while not stop.is_set():
            state.attempts += 1
            try:
                client.connect(settings.host, settings.port, keepalive=settings.keepalive)
            except (OSError, socket.gaierror) as exc:
                state.unreachable = exc.strerror or str(exc) or type(exc).__name__
                changed.set()
                stop.wait(retry_s)
                continue
            state.unreachable = None
            client.loop_start()
            return

    threading.Thread(target=attempt, name="broker-connect", daemon=True).start()


def probe_login(settings: MqttSettings, timeout_s: float = 5.0) -> str | None:
    """Log in once and out again: the broker's reason if it refuses these credentials; None when it accepts them
    or cannot be reached within ``timeout_s`` (an outage, which the caller rides out)."""
    client = make_client(settings, f"rfid-table-login-check-{os.getpid()}-{time.monotonic_ns() % 100000}")
    answer: dict = {}
    done = threading.Event()

    def on_connect(client, userdata, flags, reason_code, properties):
        answer["code"] = reason_code
        done.set()

    client.on_connect = on_connect
    try:
        client.connect(settings.host, settings.port, keepalive=settings.keepalive)
    except OSError:
        return None
    client.loop_start()
    try:
        done.wait(timeout_s)
    finally:
        client.disconnect()
        client.loop_stop()
    code = answer.get("code")
    return refused_text(code) if code is not None and code.is_failure else None
