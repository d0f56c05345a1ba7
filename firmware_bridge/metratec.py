"""The host side of a Metratec HF reader (QuasarMX, QuasarLR and their ISO 15693 kin) over its ASCII protocol.

``MetratecLink`` builds on :class:`firmware_bridge.link.ReconnectingLink`, the surface every reader link shares, so
:class:`hal.firmware_reader.FirmwareReader` turns its ``inventory`` events into whole inventory cycles. It is
single-threaded and driven by its caller: ``poll(now)`` reads what the transport has, advances the state machine and
returns what happened as ``LinkEvent`` objects. It never blocks or sleeps and takes the time from the caller, so tests
run it on a virtual clock.

Sources. The protocol is Metratec's "ISO 15693 Protocol Guide for metraTec RFID Readers and Modules" (v3.6, May 2016,
firmware 3.5). Its text is not at hand here, so every command, answer and constant below is cited from the maker's own
MIT-licensed clients, which speak it: the Python SDK ``metratec-rfid`` 1.4.5 (``reader_ascii.py``,
``hf_reader_ascii.py``, ``quasar_mx.py``, ``quasar_lr.py``; the reference), the Java SDK ``rfid-sdk-java`` 4.2.1
(``MetratecReaderAscii.java``, ``iso/ISOReaderAscii.java``, ``RFIDErrorCodes.java``) and the .NET SDK
``rfid-sdk-dotnet`` (``MetratecReaderAscii.cs``, ``MetratecReaderAsciiHf.cs``). docs/metratec.md lists them.

Wire format. A command is ASCII text ending in CR (``reader_ascii.py`` ``ReaderAscii._prepare_command``). An answer is
one or more lines, each ending in CR; in end-of-frame mode (``EOF``) the last CR of an answer is followed by LF
(``MetratecReaderAscii.java`` ``setEndOfFrame``). In CRC mode (``CON``) every command and every answer line carries
`` XXXX``: a CRC-16 (polynomial 0x8408 reflected, preset 0xFFFF) over the text and the space before it, in upper-case
hex (``MetratecReaderAscii.java`` ``prepareCommand``, ``checkData``, ``getCRC``; ``MetratecReaderAscii.cs``
``ComputeCRC``, ``CheckCRC``).

Inventory. The reader drives it: after the session start the link sends ``CNR INV`` once, and the reader repeats the
inventory for ever, switching to the next antenna before each one (``SAP AUT n``: "switching always starts with the
lowest antenna port (0) ... with the start of every tag manipulation command", ``MetratecReader.java``
``setMultiplexAntennas``) and naming the antenna in each answer (``SAP ARP ON``, the antenna report). Each answer is one
frame ``UID CR ... ARP nn CR IVF nn CR LF``. Why not ask for each antenna (``SAP MAN n`` then ``INV``, as the SDKs'
``get_inventory`` does): that costs two round trips per antenna during which the reader's field is idle, and it would
tie the reader's pace to the host's loop, which on a busy table is late by tens of milliseconds; a reader that streams
keeps inventorying while the host is busy, its answers wait in the port's buffer, and every answer says which antenna
it is, so none can be misattributed. A pass is one round over antennas 0 .. n-1 (n = the highest configured channel +
1); channels not in the configuration are inventoried and ignored. With a single channel the link uses ``SAP MAN``.

States::

    disconnected --open ok--> identifying --session start done--> up (streaming CNR INV)
         ^   ^                    |   |                              |   |
         |   +-- open failed, ----+   +-- not a Metratec HF reader,  |   +-- SRT, BOD, RNW, NRF, NSS: the reader
         |       backoff 1,2,4,8,16,30 s  or it lacks what the         |       lost its settings ("reader_reset"):
         |                                configuration asks           |       the session start again, same port
         |                                ("incompatible": close,      |
         |                                backoff)                     |
         +------ no answer for 2 s, no inventory for 5 s, I/O error ("down"; reopen at once) -+

The session start, the commands in order (what each one's refusal means is in the table below)::

    BRK          stop a continuous inventory left running; BRA or NCM   (reader_ascii.py _prepare_reader_communication)
                 no answer in 0.5 s: WAK (asleep?), GMO or DNS
                 CCE: the reader is in CRC mode: BRK again with a CRC   (MetratecReaderAscii.java configureConnection)
    EOF          end-of-frame mode: OK!                                 (reader_ascii.py _enable_end_of_frame)
    REV          name, hardware and firmware revision                   (reader_ascii.py get_reader_info)
    RSN          serial number                                          (MetratecReaderAscii.cs ReadSerialNumber)
    CON          CRC mode, where the reader has it                      (MetratecReaderAscii.java setCRC)
    VBL 1        an answer to every inventory, even without tags        (MetratecReaderAscii.java setVerbosityLevel)
    HBT 1        a heartbeat every second                               (reader_ascii.py set_heartbeat)
    MOD 156      ISO 15693                                              (hf_reader_ascii.py set_mode)
    SRI SS 100   RF interface on: single subcarrier, 100 % modulation   (hf_reader_ascii.py enable_rf_interface)
    SAP PIN 4    multiplexer channels only: drive it with 4 outputs     (reader_ascii.py set_antenna_outputs)
    SAP ARP ON   antenna report (more than one channel)                 (reader_ascii.py enable_antenna_report)
    SAP AUT n    switch over antennas 0 .. n-1 (or SAP MAN c for one)   (quasar_lr.py set_antenna_multiplex)
    CNR INV      inventory for ever, antenna after antenna ("antenna    (hf_reader_ascii.py start_inventory_multi)
                 ports are chosen according to set_antenna_multiplex()");
                 no answer of its own                                   (MetratecReaderAscii.java setEndOfFrame)

Every answer the protocol has, and what the link makes of it (codes: ``RFIDErrorCodes.java``,
``MetratecReaderAscii.cs`` ``ParseErrorResponse``; the HF ones: ``hf_reader_ascii.py`` ``_data_received``)::

    answer  meaning                        during the session start              while inventorying
    OK!     done                           next command                          (unexpected: warning)
    BRA     continuous mode stopped        BRK done (later: a late answer,       -
    NCM     not in continuous mode         BRK done  ignored)                    -
    GMO     good morning (woke up)         WAK done                              -
    DNS     did not sleep                  WAK done                              -
    GN8     good night (went to sleep)     -                                     (unexpected: warning)
    HBT     heartbeat                      sign of life                          sign of life, not of inventory
    CCE     our command's CRC was wrong    CRC mode left on: speak it, command   warning (we sent nothing)
            or missing                     again; in CRC mode: command again
    UCO     unknown command                BRK: "incompatible" (not Metratec);   warning
                                           CON/VBL/HBT/RSN: log, go on without;
                                           otherwise "incompatible"
    UPA     unknown parameter              "incompatible" (optional ones: log)   warning
    NOR     number out of range            "incompatible": e.g. more antennas    warning
                                           than the reader switches
    NOS     not supported                  "incompatible": e.g. SAP PIN without  warning
                                           multiplexer outputs (optional: log)
    EDX EHX decimal/hex expected,          "incompatible" (a firmware that       warning
    WDL     wrong data length              reads our commands otherwise)
    NRF     no RF field                    -                                     "reader_reset", session again
    NSS     no standard selected           -                                     "reader_reset", session again
    RNW     RF registers not written       -                                     "reader_reset", session again
    SRT     the reader reset itself        session again                         "reader_reset", session again
    BOD     brown-out                      session again                         "reader_reset", session again
    ARH     antenna reflectivity high      -                                     "antenna_fault" TUNING for that
            (inside an inventory)                                                 antenna; CLEARED when it reads
    BOF     the reader's buffer overflowed command again                         "frames_lost", warning
    CRT URE command receive timeout,       command again                         "command_failed", warning
            UART receive error
    PLE EHF PLL error, hardware failure,   command again                         "command_failed", error log
    UER     unknown error
    CER RXE tag communication errors       -                                     counted (tag_errors), debug log:
    TOE FLE inside an inventory                                                  the other tags of it are good
    RDL TCE
    CDT TNR
    IVF     an inventory's end             (the tail of one BRK stopped:         "inventory"; one that fails its
                                           ignored)                              CRC or does not add up:
                                                                                 "frames_lost", counted
    other   not this protocol              BRK: "incompatible"; else refused     counted (unknown_type)

Anything that is not text (bytes outside 0x20..0x7E, CR, LF) while the link waits for the answer to BRK means the
device speaks another protocol: "incompatible". A session start step that gets no answer in 2 s makes the attempt
fail ("connect_failed", or "down" after the link had been up) and it is retried after the backoff.

Antennas. A Metratec HF reader addresses at most 16 antennas, numbered 0 .. 15 ("antenna port for the connected
multiplexer [0..15]", ``MetratecReader.java`` ``setAntennaPort``; ``SAP AUT`` takes 1 .. 16, ``ISOReaderAscii.java``
``setMultiplexAntennas``). A :class:`Channel` is one of them: ``"3"`` is the reader's own antenna port 3, ``"M3"`` is
channel 3 of an external multiplexer driven by the reader's outputs (``SAP PIN``). Inventory events number the table's
antennas from 0 as the index into ``channels``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from firmware_bridge.codec import FrameRejection
from firmware_bridge.link import LinkState, ReconnectingLink
from firmware_bridge.message_types import PLAIN_SERIAL, escaped
from firmware_bridge.messages import (
    AntennaFault,
    Capability,
    FaultCode,
    IdentifyReply,
    Inventory,
    InventoryFlag,
    TagEntry,
    TagTechnology,
)
from firmware_bridge.transports import Transport, TransportError

log = logging.getLogger(__name__)

DEFAULT_TCP_PORT = 10001  # quasar_mx.py QuasarMX.__init__ (port=10001)
DEFAULT_BAUDRATE = 115200  # serial_connection.py SerialConnection.__init__ (baud_rate=115200)
MAX_CHANNELS = 16  # SAP addresses antennas 0..15 (MetratecReader.java setAntennaPort)
MULTIPLEXER_OUTPUTS = 4  # SAP PIN 4: four outputs number every channel 0..15 (reader_ascii.py set_antenna_outputs)
HEARTBEAT_S = 1  # HBT interval asked of the reader, in seconds (reader_ascii.py set_heartbeat: [0, 60])

# The reader names REV gives for Metratec's ISO 15693 readers on the ASCII protocol (ReaderType.java; DMI15:
# iso/DMI15.java; UM15: hf_reader_ascii.py set_power), compared in upper case. QuasarMX and QuasarLR switch antennas;
# the others can serve one table antenna.
HF_READERS = frozenset({"QUASAR_MX", "QUASARLR", "DESKID_ISO", "DWARF15", "QR15", "DMI15", "UM15"})

ERROR_MEANINGS = {  # RFIDErrorCodes.java, MetratecReaderAscii.cs ParseErrorResponse, hf_reader_ascii.py
    "ARH": "antenna reflectivity high (antenna cable off or antenna detuned)",
    "BOD": "brown-out detected (the supply dipped; the reader restarted)",
    "BOF": "buffer overflow in the reader",
    "CCE": "communication CRC error (the reader got a command whose CRC was wrong or missing)",
    "CRT": "command receive timeout (a command arrived incomplete)",
    "DNS": "did not sleep",
    "EDX": "decimal value expected",
    "EHF": "hardware failure",
    "EHX": "hex value expected",
    "NCM": "not in continuous mode",
    "NOR": "number out of range",
    "NOS": "not supported",
    "NRF": "no RF field (the RF interface is off)",
    "NSS": "no standard selected",
    "PLE": "PLL error",
    "RNW": "RF registers not written (the RF interface lost its settings)",
    "SRT": "the reader reset itself",
    "UCO": "unknown command",
    "UER": "unknown error",
    "UPA": "unknown parameter",
    "URE": "UART receive error",
    "WDL": "wrong data length",
}
# Errors about one tag inside an inventory: the rest of the inventory is good (ISOReaderAscii.java parseInventory,
# MetratecReaderAsciiHf.cs HandleInventoryResponse; CDT and TNR: ISOReaderAscii.java sendRequest).
TAG_ERRORS = frozenset({"CER", "RXE", "TOE", "FLE", "RDL", "TCE", "CDT", "TNR", "HBE", "PDE", "TMT", "TOR", "ACE"})
_LOST_SETTINGS = frozenset({"SRT", "BOD", "RNW", "NRF", "NSS"})  # the reader must be set up again
_TRANSFER_ERRORS = frozenset({"CRT", "URE"})
_HARDWARE_ERRORS = frozenset({"PLE", "EHF", "UER"})
_STATUS_ANSWERS = frozenset({"OK!", "BRA", "NCM", "GMO", "DNS", "GN8", "HBT"})

MAX_LINE = 64  # the longest answer line is REV's 24 characters, plus a CRC
MAX_FRAME_LINES = 1024  # an inventory of every tag a table holds, and then some
_UID = re.compile(r"E0[0-9A-F]{14}")  # ISO/IEC 15693-3: 64-bit UID, most significant byte E0 first
_COUNT = re.compile(r"[0-9A-F]{2}")
_EPSILON = 1e-6


# --------------------------------------------------------------------------
# Antenna channels
# --------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Channel:
    """One antenna as the reader addresses it: ``SAP MAN number`` selects it, the antenna report names it."""

    number: int  # 0..15
    multiplexer: bool = False  # a channel of an external multiplexer on the reader's outputs (SAP PIN)

    def __str__(self) -> str:
        return f"M{self.number}" if self.multiplexer else str(self.number)


def parse_channel(text: str) -> Channel:
    """``"3"``: the reader's antenna port 3; ``"M3"``: channel 3 of a multiplexer on the reader's outputs. 0..15."""
    written = str(text).strip()
    multiplexer = written[:1] in ("M", "m")
    digits = written[1:] if multiplexer else written
    if not digits.isdigit() or int(digits) >= MAX_CHANNELS:
        raise ValueError(f"antenna channel {text!r}: expected a number 0..15 (the reader's antenna port, as SAP "
                         f"numbers it) or M0..M15 (a channel of a multiplexer on the reader's outputs)")
    return Channel(int(digits), multiplexer)


def default_channels(count: int) -> list[Channel]:
    """Table antennas 1..count on the reader's antennas 0..count-1: its own port for one, a multiplexer for more."""
    if not 1 <= count <= MAX_CHANNELS:
        raise ValueError(f"a Metratec HF reader addresses 1 to {MAX_CHANNELS} antennas (SAP 0..15), not {count}: "
                         f"put antennas {MAX_CHANNELS + 1} and up on another reader")
    if count == 1:
        return [Channel(0)]
    return [Channel(number, multiplexer=True) for number in range(count)]


