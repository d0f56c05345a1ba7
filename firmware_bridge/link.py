"""The host side of one reader connection: handshake, commands with retransmission, supervision, reconnect.

``ReaderLink`` is single-threaded and driven by its caller: ``poll(now)`` reads whatever the transport has,
decodes it, advances the state machine and returns what happened as ``LinkEvent`` objects. It never
sleeps and takes the time from the caller, so tests can run it on a virtual clock.

``ReconnectingLink`` holds what the three reader links share (this one, ``metratec.MetratecLink`` and
``feig.FeigLink``): the state, the connection attempts with their backoff, the counters and the events of a poll.
``ReaderLink`` adds this protocol's handshake, commands and supervision.

States (docs/protocol.md sections 3 to 5)::

    disconnected --open ok--> identifying --compatible IDENTIFY_REPLY--> up
         ^   ^                    |   |                                  |
         |   +-- open failed, ----+   +-- no reply / refused: another    |
         |       backoff 1,2,4,8,16,30 s   major, a serial not plain     |
         |                                 (close, backoff)              |
         +------ 2 s without a valid frame, or an I/O error ("down") ----+

On entering ``up`` the link sends REQUEST_INVENTORY so every antenna is reported afresh. A reader reboot
(uptime going backwards) while up resets the sequence tracking and repeats the handshake on the same port.

Commands are stop-and-wait: one in flight, the rest queued. The in-flight command is retransmitted with
the same seq and bytes every 200 ms, up to 3 times, until the ACK or NAK carrying its seq arrives.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Protocol

from firmware_bridge.codec import DecoderStats, FrameDecoder, FrameRejection, SequenceTracker, SeqVerdict
from firmware_bridge.messages import (
    Ack,
    AntennaFault,
    Heartbeat,
    Identify,
    IdentifyReply,
    IncompatibleIdentifyReply,
    IncompatibleProtocolError,
    Inventory,
    Message,
    Nak,
    RequestInventory,
    Reset,
    Status,
    check_compatible,
    encode_message,
)
from firmware_bridge.transports import Transport, TransportError

log = logging.getLogger(__name__)

UPTIME_WRAP = 1 << 32  # uptime_ms is a u32
_EPSILON = 1e-6  # timers are due this much early, so 0.71 - 0.51 counts as the full 0.2 s


@dataclass(frozen=True)
class LinkTiming:
    """The protocol's timing rules; tests may shorten them, the daemon uses the defaults."""

    retransmit_after_s: float = 0.2
    max_retransmits: int = 3
    link_timeout_s: float = 2.0  # down after this long without any valid frame
    backoff_s: tuple[float, ...] = (1, 2, 4, 8, 16, 30)  # waits between failed connection attempts
    max_reads_per_poll: int = 64  # bound the work of one poll on a flooding device


class LinkState(str, enum.Enum):
    DISCONNECTED = "disconnected"
    IDENTIFYING = "identifying"
    UP = "up"


class TicketState(str, enum.Enum):
    PENDING = "pending"  # queued or in flight
    ACKED = "acked"  # answered with ACK (see reply.result) or, for IDENTIFY, IDENTIFY_REPLY
    NAKKED = "nakked"
    FAILED = "failed"  # no answer after every attempt, or the link went down first


@dataclass
class CommandTicket:
    """What became of one command sent with ``ReaderLink.send``."""

    command: Message  # as sent, with the seq the link assigned
    state: TicketState = TicketState.PENDING
    reply: Message | None = None  # the Ack, Nak or IdentifyReply
    error: str | None = None  # why it failed
    attempts: int = 0  # transmissions so far (1 + retransmits)
    done_at: float | None = None

    @property
    def seq(self) -> int:
        return self.command.seq

    @property
    def done(self) -> bool:
        return self.state is not TicketState.PENDING

    @property
    def ok(self) -> bool:
        """Executed by the reader: ACK with result OK, or an IDENTIFY_REPLY."""
        if self.state is not TicketState.ACKED:
            return False
        return not isinstance(self.reply, Ack) or self.reply.result == 0


