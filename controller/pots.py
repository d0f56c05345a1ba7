"""Pots: what the dealer collects at the end of a street, the uncalled bet, main and side pots.

Pure functions over amounts; ``controller.betting`` calls them at ``end_street()``. A later chip-tracking layer
checks the chips moving into the pot zone against ``Collection.into_pot`` and the chips going back against
``Collection.returned``.

Side pots are split separately (CA Actions 7; DE 10; PP Ties 5d; AC 16; TDA 20-5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence


@dataclass(frozen=True)
class Pot:
    """One pot: its amount and the live seats that can win it (in table order). Index 0 is the main pot."""

    amount: int
    eligible: tuple[int, ...]


@dataclass(frozen=True)
class Collection:
    """What one ``end_street()`` moves: bets into the pot zone, the uncalled part back to its owner.

    ``into_pot`` includes the antes on the pre-flop collection. ``pots`` is the state after the collection.
    """

    street: str
    into_pot: Mapping[int, int]
    returned: Mapping[int, int]
    pots: tuple[Pot, ...]

    @property
    def total(self) -> int:
        return sum(self.into_pot.values())


def uncalled_bet(bets: Mapping[int, int]) -> tuple[int | None, int]:
    """The seat whose bet nobody matched and by how much: ``(seat, excess)`` or ``(None, 0)``.

    Folded seats' bets count as matched amounts: they stay in the pot.
    """
    if not bets:
        return None, 0
    ranked = sorted(bets.items(), key=lambda item: item[1], reverse=True)
    top_seat, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    if top > second:
        return top_seat, top - second
    return None, 0


def build_pots(
    contributions: Mapping[int, int],
    live: Iterable[int],
    all_in: Iterable[int],
    order: Sequence[int],
    dead_money: int = 0,
) -> tuple[Pot, ...]:
    """Main and side pots from what each seat put in during the hand (collected bets and antes).

    ``contributions`` covers every seat, folded ones too (their chips stay in the pots they reached).
    A new pot starts at each all-in level of a live seat. ``dead_money`` (a big-blind ante) belongs to the main
    pot. Adjacent pots with the same eligible seats are merged: they are one pot to the dealer.
    """
    live_set = set(live)
    levels = sorted({contributions[s] for s in all_in if s in live_set and contributions.get(s, 0) > 0})
    top = max(contributions.values(), default=0)
    if not levels or levels[-1] < top:
        levels.append(top)
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        amount = sum(min(c, level) - min(c, previous) for c in contributions.values())
        eligible = tuple(s for s in order if s in live_set and contributions.get(s, 0) >= level)
        if not eligible:  # only folded chips above the last live level: they join the pot below
            eligible = pots[-1].eligible if pots else tuple(s for s in order if s in live_set)
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        elif amount:
            pots.append(Pot(amount, eligible))
        previous = level
    if dead_money:
        if pots:
            pots[0] = Pot(pots[0].amount + dead_money, pots[0].eligible)
        else:
            pots.append(Pot(dead_money, tuple(s for s in order if s in live_set)))
    return tuple(pots)
