"""The delayed feed for broadcast overlays: hole cards only after the broadcast delay, also across a restart."""

import dataclasses

import pytest

from rfid_table.service.journal import Journal
from rfid_table.devtools.simulate import SimOptions, SimulatedTable
from rfid_table.service.sink import Sink


class RecordingSink(Sink):
    """Records when (table time) each event reached each feed."""

    def __init__(self):
        self.now = 0.0
        self.live: list = []
        self.delayed: list = []  # (released at, event)

    def publish_events(self, events):
        self.live += events

    def publish_snapshots(self, public_snapshot, secure_snapshot):
        pass

    def take_acknowledged(self):  # the broker acknowledges everything at once
        acked = {}
        if self.live:
            acked["public"] = acked["secure"] = self.live[-1].seq
        if self.delayed:
            acked["delayed"] = self.delayed[-1][1].seq
        return acked

    def take_commands(self):
        return []

    def publish_reply(self, role, user, body):
        pass

    def publish_diagnostics(self, report):
        pass

    def publish_delayed(self, events):
        self.delayed += [(self.now, e) for e in events]


def play(config, journal_path, sink, hands, seed, start, linger_s=40.0):
    journal = Journal(journal_path, feeds=("public", "secure", "delayed"))
    journal.open()
    table = SimulatedTable(config, SimOptions(hands=hands, seed=seed, speed=0, pace_s=0.5, link="direct"), sink,
                           journal)
    table.pipeline.restore(start)
    t = start
    while table.advance(t):
        sink.now = t
        table.step(t)
        t += table.cycle_s
    for _ in range(int(linger_s / table.cycle_s)):  # then let the delay run out for the last hand
        sink.now = t
        table.step(t)
        t += table.cycle_s
    journal.close()
    return t


@pytest.mark.parametrize("release", ["hand", "time"])
def test_hole_cards_reach_the_delayed_feed_only_after_the_delay(table_config, tmp_path, release):
    config = dataclasses.replace(table_config, broadcast_delay_s=30.0, broadcast_release=release)
    sink = RecordingSink()
    play(config, tmp_path / "journal.db", sink, hands=3, seed=4, start=1000.0)
    ended = {e.hand: e.t for e in sink.live if e.type == "hand_ended"}
    assert len(ended) == 3
    assert [e.seq for _, e in sink.delayed] == [e.seq for e in sink.live]  # by the end, all of it, in order
    for released_at, event in sink.delayed:
        due = ended[event.hand] if release == "hand" else event.t
        assert released_at >= due + 30.0, f"seq {event.seq} released {due + 30 - released_at:.2f} s early"
    dealt = [e for _, e in sink.delayed if e.type == "card_dealt"]
    assert dealt and all("card" in e.secret for e in dealt)  # the overlay gets the hole cards, late


def test_a_restart_neither_loses_nor_releases_early(table_config, tmp_path):
    config = dataclasses.replace(table_config, broadcast_delay_s=8.0, broadcast_release="hand")
    first = RecordingSink()
    # Stop 3 s after the second hand ended: the first hand is out, the second still waits for its delay.
    t = play(config, tmp_path / "journal.db", first, hands=2, seed=9, start=1000.0, linger_s=3.0)
    released_before = {e.seq for _, e in first.delayed}
    assert released_before and {e.hand for _, e in first.delayed} == {1}
    hand_2_ended = next(e.t for e in first.live if e.type == "hand_ended" and e.hand == 2)

    second = RecordingSink()
    play(config, tmp_path / "journal.db", second, hands=1, seed=10, start=t + 5)
    again = [(at, e) for at, e in second.delayed]
    assert not released_before & {e.seq for _, e in again}  # what the broker acknowledged is not sent again
    assert [e.seq for _, e in again] == list(range(max(released_before) + 1, again[-1][1].seq + 1))  # none lost
    assert {e.hand for _, e in again} == {2, 3}  # the hand journaled before the restart, then the new one
    assert all(at >= hand_2_ended + 8 for at, e in again if e.hand == 2)  # not early after the restart