@dataclass(frozen=True)
class LinkEvent:
    """Something the daemon should know about.

    kind: "up" (message: the IdentifyReply), "down" (reason), "connect_failed" (reason),
    "incompatible" (reason names both versions; message: the reply), "inventory", "antenna_fault",
    "status" (message: the reader's message), "frames_lost" (count), "reader_reset" (reason),
    "command_failed" (message: the command; reason), "inventory_requested" (a REQUEST_INVENTORY was
    acknowledged: the next REQUESTED cycle is complete).
    """

    kind: str
    t: float
    reader: str
    message: Message | None = None
    reason: str = ""
    count: int = 0


@dataclass(frozen=True)
class LinkStats:
    """A snapshot of the link's counters for the diagnostics view; decoder counters span all connections."""

    state: str
    transport: str
    frames_ok: int
    crc_errors: int
    cobs_errors: int
    oversize: int
    runts: int
    malformed: int
    unknown_type: int
    bytes_discarded: int
    frames_lost: int  # reader frames missing from the seq sequence
    duplicates: int  # reader frames received twice (ignored)
    retransmits: int
    commands_failed: int
    stale_replies: int  # ACK/NAK for no command in flight (late answers to a retransmission)
    connects: int  # successful handshakes
    reconnects: int  # successful handshakes after the link had been up before
    reader_resets: int  # reader reboots seen while connected
    bytes_received: int
    bytes_sent: int
    last_error: str | None
    last_rejection: FrameRejection | None
    refused: str | None  # why the reader was refused at its latest handshake, until one succeeds

    @property
    def frames_rejected(self) -> int:
        return self.crc_errors + self.cobs_errors + self.oversize + self.runts + self.malformed + self.unknown_type

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _add_decoder_stats(total: DecoderStats, more: DecoderStats) -> None:
    for f in dataclasses.fields(DecoderStats):
        setattr(total, f.name, getattr(total, f.name) + getattr(more, f.name))


@dataclass
class LinkCounters:
    """What a link counts besides its decoder's frames; a counter of something a protocol cannot see stays 0."""

    frames_lost: int = 0
    duplicates: int = 0
    retransmits: int = 0
    commands_failed: int = 0
    stale_replies: int = 0
    connects: int = 0
    reconnects: int = 0
    reader_resets: int = 0
    bytes_received: int = 0
    bytes_sent: int = 0
    # Of closed connections; a link without a frame decoder (Metratec's text lines) counts its frames here.
    decoder_totals: DecoderStats = field(default_factory=DecoderStats)


class FrameCounter(Protocol):
    """What ``stats`` reads of a link's frame decoder (this protocol's, or another reader's)."""

    @property
    def stats(self) -> DecoderStats: ...

    @property
    def last_error(self) -> FrameRejection | None: ...


