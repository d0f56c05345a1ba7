"""Checkpoints of the controller, so that a restart replays only the inputs since the last one.

A checkpoint is taken when a hand ends, in the journal's ``checkpoints`` table with a CRC like every row; the
journal's retention removes the inputs up to the base checkpoint before the newest (``Journal.prune``), which keeps
both the file and the restart time bounded. It holds two things:

* ``state``: what carries over from one hand to the next, as plain JSON (``GameController.checkpoint_state``:
  numbering, button, players, deck, stacks, tags on the table, deck audit, time banks, seat sensors, the rulings
  that outlive their hand waiting for the floor), in format :data:`STATE_VERSION`. Any version of the program that
  reads this format can start from it.
* ``controller``: the controller pickled, with :data:`CODE_VERSION`, a digest of the controller's source. Only
  the very same code unpickles it (an exact restore, the ended hand's details included); other code, after an
  upgrade, never does: it makes a new controller from the configuration, takes over the ``state`` of the base
  checkpoint before the newest and replays the inputs since, so the hand that ended at the newest (which the
  table shows until the next one starts) and the hand in progress are rebuilt from their own journaled inputs
  (which the retention always keeps).

Only this table's own journal is ever loaded (the journal names its table), from the service's private state
directory.
"""

from __future__ import annotations

import base64
import copyreg
import hashlib
import logging
import pickle
import types
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from rfid_table.service.journal import Checkpoint

log = logging.getLogger(__name__)

FORMAT = "checkpoint-v2"
LEGACY_FORMAT = "pickle-v1"  # a pickle without a code version, from before explicit states
# The format of ``state``: raise it when GameController.checkpoint_state changes, and read the old one too.
# 2: ``floor``, the rulings waiting for the floor past their hand (version 1 has none: nothing outlived its hand).
STATE_VERSION = 2
READABLE_STATE_VERSIONS = (1, 2)


def _sources(package: Traversable, parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], Traversable]]:
    """Every ``*.py`` of an installed package, by its path's parts from the package's parent."""
    found = []
    for entry in package.iterdir():
        if entry.is_dir():
            found += _sources(entry, (*parts, entry.name))
        elif entry.name.endswith(".py"):
            found.append(((*parts, entry.name), entry))
    return found


def _code_version() -> str:
    """A digest of every source file whose classes a pickled controller holds (read as the installed package's
    resources, wherever it is installed)."""
    sources = [*_sources(files("controller"), ("controller",)), (("hal", "events.py"), files("hal") / "events.py")]
    digest = hashlib.sha256()
    for parts, source in sorted(sources, key=lambda item: item[0]):
        digest.update("/".join(parts).encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


CODE_VERSION = _code_version()


class CheckpointUnusable(ValueError):
    """A checkpoint this program can neither unpickle nor read the state of."""


def _mappingproxy(items: dict) -> types.MappingProxyType:
    return types.MappingProxyType(items)


# The house rule profiles keep their citations in read-only mappings.
copyreg.pickle(types.MappingProxyType, lambda proxy: (_mappingproxy, (dict(proxy),)))


def state_of(controller: Any) -> dict[str, Any]:
    """The checkpoint the journal stores (JSON) for a controller at a hand's end. Its explicit state is there only
    when no hand is in progress (the hand ended on a clear table) and nothing of it is still to be played (the award
    of a hand whose mucked winning hand waits for the floor): then it is a base, which any version can restart
    from. A hand ended by the next hand's first card leaves no moment between hands: that checkpoint holds only
    the pickle, and the journal keeps the inputs since the last base."""
    between_hands = not controller.in_hand and not getattr(controller, "award_waits", False)
    return {"format": FORMAT, "base": between_hands, "state_version": STATE_VERSION,
            "state": controller.checkpoint_state() if between_hands else None, "code": CODE_VERSION,
            "controller": base64.b64encode(pickle.dumps(controller, protocol=pickle.HIGHEST_PROTOCOL)).decode()}


def restore(journal: Any, fresh: Any) -> tuple[Any, Checkpoint | None, str]:
    """The controller to replay the journal's inputs into, the checkpoint to replay from, and how it was made:

    * ``exact``: the newest checkpoint's pickle, written by this very code;
    * ``state``: ``fresh`` (a controller just made from the table's configuration) given the explicit state of
      the base checkpoint before the newest one — after an upgrade; the inputs since, the hand that ended at the
      newest base and the hand in progress among them, rebuild the rest;
    * ``replay``: ``fresh`` and every input, when none was ever pruned and there is no such base before the newest;
    * ``legacy``: the pickle of a checkpoint from before code versions were stored, the only state it has.
    """
    latest = journal.latest_checkpoint()
    if latest is None:
        return fresh, None, "replay"
    if latest.state.get("format") == FORMAT and latest.state.get("code") == CODE_VERSION:
        return pickle.loads(base64.b64decode(latest.state["controller"])), latest, "exact"  # noqa: S301 (see above)
    first = journal.first_input_id()  # inputs are contiguous (the self-check says so): from 1, none was pruned
    none_pruned = first == 1 or (first is None and journal.last_input_id() == 0)
    bases = journal.base_checkpoints()
    # A base's state starts the next hand afresh, but between hands the table shows the hand that ended: the
    # restart replays that hand too, from the base before it (the retention keeps its inputs) or from the first
    # input. Only a journal pruned by an older version lacks them: the ended hand's cards are not shown then.
    if (len(bases) == 2 and first is not None and first <= bases[1].input_id + 1
            and bases[1].state.get("state_version") in READABLE_STATE_VERSIONS):
        base = bases[1]
    elif none_pruned:
        return fresh, None, "replay"
    else:
        base = bases[0] if bases else None
    if base is not None:
        if base.state.get("state_version") not in READABLE_STATE_VERSIONS:
            raise CheckpointUnusable(f"the journal's checkpoint has state version {base.state.get('state_version')!r}"
                                     f"; this program reads versions "
                                     f"{', '.join(map(str, READABLE_STATE_VERSIONS))}")
        fresh.restore_checkpoint_state(base.state["state"])
        return fresh, base, "state"
    if latest.state.get("format") == LEGACY_FORMAT:
        try:
            return pickle.loads(base64.b64decode(latest.state["controller"])), latest, "legacy"  # noqa: S301
        except Exception as exc:  # its classes changed since: nothing else to restore from
            raise CheckpointUnusable(f"the journal's checkpoint, from a version without a version stamp, cannot be "
                                     f"loaded ({type(exc).__name__}: {exc})") from exc
    raise CheckpointUnusable("the journal's checkpoints were written by another version of the program and none "
                             "holds an explicit state, and the inputs before them are gone")
