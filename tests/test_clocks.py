"""Two clocks: table time (monotonic) for every timer and the broadcast delay, wall time only to stamp events.

A Raspberry Pi boots on an old time and NTP steps it later. These tests run the daemon's own loop
(``run_realtime`` with a :class:`TableClock`) over a simulated table with a journal, inject both clocks, and step
the wall clock by hours in each direction, mid-hand and across a restart: nothing is released to the delayed
feed early and nothing is lost.
"""

import dataclasses

import pytest

from conftest import ListSink
from rfid_table.service.daemon import StopFlag
from rfid_table.service.run import run_realtime
from rfid_table.service.journal import Journal
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.timebase import TableClock

DELAY_S = 20.0
HOUR = 3600.0


class World:
    """The true time of the room, and the two clocks a machine in it reads. ``step_wall`` is NTP's step;
    ``reboot`` starts the monotonic clock again from (almost) zero, as a power cycle does."""

    def __init__(self) -> None:
        self.true = 50_000.0
        self.wall_error = -30 * 24 * HOUR  # booted on last month's time
        self.boot_at = self.true - 100.0

    def monotonic(self) -> float:
        return self.true - self.boot_at

    def wall(self) -> float:
        return self.true + self.wall_error

    def step_wall(self, by_s: float) -> None:
        self.wall_error += by_s

    def reboot(self) -> None:
        self.boot_at = self.true - 5.0


class Sink(ListSink):
    """Records the true time at which each event reached each feed, and acknowledges all of it at once."""

    def __init__(self, world: World):
        self.world = world
        self.live: list = []  # (true time, event)
        self.delayed: list = []

    def publish_events(self, events):
        self.live += [(self.world.true, e) for e in events]

    def publish_snapshots(self, public_snapshot, secure_snapshot):
        self.snapshot, self.snapshot_at = public_snapshot, self.world.true

    def take_acknowledged(self):
        acked = {}
        if self.live:
            acked["public"] = acked["secure"] = self.live[-1][1].seq
        if self.delayed:
            acked["delayed"] = self.delayed[-1][1].seq
        return acked

    def publish_delayed(self, events):
        self.delayed += [(self.world.true, e) for e in events]


def run_table(config, journal_path, world, sink, boot, *, hands, seed, play_s, wall_step=None):
    """The daemon's loop for ``play_s`` seconds of true time; ``wall_step`` = (after s, by s) steps the wall
    clock once. Returns the table."""
    journal = Journal(journal_path, feeds=("public", "secure", "delayed"))
    assert journal.open().ok
    clock = TableClock(world.monotonic, world.wall, boot)
    clock.resume(journal)
    table = SimulatedTable(config, SimOptions(hands=hands, seed=seed, speed=0, pace_s=0.5, link="direct"), sink,
                           journal)
    table.pipeline.restore(clock.now())
    stop = StopFlag()
    started = world.true
    pending_step = list(wall_step) if wall_step else None

    def step(now: float, wall: float) -> None:
        nonlocal pending_step
        table.advance(now)
        table.step(now, wall)
        if pending_step is not None and world.true - started >= pending_step[0]:
            world.step_wall(pending_step[1])
            pending_step = None
        if world.true - started >= play_s:
            stop.event.set()

    def wait(timeout_s: float) -> None:  # the loop's sleep: the room's time passes
        world.true += max(timeout_s, 1e-3)

    try:
        run_realtime(step, table.cycle_s, stop, wait, clock)
    finally:
        table.close()
        journal.close()
    return table


def assert_never_early(sink: Sink, release: str) -> None:
    ended = {e.hand: at for at, e in sink.live if e.type == "hand_ended"}
    happened = {e.seq: at for at, e in sink.live}
    for released_at, event in sink.delayed:
        due = ended[event.hand] if release == "hand" and event.hand is not None else happened[event.seq]
        assert released_at >= due + DELAY_S - 0.1, (
            f"seq {event.seq} ({event.type}) released {due + DELAY_S - released_at:.1f} s early")


