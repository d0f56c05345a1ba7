"""The reader link's part of ``rfid-table bench``, on the host's side and without MQTT: the wire-protocol decoder alone
(``decode_frames_per_s``), and tag reads through the pty, the codec, the link, the firmware reader and the zone
tracker (``tag_reads_per_s``, ``frame_to_zone_event_p99_ms``).
"""

import time

from rfid_table.devtools.bench_reader import percentile


def measure_decode_frames_per_s(frames: int = 50_000) -> float:
    """The codec alone: INVENTORY frames with four tags each, fed in 4 KiB reads as a serial port delivers them."""
    import random

    from firmware_bridge.codec import FrameDecoder
    from firmware_bridge.messages import Inventory, TagEntry, encode_message

    rng = random.Random(1)
    stream = b"".join(
        encode_message(Inventory(seq=i & 0xFFFF, antenna=i % 16, cycle=i // 16, flags=0, entries=tuple(
            TagEntry(uid=bytes([0xE0, 0x04]) + rng.randbytes(6), read_count=3, rssi=-50) for _ in range(4))))
        for i in range(frames))
    chunks = [stream[i:i + 4096] for i in range(0, len(stream), 4096)]
    decoder = FrameDecoder()
    start = time.perf_counter()
    decoded = sum(len(decoder.feed(chunk)) for chunk in chunks)
    elapsed = time.perf_counter() - start
    if decoded != frames:
        raise RuntimeError(f"the decoder returned {decoded} of {frames} frames")
    return frames / elapsed


def measure_tag_reads(cycles: int = 400, antennas: int = 12, tags_per_antenna: int = 40) -> tuple[float, float]:
    """Sustained tag reads through the pty, pyserial, the codec, the link, the firmware reader and the zone
    tracker, with tags moving between antennas every cycle so that zone events keep coming.

    Returns (reads per second of host-side time, p99 milliseconds from the cycle's frames being readable on
    the host to the zone events they cause). The emulator's own time (the reader's side) is not counted.
    """
    import random
    import select
    import tempfile
    from pathlib import Path

    from hal.firmware_reader import serial_reader
    from hal.zones import DebounceSettings, ZoneTracker
    from sim.field import TableField
    from sim.firmware import FirmwareEmulator

    zones = {f"zone{a}": ("main", a) for a in range(1, antennas + 1)}
    field = TableField(zones)
    rng = random.Random(2)
    tags = [f"E0040150{i:08X}" for i in range(antennas * tags_per_antenna)]
    for i, uid in enumerate(tags):
        field.place(uid, f"zone{i % antennas + 1}")
    with tempfile.TemporaryDirectory() as directory:
        emulator = FirmwareEmulator(field, reader="main", antenna_count=antennas, cycle_s=0.05,
                                    link_path=Path(directory) / "reader", heartbeat_s=0.5)
        reader = serial_reader("main", emulator.path, antennas=antennas)
        tracker = ZoneTracker({v: k for k, v in zones.items()}, default=DebounceSettings(1, 0.2))
        t, reads, host_s, latencies = 1000.0, 0, 0.0, []
        try:
            for step in range(cycles + 40):
                for uid in rng.sample(tags, 5):  # players and dealers move things all the time
                    field.place(uid, f"zone{rng.randrange(antennas) + 1}")
                t += 0.05
                emulator.step(t)
                transport = reader.link.transport
                if transport is not None and transport.fileno() is not None:
                    select.select([transport.fileno()], [], [], 0.05)
                readable_at = time.perf_counter()
                cycles_done = reader.poll(t)
                events = [e for cycle in cycles_done for e in tracker.feed(cycle)]
                done_at = time.perf_counter()
                if step >= 40 and reader.link.is_up:  # after the handshake and the first full inventory
                    host_s += done_at - readable_at
                    reads += sum(len(cycle.reads) for cycle in cycles_done)
                    if events:
                        latencies.append((done_at - readable_at) * 1000)
        finally:
            reader.close()
            emulator.close()
    if not reads:
        raise RuntimeError("no tag reads came through the emulated reader link")
    return reads / host_s, percentile(latencies, 99)
