"""The HAL's zone tracker: debouncing and cross-read resolution turn raw reads into clean zone events."""

from hal.events import InventoryCycle, TagRead
from hal.zones import DebounceSettings, ZoneTracker

ZONES = {("r", 1): "seat1.cards", ("r", 2): "seat2.cards", ("r", 3): "muck"}


def cycles(tracker: ZoneTracker, frames: list[list[TagRead]], start: float = 0.0, period: float = 0.05):
    events = []
    for i, reads in enumerate(frames):
        events += tracker.feed(InventoryCycle("r", start + i * period, tuple(reads)))
    return [(e.kind, e.zone, e.uid, round(e.t, 3)) for e in events]


def test_a_tag_arrives_after_k_consecutive_reads_and_leaves_after_t_without_one():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=3, absent_after_s=0.175))
    seen = [TagRead(1, "A")]
    events = cycles(tracker, [seen, seen, [], seen, seen, seen, [], [], [], [], [], []])
    # two reads then a miss do not count; three in a row do; 0.175 s without a read removes it
    assert events == [("arrived", "seat1.cards", "A", 0.25), ("left", "seat1.cards", "A", 0.45)]


def test_missed_reads_shorter_than_t_do_not_make_a_card_leave():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(1, 0.3))
    seen = [TagRead(1, "A")]
    events = cycles(tracker, [seen, [], [], [], seen, [], [], seen])
    assert events == [("arrived", "seat1.cards", "A", 0.0)]


def test_a_cross_read_belongs_to_the_antenna_that_reads_the_tag_more_strongly_not_first():
    tracker = ZoneTracker(ZONES)
    # The neighbouring antenna reports first, weaker; the tag lies on seat 2.
    reads = [TagRead(1, "A", read_count=3, rssi=-70), TagRead(2, "A", read_count=1, rssi=-48)]
    assert cycles(tracker, [reads]) == [("arrived", "seat2.cards", "A", 0.0)]


def test_without_signal_strength_the_antenna_that_reads_the_tag_more_often_wins():
    tracker = ZoneTracker(ZONES)
    reads = [TagRead(1, "A", read_count=1), TagRead(2, "A", read_count=4)]
    assert cycles(tracker, [reads]) == [("arrived", "seat2.cards", "A", 0.0)]


def test_a_tag_moving_to_another_zone_leaves_the_old_one_first():
    tracker = ZoneTracker(ZONES)
    events = cycles(tracker, [[TagRead(1, "A")], [TagRead(3, "A")]])
    assert events == [("arrived", "seat1.cards", "A", 0.0), ("left", "seat1.cards", "A", 0.05),
                      ("arrived", "muck", "A", 0.05)]
    assert tracker.present()["muck"] == {"A"}


def test_reads_from_an_antenna_no_zone_uses_are_counted_not_reported():
    tracker = ZoneTracker(ZONES)
    assert cycles(tracker, [[TagRead(9, "A")]]) == []
    assert tracker.unmapped_reads == 1
