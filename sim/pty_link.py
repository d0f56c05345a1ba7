"""A simulated reader's USB serial port: a pseudo-terminal in raw mode with a stable name, as udev gives a real one."""

import errno
import os
import tty
from pathlib import Path


def open_pty(link_path: Path | None) -> tuple[int, int, str]:
    """A raw pty (no echo, no line editing, no CR/LF translation: a plain byte pipe) and its slave's path; the
    stable ``link_path`` (like /dev/serial/by-id/...) is re-pointed to it atomically, as udev does on plug-in.
    The caller keeps the slave open, which keeps the terminal and its raw mode alive between host opens."""
    master, slave = os.openpty()
    tty.setraw(slave)
    slave_path = os.ttyname(slave)
    if link_path is not None:
        temporary = link_path.with_name(link_path.name + ".new")
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(slave_path)
        os.replace(temporary, link_path)
    return master, slave, slave_path


def close_pty(master: int | None, slave: int | None, link_path: Path | None) -> None:
    """Unplug: both ends closed (the host's reads fail), the stable name gone."""
    for fd in (master, slave):
        if fd is not None:
            os.close(fd)
    if link_path is not None:
        link_path.unlink(missing_ok=True)


def read_pty(master: int) -> bytes:
    """What the host has written so far (up to 4 KiB) from a non-blocking master; b"" when there is nothing."""
    try:
        return os.read(master, 4096)
    except (BlockingIOError, InterruptedError):
        return b""
    except OSError as exc:
        if exc.errno == errno.EIO:  # no slave side open; cannot happen while the emulator holds it
            return b""
        raise


def write_pty(master: int, data: bytes | bytearray) -> int:
    """Write what the pty takes now to a non-blocking master; 0 when it is full (nobody reading)."""
    try:
        return os.write(master, data)
    except BlockingIOError:
        return 0
    except OSError as exc:
        if exc.errno == errno.EIO:
            return 0
        raise
