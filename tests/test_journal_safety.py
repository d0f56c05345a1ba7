"""The journal is refused when it is not this table's (empty, another table's, a directory), is private whatever
the umask, and survives a full disk: at start a clear message and an exit status the service does not restart
in a loop; mid-game the table stops publishing what it cannot journal, says so, and carries on by itself once
there is space again."""

import errno
import os
import stat
import subprocess
from pathlib import Path

import pytest

from rfid_table.cli import main
from rfid_table.service.sink import Sink
from rfid_table.service.journal import Journal, JournalRefused

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


def stepper(table, start: float = 1000.0):
    """``play(seconds)``: the simulated table read and stepped cycle by cycle through that much table time, on from
    where the last call left it (from ``start``)."""
    clock = [start]

    def play(seconds: float) -> None:
        for _ in range(int(seconds / table.cycle_s)):
            table.advance(clock[0])
            table.step(clock[0])
            clock[0] += table.cycle_s
    return play


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


# ---- a full disk ----------------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A real file system of 16 MB (tmpfs), which a test can fill to the last page."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Take every free page of the file system; remove the returned file to give the space back."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
    return filler


class RecordingSink(Sink):
    """Every event, snapshot and diagnostics report the pipeline publishes; the broker acknowledges at once."""

    def __init__(self):
        self.live: list = []
        self.snapshots = 0
        self.diagnostics: list[dict] = []

    def publish_events(self, events):
        self.live += events

    def publish_snapshots(self, public_snapshot, secure_snapshot):
        self.snapshots += 1

    def take_acknowledged(self):
        return {"public": self.live[-1].seq, "secure": self.live[-1].seq} if self.live else {}

    def take_commands(self):
        return []

    def publish_reply(self, role, user, body):
        pass

    def publish_diagnostics(self, report):
        self.diagnostics.append(report)

    def publish_delayed(self, events):
        return len(events)


def test_a_full_disk_mid_game_stops_publishing_says_so_and_carries_on_once_there_is_room(small_disk, caplog):
    from rfid_table.config.table import load_config  # noqa: PLC0415
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable  # noqa: PLC0415

    config = load_config(CONFIG / "table-6max.toml")
    path = small_disk / "journal.db"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    sink = RecordingSink()
    table = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, pace_s=0.5, link="direct", gpio=True),
                           sink, journal)
    pipeline = table.pipeline
    clock = [1000.0]

    def play(seconds: float, until=lambda: False) -> bool:
        for _ in range(int(seconds / table.cycle_s)):
            table.advance(clock[0])
            table.step(clock[0])
            clock[0] += table.cycle_s
            if until():
                return True
        return False

    try:
        play(10)
        assert sink.live and pipeline.journal_state() == {"state": "ok"}
        filler = fill(small_disk)
        with caplog.at_level("ERROR", logger="rfid_table.service.daemon"):
            assert play(120, until=lambda: pipeline.journal_state()["state"] != "ok"), "the disk never filled"
            stuck_at = journal.last_seq()
            snapshots = sink.snapshots
            play(20)  # a hand goes on meanwhile
        assert journal.last_seq() == stuck_at
        assert sink.live[-1].seq == stuck_at  # nothing went out that the journal does not hold
        assert sink.snapshots == snapshots
        assert pipeline.controller.seq > stuck_at + 5  # the table kept reading the cards
        assert table.gpio.outputs.status_shown == "journal_failing"
        from rfid_table.ops.diag import render  # noqa: PLC0415

        assert "JOURNAL CANNOT BE WRITTEN: cannot write the journal" in render(sink.diagnostics[-1], "online")
        state = sink.diagnostics[-1]["journal"]
        assert state["state"] == "cannot_write" and "database or disk is full" in state["error"]
        assert 0 < state["waiting_events"] <= pipeline.journal_state()["waiting_events"] == \
            pipeline.controller.seq - stuck_at  # the report is up to a second old
        failures = [r.getMessage() for r in caplog.records if "cannot write the journal" in r.getMessage()]
        assert len(failures) == 1 and f"free space on {small_disk}" in failures[0]

        filler.unlink()
        caplog.clear()
        with caplog.at_level("WARNING", logger="rfid_table.service.daemon"):
            assert play(5, until=lambda: pipeline.journal_state()["state"] == "ok")
        assert any("written again" in r.getMessage() for r in caplog.records)
        play(30)
        assert table.gpio.outputs.status_shown != "journal_failing"
        seqs = [e.seq for e in sink.live]
        assert seqs == list(range(1, pipeline.controller.seq + 1))  # late but whole, in order
        assert journal.last_seq() == pipeline.controller.seq
        snapshot = {**pipeline.controller.snapshot(secure=True), "t": None}  # ticks that change nothing: not kept
        last_t = clock[0]
    finally:
        table.close()
        journal.close()
    journal = Journal(path, table_id=config.table_id)  # and the journal restores exactly that table
    assert journal.open().ok
    restarted = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, link="direct"), None, journal)
    try:
        restarted.pipeline.restore(last_t)
        assert {**restarted.pipeline.controller.snapshot(secure=True), "t": None} == snapshot
    finally:
        restarted.close()
        journal.close()


