"""What the soak measures of the broker's process and of the machine meanwhile: the broker's CPU time and memory
and the CPU of all cores, read from ``/proc`` every second in a thread of the soak's own.
"""

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_S = 1.0  # the broker's CPU and memory are read this often


def find_listener_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` of this machine (for a broker given with --broker), or None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit():
            continue
        try:
            for fd in (pid_dir / "fd").iterdir():
                if os.readlink(fd) in targets:
                    return int(pid_dir.name)
        except OSError:
            continue
    return None


def _proc_cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def _proc_memory_kb(pid: int) -> tuple[int, int]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all cores."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


@dataclass
class Sample:
    t: float
    broker_ticks: int | None
    rss_kb: int | None
    hwm_kb: int | None
    busy: int
    total: int


class Sampler(threading.Thread):
    """Reads the broker's CPU time and memory, and the machine's CPU, every second."""

    def __init__(self, pid: int | None):
        super().__init__(name="soak-sampler", daemon=True)
        self.pid = pid
        self.samples: list[Sample] = []
        self._halt = threading.Event()
        self.lock = threading.Lock()

    def sample(self) -> None:
        ticks = rss = hwm = None
        if self.pid is not None:
            try:
                ticks = _proc_cpu_ticks(self.pid)
                rss, hwm = _proc_memory_kb(self.pid)
            except (OSError, ValueError, IndexError):
                pass
        busy, total = _machine_ticks()
        with self.lock:
            self.samples.append(Sample(time.time(), ticks, rss, hwm, busy, total))

    def run(self) -> None:
        while not self._halt.wait(SAMPLE_S):
            self.sample()

    def stop(self) -> None:
        self._halt.set()
        self.join(5)
        self.sample()

    def between(self, start: float, end: float) -> list[Sample]:
        with self.lock:
            inside = [s for s in self.samples if start <= s.t <= end + SAMPLE_S]
            return inside if len(inside) >= 2 else list(self.samples)

    def latest(self) -> Sample | None:
        with self.lock:
            return self.samples[-1] if self.samples else None
