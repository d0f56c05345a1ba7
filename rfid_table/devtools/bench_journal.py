"""Durable throughput: events a second through the pipeline with its journal, each on disk before it is published.

``rfid-table bench`` reports it two ways, in the same run:

* ``journaled_events_per_s`` the daemon's way, with group commits (``rfid_table.service.journal_writer``): the steps that
  arrive while one commit's fsync is on its way share the next commit;
* ``journaled_events_per_s_per_step`` one commit per step, the way it was before, as the baseline of the ratio.

Both run again on a slow disk: the same process under ``strace``'s fault injection, which delays every ``fsync`` and
``fdatasync`` by ``--fsync-ms`` (5 ms, the order of a Raspberry Pi's SD card), so the figure is a real disk's with a
real delay, not a model. Without strace (Debian package ``strace``) those figures are left out, with the reason.

Every published event is checked to be in the journal already: a bench that published first would be wrong.

The bench's ``recovery_s`` is here too (:func:`measure_journal`): a restart from a 10,000-event journal, its
self-check and the replay of every input into a new controller, to the restored state.

Run alone: ``python -m rfid_table.devtools.bench_journal --events 5000 [--per-step] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rfid_table.config.table import load_config
from rfid_table.devtools import bench_disk
from rfid_table.service.sink import Sink
from rfid_table.service.journal import Journal
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.package_data import CONFIG_DIR

CONFIG = CONFIG_DIR / "table-10.toml"


class _DurabilityCheckingSink(Sink):
    """Counts the published events, and refuses any the journal does not hold yet."""

    def __init__(self, journal: Journal):
        self.journal = journal
        self.published = 0

    def publish_events(self, events) -> None:
        if events and events[-1].seq > self.journal.last_seq():
            raise RuntimeError(f"seq {events[-1].seq} was published before the journal held it")
        self.published += len(events)

    def publish_snapshots(self, public_snapshot, secure_snapshot) -> None:
        pass

    def take_acknowledged(self) -> dict:
        return {}

    def take_commands(self) -> list:
        return []

    def publish_reply(self, role, user, body) -> None:
        pass

    def publish_diagnostics(self, report) -> None:
        pass


def measure(events: int = 5000, group_commit: bool = True, directory: str | None = None) -> float:
    """Events a second, from the first step to the last event on disk and published (wall time)."""
    config = load_config(CONFIG)
    # Without the broadcast's equity: run as fast as the machine goes, its worker would recompute after every card
    # as busy as a core, taking the core the pipeline and the commits share (its cost is the bench's equity part).
    config = type(config)(**{**config.__dict__, "broadcast_equity": False})
    with tempfile.TemporaryDirectory(dir=directory) as work:
        journal = Journal(Path(work) / "bench.journal", table_id=config.table_id)
        journal.open()
        sink = _DurabilityCheckingSink(journal)
        # A brisk dealer (an action every 25-200 ms): several events share a reader cycle, as at a busy table.
        table = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, pace_s=0.1, link="direct"), sink,
                               journal, group_commit=group_commit)
        t = 1000.0
        start = time.perf_counter()
        produced = 0
        while produced < events:
            table.advance(t)
            produced += len(table.step(t))
            t += table.cycle_s
        table.pipeline.close_journal()
        table.step(t)  # the last commits, published
        elapsed = time.perf_counter() - start
        table.close()
        journal.close()
        if sink.published < produced:
            raise RuntimeError(f"{produced - sink.published} events were never published")
    return sink.published / elapsed


def measure_slow_disk(events: int, group_commit: bool, fsync_ms: float = 5.0) -> float | str:
    """:func:`measure` in a child whose every fsync strace delays by ``fsync_ms``; the reason when it cannot."""
    prefix = bench_disk.fsync_delay_prefix(fsync_ms)
    if isinstance(prefix, str):
        return f"{prefix}: no slow-disk figure"
    command = [*prefix, sys.executable, "-m", "rfid_table.devtools.bench_journal", "--events", str(events), "--json"]
    if not group_commit:
        command.append("--per-step")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return f"the slow-disk run failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}"
    return json.loads(done.stdout)["events_per_s"]


def report(events: int = 5000, fsync_ms: float = 5.0, progress: Callable[[str], None] = lambda message: None) -> dict:
    """Every figure of this module, for ``rfid-table bench`` (``fsync_ms`` 0: no slow-disk runs)."""
    progress(f"  journal: {events} events, group commits")
    grouped = measure(events, True)
    progress(f"  journal: {events} events, one commit a step")
    per_step = measure(events, False)
    figures = {"journaled_events_per_s": round(grouped), "journaled_events_per_s_per_step": round(per_step),
               "journaled_group_commit_ratio": round(grouped / per_step, 2)}
    if not fsync_ms:
        return figures
    progress(f"  journal: {events} events, group commits, every fsync {fsync_ms:g} ms late")
    slow_grouped = measure_slow_disk(events, True, fsync_ms)
    progress(f"  journal: {events} events, one commit a step, every fsync {fsync_ms:g} ms late")
    slow_per_step = measure_slow_disk(events, False, fsync_ms)
    if isinstance(slow_grouped, str) or isinstance(slow_per_step, str):
        figures["journaled_slow_disk"] = slow_grouped if isinstance(slow_grouped, str) else slow_per_step
    else:
        figures.update({f"journaled_events_per_s_fsync_{fsync_ms:g}ms": round(slow_grouped),
                        f"journaled_events_per_s_per_step_fsync_{fsync_ms:g}ms": round(slow_per_step),
                        "journaled_slow_disk_ratio": round(slow_grouped / slow_per_step, 2)})
    return figures


def measure_journal(config_path: str, events: int = 10_000) -> tuple[float, float]:
    """Durable journaling and recovery: play simulated hands through the pipeline with an SQLite journal
    (WAL, synchronous=FULL, one commit per reader cycle) until ``events`` events are on disk; then time a
    restart: open with the self-check, replay every input into a new controller.

    Returns (journaled events per second, seconds from opening the journal to the restored state).
    """
    config = load_config(config_path)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.journal"
        journal = Journal(path)
        journal.open()
        # A brisk dealer (an action every 25-200 ms): several events share a reader cycle, and so a commit,
        # as they do when a table is busy — the daemon commits once per cycle, whatever the cycle holds.
        table = SimulatedTable(config, SimOptions(hands=None, seed=3, speed=0, pace_s=0.1, link="direct"), None,
                               journal)
        t, journaled, busy_s = 1000.0, 0, 0.0
        while journaled < events:
            table.advance(t)
            start = time.perf_counter()
            journaled += len(table.pipeline.step(t))
            busy_s += time.perf_counter() - start
            t += table.cycle_s
        journal.close()
        start = time.perf_counter()
        journal = Journal(path)
        if not journal.open().ok:
            raise RuntimeError("the bench journal failed its self-check")
        restored = SimulatedTable(config, SimOptions(hands=None, link="direct"), None, journal)
        restored.pipeline.restore(t)
        recovery_s = time.perf_counter() - start
        if restored.pipeline.controller.seq != table.pipeline.controller.seq:
            raise RuntimeError("the restored controller differs from the one that wrote the journal")
        journal.close()
    return journaled / busy_s, recovery_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rfid_table.devtools.bench_journal", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--per-step", action="store_true", help="one commit per step (the baseline)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rate = measure(args.events, group_commit=not args.per_step)
    print(json.dumps({"events_per_s": rate}) if args.json else f"{rate:,.0f} events/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
