"""A private PostgreSQL: Debian's server binaries, a cluster made with initdb in a temporary directory, started with
pg_ctl on a free port. The room's tests (tests/postgres_fixture.py) and the room's soak (``rfid-table soak --room``)
both use it, as both use :class:`rfid_table.ops.broker.PrivateBroker` for Mosquitto.

The server runs as the ``postgres`` user when this runs as root (initdb refuses root). ``fsync`` is off: such a
cluster is thrown away at the end, and the room's durability is PostgreSQL's, not what is measured here.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from rfid_table.ops.broker import free_port


class PostgresUnavailable(RuntimeError):
    """No private PostgreSQL can be made here; the message says what to install."""


def find_pg_bin() -> Path | None:
    """The directory of Debian's server binaries (initdb and pg_ctl are not on PATH there), newest version first."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]), reverse=True)
    return Path(found[0]).parent if found else None


@dataclass
class PrivatePostgres:
    bin_dir: Path
    root: Path
    port: int
    user: str | None  # the system user the server runs as (None: this process's)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def dsn(self) -> str:
        return self.dsn_of("postgres")

    def dsn_of(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=room dbname={database}"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin_dir / args[0]), *args[1:]], user=self.user, capture_output=True,
                              text=True, timeout=120, check=False, cwd=self.root, stdin=subprocess.DEVNULL)

    def init(self) -> None:
        done = self._run("initdb", "-D", str(self.data), "-U", "room", "--auth=trust", "-E", "UTF8",
                         "--locale=C.UTF-8", "--no-sync")
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr[-2000:]}")

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        done = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w",
                         "-t", "60", "start")
        if done.returncode:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"pg_ctl start failed: {done.stderr[-1000:]} {log}")

    def stop(self) -> None:
        """``pg_ctl stop -m fast``: the clients are disconnected, their transactions rolled back."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def database(self, name: str) -> str:
        """A new, empty database; its connection string."""
        import psycopg  # noqa: PLC0415

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn_of(name)


def unavailable() -> str | None:
    """Why no private PostgreSQL can be made here (what to install), or None."""
    if find_pg_bin() is None:
        return ("PostgreSQL's server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql "
                "(scripts/bootstrap does it)")
    try:
        import psycopg  # noqa: F401, PLC0415
    except ImportError:
        return "psycopg 3 is not installed in this environment (pip install psycopg)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A PostgreSQL cluster of its own, started; stopped and removed at the end. :class:`PostgresUnavailable` when
    :func:`unavailable` says why not."""
    why = unavailable()
    if why is not None:
        raise PostgresUnavailable(why)
    bin_dir = find_pg_bin()
    user = None
    root = Path(tempfile.mkdtemp(prefix="rfid-table-pg-"))
    try:
        if os.geteuid() == 0:  # initdb refuses to run as root: the server runs as Debian's postgres user
            entry = pwd.getpwnam("postgres")
            user = "postgres"
            os.chown(root, entry.pw_uid, entry.pw_gid)
        server = PrivatePostgres(bin_dir, root, free_port(), user)
        server.init()
        server.start()
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
