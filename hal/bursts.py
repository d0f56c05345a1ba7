"""A count per interval instead of one report per occurrence, for sources that can flood: a reader whose link flaps
or that reboots again and again (``reader_link``), a noisy reader or a foreign deck (``unknown_tag``).

Per key (a reader, a zone), the first ``limit`` occurrences of a window of ``window_s`` go out as they come; the
rest of that window are held, only the newest kept, and the window's end gives that one with how many occurrences
it stands for (``summarised``). Nothing is lost but the held ones' details; the count says they were there.

Pure and deterministic: it runs on the times it is given (table time), so the controller's replay of its journal
gives the same reports.

Example, a limit of 2 in 10 s::

    >>> bursts = Bursts(limit=2, window_s=10.0)
    >>> [bursts.offer("main", t, f"change {t}") for t in (0.0, 1.0, 2.0, 3.0)]
    [[('change 0.0', 1)], [('change 1.0', 1)], [], []]
    >>> bursts.next_due()
    10.0
    >>> bursts.due(10.0)
    [('change 3.0', 2)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable

NEVER = float("inf")


@dataclass
class _Window:
    start: float
    count: int = 0  # occurrences in this window
    held: Any = None  # the newest held occurrence
    held_count: int = 0  # occurrences held in this window


class Bursts:
    """At most ``limit`` reports per key in ``window_s``; past that, one report per window that stands for them."""

    def __init__(self, limit: int, window_s: float):
        self.limit = limit
        self.window_s = window_s
        self._windows: dict[Hashable, _Window] = {}

    def offer(self, key: Hashable, t: float, item: Any) -> list[tuple[Any, int]]:
        """An occurrence at ``t``: what to report now, each as (item, how many occurrences it stands for)."""
        out = self._close(key, t)
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = _Window(t)
        window.count += 1
        if window.count <= self.limit:
            out.append((item, 1))
        else:
            window.held, window.held_count = item, window.held_count + 1
        return out

    def due(self, now: float) -> list[tuple[Any, int]]:
        """The held occurrences whose window has ended by ``now``, each as its newest with their count."""
        out = []
        for key in [key for key, window in self._windows.items() if now >= window.start + self.window_s]:
            out += self._close(key, now)
        return out

    def next_due(self) -> float:
        """When a held occurrence is next due to be reported (``NEVER``: none is held)."""
        return min((w.start + self.window_s for w in self._windows.values() if w.held_count), default=NEVER)

    @property
    def holding(self) -> int:
        """Occurrences held now, not yet reported."""
        return sum(w.held_count for w in self._windows.values())

    def _close(self, key: Hashable, now: float) -> list[tuple[Any, int]]:
        """The window of ``key`` ends if its time is over by ``now``: its held occurrences, reported as one."""
        window = self._windows.get(key)
        if window is None or now < window.start + self.window_s:
            return []
        del self._windows[key]
        return [(window.held, window.held_count)] if window.held_count else []
