"""A modelled reader (``sim.pn5180.ModelledReader``) in a process of its own, as a reader has its own CPU.

In the process of the daemon it feeds, the board model answers each of the firmware's SPI frames in a thread that
waits for the interpreter while the daemon runs: a bench would time that contention, which a reader on its own Pico
does not have. Here the board model runs in a child process, on a copy of the table: every move on the parent's
``MirroredField`` goes to each child over a pipe, in order, and a reader's first look at an awaited tag comes back.

    field = MirroredField(config.zones)
    reader = ReaderProcess(field, idle=True, reader="chips", config=firmware, link_path="/tmp/reader-chips")
    serial_reader("chips", reader.path, ...)   # the firmware's pty, as with a ModelledReader
    field.place(uid, "bets_3")                 # the reader sees it in its next round
    reader.air_s()                             # each front end's air time so far, from the child
    reader.close()
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection

from sim.field import TableField

START_S = 30.0  # the longest a child may take to import, build its board and boot the firmware


class MirroredField:
    """The table the bench moves tags on, mirrored into each reader process: a move here is a move there."""

    def __init__(self, zones: dict[str, tuple[str, int]]):
        self.zones = dict(zones)
        self._field = TableField(zones)
        self._children: list[tuple[str, Connection, threading.Lock]] = []
        self._awaited: dict[str, threading.Event] = {}

    def attach(self, name: str, connection: Connection, lock: threading.Lock) -> None:
        self._children.append((name, connection, lock))

    def _send(self, message: tuple) -> None:
        for name, connection, lock in self._children:
            try:
                with lock:
                    connection.send(message)
            except OSError as error:
                raise RuntimeError(f"reader process {name} has stopped: the move {message} did not reach it "
                                   f"({error})") from error

    def place(self, uid: str, zone: str) -> None:
        self._field.place(uid, zone)
        self._send(("place", uid, zone))

    def remove(self, uid: str) -> None:
        self._field.remove(uid)
        self._send(("remove", uid))

    def clear(self) -> None:
        self._field.clear()
        self._send(("clear",))

    def zone_of(self, uid: str) -> str | None:
        return self._field.zone_of(uid)

    def tags_in(self, zone: str) -> list[str]:
        return self._field.tags_in(zone)

    def tags_on(self, reader: str, antenna: int) -> list[str]:
        return self._field.tags_on(reader, antenna)

    def placed(self) -> list[tuple[str, str]]:
        """Every tag on the table and its zone, for a reader process that starts now."""
        return [(uid, zone) for zone in self.zones for uid in self._field.tags_in(zone)]

    def await_look(self, uid: str) -> threading.Event:
        """An event set once a reader first looks at an antenna holding ``uid`` (await it before placing it)."""
        self._awaited[uid] = looked = threading.Event()
        self._send(("await", uid))
        return looked

    def looked(self, uid: str) -> None:
        looked = self._awaited.pop(uid, None)
        if looked is not None:
            looked.set()


class ReaderProcess:
    """A ``ModelledReader`` (keyword arguments as its own) in a child process, reading ``field``'s copy there.

    On a machine with fewer cores than the bench has processes, a reader that runs ahead takes the daemon's CPU,
    which a reader on its own Pico never does. ``idle``: the child and its firmware run under the idle scheduling
    policy (Linux's SCHED_IDLE), only when nothing else wants a core. That includes the kernel's worker that moves the
    firmware's bytes over the pty to the daemon: at a niceness of 10 the two processes of a reader, taking turns on a
    core every few microseconds, kept it waiting 47-315 ms (docs/bench.md). ``nice``: their niceness over the
    parent's instead."""

    def __init__(self, field: MirroredField, nice: int = 0, idle: bool = False, **reader: object):
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: the parent has threads running
        self._connection, child = context.Pipe()
        self._lock = threading.Lock()
        self._air: list[list[float]] = []
        self._answered = threading.Condition()
        self._process = context.Process(target=_serve, args=(child, field.zones, field.placed(), nice, idle, reader),
                                        name=f"reader-{reader.get('reader', 'main')}", daemon=True)
        self._process.start()
        child.close()
        if not self._connection.poll(START_S):
            self._process.kill()
            raise RuntimeError(f"reader process {self._process.name} did not start within {START_S:.0f} s")
        try:
            ready = self._connection.recv()
        except EOFError:
            self._process.join(5)
            raise RuntimeError(f"reader process {self._process.name} exited before it was ready (exit code "
                               f"{self._process.exitcode}); its error is above") from None
        if ready[0] != "ready":
            self._process.join(5)
            raise RuntimeError(f"reader process {self._process.name} failed to start: {ready[1]}")
        self.path: str = ready[1]
        self.pid = self._process.pid  # the child's (the firmware's process is its child)
        self.field = field
        field.attach(self._process.name, self._connection, self._lock)
        threading.Thread(target=self._receive, name=f"{self._process.name}-notes", daemon=True).start()

    def _receive(self) -> None:
        while True:
            try:
                note = self._connection.recv()
            except (EOFError, OSError):
                return
            if note[0] == "looked":
                self.field.looked(note[1])
            elif note[0] == "air":
                with self._answered:
                    self._air.append(note[1])
                    self._answered.notify_all()

    def air_s(self, timeout_s: float = 10.0) -> list[float]:
        """Each front end's air time so far (``PN5180Model.air_s``), as the child's board counted it."""
        with self._answered:
            count = len(self._air)
            with self._lock:
                self._connection.send(("air",))
            if not self._answered.wait_for(lambda: len(self._air) > count, timeout_s):
                raise RuntimeError(f"reader process {self._process.name} did not answer for its air time")
            return self._air[-1]

    def close(self) -> None:
        try:
            with self._lock:
                self._connection.send(("close",))
        except OSError:
            pass
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._connection.close()


class _ChildField(TableField):
    """The child's copy of the table, telling the parent when the board first looks at an awaited tag."""

    def __init__(self, zones: dict[str, tuple[str, int]], tell: Callable[[tuple], None]):
        super().__init__(zones)
        self._tell = tell
        self.awaited: set[str] = set()

    def tags_on(self, reader: str, antenna: int) -> list[str]:
        tags = super().tags_on(reader, antenna)
        if self.awaited:
            for uid in tags:
                if uid in self.awaited:
                    self.awaited.discard(uid)
                    self._tell(("looked", uid))
        return tags


def _serve(connection: Connection, zones: dict, placed: list[tuple[str, str]], nice: int, idle: bool,
           reader: dict) -> None:
    """The child: the board model and the firmware, the table's moves applied as they come."""
    from sim.pn5180 import ModelledReader  # noqa: PLC0415 (in the child only)

    # the firmware's process, started below, inherits either
    if idle:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    elif nice:
        os.nice(nice)

    lock = threading.Lock()

    def tell(note: tuple) -> None:
        with lock:
            connection.send(note)

    field = _ChildField(zones, tell)
    for uid, zone in placed:
        field.place(uid, zone)
    try:
        device = ModelledReader(field, **reader)
    except Exception as error:  # noqa: BLE001 (told to the parent, which raises it)
        tell(("failed", f"{type(error).__name__}: {error}"))
        return
    tell(("ready", device.path))
    try:
        while True:
            message = connection.recv()
            if message[0] == "place":
                field.place(message[1], message[2])
            elif message[0] == "remove":
                field.remove(message[1])
            elif message[0] == "clear":
                field.clear()
            elif message[0] == "await":
                field.awaited.add(message[1])
            elif message[0] == "air":
                tell(("air", [chip.air_s for chip in device.board.chips]))
            elif message[0] == "close":
                return
    except (EOFError, OSError):
        return
    finally:
        device.close()
