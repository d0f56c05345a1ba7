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


def test_a_new_card_arrives_after_two_reads_but_a_card_lying_elsewhere_moves_only_after_three():
    """A card from the deck is placed on two reads; a card settled on seat 1 that its own antenna misses while seat
    2's antenna reads it through the felt (a cross read) stays where it is unless seat 2 reads it three times."""
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=2, absent_after_s=1.0,
                                                          move_after_cycles=3))
    on_1, through_2 = [TagRead(1, "A", rssi=-45)], [TagRead(2, "A", rssi=-58)]
    events = cycles(tracker, [on_1, on_1, through_2, through_2, on_1, through_2, through_2, through_2])
    # arrived on its second read (0.05); two cross reads in a row move nothing; three do (0.35)
    assert events == [("arrived", "seat1.cards", "A", 0.05), ("left", "seat1.cards", "A", 0.35),
                      ("arrived", "seat2.cards", "A", 0.35)]


def test_without_a_move_count_a_move_takes_the_reads_an_arrival_does():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=2, absent_after_s=1.0))
    events = cycles(tracker, [[TagRead(1, "A")], [TagRead(1, "A")], [TagRead(2, "A")], [TagRead(2, "A")]])
    assert events == [("arrived", "seat1.cards", "A", 0.05), ("left", "seat1.cards", "A", 0.15),
                      ("arrived", "seat2.cards", "A", 0.15)]


def test_missed_reads_shorter_than_t_do_not_make_a_card_leave():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(1, 0.3))
    seen = [TagRead(1, "A")]
    events = cycles(tracker, [seen, [], [], [], seen, [], [], seen])
    assert events == [("arrived", "seat1.cards", "A", 0.0)]


def test_a_stack_read_in_turns_over_a_slow_readers_passes_does_not_come_and_go():
    """A reader 1.1 s a pass (a loaded one) resolves a stack of chips over two dwells: chip A in one pass, not in
    the next (only the stack's unresolved part is read then), again in the one after. Unread for 1.1 s, over its
    1.0 s of absence, but in one of its reader's passes only: it stays. Taken away, it leaves after three passes."""
    zones = {("chips", 1): "seat1.bets"}
    chips = DebounceSettings(present_after_cycles=1, absent_after_s=1.0, absent_after_cycles=3)
    a, b = TagRead(1, "A"), TagRead(1, "B")
    passes = [[a, b], [b], [a, b], [b], [a, b], [b], [b], [b]]

    def fed(settings: DebounceSettings) -> list[tuple]:
        tracker = ZoneTracker(zones, default=settings)
        events = []
        for i, reads in enumerate(passes):
            events += tracker.feed(InventoryCycle("chips", i * 1.1, tuple(reads)))
        return [(e.kind, e.uid, round(e.t, 2)) for e in events]

    # A lies still until 4.4 s (its last read), then is taken away: gone at 7.7 s, the third pass without it
    assert fed(chips) == [("arrived", "A", 0.0), ("arrived", "B", 0.0), ("left", "A", 7.7)]
    # counted in seconds alone, the same reads make A leave and come back every other pass
    seconds_alone = DebounceSettings(present_after_cycles=1, absent_after_s=1.0)
    assert fed(seconds_alone) == [("arrived", "A", 0.0), ("arrived", "B", 0.0), ("left", "A", 1.1),
                                  ("arrived", "A", 2.2), ("left", "A", 3.3), ("arrived", "A", 4.4),
                                  ("left", "A", 5.5)]


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
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_reads = st.lists(st.builds(TagRead, antenna=st.integers(1, 4), uid=st.sampled_from("ABCD"),
                            read_count=st.integers(1, 3), rssi=st.sampled_from([None, -45, -55, -65])), max_size=5)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(frames=st.lists(st.tuples(_reads, st.integers(1, 6)), max_size=12), present=st.integers(1, 3),
       gap=st.integers(0, 2), window=st.sampled_from([0.0, 0.3]), floor=st.sampled_from([None, -60]),
       move=st.sampled_from([None, 3]))
