"""Reader backends: where inventory cycles come from.

A backend is chosen per reader by ``backend = "..."`` in the table configuration. Each backend module is
imported only when a table uses it, so the package imports on any laptop whatever hardware libraries are
missing. ``serial`` and ``usb`` readers run the table firmware's protocol (``hal.firmware_reader``); ``metratec``
and ``feig`` readers, bought from their makers, speak theirs, and their links hand on the same inventories;
``pn5180`` readers are PN5180 front ends on the Pi's own SPI bus, run in process by the firmware's driver
(``hal.pn5180_reader``).
"""

from typing import Protocol

from hal.events import InventoryCycle, TagRead
from hal.reader_backend import ReaderBackend


class TagField(Protocol):
    """The physical world a simulated reader looks at: which tags lie on which antenna right now."""

    version: int  # counts changes: the same number means the same tags on every antenna

    def tags_on(self, reader: str, antenna: int) -> list[str]: ...


class SimulatedReader(ReaderBackend):
    """A reader that sees a simulated table perfectly: every tag on an antenna is read once per cycle.

    The reads are built again only when something on the table moved: a table at rest costs nothing to read."""

    def __init__(self, name: str, antennas: int, field: TagField):
        self.name = name
        self.antennas = antennas
        self.field = field
        self._version: int | None = None
        self._reads: tuple[TagRead, ...] = ()

    link_state = "simulated (in-process)"

    def poll(self, now: float) -> list[InventoryCycle]:
        if self.field.version != self._version:
            self._version = self.field.version
            self._reads = tuple(
                TagRead(antenna, uid)
                for antenna in range(1, self.antennas + 1)
                for uid in self.field.tags_on(self.name, antenna)
            )
        return [InventoryCycle(self.name, now, self._reads)]


def open_reader(name: str, backend: str, antennas: int, link: dict | None = None,
                field: TagField | None = None, cycle_s: float | None = None,
                dwells: list[int] | None = None) -> ReaderBackend:
    """The backend a reader's configuration names (``link`` holds its port or USB ids, ``cycle_s`` its cycle;
    ``dwells``, each antenna's dwell in ms, else the link's ``dwell_ms``, lets the host tell a reader of the table
    firmware what matters now, with its ``front_ends`` and ``hint_every``: ``hal.firmware_reader.hinted_schedule``; with
    ``park``, a reader that can is parked on the one antenna it is told to watch, protocol 1.2's PARK)."""
    link = link or {}
    if backend == "sim":
        if field is None:
            raise ValueError(f"reader {name!r} uses the simulated backend: run it with 'rfid-table sim'")
        return SimulatedReader(name, antennas, field)
    if backend == "serial":
        from hal.firmware_reader import HINT_EVERY, PARK_EVERY_MS, serial_reader

        return serial_reader(name, link["port"], link.get("baudrate", 115200), antennas, cycle_s,
                             dwells or link.get("dwell_ms"), link.get("hint_every", HINT_EVERY), link.get("front_ends"),
                             PARK_EVERY_MS if link.get("park") else None)
    if backend == "usb":
        from hal.firmware_reader import HINT_EVERY, PARK_EVERY_MS, usb_reader

        return usb_reader(name, link["vendor_id"], link["product_id"], link.get("serial_number"),
                          link.get("interface", 0), antennas, cycle_s, dwells or link.get("dwell_ms"),
                          link.get("hint_every", HINT_EVERY), link.get("front_ends"),
                          PARK_EVERY_MS if link.get("park") else None)
    if backend in ("metratec", "feig"):
        from hal.firmware_reader import bought_reader

        return bought_reader(name, backend, link, antennas, cycle_s)
    if backend == "pn5180":
        from hal.pn5180_reader import pn5180_reader

        return pn5180_reader(name, link, antennas, cycle_s)
    raise ValueError(f"reader {name!r}: unknown backend {backend!r}")
