"""A deck nobody registered being dealt: the status light's ``deck_not_registered`` (docs/gpio.md).

No rule book covers it: the table cannot read a deck it does not know, so it tells the staff rather than ruling.
A few unknown tags in a row on the card zones, and no registered card among them, is such a deck (one stray tag, a
card protector or a chip from another set, is not); the next registered card ends it. Unknown tags on the chip
zones are the chip layer's (``foreign_chip``) and do not count.
"""

from __future__ import annotations

from typing import Sequence

from controller.chip_table import CHIP_ZONES
from controller.domain import DomainEvent
from controller.events import BoardCard, Burn, CardDealt, UnknownTag
from hal.zone_names import Zone

UNREGISTERED_RUN = 3  # this many unknown tags in a row on the card zones, and no registered card


class UnregisteredDeck:
    def __init__(self) -> None:
        self._unknown_run = 0  # unknown tags on card zones since the last registered card

    def card_events(self, events: Sequence[DomainEvent]) -> None:
        """The card controller's events of one input, in order."""
        for event in events:
            record = event.record
            if isinstance(record, UnknownTag) and Zone.parse(record.zone).kind not in CHIP_ZONES:
                self._unknown_run += record.summarised
            elif isinstance(record, (CardDealt, BoardCard, Burn)):
                self._unknown_run = 0

    @property
    def dealt(self) -> bool:
        """The cards being dealt are tags of no registered deck."""
        return self._unknown_run >= UNREGISTERED_RUN