def test_a_reader_repeating_its_reads_gets_the_same_events_as_one_sending_fresh_copies(frames, present, gap,
                                                                                          window, floor, move):
    def tracker():
        return ZoneTracker(ZONES, {"muck": DebounceSettings(1, 0.1)},
                           default=DebounceSettings(present, 0.2, max_gap_cycles=gap, move_after_cycles=move),
                           min_rssi_dbm=floor, order_window_s=window)

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


# ---- one antenna ahead of its cycle (ZoneTracker.feed_antenna) -----------------------------------------------
# The reader reports antenna 1 at 0.01 s into each 0.05 s cycle: the card's third read can settle it there and then.

def test_a_cards_deciding_read_settles_it_when_its_antenna_reports_not_when_the_cycle_ends():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=3))
    seen = [TagRead(1, "A")]
    assert cycles(tracker, [seen, seen]) == []  # two reads: one short
    assert tracker.awaiting("r") == {1}  # the antenna whose next read decides
    early = tracker.feed_antenna("r", 1, seen, 0.11)
    assert [(e.kind, e.zone, e.uid, e.t) for e in early] == [("arrived", "seat1.cards", "A", 0.11)]
    assert tracker.awaiting("r") == set()
    # the whole cycle, with the same read, finds the card settled: nothing twice
    assert cycles(tracker, [seen, seen], start=0.15) == []
    assert tracker.present()["seat1.cards"] == {"A"}


def test_a_new_card_where_the_table_expects_one_settles_on_its_first_read_a_surprise_takes_the_full_count():
    """Seat 2 is next in the dealing order: a card from the deck read there arrives as its antenna reports, on one
    read; a card dealt to seat 1 still takes two reads; a card lying on seat 1 read through seat 2's antenna (a
    cross read) does not move there on one read, nor on two."""
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=2, absent_after_s=1.0,
                                                          move_after_cycles=3))
    tracker.expect({"seat2.cards"})
    assert tracker.awaiting("r") == {2}  # watched before any tag is read there
    early = tracker.feed_antenna("r", 2, [TagRead(2, "B")], 0.02)
    assert [(e.kind, e.zone, e.uid, e.t) for e in early] == [("arrived", "seat2.cards", "B", 0.02)]
    assert tracker.feed_antenna("r", 1, [TagRead(1, "A")], 0.03) == []  # not expected there, and a first read
    on_1 = [TagRead(1, "A", rssi=-45), TagRead(2, "B", rssi=-45)]
    assert cycles(tracker, [on_1, on_1]) == [("arrived", "seat1.cards", "A", 0.05)]  # its second read
    through_2 = [TagRead(2, "A", rssi=-58), TagRead(2, "B", rssi=-45)]
    assert cycles(tracker, [through_2, through_2], start=0.1) == []
    assert tracker.present()["seat1.cards"] == {"A"} and tracker.present()["seat2.cards"] == {"B"}
    # the table expects no more: a new card on seat 2 takes its two reads again
    tracker.expect(set())
    seen = [TagRead(2, "C"), TagRead(1, "A"), TagRead(2, "B")]
    assert cycles(tracker, [seen, seen], start=0.2) == [("arrived", "seat2.cards", "C", 0.25)]


def test_an_antennas_reads_settle_only_tags_one_read_short():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=3))
    assert cycles(tracker, [[TagRead(1, "A")]]) == []
    assert tracker.awaiting("r") == set()  # two reads short: the whole cycle counts the next
    assert tracker.feed_antenna("r", 1, [TagRead(1, "A"), TagRead(1, "B")], 0.06) == []  # B: never read before
    # and those reads did not count: two more whole cycles for A, three for B
    assert cycles(tracker, [[TagRead(1, "A"), TagRead(1, "B")]] * 3, start=0.1) == [
        ("arrived", "seat1.cards", "A", 0.15), ("arrived", "seat1.cards", "B", 0.2)]


