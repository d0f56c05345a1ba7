"""Hardware abstraction layer: turns what the readers see into zone events the controller understands.

Backends (the simulated field now; serial and USB readers through ``firmware_bridge`` later) all produce
:class:`hal.events.InventoryCycle` objects; :class:`hal.zones.ZoneTracker` debounces them into
:class:`hal.events.ZoneEvent` arrivals and departures.
"""
