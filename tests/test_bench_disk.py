"""The bench's disk baseline: the disk's own syncs beside the journal, and the cards that waited on a stall."""

import os
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack

import pytest

from rfid_table.devtools import bench_table as bench  # the full-table part: its first reads' figures
from rfid_table.devtools.bench_disk import RAM_DIR, DiskProbe, fsync_delay_prefix, journal_disk, stalls, traced_pid


def test_the_probe_syncs_a_file_of_its_own_until_stopped_and_leaves_nothing_behind(tmp_path):
    probe = DiskProbe(str(tmp_path), interval_s=0.01).start()
    deadline = time.monotonic() + 10
    while probe.synced() < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [path.name for path in tmp_path.iterdir()] == ["disk-probe"]
    syncs = probe.stop()
    assert len(syncs) >= 3
    assert all(seconds >= 0 for _start, seconds in syncs)
    assert [start for start, _ in syncs] == sorted(start for start, _ in syncs)
    assert list(tmp_path.iterdir()) == []  # the probe's file is gone with it


def test_a_card_whose_commit_spans_a_disk_stall_is_told_apart_from_the_daemons_own_latency():
    """Two cards, read at 10.0 s and 20.0 s (perf_counter), each stamped 60 ms after its first read; the second
    reaches the subscriber 700 ms after its stamp because the disk stalled for 650 ms meanwhile."""
    uid_a, uid_b = "E0040150A1000001", "E0040150A1000002"  # 2s and 3s of the bench table's deck
    first_reads = [(uid_a, "seat1.cards", 9.9, 10.0), (uid_b, "seat2.cards", 19.9, 20.0)]
    wall_offset = 1000.0  # wall stamps are perf_counter + 1000 s
    events = [({"type": "card_dealt", "seat": 1, "card": "2s", "t": 10.06 + wall_offset}, 10.065),
              ({"type": "card_dealt", "seat": 2, "card": "3s", "t": 20.06 + wall_offset}, 20.76)]
    disk = [(19.0, 0.004), (20.05, 0.65), (21.0, 0.003)]  # (start, seconds): one stall
    figures = bench._first_read_latencies(first_reads, events, wall_offset, stalls(disk))
    assert figures["first_read_events"] == 2 and figures["false_events"] == 0
    assert figures["first_read_max_ms"] > 750  # the stalled card, as a viewer saw it
    assert figures["first_read_in_disk_stalls"] == 1
    assert 60 < figures["first_read_p99_outside_disk_stalls_ms"] < 70  # the other card alone
    calm = bench._first_read_latencies(first_reads, events, wall_offset, stalls([(20.05, 0.004)]))
    assert calm["first_read_in_disk_stalls"] == 0 and calm["first_read_p99_outside_disk_stalls_ms"] > 750


def test_an_event_the_dealer_did_not_cause_is_counted_false_and_named_in_the_report():
    """The dealer pitched one card; the table reported it, then the same card dealt again to another seat and an
    irregularity: both false, and the report says what each was."""
    uid = "E0040150A1000001"  # the 2s of the bench table's deck
    events = [({"type": "card_dealt", "seq": 7, "seat": 1, "card": "2s", "t": 1010.06}, 10.07),
              ({"type": "card_dealt", "seq": 9, "seat": 4, "card": "2s", "t": 1011.0}, 11.01),
              ({"type": "irregular_card", "seq": 10, "code": "duplicate_card", "card": "2s", "t": 1011.0}, 11.01)]
    figures = bench._first_read_latencies([(uid, "seat1.cards", 9.9, 10.0)], events, 1000.0, [])
    assert figures["first_read_events"] == 1 and figures["first_read_missed"] == 0
    assert figures["false_events"] == 2
    assert figures["false_events_seen"] == [{"type": "card_dealt", "seq": 9, "seat": 4, "card": "2s"},
                                            {"type": "irregular_card", "seq": 10, "code": "duplicate_card",
                                             "card": "2s"}]


# Ten durable SQLite commits, as the journal makes them (WAL, synchronous=FULL): each ends in an fsync of the WAL.
TEN_COMMITS = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=FULL"); db.execute("CREATE TABLE t (x)")
started = time.monotonic()
for x in range(10):
    db.execute("INSERT INTO t VALUES (?)", (x,))
print(time.monotonic() - started)
"""


@pytest.mark.skipif(shutil.which("strace") is None or not os.path.isdir(RAM_DIR), reason="needs strace and /dev/shm")
def test_the_steady_disk_keeps_the_journal_in_ram_and_makes_each_of_its_commits_wait_the_given_fsync(tmp_path):
    with ExitStack() as made:
        disk = journal_disk(made, None, 20.0, str(tmp_path))
        assert os.path.dirname(disk.directory) == RAM_DIR and "every fsync 20 ms late" in disk.description
        # the probe watches the machine's disk the journal was kept off, and cards are not said to wait on it
        assert disk.probe_directory == str(tmp_path) and not disk.probe_beside_journal
        journal = os.path.join(disk.directory, "table.journal")
        run = subprocess.run([*disk.command_prefix, sys.executable, "-c", TEN_COMMITS, journal],
                             capture_output=True, text=True, check=True, timeout=60)
        # A lower bound, not a speed: strace holds each commit's fsync 20 ms; a RAM disk alone takes microseconds.
        assert float(run.stdout) >= 10 * 0.020
        assert os.path.exists(journal)
    assert not os.path.exists(disk.directory)  # nothing of the bench's left in RAM


def test_a_journal_directory_given_is_used_as_it_is_and_left_as_it_was(tmp_path):
    own = tmp_path / "rfid-table"
    own.mkdir()
    (own / "table.journal").write_text("the table's own journal")
    with ExitStack() as made:
        disk = journal_disk(made, str(own), 5.0, str(tmp_path / "scratch"))
        assert os.path.dirname(disk.directory) == str(own)  # a directory of the bench's own, beside the table's
        assert disk.command_prefix == [] and disk.probe_beside_journal and disk.probe_directory == disk.directory
    assert [path.name for path in own.iterdir()] == ["table.journal"]
    assert (own / "table.journal").read_text() == "the table's own journal"
    with ExitStack() as made:  # no fsync delay asked for: the machine's disk, as before
        disk = journal_disk(made, None, 0, str(tmp_path))
        assert disk.directory == str(tmp_path) and disk.command_prefix == [] and disk.probe_beside_journal


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_the_daemon_under_strace_is_found_as_straces_child():
    prefix = fsync_delay_prefix(5.0)
    tracer = subprocess.Popen([*prefix, sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        pid = traced_pid(tracer.pid)
        with open(f"/proc/{pid}/status") as status:
            assert f"PPid:\t{tracer.pid}" in status.read().split("\n")
    finally:
        tracer.stdin.close()
        assert tracer.wait(10) == 0  # strace ends with its child
