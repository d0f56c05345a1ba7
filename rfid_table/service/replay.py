"""The journal's replay: the controller rebuilt from its journaled inputs, after a crash, a power cut or a restart.

The controller is deterministic, so feeding it the inputs since its checkpoint brings back the hand in progress.
Each row is applied through its input record (:mod:`rfid_table.service.inputs`), the mapping the daemon's step
applied it by in the first place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from controller.domain import DomainEvent
from rfid_table.service.journal_codec import dumps

if TYPE_CHECKING:
    from controller.game import GameController
    from rfid_table.service.journal import Checkpoint, Journal


@dataclass
class Replayed:
    inputs: int
    events: list[DomainEvent]
    mismatches: list[str]  # empty when the replay re-created exactly the journaled events


def replay(journal: Journal, controller: GameController, checkpoint: Checkpoint | int | None = None) -> Replayed:
    """Feed the journaled inputs since ``checkpoint`` to ``controller`` (already restored to that checkpoint).

    The events this re-creates are already journaled (and published or queued), so they are compared with the
    journal rather than published again: a mismatch means the controller is not the one that wrote the
    journal (an upgrade changed the rules mid-hand) and deserves a log line.
    """
    produced: list[DomainEvent] = []
    n = 0
    for item in journal.inputs_since(checkpoint):
        n += 1
        produced += item.as_input().apply(controller)
    return Replayed(n, produced, _mismatches(journal, controller, produced))


def _mismatches(journal: Journal, controller: GameController, produced: list[DomainEvent]) -> list[str]:
    """Where the replayed events differ from the journaled ones (compared as the journal keeps them: JSON)."""
    mismatches = []
    if produced:
        stored = {e.seq: e for e in journal.events_after(produced[0].seq - 1, limit=len(produced))}
        for event in produced:
            kept = stored.get(event.seq)
            if kept is None:
                continue  # pruned after delivery; nothing to compare with
            again = (event.type, float(event.t), event.hand, json.loads(dumps(event.public)),
                     json.loads(dumps(event.secret)))
            if again != (kept.type, kept.t, kept.hand, kept.public, kept.secret):
                mismatches.append(f"seq {event.seq}: replay gave {event.type} {event.public}, "
                                  f"journal has {kept.type} {kept.public}")
    if controller.seq != journal.last_seq():
        mismatches.append(f"replay ends at seq {controller.seq}, the journal at {journal.last_seq()}")
    return mismatches
