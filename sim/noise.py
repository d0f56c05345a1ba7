"""A noise model of the RF side: what one antenna really reads in one inventory cycle.

The simulated table knows exactly which tags lie on which antenna. A real reader does not see it that
cleanly; this model adds the four effects the zone tracker (``hal.zones``) has to cope with:

* **missed read** - a tag lying on the antenna is not read in this cycle;
* **cross read** - a tag lying on a neighbouring antenna is read too, more weakly (lower RSSI, one read);
* **flicker** - a tag lying at the edge of its zone couples poorly: its antenna reads it only in some
  cycles (``edge_read_chance``), so it flickers in and out, and weakly when it is read;
* **stack limit** - anticollision in one dwell gets through at most ``stack_limit`` tags of a stack; the
  rest wait, and which ones are read rotates from cycle to cycle so every tag is read now and then.

Every decision is a pure function of (seed, cycle, antenna, uid), not of call order, so the model is
deterministic for a seed and two antennas asking about the same tag in the same cycle agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping, Sequence

REALISTIC_STACK_LIMIT = 16  # tags one antenna gets through in a 25 ms dwell, a typical reader figure


@dataclass(frozen=True, slots=True)
class Read:
    """One tag as one antenna read it in one cycle."""

    uid: str
    read_count: int
    rssi: int  # dBm


class NoiseModel:
    def __init__(
        self,
        missed_read: float = 0.0,
        cross_read: float = 0.0,
        flicker: float = 0.0,
        stack_limit: int | None = None,
        seed: int = 0,
        *,
        rssi_dbm: int = -45,  # a tag lying well on its antenna
        edge_loss_db: int = 10,  # a tag at the edge of its zone
        cross_read_loss_db: int = 20,  # a tag on the neighbouring antenna
        edge_read_chance: float = 0.65,
    ):
        for name, p in (("missed_read", missed_read), ("cross_read", cross_read), ("flicker", flicker),
                        ("edge_read_chance", edge_read_chance)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability between 0 and 1, got {p}")
        if stack_limit is not None and stack_limit < 1:
            raise ValueError(f"stack_limit must be at least 1 (or None for no limit), got {stack_limit}")
        self.missed_read = missed_read
        self.cross_read = cross_read
        self.flicker = flicker
        self.stack_limit = stack_limit
        self.seed = seed
        self.rssi_dbm = rssi_dbm
        self.edge_loss_db = edge_loss_db
        self.cross_read_loss_db = cross_read_loss_db
        self.edge_read_chance = edge_read_chance

    @classmethod
    def realistic(cls, p: float, seed: int = 0) -> NoiseModel:
        """One knob: misses and cross reads with probability ``p`` per tag and cycle, a share ``p`` of
        placements at a zone edge, and a typical stack limit."""
        return cls(missed_read=p, cross_read=p, flicker=p, stack_limit=REALISTIC_STACK_LIMIT, seed=seed)

    @classmethod
    def perfect(cls) -> NoiseModel:
        return cls()

    def __repr__(self) -> str:
        return (f"NoiseModel(missed_read={self.missed_read}, cross_read={self.cross_read}, flicker={self.flicker}, "
                f"stack_limit={self.stack_limit}, seed={self.seed})")

    # ---- the model ------------------------------------------------------------------------------------

    def antenna_reads(
        self,
        cycle: int,
        antenna: int,
        tags: Sequence[str],
        neighbour_tags: Mapping[int, Sequence[str]] = {},
    ) -> list[Read]:
        """What ``antenna`` reads in ``cycle``, given the tags lying on it and on its neighbours."""
        reads = []
        for uid in self._within_stack_limit(cycle, tags):
            if self.is_edge(antenna, uid):
                if self._draw("edge", cycle, antenna, uid) >= self.edge_read_chance:
                    continue  # flickered out this cycle
                rssi, count = self.rssi_dbm - self.edge_loss_db, 1
            else:
                if self._draw("miss", cycle, antenna, uid) < self.missed_read:
                    continue
                rssi, count = self.rssi_dbm, 2 + int(self._draw("count", cycle, antenna, uid) * 4)
            reads.append(Read(uid, count, rssi + self._jitter(cycle, antenna, uid)))

        own = set(tags)
        for neighbour, their_tags in neighbour_tags.items():
            for uid in their_tags:
                if uid in own:
                    continue
                if self._draw("cross", cycle, antenna, uid) < self.cross_read:
                    reads.append(Read(uid, 1, self.rssi_dbm - self.cross_read_loss_db + self._jitter(cycle, antenna, uid)))
        return reads

    def is_edge(self, antenna: int, uid: str) -> bool:
        """Whether this tag, lying on this antenna, sits at the edge of its zone (fixed per placement)."""
        return self.flicker > 0 and self._draw("edge-placement", 0, antenna, uid) < self.flicker

    def _within_stack_limit(self, cycle: int, tags: Sequence[str]) -> Sequence[str]:
        limit = self.stack_limit
        if limit is None or len(tags) <= limit:
            return tags
        # Anticollision gets through ``limit`` tags; the next cycle starts where this one stopped.
        start = (cycle * limit) % len(tags)
        rotated = list(tags[start:]) + list(tags[:start])
        return rotated[:limit]

    def _jitter(self, cycle: int, antenna: int, uid: str) -> int:
        return int(self._draw("rssi", cycle, antenna, uid) * 7) - 3  # -3 .. +3 dB

    def _draw(self, kind: str, cycle: int, antenna: int, uid: str) -> float:
        """A uniform number in [0, 1) that depends only on the seed and the arguments."""
        key = f"{self.seed}|{kind}|{cycle}|{antenna}|{uid}".encode()
        digest = hashlib.blake2b(key, digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64
