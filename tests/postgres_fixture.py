"""A private PostgreSQL for the room's tests: Debian's server binaries, a cluster made with initdb in a temporary
directory, started with pg_ctl on a free port, as conftest.py's broker fixture starts Mosquitto.

Import the fixture in a test module (``from tests.postgres_fixture import postgres``). Tests that need it are
skipped, with the reason, when the binaries are absent (``scripts/bootstrap`` installs the ``postgresql`` package).
The server runs as the ``postgres`` user when the tests run as root (initdb refuses root).
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

import pytest

from rfid_table.ops.broker import free_port


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
        return f"host=127.0.0.1 port={self.port} user=room dbname=postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin_dir / args[0]), *args[1:]], user=self.user, capture_output=True,
                              text=True, timeout=120, check=False, cwd=self.root)

    def init(self) -> None:
        done = self._run("initdb", "-D", str(self.data), "-U", "room", "--auth=trust", "-E", "UTF8",
                         "--locale=C.UTF-8", "--no-sync")
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr[-2000:]}")

    def start(self) -> None:
        # fsync off: a test's cluster is thrown away; the room's own durability is PostgreSQL's, not tested here
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        done = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w",
                         "-t", "60", "start")
        if done.returncode:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"pg_ctl start failed: {done.stderr[-1000:]} {log}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def database(self, name: str) -> str:
        """A new, empty database; its connection string."""
        import psycopg  # noqa: PLC0415

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"host=127.0.0.1 port={self.port} user=room dbname={name}"


@contextlib.contextmanager
def private_postgres():
    """A PostgreSQL cluster of its own, started; stopped and removed at the end (skips without the binaries)."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL's server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql "
                    "(scripts/bootstrap does it)")
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed in this environment (pip install psycopg)")
    user = None
    root = Path(tempfile.mkdtemp(prefix="rfid-table-pg-"))
    if os.geteuid() == 0:  # initdb refuses to run as root: the server runs as Debian's postgres user
        try:
            entry = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        user = "postgres"
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = PrivatePostgres(bin_dir, root, free_port(), user)
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    with private_postgres() as server:
        yield server


_counter = iter(range(1, 1_000_000))


@pytest.fixture
def room_db(postgres) -> str:
    """The connection string of a fresh database of its own for one test."""
    return postgres.database(f"room_{os.getpid()}_{next(_counter)}")
