"""Checkpoints of the controller, so that a restart replays only the inputs since the last one.

The controller is pure Python state (no sockets, threads or clock), so a checkpoint is the controller pickled, in
the journal's ``checkpoints`` table with a CRC like every row. Only this daemon's own journal is ever loaded; the
journal lives in the service's private state directory. A checkpoint is taken when a hand ends; after it, the
journal's retention removes the inputs it covers, which keeps both the file and the restart time bounded.
"""

from __future__ import annotations

import base64
import copyreg
import pickle
import types
from typing import Any


def _mappingproxy(items: dict) -> types.MappingProxyType:
    return types.MappingProxyType(items)


# The house rule profiles keep their citations in read-only mappings.
copyreg.pickle(types.MappingProxyType, lambda proxy: (_mappingproxy, (dict(proxy),)))


def state_of(controller: Any) -> dict[str, str]:
    """The checkpoint state the journal stores (JSON: the pickle as base64)."""
    return {"format": "pickle-v1", "controller": base64.b64encode(
        pickle.dumps(controller, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")}


def controller_from(state: dict[str, str]) -> Any:
    if state.get("format") != "pickle-v1":
        raise ValueError(f"unknown checkpoint format {state.get('format')!r}")
    return pickle.loads(base64.b64decode(state["controller"]))  # noqa: S301 (our own journal, see above)
