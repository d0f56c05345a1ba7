"""The controller: deterministic state machines fed with zone events, commands and the time, emitting domain
events. ``controller.game.GameController`` is the whole table (cards, chips, conduct, clock); ``TableController``
(the card controller) runs alone on a table that reads only the cards, and is exported here for it.

No threads, sockets or sleeping in here: the same inputs always give the same outputs, which is what
makes tests, replay and crash recovery possible.
"""

from controller.domain import DomainEvent
from controller.table import TableController, TableSetup

__all__ = ["DomainEvent", "TableController", "TableSetup"]