def check_channels(channels: list[Channel]) -> None:
    """Raise ValueError, saying what is wrong, unless ``channels`` is a configuration one reader can serve."""
    if not channels:
        raise ValueError("a Metratec reader needs at least one antenna channel")
    if len(channels) > MAX_CHANNELS:
        raise ValueError(f"{len(channels)} antenna channels on one Metratec reader: it addresses at most "
                         f"{MAX_CHANNELS} (SAP 0..15)")
    seen: set[int] = set()
    for channel in channels:
        if channel.number in seen:
            raise ValueError(f"antenna channel {channel} is given twice: each table antenna needs its own channel")
        seen.add(channel.number)
    if len({channel.multiplexer for channel in channels}) > 1:
        raise ValueError("antenna channels mix the reader's own ports and multiplexer channels (M...): SAP numbers "
                         "both alike, so one reader uses one kind")


# --------------------------------------------------------------------------
# The wire: CRC, commands, answers
# --------------------------------------------------------------------------


def crc16(text: str) -> str:
    """The CRC the protocol appends in CRC mode, as four upper-case hex digits (MetratecReaderAscii.java getCRC)."""
    crc = 0xFFFF
    for byte in text.encode("ascii"):
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return f"{crc:04X}"


def with_crc(text: str) -> str:
    """``text`` and its CRC, as a command or an answer line carries it in CRC mode: the CRC covers the space too."""
    return f"{text} {crc16(text + ' ')}"


