"""What every reader backend is to the table (:class:`ReaderBackend`): the simulated readers of :mod:`hal.readers`
and the firmware reader of :mod:`hal.firmware_reader`, which :func:`hal.readers.open_reader` chooses between."""

from typing import TYPE_CHECKING, Protocol

from hal.events import DeviceEvent, EarlyReads, InventoryCycle, TagRead

if TYPE_CHECKING:
    from firmware_bridge.link import ReaderLink


class ReaderUnavailable(RuntimeError):
    """A reader that cannot be opened on this machine at all (a missing module or device, no permission), as opposed
    to one that is unplugged for now, which its link retries: the message says what to do."""


class ReaderBackend(Protocol):
    name: str
    link: "ReaderLink | None" = None  # its link to the reader (None: in-process, nothing between it and the table)
    # False while the reader's cycles are given up (one never ended, or held more reads than a table has tags) and
    # none has ended whole since: its link is up, but the table does not see its cards
    delivering: bool = True
    cycles_given_up: int = 0  # how many, and why the latest was (a reader that never gives one up: 0, None)
    last_given_up: str | None = None

    # A reader without a link of its own inherits these answers by subclassing this protocol.
    @property
    def link_up(self) -> bool:
        """Whether the table sees this reader's cards now (False: its link is down)."""
        return True

    @property
    def faulted_antennas(self) -> frozenset[int]:
        """Configuration numbers of the antennas reporting a fault now."""
        return frozenset()

    @property
    def paced_by_host(self) -> bool:
        """The daemon's wait: whether the reader speaks only when spoken to (its answers taken in at once)."""
        return False

    @property
    def link_state(self) -> str:
        """For the diagnostics: the link's state (up, identifying, disconnected), or what the reader is instead."""
        return "up" if self.link_up else "down"

    def fileno(self) -> int | None:
        """A descriptor select() can wait on for the reader's news (None: none now; the loop polls it)."""
        return None

    def poll(self, now: float) -> list[InventoryCycle]:
        """Return the inventory cycles completed since the last poll (possibly none)."""

    def device_events(self) -> list[DeviceEvent]:
        """What happened to the reader itself since the last call (link up or down, antenna faults)."""
        return []

    def watch_antennas(self, antennas: set[int], park: int | None = None,
                       visit_more: frozenset[int] = frozenset()) -> None:
        """Hand on these antennas' reads as each reports, ahead of their cycle (``take_early_reads``); a reader
        that delivers whole cycles at once has nothing earlier to give. ``park``: the antenna where a tag is expected
        now, for a reader that can hold a front end on it (PARK, protocol 1.2); None: parked nowhere.
        ``visit_more``: antennas a reader with a schedule visits more often, as ``antennas``, whose reads are not
        wanted before their cycle (a table waiting on each of their reports wakes for nothing)."""
        return None

    def take_early_reads(self) -> list[EarlyReads]:
        """The visits of the watched antennas in the cycle still being read."""
        return []

    def close(self) -> None:
        """Release what the reader holds (a firmware reader's port); an in-process reader holds nothing."""
        return None
