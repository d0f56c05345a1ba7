"""The host's share of the machine, beside the daemon: CPU time a hypervisor gave to other guests (steal).

On a virtual machine, a moment of steal holds up every process of the bench at once, the emulated readers, the
daemon's loop and the broker alike: a card read then waits, before its event is stamped as after, however little
the daemon does. To tell such a wait from the daemon's own, the bench's full-table part runs a :class:`StealProbe`
in the same minutes: a thread of the bench that reads the CPUs' times (``/proc/stat``) every
:data:`PROBE_INTERVAL_S`. A window in which :data:`BURST_SHARE` or more of the CPUs' time was stolen is a burst;
a card whose first read and arrival span one waited on the host. (A Raspberry Pi has no hypervisor: it reads 0.)
"""

import threading
import time

PROBE_INTERVAL_S = 0.25  # the kernel counts in 10 ms ticks: 50 of them a window on two CPUs
BURST_SHARE = 0.10  # a tenth of the CPUs' time in a window: 25 ms of a core, half a reader cycle
STAT = "/proc/stat"


def cpu_ticks(path: str = STAT) -> tuple[int, int] | None:
    """(steal, all) ticks of all CPUs since boot, or None where the kernel does not say (not Linux)."""
    try:
        with open(path) as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    times = [int(value) for value in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return times[7], sum(times)


class StealProbe:
    """Reads the CPUs' times every ``interval_s`` from its own thread, and keeps each window's steal."""

    def __init__(self, interval_s: float = PROBE_INTERVAL_S, path: str = STAT):
        self._interval_s = interval_s
        self._path = path
        self._windows: list[tuple[float, float, int, int]] = []  # (start, end on perf_counter, steal, all ticks)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="steal-probe", daemon=True)

    def start(self) -> "StealProbe":
        self._thread.start()
        return self

    def taken(self) -> int:
        """How many windows so far."""
        return len(self._windows)

    def stop(self) -> list[tuple[float, float, int, int]]:
        """Stops the thread (if it runs); every window, as (start, end on perf_counter, steal ticks, all ticks)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return list(self._windows)

    def _run(self) -> None:
        last, last_at = cpu_ticks(self._path), time.perf_counter()
        while last is not None and not self._stop.wait(self._interval_s):
            now, now_at = cpu_ticks(self._path), time.perf_counter()
            if now is None:
                return
            self._windows.append((last_at, now_at, now[0] - last[0], now[1] - last[1]))
            last, last_at = now, now_at


def share_between(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The stolen share of the CPUs' time between two :func:`cpu_ticks` readings (None where there are none)."""
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def share(windows: list[tuple[float, float, int, int]]) -> float:
    """The stolen share of the CPUs' time over all ``windows`` (0 without any)."""
    ticks = sum(all_ticks for *_, all_ticks in windows)
    return sum(steal for _s, _e, steal, _a in windows) / ticks if ticks else 0.0


def bursts(windows: list[tuple[float, float, int, int]], burst_share: float = BURST_SHARE) -> list[tuple[float, float]]:
    """The (start, end) of every window in which ``burst_share`` or more of the CPUs' time was stolen."""
    return [(start, end) for start, end, steal, all_ticks in windows if all_ticks and steal / all_ticks >= burst_share]
