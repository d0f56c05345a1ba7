"""What the table takes in, one record per kind: how each is applied to the controller, and how it is written to the
journal and read back from it.

The daemon's step (:mod:`rfid_table.service.daemon`) and the journal's replay (:mod:`rfid_table.service.replay`)
apply inputs through these records alone, so a restart rebuilds the table by the very mapping that built it.

Each record is one row of the journal's ``inputs`` table (:meth:`TableInput.row`): its ``kind``, its table time
``t`` and a JSON ``body``; :func:`input_of` reads a row back. The bodies are the journal's file format: an existing
journal must replay, so a body only ever gains optional fields.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from controller.domain import DomainEvent
from hal.events import DeviceEvent, SensorEvent, ZoneEvent
from rfid_table.service.equity_worker import equity_event

if TYPE_CHECKING:
    from controller.game import GameController, Result

Row = tuple[str, float, dict[str, Any]]  # (kind, t, body): what Journal.record takes


class TableInput(ABC):
    """One input of the controller, as applied and as journaled."""

    kind: ClassVar[str]  # the ``kind`` column of its row
    t: float  # table time (rfid_table.service.timebase)

    @abstractmethod
    def apply(self, controller: GameController) -> list[DomainEvent]:
        """Feed it to the controller; the events it caused."""

    @abstractmethod
    def body(self) -> dict[str, Any]:
        """The ``body`` column of its row (JSON)."""

    @classmethod
    @abstractmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> TableInput:
        """The record a row of this kind holds."""

    def row(self) -> Row:
        return self.kind, self.t, self.body()


class EventInput(TableInput):
    """An input made of an event of the HAL (a zone, a reader, a seat sensor): it happened at the event's time."""

    event: ZoneEvent | DeviceEvent | SensorEvent

    @property
    def t(self) -> float:  # type: ignore[override]
        return self.event.t


@dataclass(frozen=True)
class ZoneInput(EventInput):
    """A tag arrived in or left a zone (the zone tracker's verdict on the readers' cycles)."""

    kind = "zone"
    event: ZoneEvent

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return controller.handle(self.event)

    def body(self) -> dict[str, Any]:
        return {"kind": self.event.kind, "zone": self.event.zone, "uid": self.event.uid}

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> ZoneInput:
        return cls(ZoneEvent(body["kind"], body["zone"], body["uid"], t))


@dataclass(frozen=True)
class DeviceInput(EventInput):
    """Something about the equipment: a reader's link went up or down, an antenna faulted."""

    kind = "device"
    event: DeviceEvent

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return controller.handle_device(self.event)

    def body(self) -> dict[str, Any]:
        return {"kind": self.event.kind, "reader": self.event.reader, "detail": dict(self.event.detail)}

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> DeviceInput:
        return cls(DeviceEvent(body["kind"], body["reader"], t, tuple(body["detail"].items())))


@dataclass(frozen=True)
class SensorInput(EventInput):
    """A seat sensor changed (``hal.gpio``, debounced): judged by the conduct rules."""

    kind = "sensor"
    event: SensorEvent

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return controller.handle_sensor(self.event)

    def body(self) -> dict[str, Any]:
        event = self.event
        return {"seat": event.seat, "sensor": event.sensor, "active": event.active, "detects": event.detects,
                "duration_s": event.duration_s}

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> SensorInput:
        # detects and duration_s came later: older rows have neither
        return cls(SensorEvent(t, body["seat"], body["sensor"], body["active"], body.get("detects"),
                               body.get("duration_s")))


@dataclass(frozen=True)
class CommandInput(TableInput):
    """A command the controller accepted: from the network (past the command gate) or the table's own console.
    ``command`` has the shape of ``AdmittedCommand.as_input()``."""

    kind = "command"
    t: float
    command: dict[str, Any]

    def try_apply(self, controller: GameController) -> Result:
        """Its events, or why the controller refuses it (a refused command is not journaled)."""
        return controller.handle_command(self.command, self.t)

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return self.try_apply(controller)[0]  # journaled, so it was accepted when it was applied

    def body(self) -> dict[str, Any]:
        return self.command

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> CommandInput:
        return cls(t, body)


@dataclass(frozen=True)
class TickInput(TableInput):
    """Time passed (the action clock, a bet settling, a hand's end). Journaled only when it changed something: a
    tick that changes nothing only moves the clock, which the next input moves too."""

    kind = "tick"
    t: float

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return controller.tick(self.t)

    def body(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> TickInput:
        return cls(t)


@dataclass(frozen=True)
class JournalStateInput(TableInput):
    """The journal's own state (``near_limit`` or ``ok``): the daemon's warning that the events the broker has not
    acknowledged near the journal's limit. Its ``journal`` event is numbered like the controller's own (the daemon
    raises it, not the game), so seqs stay one gapless sequence and replay makes it again with the same seq."""

    kind = "journal"
    t: float
    state: str
    rows: int
    undelivered: int
    limit: int

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return [controller.numbered_event("journal", self.t, self.body())]

    def body(self) -> dict[str, Any]:
        return {"state": self.state, "rows": self.rows, "undelivered": self.undelivered, "limit": self.limit}

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> JournalStateInput:
        return cls(t, body["state"], body["rows"], body["undelivered"], body["limit"])


@dataclass(frozen=True)
class EquityInput(TableInput):
    """The equity worker's result for the spot as it still is (:mod:`rfid_table.service.equity_worker`): its
    ``public`` and ``secret`` parts, numbered like the ``journal`` event."""

    kind = "equity"
    t: float
    result: dict[str, Any]

    def apply(self, controller: GameController) -> list[DomainEvent]:
        return [equity_event(controller, self.t, self.result)]

    def body(self) -> dict[str, Any]:
        return self.result

    @classmethod
    def from_body(cls, t: float, body: dict[str, Any]) -> EquityInput:
        return cls(t, body)


# Every kind a journal may hold, in the order the journal's refusal names them.
_BY_KIND: dict[str, type[TableInput]] = {cls.kind: cls for cls in (
    ZoneInput, TickInput, DeviceInput, CommandInput, JournalStateInput, SensorInput, EquityInput)}
INPUT_KINDS = tuple(_BY_KIND)


def input_of(kind: str, t: float, body: dict[str, Any]) -> TableInput:
    """The record of a row of the journal's ``inputs`` table."""
    return _BY_KIND[kind].from_body(t, body)


# ---- rows, for code that writes a journal by hand (tools, tests) ----------------------------------------


def zone_input(event: ZoneEvent) -> Row:
    return ZoneInput(event).row()


def device_input(event: DeviceEvent) -> Row:
    return DeviceInput(event).row()


def tick_input(now: float) -> Row:
    return TickInput(now).row()


def journal_input(t: float, state: str, rows: int, undelivered: int, limit: int) -> Row:
    return JournalStateInput(t, state, rows, undelivered, limit).row()


def journal_event(controller: GameController, t: float, body: dict[str, Any]) -> DomainEvent:
    """The ``journal`` event of a ``journal`` row's body."""
    return JournalStateInput.from_body(t, body).apply(controller)[0]
