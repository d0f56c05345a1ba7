"""The journal's rows: their canonical form, their checksum, and what they are read back as.

Every row of the journal (:mod:`rfid_table.service.journal`) carries ``crc``, a CRC-32 of its fields in
:data:`COLUMNS` order (:func:`crc`), so a flipped byte that SQLite's own ``quick_check`` cannot see is still found
by the self-check (:mod:`rfid_table.service.journal_check`). JSON is written in one canonical form
(:func:`dumps`), which keeps key order: a payload read back serialises to the same bytes it was published as.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from controller.domain import DomainEvent
from hal.events import ZoneEvent
from rfid_table.service.inputs import TableInput, ZoneInput, input_of

# Column order is the order crc() sees the fields in: the checksum is always the last column.
COLUMNS = {
    "inputs": ("id", "kind", "t", "body", "crc"),
    "events": ("seq", "type", "t", "hand", "input_id", "public", "secret", "wall", "crc"),
    "checkpoints": ("id", "input_id", "state", "crc"),
    "delivery": ("feed", "seq", "crc"),
    "meta": ("key", "value", "crc"),
}
KEYS = {"inputs": "id", "events": "seq", "checkpoints": "id", "delivery": "feed", "meta": "key"}
EVENT_FIELDS = "seq, type, t, hand, public, secret, input_id, wall"  # what an event is read back from


def dumps(obj: Any) -> str:
    # Key order is kept (not sorted) so that a payload read back serialises to the same bytes it was published as.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _field(value: Any) -> bytes:
    # bytes: the self-check reads with text_factory=bytes so that a flip making invalid UTF-8 is a mismatch, not a
    # crash.
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, float):
        return repr(value).encode()  # exact: SQLite REAL round-trips a Python float bit for bit
    if value is None:
        return b""
    return str(value).encode()


def crc(*fields: Any) -> int:
    # Columns added by a later schema version come last and are NULL in older rows: an absent trailing field
    # does not count, so the rows written before the migration keep their checksums.
    end = len(fields)
    while end and fields[end - 1] is None:
        end -= 1
    return zlib.crc32(b"\x1f".join(map(_field, fields[:end])))


# ---- writing ----------------------------------------------------------------------------------------------


def input_row(id_: int, kind: str, t: float, body: dict[str, Any]) -> tuple:
    """The ``inputs`` row, in the table's column order."""
    t, text = float(t), dumps(body)
    return id_, kind, t, text, crc(id_, kind, t, text)


def event_row(event: DomainEvent, input_id: int | None) -> tuple:
    """The ``events`` row, in the table's column order (``input_id``: the input that caused it)."""
    t, public, secret = float(event.t), dumps(event.public), dumps(event.secret)
    wall = None if event.wall is None else float(event.wall)
    return (event.seq, event.type, t, event.hand, input_id, public, secret, wall,
            crc(event.seq, event.type, t, event.hand, input_id, public, secret, wall))


# ---- reading ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JournaledInput:
    """A row of the ``inputs`` table, read back."""

    id: int
    kind: str
    t: float
    body: dict[str, Any]

    def as_input(self) -> TableInput:
        """The input as the controller takes it."""
        return input_of(self.kind, self.t, self.body)

    def zone_event(self) -> ZoneEvent:
        return ZoneInput.from_body(self.t, self.body).event


@dataclass(frozen=True)
class JournaledEvent:
    """A domain event read back from the journal; publishes exactly like the :class:`DomainEvent` it was."""

    seq: int
    type: str
    t: float
    hand: int | None
    public: dict[str, Any]
    secret: dict[str, Any]
    input_id: int | None = None
    wall: float | None = None

    def payload(self, secure: bool) -> dict[str, Any]:
        return self.domain_event().payload(secure)

    def domain_event(self) -> DomainEvent:
        return DomainEvent(self.seq, self.type, self.t, self.hand, self.public, self.secret, self.wall)


def journaled_event(row: tuple) -> JournaledEvent:
    """The event of a row selected as :data:`EVENT_FIELDS`."""
    seq, type_, t, hand, public, secret, input_id, wall = row
    return JournaledEvent(seq, type_, t, hand, json.loads(public), json.loads(secret), input_id, wall)
