"""The table's MQTT contract: topic names, QoS and payload shapes (docs/mqtt.md, schemas/).

Per table, under ``<prefix>/<table id>/``:

* ``status``           retained, ``online`` / ``offline`` (the last will)
* ``public/snapshot``  retained, the public table state
* ``public/events``    every domain event, without secrets
* ``secure/snapshot``  retained, with hole and burn cards
* ``secure/events``    every domain event, with secrets
* ``delayed/events``   the secure events, released to broadcast overlays after the broadcast delay
* ``delayed/hand``     retained, the events ``delayed/events`` has released of the hand being played back and the
  one before
* ``live/events``      with a reveal policy (``[broadcast] reveal``): the public events, with the hole cards the
  policy shows (:mod:`rfid_table.service.live_feed`)
* ``public/diag``      retained, the diagnostics report
* ``commands/#``       commands to the table; each reply goes to ``replies/<role>/<user>``

The publisher writes these; the live view (``watch``), the diagnostics client (``diag``) and the tests read them
from here, not from the publisher.
"""

import json
import unicodedata
from dataclasses import dataclass

QOS = 1  # every message: at least once
STATUS_ONLINE = b"online"
STATUS_OFFLINE = b"offline"


@dataclass(frozen=True)
class Topics:
    base: str

    @classmethod
    def for_table(cls, prefix: str, table_id: str) -> "Topics":
        return cls(f"{prefix}/{table_id}")

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    def snapshot(self, secure: bool) -> str:
        return f"{self.base}/{'secure' if secure else 'public'}/snapshot"

    def events(self, secure: bool) -> str:
        return f"{self.base}/{'secure' if secure else 'public'}/events"

    @property
    def commands(self) -> str:
        return f"{self.base}/commands/#"

    def reply(self, role: str, user: str) -> str:
        return f"{self.base}/replies/{role}/{user}"

    @property
    def delayed_events(self) -> str:
        return f"{self.base}/delayed/events"

    @property
    def delayed_hand(self) -> str:
        return f"{self.base}/delayed/hand"

    @property
    def live_events(self) -> str:
        return f"{self.base}/live/events"

    @property
    def diagnostics(self) -> str:
        return f"{self.base}/public/diag"


def encode(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def snapshot_payload(snapshot: dict, epoch: str) -> bytes:
    """A retained snapshot as published: the snapshot with the daemon's ``epoch`` (a restart changes it)."""
    return encode({**snapshot, "epoch": epoch})


def delayed_hand_payload(events: list[dict], epoch: str, released: float | None,
                         released_before: float | None) -> bytes:
    """The retained ``delayed/hand``: the ``delayed/events`` payloads released of the hand being played back (from
    its ``hand_started`` on) and of the hand before it; ``hand``: the newest hand's number (None before the first
    hand), ``seq``: the newest event's, ``released``: the stamp at which the newest hand's start went out,
    ``released_before``: the hand before's, when ``events`` begin with its start (None: not known, after a
    restart)."""
    starts = [e["hand"] for e in events if e["type"] == "hand_started"]
    return encode({"epoch": epoch, "hand": starts[-1] if starts else None, "seq": events[-1]["seq"] if events else 0,
                   "released": released, "released_before": released_before, "events": events})


def without_controls(text: str) -> str:
    """``text`` with its control characters (line breaks, escape sequences) written as ``\\xNN``: what a reader or
    the network said, fit for a report, a log line or a terminal."""
    return "".join((f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                   if unicodedata.category(c).startswith("C") else c for c in text)
