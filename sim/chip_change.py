"""The chip arithmetic of the simulated players and dealers: the chips a player pushes for an amount, and the chips
among a pile that make an amount of change (the uncalled part of a bet going back)."""

from __future__ import annotations

from typing import Mapping, Sequence

DENOMINATIONS = (1, 5, 25, 100, 500, 1000, 5000, 25000, 100000)  # the replayed hands' chip set


def chips_for(amount: int, smallest_at_most: int | None = None,
              denominations: Sequence[int] = DENOMINATIONS) -> list[int]:
    """The chips a player pushes for ``amount``: largest first, and, where ``smallest_at_most`` is given, with at
    least two chips of which one is no larger than it (a raise must read as a raise: a lone overchip is a call, TDA
    45). Raises ``ValueError`` when the denominations cannot make the amount."""
    if smallest_at_most is not None:
        small = max((d for d in denominations if d <= min(smallest_at_most, amount - 1)), default=None)
        if small is not None:
            return sorted(chips_for(amount - small, None, denominations) + [small], reverse=True)
    out = []
    for chip in sorted(denominations, reverse=True):
        n, amount = divmod(amount, chip)
        out += [chip] * n
    if amount:
        raise ValueError(f"chips of {sorted(denominations)} cannot make {sum(out) + amount}")
    return out


def split_uids(uids: list[str], values: Mapping[str, int], back: int) -> tuple[list[str], list[str]]:
    """Choose chips worth exactly ``back`` among ``uids`` to go back to the player (the uncalled part of a bet); the
    rest goes into the pot. ``([], uids)`` when no set of these chips makes the amount."""
    if back <= 0:
        return [], list(uids)
    # made[k]: the sums (bit s: the sum s, up to back) the first k chips make, until one makes back. A big int
    # adds a chip's every sum in one shift: change from a big pot is hundreds of sums over dozens of chips.
    within = (1 << (back + 1)) - 1
    made = [1]
    for uid in uids:
        sums = made[-1]
        made.append(sums | (sums << values[uid]) & within)
        if made[-1] >> back & 1:
            break
    else:
        return [], list(uids)
    # From back down to 0, each sum as the first chip that made it made it: the chip, and the sum before it.
    chosen = set()
    total, upto = back, len(made) - 1
    while total:
        lo, hi = 1, upto  # the first k with the sum in made[k] (a sum once made stays made)
        while lo < hi:
            mid = (lo + hi) // 2
            if made[mid] >> total & 1:
                hi = mid
            else:
                lo = mid + 1
        chosen.add(lo - 1)
        total -= values[uids[lo - 1]]
        upto = lo - 1
    return [u for i, u in enumerate(uids) if i in chosen], [u for i, u in enumerate(uids) if i not in chosen]
