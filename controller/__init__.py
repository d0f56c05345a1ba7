"""The game: a deterministic state machine fed with zone events and the time, emitting domain events.

No threads, sockets or sleeping in here: the same inputs always give the same outputs, which is what
makes tests, replay and crash recovery possible.
"""

from controller.domain import DomainEvent
from controller.table import TableController, TableSetup

__all__ = ["DomainEvent", "TableController", "TableSetup"]