def strip_crc(line: str) -> str | None:
    """The text of a line carrying a valid CRC, else None."""
    if len(line) < 5 or line[-5] != " " or crc16(line[:-4]) != line[-4:]:
        return None
    return line[:-5]


def encode_command(text: str, crc: bool) -> bytes:
    return ((with_crc(text) if crc else text) + "\r").encode("ascii")


class MalformedAnswer(ValueError):
    """An answer that does not parse; ``counter`` names the LinkStats counter it belongs to."""

    def __init__(self, reason: str, counter: str = "malformed"):
        super().__init__(reason)
        self.counter = counter


@dataclass(frozen=True)
class InventoryAnswer:
    """One inventory's answer: ``UID CR ... [ARP nn CR] IVF nn`` (hf_reader_ascii.py HfReaderAscii._parse_inventory)."""

    uids: tuple[bytes, ...]
    antenna: int | None  # from the antenna report; None when the report is off
    tag_errors: tuple[str, ...] = ()  # e.g. CER: one tag's answer was damaged
    antenna_error: str | None = None  # ARH


def is_inventory(lines: list[str]) -> bool:
    return bool(lines) and lines[-1].startswith("IVF")


def parse_inventory(lines: list[str]) -> InventoryAnswer:
    """Parse an inventory's lines (CRCs already removed); raise MalformedAnswer when they do not fit.

    The count after IVF is two characters (``data[-6:-3] == 'IVF'`` in hf_reader_ascii.py ``_data_received``); whether
    the reader writes it in decimal or hex is not known here, so it must match the UIDs read either way.
    """
    *body, last = lines
    if not last.startswith("IVF ") or not _COUNT.fullmatch(last[4:]):
        raise MalformedAnswer(f"inventory end {last!r} is not 'IVF nn'")
    uids: list[bytes] = []
    antenna = None
    tag_errors: list[str] = []
    antenna_error = None
    for line in body:
        if line.startswith("ARP "):
            if antenna is not None or not line[4:].strip().isdigit():
                raise MalformedAnswer(f"antenna report {line!r} is not 'ARP nn'")
            antenna = int(line[4:])
        elif _UID.fullmatch(line):
            uids.append(bytes.fromhex(line))
        elif line in TAG_ERRORS:
            tag_errors.append(line)
        elif line == "ARH":
            antenna_error = line
        else:
            raise MalformedAnswer(f"inventory line {line!r} is neither an ISO 15693 UID nor a report", "unknown_type")
    count = last[4:]
    # 100 tags and more do not fit two decimal digits: what the reader writes then is not known here.
    if count not in (f"{len(uids):02d}", f"{len(uids):02X}") and len(uids) < 100:
        raise MalformedAnswer(f"inventory says {last!r} but lists {len(uids)} UID(s)")
    return InventoryAnswer(tuple(uids), antenna, tuple(tag_errors), antenna_error)


