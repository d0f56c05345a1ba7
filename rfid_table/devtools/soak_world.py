"""The world the soak runs: its private broker, with the card room's queue limits, and the simulated tables, each an
``rfid-table sim`` process with a configuration of its own, which the soak itself starts, reaps and stops.
"""

import os
import re
import signal
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rfid_table.ops.broker import PRIVATE_CONF, PrivateBroker
from rfid_table.config.table import load_config
from rfid_table.package_data import CONFIG_DIR, MOSQUITTO_DIR

TEMPLATES = (CONFIG_DIR / "table-6max.toml", CONFIG_DIR / "table-10.toml")
ROOM_TEMPLATES = (CONFIG_DIR / "table-chips.toml",)  # the room stores the hands of tables with chips
CARDROOM_CONF = MOSQUITTO_DIR / "cardroom.conf"
# Taken from the card room's broker configuration into the soak's private broker: how many QoS 1 messages the
# broker holds for a subscriber that falls behind. Mosquitto's default (1000, what private.conf has) is ~1.5 s
# of 50 tables for one subscriber of both feeds; past it the broker drops messages for that subscriber.
CARDROOM_QUEUE_SETTINGS = ("max_queued_messages", "max_queued_bytes", "set_tcp_nodelay")


def soak_broker_conf(directory: Path) -> tuple[Path, int | None]:
    """private.conf plus the card room's queue limits; returns the file and its max_queued_messages."""
    settings = [line for line in CARDROOM_CONF.read_text().splitlines()
                if line.split(maxsplit=1)[:1] and line.split(maxsplit=1)[0] in CARDROOM_QUEUE_SETTINGS]
    path = directory / "mosquitto-soak.conf"
    path.write_text(PRIVATE_CONF.read_text() + "\n# From cardroom.conf (rfid_table/devtools/soak.py):\n"
                    + "\n".join(settings) + "\n")
    limit = next((int(line.split()[1]) for line in settings if line.split()[0] == "max_queued_messages"), None)
    return path, limit


def start_broker(conf: Path) -> PrivateBroker:
    """Ctrl-C in a terminal reaches the whole foreground process group. The broker must outlive it, so that the
    tables can still deliver what they hold while the soak stops them: it starts with SIGINT blocked (the
    signal mask is inherited across exec). The tables run in sessions of their own for the same reason."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return PrivateBroker(conf).start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# ---- the tables ------------------------------------------------------------------------------------------


@dataclass
class Table:
    """One table's process and what is known of it: the soak itself starts it and reaps it (os.wait4), so this
    record, not a ``subprocess.Popen``, says whether it runs (``exited``) and how it ended (``exit_code``)."""

    table_id: str
    config: Path
    journal: Path | None
    stderr: Path
    pid: int | None = None  # None: not started
    started: float = 0.0
    exited: float | None = None  # reaped at (wall time): the pid is no longer the table's
    exit_code: int | None = None
    cpu_s: float = 0.0
    maxrss_kb: int = 0


# How a table's process begins (os.posix_spawn has no hook to run code before the exec): SIGTERM should the soak
# itself die, so that no table runs on (PR_SET_PDEATHSIG, kept across the exec), and yielding the CPU to the broker
# and the checking subscriber, so that on a machine too small for the load the tables fall behind (reported)
# rather than the observer (which would count losses that the broker's queue limit makes of its own starvation).
# Its arguments: the soak's pid, the niceness, then the table's command.
_TABLE_START = """\
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit("the soak ended before this table started")
if int(sys.argv[2]):
    os.nice(int(sys.argv[2]))
os.execv(sys.argv[3], sys.argv[3:])
"""


def _spawn_table(command: list[str], stderr: Path, niceness: int) -> int:
    """Start a table's process in a session of its own, without stdin or stdout, its stderr into ``stderr``; returns
    its pid, which only :func:`_reap` waits for (a ``subprocess.Popen`` would wait for it too, if only when it is
    collected, and might then reap another child that got the same pid)."""
    argv = [sys.executable, "-c", _TABLE_START, str(os.getpid()), str(niceness), *command]
    return os.posix_spawn(sys.executable, argv, os.environ, setsid=True, file_actions=[
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(stderr), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)])


def make_configs(count: int, directory: Path, templates: list[Path]) -> list[tuple[str, Path]]:
    """One configuration per table: a copy of a template (taken in turn) with a distinct ``[table] id``."""
    width = max(2, len(str(count - 1)))
    made = []
    for i in range(count):
        table_id = f"soak-{i:0{width}d}"
        template = templates[i % len(templates)]
        text, n = re.subn(r'(?m)^id\s*=\s*"[^"]*"', f'id = "{table_id}"', template.read_text(), count=1)
        if n != 1:
            raise ValueError(f"{template}: no [table] id line to replace")
        text = re.sub(r'(?m)^name\s*=\s*"[^"]*"', f'name = "Soak table {i} ({template.stem})"', text, count=1)
        # the copy lives elsewhere: a registry named relative to the template is named from its directory
        text = re.sub(r'(?m)^registry\s*=\s*"([^"/][^"]*)"',
                      lambda m: f'registry = "{(template.parent / m.group(1)).resolve()}"', text)
        path = directory / f"{table_id}.toml"
        path.write_text(text)
        config = load_config(path)
        if config.table_id != table_id:
            raise ValueError(f"{template}: the first 'id =' line is not [table] id")
        made.append((table_id, path))
    return made


def read_journal(path: Path) -> dict | None:
    """Epoch, last seq and acknowledged seqs of a journal, read without writing to it; None when absent."""
    if not path.exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        epoch = db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        last = db.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
        delivered = dict(db.execute("SELECT feed, seq FROM delivery").fetchall())
    finally:
        db.close()
    return {"epoch": epoch[0] if epoch else None, "last_seq": last, "delivered": delivered}


def _reap(table: Table, block: bool) -> bool:
    """Collect an exited table with its rusage (os.wait4: its own CPU time and peak memory), once: after that its
    pid is never waited for or signalled again."""
    if table.exited is not None:
        return True
    pid, status, usage = os.wait4(table.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return False
    table.exited = time.time()
    table.exit_code = os.waitstatus_to_exitcode(status)
    table.cpu_s = usage.ru_utime + usage.ru_stime
    table.maxrss_kb = usage.ru_maxrss
    return True


def _running(table: Table) -> bool:
    """Started and not reaped yet: its pid is still the table's (at worst a zombie), safe to signal."""
    return table.pid is not None and table.exited is None


def _stop_tables(tables: list[Table], timeout_s: float = 30.0) -> list[str]:
    problems = []
    for table in tables:
        if _running(table):
            os.kill(table.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(_reap(t, block=False) for t in tables if t.pid is not None):
        time.sleep(0.05)
    for table in tables:
        if _running(table):
            problems.append(f"{table.table_id} did not stop within {timeout_s:.0f} s of SIGTERM; killed")
            os.kill(table.pid, signal.SIGKILL)
            _reap(table, block=True)
    return problems
