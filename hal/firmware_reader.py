"""The HAL reader backend for a reader running the table firmware, reached through ``firmware_bridge``.

``FirmwareReader.poll(now)`` drives the link and turns the reader's per-antenna INVENTORY messages into
one ``InventoryCycle`` per cycle number. A cycle is handed on when its last frame (flag CYCLE_END) arrives,
or, if that frame was lost, when the first frame of another cycle does.

What the zone tracker sees when things go wrong, and why:

* **Link down** (unplugged, stalled, rebooting): no cycles at all. The tracker's departure timer only
  runs when a cycle of this reader arrives, so the tags last seen stay where they were instead of
  "leaving" because the cable came out. After the reconnect the link requests a full inventory, and the
  first complete cycle re-establishes the truth: moved tags settle in their new zone (leaving the old
  one), and tags that really left are removed by the absence timer on that first cycle, since they were
  last seen before the outage.
* **After (re)connecting** the first cycle may have begun before we were listening, so it is skipped:
  a cycle is used only once the end of the one before it has been seen, or if it is the REQUESTED cycle
  that began after the link's REQUEST_INVENTORY was acknowledged (spec section 6.7).
* **Faulted antenna**: the reader sends nothing for it and its contents are unknown, not empty (spec
  6.7), so the tags it last reported are carried forward until the fault clears.
* **Lost frames** (seq gap): an antenna missing from a cycle during which frames were lost keeps its
  previous reads for that cycle. So does an antenna whose MORE sequence was cut, and the antenna of the
  frame right after a gap (the lost frames may have been its first parts).
* **A cycle that never ends** (its number stuck, no CYCLE_END) or that holds more reads than any table has
  tags (``MAX_CYCLE_READS``): it is given up, counted (``cycles_given_up``, with why in ``last_given_up``), and
  the reader counts as not delivering (``delivering``: the status light and ``diag`` say so) until a cycle
  ends whole again. A cycle that goes on is one whose antennas keep coming: it is given up once no antenna new
  to it has reported for ``CYCLE_LIMIT_PERIODS`` times the longer of the configured cycle and the longest such
  wait in a whole cycle, and never sooner than ``CYCLE_LIMIT_MIN_S`` (so a slow reader's long pass, antenna
  after antenna, is never cut). Without this bound the reads of a cycle that never ends would grow without limit
  (about 0.5 GB an hour on a 115,200-baud line).
* **What matters now.** Given each antenna's dwell (``dwells``: the table's schedule), the reader is told to visit
  the antennas whose reads are wanted as soon as they report (``watch_antennas``: the seats the table deals to next,
  a card one read short, the seat to act's bets) more often: SET_SCHEDULE (spec 6.2: an antenna may appear several
  times) with each of them after every ``hint_every`` slots of its front end (``hinted_schedule``), from the next
  pass, and once in the pass under way (a reader of 1.1); the plain schedule again once nothing is watched, and
  again after a reconnect (a reader boots with its own). Each visit of a watched antenna is handed on as it
  reports (``take_early_reads``), with whether it read its whole field (UNRESOLVED clear, 1.1).
* **A stack read as it grows** (a reader of 1.2 with the PARK capability, ``park_every_ms`` given): on the antenna
  the table expects a tag on now (``watch_antennas``' ``park``: the next seat's cards during the deal, the seat to
  act's bets), the reader is told to park its front end (PARK, spec 6.13): the field stays on, the tags read there
  are kept quiet, and each round reports only the tags put down since (QUIET), read whole again every
  ``park_every_ms``. The antenna's reads are the picture its last whole reading gave and the rounds since added to.
  The front end's other antennas are not scanned meanwhile: unknown, not empty. Each cycle names them
  (``InventoryCycle.unread``) with no reads, and the zone tracker leaves their tags where they lie until the reader
  scans them again (carrying their last reads instead brought back a chip the dealer had since swept into the
  pot).
* **A link that flaps** (unplugged and replugged, rebooting again and again): at most ``LINK_REPORTS`` link
  changes in ``LINK_REPORT_WINDOW_S`` are handed on as they come; the rest of the window are held and its end
  hands on the newest with how many it stands for (``summarised``, :mod:`hal.bursts`).

Antenna numbers: the wire numbers antennas from 0, the table configuration (and so ``TagRead.antenna``)
from 1, as printed on the board.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from firmware_bridge.link import LinkEvent, ReaderLink
from firmware_bridge.messages import (NO_ANTENNA, AntennaFault, Capability, FaultCode, IdentifyReply, Inventory,
                                      InventoryFlag, Park, ScheduleSlot, SetSchedule)
from firmware_bridge.transports import SerialTransport, TcpTransport, Transport, UsbTransport
from hal.bursts import Bursts
from hal.events import DeviceEvent, EarlyReads, InventoryCycle, TagRead
from hal.reader_backend import ReaderBackend
from hal.zone_names import Zone

log = logging.getLogger(__name__)

CONFIG_ANTENNA_BASE = 1  # configuration antenna number of wire antenna 0

_UID_NAMES_KEPT = 4096  # a table holds a few hundred tags (cards and chips)
# What one cycle may hold: a full table has a few hundred tags, each read on one or two antennas.
MAX_CYCLE_READS = 8192
CYCLE_LIMIT_PERIODS = 4  # a cycle not ended after this many cycles' time is given up ...
CYCLE_LIMIT_MIN_S = 2.0  # ... and never sooner than this
GIVEN_UP_LOG_S = 60.0  # while cycles keep being given up, the log says so again this often
LINK_REPORTS = 5  # link changes handed on as they come in one window ...
LINK_REPORT_WINDOW_S = 10.0  # ... of this long; the rest of the window as one

FRONT_END_ANTENNAS = 8  # the reference board: each front end's switch takes 8 antennas, in order (docs/hardware.md)
HINT_EVERY = 3  # a watched antenna is visited again after every third slot of its front end
HINTED_MOST = 4  # more antennas watched than this: the plain schedule (a pass would grow too long)
# A parked antenna is read whole this often (PARK, 1.2): a chip taken away is gone from the reads within it. Each whole
# reading wakes the stack, reads it and quiets it again (30 chips: about 200 ms of air), and a push that lands then
# waits for it: at 500 ms a parked front end spent more than half its time so (docs/bench.md).
PARK_EVERY_MS = 2000
_PARKED_UNKNOWN = -1  # after a (re)connect the host does not know where the reader's front ends are parked


def hint_every_of(zones: dict[str, tuple[str, int]], reader: str) -> int:
    """How many slots of its front end come between the visits of a watched antenna of ``reader`` (zone → (reader,
    antenna)): every slot on a reader of chips alone (the seat to act's bets, read once they lie still), else
    ``HINT_EVERY``."""
    holds = {Zone.parse(zone).holds for zone, (name, _antenna) in zones.items() if name == reader}
    return 1 if holds == {"chips"} else HINT_EVERY


def front_ends_of(antennas: int) -> list[int]:
    """How many antennas each front end switches, in order, on the reference board: 8 to a front end."""
    return [min(FRONT_END_ANTENNAS, antennas - first) for first in range(0, antennas, FRONT_END_ANTENNAS)]


def hinted_schedule(dwells: list[int], watched: frozenset[int], every: int = HINT_EVERY,
                    front_ends: list[int] | None = None) -> tuple[ScheduleSlot, ...]:
    """Each wire antenna once with its dwell, and the ``watched`` ones again after every ``every`` slots of their
    front end (a front end scans its own antennas in schedule order, beside the others; ``front_ends``: how many
    antennas each switches, by default ``front_ends_of``)."""
    first_of: list[int] = []  # wire antenna → the first antenna of its front end
    for size in front_ends or front_ends_of(len(dwells)):
        first_of += [len(first_of)] * size
    first_of += [len(first_of)] * (len(dwells) - len(first_of))  # antennas beyond the layout: a front end of theirs
    slots: list[ScheduleSlot] = []
    last: dict[int, int] = {}  # front end → the antenna it scans last so far (never the same one twice in a row)

    def add(antenna: int) -> None:
        if last.get(first_of[antenna]) != antenna:
            slots.append(ScheduleSlot(antenna, dwells[antenna]))
            last[first_of[antenna]] = antenna

    hinted = sorted(w for w in watched if w < len(dwells)) if len(watched) <= HINTED_MOST else []
    for antenna in range(len(dwells)):
        add(antenna)
        if (antenna - first_of[antenna]) % every == every - 1:
            for w in hinted:
                if first_of[w] == first_of[antenna]:
                    add(w)
    return tuple(slots)


# The INVENTORY flags as plain ints: an enum's ``&`` costs a microsecond, and every frame tests three of them.
_MORE, _REQUESTED, _CYCLE_END = int(InventoryFlag.MORE), int(InventoryFlag.REQUESTED), int(InventoryFlag.CYCLE_END)
_UNRESOLVED, _QUIET = int(InventoryFlag.UNRESOLVED), int(InventoryFlag.QUIET)


@dataclass
class _CycleInProgress:
    number: int
    progressed: float  # when an antenna new to the cycle last reported (its first frame, at first)
    reads: dict[int, list[TagRead]] = field(default_factory=dict)  # wire antenna -> reads so far
    visit: list[TagRead] = field(default_factory=list)  # the reads of the antenna's visit under way (or last)
    unresolved: set[int] = field(default_factory=set)  # antennas whose last visit left collisions (a part read)
    open_antenna: int | None = None  # an antenna whose MORE sequence has not ended yet
    broken: set[int] = field(default_factory=set)  # antennas whose MORE sequence lost a frame
    faulted: set[int] = field(default_factory=set)  # antennas faulted at any time during the cycle
    suspended: set[int] = field(default_factory=set)  # antennas a parked front end left unscanned (PARK, 1.2)
    frames_lost: bool = False
    held: int = 0  # tag entries taken in so far
    longest_wait: float = 0.0  # between two antennas new to it, so far


class FirmwareReader(ReaderBackend):
    """A ``hal.readers.ReaderBackend`` over a ``ReaderLink``."""

    link: ReaderLink

    def __init__(
        self, name: str, link: ReaderLink, antenna_base: int = CONFIG_ANTENNA_BASE, antennas: int | None = None,
        cycle_s: float | None = None, dwells: list[int] | None = None, hint_every: int = HINT_EVERY,
        front_ends: list[int] | None = None, park_every_ms: int | None = None,
    ):
        self.name = name
        self.link = link
        self.antenna_base = antenna_base
        self.antennas = antennas  # how many the table configuration uses, to check against the reader
        self.cycle_s = cycle_s  # the configured cycle, for how long one may take (None: not known)
        self.cycles_emitted = 0
        self.cycles_skipped = 0  # incomplete first cycles after a (re)connect
        self.cycles_given_up = 0  # cycles that did not end in time or held too many reads
        self.last_given_up: str | None = None  # why the latest was given up
        self.delivering = True  # False from a cycle given up until a cycle ends whole again
        self._longest_wait_s = 0.0  # for an antenna new to its cycle, in the whole cycles seen
        self._given_up_logged = float("-inf")
        self._given_up_unlogged = 0
        self._link_reports = Bursts(LINK_REPORTS, LINK_REPORT_WINDOW_S)
        self._now = 0.0  # of the latest receive
        self._events: list[LinkEvent] = []
        self._uid_names: dict[bytes, str] = {}  # wire UID → its hex name: the same tags are read every cycle
        self._ready: list[InventoryCycle] = []  # complete cycles taken in, not yet handed on by poll
        self._cycle: _CycleInProgress | None = None
        self._synchronised = False  # seen the end of a cycle since the link came up
        self._last_reads: dict[int, list[TagRead]] = {}  # wire antenna -> reads of the last cycle that had it
        # Faulted wire antennas. Kept across reconnects: a fault ends with CLEARED or with an INVENTORY
        # for the antenna (a reader reports none for a faulted antenna), e.g. after a reboot.
        self._faulted: set[int] = set()
        self._gap_pending = False  # frames were lost just before the next INVENTORY we will get
        self._requested_acked = False  # our REQUEST_INVENTORY was acknowledged; its cycle is whole
        self._watched: frozenset[int] = frozenset()  # wire antennas whose reads are wanted before their cycle ends
        self._early: list[EarlyReads] = []  # their visits this cycle, not yet taken
        self.dwells = dwells  # each wire antenna's dwell (ms): the schedule the watched antennas are added to
        self.hint_every = hint_every  # a watched antenna is visited again after every this many slots of its front end
        self.front_ends = front_ends  # antennas on each front end, in order (None: the reference board's 8 each)
        self._scheduled: tuple[ScheduleSlot, ...] | None = None  # the schedule last sent since the link came up
        # PARK (1.2): a watched antenna read as its stack grows, read whole this often (None: never parked)
        self.park_every_ms = park_every_ms
        self._parked: int | None = None  # the wire antenna the reader was last told to park on (or _PARKED_UNKNOWN)
        self._suspended: frozenset[int] = frozenset()  # the parked front end's other antennas: unknown, not empty
        self._resuming: set[int] = set()  # those of a front end set free, carried until the reader reports them
        # a parked wire antenna → its tags: its last whole reading and the rounds since
        self._pictures: dict[int, dict[str, TagRead]] = {}
        self._before: dict[int, dict[str, TagRead]] = {}  # ... and what it held before its last whole reading, ...
        self._reading_ended: set[int] = set()  # ... kept until a round after that reading has ended

    @property
    def link_up(self) -> bool:
        return self.link.is_up

    @property
    def link_state(self) -> str:
        return self.link.state.value

    @property
    def paced_by_host(self) -> bool:
        return self.link.paced_by_host

    def fileno(self) -> int | None:
        transport = self.link.transport
        return transport.fileno() if transport is not None else None

    def poll(self, now: float) -> list[InventoryCycle]:
        self.receive(now)
        cycles, self._ready = self._ready, []
        return cycles

    def receive(self, now: float) -> bool:
        """Take in what the link has by ``now`` without handing it on; True once there is something to hand on (a
        complete cycle, or a link event such as up or down) for the next :meth:`poll`.

        A reader reports each antenna as its dwell ends, so most of its frames complete nothing: the daemon's loop
        takes them in as they arrive and runs the table only when a cycle is whole.
        """
        self._now = now
        for event in self.link.poll(now):
            message = event.message
            if event.kind == "inventory" and isinstance(message, Inventory):
                self._inventory(now, message, self._ready)
                continue
            self._events.append(event)
            if event.kind in ("up", "down", "reader_reset"):
                # Whatever was in progress belongs to a connection or a boot that is over.
                self._cycle = None
                self._synchronised = False
                self._gap_pending = False
                self._requested_acked = False
                self._scheduled = None  # the reader scans its own schedule until told otherwise
                self._pictures.clear()  # a parked antenna's next report is a whole reading (REQUEST_INVENTORY)
                self._before.clear()
                self._reading_ended.clear()
                self._parked = _PARKED_UNKNOWN
            if event.kind == "up" and isinstance(message, IdentifyReply):
                self._check_antenna_count(message)
            elif event.kind == "inventory_requested":
                self._requested_acked = True
            elif event.kind == "antenna_fault" and isinstance(message, AntennaFault):
                self._antenna_fault(message)
            elif event.kind == "frames_lost":
                self._frames_lost()
        cycle = self._cycle
        if cycle is not None and now - cycle.progressed > self.cycle_limit_s:
            self._give_up(now, f"cycle {cycle.number}: no new antenna for {self.cycle_limit_s:g} s, and no end")
        return bool(self._ready or self._events or self._early or self._link_reports.next_due() <= now)

    @property
    def cycle_limit_s(self) -> float:
        """How long a cycle may go without an antenna new to it before it is given up."""
        return max(CYCLE_LIMIT_MIN_S, CYCLE_LIMIT_PERIODS * max(self.cycle_s or 0.0, self._longest_wait_s))

    @property
    def watching(self) -> bool:
        """Whether some antenna's reads are wanted as soon as it reports (``watch_antennas``)."""
        return bool(self._watched)

    def watch_antennas(self, antennas: set[int], park: int | None = None,
                       visit_more: frozenset[int] = frozenset()) -> None:
        self._watched = frozenset(antenna - self.antenna_base for antenna in antennas)
        hinted = self._watched | {antenna - self.antenna_base for antenna in visit_more}
        if self.park_every_ms and self.link.is_up:
            self._park(self._park_target(None if park is None else park - self.antenna_base))
        if self.dwells is None or not self.link.is_up:
            return
        schedule = hinted_schedule(self.dwells, hinted, self.hint_every, self.front_ends)
        if schedule != self._scheduled and (self._scheduled is not None or hinted):
            self._scheduled = schedule
            self.link.send(SetSchedule(0, schedule))

    def _park_target(self, antenna: int | None) -> int | None:
        """The wire antenna to park on: the one the table expects a tag on now, on a reader that can."""
        identity = self.link.identity
        if antenna is None or identity is None or not identity.capabilities & Capability.PARK:
            return None
        return antenna

    @property
    def parked(self) -> int | None:
        """The antenna (configuration number) the reader was last told to park on; None: parked nowhere."""
        return None if self._parked in (None, _PARKED_UNKNOWN) else self._parked + self.antenna_base

    def _park(self, antenna: int | None) -> None:
        if antenna == self._parked:
            return
        identity = self.link.identity
        if antenna is None and (identity is None or not identity.capabilities & Capability.PARK):
            self._parked = None  # a reader without PARK is never parked
            return
        self._parked = antenna
        self.link.send(Park(0, NO_ANTENNA if antenna is None else antenna, self.park_every_ms or 0))
        suspended = frozenset() if antenna is None else frozenset(self._front_end_of(antenna)) - {antenna}
        # the front end set free (or parked elsewhere): its antennas are carried until the reader has scanned them
        self._resuming = (self._resuming | self._suspended) - suspended
        self._suspended = suspended
        if self._cycle is not None:
            self._cycle.suspended |= suspended

    def _front_end_of(self, antenna: int) -> range:
        """The wire antennas on ``antenna``'s front end."""
        first = 0
        for size in self.front_ends or front_ends_of(len(self.dwells) if self.dwells else antenna + 1):
            if antenna < first + size:
                return range(first, first + size)
            first += size
        return range(antenna, antenna + 1)

    def take_early_reads(self) -> list[EarlyReads]:
        early, self._early = self._early, []
        return early

    def drain_link_events(self) -> list[LinkEvent]:
        """Link events other than inventories since the last call: up, down, faults, status, losses."""
        events, self._events = self._events, []
        return events

    def device_events(self) -> list[DeviceEvent]:
        """The link events since the last call that matter to the table, as HAL device events; the link's changes
        (up, down, incompatible, reset) at most ``LINK_REPORTS`` a window, the rest of the window as one."""
        out = []
        for event in self.drain_link_events():
            detail: dict = {}
            if event.kind == "up":
                kind, identity = "reader_up", event.message
                if isinstance(identity, IdentifyReply):
                    detail = {"serial": identity.serial, "antennas": identity.antenna_count,
                              "firmware": f"{identity.firmware_major}.{identity.firmware_minor}."
                                          f"{identity.firmware_patch}"}
            elif event.kind in ("down", "incompatible", "reader_reset"):
                kind, detail = {"down": "reader_down", "incompatible": "reader_incompatible",
                                "reader_reset": "reader_reset"}[event.kind], {"reason": event.reason}
            elif event.kind == "antenna_fault" and isinstance(event.message, AntennaFault):
                fault = event.message.fault
                kind = "antenna_ok" if fault == FaultCode.CLEARED else "antenna_fault"
                detail = {"antenna": event.message.antenna + self.antenna_base,
                          "fault": fault.name.lower() if isinstance(fault, FaultCode) else int(fault)}
            else:
                continue
            device_event = DeviceEvent(kind, self.name, event.t, tuple(detail.items()))
            if kind.startswith("reader_"):
                out += self._summarised(self._link_reports.offer(self.name, event.t, device_event))
            else:
                out.append(device_event)
        return out + self._summarised(self._link_reports.due(self._now))

    def _summarised(self, reports: list[tuple[DeviceEvent, int]]) -> list[DeviceEvent]:
        """Link changes to hand on: one that stands for several held ones is handed on now, with their count."""
        out = []
        for event, count in reports:
            if count > 1 or event.t < self._now:
                event = DeviceEvent(event.kind, event.reader, self._now,
                                    event.detail + ((("summarised", count),) if count > 1 else ()))
            out.append(event)
        return out

    def close(self) -> None:
        self.link.close()

    @property
    def faulted_antennas(self) -> frozenset[int]:
        """Configuration numbers of the antennas reporting a fault now."""
        return frozenset(antenna + self.antenna_base for antenna in self._faulted)

    # ---- assembling cycles -------------------------------------------------------------------------------

    def _inventory(self, now: float, inventory: Inventory, cycles: list[InventoryCycle]) -> None:
        flags = int(inventory.flags)
        cycle = self._cycle
        if cycle is not None and cycle.number != inventory.cycle:
            # The end-of-cycle frame of the previous cycle was lost; its successor has begun.
            self._finish(now, cycles)
            self._synchronised = True
            cycle = None
        if cycle is None:
            cycle = self._cycle = _CycleInProgress(inventory.cycle, now, faulted=set(self._faulted),
                                                   suspended=set(self._suspended | self._resuming))
            if flags & _REQUESTED and self._requested_acked:
                # Requested after our ACK, so we hear it from its start (it matters with an empty
                # schedule, where no earlier cycle end would ever be seen).
                self._synchronised = True
                self._requested_acked = False
        antenna = inventory.antenna
        if antenna not in cycle.reads:  # the cycle goes on
            cycle.longest_wait = max(cycle.longest_wait, now - cycle.progressed)
            cycle.progressed = now
        self._faulted.discard(antenna)
        self._resuming.discard(antenna)
        if self._gap_pending:
            # The lost frames may have been this antenna's first parts (MORE): its reads this cycle are
            # incomplete as far as we know.
            self._gap_pending = False
            cycle.frames_lost = True
            cycle.broken.add(antenna)
        if cycle.open_antenna is not None and cycle.open_antenna != antenna:
            cycle.broken.add(cycle.open_antenna)  # its MORE sequence never finished
        uid_reads = cycle.reads.setdefault(antenna, [])
        if cycle.open_antenna != antenna:  # a visit begins (an antenna the schedule lists twice is visited twice)
            cycle.visit = []
        visit = cycle.visit
        number = antenna + self.antenna_base
        name_of = self._uid_names
        for entry in inventory.entries:
            uid = entry.uid
            name = name_of.get(uid)
            if name is None:
                if len(name_of) >= _UID_NAMES_KEPT:  # a flood of unknown tags must not grow it without bound
                    name_of.clear()
                name = name_of[uid] = uid.hex().upper()
            read = TagRead(number, name, entry.read_count, entry.rssi)
            uid_reads.append(read)
            visit.append(read)
        cycle.held += len(inventory.entries)
        if cycle.held > MAX_CYCLE_READS:
            self._give_up(now, f"cycle {cycle.number} held more than {MAX_CYCLE_READS} reads")
            return
        cycle.open_antenna = antenna if flags & _MORE else None
        if cycle.open_antenna is None:  # the visit's last frame says whether it read the whole field (1.1)
            (cycle.unresolved.add if flags & _UNRESOLVED else cycle.unresolved.discard)(antenna)
            if flags & _QUIET or antenna == self._parked or antenna in self._pictures:
                visit = self._parked_visit(cycle, antenna, visit, flags)
        if (antenna in self._watched and cycle.open_antenna is None and self._synchronised
                and not cycle.frames_lost and antenna not in cycle.broken):
            # this visit of the antenna, as far as it read its field
            self._early.append(EarlyReads(number, _merge(visit), now, not flags & _UNRESOLVED))
        if flags & _CYCLE_END:
            self._finish(now, cycles)
            self._synchronised = True

    def _parked_visit(self, cycle: _CycleInProgress, antenna: int, visit: list[TagRead], flags: int) -> list[TagRead]:
        """A parked antenna's visit (PARK, 1.2): a round that reports the tags new since the last (QUIET) adds them
        to the picture of its last whole reading; a whole reading is the picture anew. The antenna's reads in the
        cycle are the picture as it is now, and what the picture held before the whole reading until a round after
        it has ended: a tag whose answer the whole reading lost is awake (never told to stay quiet) and answers that
        round, so it never seems to leave."""
        ended = self._reading_ended
        if flags & _QUIET:
            picture = self._pictures.get(antenna)
            if picture is None:  # the reading it adds to was not heard (a reconnect): unknown until the next one
                cycle.broken.add(antenna)
                return visit
            picture.update((read.uid, read) for read in visit)
            if not flags & _UNRESOLVED and antenna in self._before:
                if antenna in ended:  # a whole round after the whole reading: what it did not find is gone
                    del self._before[antenna]
                    ended.discard(antenna)
                else:  # the last part of a whole reading read in turns
                    ended.add(antenna)
        elif antenna == self._parked:
            before = self._pictures.get(antenna)
            if before is None:  # parked now: what its last reading held
                before = {read.uid: read for read in self._last_reads.get(antenna, ())}
            picture = self._pictures[antenna] = {read.uid: read for read in visit}
            self._before[antenna] = {**self._before.get(antenna, {}), **before}
            (ended.discard if flags & _UNRESOLVED else ended.add)(antenna)
        else:  # set free: read as any antenna again
            del self._pictures[antenna]
            self._before.pop(antenna, None)
            ended.discard(antenna)
            return visit
        reads = {**self._before.get(antenna, {}), **picture}
        cycle.reads[antenna] = list(reads.values())
        return cycle.reads[antenna]

    def _finish(self, now: float, cycles: list[InventoryCycle]) -> None:
        cycle, self._cycle = self._cycle, None
        self._early.clear()  # the whole cycle carries those reads now
        if cycle is None:
            return
        if not self._synchronised:
            self.cycles_skipped += 1  # may have started before we were listening
            return
        if cycle.open_antenna is not None:
            cycle.broken.add(cycle.open_antenna)
        reads_by_antenna: dict[int, list[TagRead]] = {}
        for antenna, reads in cycle.reads.items():
            if antenna not in cycle.broken:
                reads_by_antenna[antenna] = _merge(reads)
        # Unknown is not empty. A parked front end's other antennas are not scanned: the cycle says so (``unread``),
        # and the tracker leaves their tags where they lie, neither gone nor come (a tag carried from an earlier
        # reading that has since moved would come back). What faulted or lost antennas last reported is carried.
        waiting = cycle.suspended - set(reads_by_antenna)
        carried = (cycle.faulted | self._faulted | cycle.broken) - waiting
        if cycle.frames_lost:
            carried |= set(self._last_reads) - set(reads_by_antenna) - waiting
        held = set()  # carried, not read: their zones are not read whole in this cycle
        for antenna in carried:
            if antenna not in reads_by_antenna and antenna in self._last_reads:
                reads_by_antenna[antenna] = self._last_reads[antenna]
                held.add(antenna)
        self._last_reads.update(reads_by_antenna)
        for antenna in set(self._last_reads) - set(reads_by_antenna) - waiting:
            self._last_reads[antenna] = []  # reported empty (or not scheduled) this cycle
        cycle_reads = tuple(read for antenna in sorted(reads_by_antenna) for read in reads_by_antenna[antenna])
        self.cycles_emitted += 1
        self._longest_wait_s = max(self._longest_wait_s, cycle.longest_wait)
        if not self.delivering:
            log.warning("%s: cycles end whole again, after %d given up", self.name, self.cycles_given_up)
            self.delivering = True
        unresolved = frozenset(antenna + self.antenna_base
                               for antenna in cycle.unresolved | cycle.broken | held | waiting)
        cycles.append(InventoryCycle(self.name, now, cycle_reads, unresolved,
                                     frozenset(antenna + self.antenna_base for antenna in waiting)))

    def _give_up(self, now: float, reason: str) -> None:
        """Drop the cycle in progress: it never ended, or holds more than a table can. Its antennas keep their last
        reads (the zone tracker hears nothing of them until a cycle ends whole), and the next cycle is used only once
        this one's end has been seen (it may be a part of it)."""
        self._cycle = None
        self._early.clear()
        self._synchronised = False
        self.cycles_given_up += 1
        self.last_given_up = reason
        self.delivering = False
        self._given_up_unlogged += 1
        if now - self._given_up_logged >= GIVEN_UP_LOG_S:
            log.warning("%s: %s: given up (%d cycle(s) given up since the last message); the reader sends what the "
                        "table cannot use: check its firmware", self.name, reason, self._given_up_unlogged)
            self._given_up_logged, self._given_up_unlogged = now, 0

    def _check_antenna_count(self, identity: IdentifyReply) -> None:
        reported = identity.antenna_count
        if self.antennas is not None and reported < self.antennas:
            log.error("%s: the reader has %d antennas but the configuration uses %d: antennas %d to %d stay empty",
                      self.name, reported, self.antennas, reported + self.antenna_base,
                      self.antennas - 1 + self.antenna_base)

    def _frames_lost(self) -> None:
        self._gap_pending = True
        cycle = self._cycle
        if cycle is not None:
            cycle.frames_lost = True
            if cycle.open_antenna is not None:
                cycle.broken.add(cycle.open_antenna)

    def _antenna_fault(self, fault: AntennaFault) -> None:
        if fault.fault == FaultCode.CLEARED:
            if fault.antenna in self._faulted:
                log.info("%s: antenna %d fault cleared", self.name, fault.antenna + self.antenna_base)
            self._faulted.discard(fault.antenna)
        else:
            if fault.antenna not in self._faulted:
                name = getattr(fault.fault, "name", str(fault.fault))
                log.warning("%s: antenna %d fault %s (detail %d); holding its last reads",
                            self.name, fault.antenna + self.antenna_base, name, fault.detail)
            self._faulted.add(fault.antenna)
            if self._cycle is not None:
                self._cycle.faulted.add(fault.antenna)


def _merge(reads: list[TagRead]) -> list[TagRead]:
    """One read per UID (an antenna scanned twice in a pass, or split frames): keep the strongest."""
    best: dict[str, TagRead] = {}
    for read in reads:
        held = best.get(read.uid)
        if held is None or _strength(read) > _strength(held):
            best[read.uid] = read
    return list(best.values())


def _strength(read: TagRead) -> tuple[int, int]:
    return (read.rssi if read.rssi is not None else -1000, read.read_count)


# --------------------------------------------------------------------------
# Construction from the table configuration's terms
# --------------------------------------------------------------------------


def serial_reader(name: str, path: str, baudrate: int = 115200, antennas: int | None = None,
                  cycle_s: float | None = None, dwells: list[int] | None = None,
                  hint_every: int = HINT_EVERY, front_ends: list[int] | None = None,
                  park_every_ms: int | None = None) -> FirmwareReader:
    """A reader on a serial port: USB CDC (give its /dev/serial/by-id/ path) or a UART (a udev symlink)."""
    link = ReaderLink(lambda: SerialTransport(path, baudrate), name=name)
    return FirmwareReader(name, link, antennas=antennas, cycle_s=cycle_s, dwells=dwells, hint_every=hint_every,
                          front_ends=front_ends, park_every_ms=park_every_ms)


def usb_reader(
    name: str,
    vendor_id: int,
    product_id: int,
    serial_number: str | None = None,
    interface: int = 0,
    antennas: int | None = None,
    cycle_s: float | None = None,
    dwells: list[int] | None = None,
    hint_every: int = HINT_EVERY,
    front_ends: list[int] | None = None,
    park_every_ms: int | None = None,
) -> FirmwareReader:
    """A reader with vendor-specific USB bulk endpoints."""
    link = ReaderLink(lambda: UsbTransport(vendor_id, product_id, serial_number, interface), name=name)
    return FirmwareReader(name, link, antennas=antennas, cycle_s=cycle_s, dwells=dwells, hint_every=hint_every,
                          front_ends=front_ends, park_every_ms=park_every_ms)


def bought_reader(name: str, backend: str, link: dict, antennas: int, cycle_s: float | None = None) -> FirmwareReader:
    """A reader one buys (``backend`` ``metratec`` or ``feig``), reached over its maker's protocol
    (``firmware_bridge.metratec``, ``firmware_bridge.feig``), whose link hands on its inventories as the table
    firmware's: ``link`` holds its port (or ``host`` and ``tcp_port``), and the reader's channel of each antenna."""
    import importlib  # noqa: PLC0415 (a protocol is imported only when a table uses it)

    protocol = importlib.import_module(f"firmware_bridge.{backend}")
    channels = [protocol.parse_channel(text) for text in link["channels"]]
    factory: Callable[[], Transport]
    if "host" in link:
        host, port = link["host"], link["tcp_port"]
        factory = lambda: TcpTransport(host, port)  # noqa: E731
    else:
        path, baudrate = link["port"], link["baudrate"]
        # a Feig reader's line has even parity (its factory setting); the others 8N1
        serial = protocol.FeigSerialTransport if backend == "feig" else SerialTransport
        factory = lambda: serial(path, baudrate)  # noqa: E731
    options = {"bus_address": link["bus_address"]} if "bus_address" in link else {}
    link_class = protocol.MetratecLink if backend == "metratec" else protocol.FeigLink
    return FirmwareReader(name, link_class(factory, name=name, channels=channels, **options), antennas=antennas,
                          cycle_s=cycle_s)
