"""Talking to systemd: readiness, status, stopping and the watchdog (``sd_notify``), with the standard library.

The unit (``systemd/rfid-table@.service``) is ``Type=notify`` with ``WatchdogSec=``. systemd passes two
things in the environment:

* ``NOTIFY_SOCKET``: an ``AF_UNIX`` datagram socket; a path, or an abstract name written with a leading
  ``@``. Every message is one datagram of ``KEY=VALUE`` lines. Without the variable (a terminal, the tests, a
  laptop) every function here does nothing and returns ``False``.
* ``WATCHDOG_USEC`` (and ``WATCHDOG_PID``): the watchdog timeout. ``Watchdog`` pings at half of it, and only
  while the caller says the daemon is healthy; systemd stops (``WatchdogSignal=``) and restarts it when the
  pings stop for the whole timeout.

What "healthy" means for the table is decided by ``LinkHealth``: every reader link is up, or has been down for
less than ``LINK_GRACE_S`` = 30 s (``$RFID_TABLE_LINK_GRACE_S`` overrides it; a replug or a reader reboot fits in
it), or has not been up once since this process started
(a fresh restart could not fix it either, so the watchdog restarts the daemon once per outage, not in a loop).
The main loop being alive is implied: the pings come from it.

``ServiceMonitor`` puts the pieces together for the daemon's loop: one call per cycle.
"""

from __future__ import annotations

import gc
import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)

LINK_GRACE_S = 30.0  # a reader link may be down this long before the watchdog pings stop
GRACE_ENV = "RFID_TABLE_LINK_GRACE_S"  # overrides LINK_GRACE_S (a drop-in's Environment=, the tests)
STATUS_MIN_INTERVAL_S = 1.0  # STATUS= at most this often (the text changes every second while a link is down)


# A young generation collected every 7,000 new objects instead of 700, and the middle and oldest ones less often:
# the loop makes few long-lived objects, so fewer, slightly longer young collections replace a steady stream of
# middle ones (1-2 ms each here).
GC_THRESHOLDS = (7000, 20, 20)


# --------------------------------------------------------------------------
# Garbage collection
# --------------------------------------------------------------------------