def test_ahead_of_its_cycle_a_move_waits_for_its_own_count_not_an_arrivals():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=2, absent_after_s=1.0,
                                                          move_after_cycles=3))
    assert cycles(tracker, [[TagRead(1, "A")], [TagRead(1, "A")]]) != []  # settled on seat 1
    assert cycles(tracker, [[TagRead(2, "A")]], start=0.1) == []
    assert tracker.awaiting("r") == set()  # one read in seat 2: an arrival's count, two short of a move
    assert tracker.feed_antenna("r", 2, [TagRead(2, "A")], 0.16) == []
    assert cycles(tracker, [[TagRead(2, "A")]], start=0.15) == []
    assert tracker.awaiting("r") == {2}
    assert [e.kind for e in tracker.feed_antenna("r", 2, [TagRead(2, "A")], 0.21)] == ["left", "arrived"]


def test_a_weak_read_ahead_of_the_cycle_settles_nothing():
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=2), min_rssi_dbm=-60)
    assert cycles(tracker, [[TagRead(2, "A", rssi=-48)]]) == []
    assert tracker.feed_antenna("r", 2, [TagRead(2, "A", rssi=-68)], 0.06) == []  # a cross read's strength
    assert tracker.feed_antenna("r", 2, [TagRead(2, "A", rssi=-48)], 0.07) != []


def test_ahead_of_the_cycle_arrivals_still_wait_for_a_card_first_read_earlier():
    # The order window: B (first read later) settles early, but A, read before it and still being confirmed,
    # comes out first.
    tracker = ZoneTracker(ZONES, default=DebounceSettings(present_after_cycles=3, max_gap_cycles=2),
                          order_window_s=1.0)
    a, b = TagRead(1, "A"), TagRead(2, "B")
    assert cycles(tracker, [[a], [a, b], [b]]) == []  # A missed in the third cycle; B one read short
    assert tracker.feed_antenna("r", 2, [b], 0.16) == []  # held for A
    assert cycles(tracker, [[a, b]], start=0.2) == [("arrived", "seat1.cards", "A", 0.2),
                                                    ("arrived", "seat2.cards", "B", 0.2)]


def test_a_push_read_in_two_parts_is_handed_on_whole_once_its_zone_reads_unchanged_twice():
    """Chips of one push land while their antenna's dwell is under way: the dwell reads three, the next visit the
    other two. With ``still_after_reads`` the five come out together, after two visits with nothing new; a seat
    visited more often (``feed_antenna``, the seat to act) is still in its own visits, not the reader's passes."""
    zones = {("c", 1): "seat1.bets", ("c", 2): "seat2.bets"}
    chips = DebounceSettings(1, 1.0, absent_after_cycles=3, still_after_reads=2)
    tracker = ZoneTracker(zones, default=chips)
    tracker.expect({"seat1.bets"})  # the seat to act: its antenna's visits are taken as they come
    first, rest = [TagRead(1, f"C{n}") for n in range(3)], [TagRead(1, f"C{n}") for n in range(3, 5)]
    seen = []
    for t, reads in ((0.00, first), (0.05, first + rest), (0.10, first + rest)):
        seen += tracker.feed_antenna("c", 1, reads, t)
    assert seen == []  # read unchanged once since the last chip came: held
    seen += tracker.feed_antenna("c", 1, first + rest, 0.15)
    assert [(e.kind, e.uid, e.t) for e in seen] == [("arrived", f"C{n}", 0.0) for n in range(3)] + [
        ("arrived", f"C{n}", 0.05) for n in range(3, 5)]
    # the cycle that carries those visits does not count them again; a zone read only by cycles is still in cycles
    assert tracker.feed(InventoryCycle("c", 0.2, tuple(first + rest + [TagRead(2, "D")]))) == []
    assert tracker.feed(InventoryCycle("c", 0.6, tuple(first + rest + [TagRead(2, "D")]))) == []
    assert [e.uid for e in tracker.feed(InventoryCycle("c", 1.0, tuple(first + rest + [TagRead(2, "D")])))] == ["D"]


