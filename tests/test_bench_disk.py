"""The bench's disk baseline: the disk's own syncs beside the journal, and the cards that waited on a stall."""

import time

from rfid_table.devtools import bench
from rfid_table.devtools.bench_disk import DiskProbe, stalls


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
