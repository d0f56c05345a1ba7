"""Debounce raw inventory cycles into clean zone arrivals and departures.

A reader misses tags now and then and an antenna sometimes reads a tag lying on the neighbouring zone.
Two rules give a clean picture anyway:

* a tag *arrives* in a zone after it has been read there in ``present_after_cycles`` consecutive cycles,
  and *leaves* after it has not been read there for ``absent_after_s`` seconds;
* a tag read by several antennas in one cycle belongs to the antenna that reads it most strongly (RSSI),
  then most often (read count) — never simply the first one that reported it.

A tag is in at most one zone: when it settles in a new zone it leaves the old one first.
"""

from dataclasses import dataclass

from hal.events import InventoryCycle, TagRead, ZoneEvent


@dataclass(frozen=True)
class DebounceSettings:
    present_after_cycles: int = 1
    absent_after_s: float = 0.3


@dataclass
class _TagState:
    zone: str | None = None  # the zone the tag is settled in
    reader: str | None = None  # the reader that owns that zone
    last_seen: float = 0.0  # last time it was read in its settled zone
    candidate: str | None = None  # a zone it is being read in but has not settled in yet
    candidate_reader: str | None = None
    candidate_hits: int = 0


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
    ):
        self._antenna_zones = dict(antenna_zones)
        self._settings = {zone: (settings_by_zone or {}).get(zone, default) for zone in self._antenna_zones.values()}
        self._tags: dict[str, _TagState] = {}
        self.unmapped_reads = 0  # reads from antennas that no zone uses (wiring or configuration fault)

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
        reader_of_zone = {zone: reader for (reader, _antenna), zone in self._antenna_zones.items()}
        for uid, zone in zone_of_tag.items():
            if zone in reader_of_zone:
                self._tags[uid] = _TagState(zone=zone, reader=reader_of_zone[zone], last_seen=t)

    def feed(self, cycle: InventoryCycle) -> list[ZoneEvent]:
        best: dict[str, tuple[str, TagRead]] = {}
        for read in cycle.reads:
            zone = self._antenna_zones.get((cycle.reader, read.antenna))
            if zone is None:
                self.unmapped_reads += 1
                continue
            held = best.get(read.uid)
            if held is None or _strength(read) > _strength(held[1]):
                best[read.uid] = (zone, read)

        events: list[ZoneEvent] = []
        t = cycle.t
        for uid, (zone, _read) in best.items():
            state = self._tags.get(uid)
            if state is None:
                state = self._tags[uid] = _TagState()
            if state.zone == zone:
                state.last_seen = t
                state.candidate, state.candidate_hits = None, 0
                continue
            if state.candidate == zone:
                state.candidate_hits += 1
            else:
                state.candidate, state.candidate_reader, state.candidate_hits = zone, cycle.reader, 1
            if state.candidate_hits >= self._settings[zone].present_after_cycles:
                if state.zone is not None:
                    events.append(ZoneEvent("left", state.zone, uid, t))
                events.append(ZoneEvent("arrived", zone, uid, t))
                state.zone, state.reader, state.last_seen = zone, cycle.reader, t
                state.candidate, state.candidate_hits = None, 0

        # Departures: tags of this reader's zones that have not been read for long enough.
        for uid, state in list(self._tags.items()):
            if uid in best:
                continue
            if state.candidate_reader == cycle.reader:
                state.candidate, state.candidate_reader, state.candidate_hits = None, None, 0  # need consecutive cycles
            if state.zone is None:
                if state.candidate is None:
                    del self._tags[uid]
                continue
            if state.reader == cycle.reader and t - state.last_seen >= self._settings[state.zone].absent_after_s:
                events.append(ZoneEvent("left", state.zone, uid, t))
                del self._tags[uid]
        return events
