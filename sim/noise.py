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
        self._edges: dict[int, dict[str, bool]] = {}  # antenna → uid → whether it lies at the edge (is_edge)

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
        # A replay with noise makes millions of draws: each is the hash of its key, written out here rather than
        # called (``_uniform``), and the keys of one call share their text up to the tag.
        stem = f"|{cycle}|{antenna}|"
        seed = self.seed
        reads = []
        if tags:
            edge_of = self._edge_of(antenna)
            miss, count, rssi = (f"{seed}|{kind}{stem}" for kind in ("miss", "count", "rssi"))
            edge_read, edge_chance, missed_read = f"{seed}|edge{stem}", self.edge_read_chance, self.missed_read
            full, edge_rssi = self.rssi_dbm, self.rssi_dbm - self.edge_loss_db
            for uid in self._within_stack_limit(cycle, tags):
                if edge_of(uid):
                    if _from_bytes(_blake2b((edge_read + uid).encode(), digest_size=8).digest(), "big") / 2**64 \
                            >= edge_chance:
                        continue  # flickered out this cycle
                    level, times = edge_rssi, 1
                else:
                    if _from_bytes(_blake2b((miss + uid).encode(), digest_size=8).digest(), "big") / 2**64 \
                            < missed_read:
                        continue
                    times = 2 + int(_from_bytes(_blake2b((count + uid).encode(), digest_size=8).digest(), "big")
                                    / 2**64 * 4)
                    level = full
                jitter = int(_from_bytes(_blake2b((rssi + uid).encode(), digest_size=8).digest(), "big") / 2**64 * 7)
                reads.append(Read(uid, times, level + jitter - 3))  # -3 .. +3 dB
        if neighbour_tags:
            own = set(tags)
            cross, rssi, cross_read = f"{seed}|cross{stem}", f"{seed}|rssi{stem}", self.cross_read
            weak = self.rssi_dbm - self.cross_read_loss_db - 3
            for their_tags in neighbour_tags.values():
                crossing = [uid for uid in their_tags if uid not in own and _from_bytes(
                    _blake2b((cross + uid).encode(), digest_size=8).digest(), "big") / 2**64 < cross_read]
                reads += [Read(uid, 1, weak + int(_from_bytes(_blake2b((rssi + uid).encode(), digest_size=8).digest(),
                                                              "big") / 2**64 * 7)) for uid in crossing]
        return reads

    def is_edge(self, antenna: int, uid: str) -> bool:
        """Whether this tag, lying on this antenna, sits at the edge of its zone (fixed per placement)."""
        return self._edge_of(antenna)(uid)

    def _edge_of(self, antenna: int):
        """``is_edge`` for one antenna, remembered: a placement's draw is the same in every cycle."""
        known = self._edges.get(antenna)
        if known is None:
            known = self._edges[antenna] = {}
        flicker, stem = self.flicker, f"{self.seed}|edge-placement|0|{antenna}|"

        def edge(uid: str) -> bool:
            found = known.get(uid)
            if found is None:
                found = known[uid] = flicker > 0 and _uniform(stem + uid) < flicker
            return found

        return edge

    def _within_stack_limit(self, cycle: int, tags: Sequence[str]) -> Sequence[str]:
        limit = self.stack_limit
        if limit is None or len(tags) <= limit:
            return tags
        # Anticollision gets through ``limit`` tags; the next cycle starts where this one stopped.
        start = (cycle * limit) % len(tags)
        rotated = list(tags[start:]) + list(tags[:start])
        return rotated[:limit]


_blake2b, _from_bytes = hashlib.blake2b, int.from_bytes


def _uniform(key: str) -> float:
    """A uniform number in [0, 1) from the hash of ``key``: the model's only source of chance."""
    return _from_bytes(_blake2b(key.encode(), digest_size=8).digest(), "big") / 2**64
