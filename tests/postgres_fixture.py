"""A private PostgreSQL for the room's tests (rfid_table/devtools/private_postgres.py, which the room's soak uses
too), as conftest.py's broker fixture starts Mosquitto.

Import the fixture in a test module (``from tests.postgres_fixture import postgres``). Tests that need it are
skipped, with the reason, when the binaries are absent (``scripts/bootstrap`` installs the ``postgresql`` package).
"""

from __future__ import annotations

import contextlib
import os

import pytest

from rfid_table.devtools import private_postgres as pg


@contextlib.contextmanager
def private_postgres():
    """A PostgreSQL cluster of its own, started; stopped and removed at the end (skips without the binaries)."""
    why = pg.unavailable()
    if why is not None:
        pytest.skip(why)
    with pg.private_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def postgres():
    with private_postgres() as server:
        yield server


_counter = iter(range(1, 1_000_000))


@pytest.fixture
def room_db(postgres) -> str:
    """The connection string of a fresh database of its own for one test."""
    return postgres.database(f"room_{os.getpid()}_{next(_counter)}")