@pytest.mark.parametrize("release", ["time", "hand"])
@pytest.mark.parametrize("step_by", [2 * HOUR, -2 * HOUR])
def test_a_wall_clock_step_mid_hand_releases_nothing_early(table_config, tmp_path, release, step_by):
    """NTP steps the clock mid-hand: the delay still counts table time, so no hole card goes out early, and
    the events after the step are stamped with the new wall time."""
    config = dataclasses.replace(table_config, broadcast_delay_s=DELAY_S, broadcast_release=release,
                                 broadcast_equity=False)
    world = World()
    sink = Sink(world)
    run_table(config, tmp_path / "journal.db", world, sink, "boot-1", hands=2, seed=4, play_s=90.0,
              wall_step=(6.0, step_by))
    dealt = [e for _, e in sink.delayed if e.type == "card_dealt"]
    assert dealt and all("card" in e.secret for e in dealt)  # the overlay gets the hole cards, late
    assert_never_early(sink, release)
    assert [e.seq for _, e in sink.delayed] == [e.seq for _, e in sink.live][:len(sink.delayed)]  # in order
    # The stamps follow the wall clock: the ones after the step moved by the step, the order stays by seq.
    stamps = [(at, e.payload(secure=False)["t"]) for at, e in sink.live]
    before = [t - at for at, t in stamps if at < 50_000.0 + 5.0]
    after = [t - at for at, t in stamps if at > 50_000.0 + 7.0]
    assert before and after
    assert abs((after[-1] - before[0]) - step_by) < 1.0
    assert abs(sink.snapshot["t"] - (sink.snapshot_at + world.wall_error)) < 1.0  # snapshots too


@pytest.mark.parametrize("reboot", [False, True], ids=["restart", "reboot"])
@pytest.mark.parametrize("step_by", [3 * HOUR, -3 * HOUR])
def test_a_restart_with_a_stepped_wall_clock_neither_loses_nor_releases_early(table_config, tmp_path, reboot,
                                                                              step_by):
    """Stop mid-hand while hole cards wait for their delay; start again with the wall clock hours away (and,
    after a reboot, the monotonic clock from zero): the delay is never cut short, nothing is lost."""
    config = dataclasses.replace(table_config, broadcast_delay_s=DELAY_S, broadcast_release="time",
                                 broadcast_equity=False)
    world = World()
    first = Sink(world)
    run_table(config, tmp_path / "journal.db", world, first, "boot-1", hands=1, seed=9, play_s=12.0)
    waiting = [e for _, e in first.live if e.seq not in {d.seq for _, d in first.delayed}]
    assert any(e.type == "card_dealt" for e in waiting), "the test needs hole cards still held at the stop"

    world.true += 4.0  # the table is down for a while
    world.step_wall(step_by)
    if reboot:
        world.reboot()
    second = Sink(world)
    run_table(config, tmp_path / "journal.db", world, second, "boot-2" if reboot else "boot-1", hands=1,
              seed=10, play_s=60.0)
    released = {e.seq for _, e in first.delayed} | {e.seq for _, e in second.delayed}
    assert not {e.seq for _, e in first.delayed} & {e.seq for _, e in second.delayed}
    assert {e.seq for _, e in first.live} <= released  # none of the held events lost
    happened = {e.seq: at for at, e in first.live + second.live}
    for released_at, event in second.delayed:
        assert released_at >= happened[event.seq] + DELAY_S - 0.1, f"seq {event.seq} released early"


def test_a_journal_of_the_previous_schema_opens_and_keeps_its_events(tmp_path):
    """A journal written before events had a wall stamp is upgraded in place: its rows still pass the self-check,
    its events publish with their table time, new ones with their wall stamp."""
    import sqlite3

    from controller.domain import DomainEvent
    from rfid_table.service.inputs import tick_input
    from rfid_table.service.journal import SCHEMA_VERSION

    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        journal.record([tick_input(10.0)], [DomainEvent(1, "hand_started", 10.0, 1, {"button": 3})])
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE events DROP COLUMN wall")
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()

    with Journal(path) as journal:
        assert journal.last_check.ok, journal.last_check.problems
        journal.record([tick_input(11.0)], [DomainEvent(2, "hand_ended", 11.0, 1, {}, {}, 1_800_000_000.5)])
    with Journal(path) as journal:
        assert journal.last_check.ok, journal.last_check.problems
        old, new = journal.events_after(0)
        assert old.payload(secure=False)["t"] == 10.0 and new.payload(secure=False)["t"] == 1_800_000_000.5
        assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
