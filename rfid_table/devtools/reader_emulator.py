"""``rfid-table reader-emulator``: one emulated reader of a kind one buys (Metratec, Feig), alone, with tags lying on
its antennas as a file says: for a technician trying a client, or another program's client, without the reader.

    $ rfid-table reader-emulator --kind metratec --tcp 10001 --tags tags.toml
    10001
    (runs until Ctrl-C or SIGTERM)

The first line of output is what a client connects to: the pseudo-terminal's path (``--pty``) or the TCP port
(``--tcp``; 0 picks a free one). The tags file is TOML, each antenna number mapped to the UIDs lying on it::

    [antennas]
    1 = ["E004015000000001", "E004015000000002"]
    3 = ["E0040150000000A7"]
"""

from __future__ import annotations

import importlib
import re
import signal
import sys
import tempfile
import threading
from pathlib import Path

from rfid_table.config.checker import Checker, ConfigError, parse_toml, read_config_text

KINDS = ("metratec", "feig")
UID = re.compile(r"^E0[0-9A-F]{14}$")  # an ISO 15693 UID as printed, most significant byte first
MAX_ANTENNAS = 64


class StaticTags:
    """Tags that lie still: antenna number → the UIDs on it (what the emulators read as their field)."""

    version = 0  # nothing ever moves

    def __init__(self, tags: dict[int, list[str]]):
        self.tags = tags

    def tags_on(self, reader: str, antenna: int) -> list[str]:
        return list(self.tags.get(antenna, ()))


def load_tags(path: str) -> dict[int, list[str]]:
    """The tags file: antenna number → UIDs; every problem named with its line (a :class:`ConfigError`)."""
    text = read_config_text(path)
    doc = parse_toml(path, text)
    c = Checker(text)
    c.table(doc, (), {"antennas": "a table: antenna number → the UIDs lying on it"})
    antennas = doc.get("antennas", {})
    if not isinstance(antennas, dict):
        c.problem(("antennas",), "expected a table: antenna number → the UIDs lying on it")
        antennas = {}
    tags: dict[int, list[str]] = {}
    seen: dict[str, str] = {}
    for key, uids in (antennas or {}).items():
        where = ("antennas", key)
        if not (key.isdigit() and 1 <= int(key) <= MAX_ANTENNAS):
            c.problem(where, f"expected an antenna number from 1 to {MAX_ANTENNAS}")
            continue
        if not isinstance(uids, list) or not all(isinstance(uid, str) for uid in uids):
            c.problem(where, "expected a list of tag UIDs such as [\"E004015000000001\"]")
            continue
        for uid in uids:
            if not UID.match(uid.upper()):
                c.problem(where, f"{uid!r} is not an ISO 15693 UID (16 hexadecimal digits starting E0)")
            elif uid.upper() in seen:
                c.problem(where, f"{uid} lies on antenna {seen[uid.upper()]} already")
            else:
                seen[uid.upper()] = key
        tags[int(key)] = [uid.upper() for uid in uids]
    if c.problems:
        raise ConfigError(path, c.problems)
    return tags


def run(kind: str, pty: bool, tcp_port: int | None, tags_path: str | None, antennas: int | None) -> int:
    """Run one emulated reader until SIGINT or SIGTERM; the exit status."""
    try:
        tags = load_tags(tags_path) if tags_path else {}
    except ConfigError as exc:
        print(f"rfid-table reader-emulator: {exc}", file=sys.stderr)
        return 2
    count = antennas or max(4, max(tags, default=0))
    if tags and max(tags) > count:
        print(f"rfid-table reader-emulator: --antennas {count}, but the tags file has antenna {max(tags)}",
              file=sys.stderr)
        return 2
    protocol = importlib.import_module(f"firmware_bridge.{kind}")
    emulators = importlib.import_module(f"sim.{kind}")
    try:
        channels = protocol.default_channels(count)
    except ValueError as exc:
        print(f"rfid-table reader-emulator: --antennas {count}: {exc}", file=sys.stderr)
        return 2
    emulator_class = emulators.MetratecEmulator if kind == "metratec" else emulators.FeigEmulator
    field = StaticTags(tags)
    with tempfile.TemporaryDirectory(prefix="rfid-table-reader-") as work:
        try:
            if pty:
                emulator = emulator_class(field, antennas=count, channels=channels,
                                          link_path=Path(work) / f"reader-{kind}")
                where = emulator.path
            else:
                emulator = emulator_class(field, antennas=count, channels=channels, tcp_port=tcp_port)
                where = str(emulator.tcp_port)
        except (OSError, TypeError, ValueError) as exc:  # a port taken; a reader without TCP (TypeError)
            print(f"rfid-table reader-emulator: cannot start the {kind} emulator: {exc}", file=sys.stderr)
            return 1
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        emulator.start()
        print(where, flush=True)
        print(f"{kind} reader emulated with {count} antennas and {sum(map(len, tags.values()))} tags; "
              "Ctrl-C ends it", file=sys.stderr, flush=True)
        try:
            stop.wait()
        finally:
            emulator.close()
    return 0
