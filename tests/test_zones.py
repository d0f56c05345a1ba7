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


# A reader that saw the same thing again hands over the same reads (a simulated reader at rest does); the tracker
# answers such repeats from what it worked out last time. Whatever the cycles, that must be invisible.
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_reads = st.lists(st.builds(TagRead, antenna=st.integers(1, 4), uid=st.sampled_from("ABCD"),
                            read_count=st.integers(1, 3), rssi=st.sampled_from([None, -45, -55, -65])), max_size=5)


@settings(max_examples=300, deadline=None)
@given(frames=st.lists(st.tuples(_reads, st.integers(1, 6)), max_size=12), present=st.integers(1, 3),
       gap=st.integers(0, 2), window=st.sampled_from([0.0, 0.3]), floor=st.sampled_from([None, -60]))
def test_a_reader_repeating_its_reads_gets_the_same_events_as_one_sending_fresh_copies(frames, present, gap,
                                                                                          window, floor):
    def tracker():
        return ZoneTracker(ZONES, {"muck": DebounceSettings(1, 0.1)},
                           default=DebounceSettings(present, 0.2, max_gap_cycles=gap), min_rssi_dbm=floor,
                           order_window_s=window)

    repeating, fresh = tracker(), tracker()
    out_repeating, out_fresh = [], []
    t = 0.0
    for reads, repeats in frames:
        same = tuple(reads)  # one object, handed over again and again
        for _ in range(repeats):
            t += 0.05
            out_repeating += repeating.feed(InventoryCycle("r", t, same))
            out_fresh += fresh.feed(InventoryCycle("r", t, list(reads)))  # a new list: never the same object
    assert out_repeating == out_fresh
    assert repeating.present() == fresh.present()
    assert (repeating.weak_reads, repeating.unmapped_reads) == (fresh.weak_reads, fresh.unmapped_reads)