@dataclass(frozen=True)
class Revision:
    """REV's answer: the name padded to 16 characters, 4 digits hardware, 4 digits firmware revision
    ("QUASAR_MX       02000307"; reader_ascii.py get_reader_info, MetratecReaderAscii.java getReaderType)."""

    name: str
    hardware: str
    firmware: str

    @property
    def firmware_version(self) -> tuple[int, int]:
        digits = self.firmware[1:] if self.firmware[0] in "bc" else self.firmware  # beta, release candidate
        return int(digits[:-2]), int(digits[-2:])


def parse_revision(text: str) -> Revision:
    name, hardware, firmware = text[:-8].strip(), text[-8:-4], text[-4:]
    if (not name or not hardware.isdigit() or not (firmware.isdigit() or (firmware[0] in "bc" and firmware[1:].isdigit()))
            or not PLAIN_SERIAL.fullmatch(name)):
        raise MalformedAnswer(f"REV answered {escaped(text)!r}, not a name and 8 digits of revision")
    return Revision(name, hardware, firmware)


# Lines a reader sends as it restarts, in its default modes: no LF follows them even if the link had asked for one.
_RESTART_LINES = frozenset({"SRT", "BOD"})


class FrameSplitter:
    """Bytes from the reader to frames, each a list of lines (CR removed). Before end-of-frame mode every line is a
    frame; in it a frame ends with the LF after its last CR, except a restart announcement (``SRT``, ``BOD``), which
    is a frame of its own: the reader that sends it has left end-of-frame mode. ``feed`` never raises."""

    def __init__(self) -> None:
        self.eof = False
        self._line = bytearray()
        self._lines: list[str] = []
        self._skipping = False  # inside an overlong line: until its CR
        self._binary = False  # the current line holds a byte that is not text
        self._offset = 0  # bytes fed before the current one
        self._frame_start = 0
        self.rejections: list[FrameRejection] = []  # since the last take_rejections()

    def feed(self, data: bytes) -> list[list[str]]:
        frames: list[list[str]] = []
        for index, byte in enumerate(data):
            position = self._offset + index
            if byte == 0x0D:
                self._end_line(position, frames)
            elif byte == 0x0A:
                if self.eof and self._lines:
                    frames.append(self._lines)
                    self._lines = []
                self._frame_start = position + 1
            elif self._skipping:
                continue
            else:
                if not 0x20 <= byte <= 0x7E:
                    self._binary = True
                if len(self._line) >= MAX_LINE:
                    self._reject("oversize", f"a line longer than {MAX_LINE} characters", position)
                    self._skipping = True
                    self._line.clear()
                    continue
                self._line.append(byte)
        self._offset += len(data)
        if self._binary:  # a device that speaks binary may never send a CR
            self._reject("malformed", "bytes that are not text", self._offset)
            self._line.clear()
            self._binary = False
        return frames

    def take_rejections(self) -> list[FrameRejection]:
        rejections, self.rejections = self.rejections, []
        return rejections

    def _end_line(self, position: int, frames: list[list[str]]) -> None:
        if self._skipping:
            self._skipping = False
            self._frame_start = position + 1
            return
        if self._binary:
            self._reject("malformed", "bytes that are not text", position)
            self._binary = False
            self._line.clear()
            return
        line = self._line.decode("ascii")
        self._line.clear()
        if not line:
            return
        if not self.eof or (not self._lines and line in _RESTART_LINES):
            frames.append([line])
            self._frame_start = position + 1
            return
        if len(self._lines) >= MAX_FRAME_LINES:
            self._reject("oversize", f"an answer of more than {MAX_FRAME_LINES} lines", position)
            self._lines = []
        self._lines.append(line)

    def _reject(self, counter: str, reason: str, position: int) -> None:
        self.rejections.append(FrameRejection(counter, reason, self._frame_start, max(0, position - self._frame_start)))
        self._frame_start = position + 1