def settle_heap_for_steady_loop() -> None:
    """Call once start-up is done (configuration loaded, journal restored), before the loop.

    A collection of the oldest generation walks every object the process holds — modules, the configuration,
    the deck registry, paho, the restored hand — and took 12-20 ms, a stall a broadcast's graphics notice. What
    start-up made lives as long as the process, so it is moved out of the collector's sight (``gc.freeze``):
    later collections walk only what the loop itself made since. Reference counting still frees everything at
    once; only cycles wait for the collector.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


# --------------------------------------------------------------------------
# sd_notify
# --------------------------------------------------------------------------


def _address(value: str) -> str | bytes | None:
    if value.startswith("@"):
        return b"\0" + value[1:].encode()  # the abstract namespace: a leading NUL, no file
    if value.startswith("/"):
        return value
    return None  # sd_notify accepts nothing else (newer systemd also knows vsock:, which a Pi does not use)


_warned_about: set[str] = set()


def notify(*lines: str) -> bool:
    """Send ``lines`` (``"READY=1"``, ``"STATUS=..."``) to systemd as one datagram.

    Returns True when it was sent, False when there is no ``NOTIFY_SOCKET`` (not started by systemd) or the
    send failed — a failure is logged once per socket and never raised: the daemon's work goes on, and systemd
    notices the missing READY=1 or pings by itself.
    """
    value = os.environ.get("NOTIFY_SOCKET")
    if not value or not lines:
        return False
    address = _address(value)
    if address is None:
        if value not in _warned_about:
            _warned_about.add(value)
            log.warning("NOTIFY_SOCKET=%r is neither a path nor an abstract name: not notifying systemd", value)
        return False
    message = "\n".join(lines).encode()
    try:
        # never blocks: a service manager that reads its socket late must not stop the table (a full queue is
        # a failed send, and the next interval pings again)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK) as sock:
            sock.sendto(message, address)
    except OSError as exc:
        if value not in _warned_about:
            _warned_about.add(value)
            log.warning("cannot notify systemd through %s: %s", value, exc)
        return False
    return True


def _one_line(text: str) -> str:
    return " ".join(text.split())  # a newline would start another KEY=VALUE


def ready(status: str | None = None) -> bool:
    """Start-up is complete (journal restored, broker started): ``READY=1``, optionally with a status."""
    return notify("READY=1", *([f"STATUS={_one_line(status)}"] if status else []))


def stopping(status: str | None = None) -> bool:
    """Shutdown has begun (SIGTERM): ``STOPPING=1``."""
    return notify("STOPPING=1", *([f"STATUS={_one_line(status)}"] if status else []))


def status(text: str) -> bool:
    """A one-line description for ``systemctl status``: ``STATUS=text``."""
    return notify(f"STATUS={_one_line(text)}")


def watchdog_ping() -> bool:
    """``WATCHDOG=1``, unconditionally. The daemon uses ``Watchdog.maybe_ping``."""
    return notify("WATCHDOG=1")


# --------------------------------------------------------------------------
# The watchdog
# --------------------------------------------------------------------------


class Watchdog:
    """Pings systemd's watchdog at half its timeout, while healthy.

    ``environ`` defaults to ``os.environ`` and ``pid`` to ``os.getpid()``; both exist for the tests. The
    watchdog is off (``enabled`` False, ``maybe_ping`` never sends) when ``WATCHDOG_USEC`` is missing, not a
    positive integer, or ``WATCHDOG_PID`` names another process (the variable was inherited, as sd_watchdog_enabled
    checks).
    """

    def __init__(self, environ: Mapping[str, str] | None = None, pid: int | None = None):
        environ = os.environ if environ is None else environ
        self.timeout_s: float | None = None
        usec = environ.get("WATCHDOG_USEC", "")
        watchdog_pid = environ.get("WATCHDOG_PID", "")
        try:
            timeout_us = int(usec)
            for_us = not watchdog_pid or int(watchdog_pid) == (os.getpid() if pid is None else pid)
        except ValueError:
            timeout_us, for_us = 0, False
        if timeout_us > 0 and for_us:
            self.timeout_s = timeout_us / 1e6
        self.last_ping: float | None = None  # caller's clock
        self.pings = 0

    @property
    def enabled(self) -> bool:
        return self.timeout_s is not None

    @property
    def interval_s(self) -> float | None:
        """How often a healthy daemon pings: half the timeout, so one late ping is not fatal."""
        return None if self.timeout_s is None else self.timeout_s / 2

    def maybe_ping(self, now: float, healthy: bool) -> bool:
        """Call from every loop cycle with a monotonic ``now``. Sends ``WATCHDOG=1`` when healthy and at least
        ``interval_s`` has passed since the last ping (the first healthy call pings at once). Returns True when
        it sent one."""
        interval_s = self.interval_s
        if not healthy or interval_s is None:  # no watchdog
            return False
        if self.last_ping is not None and now - self.last_ping < interval_s:
            return False
        self.last_ping = now  # a failed send is not retried before the next interval either
        if not watchdog_ping():
            return False
        self.pings += 1
        return True


def link_grace_s(environ: Mapping[str, str] | None = None) -> float:
    """``$RFID_TABLE_LINK_GRACE_S`` when it is a number of seconds above 0, else ``LINK_GRACE_S``."""
    value = (os.environ if environ is None else environ).get(GRACE_ENV, "")
    try:
        grace = float(value)
    except ValueError:
        return LINK_GRACE_S
    return grace if 0 < grace < float("inf") else LINK_GRACE_S


class LinkHealth:
    """Whether the readers are healthy enough for the watchdog to be fed.

    ``update(now, links)`` takes every reader's link state (name -> up) and a monotonic ``now``. A reader is
    *failing* when its link was up at some point in this process and has now been down for ``grace_s`` or
    more. A link that has not come up once since start-up is reported (``describe``) but not failing: a
    restart would meet the same unplugged or incompatible reader, and the daemon keeps retrying by itself.
    """

    def __init__(self, grace_s: float | None = None, environ: Mapping[str, str] | None = None):
        self.grace_s = grace_s if grace_s is not None else link_grace_s(environ)
        self._down_since: dict[str, float] = {}
        self._seen_up: set[str] = set()
        self._links: dict[str, bool] = {}
        self._now = 0.0

    def update(self, now: float, links: Mapping[str, bool]) -> bool:
        self._now = now
        self._links = dict(links)
        for name, up in links.items():
            if up:
                self._seen_up.add(name)
                self._down_since.pop(name, None)
            else:
                self._down_since.setdefault(name, now)
        for name in set(self._down_since) - set(links):
            del self._down_since[name]
        return self.healthy

    @property
    def healthy(self) -> bool:
        return not self.failing

    @property
    def failing(self) -> list[str]:
        """Readers down past the grace period (sorted)."""
        return sorted(name for name, since in self._down_since.items()
                      if name in self._seen_up and self._now - since >= self.grace_s)

    def down_for(self) -> dict[str, float]:
        """Reader -> seconds its link has been down, for the readers that are down."""
        return {name: self._now - since for name, since in sorted(self._down_since.items())}

    def describe(self) -> str:
        """One line for ``STATUS=``: which readers are up, and for how long the others have been down."""
        if not self._links:
            return "no readers"
        parts = []
        up = sorted(name for name, is_up in self._links.items() if is_up)
        if up:
            parts.append(f"reader{'s' if len(up) > 1 else ''} {', '.join(up)} up")
        for name, seconds in self.down_for().items():
            if name not in self._seen_up:
                parts.append(f"waiting for reader {name} (not connected since start, {seconds:.0f} s)")
            elif seconds >= self.grace_s:
                parts.append(f"reader {name} DOWN for {seconds:.0f} s: watchdog stopped, systemd will restart")
            else:
                parts.append(f"reader {name} down for {seconds:.0f} s (grace {self.grace_s:.0f} s)")
        return "; ".join(parts)


class ServiceMonitor:
    """The daemon's side of the unit, one call per loop cycle.

    ``loop(now, links, broker_connected)``: updates ``LinkHealth``, feeds the watchdog while healthy, and sends
    ``STATUS=`` when its text changed (at most every ``STATUS_MIN_INTERVAL_S``). ``now`` is monotonic. Logs a
    warning when the watchdog pings stop and when they resume.
    """

    def __init__(self, table_id: str, watchdog: Watchdog | None = None, health: LinkHealth | None = None):
        self.table_id = table_id
        self.watchdog = watchdog if watchdog is not None else Watchdog()
        self.health = health if health is not None else LinkHealth()
        self._status = ""
        self._status_at = float("-inf")
        self._starved = False

    def status_text(self, broker_connected: bool, detail: str | None = None) -> str:
        broker = "broker connected" if broker_connected else "broker NOT connected (journaling, will resend)"
        return f"table {self.table_id}: {self.health.describe()}; {broker}" + (f"; {detail}" if detail else "")

    def loop(self, now: float, links: Mapping[str, bool], broker_connected: bool = True,
             detail: str | None = None) -> bool:
        """Returns whether the daemon counts as healthy this cycle. ``detail`` ends the status line (e.g. the
        hand number)."""
        healthy = self.health.update(now, links)
        if self.watchdog.enabled and healthy == self._starved:
            if healthy:
                log.info("reader links recovered: watchdog pings resume")
            else:
                log.warning("reader link(s) %s down for %.0f s or more: no more watchdog pings, systemd will "
                            "restart the daemon", ", ".join(self.health.failing), self.health.grace_s)
            self._starved = not healthy
        self.watchdog.maybe_ping(now, healthy)
        if now - self._status_at >= STATUS_MIN_INTERVAL_S:
            text = self.status_text(broker_connected, detail)
            if text != self._status:
                status(text)
                self._status, self._status_at = text, now
        return healthy