class ReconnectingLink:
    """What every reader link shares: ``ReaderLink`` below, ``metratec.MetratecLink`` and ``feig.FeigLink``.

    It keeps the state the daemon sees, makes a connection attempt when one is due, backs off after each that fails,
    keeps the counters and collects the events of one poll. A link adds what its protocol does, in these methods:

    * ``_after_open(transport)``: the first bytes on a freshly opened port (a TransportError fails the attempt);
    * ``_connected(now)``: the port is open: start the handshake (``_went_up`` when it succeeds);
    * ``_poll_connected(now)``: one poll's work while the port is open (``_receive`` hands bytes to ``_take_in``);
    * ``_drop_connection(reason)``: the port is about to close: what was pending fails with ``reason``;
    * ``_frame_decoder()``: the open connection's frame decoder, whose counters ``stats`` adds to the totals;
    * ``_handshake_failure(reason)``, if the default does not fit: the event a connection lost before "up" makes.
    """

    paced_by_host: bool  # True: the reader waits for the host to take in each answer before it goes on

    def __init__(
        self,
        transport_factory: Callable[[], Transport],
        *,
        name: str,
        backoff_s: tuple[float, ...],
        max_reads_per_poll: int,
        logger: logging.Logger,
        first_seq: int = 0,
    ):
        self.name = name
        self._factory = transport_factory
        self._backoff_s = backoff_s  # waits between failed connection attempts
        self._max_reads_per_poll = max_reads_per_poll  # bound the work of one poll on a flooding device
        self._log = logger  # each link logs under its own module's name
        self._transport: Transport | None = None
        self._transport_description = ""
        self._state = LinkState.DISCONNECTED
        self.identity: IdentifyReply | None = None  # the connected reader, while up
        self._counters = LinkCounters()
        self._next_seq = first_seq & 0xFFFF
        self._next_attempt_at: float | None = None  # None: connect at the first poll
        self._failed_attempts = 0  # consecutive; indexes the backoff table
        self._was_up = False  # the link has been up at some time (to count reconnects)
        self._up_this_connection = False
        self._last_error: str | None = None
        self._last_rejection: FrameRejection | None = None  # of a closed connection
        self._refused: str | None = None  # why the latest handshake refused the reader (None: it did not)
        self._events: list[LinkEvent] = []  # collected during one poll
        self._now = 0.0

    # ---- public -----------------------------------------------------------------------------------

    @property
    def state(self) -> LinkState:
        return self._state

    @property
    def is_up(self) -> bool:
        return self._state is LinkState.UP

    @property
    def transport(self) -> Transport | None:
        """The open transport, if any (the daemon select()s its fileno(); tests wait on it)."""
        return self._transport

    @property
    def bytes_sent(self) -> int:
        return self._counters.bytes_sent

    @property
    def bytes_received(self) -> int:
        return self._counters.bytes_received

    @property
    def next_attempt_at(self) -> float | None:
        """When the next connection attempt is due, while disconnected."""
        return self._next_attempt_at if self._state is LinkState.DISCONNECTED else None

    @property
    def stats(self) -> LinkStats:
        c = self._counters
        frames = DecoderStats(**c.decoder_totals.as_dict())
        last_rejection = self._last_rejection
        decoder = self._frame_decoder() if self._transport is not None else None
        if decoder is not None:
            _add_decoder_stats(frames, decoder.stats)
            last_rejection = decoder.last_error or last_rejection
        return LinkStats(
            state=self._state.value,
            transport=self._transport_description,
            frames_ok=frames.frames_ok,
            crc_errors=frames.crc_errors,
            cobs_errors=frames.cobs_errors,
            oversize=frames.oversize,
            runts=frames.runts,
            malformed=frames.malformed,
            unknown_type=frames.unknown_type,
            bytes_discarded=frames.bytes_discarded,
            frames_lost=c.frames_lost,
            duplicates=c.duplicates,
            retransmits=c.retransmits,
            commands_failed=c.commands_failed,
            stale_replies=c.stale_replies,
            connects=c.connects,
            reconnects=c.reconnects,
            reader_resets=c.reader_resets,
            bytes_received=c.bytes_received,
            bytes_sent=c.bytes_sent,
            last_error=self._last_error,
            last_rejection=last_rejection,
            refused=self._refused,
        )

    def poll(self, now: float) -> list[LinkEvent]:
        """Do all pending work for time ``now`` (seconds, monotonic) and return what happened."""
        self._now = now
        self._events = []
        if self._state is LinkState.DISCONNECTED:
            if self._next_attempt_at is None or now >= self._next_attempt_at - _EPSILON:
                self._connect(now)
            return self._take_events()
        try:
            self._poll_connected(now)
        except TransportError as exc:
            self._go_down(now, str(exc))
        return self._take_events()

    def close(self) -> None:
        """Close the port for good (daemon shutdown); pending commands fail."""
        self._disconnect("link closed")
        self._next_attempt_at = float("inf")

    # ---- what a link adds (see the class's docstring) ---------------------------------------------

    def _after_open(self, transport: Transport) -> None:
        pass

    def _connected(self, now: float) -> None:
        raise NotImplementedError

    def _poll_connected(self, now: float) -> None:
        raise NotImplementedError

    def _take_in(self, now: float, data: bytes) -> None:
        raise NotImplementedError

    def _drop_connection(self, reason: str) -> None:
        pass

    def _frame_decoder(self) -> FrameCounter | None:
        return None  # the link counts its frames into the totals itself

    # ---- connecting and going down ----------------------------------------------------------------

    def _connect(self, now: float) -> None:
        transport = self._factory()
        self._transport_description = transport.describe()
        try:
            transport.open()
            self._after_open(transport)
        except TransportError as exc:
            transport.close()
            self._attempt_failed(now, "connect_failed", f"cannot open {transport.describe()}: {exc}")
            return
        self._transport_description = transport.describe()  # now naming the device it resolved to
        self._transport = transport
        self._connected(now)

    def _attempt_failed(self, now: float, kind: str, reason: str, message: Message | None = None) -> None:
        delay = self._backoff_s[min(self._failed_attempts, len(self._backoff_s) - 1)]
        self._failed_attempts += 1
        self._next_attempt_at = now + delay
        self._last_error = reason
        if kind == "incompatible":
            self._refused = reason
            self._log.error("%s: %s (retrying in %g s)", self.name, reason, delay)
        else:
            self._log.warning("%s: %s (retrying in %g s)", self.name, reason, delay)
        self._emit(kind, reason=reason, message=message)

    def _went_up(self, identity: IdentifyReply) -> None:
        """The handshake succeeded: count it and tell the daemon."""
        self.identity = identity
        self._refused = None
        self._state = LinkState.UP
        self._up_this_connection = True
        self._failed_attempts = 0
        self._counters.connects += 1
        if self._was_up:
            self._counters.reconnects += 1
        self._was_up = True
        self._emit("up", message=identity)

    def _refuse(self, now: float, reason: str, message: Message | None = None) -> None:
        """Not a reader this link can use as configured: close, and try again later (it may be reflashed,
        swapped or reconfigured)."""
        was_up = self._state is LinkState.UP
        self._disconnect(reason)
        if was_up:
            self._emit("down", reason=reason)
        self._attempt_failed(now, "incompatible", reason, message)

    def _go_down(self, now: float, reason: str) -> None:
        # Also "down" when a handshake after a reader reboot fails: the daemon had seen "up".
        was_up = self._state is LinkState.UP or self._up_this_connection
        failure = None if was_up else self._handshake_failure(reason)
        self._last_error = reason
        if was_up:
            self._log.warning("%s: link down: %s", self.name, reason)
            self._emit("down", reason=reason)
        self._disconnect(reason)
        if failure is None:
            self._next_attempt_at = now  # reopen at once; back off only if that fails
        else:
            self._attempt_failed(now, *failure)

    def _handshake_failure(self, reason: str) -> tuple[str, str]:
        """The kind of event and the reason for a connection lost before it came up."""
        return "connect_failed", f"handshake failed: {reason}"

    def _disconnect(self, reason: str) -> None:
        self._drop_connection(reason)
        if self._transport is not None:
            decoder = self._frame_decoder()
            if decoder is not None:
                _add_decoder_stats(self._counters.decoder_totals, decoder.stats)
                self._last_rejection = decoder.last_error or self._last_rejection
            self._transport.close()
            self._transport = None
        self.identity = None
        self._up_this_connection = False
        self._state = LinkState.DISCONNECTED

    # ---- receiving and events ---------------------------------------------------------------------

    def _receive(self, now: float) -> None:
        for _ in range(self._max_reads_per_poll):
            transport = self._transport
            if transport is None:
                return
            data = transport.read()
            if not data:
                return
            self._counters.bytes_received += len(data)
            self._take_in(now, data)
            if transport.drained:  # nothing more buffered: the next bytes wake the caller's select()
                return

    def _take_seq(self) -> int:
        seq = self._next_seq
        self._next_seq = (seq + 1) & 0xFFFF
        return seq

    def _emit(self, kind: str, *, message: Message | None = None, reason: str = "", count: int = 0) -> None:
        self._events.append(LinkEvent(kind, self._now, self.name, message, reason, count))

    def _take_events(self) -> list[LinkEvent]:
        events, self._events = self._events, []
        return events


