"""Byte transports between the host and one reader: a serial port (USB CDC or UART), USB bulk endpoints, or a TCP
connection (a reader on the network).

A transport only moves bytes. It never reconnects by itself and never retries: any I/O failure is raised
as one :class:`TransportError`, which the link (``firmware_bridge.link``) treats as a disconnect. The link
then closes the transport and, after its backoff, asks its factory for a fresh one.

Reads never block for long: ``read`` returns what is available now (serial) or within a few milliseconds
(USB), possibly ``b""``. After a read, ``drained`` says whether it took everything the device had buffered, so
that the link need not read once more only to be told there is nothing (a serial port's short read); a
transport that cannot tell says False.

pyserial and pyusb are imported only when a transport of that kind is opened, so this module (and the
whole package) imports on a machine that has neither.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import socket
import time
from typing import Any, Protocol

log = logging.getLogger(__name__)

READ_CHUNK = 4096


class TransportError(Exception):
    """Opening, reading or writing the transport failed: for the link, the reader is gone."""


class Transport(Protocol):
    drained: bool  # the last read took all that was buffered: reading again now would return nothing

    def open(self) -> None:
        """Open the device; raise TransportError if it is not there or cannot be used."""

    def close(self) -> None:
        """Release the device. Never raises; safe to call twice or on a failed open."""

    def read(self, max_bytes: int = READ_CHUNK) -> bytes:
        """Return up to ``max_bytes`` received bytes without waiting more than a few milliseconds."""

    def write(self, data: bytes) -> None:
        """Send all of ``data``."""

    def fileno(self) -> int | None:
        """A file descriptor that select() can wait on for incoming bytes, or None."""

    def describe(self) -> str:
        """Human-readable description for logs and the diagnostics view."""


# --------------------------------------------------------------------------
# Serial port: USB CDC (/dev/ttyACM*) or a UART (/dev/ttyAMA*, /dev/ttyS*)
# --------------------------------------------------------------------------


class SerialTransport:
    """A serial port opened with pyserial, non-blocking.

    Give it a stable path: ``/dev/serial/by-id/usb-...`` for a USB reader or a udev symlink for a UART.
    ``/dev/ttyACM0`` can name a different device after a replug; the by-id path follows the reader.
    The device the path resolves to is logged at every open.
    """

    def __init__(self, path: str, baudrate: int = 115200, write_timeout_s: float = 0.5):
        self.path = path
        self.baudrate = baudrate
        # A reader that stopped draining its USB endpoint would otherwise block write() for ever.
        self.write_timeout_s = write_timeout_s
        self.device: str | None = None  # what ``path`` resolved to at the last open
        self._port: Any = None
        # A read shorter than asked for emptied the port's input queue: the next frames make the port readable
        # again (the daemon waits on it with select()), so reading again at once would only return b"" and cost
        # a read and a select() more, after each of the frames a reader sends (540 a second on a full table).
        self.drained = False

    def open(self) -> None:
        try:
            import serial
        except ImportError as exc:
            raise TransportError("pyserial is not installed: pip install pyserial") from exc
        if not os.path.exists(self.path):
            raise TransportError(f"{self.path} does not exist (reader unplugged?)")
        self.device = os.path.realpath(self.path)
        if self.device != self.path:
            log.info("opening serial port %s (device %s)", self.path, self.device)
        else:
            log.info("opening serial port %s", self.path)
        try:
            self._port = serial.Serial(
                self.path, self.baudrate, timeout=0, write_timeout=self.write_timeout_s, exclusive=True
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            self._port = None
            raise TransportError(f"cannot open {self.path}: {exc}") from exc

    def close(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except Exception as exc:  # the device may already be gone
                log.debug("closing %s: %s", self.path, exc)

    def read(self, max_bytes: int = READ_CHUNK) -> bytes:
        port = self._require_open()
        # Straight from the descriptor, which pyserial opens non-blocking: its read() adds a select() to every call,
        # and the link reads after each frame a reader sends (27 a cycle on a full table).
        try:
            fd = port.fileno()
            data = os.read(fd, max_bytes)
            self.drained = 0 < len(data) < max_bytes
            # Nothing to read reads as b"" (pyserial's VMIN=0); so does a device that went away, which select()
            # then still reports readable. (Or bytes arrived since the read: then the next read has them.)
            if not data and select.select([fd], [], [], 0)[0]:
                data = os.read(fd, max_bytes)
                if not data:
                    raise TransportError(f"read from {self.path} failed: the device reports data but gives none "
                                         "(disconnected?)")
            return data
        except (BlockingIOError, InterruptedError):
            return b""
        except TransportError:
            raise
        except Exception as exc:  # OSError (EIO: unplugged), TypeError or ValueError from a port closed under us
            raise TransportError(f"read from {self.path} failed: {exc}") from exc

    def write(self, data: bytes) -> None:
        port = self._require_open()
        try:
            port.write(data)
        except Exception as exc:
            raise TransportError(f"write to {self.path} failed: {exc}") from exc

    def fileno(self) -> int | None:
        return self._port.fileno() if self._port is not None else None

    def describe(self) -> str:
        device = f" ({self.device})" if self.device and self.device != self.path else ""
        return f"serial {self.path}{device} at {self.baudrate} baud"

    def _require_open(self) -> Any:
        if self._port is None:
            raise TransportError(f"{self.path} is not open")
        return self._port


# --------------------------------------------------------------------------
# TCP: a reader on the room's network
# --------------------------------------------------------------------------


class TcpTransport:
    """A TCP connection to a reader with an Ethernet port, non-blocking once connected.

    ``open`` waits at most ``connect_timeout_s`` for the connection: a reader on the table's own network answers
    within a millisecond, and one that does not answer is retried with the link's backoff, so the table's loop is
    held that long only once per attempt. A reader that closes the connection, or a network that drops it, reads as
    an error: for the link, the reader is gone. Keepalive probes notice a cable pulled on a connection at rest.
    """

    def __init__(self, host: str, port: int, connect_timeout_s: float = 0.2, write_timeout_s: float = 0.5):
        self.host = host
        self.port = port
        self.connect_timeout_s = connect_timeout_s
        self.write_timeout_s = write_timeout_s
        self._sock: socket.socket | None = None
        self.drained = False

    def open(self) -> None:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout_s)
        except OSError as exc:
            raise TransportError(f"cannot connect to {self.host}:{self.port}: {exc.strerror or exc}") from exc
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # commands are a few bytes; send them now
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for option, value in (("TCP_KEEPIDLE", 2), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 3)):
            if hasattr(socket, option):
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)
        sock.setblocking(False)
        self._sock = sock
        log.info("connected to %s", self.describe())

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError as exc:
                log.debug("closing %s: %s", self.describe(), exc)

    def read(self, max_bytes: int = READ_CHUNK) -> bytes:
        sock = self._require_open()
        try:
            data = sock.recv(max_bytes)
        except (BlockingIOError, InterruptedError):
            self.drained = True
            return b""
        except OSError as exc:
            raise TransportError(f"read from {self.describe()} failed: {exc.strerror or exc}") from exc
        if not data:
            raise TransportError(f"{self.describe()} closed the connection")
        self.drained = len(data) < max_bytes
        return data

    def write(self, data: bytes) -> None:
        sock = self._require_open()
        view = memoryview(data)
        deadline = None
        while view:
            try:
                view = view[sock.send(view):]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                raise TransportError(f"write to {self.describe()} failed: {exc.strerror or exc}") from exc
            # the send buffer is full: a reader that stopped reading gets write_timeout_s, then counts as gone
            deadline = deadline if deadline is not None else time.monotonic() + self.write_timeout_s
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [sock], [], left)[1]:
                raise TransportError(f"write to {self.describe()} failed: the reader takes nothing "
                                     f"for {self.write_timeout_s:g} s")

    def fileno(self) -> int | None:
        return self._sock.fileno() if self._sock is not None else None

    def describe(self) -> str:
        return f"tcp {self.host}:{self.port}"

    def _require_open(self) -> socket.socket:
        if self._sock is None:
            raise TransportError(f"{self.describe()} is not open")
        return self._sock


# --------------------------------------------------------------------------
# USB with vendor-specific bulk endpoints
# --------------------------------------------------------------------------


class UsbTransport:
    """A reader exposing a vendor-specific interface with one bulk IN and one bulk OUT endpoint, via pyusb.

    pyusb has no hotplug notification: an unplugged device shows up as a USBError on the next transfer,
    which becomes a TransportError; the link then looks the device up again (``open``) with its backoff.
    """

    drained = False  # a bulk read returns one transfer, whatever else waits in the endpoint

    def __init__(
        self,
        vendor_id: int,
        product_id: int,
        serial_number: str | None = None,
        interface: int = 0,
        endpoint_in: int = 0x81,
        endpoint_out: int = 0x01,
        read_timeout_ms: int = 5,
        write_timeout_ms: int = 500,
    ):
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.serial_number = serial_number
        self.interface = interface
        self.endpoint_in = endpoint_in
        self.endpoint_out = endpoint_out
        # pyusb reads block for their timeout, and timeout 0 means "for ever": keep it short but non-zero.
        self.read_timeout_ms = max(1, read_timeout_ms)
        self.write_timeout_ms = write_timeout_ms
        self._usb: Any = None  # the usb.core module, imported at open()
        self._device: Any = None
        self._claimed = False

    def open(self) -> None:
        try:
            import usb.core
            import usb.util
        except ImportError as exc:
            raise TransportError("pyusb is not installed: pip install pyusb") from exc
        self._usb = usb
        try:
            device = self._find(usb)
            if device is None:
                raise TransportError(f"{self._wanted()} not found (reader unplugged?)")
            self._device = device
            # A kernel driver bound to the interface (e.g. usbfs quirks, a CDC driver) must let go first.
            if device.is_kernel_driver_active(self.interface):
                log.info("detaching kernel driver from interface %d of %s", self.interface, self._wanted())
                device.detach_kernel_driver(self.interface)
            # Setting the configuration again on a configured device resets it; only do it when unset.
            try:
                device.get_active_configuration()
            except usb.core.USBError:
                device.set_configuration()
            usb.util.claim_interface(device, self.interface)
            self._claimed = True
        except TransportError:
            self.close()
            raise
        except (usb.core.USBError, ValueError, NotImplementedError) as exc:
            # ValueError/NotImplementedError: no backend (libusb missing) or no permission for descriptors.
            self.close()
            raise TransportError(f"cannot open {self._wanted()}: {exc}") from exc
        log.info("opened %s", self.describe())

    def _find(self, usb: Any) -> Any:
        if self.serial_number is None:
            return usb.core.find(idVendor=self.vendor_id, idProduct=self.product_id)
        for device in usb.core.find(find_all=True, idVendor=self.vendor_id, idProduct=self.product_id):
            try:
                if device.serial_number == self.serial_number:
                    return device
            except (usb.core.USBError, ValueError) as exc:  # a device we may not query: not ours
                log.debug("cannot read the serial number of a %s: %s", self._wanted(), exc)
        return None

    def close(self) -> None:
        device, self._device = self._device, None
        if device is None or self._usb is None:
            return
        usb = self._usb
        try:
            if self._claimed:
                usb.util.release_interface(device, self.interface)
        except Exception as exc:  # unplugged: nothing left to release
            log.debug("releasing interface of %s: %s", self._wanted(), exc)
        finally:
            self._claimed = False
        try:
            usb.util.dispose_resources(device)
        except Exception as exc:
            log.debug("disposing %s: %s", self._wanted(), exc)

    def read(self, max_bytes: int = READ_CHUNK) -> bytes:
        device = self._require_open()
        usb = self._usb
        try:
            data = device.read(self.endpoint_in, max_bytes, timeout=self.read_timeout_ms)
        except usb.core.USBError as exc:
            if _is_timeout(usb, exc):
                return b""  # nothing arrived within the timeout: not an error
            raise TransportError(f"USB read from {self._wanted()} failed: {exc}") from exc
        return bytes(data)

    def write(self, data: bytes) -> None:
        device = self._require_open()
        usb = self._usb
        try:
            written = device.write(self.endpoint_out, data, timeout=self.write_timeout_ms)
        except usb.core.USBError as exc:
            raise TransportError(f"USB write to {self._wanted()} failed: {exc}") from exc
        if written != len(data):
            raise TransportError(f"USB write to {self._wanted()} sent {written} of {len(data)} bytes")

    def fileno(self) -> int | None:
        return None  # libusb does not give one descriptor per device

    def describe(self) -> str:
        return f"{self._wanted()} interface {self.interface} (IN 0x{self.endpoint_in:02X}, OUT 0x{self.endpoint_out:02X})"

    def _wanted(self) -> str:
        serial = f" serial {self.serial_number}" if self.serial_number else ""
        return f"USB device {self.vendor_id:04x}:{self.product_id:04x}{serial}"

    def _require_open(self) -> Any:
        if self._device is None:
            raise TransportError(f"{self._wanted()} is not open")
        return self._device


def _is_timeout(usb: Any, exc: Exception) -> bool:
    timeout_class = getattr(usb.core, "USBTimeoutError", None)  # pyusb >= 1.2
    if timeout_class is not None and isinstance(exc, timeout_class):
        return True
    return getattr(exc, "errno", None) == errno.ETIMEDOUT or getattr(exc, "backend_error_code", None) == -7
