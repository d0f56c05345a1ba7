"""What the pipeline (:mod:`rfid_table.service.daemon`) hands its output to: the MQTT publisher on a table, anything
that records in the tests and the benches."""

from typing import Protocol

from controller.domain import DomainEvent


class Sink(Protocol):
    """Where the pipeline's output goes (the MQTT publisher; in tests, anything that records).

    A sink subclasses this protocol and inherits what it has no use for: always connected, nothing pending, no
    pacing of the backlog (every journaled event offered goes out through :meth:`publish_events`), no delivery
    report.
    """

    connected: bool = True  # the broker has the connection now
    max_paced_in_flight: int = 0  # the most backlog messages in flight at once since backlog_started (for the log)

    @property
    def refusing(self) -> bool:
        """The broker refuses what the table publishes (a status light condition)."""
        return False

    @property
    def pending(self) -> int:
        """Messages handed over that the broker has not acknowledged yet."""
        return 0

    def resume(self, delivered: dict[str, int]) -> None:
        """The journal's delivery marks at the start (feed → seq the broker acknowledged)."""

    def backlog_started(self) -> None:
        """A delivery of journaled events begins: the sink starts counting what it has in flight for it anew."""

    def publish_backlog_events(self, events: list[DomainEvent]) -> int:
        """Publish as many journaled events, oldest first, as the pace allows now; how many were taken."""
        self.publish_events(events)
        return len(events)

    def delivery_report(self) -> dict | None:
        """What the diagnostics show of the delivery (None: nothing to say)."""
        return None

    def publish_events(self, events: list[DomainEvent]) -> None: ...

    def publish_snapshots(self, public_snapshot: dict, secure_snapshot: dict) -> None: ...

    def take_acknowledged(self) -> dict[str, int]:
        """Feed → seq up to which the broker has acknowledged every event, where it moved since the last call."""

    def publish_diagnostics(self, report: dict) -> None: ...

    def publish_delayed(self, events: list[DomainEvent]) -> int | None:
        """Returns how many of ``events`` it took (None: all); the rest is offered again."""

    def publish_delayed_hand(self, events: list[DomainEvent], released: float | None,
                             released_before: float | None) -> None:
        """The delayed feed's events of the hand being played back so far, and of the hand before it (retained: the
        latest replaces the last); ``released``: the stamp at which the newest hand's start was released,
        ``released_before``: the hand before's, when ``events`` begin with its start (None: not known)."""

    def publish_live(self, bodies: list[dict]) -> None:
        """The ``live/events`` payloads of this cycle's events (rfid_table.service.live_feed), live only."""

    def take_commands(self) -> list:
        """Commands received since the last call: each with ``topic``, ``payload`` (raw bytes) and ``retained``
        (:class:`rfid_table.service.publisher.ReceivedCommand`)."""

    def publish_reply(self, role: str, user: str, body: dict) -> None: ...