def test_a_chip_leaving_a_zone_whose_push_is_held_comes_after_the_push_and_the_pot_is_not_held():
    zones = {("c", 1): "seat1.bets", ("c", 2): "pot"}
    tracker = ZoneTracker(zones, default=DebounceSettings(1, 1.0, still_after_reads=2))
    events = cycles_of(tracker, "c", [[TagRead(1, "A")], [TagRead(2, "A")]])
    assert events == [("arrived", "seat1.bets", "A"), ("left", "seat1.bets", "A"), ("arrived", "pot", "A")]


def cycles_of(tracker: ZoneTracker, reader: str, frames: list[list[TagRead]]) -> list[tuple[str, str, str]]:
    events = []
    for i, reads in enumerate(frames):
        events += tracker.feed(InventoryCycle(reader, i * 0.05, tuple(reads)))
    return [(e.kind, e.zone, e.uid) for e in events]


def test_a_stack_read_in_turns_is_still_only_once_read_whole():
    """A push onto a big stack read in turns: a visit that left collisions for the next (``whole`` False) never
    counts as a read with nothing new; only the visits that end a reading of the whole stack do. A chip of the push
    that the first turns did not reach is still part of the push."""
    tracker = ZoneTracker({("c", 1): "seat1.bets"}, default=DebounceSettings(1, 1.0, still_after_reads=2))
    tracker.expect({"seat1.bets"})
    a, b = [TagRead(1, "A")], [TagRead(1, "B")]
    seen = []
    turns = [(a, False), (a, False), (a, False), (b, True)] + [(a, False), (b, True)] * 2  # B new in the 4th
    for t, (reads, whole) in enumerate(turns):
        seen += [(e.uid, t) for e in tracker.feed_antenna("c", 1, reads, t, whole)]
    assert seen == [("A", 7), ("B", 7)]  # two whole readings after B's: the 6th and the 8th visits
    # a cycle whose last visit of the antenna left collisions counts no more
    tracker = ZoneTracker({("c", 1): "seat1.bets"}, default=DebounceSettings(1, 1.0, still_after_reads=1))
    assert tracker.feed(InventoryCycle("c", 0.0, tuple(a))) == []
    assert tracker.feed(InventoryCycle("c", 0.5, tuple(a), frozenset({1}))) == []
    assert [e.uid for e in tracker.feed(InventoryCycle("c", 1.0, tuple(a)))] == ["A"]


def test_a_tag_on_an_antenna_the_reader_did_not_scan_stays_until_it_is_scanned_again():
    """A parked front end's other antennas are not scanned (PARK): each cycle names them (``unread``), with no
    reads. Chip B lies on such an antenna for 3 s, three times its absence, and stays; chip A, swept from it into the
    pot meanwhile, moves there as soon as the pot reads it. Scanned again from 3.5 s without B, B leaves once its
    absence has run from then: the third cycle, at 4.5 s."""
    zones = {("c", 1): "seat1.bets", ("c", 2): "pot"}
    tracker = ZoneTracker(zones, default=DebounceSettings(present_after_cycles=1, absent_after_s=1.0,
                                                          absent_after_cycles=3))
    a_on_1, b_on_1, a_in_pot = TagRead(1, "A"), TagRead(1, "B"), TagRead(2, "A")
    fed = [(0.0, (a_on_1, b_on_1), frozenset())]
    fed += [(0.5 * n, (a_in_pot,), frozenset({1})) for n in range(1, 7)]  # 0.5 … 3.0 s: antenna 1 not scanned
    fed += [(0.5 * n, (a_in_pot,), frozenset()) for n in range(7, 10)]  # 3.5 … 4.5 s: scanned, B not there
    events = []
    for t, reads, unread in fed:
        events += [(e.kind, e.zone, e.uid, t) for e in tracker.feed(InventoryCycle("c", t, reads, unread, unread))]
    assert events == [("arrived", "seat1.bets", "A", 0.0), ("arrived", "seat1.bets", "B", 0.0),
                      ("left", "seat1.bets", "A", 0.5), ("arrived", "pot", "A", 0.5),
                      ("left", "seat1.bets", "B", 4.5)]
