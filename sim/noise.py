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
from bisect import bisect_right as _bisect
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
        self._uid_bytes: dict[str, bytes] = {}  # a tag's UID as the keys of its draws end
        # the hash's integer below which a draw is under each chance (as its uniform number would be)
        self._missed_read_below = _below(missed_read)
        self._cross_read_below = _below(cross_read)
        self._edge_read_below = _below(edge_read_chance)

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
        # A replay with noise makes millions of draws: each is the hash of its key (``_uniform``), written out here
        # rather than called, on bytes (the keys of one call share their text up to the tag, and a tag's bytes are
        # kept), and compared as the hash's integer with the integer bounds that give the same answers as the
        # uniform number would (``_Bounds``): the same draws, a third of the time.
        stem = f"|{cycle}|{antenna}|"
        seed = self.seed
        reads = []
        uid_bytes = self._uid_bytes
        if tags:
            edge_of = self._edge_of(antenna)
            miss, count, rssi, edge_read = (f"{seed}|{kind}{stem}".encode() for kind in ("miss", "count", "rssi", "edge"))
            edge_below, miss_below = self._edge_read_below, self._missed_read_below
            times_of, jitter_of = _TIMES.value, _JITTER.value
            full, edge_rssi = self.rssi_dbm - 3, self.rssi_dbm - self.edge_loss_db - 3  # jitter: -3 .. +3 dB
            for uid in self._within_stack_limit(cycle, tags):
                raw = uid_bytes.get(uid)
                if raw is None:
                    raw = uid_bytes[uid] = uid.encode()
                if edge_of(uid):
                    if _from_bytes(_blake2b(edge_read + raw, digest_size=8).digest(), "big") >= edge_below:
                        continue  # flickered out this cycle
                    level, times = edge_rssi, 1
                else:
                    if _from_bytes(_blake2b(miss + raw, digest_size=8).digest(), "big") < miss_below:
                        continue
                    times = 2 + times_of(_from_bytes(_blake2b(count + raw, digest_size=8).digest(), "big"))
                    level = full
                reads.append(Read(uid, times, level + jitter_of(
                    _from_bytes(_blake2b(rssi + raw, digest_size=8).digest(), "big"))))
        if neighbour_tags:
            own = set(tags)
            cross, rssi = f"{seed}|cross{stem}".encode(), f"{seed}|rssi{stem}".encode()
            cross_below, jitter_of = self._cross_read_below, _JITTER.value
            weak = self.rssi_dbm - self.cross_read_loss_db - 3
            for their_tags in neighbour_tags.values():
                for uid in their_tags:
                    if uid in own:
                        continue
                    raw = uid_bytes.get(uid)
                    if raw is None:
                        raw = uid_bytes[uid] = uid.encode()
                    if _from_bytes(_blake2b(cross + raw, digest_size=8).digest(), "big") < cross_below:
                        reads.append(Read(uid, 1, weak + jitter_of(
                            _from_bytes(_blake2b(rssi + raw, digest_size=8).digest(), "big"))))
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
_SPAN = 2**64  # a draw's hash: 8 bytes


def _below(p: float) -> int:
    """The least hash ``x`` whose uniform number ``x / 2**64`` is not below ``p``: ``x < _below(p)`` answers
    ``x / 2**64 < p`` exactly (the division rounds, and rounds monotonically), without the division."""
    low, high = 0, _SPAN  # x / 2**64 < p holds below low and fails from high on
    while low < high:
        middle = (low + high) // 2
        if middle / _SPAN < p:
            low = middle + 1
        else:
            high = middle
    return low


class _Bounds:
    """``int(x / 2**64 * n)`` of a draw's hash ``x``, from the bounds where it steps up (found once, as ``_below``
    finds one): the same numbers as the float arithmetic, with a bisection in the place of the division."""

    def __init__(self, n: int):
        self.bounds = [self._least(k, n) for k in range(1, n + 1)]  # the least x giving k or more

    @staticmethod
    def _least(k: int, n: int) -> int:
        low, high = 0, _SPAN
        while low < high:
            middle = (low + high) // 2
            if int(middle / _SPAN * n) < k:
                low = middle + 1
            else:
                high = middle
        return low

    def value(self, x: int) -> int:
        return _bisect(self.bounds, x)


_TIMES = _Bounds(4)  # a tag read well is read 2 to 5 times (6 where the division rounds up to 1)
_JITTER = _Bounds(7)  # its RSSI: 0 to 6 dB above the bottom of its range (7 where it rounds up to 1)


def _uniform(key: str) -> float:
    """A uniform number in [0, 1) from the hash of ``key``: the model's only source of chance."""
    return _from_bytes(_blake2b(key.encode(), digest_size=8).digest(), "big") / 2**64
