"""Hardware abstraction layer: turns what the readers see into zone events the controller understands.

Reader backends (:mod:`hal.readers`: the simulated field; serial and USB readers running the table firmware through
``firmware_bridge``, :mod:`hal.firmware_reader`) all produce :class:`hal.events.InventoryCycle` objects;
:class:`hal.zones.ZoneTracker` debounces them into :class:`hal.events.ZoneEvent` arrivals and departures, on the zone
names of :mod:`hal.zone_names`. :mod:`hal.gpio` drives the table's own pins: the seat sensors and console buttons
(debounced) in, the lights out.
"""
