"""Debounce raw inventory cycles into clean zone arrivals and departures.

A reader misses tags now and then and an antenna sometimes reads a tag lying on the neighbouring zone.
Two rules give a clean picture anyway:

* a tag *arrives* in a zone after it has been read there in ``present_after_cycles`` consecutive cycles,
  and *leaves* after it has not been read there for ``absent_after_s`` seconds; a tag settled in another zone
  *moves* after ``move_after_cycles`` (the same by default): a tag lying still is read through the neighbouring
  antenna now and then, when its own antenna misses it, so a move can be asked to take more reads than a new
  card, whose first reads are the latency a viewer sees;
* a tag read by several antennas in one cycle belongs to the antenna that reads it most strongly (RSSI),
  then most often (read count) — never simply the first one that reported it;
* with ``min_rssi_dbm``, a read weaker than that is ignored, as a reader's RSSI filter would: a tag read through
  the neighbouring antenna is far weaker than one lying on it, even at the zone's edge. This matters most for
  chips, which settle after a single read (a big stack is never read whole in consecutive cycles);
* a tag *leaves* only once its reader has also run ``absent_after_cycles`` whole cycles without reading it: a
  stack read in turns over a slow reader's passes is not a stack coming and going;
* with ``order_window_s``, arrivals come out in the order the tags were first read in their new zone, not the order
  they were confirmed: RF noise can hold a card back for a few cycles, and a dealer's order is a rule the
  controller checks. An arrival waits only while another tag, first read earlier, is still being confirmed, and
  never longer than the window.

* a reader reports each antenna as its dwell ends: the read that settles a tag is taken as its antenna reports
  (``feed_antenna``, for the antennas ``awaiting`` names), not when the whole cycle is in, which would add the rest
  of the cycle (up to a cycle) to every card;
* with ``still_after_reads``, the tags arriving in a betting zone are handed on together once the zone has been
  read that many times with nothing new in it: a push of chips is one motion, and the chips the dwell under way missed (or a
  stack read in turns) come in the reads after. A zone the reader visits often (the seat to act, ``expect``) is
  still within a few of its visits, not a few passes of the whole reader. A tag leaving the zone hands on the
  arrivals held there first.

A tag is in at most one zone: when it settles in a new zone it leaves the old one first.
"""

from dataclasses import dataclass
from typing import Iterable

from hal.events import InventoryCycle, TagRead, ZoneEvent
from hal.zone_names import Zone


@dataclass(frozen=True)
class DebounceSettings:
    present_after_cycles: int = 1
    absent_after_s: float = 0.3
    # Cycles a new tag may go unread between the reads that make it present (0: the reads must be consecutive).
    # A tag lying at the edge of its zone is read in only some cycles; with an RSSI floor keeping cross reads
    # out, a short gap costs nothing and such a tag arrives in a few cycles rather than a second or more.
    max_gap_cycles: int = 0
    # Reads in a zone before a tag settled in another one moves there (None: present_after_cycles).
    move_after_cycles: int | None = None
    # Whole cycles of its reader a tag must also go unread before it leaves. A stack larger than a dwell resolves is
    # read in turns (the reader carries its unresolved collisions to the antenna's next dwell), so a chip in it is
    # read only every second or third pass: on a slow reader that is longer than absent_after_s.
    absent_after_cycles: int = 1
    # Reads of the zone with no tag new to it before the tags that arrived there are handed on, all together
    # (0: each as it settles). A read is a visit of its antenna (``feed_antenna``) or a cycle that has it; a visit
    # that left collisions for the next (a stack read in turns: UNRESOLVED, protocol 1.1) counts only with the
    # visit that ends the stack's reading.
    still_after_reads: int = 0

    def reads_to_settle(self, settled_elsewhere: bool) -> int:
        """The reads in a zone that settle a tag there: a new one, or one settled in another zone."""
        if settled_elsewhere and self.move_after_cycles is not None:
            return self.move_after_cycles
        return self.present_after_cycles


