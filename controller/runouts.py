"""Pots divided between several boards: run it twice or three times, and the double board.

Pure arithmetic over amounts and seats; ``controller.showdown.award`` calls it once it knows each board's winners.

* Run it twice (CA Actions 8): "the river card, the turn and river card, as well as the entire board can be dealt
  twice" — each run is a whole board (the cards dealt before the agreement are shared) and every pot the players
  agreed on is divided equally between the runs. Only the pots named in the agreement are (CA Actions 8e: "If the
  main pot was not approved for Run It Twice but only for the side pot, the main pot may not be used for Run It
  Twice in the showdown under any circumstances!"): the others play the first run alone. "The odd chip always goes
  to the worse position (clockwise from the button on the left)" (CA Actions 8f): the first seat left of the
  button, whatever the house's odd-chip rule for a single board.
* Double board (CA GR 14.1): "The croupier deals two boards, each consisting of "Flop", "Turn" and "River". The pot
  is divided equally between these "Boards"." The rule books say nothing of its odd chip: the house's odd-chip
  rule applies (``controller.rules``).

A pot is split down to the split unit (TDA 20; CA GR 8) first between the boards it plays, then each board's part
between the board's tied winners. The units the division between boards leaves over go one each to the pot's
winners in the odd-chip order (PP Ties 4: at most one odd chip per player, round again only when there are more
odd units than winners); a tie on one board is split the same way.

In the hi-lo games each board's part is split high and low on its own (``controller.showdown``), the odd unit of a
part to its high half (TDA 20-3): the runs and the boards are divided first, as in the other games, then each part
is halved (``BoardPart.halves``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    from controller.showdown import PotAward, PotHalf

RUN_IT_RULES = ("CA Actions 8", "CA Actions 8f")
SIDE_POT_ONLY_RULE = "CA Actions 8e"
DOUBLE_BOARD_RULE = "CA GR 14.1"
MAX_RUNS = 3  # run it twice or three times


@dataclass(frozen=True)
class BoardPart:
    """One board's part of one pot: ``board`` is the index into the hand's boards (0: the first run)."""

    board: int
    amount: int
    winners: tuple[int, ...]
    shares: Mapping[int, int]
    odd_chips: tuple[int, ...]  # seats that got an odd unit of this board's tie
    halves: tuple[PotHalf, ...] = ()  # a hi-lo game's: this board's high half, then its low half (none: no low)


@dataclass(frozen=True)
class Division:
    """A pot divided between boards: the parts, what each seat gets in all, and the seats that got the units the
    division between the boards left over (in the order they got them)."""

    amount: int
    parts: tuple[BoardPart, ...]
    shares: Mapping[int, int]
    odd_chips: tuple[int, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        seen: list[int] = []
        for part in self.parts:
            seen += [s for s in part.winners if s not in seen]
        return tuple(seen)


def one_each(units: int, receivers: Sequence[int]) -> list[int]:
    """``units`` odd units handed out one each in ``receivers``' order, round again while some are left."""
    return [receivers[i % len(receivers)] for i in range(units)] if receivers else []


def divide(amount: int, winners_by_board: Mapping[int, Sequence[int]], order: Sequence[int], unit: int) -> Division:
    """Divide a pot of ``amount`` between the boards of ``winners_by_board`` (board index → the seats that win this
    pot on that board) down to ``unit``. ``order`` lists the seats in the order odd units go (the worse position
    first for runs, the house's order for a double board); every winner must be in it."""
    if not winners_by_board or any(not w for w in winners_by_board.values()):
        raise ValueError("every board of a pot needs at least one winner")
    if unit <= 0:
        raise ValueError("the split unit must be positive")
    rank = {s: i for i, s in enumerate(order)}
    missing = {s for w in winners_by_board.values() for s in w} - set(rank)
    if missing:
        raise ValueError(f"winners {sorted(missing)} are not in the odd-chip order")
    boards = sorted(winners_by_board)
    per_board, between, leftover = board_units(amount, len(boards), unit)
    shares: dict[int, int] = {}
    parts = []
    for board in boards:
        winners = sorted(set(winners_by_board[board]), key=rank.__getitem__)
        each, odd = divmod(per_board, len(winners))
        part_shares = {s: each * unit for s in winners}
        receivers = winners[:odd]
        for s in receivers:
            part_shares[s] += unit
        parts.append(BoardPart(board, per_board * unit, tuple(winners), part_shares, tuple(receivers)))
        for s, v in part_shares.items():
            shares[s] = shares.get(s, 0) + v
    everyone = sorted({s for p in parts for s in p.winners}, key=rank.__getitem__)
    odd_receivers = one_each(between, everyone)
    for s in odd_receivers:
        shares[s] += unit
    if leftover:  # a pot not made of whole units (a short all-in below the unit): the rest follows the order
        shares[everyone[0]] += leftover
    return Division(amount, tuple(parts), shares, tuple(odd_receivers))


def board_units(amount: int, boards: int, unit: int) -> tuple[int, int, int]:
    """A pot of ``amount`` divided equally between ``boards`` down to ``unit``: the units of each board's part, the
    units left over between the boards and the remainder below a unit (a short all-in below the unit)."""
    units, leftover = divmod(amount, unit)
    per_board, between = divmod(units, boards)
    return per_board, between, leftover


def boards_of_pots(pot_count: int, runs: int, boards_per_run: int = 1,
                   run_pots: Sequence[int] | None = None) -> list[list[int]]:
    """For each pot (0: the main pot) the indices of the boards it plays.

    The hand's boards are listed run by run: with a double board run twice, boards 0 and 1 are the first run's,
    2 and 3 the second's. ``run_pots``: the pots the players agreed to run more than once (None: every pot); the
    others play the first run's boards only (CA Actions 8e)."""
    if not 1 <= runs <= MAX_RUNS:
        raise ValueError(f"a hand is run once, twice or three times, not {runs} times")
    if boards_per_run not in (1, 2):
        raise ValueError("a hand has one board or a double board")
    first = list(range(boards_per_run))
    every = list(range(runs * boards_per_run))
    covered = set(range(pot_count)) if run_pots is None else set(run_pots)
    return [every if index in covered else first for index in range(pot_count)]


def board_shares(pot: PotAward) -> list[tuple[int, dict[int, int]]]:
    """A pot divided between boards as a history states it: each board's winners and what they collected there,
    the units the division between the boards left over counted on the first board their receiver won (the
    totals are the pot's shares). A pot that played one board has none."""
    parts = [(p.board, dict(p.shares)) for p in pot.boards]
    if not parts:
        return []
    counted = {s: 0 for s in pot.shares}
    for _board, shares in parts:
        for s, v in shares.items():
            counted[s] += v
    for s, total in pot.shares.items():
        extra = total - counted[s]
        if extra:
            shares = next(shares for _board, shares in parts if s in shares)
            shares[s] += extra
    return parts