def test_a_full_disk_at_start_is_a_clear_message_and_an_exit_status_not_restarted(small_disk, tmp_path, capsys):
    path = small_disk / "journal.db"
    with Journal(path, table_id="sixmax-1") as journal:
        journal.record([("tick", 1.0, {})], [])
    fill(small_disk)
    assert start(table_file(tmp_path), path) == 74
    err = capsys.readouterr().err
    # SQLite fails at the shared-memory file or at the first write, depending on what fits: either is named
    assert f"the journal {path}: " in err and "The table cannot start without writing its journal" in err
    assert f"free space on {small_disk} (df -h {small_disk})" in err
    assert "Traceback" not in err


def test_a_new_journal_on_a_full_disk_is_refused_the_same_way(small_disk, tmp_path, capsys):
    fill(small_disk)
    path = small_disk / "journal.db"
    assert start(table_file(tmp_path), path) == 74
    assert "cannot create the journal" in capsys.readouterr().err
    assert not path.exists() and not list(small_disk.glob("journal.db.new*"))



# ---- a slow disk ----------------------------------------------------------------------------------------------


def test_a_commit_held_up_shows_in_the_diagnostics_as_the_slowest_and_a_slow_commit(tmp_path):
    """Every event waits for its commit: a commit the file holds up (here another connection holding SQLite's
    write lock for 0.4 s, as a stalled fsync would) is the slowest of its second and counted as slow, for good."""
    import sqlite3  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from rfid_table.config.table import load_config  # noqa: PLC0415
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable  # noqa: PLC0415
    from rfid_table.ops.diag import render  # noqa: PLC0415

    config = load_config(CONFIG / "table-6max.toml")
    path = tmp_path / "journal.db"
    journal = Journal(path, table_id=config.table_id)
    assert journal.open().ok
    sink = RecordingSink()
    table = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, pace_s=0.5, link="direct"), sink, journal)
    play = stepper(table)

    try:
        play(5)
        before = sink.diagnostics[-1]["journal"]
        assert before["state"] == "ok" and before["commits"] > 0 and before["slow_commits"] == 0
        assert before["commit_max_ms"] < 400
        assert "journal:" in render(sink.diagnostics[-1], "online") and "SLOW" not in render(sink.diagnostics[-1],
                                                                                           "online")
        reports = len(sink.diagnostics)
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # the journal's next commit waits for this one
        release = threading.Timer(0.4, other.rollback)
        release.start()
        play(3)
        release.join()
        other.close()
        after = [report["journal"] for report in sink.diagnostics[reports:]]
        assert sum(1 for report in after if report["commit_max_ms"] >= 350) == 1, after
        assert after[-1]["slow_commits"] == 1 and after[-1]["commit_max_ms"] < 350  # a total; the second moved on
        assert "SLOW COMMITS (100 ms or more) since the start: 1" in render(sink.diagnostics[-1], "online")
        assert [e.seq for e in sink.live] == list(range(1, table.pipeline.controller.seq + 1))  # held up, not lost
    finally:
        table.close()
        journal.close()


