"""The names of a table's zones, parsed in one place: ``seat3.cards``, ``seat3.up``, ``seat3.bets``, ``board``, ...

A zone is a seat's (``seat<N>.<kind>``, N from 1 without a leading zero: ``seat01.cards`` is no seat zone) or one
of the fixed zones. The HAL names zones as the configuration does; the controller and the configuration read
them back through :class:`Zone`, and nothing else splits a zone's name.
"""

import re
from functools import lru_cache
from typing import NamedTuple

# board2: a second board antenna, where the table has one, for a later run (run it twice) or a double board's
# second board
FIXED_ZONES = ("board", "burn", "muck", "pot", "exposed", "board2")
# up: a stud seat's up cards, on an antenna of their own beside the down cards (``cards``), as the broadcast
# standard's stud tables have them: the antenna a card lies on says whether it was dealt up or down
SEAT_ZONE_KINDS = ("cards", "bets", "stack", "up")
SEAT_CARD_KINDS = ("cards", "up")  # the seat zones a player's cards lie on
MAX_SEATS = 10  # a table has at most this many seats (when the configuration does not say)

_SEAT_ZONE = re.compile(r"seat([1-9][0-9]*)\.(\w+)")


class Zone(NamedTuple):
    """A zone's name, parsed: ``seat3.bets`` is ``Zone("bets", 3)``, ``pot`` is ``Zone("pot", None)``.

    A name that is neither a seat's zone nor a fixed one parses too, as ``Zone(name, None)``: whether it is a
    zone of the table is :meth:`known`'s to say.
    """

    kind: str  # a seat zone's kind (cards, up, bets, stack) or the whole name of any other zone
    seat: int | None = None

    @staticmethod
    @lru_cache(maxsize=1024)  # a table's few dozen names, parsed on every zone event; bounded against bad input
    def parse(name: str) -> "Zone":
        match = _SEAT_ZONE.fullmatch(name)
        if match:
            return Zone(match.group(2), int(match.group(1)))
        return Zone(name, None)

    @property
    def name(self) -> str:
        return self.kind if self.seat is None else f"seat{self.seat}.{self.kind}"

    @property
    def place(self) -> str:
        """Where a card lies: ``seat`` for a seat's cards (down or up), the kind for every other zone (board, bets,
        muck ...)."""
        return "seat" if self.seat is not None and self.kind in SEAT_CARD_KINDS else self.kind

    @property
    def up(self) -> bool:
        """A seat's up-card zone: a card on it was dealt face up (stud)."""
        return self.seat is not None and self.kind == "up"

    @property
    def holds(self) -> str:
        """What the zone is read for: ``cards`` (seat cards, board, burn, exposed), ``piles`` (the muck, cards
        heaped) or ``chips`` (bets, stacks, the pot)."""
        if self.seat is None and self.kind == "muck":
            return "piles"
        if self.seat is None and self.kind == "pot" or self.seat is not None and self.kind in ("bets", "stack"):
            return "chips"
        return "cards"

    @property
    def seat_key(self) -> str | None:
        """The configuration's TOML table a seat zone nests under (``seat3`` of ``seat3.cards``); None otherwise."""
        return None if self.seat is None else f"seat{self.seat}"

    @staticmethod
    def nests_seat_zones(key: str) -> bool:
        """Could this TOML key hold seat zones (``[zones.seat3]``, or ``zones.seat3.cards = {...}``)? A malformed
        seat (``seat01``) counts too, so that its zones are named and refused one by one."""
        return key.startswith("seat")

    def known(self, seats: int | None = None) -> bool:
        """Is this a zone a table of ``seats`` seats can have (None: up to :data:`MAX_SEATS`)?"""
        if self.seat is None:
            return self.kind in FIXED_ZONES
        return self.kind in SEAT_ZONE_KINDS and 1 <= self.seat <= (seats or MAX_SEATS)
