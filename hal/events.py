"""What flows out of the readers (inventory cycles) and out of the HAL (zone events)."""

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class TagRead:
    """One tag seen by one antenna during one inventory cycle."""

    antenna: int
    uid: str  # upper-case hex, as printed on the tag and in the deck registry
    read_count: int = 1
    rssi: int | None = None  # dBm where the reader reports it


@dataclass(frozen=True, slots=True)
class InventoryCycle:
    """Every tag a reader saw on all its antennas in one pass over them."""

    reader: str
    t: float  # seconds (wall clock of the table), when the cycle ended
    reads: tuple[TagRead, ...]


@dataclass(frozen=True, slots=True)
class ZoneEvent:
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
