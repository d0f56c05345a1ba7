"""One finished hand as the hand-history writers see it: players, streets, actions with their amounts, pots.

The betting engine records each action as the seat's total bet after it (``to_amount``); hand-history formats want
what the action put in and whether it was a bet, a raise or a call, so this walks ``BettingHand.actions`` once and
gives both, street by street. ``controller.ohh`` (Open Hand History JSON) and ``controller.pokerstars``
(PokerStars-style text) write from the same :class:`HandRecord`; ``controller.phh`` writes PHH from the same hand.

What a copy reveals is the caller's choice: ``hole_cards`` holds only the cards that copy may show (every card the
table read for the secure feed; only the hands shown at the showdown for a copy that follows the table), and
``shown`` the seats that showed (:func:`tabled`), in showdown order; the other seats of the showdown mucked. Pure: no
clock is read, the start time is given (or None).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Mapping, Sequence

from controller.betting import BettingHand
from controller.showdown import PotAward, showdown_order

STREETS = ("preflop", "flop", "turn", "river")
BOARD_COUNTS = (0, 3, 4, 5)  # board cards once each street is dealt
ORDINALS = ("FIRST", "SECOND", "THIRD", "FOURTH", "FIFTH", "SIXTH")


def game_number(table_id: str, started_t: float) -> str:
    """The digits that name a hand for trackers (they key hands on them): two from the table's id, then the hand's
    start on the table clock in tenths of a second. The table clock never goes back, across restarts too, so a
    table never numbers two hands alike; the journal keeps the same start, so an export numbers a hand as the
    feed did."""
    return f"{zlib.crc32(table_id.encode()) % 100:02d}{max(0, round(started_t * 10)):011d}"


def tabled(hand: BettingHand, showdown_order: Sequence[int], gone_to_muck: Sequence[int] | set[int],
           payouts: Mapping[int, int]) -> list[int]:
    """The seats whose hands were shown at the showdown, in showdown order: what a history may reveal of it.

    With a player all-in and the betting over, every live hand is turned face up at once (TDA all-in rule, AC 11).
    Otherwise a player may give up at the showdown without showing (TDA 17-2; CA Actions 9): a live hand whose
    cards reached the muck before the hand ended was not shown — unless it wins, for the cards speak and the floor
    restores it (AC 14; CA Actions 9)."""
    if any(hand.is_all_in(s) for s in showdown_order):
        return list(showdown_order)
    return [s for s in showdown_order if s not in gone_to_muck or payouts.get(s)]


FORCED = {"ante": "ante", "post_sb": "small_blind", "post_bb": "big_blind", "straddle": "straddle",
          "bring_in": "bring_in"}


@dataclass(frozen=True)
class HistoryAction:
    """One action as a hand history states it: ``added`` the chips it put in, ``to`` the seat's bet this street
    after it (an ante is outside the street's bets: ``to`` 0). ``kind``: ``ante``, ``small_blind``, ``big_blind``,
    ``straddle``, ``fold``, ``check``, ``call``, ``bet`` or ``raise``; in stud also ``bring_in`` and
    ``complete`` (the first full bet of third street, to the small bet)."""

    street: str
    seat: int
    kind: str
    added: int
    to: int
    all_in: bool


@dataclass(frozen=True)
class HandRecord:
    """A finished hand (``hand.status`` is ``showdown`` or ``complete``) with what a history copy may reveal.

    ``pots``: each pot's amount and its shares by seat, the main pot first (``controller.showdown.Award.pots`` or
    the ``showdown`` event's). ``game_number`` is digits only (trackers key hands on it). ``started``: the hand's
    start in UTC, None where it is not known (the controller keeps no clock).

    A hand with several boards — run ``runs`` times (CA Actions 8), or a ``double_board`` (CA GR 14.1) — lists
    them all in ``boards``, run by run (``board`` is the first), and for each pot divided between boards its
    ``pot_boards``: (board index, shares) as :func:`controller.runouts.board_shares` gives them; a pot that played
    the first board only (CA Actions 8e) has none.

    A hi-lo split game's pot lists in ``pot_halves`` its halves' shares, the high half first (one, the high half
    alone, where no hand made a low: ``controller.showdown.PotAward.halves``); a pot divided between boards, in
    ``board_halves``, each of its ``pot_boards`` parts' halves (``controller.runouts.BoardPart.halves``).

    A stud hand (``hand.variant.stud``) has no board (``board``: the community card where the deck ran short);
    ``hole_cards`` are each seat's cards in the order dealt, ``""`` for a down card this copy may not show.
    """

    hand: BettingHand
    hole_cards: Mapping[int, Sequence[str]]
    board: Sequence[str]
    shown: Sequence[int]
    pots: Sequence[tuple[int, Mapping[int, int]]]
    table_name: str
    game_number: str
    table_size: int = 10
    started: datetime | None = None
    names: Mapping[int, str] = field(default_factory=dict)
    boards: Sequence[Sequence[str]] = ()
    runs: int = 1
    double_board: bool = False
    pot_boards: Sequence[Sequence[tuple[int, Mapping[int, int]]]] = ()
    pot_halves: Sequence[Sequence[Mapping[int, int]]] = ()
    board_halves: Sequence[Sequence[Sequence[Mapping[int, int]]]] = ()

    @property
    def several_boards(self) -> bool:
        return len(self.boards) > 1

    def shared_board(self) -> int:
        """How many board cards every board has in common (dealt before the runs began; 0 for a double board)."""
        if not self.several_boards:
            return len(self.board)
        first = self.boards[0]
        n = 0
        while n < len(first) and all(len(b) > n and b[n] == first[n] for b in self.boards):
            n += 1
        return max(c for c in BOARD_COUNTS if c <= n)

    def board_collections(self, board: int) -> list[tuple[int, dict[int, int]]]:
        """What each pot paid out on ``board``: (pot index, shares). A pot that played only the first board pays
        all of it there."""
        out = []
        for index, (_amount, shares) in enumerate(self.pots):
            parts = self.pot_boards[index] if index < len(self.pot_boards) else ()
            if parts:
                out += [(index, dict(s)) for b, s in parts if b == board]
            elif board == 0:
                out.append((index, dict(shares)))
        return out

    def name(self, seat: int) -> str:
        return self.names.get(seat) or f"seat{seat}"

    @property
    def seats(self) -> list[int]:
        """The seats in the hand, in seat order."""
        return sorted(self.hand.order)

    @property
    def showdown(self) -> list[int]:
        """The seats at the showdown in the order they show (none when one seat was left)."""
        return showdown_order(self.hand) if len(self.hand.live_seats) > 1 else []

    def cards(self, seat: int) -> list[str]:
        return [c for c in self.hole_cards.get(seat, ()) if c]

    def actions(self) -> list[HistoryAction]:
        """Every action of the hand, forced bets first, each with its street, what it added and its kind."""
        return list(self._actions)

    @cached_property
    def _actions(self) -> tuple[HistoryAction, ...]:  # worked out once for every copy of the history
        out = []
        bets = {s: 0 for s in self.hand.order}
        street = None
        completed = False  # stud: the small bet was made on third street
        stud_third = self.hand.variant.streets[0] if self.hand.variant.stud else None
        for a in self.hand.actions:
            if a.street != street:
                street = a.street
                bets = {s: 0 for s in bets}
            if a.kind in FORCED:
                kind = FORCED[a.kind]
                if kind != "ante":
                    bets[a.seat] = a.to_amount
                out.append(HistoryAction(a.street, a.seat, kind, a.added, bets[a.seat] if kind != "ante" else 0,
                                         a.all_in))
                continue
            if a.kind == "fold":
                out.append(HistoryAction(a.street, a.seat, "fold", 0, bets[a.seat], False))
                continue
            facing = max(bets.values(), default=0)
            added = a.to_amount - bets[a.seat]
            if a.to_amount > facing:
                kind = "bet" if facing == 0 else "raise"
                if a.street == stud_third and not completed:
                    kind, completed = "complete", True
            elif added > 0:
                kind = "call"
            else:
                kind = "check"
            bets[a.seat] = a.to_amount
            out.append(HistoryAction(a.street, a.seat, kind, max(added, 0), a.to_amount, a.all_in))
        return tuple(out)

    def uncalled(self) -> dict[str, dict[int, int]]:
        """The uncalled bets that went back, by street and seat."""
        out: dict[str, dict[int, int]] = {}
        for collection in self.hand.collections:
            for seat, amount in collection.returned.items():
                if amount:
                    out.setdefault(collection.street, {})[seat] = amount
        return out

    def starting_stacks(self) -> dict[int, int]:
        """What each seat had before the hand: its stack now plus what it put in, less an uncalled bet back."""
        return dict(self._starting_stacks)

    @cached_property
    def _starting_stacks(self) -> dict[int, int]:  # worked out once for every copy of the history
        put_in = {s: 0 for s in self.hand.order}
        for a in self.hand.actions:
            put_in[a.seat] += a.added
        for returned in self.uncalled().values():
            for seat, amount in returned.items():
                put_in[seat] -= amount
        return {s: self.hand.stacks[s] + put_in[s] for s in self.hand.order}

    def winnings(self) -> dict[int, int]:
        won: dict[int, int] = {}
        for _amount, shares in self.pots:
            for seat, share in shares.items():
                if share:
                    won[seat] = won.get(seat, 0) + share
        return won

    @property
    def total_pot(self) -> int:
        return sum(amount for amount, _shares in self.pots)

    def streets_played(self) -> int:
        """How many streets the hand reached (1: it ended before the flop). With two or more seats left at the end
        the whole board was dealt, an all-in run-out included."""
        streets = self.hand.variant.streets
        if len(self.hand.live_seats) > 1:
            if self.hand.variant.stud:
                return len(streets)
            return max(i + 1 for i, n in enumerate(BOARD_COUNTS) if n <= len(self.board))
        reached = {a.street for a in self.hand.actions} | {c.street for c in self.hand.collections}
        return max(streets.index(s) for s in reached) + 1

    def folded_on(self) -> dict[int, str]:
        return {a.seat: a.street for a in self.hand.actions if a.kind == "fold"}
