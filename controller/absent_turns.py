"""An absent player's hand on its turn (DE 6), where the house rules so (``ConductProfile``'s ``absent_at_deal`` or
``left_during_hand`` ruling ``check_or_fold``, controller.conduct).

Rules:
* DE 6: the absent player's seat is dealt and its hand stays in; on its turn it is checked if it can check, folded
  if it faces a bet; while the player stays away it is checked again on the next street.
* A player back in time to act plays the hand (the conduct rules' ``seat_returned``).
* The hand's end ends the ruling: the next hand is ruled anew when its deal is complete.

The conduct rules rule ``check_or_fold`` (``ruled``); the game asks here, on each turn, what the betting does for the
seat to act (``move``) and has the betting do it. Nothing here reads the chips or emits: the betting publishes the
check or the fold.
"""

from __future__ import annotations

CHECK = "check"  # the seat to act is checked
FOLD = "fold"  # the seat to act faces a bet: its hand is folded (dead)


class AbsentTurns:
    def __init__(self, rule: str):
        self.rule = rule  # what the check or the fold cites (the profile's citation for absent_at_deal)
        self._seats: set[int] = set()  # the absent players whose hand is checked or folded on their turn

    def ruled(self, seat: int) -> None:
        """The conduct rules ruled ``check_or_fold`` on ``seat``."""
        self._seats.add(seat)

    def returned(self, seat: int) -> None:
        """The player came back: the player plays the hand."""
        self._seats.discard(seat)

    def hand_over(self) -> None:
        self._seats.clear()

    def waits_on(self, seat: int | None) -> bool:
        """Whether ``seat`` (the seat to act) is an absent player's whose turn the betting must take for it."""
        return seat in self._seats

    def move(self, seat: int, owed: int) -> str | None:
        """What the betting does for ``seat``, to act and owing ``owed``: ``CHECK`` (the seat stays ruled: it is
        checked again on the next street, folded facing a bet), ``FOLD`` (the ruling is carried out), or None (the
        seat plays)."""
        if seat not in self._seats:
            return None
        if owed == 0:
            return CHECK
        self._seats.discard(seat)
        return FOLD