# --------------------------------------------------------------------------
# The link
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class MetratecTiming:
    """Timing rules; tests may shorten them, the daemon uses the defaults."""

    answer_timeout_s: float = 2.0  # a session start command unanswered this long: the attempt fails
    # No inventory answer for this long while up: down. Longer than answer_timeout_s because one antenna under a pot
    # of chips is one long inventory: about 10 ms a tag (100 tags/s, iso/QuasarMX.java), so 5 s is ~490 tags.
    inventory_timeout_s: float = 5.0
    wake_after_s: float = 0.5  # BRK unanswered this long: the reader may sleep, send WAK (reader_ascii.py)
    backoff_s: tuple[float, ...] = (1, 2, 4, 8, 16, 30)  # waits between failed connection attempts
    max_reads_per_poll: int = 64  # bound the work of one poll on a flooding device


@dataclass(frozen=True)
class _Command:
    text: str
    purpose: str  # for the log: what it is for
    kind: str = "ok"  # ok, break, revision, serial, crc
    optional: bool = False


class MetratecLink(ReconnectingLink):
    """One Metratec reader. Call ``poll(now)`` often (every few ms); it never blocks."""

    paced_by_host = False  # a continuous inventory: the reader goes on by itself and reports as it goes

    def __init__(
        self,
        transport_factory: Callable[[], Transport],
        *,
        name: str,
        channels: list[Channel],
        timing: MetratecTiming = MetratecTiming(),
    ):
        check_channels(channels)
        super().__init__(transport_factory, name=name, backoff_s=timing.backoff_s,
                         max_reads_per_poll=timing.max_reads_per_poll, logger=log)
        self.channels = list(channels)
        self.timing = timing
        self._index_of = {channel.number: index for index, channel in enumerate(self.channels)}
        # SAP AUT scans 0..n-1; the pass ends with the highest channel.
        self._scanned = max(channel.number for channel in self.channels) + 1
        # The antennas of one pass, in the reader's order: SAP AUT starts at 0 (MetratecReader.java).
        self._order = [self.channels[0].number] if len(self.channels) == 1 else list(range(self._scanned))
        self._multiplexed = any(channel.multiplexer for channel in self.channels)
        self.revision: Revision | None = None  # what REV said, from the latest session start
        self.tag_errors: Counter = Counter()  # tag communication errors inside inventories, by code
        self._heartbeats = 0
        self._splitter = FrameSplitter()
        self._crc = False  # CRC mode: commands and answers carry a CRC
        self._script: list[_Command] = []
        self._step = 0
        self._sent_at = 0.0  # when the current session command went out
        self._woken = False  # WAK sent during this BRK step
        self._repeats = 0  # of the current session command
        self._serial = ""
        self._last_answer_at = 0.0  # the latest inventory (while up) or answer (while starting)
        self._last_heartbeat_at: float | None = None
        self._pass = 0
        self._last_antenna: int | None = None
        self._first_pass = True
        self._faulted: set[int] = set()  # table antennas (0-based) reporting ARH

    # ---- public ---------------------------------------------------------------------------------------------

    @property
    def crc_mode(self) -> bool:
        return self._crc

    @property
    def heartbeats(self) -> int:
        return self._heartbeats

    def close(self) -> None:
        """Stop the reader's inventory and close the port for good (daemon shutdown)."""
        if self._transport is not None and self._state is LinkState.UP:
            try:
                self._write("BRK")  # the reader would otherwise inventory on into a closed port
            except TransportError:
                pass
        super().close()

    # ---- connecting -----------------------------------------------------------------------------------------

    def _connected(self, now: float) -> None:
        log.info("%s: connected over %s, starting the session", self.name, self._transport_description)
        self._start_session(now)

    def _start_session(self, now: float) -> None:
        self._state = LinkState.IDENTIFYING
        self.identity = None
        self._splitter = FrameSplitter()  # whatever was buffered belongs to an earlier session
        self._crc = False
        self._script = self._session_script()
        self._step = 0
        self._last_answer_at = now
        self._send_step(now)

    def _session_script(self) -> list[_Command]:
        script = [
            _Command("BRK", "stopping a continuous inventory", kind="break"),
            _Command("EOF", "end-of-frame mode", kind="eof"),
            _Command("REV", "its revision", kind="revision"),
            _Command("RSN", "its serial number", kind="serial", optional=True),
            _Command("CON", "CRC mode", kind="crc", optional=True),
            _Command("VBL 1", "an answer to every inventory", optional=True),
            _Command(f"HBT {HEARTBEAT_S}", "heartbeats", optional=True),
            _Command("MOD 156", "ISO 15693 mode"),
            _Command("SRI SS 100", "its RF interface on"),
        ]
        if self._multiplexed:
            script.append(_Command(f"SAP PIN {MULTIPLEXER_OUTPUTS}", "driving a multiplexer from its outputs"))
        if len(self.channels) > 1:
            script.append(_Command("SAP ARP ON", "the antenna report"))
            script.append(_Command(f"SAP AUT {self._scanned}", f"switching over antennas 0 to {self._scanned - 1}"))
        else:
            script.append(_Command(f"SAP MAN {self.channels[0].number}", f"antenna {self.channels[0]}",
                                   kind="single"))
        return script

    def _send_step(self, now: float) -> None:
        command = self._script[self._step]
        self._sent_at = now
        self._woken = False
        self._repeats = 0
        self._write(command.text)
        if command.kind == "crc":
            self._crc = True  # the answer to CON carries a CRC (MetratecReaderAscii.java setCRC)

    def _session_done(self, now: float) -> None:
        revision = self.revision
        assert revision is not None, "the session asks for the revision first"
        major, minor = revision.firmware_version
        identity = IdentifyReply(
            0, 0, 0, major, minor, 0, self._serial, len(self.channels), TagTechnology.ISO15693, Capability(0))
        self._pass = (self._pass + 1) & 0xFFFFFFFF
        self._last_antenna = None
        self._first_pass = True
        self._last_answer_at = now
        self._last_heartbeat_at = None
        log.info("%s: up: %s serial %s, hardware %s, firmware %s, CRC mode %s, %d antenna(s): %s", self.name,
                 revision.name, self._serial, revision.hardware, revision.firmware, "on" if self._crc else "off",
                 len(self.channels), " ".join(str(channel) for channel in self.channels))
        self._went_up(identity)
        self._emit("inventory_requested")  # the first pass after CNR INV is whole: it is marked REQUESTED
        self._write("CNR INV")

    # ---- going down -----------------------------------------------------------------------------------------

    def _poll_connected(self, now: float) -> None:
        self._receive(now)
        if self._transport is not None:
            self._supervise(now)

    def _handshake_failure(self, reason: str) -> tuple[str, str]:
        return "connect_failed", f"session start failed: {reason}"

    def _supervise(self, now: float) -> None:
        silent = now - self._last_answer_at
        if self._state is LinkState.UP:
            if silent >= self.timing.inventory_timeout_s - _EPSILON:
                alive = self._last_heartbeat_at is not None and self._last_heartbeat_at > self._last_answer_at
                self._go_down(now, f"no inventory for {silent:.1f} s"
                                   + (" (the reader still sends heartbeats)" if alive else ""))
            return
        command = self._script[self._step]
        waited = now - self._sent_at
        if command.kind == "break" and not self._woken and waited >= self.timing.wake_after_s - _EPSILON:
            self._woken = True  # asleep (STB) readers answer nothing but WAK (reader_ascii.py)
            self._sent_at = now
            self._write("WAK")
            return
        if waited >= self.timing.answer_timeout_s - _EPSILON:
            what = "BRK or WAK" if command.kind == "break" else command.text
            self._go_down(now, f"no answer to {what} within {self.timing.answer_timeout_s:g} s")

    # ---- receiving ------------------------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        data = encode_command(text, self._crc)
        assert self._transport is not None, "a command is written only while a transport is open"
        self._transport.write(data)
        self._counters.bytes_sent += len(data)

    def _take_in(self, now: float, data: bytes) -> None:
        splitter = self._splitter
        frames = splitter.feed(data)
        binary = False
        for rejection in splitter.take_rejections():
            self._rejected(rejection.counter, rejection.reason, rejection)
            binary = binary or rejection.reason == "bytes that are not text"
        if binary and self._state is LinkState.IDENTIFYING and self._script[self._step].kind == "break":
            self._refuse(now, f"{self._transport_description} answers with bytes that are not text: not a Metratec "
                              f"reader on the ASCII protocol")
            return
        for frame in frames:
            if self._transport is None or splitter is not self._splitter:
                return  # an earlier frame closed the connection or restarted the session
            self._frame(now, frame)

    def _rejected(self, counter: str, reason: str, rejection: FrameRejection | None = None) -> None:
        answers = self._counters.decoder_totals  # no decoder of its own: the answers are counted here
        setattr(answers, counter, getattr(answers, counter) + 1)
        if rejection is None:
            rejection = FrameRejection(counter, reason, self._counters.bytes_received, 0)
        self._counters.decoder_totals.bytes_discarded += rejection.encoded_length
        self._last_rejection = rejection
        log.debug("%s: answer rejected (%s): %s", self.name, counter, reason)

    def _frame(self, now: float, raw: list[str]) -> None:
        lines = []
        for line in raw:
            text = strip_crc(line)
            if not self._crc:
                # A reader still in CRC mode (e.g. after RNW) signs its answers: read them all the same.
                lines.append(line if text is None else text)
                continue
            if text is None and line in ERROR_MEANINGS:
                text = line  # an error answer may come without a CRC (the SDKs test CCE before the CRC)
            if text is None:
                self._rejected("crc_errors", f"line {escaped(line)!r} fails its CRC")
                if self._state is LinkState.UP and any(part.startswith("IVF") for part in raw):
                    self._inventory_lost("an inventory failed its CRC")
                return
            lines.append(text)
        if self._state is LinkState.UP:
            self._streaming(now, lines)
        else:
            self._session_answer(now, lines)

    # ---- the session start ----------------------------------------------------------------------------------

    def _session_answer(self, now: float, lines: list[str]) -> None:
        first = lines[0]
        if first == "HBT":
            self._heartbeats += 1
            self._counters.decoder_totals.frames_ok += 1
            return
        if is_inventory(lines) or _UID.fullmatch(first) or first.startswith(("ARP ", "IVF ")) or first in TAG_ERRORS:
            self._counters.stale_replies += 1  # the tail of an inventory that BRK stopped
            return
        if first in ("SRT", "BOD"):
            self._counters.reader_resets += 1
            log.warning("%s: %s during the session start; starting again", self.name, ERROR_MEANINGS[first])
            self._start_session(now)
            return
        command = self._script[self._step]
        self._counters.decoder_totals.frames_ok += 1
        if command.kind != "break" and first in ("BRA", "NCM", "GMO", "DNS"):
            self._counters.stale_replies += 1  # BRK and WAK both answered: the second answer is late
            return
        if first == "CCE" and not self._crc:
            # Left in CRC mode by an earlier session: speak it, and the command again with its CRC (the Java and .NET
            # SDKs' configureConnection / PrepareReader; the Python SDK sends COF 4F5E instead, which a reader busy
            # with a continuous inventory may not hear).
            log.info("%s: the reader is in CRC mode (it answered CCE); speaking it", self.name)
            self._crc = True
            self._counters.retransmits += 1
            self._sent_at = now
            self._write("WAK" if command.kind == "break" and self._woken else command.text)
            return
        if first in ("CCE", "BOF") or first in _TRANSFER_ERRORS or first in _HARDWARE_ERRORS:
            self._repeat(now, command, first)
            return
        if command.kind == "break":
            self._break_answer(now, first)
        elif command.kind == "revision":
            self._revision_answer(now, first)
        elif command.kind == "serial":
            self._serial_answer(now, first)
        elif first == "OK!":
            if command.kind == "eof":
                self._splitter.eof = True  # from the next answer on (a refusal of EOF would have come without LF)
            self._next_step(now)
        else:
            self._refused_step(now, command, first)

    def _break_answer(self, now: float, answer: str) -> None:
        if answer in ("BRA", "NCM", "GMO", "DNS"):
            self._next_step(now)
        elif answer == "UCO":  # MetratecReaderAscii.java configureConnection: "device is not a metraTec rfid reader"
            self._refuse(now, f"BRK answered UCO ({ERROR_MEANINGS['UCO']}): not a Metratec HF reader")
        elif answer in ERROR_MEANINGS or answer in _STATUS_ANSWERS:
            self._repeat(now, self._script[self._step], answer)
        else:
            self._refuse(now, f"BRK answered {escaped(answer)!r}: not a Metratec reader on the ASCII protocol")

    def _refused_step(self, now: float, command: _Command, answer: str) -> None:
        code = answer[:3]
        if command.kind == "single" and code == "NOS" and self.channels[0] == Channel(0):
            self._next_step(now)  # a reader with one antenna and no switching: antenna 0 is the one
            return
        if command.kind == "crc" and code in ERROR_MEANINGS:
            self._crc = False  # no CRC mode on this reader: its refusal came without a CRC
        if code in ERROR_MEANINGS and command.optional:
            log.info("%s: the reader has no %s: %s answered %s (%s); going on without", self.name, command.purpose,
                     command.text, code, ERROR_MEANINGS[code])
            self._next_step(now)
            return
        meaning = f" ({ERROR_MEANINGS[code]})" if code in ERROR_MEANINGS else ""
        self._refuse(now, f"the reader refused {command.purpose}: {command.text} answered "
                          f"{escaped(answer)!r}{meaning}")

    def _repeat(self, now: float, command: _Command, code: str) -> None:
        meaning = ERROR_MEANINGS.get(code, "unexpected")
        if self._repeats >= 2:
            self._go_down(now, f"{command.text} answered {code} ({meaning}) three times")
            return
        log.warning("%s: %s answered %s (%s); sending it again", self.name, command.text, code, meaning)
        self._repeats += 1
        self._counters.retransmits += 1
        self._sent_at = now
        self._write(command.text)

    def _revision_answer(self, now: float, answer: str) -> None:
        try:
            revision = parse_revision(answer)
        except MalformedAnswer as exc:
            self._refuse(now, f"{exc}: not a Metratec reader on the ASCII protocol")
            return
        if revision.name.upper() not in HF_READERS:
            self._refuse(now, f"the reader is a {revision.name} (REV {answer.strip()}), not a Metratec HF "
                              f"(ISO 15693) reader")
            return
        if len(self.channels) > 1 and revision.name.upper() not in ("QUASAR_MX", "QUASARLR"):
            log.warning("%s: a %s may not switch antennas; %d channels are configured", self.name, revision.name,
                        len(self.channels))
        self.revision = revision
        self._next_step(now)

    def _serial_answer(self, now: float, answer: str) -> None:
        if answer[:3] in ERROR_MEANINGS and len(answer) == 3:
            self._serial = "unknown"
            log.info("%s: the reader does not give its serial number (RSN answered %s)", self.name, answer)
        elif not PLAIN_SERIAL.fullmatch(answer):
            self._refuse(now, f"reader serial '{escaped(answer)}' is refused: a serial may hold only letters, digits, "
                              f"space and . _ : / + -")
            return
        else:
            self._serial = answer
        self._next_step(now)

    def _next_step(self, now: float) -> None:
        self._step += 1
        if self._step < len(self._script):
            self._send_step(now)
        else:
            self._session_done(now)

    # ---- inventorying ---------------------------------------------------------------------------------------

    def _streaming(self, now: float, lines: list[str]) -> None:
        if is_inventory(lines):
            try:
                answer = parse_inventory(lines)
            except MalformedAnswer as exc:
                self._rejected(exc.counter, str(exc))
                self._inventory_lost(str(exc))
                return
            self._counters.decoder_totals.frames_ok += 1
            self._inventory(now, answer)
            return
        first = lines[0] if len(lines) == 1 else ""
        if first == "HBT":
            self._counters.decoder_totals.frames_ok += 1
            self._heartbeats += 1
            self._last_heartbeat_at = now
            return
        code = first[:3] if len(first) == 3 else ""
        if code in _LOST_SETTINGS:
            self._counters.decoder_totals.frames_ok += 1
            self._settings_lost(now, code)
        elif code == "BOF":
            self._counters.decoder_totals.frames_ok += 1
            log.warning("%s: the reader reports BOF (%s): inventory answers were lost", self.name,
                        ERROR_MEANINGS[code])
            self._lost(1, f"BOF: {ERROR_MEANINGS[code]}")
        elif code in _TRANSFER_ERRORS or code in _HARDWARE_ERRORS:
            self._counters.decoder_totals.frames_ok += 1
            self._counters.commands_failed += 1
            reason = f"the reader reports {code} ({ERROR_MEANINGS[code]})"
            self._last_error = reason
            (log.error if code in _HARDWARE_ERRORS else log.warning)("%s: %s", self.name, reason)
            self._emit("command_failed", reason=reason)
        elif code in ERROR_MEANINGS or first in _STATUS_ANSWERS:
            self._counters.decoder_totals.frames_ok += 1
            self._counters.stale_replies += 1
            meaning = f" ({ERROR_MEANINGS[code]})" if code in ERROR_MEANINGS else ""
            log.warning("%s: unexpected answer %s%s while inventorying", self.name, first, meaning)
        else:
            self._rejected("unknown_type", f"answer {escaped(' | '.join(lines))!r} is not one this protocol has")

    def _settings_lost(self, now: float, code: str) -> None:
        self._counters.reader_resets += 1
        reason = f"{code}: {ERROR_MEANINGS[code]}"
        log.warning("%s: %s; setting the reader up again", self.name, reason)
        self._emit("reader_reset", reason=reason)
        self._start_session(now)

    def _inventory_lost(self, reason: str) -> None:
        """An inventory answer was refused: it was the one expected next, so the next one is not a second loss."""
        self._lost(1, reason)
        last = self._last_antenna
        if last is not None:
            expected = self._following(last)
            if expected <= last:
                self._next_pass()
            self._last_antenna = expected

    def _next_pass(self) -> None:
        self._pass = (self._pass + 1) & 0xFFFFFFFF
        self._first_pass = False

    def _lost(self, count: int, reason: str) -> None:
        self._counters.frames_lost += count
        if self._state is LinkState.UP:
            self._emit("frames_lost", count=count, reason=reason)

    def _inventory(self, now: float, answer: InventoryAnswer) -> None:
        self._last_answer_at = now
        for code in answer.tag_errors:
            self.tag_errors[code] += 1
            log.debug("%s: tag error %s in an inventory", self.name, code)
        order = self._order
        number = answer.antenna if answer.antenna is not None else (order[0] if len(order) == 1 else None)
        if number not in order:
            self._rejected("malformed", f"an inventory of antenna {number}, which this reader does not scan")
            self._lost(1, "inventory of an unexpected antenna")
            return
        last = self._last_antenna
        if last is None and number != order[0]:
            return  # a pass that began before CNR INV was sent: wait for the start of one
        if last is not None:
            expected = self._following(last)
            if number != expected:  # antennas were skipped: their answers were lost
                skipped = (order.index(number) - order.index(expected)) % len(order) or len(order)
                self._lost(skipped, f"inventories of {skipped} antenna(s) missing")
            if number <= last:
                self._next_pass()
        self._last_antenna = number
        index = self._index_of.get(number)
        if index is None:
            return  # scanned on the way, not a table antenna
        if answer.antenna_error is not None:
            if index not in self._faulted:
                self._faulted.add(index)
                log.warning("%s: antenna %s (table antenna %d): %s", self.name, self.channels[index], index + 1,
                            ERROR_MEANINGS["ARH"])
            self._emit("antenna_fault", message=AntennaFault(self._take_seq(), index, FaultCode.TUNING, 0))
            return
        if index in self._faulted:
            self._faulted.discard(index)
            log.info("%s: antenna %s reads again", self.name, self.channels[index])
            self._emit("antenna_fault", message=AntennaFault(self._take_seq(), index, FaultCode.CLEARED, 0))
        flags = InventoryFlag(0)
        if self._first_pass:
            flags |= InventoryFlag.REQUESTED
        if number == order[-1]:
            flags |= InventoryFlag.CYCLE_END
        entries = tuple(TagEntry(uid, 1, None) for uid in dict.fromkeys(answer.uids))
        self._emit("inventory", message=Inventory(self._take_seq(), index, self._pass, flags, entries))

    def _following(self, number: int) -> int:
        order = self._order
        return order[(order.index(number) + 1) % len(order)]
