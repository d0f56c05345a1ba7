"""The journal is refused when it is not this table's (empty, another table's, a directory), is private whatever
the umask, and survives a full disk: at start a clear message and an exit status the service does not restart
in a loop; mid-game the table stops publishing what it cannot journal, says so, and carries on by itself once
there is space again."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

from rfid_table.cli import main
from rfid_table.journal import Journal, JournalRefused

CONFIG = Path(__file__).resolve().parents[1] / "config"
SIXMAX = (CONFIG / "table-6max.toml").read_text(encoding="utf-8")


def table_file(tmp_path: Path, table_id: str = "sixmax-1") -> Path:
    path = tmp_path / f"{table_id}.toml"
    path.write_text(SIXMAX.replace('id = "sixmax-1"', f'id = "{table_id}"'), encoding="utf-8")
    return path


def start(config: Path, journal: Path, *extra: str) -> int:
    """The daemon's start-up (the simulated table's, which opens the journal exactly as ``run`` does) up to the
    journal: the exit status it stops with, or 0 once the journal is open (the broker, absent here, comes next)."""
    with pytest.raises(SystemExit) as stopped:
        main(["sim", "--config", str(config), "--journal", str(journal), "--hands", "1", "--port", "1", *extra])
    return stopped.value.code


# ---- whose journal --------------------------------------------------------------------------------------------


def test_another_tables_journal_is_refused(tmp_path, capsys):
    path = tmp_path / "journal.db"
    with Journal(path, table_id="main-7") as journal:
        journal.record([("tick", 1.0, {})], [])
    assert start(table_file(tmp_path), path) == 65
    err = capsys.readouterr().err
    assert f"{path} is the journal of table 'main-7', not of table 'sixmax-1'" in err
    assert "Traceback" not in err
    with Journal(path, table_id="main-7") as journal:  # untouched: its own table still opens it
        assert journal.last_input_id() == 1


def test_a_journal_from_before_table_ids_is_adopted_by_the_table_that_opens_it(tmp_path):
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        journal.record([("tick", 1.0, {})], [])
    with Journal(path, table_id="sixmax-1") as journal:
        assert journal.meta("table_id") == "sixmax-1"
    with pytest.raises(JournalRefused, match="journal of table 'sixmax-1'"):
        with Journal(path, table_id="main-7"):
            pass


def test_an_empty_journal_is_refused_unless_a_new_one_is_asked_for(tmp_path, capsys):
    path = tmp_path / "journal.db"
    path.touch()
    config = table_file(tmp_path)
    assert start(config, path) == 65
    err = capsys.readouterr().err
    assert f"{path} is empty (0 bytes)" in err and "--new-journal" in err
    assert path.stat().st_size == 0  # nothing was written over it
    with Journal(path, table_id="sixmax-1", fresh=True) as journal:
        assert journal.epoch and journal.meta("table_id") == "sixmax-1"


def test_a_directory_as_the_journal_is_a_clear_error(tmp_path, capsys):
    directory = tmp_path / "journals"
    directory.mkdir()
    assert start(table_file(tmp_path), directory) == 65
    err = capsys.readouterr().err
    assert f"{directory} is a directory, not a journal file" in err
    assert "Traceback" not in err


# ---- private whatever the umask -------------------------------------------------------------------------------


def test_the_journal_and_its_wal_are_private_whatever_the_umask(tmp_path):
    path = tmp_path / "journal.db"
    previous = os.umask(0)
    try:
        with Journal(path) as journal:
            journal.record([("tick", 1.0, {})], [])
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            assert all(f.exists() for f in files)
            modes = {f.name: oct(stat.S_IMODE(f.stat().st_mode)) for f in files}
        assert modes == {f.name: "0o600" for f in files}
    finally:
        os.umask(previous)


def test_an_existing_journal_readable_by_others_is_made_private(tmp_path):
    path = tmp_path / "journal.db"
    with Journal(path):
        pass
    path.chmod(0o644)
    with Journal(path):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