@dataclass(slots=True)
class _TagState:
    zone: str | None = None  # the zone the tag is settled in
    reader: str | None = None  # the reader that owns that zone
    last_seen: float = 0.0  # last time it was read in its settled zone
    candidate: str | None = None  # a zone it is being read in but has not settled in yet
    candidate_reader: str | None = None
    candidate_hits: int = 0
    candidate_misses: int = 0  # cycles in a row the candidate zone's reader did not read it


def _strength(read: TagRead) -> tuple[int, int]:
    # Unknown RSSI ranks below any reported one, then read count decides.
    return (read.rssi if read.rssi is not None else -1000, read.read_count)


class ZoneTracker:
    """Feed it inventory cycles; it returns the zone events they imply."""

    def __init__(
        self,
        antenna_zones: dict[tuple[str, int], str],
        settings_by_zone: dict[str, DebounceSettings] | None = None,
        default: DebounceSettings = DebounceSettings(),
        min_rssi_dbm: int | None = None,
        order_window_s: float = 0.0,
    ):
        self.min_rssi_dbm = min_rssi_dbm
        self.order_window_s = order_window_s
        self._first_read: dict[str, tuple[str, float]] = {}  # uid → (zone, first read there), until it settles
        # confirmed arrivals waiting for earlier ones: (first read, count, zone left or None, zone arrived in, uid)
        self._held: list[tuple[float, int, str | None, str, str]] = []
        self._held_count = 0
        self.weak_reads = 0  # reads ignored as weaker than min_rssi_dbm (cross reads)
        self._antenna_zones = dict(antenna_zones)
        self._settings = {zone: (settings_by_zone or {}).get(zone, default) for zone in self._antenna_zones.values()}
        self._tags: dict[str, _TagState] = {}
        self._zones_of_reader: dict[str, dict[int, str]] = {}  # reader → antenna → zone, built on first use
        # reader → its last cycle's reads, the RSSI floor then, and what they gave (see _best_reads)
        self._last_best: dict[str, tuple] = {}
        # After a feed that left every tag settled where that reader read it and nothing waiting: its reads' best
        # picks and the tags' states. The next feed of the same reads can only move the tags' last reads on.
        self._quiet: tuple[dict, list[_TagState], frozenset[int]] | None = None
        self.unmapped_reads = 0  # reads from antennas that no zone uses (wiring or configuration fault)
        self._longest_absence = max((s.absent_after_cycles for s in self._settings.values()), default=1)
        self._cycle_ts: dict[str, list[float]] = {}  # reader → the times of its last cycles, oldest first
        self._expected: frozenset[str] = frozenset()  # zones where the table expects a new tag now (expect)
        # the betting zones, where a push lands (the pot is counted once it has not changed for a while anyway)
        self._still_after = {zone: s.still_after_reads for zone, s in self._settings.items()
                             if s.still_after_reads and Zone.parse(zone).kind == "bets"}
        self._holding: dict[str, list[ZoneEvent]] = {}  # zone → arrivals held until it is still (still_after_reads)
        self._unchanged: dict[str, int] = {}  # zone → its reads with nothing new since the last arrival held
        self._visited: set[tuple[str, int]] = set()  # (reader, antenna) counted by feed_antenna since its last cycle

    def expect(self, zones: Iterable[str]) -> None:
        """The zones where the table expects a new tag now (the next seat in the dealing order): a tag read there
        that lies nowhere else settles on its first read, and is taken as its antenna reports. A tag settled in
        another zone still moves only after ``move_after_cycles``, and a new tag elsewhere needs its full count."""
        expected = frozenset(zone for zone in zones if zone in self._settings)
        if expected != self._expected:
            self._expected = expected
            self._quiet = None

    def _reads_to_settle(self, zone: str, settled_elsewhere: bool) -> int:
        if not settled_elsewhere and zone in self._expected:
            return 1
        return self._settings[zone].reads_to_settle(settled_elsewhere)

    def present(self) -> dict[str, set[str]]:
        """Zone name → the tags settled in it now."""
        result: dict[str, set[str]] = {zone: set() for zone in self._settings}
        for uid, state in self._tags.items():
            if state.zone is not None:
                result[state.zone].add(uid)
        return result

    def seed(self, zone_of_tag: dict[str, str], t: float) -> None:
        """Start from a known picture (restored after a restart) as if every tag had just been read in its zone.

        Tags the readers no longer see then leave after the usual absence time, as they would have live.
        """
        self._quiet = None
        reader_of_zone = {zone: reader for (reader, _antenna), zone in self._antenna_zones.items()}
        for uid, zone in zone_of_tag.items():
            if zone in reader_of_zone:
                self._tags[uid] = _TagState(zone=zone, reader=reader_of_zone[zone], last_seen=t)

    def feed(self, cycle: InventoryCycle) -> list[ZoneEvent]:
        best = self._best_reads(cycle)
        t = cycle.t
        recent = self._cycle_ts.setdefault(cycle.reader, [])  # for absent_after_cycles
        recent.append(t)
        del recent[:-self._longest_absence]
        quiet = self._quiet
        # a table at rest, read again: nothing (the same antennas unscanned too)
        if quiet is not None and quiet[0] is best and quiet[2] == cycle.unread and not self._holding:
            for quiet_state in quiet[1]:  # but the time moves on
                quiet_state.last_seen = t
            return []
        self._quiet = None
        events: list[ZoneEvent] = []
        tags = self._tags
        state_of = tags.get
        confirming = False  # some tag read here is still a candidate (not settled where it is read)
        for uid, zone in best.items():
            state = state_of(uid)
            if state is None:
                state = tags[uid] = _TagState()
            elif state.zone == zone:  # the steady state: a tag read where it lies
                state.last_seen = t
                if state.candidate is not None:
                    state.candidate, state.candidate_hits = None, 0
                continue
            need = self._reads_to_settle(zone, state.zone is not None)
            first_read = None  # when the tag was first read in this zone, where arrivals keep that order
            if self.order_window_s and need > 1:  # only zones that take several reads can confirm tags out of order
                first = self._first_read.get(uid)
                if first is None or first[0] != zone:
                    first = self._first_read[uid] = (zone, t)
                first_read = first[1]
            if state.candidate == zone:
                state.candidate_hits += 1
                state.candidate_misses = 0
            else:
                state.candidate, state.candidate_reader, state.candidate_hits = zone, cycle.reader, 1
                state.candidate_misses = 0
            if state.candidate_hits >= need:
                events += self._settle(uid, state, zone, cycle.reader, t, first_read)
            else:
                confirming = True

        # Departures: tags of this reader's zones that have not been read for long enough. (Every tag read here
        # has a state: with as many states as tags read, there is no other.) A tag on an antenna the reader did not
        # scan (``unread``) lies where it lay as far as anyone knows: it is neither gone nor counted as missed.
        unscanned = {self._antenna_zones[(cycle.reader, a)] for a in cycle.unread
                     if (cycle.reader, a) in self._antenna_zones}
        waiting: list[_TagState] = []  # the states of the tags lying there
        unread = [uid for uid in tags if uid not in best] if len(tags) != len(best) else []
        for uid in unread:  # in the order the tags came: deterministic
            state = tags[uid]
            if state.candidate_reader == cycle.reader:
                state.candidate_misses += 1
                if state.candidate is None or state.candidate_misses > self._settings[state.candidate].max_gap_cycles:
                    state.candidate, state.candidate_reader, state.candidate_hits = None, None, 0
                    state.candidate_misses = 0
            if state.zone is None:
                if state.candidate is None:
                    del tags[uid]
                continue
            if state.reader == cycle.reader and state.zone in unscanned:
                state.last_seen = t  # (its absence counts from when the reader scans it again)
                waiting.append(state)
                continue
            if state.reader == cycle.reader:
                settings = self._settings[state.zone]
                cycles = settings.absent_after_cycles
                # unread for long enough, and in the reader's last ``cycles`` cycles (this one included)
                if t - state.last_seen >= settings.absent_after_s \
                        and (len(recent) >= cycles and state.last_seen < recent[-cycles]):
                    events.append(ZoneEvent("left", state.zone, uid, t))
                    del tags[uid]
        if self._held or self._first_read:
            events += self._release(t)
        if self._still_after:
            visited, self._visited = self._visited, {v for v in self._visited if v[0] != cycle.reader}
            read = {zone for (r, antenna), zone in self._antenna_zones.items()
                    if r == cycle.reader and (r, antenna) not in visited and antenna not in cycle.unresolved}
            events = self._hold_until_still(events, read)
        if not confirming and not self._held and not self._first_read and not self._holding \
                and len(tags) == len(best) + len(waiting):
            # every tag settled where it was read, or lying on an antenna not scanned; no other
            self._quiet = (best, [tags[uid] for uid in best] + waiting, cycle.unread)
        return events

    def _hold_until_still(self, events: list[ZoneEvent], read: set[str]) -> list[ZoneEvent]:
        """The events of one read: arrivals in a zone of ``still_after_reads`` held until it has been read that
        many times with nothing new (``read``: the zones this read covered whole); a departure from it hands on its
        held arrivals first."""
        out: list[ZoneEvent] = []
        changed: set[str] = set()
        holding, unchanged = self._holding, self._unchanged
        for event in events:
            zone = event.zone
            if event.kind == "arrived" and zone in self._still_after:
                holding.setdefault(zone, []).append(event)
                unchanged[zone] = 0
                changed.add(zone)
                continue
            if zone in holding:  # a tag leaves a zone whose arrivals are held: they came first
                out += holding.pop(zone)
                unchanged.pop(zone, None)
            out.append(event)
        for zone in [z for z in holding if z in read and z not in changed]:
            unchanged[zone] += 1
            if unchanged[zone] >= self._still_after[zone]:
                out += holding.pop(zone)
                del unchanged[zone]
        return out

    def _settle(self, uid: str, state: _TagState, zone: str, reader: str, t: float,
                first_read: float | None) -> list[ZoneEvent]:
        """The tag settles in ``zone``: its events now, or held until tags first read before ``first_read`` are."""
        left = state.zone
        self._first_read.pop(uid, None)
        state.zone, state.reader, state.last_seen = zone, reader, t
        state.candidate, state.candidate_hits = None, 0
        if first_read is None:
            return _moved(left, zone, uid, t)
        self._held_count += 1
        self._held.append((first_read, self._held_count, left, zone, uid))
        return []

    # ---- one antenna ahead of its cycle ----------------------------------------------------------------------
    #
    # A reader reports each antenna as its dwell ends and a cycle is whole only after the last one: a card's
    # deciding read on the first antenna would wait most of a cycle for the others. So the reads of an antenna that
    # a tag needs just once more to settle are taken as they come (``feed_antenna``); everything else, and the
    # antenna's reads again, comes with the whole cycle (``feed``), which finds the tag settled. Which tag is
    # strongest where is decided on those reads alone: a tag read more strongly elsewhere later in that cycle
    # becomes a candidate there, as it would from the next cycle on.

    def awaiting(self, reader: str) -> set[int]:
        """The antennas of ``reader`` whose next read settles a tag (one read short of settling), and those of the
        zones the table expects a new tag in."""
        antennas: set[int] = {a for (r, a), z in self._antenna_zones.items() if r == reader and z in self._expected}
        for state in self._tags.values():
            zone = state.candidate
            if zone is not None and state.candidate_reader == reader \
                    and state.candidate_hits + 1 >= self._reads_to_settle(zone, state.zone is not None):
                antennas.update(a for (r, a), z in self._antenna_zones.items() if r == reader and z == zone)
        return antennas

    def feed_antenna(self, reader: str, antenna: int, reads: list[TagRead], t: float,
                     whole: bool = True) -> list[ZoneEvent]:
        """One antenna's reads of a cycle still being read: the tags they settle (see ``awaiting``), nothing else;
        in a zone of ``still_after_reads``, a visit that counts towards its stillness if it read its ``whole``
        field, the last part of a stack read in turns included (the cycle does not count the antenna again)."""
        zone = self._antenna_zones.get((reader, antenna))
        if zone is None:
            return []
        floor = self.min_rssi_dbm
        events: list[ZoneEvent] = []
        for read in reads:
            if floor is not None and read.rssi is not None and read.rssi < floor:
                continue
            state = self._tags.get(read.uid)
            if state is None and zone in self._expected:  # a new tag where the table expects one
                state = self._tags[read.uid] = _TagState(candidate=zone, candidate_reader=reader)
            elif state is None or state.candidate != zone:
                continue
            need = self._reads_to_settle(zone, state.zone is not None)
            if state.candidate_hits + 1 < need:
                continue
            self._quiet = None
            ordered = self.order_window_s and need > 1
            first = self._first_read.get(read.uid)
            if first is None or first[0] != zone:
                first = (zone, t)
            events += self._settle(read.uid, state, zone, reader, t, first[1] if ordered else None)
        if self._held:
            events += self._release(t)
        if zone in self._still_after:
            self._visited.add((reader, antenna))
            events = self._hold_until_still(events, {zone} if whole else set())
        return events

    def _best_reads(self, cycle: InventoryCycle) -> dict[str, str]:
        """Each tag's zone: that of the antenna that read it most strongly in the cycle (weak and unmapped reads
        counted).

        A reader that saw exactly what it saw last time (the same reads) gets last time's answer, and its
        counts again: most cycles of a table at rest are such repeats, and each read costs time on a Pi.
        """
        reader = cycle.reader
        reads = cycle.reads
        floor = self.min_rssi_dbm
        last = self._last_best.get(reader)
        if last is not None and last[0] is reads and last[1] == floor:
            _reads, _floor, best, weak, unmapped = last
            self.weak_reads += weak
            self.unmapped_reads += unmapped
            return best
        zone_of_antenna = self._zones_of_reader.get(reader)
        if zone_of_antenna is None:
            zone_of_antenna = self._zones_of_reader[reader] = {
                antenna: zone for (r, antenna), zone in self._antenna_zones.items() if r == reader}
        zone_at = zone_of_antenna.get
        if floor is None:
            best = {read.uid: zone_at(read.antenna) for read in reads}
        else:  # the strong reads: a weak one leaves ``best`` short of a read, and the reads are weighed below
            best = {read.uid: zone_at(read.antenna) for read in reads if read.rssi is None or read.rssi >= floor}
        weak = unmapped = 0
        if len(best) == len(reads) and None not in best.values():
            # The usual cycle, every tag read by one antenna of a zone, strongly enough: each is where it was read.
            # (One quick pass rather than weighing each read: a table at play reads anew nearly every cycle.)
            self._last_best[reader] = (reads, floor, best, weak, unmapped)
            return best
        best = {}
        strongest: dict[str, TagRead] = {}  # the read that gave each tag its zone
        for read in reads:
            if floor is not None and read.rssi is not None and read.rssi < floor:
                weak += 1
                continue
            zone = zone_at(read.antenna)
            if zone is None:
                unmapped += 1
                continue
            uid = read.uid
            if uid in best and _strength(read) <= _strength(strongest[uid]):
                continue  # another antenna read it more strongly (or as strongly, and first)
            best[uid] = zone
            strongest[uid] = read
        self.weak_reads += weak
        self.unmapped_reads += unmapped
        self._last_best[reader] = (reads, floor, best, weak, unmapped)
        return best

    def _release(self, t: float) -> list[ZoneEvent]:
        """The held arrivals no tag first read earlier is still waiting to be confirmed before, oldest first."""
        horizon = t - self.order_window_s
        for uid in [uid for uid, (_zone, since) in self._first_read.items() if since < horizon]:
            del self._first_read[uid]  # read once and never settled (a tag carried over an antenna)
        if not self._held:
            return []
        waiting = min((since for _zone, since in self._first_read.values()), default=float("inf"))
        self._held.sort()
        out: list[ZoneEvent] = []
        while self._held and (self._held[0][0] <= waiting or self._held[0][0] < horizon):
            _since, _count, left, arrived, uid = self._held.pop(0)
            out += _moved(left, arrived, uid, t)
        return out


def _moved(left: str | None, arrived: str, uid: str, t: float) -> list[ZoneEvent]:
    """A tag settling in a zone: it leaves the one it was in first."""
    if left is None:
        return [ZoneEvent("arrived", arrived, uid, t)]
    return [ZoneEvent("left", left, uid, t), ZoneEvent("arrived", arrived, uid, t)]