# ---- another program holding the journal ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_program_holding_the_journals_write_lock_holds_up_publishing_not_the_table(tmp_path, caplog):
    """An ``sqlite3`` shell left in a write transaction on the journal: the daemon's way (a writer thread, the
    retention due at once) goes on reading while the lock lasts, says who to ask once SQLite's busy timeout has
    passed, and publishes everything that waited, in order, once the lock is gone."""
    import sqlite3  # noqa: PLC0415
    import time  # noqa: PLC0415

    from rfid_table.config.table import load_config  # noqa: PLC0415
    from rfid_table.devtools.simulate import SimOptions, SimulatedTable  # noqa: PLC0415
    from rfid_table.ops.diag import render  # noqa: PLC0415

    config = load_config(CONFIG / "table-6max.toml")
    path = tmp_path / "journal.db"
    journal = Journal(path, table_id=config.table_id, retention_events=100)
    assert journal.open().ok
    sink = RecordingSink()
    table = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, pace_s=0.5, link="direct"), sink, journal,
                           group_commit=True)
    pipeline = table.pipeline
    play = stepper(table)

    def play_until(done, timeout_s: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done() and time.monotonic() < deadline:
            play(table.cycle_s)
            time.sleep(0.01)  # the writer's thread, waiting on SQLite, has the real time it needs
        return done()

    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        play_until(lambda: sink.live)
        other.execute("BEGIN IMMEDIATE")  # the shell's write lock: every write of the journal waits for it
        held_at = journal.last_seq()
        with caplog.at_level("ERROR", logger="rfid_table.service.daemon"):
            play(10)  # the retention falls due at once: it waits in the writer's thread, not here
            assert pipeline.controller.seq > held_at + 5  # the table kept reading the cards
            assert play_until(lambda: pipeline.journal_state()["state"] == "cannot_write")
            play(1.0)  # the diagnostics of the second after
        assert journal.last_seq() == held_at and sink.live[-1].seq <= held_at  # nothing out that is not on disk
        assert "database is locked" in sink.diagnostics[-1]["journal"]["error"]
        assert "JOURNAL CANNOT BE WRITTEN" in render(sink.diagnostics[-1], "online")
        failures = [r.getMessage() for r in caplog.records if "cannot write the journal" in r.getMessage()]
        assert len(failures) == 1 and "another program holds the journal's write lock" in failures[0]
        assert f"fuser -v {path}" in failures[0] and "free space" not in failures[0]

        other.rollback()
        assert play_until(lambda: pipeline.journal_state()["state"] == "ok" and not pipeline.writer.waiting
                          and sink.live[-1].seq == pipeline.controller.seq)
        assert [e.seq for e in sink.live] == list(range(1, pipeline.controller.seq + 1))  # late but whole, in order
        assert journal.last_seq() == pipeline.controller.seq

        before = journal.last_seq()
        with caplog.at_level("INFO", logger="rfid_table.service.daemon"):  # the retention's next turn, a minute on
            play(60)
            assert play_until(lambda: any("past the retention" in r.getMessage() for r in caplog.records))
        rows, limit = journal.usage()
        oldest = journal.last_seq() - rows + 1
        # It kept the newest retention_events of when it ran, and what came since (the writer's thread gets to it
        # between two commits, later on a busy disk): none older than the newest retention_events when it fell due.
        assert before - limit < oldest <= journal.last_seq() - limit + 1, (before, oldest, journal.last_seq())
    finally:
        other.close()
        pipeline.close_journal()  # the writer's thread stops before its journal closes
        table.close()
        journal.close()
