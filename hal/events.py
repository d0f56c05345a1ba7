"""What flows out of the readers (inventory cycles) and out of the HAL (zone events).

A reader pass and the zone events it gives are named tuples: as immutable as a frozen dataclass and a third of its
cost to make (a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``), and a table makes
thousands a second. A ``TagRead`` stays a frozen slots dataclass: a reader keeps the read of a tag lying still and
sends it again, and the zone tracker reads its fields in every cycle, which a slot does faster than a tuple's field.
"""

from dataclasses import dataclass
from typing import Literal, NamedTuple


@dataclass(frozen=True, slots=True)
class TagRead:
    """One tag seen by one antenna during one inventory cycle."""

    antenna: int
    uid: str  # upper-case hex, as printed on the tag and in the deck registry
    read_count: int = 1
    rssi: int | None = None  # dBm where the reader reports it


class InventoryCycle(NamedTuple):
    """Every tag a reader saw on all its antennas in one pass over them."""

    reader: str
    t: float  # seconds (wall clock of the table), when the cycle ended
    reads: tuple[TagRead, ...]
    # antennas whose reads in the pass are a part of their field: a stack read in turns, its collisions left to the
    # antenna's next dwell (protocol 1.1), or frames lost
    unresolved: frozenset[int] = frozenset()
    # antennas the reader did not scan in the pass (a parked front end's others, PARK): their contents are unknown,
    # not empty, so their tags stay where they lie
    unread: frozenset[int] = frozenset()


class EarlyReads(NamedTuple):
    """One visit of an antenna whose reads are wanted as it reports, ahead of its cycle (``watch_antennas``)."""

    antenna: int
    reads: list[TagRead]
    t: float  # when taken in
    whole: bool = True  # the visit read its whole field (False: collisions left for its next dwell)


class ZoneEvent(NamedTuple):
    """A tag arrived in or left a zone of the table (``seat3.cards``, ``board``, ``burn``, ``muck``)."""

    kind: Literal["arrived", "left"]
    zone: str
    uid: str
    t: float


@dataclass(frozen=True, slots=True)
class DeviceEvent:
    """Something about the equipment rather than the game: a reader link went up or down, an antenna faulted.

    ``kind``: ``reader_up``, ``reader_down``, ``reader_incompatible``, ``reader_reset``, ``antenna_fault``,
    ``antenna_ok``. ``detail`` carries what a technician needs (reason, firmware, serial, antenna, fault).
    """

    kind: str
    reader: str
    t: float
    detail: tuple[tuple[str, object], ...] = ()


# What a seat's electronic-device sensor detects, as configured per sensor (``detects`` in the pin map):
# ``phone``: a mobile phone as such (a cellular-band detector, a phone-shaped cradle);
# ``rf``: radio activity of some device (Wi-Fi, Bluetooth, cellular), not known to be a phone;
# ``device``: an electronic device on the rail, of unknown kind (the default).
DEVICE_KINDS = ("phone", "rf", "device")


@dataclass(frozen=True, slots=True)
class SensorEvent:
    """A seat sensor changed, debounced by the HAL (``hal.gpio``).

    ``sensor``: ``presence`` (``active``: a player is seated) or ``device`` (``active``: an electronic device is
    detected). ``t`` is when the level changed, not when the debounce confirmed it. ``detects`` is what a device
    sensor detects (one of :data:`DEVICE_KINDS`; None for presence). ``duration_s``: how long the previous state
    lasted (None when it began before the HAL started).
    """

    t: float
    seat: int
    sensor: Literal["presence", "device"]
    active: bool
    detects: str | None = None
    duration_s: float | None = None
