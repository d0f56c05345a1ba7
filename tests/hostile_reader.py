"""A reader that misbehaves on purpose, on a pseudo-terminal: it answers the handshake as it is told (another protocol
major version, a serial with markup in it), keeps the link alive with heartbeats, and then does what a broken or
hostile reader does (``Behaviour``): a cycle that never ends, a stream without delimiters, reboots one after another.

It runs in a thread of its own on the wall clock, like a reader on a USB cable, and writes only as fast as the
daemon reads (the pty's buffer is the cable).
"""

from __future__ import annotations

import dataclasses
import os
import random
import select
import threading
import time
from pathlib import Path
from typing import Callable

from firmware_bridge.codec import FrameDecoder, encode_frame, encode_message
from firmware_bridge.messages import (
    Ack,
    AckResult,
    Capability,
    Heartbeat,
    Identify,
    IdentifyReply,
    Inventory,
    InventoryFlag,
    MessageType,
    TagEntry,
    TagTechnology,
)
from sim.pty_link import close_pty, open_pty

# What the reader does once its handshake is answered: called again and again with the reader, returns the bytes
# to send next (b"": nothing now).
Behaviour = Callable[["HostileReader"], bytes]


class HostileReader:
    def __init__(self, link_path: Path, *, serial: str = "HOSTILE-1", protocol_major: int = 1, antennas: int = 4,
                 heartbeat_s: float = 0.3, behaviour: Behaviour | None = None):
        self.link_path = link_path
        self.serial = serial
        self.protocol_major = protocol_major
        self.antennas = antennas
        self.heartbeat_s = heartbeat_s
        self.behaviour = behaviour
        self.identified_at: list[float] = []  # monotonic time of every IDENTIFY received
        self.answered = threading.Event()  # a handshake has been answered
        self.sent_entries = 0  # tag entries sent by the behaviour's inventories
        self.uptime_ms = 1000
        self._seq = 0
        self._out = b""
        self._stop = threading.Event()
        self._master, self._slave, _ = open_pty(link_path)
        os.set_blocking(self._master, False)
        self._thread = threading.Thread(target=self._run, name="hostile-reader", daemon=True)
        self._thread.start()

    @property
    def path(self) -> str:
        return str(self.link_path)

    @property
    def alive(self) -> bool:
        """Whether its thread still runs (an error in a behaviour ends it)."""
        return self._thread.is_alive()

    def frame(self, message) -> bytes:
        """``message`` with the reader's next seq, framed."""
        self._seq = (self._seq + 1) & 0xFFFF
        return encode_message(dataclasses.replace(message, seq=self._seq))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        close_pty(self._master, self._slave, self.link_path)

    def _run(self) -> None:
        decoder = FrameDecoder()
        beat_at = 0.0
        while not self._stop.is_set():
            readable, writable, _ = select.select([self._master], [self._master] if self._out else [], [], 0.01)
            if readable:
                try:
                    data = os.read(self._master, 65536)
                except BlockingIOError:
                    data = b""
                for message in decoder.feed(data):
                    self._answer(message)
            now = time.monotonic()
            if self.answered.is_set() and now >= beat_at:
                beat_at = now + self.heartbeat_s
                self.uptime_ms += int(self.heartbeat_s * 1000)
                self._out += self.frame(Heartbeat(0, self.uptime_ms))
            if self.answered.is_set() and self.behaviour is not None and len(self._out) < 4096:
                self._out += self.behaviour(self)
            if self._out and (writable or not readable):
                try:
                    written = os.write(self._master, self._out[:65536])
                except BlockingIOError:
                    written = 0
                self._out = self._out[written:]

    def _answer(self, message) -> None:
        if isinstance(message, Identify):
            self.identified_at.append(time.monotonic())
            if self.protocol_major != 1:  # only the two version bytes are common to every major version
                self._seq = (self._seq + 1) & 0xFFFF
                self._out += encode_frame(MessageType.IDENTIFY_REPLY, self._seq,
                                          bytes([self.protocol_major, 0]) + b"\x00" * 8)
            else:
                self._out += self.frame(IdentifyReply(0, 1, 0, 1, 0, 0, self.serial, self.antennas,
                                                     TagTechnology.ISO15693, Capability.RSSI))
            self.answered.set()
        else:
            self._out += self.frame(Ack(0, message.seq, AckResult.OK))


def stuck_cycle(entries_per_frame: int = 8, antennas: int | None = None, every_s: float = 0.0) -> Behaviour:
    """INVENTORY frames of one cycle that never ends (its number stuck at 7, never a CYCLE_END), each with new
    random tags, for the reader's antennas (or the first ``antennas``), a round every ``every_s``."""
    rng = random.Random(7)
    state = {"at": 0.0}

    def behave(reader: HostileReader) -> bytes:
        now = time.monotonic()
        if now < state["at"]:
            return b""
        state["at"] = now + every_s
        frames = b""
        for antenna in range(antennas or reader.antennas):
            entries = tuple(TagEntry(b"\xe0\x04" + rng.randbytes(6), 1, -50) for _ in range(entries_per_frame))
            reader.sent_entries += len(entries)
            frames += reader.frame(Inventory(0, antenna, 7, InventoryFlag(0), entries))
        return frames

    return behave


def whole_cycles(first: int = 8) -> Behaviour:
    """Cycles as a reader sends them: every antenna, the last with CYCLE_END, numbered on from ``first``, every
    50 ms."""
    state = {"cycle": first, "at": 0.0}

    def behave(reader: HostileReader) -> bytes:
        now = time.monotonic()
        if now < state["at"]:
            return b""
        state["at"] = now + 0.05
        frames = b""
        for antenna in range(reader.antennas):
            flags = InventoryFlag.CYCLE_END if antenna == reader.antennas - 1 else InventoryFlag(0)
            frames += reader.frame(Inventory(0, antenna, state["cycle"] & 0xFFFF, flags, ()))
        state["cycle"] += 1
        return frames

    return behave


def no_delimiter() -> Behaviour:
    """Bytes that are never a frame: random, and never the delimiter 0x00."""
    rng = random.Random(3)

    def behave(reader: HostileReader) -> bytes:
        return bytes(rng.randrange(1, 256) for _ in range(1024))

    return behave


def rebooting(every_s: float = 0.05) -> Behaviour:
    """A reader that reboots again and again: a heartbeat whose uptime went back to zero, every ``every_s``."""
    state = {"at": 0.0}

    def behave(reader: HostileReader) -> bytes:
        now = time.monotonic()
        if now < state["at"]:
            return b""
        state["at"] = now + every_s
        reader.uptime_ms = 10 if reader.uptime_ms > 1000 else 100_000  # back to the start, then far ahead
        return reader.frame(Heartbeat(0, reader.uptime_ms))

    return behave
