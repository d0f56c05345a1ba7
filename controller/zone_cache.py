"""Zone names parsed once: the controller reads the zone of every input, and a table has a few dozen zones, so each
name is parsed by ``hal.zone_names.Zone`` the first time it comes and looked up after that."""

from __future__ import annotations

from functools import lru_cache

from hal.zone_names import Zone

# A Zone is an immutable tuple, so one parse serves every later input of that name. The bound only keeps a stream
# of bad names (a misconfigured reader) from growing the cache without end.
zone_of = lru_cache(maxsize=1024)(Zone.parse)
