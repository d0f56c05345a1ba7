"""Simulated readers over the simulated field (``sim.field``): what the zone tracker is fed at a simulated table.

``PerfectReader`` reads every tag lying on an antenna once a cycle; ``NoisyReader`` reads them through the RF noise
model (``sim.noise``). Both are polled like the HAL's reader backends.
"""

from itertools import chain

from hal.events import InventoryCycle, TagRead
from sim.field import TableField
from sim.noise import NoiseModel


class NoisyReader:
    """A reader over the simulated field through the RF noise model (misses, cross reads, flicker, stack limit)."""

    def __init__(self, name: str, antennas: int, field: TableField, noise: NoiseModel):
        self.name, self.antennas, self.field, self.noise = name, antennas, field, noise
        self._cycle = 0

    def poll(self, now: float) -> list[InventoryCycle]:
        self._cycle += 1
        cycle, antenna_reads = self._cycle, self.noise.antenna_reads
        tags = {a: self.field.tags_on(self.name, a) for a in range(1, self.antennas + 1)}
        reads = []
        for antenna in range(1, self.antennas + 1):
            around = {n: tags[n] for n in (antenna - 1, antenna + 1) if n in tags}
            if tags[antenna] or any(around.values()):  # an antenna with nothing on or beside it reads nothing
                reads += [TagRead(antenna, read.uid, read.read_count, read.rssi)
                          for read in antenna_reads(cycle, antenna, tags[antenna], around)]
        return [InventoryCycle(self.name, now, tuple(reads))]


class PerfectReader:
    """Every tag read once per cycle. The reads are built again only where the table changed: an antenna's when its
    tags did, each tag's read once for every antenna it lies on (a simulated table reads thousands of cycles a hand)."""

    def __init__(self, name: str, antennas: int, field: TableField):
        self.name, self.antennas, self.field = name, antennas, field
        self._version, self._reads = -1, ()
        self._antenna_reads: dict[int, tuple[TagRead, ...]] = {a: () for a in range(1, antennas + 1)}  # in order
        self._read_of: dict[int, dict[str, TagRead]] = {}  # antenna → uid → its read, made once

    def poll(self, now: float) -> list[InventoryCycle]:
        field = self.field
        if field.version != self._version:
            for antenna in field.changed_since(self.name, self._version):
                if antenna in self._antenna_reads:
                    reads = self._read_of.setdefault(antenna, {})
                    self._antenna_reads[antenna] = tuple([reads.get(uid) or self._read(antenna, uid)
                                                          for uid in field.tags_on(self.name, antenna)])
            self._version = field.version
            self._reads = tuple(chain.from_iterable(self._antenna_reads.values()))
        return [InventoryCycle(self.name, now, self._reads)]

    def _read(self, antenna: int, uid: str) -> TagRead:
        """A tag's first read on an antenna, kept: the same read object every cycle after."""
        read = self._read_of[antenna][uid] = TagRead(antenna, uid, 3, -45)
        return read
