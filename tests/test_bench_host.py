"""The bench's host baseline: the CPU time a hypervisor took in the same minutes, and the cards that waited on it."""

import time

from rfid_table.devtools import bench_table as bench  # the full-table part: its first reads' figures
from rfid_table.devtools.bench_disk import stalls
from rfid_table.devtools.bench_host import StealProbe, bursts, cpu_ticks, share, share_between


def test_the_probe_keeps_a_window_of_the_cpus_times_every_interval_until_stopped():
    steal, all_ticks = cpu_ticks()
    assert 0 <= steal <= all_ticks
    probe = StealProbe(interval_s=0.05).start()
    deadline = time.monotonic() + 10
    while probe.taken() < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    windows = probe.stop()
    assert len(windows) >= 3
    assert all(start < end and 0 <= steal <= ticks for start, end, steal, ticks in windows)
    assert all(a[1] == b[0] for a, b in zip(windows, windows[1:]))  # one after the other, nothing left out
    assert 0 <= share(windows) <= 1
    assert probe.stop() == windows  # stopped: nothing more
    assert share_between((10, 1000), (30, 1200)) == 0.1  # 20 of 200 ticks
    assert share_between(None, (30, 1200)) is None and share_between((10, 1000), (10, 1000)) is None


def test_a_file_that_is_not_the_kernels_gives_no_window(tmp_path):
    odd = tmp_path / "stat"
    odd.write_text("intr 1 2 3\n")
    assert cpu_ticks(str(odd)) is None and cpu_ticks(str(tmp_path / "missing")) is None
    assert StealProbe(interval_s=0.01, path=str(odd)).start().stop() == []


def test_a_card_read_while_the_host_took_the_cpus_is_told_apart_from_the_daemons_own_latency():
    """Two cards, read at 10.0 s and 20.0 s (perf_counter); the second is stamped 180 ms after its first read
    because, meanwhile, the host took 40 % of the CPUs for a quarter of a second."""
    uid_a, uid_b = "E0040150A1000001", "E0040150A1000002"  # 2s and 3s of the bench table's deck
    first_reads = [(uid_a, "seat1.cards", 9.9, 10.0), (uid_b, "seat2.cards", 19.9, 20.0)]
    wall_offset = 1000.0  # wall stamps are perf_counter + 1000 s
    events = [({"type": "card_dealt", "seat": 1, "card": "2s", "t": 10.06 + wall_offset}, 10.065),
              ({"type": "card_dealt", "seat": 2, "card": "3s", "t": 20.18 + wall_offset}, 20.185)]
    windows = [(9.75, 10.0, 0, 50), (10.0, 10.25, 1, 50), (19.9, 20.15, 20, 50), (20.15, 20.4, 0, 50)]
    assert bursts(windows) == [(19.9, 20.15)] and share(windows) == 21 / 200
    figures = bench._first_read_latencies(first_reads, events, wall_offset, stalls([]), bursts(windows))
    assert figures["first_read_in_disk_stalls"] == 0 and figures["first_read_in_steal_bursts"] == 1
    assert figures["first_read_p99_outside_disk_stalls_ms"] > 180  # the slow card counts there
    assert 60 < figures["first_read_p99_outside_stalls_and_steal_ms"] < 70  # the other card alone
    calm = bench._first_read_latencies(first_reads, events, wall_offset, [], bursts(windows[:2] + windows[3:]))
    assert calm["first_read_in_steal_bursts"] == 0 and calm["first_read_p99_outside_stalls_and_steal_ms"] > 180