class ReaderLink(ReconnectingLink):
    """One reader connection. Call ``poll(now)`` often (every few ms); it never blocks."""

    paced_by_host = False  # the reader scans on its own schedule and reports as it goes

    def __init__(
        self,
        transport_factory: Callable[[], Transport],
        *,
        name: str = "reader",
        timing: LinkTiming = LinkTiming(),
        first_seq: int = 0,
    ):
        super().__init__(transport_factory, name=name, backoff_s=timing.backoff_s,
                         max_reads_per_poll=timing.max_reads_per_poll, logger=log, first_seq=first_seq)
        self.timing = timing
        self._decoder = FrameDecoder()
        self._tracker = SequenceTracker()
        self._queue: deque[CommandTicket] = deque()
        self._in_flight: CommandTicket | None = None
        self._sent_at: float | None = None  # when the in-flight command was last written
        self._identify: CommandTicket | None = None
        self._last_valid_at = 0.0
        self._last_uptime: int | None = None
        self._write_error: str | None = None  # a write failed inside send(), between polls

    # ---- public -----------------------------------------------------------------------------------

    def send(self, command: Message) -> CommandTicket:
        """Queue a host -> reader command; the link assigns its seq (the one in ``command`` is ignored).

        Only while the link is up: otherwise the ticket fails at once, because after a reconnect the
        reader's state is re-established from scratch anyway.
        """
        ticket = CommandTicket(dataclasses.replace(command, seq=self._take_seq()))
        if self._state is not LinkState.UP:
            self._fail(ticket, f"link is {self._state.value}", report=False)
            return ticket
        try:
            self._enqueue(ticket)
        except TransportError as exc:
            self._write_error = str(exc)  # the next poll takes the link down; the caller gets the ticket
        return ticket

    # ---- connecting ---------------------------------------------------------------------------------

    def _after_open(self, transport: Transport) -> None:
        transport.write(b"\x00")  # end any partial frame in the reader's receive buffer (spec 2.3)
        self._counters.bytes_sent += 1

    def _connected(self, now: float) -> None:
        self._decoder = FrameDecoder()
        self._tracker.reset()
        self._last_uptime = None
        self._last_valid_at = now
        log.info("%s: connected over %s, identifying", self.name, self._transport_description)
        self._start_handshake()

    def _start_handshake(self) -> None:
        self._state = LinkState.IDENTIFYING
        self.identity = None
        self._identify = CommandTicket(Identify(self._take_seq()))
        # IDENTIFY goes first, ahead of anything queued.
        self._abandon_in_flight("handshake restarted")
        self._queue.appendleft(self._identify)
        self._start_next()

    def _handshake_done(self, now: float, reply: IdentifyReply | IncompatibleIdentifyReply) -> None:
        try:
            identity = check_compatible(reply)
        except IncompatibleProtocolError as exc:
            # Send nothing else and close (spec 5.1); keep trying with backoff, the reader may be reflashed.
            self._refuse(now, str(exc), message=reply)
            return
        log.info(
            "%s: up: reader %s, firmware %d.%d.%d, protocol %d.%d, %d antennas",
            self.name, identity.serial, identity.firmware_major, identity.firmware_minor,
            identity.firmware_patch, identity.protocol_major, identity.protocol_minor, identity.antenna_count,
        )
        self._went_up(identity)
        # The reader's state may have changed while we were away: ask for all of it.
        self._enqueue(CommandTicket(RequestInventory(self._take_seq())))

    # ---- polling and going down ---------------------------------------------------------------------

    def _poll_connected(self, now: float) -> None:
        if self._write_error is not None:
            raise TransportError(self._write_error)
        self._receive(now)
        if self._transport is not None:
            self._service_in_flight(now)
        if self._transport is not None:
            self._supervise(now)

    def _drop_connection(self, reason: str) -> None:
        self._write_error = None
        self._abandon_in_flight(reason)
        while self._queue:
            self._fail(self._queue.popleft(), reason)
        self._identify = None

    def _frame_decoder(self) -> FrameDecoder:
        return self._decoder

    def _supervise(self, now: float) -> None:
        if self._state is LinkState.UP and now - self._last_valid_at >= self.timing.link_timeout_s - _EPSILON:
            self._go_down(now, f"no valid frame for {now - self._last_valid_at:.1f} s")

    # ---- receiving ----------------------------------------------------------------------------------

    def _take_in(self, now: float, data: bytes) -> None:
        for message in self._decoder.feed(data):
            if self._transport is None:  # an earlier message closed the connection
                return
            self._handle(now, message)

    def _handle(self, now: float, message: Message) -> None:
        self._last_valid_at = now
        if isinstance(message, (IdentifyReply, IncompatibleIdentifyReply)):
            self._tracker.reset()  # a new IDENTIFY_REPLY starts the reader's numbering afresh for us
        elif isinstance(message, (Heartbeat, Status)) and self._uptime_went_backwards(message.uptime_ms):
            self._reader_rebooted(now, message.uptime_ms)
        verdict = self._tracker.observe(message.seq)
        if verdict is SeqVerdict.DUPLICATE:
            self._counters.duplicates += 1
            return
        if verdict is SeqVerdict.GAP:
            lost = self._tracker.last_gap
            self._counters.frames_lost += lost
            self._emit("frames_lost", count=lost, reason=f"{lost} frame(s) missing before seq {message.seq}")

        if isinstance(message, (Ack, Nak)):
            self._answer(now, message)
        elif isinstance(message, (IdentifyReply, IncompatibleIdentifyReply)):
            if self._in_flight is not None and self._in_flight is self._identify:
                ticket, self._in_flight, self._identify = self._in_flight, None, None
                self._complete(now, ticket, TicketState.ACKED, message)
                self._handshake_done(now, message)
                if self._transport is not None:
                    self._start_next()
            # Otherwise: a late answer to a retransmitted IDENTIFY; nothing to do.
        elif self._state is not LinkState.UP:
            return  # reports before the handshake completes belong to no known reader yet
        elif isinstance(message, Inventory):
            self._emit("inventory", message=message)
        elif isinstance(message, AntennaFault):
            self._emit("antenna_fault", message=message)
        elif isinstance(message, Status):
            self._emit("status", message=message)
        # HEARTBEAT only feeds the supervision; host -> reader types are ignored (spec section 6).

    def _uptime_went_backwards(self, uptime_ms: int) -> bool:
        last, self._last_uptime = self._last_uptime, uptime_ms
        if last is None:
            return False
        # Modulo 2^32 so the 49.7-day wrap is not a reboot.
        return (uptime_ms - last) % UPTIME_WRAP > UPTIME_WRAP // 2

    def _reader_rebooted(self, now: float, uptime_ms: int) -> None:
        self._counters.reader_resets += 1
        self._tracker.reset()
        reason = f"reader rebooted (uptime now {uptime_ms} ms)"
        log.warning("%s: %s; repeating the handshake", self.name, reason)
        self._emit("reader_reset", reason=reason)
        self._start_handshake()

    # ---- commands -----------------------------------------------------------------------------------

    def _enqueue(self, ticket: CommandTicket) -> None:
        self._queue.append(ticket)
        if self._in_flight is None:
            self._start_next()

    def _start_next(self) -> None:
        if self._in_flight is not None or not self._queue or self._transport is None:
            return
        ticket = self._queue.popleft()
        self._in_flight = ticket
        self._write_command(ticket)

    def _write_command(self, ticket: CommandTicket) -> None:
        data = encode_message(ticket.command)
        ticket.attempts += 1
        # The retransmit timer starts at the next poll: send() may be called between polls.
        self._sent_at = None
        assert self._transport is not None, "a command is in flight only while a transport is open"
        self._transport.write(data)
        self._counters.bytes_sent += len(data)

    def _service_in_flight(self, now: float) -> None:
        ticket = self._in_flight
        if ticket is None:
            self._start_next()
            return
        if self._sent_at is None:
            self._sent_at = now
            return
        if now - self._sent_at < self.timing.retransmit_after_s - _EPSILON:
            return
        # RESET is never retransmitted: the reader's duplicate memory does not survive it (spec 3.2).
        retries_allowed = 0 if isinstance(ticket.command, Reset) else self.timing.max_retransmits
        if ticket.attempts <= retries_allowed:
            self._counters.retransmits += 1
            log.debug("%s: retransmitting %s seq %d", self.name, ticket.command.MSG_TYPE.name, ticket.seq)
            self._write_command(ticket)
            self._sent_at = now
            return
        self._in_flight = None
        reason = f"no answer to {ticket.command.MSG_TYPE.name} seq {ticket.seq} after {ticket.attempts} attempt(s)"
        if ticket is self._identify:
            self._identify = None
            self._complete(now, ticket, TicketState.FAILED, None, reason)
            self._go_down(now, reason)
            return
        self._complete(now, ticket, TicketState.FAILED, None, reason)
        self._start_next()

    def _answer(self, now: float, reply: Ack | Nak) -> None:
        ticket = self._in_flight
        answered_seq = reply.acked_seq if isinstance(reply, Ack) else reply.rejected_seq
        if ticket is None or ticket.seq != answered_seq or ticket is self._identify:
            self._counters.stale_replies += 1  # e.g. the answer to a copy we had already given up on
            return
        self._in_flight = None
        if isinstance(reply, Ack):
            self._complete(now, ticket, TicketState.ACKED, reply)
            if isinstance(ticket.command, RequestInventory) and reply.result == 0:
                # Every INVENTORY of the requested cycle comes after this ACK (spec 6.5).
                self._emit("inventory_requested", message=ticket.command)
            if reply.result != 0:
                log.warning("%s: %s seq %d answered %s", self.name, ticket.command.MSG_TYPE.name, ticket.seq,
                            getattr(reply.result, "name", reply.result))
        else:
            self._complete(now, ticket, TicketState.NAKKED, reply, f"NAK {getattr(reply.reason, 'name', reply.reason)}")
        self._start_next()

    def _complete(
        self, now: float, ticket: CommandTicket, state: TicketState, reply: Message | None, error: str | None = None
    ) -> None:
        ticket.state, ticket.reply, ticket.error, ticket.done_at = state, reply, error, now
        # A failed IDENTIFY is reported as the connection attempt failing, not as a command.
        if state in (TicketState.FAILED, TicketState.NAKKED) and not isinstance(ticket.command, Identify):
            self._counters.commands_failed += 1
            self._last_error = error
            log.warning("%s: command %s seq %d %s: %s", self.name, ticket.command.MSG_TYPE.name, ticket.seq,
                        state.value, error)
            self._emit("command_failed", message=ticket.command, reason=error or state.value)

    def _abandon_in_flight(self, reason: str) -> None:
        ticket, self._in_flight = self._in_flight, None
        if ticket is not None:
            self._fail(ticket, reason)

    def _fail(self, ticket: CommandTicket, reason: str, report: bool = True) -> None:
        if ticket.done:
            return
        ticket.state, ticket.error, ticket.done_at = TicketState.FAILED, reason, self._now
        if report and not isinstance(ticket.command, Identify):
            self._counters.commands_failed += 1
            self._emit("command_failed", message=ticket.command, reason=reason)
