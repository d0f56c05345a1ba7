"""Registration tools for technicians: a deck's card tags into the table configuration, chip tags into the
chip registry, read on one antenna of the table's reader (docs/registration.md).

``rfid-table register-deck``: the 52 cards are placed one at a time, in the announced order (2s 3s … As,
2h … Ah, 2d … Ad, 2c … Ac); each new tag becomes the card announced. Tags registered already (in this deck,
in another deck of the configuration, or as a chip) are refused, and so is a stack: several new tags at once
cannot be told apart. The deck is written only when it is complete, as a ``[decks.ID]`` table appended to
the configuration (or replacing that table, with ``--replace``); the rest of the file is kept byte for byte,
and the result is validated before it replaces the file.

``rfid-table register-chips``: every new tag read is registered with the denomination given for the batch
(stacks are fine: all chips of a batch are worth the same), or a manufacturer's list is imported; the chip
registry (``rfid_table.config.registry``) is rewritten at the end.

Tags are read through the HAL exactly as the daemon reads them: the configured reader's backend (``serial``
or ``usb`` over the firmware protocol), one inventory cycle at a time. For a ``sim`` reader, ``--simulate``
lets a virtual technician place new tags on a simulated field (``rfid_table.devtools.register_sim``, handed in by
the command line).

Presence on the registration antenna is debounced with the table's own settings (``[hal.cards]``,
``[hal.chips]``): a tag is on the antenna after that many reads in a row and gone after that long without
one.
"""

from __future__ import annotations

import os
import random
import re
import select
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from controller.cards import FULL_DECK
from hal.reader_backend import ReaderBackend
from hal.readers import SimulatedReader, open_reader
from rfid_table.config.checker import TOML_HEADER, ConfigError, Problem, split_key
from rfid_table.config.table import EX_CONFIG, TableConfig, load_config
from rfid_table.config.registry import (
    ChipRegistry,
    chip_list,
    load_chip_registry,
    read_deck_list,
    write_atomically,
    write_chip_registry,
)

EX_ABORTED = 130  # the shell's code for a command ended by Ctrl-C
EX_CANTCREAT = 73  # sysexits.h: the file cannot be written
DECK_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SETTLE_CYCLES = 2  # cycles after a new tag counts as present before it is taken: another one may join it
STALL_S = 5.0  # a stack registration that stops short this long names the cards still unread
POLL_S = 0.01  # the longest wait between two polls of a firmware reader
WAITING_HINT_S = 3.0  # a reader not up this long after the start: say why
DECK_SIZE = len(FULL_DECK)
SUIT_NAMES = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}


class Abort(Exception):
    """The registration cannot go on; the message says why. Nothing has been written."""

    def __init__(self, message: str, code: int = EX_CONFIG):
        super().__init__(message)
        self.code = code


# ---- what is on the registration antenna --------------------------------------------------------------------


@dataclass
class _Seen:
    last_cycle: int
    last_t: float
    hits: int = 1  # reads in consecutive cycles
    present: bool = False


class AntennaWatch:
    """The tags on one antenna, from raw inventory cycles.

    A tag *arrives* after ``present_after_cycles`` reads in a row and *leaves* after ``absent_after_s``
    without a read (the table's debouncing). ``seen`` holds every tag read lately, arrived or not yet.
    """

    def __init__(self, present_after_cycles: int, absent_after_s: float):
        self.present_after_cycles = present_after_cycles
        self.absent_after_s = absent_after_s
        self.seen: dict[str, _Seen] = {}

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> tuple[list[str], list[str]]:
        """One inventory cycle's reads on the antenna → (tags arrived, tags left)."""
        read = set(uids)
        arrived: list[str] = []
        left: list[str] = []
        for uid in sorted(read):
            state = self.seen.get(uid)
            if state is None:
                state = self.seen[uid] = _Seen(cycle, t)
            else:
                state.hits = state.hits + 1 if state.last_cycle == cycle - 1 else 1
                state.last_cycle, state.last_t = cycle, t
            if not state.present and state.hits >= self.present_after_cycles:
                state.present = True
                arrived.append(uid)
        for uid, state in list(self.seen.items()):
            if uid not in read and t - state.last_t >= self.absent_after_s:
                del self.seen[uid]
                if state.present:
                    left.append(uid)
        return arrived, left

    def present(self, uid: str) -> bool:
        state = self.seen.get(uid)
        return state is not None and state.present


# ---- tags registered already ---------------------------------------------------------------------------------

Known = dict[str, tuple[str, str]]  # tag → (what it is, its group): ("card Kd of deck 'A'", "cards of deck 'A'")
REFUSED_ONE_BY_ONE = 3  # more tags refused at once are summed up in one line


def known_tags(decks: dict[str, dict[str, str]], registry: ChipRegistry | None = None) -> Known:
    """The tags that may not be registered again: the configuration's cards and the registry's chips."""
    known: Known = {uid.upper(): (f"card {card} of deck {deck_id!r}", f"cards of deck {deck_id!r}")
                    for deck_id, cards in decks.items() for uid, card in cards.items()}
    for set_id, chips in (registry.sets if registry is not None else {}).items():
        for uid, value in chips.items():
            known.setdefault(uid.upper(), (f"a {value} chip of set {set_id!r}", f"chips of set {set_id!r}"))
    return known


def refuse(uids: list[str], known: Known, say: Callable[[str], None], hint: str = "") -> None:
    """Tell the technician that these tags, just put on the antenna, are registered already."""
    hint = f" {hint}" if hint else ""
    if len(uids) <= REFUSED_ONE_BY_ONE:
        for uid in uids:
            say(f"     !  refused: tag {uid} is registered already, as {known[uid][0]}: take it off.{hint}")
        return
    groups: dict[str, int] = {}
    for uid in uids:
        groups[known[uid][1]] = groups.get(known[uid][1], 0) + 1
    say(f"     !  refused: {len(uids)} tags registered already ("
        + ", ".join(f"{count} {group}" for group, count in groups.items()) + f"): take them off.{hint}")


# ---- the deck ----------------------------------------------------------------------------------------------


class DeckSession:
    """Registering one deck: new tags become the announced cards, one at a time.

    ``known``: tags registered elsewhere (:func:`known_tags`); they are refused. ``say`` prints a line for the
    technician.
    """

    def __init__(self, deck_id: str, known: Known, watch: AntennaWatch, say: Callable[[str], None]):
        self.deck_id = deck_id
        self.known = known
        self.watch = watch
        self.say = say
        self.uid_of: dict[str, str] = {}  # card → tag, in the order registered
        self.card_of: dict[str, str] = {}  # tag → card
        self.ignored: set[str] = set()  # not to be taken until they leave the antenna (a stack, an undone card)
        self.stack: set[str] = set()  # the refused stack's tags still on the antenna
        self._batch: set[str] = set()  # new tags read since _batch_start
        self._batch_start: int | None = None

    @property
    def done(self) -> bool:
        return len(self.uid_of) == DECK_SIZE

    @property
    def expected(self) -> str | None:
        """The card to place next."""
        return FULL_DECK[len(self.uid_of)] if not self.done else None

    def start(self) -> None:
        self.say(f"{0:2d}/{DECK_SIZE}  place {self.expected}")

    def _new(self, uid: str) -> bool:
        return uid not in self.card_of and uid not in self.known and uid not in self.ignored

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> None:
        uids = set(uids)
        arrived, _left = self.watch.feed(cycle, t, uids)
        # Gone from the antenna, whether they had counted as arrived or not (a stack read in turns may never
        # have given a tag the reads in a row it takes).
        self.ignored &= self.watch.seen.keys()
        if self.stack:
            self.stack &= self.watch.seen.keys()
            if not self.stack:
                self.say(f"        the refused tags are off the antenna: place {self.expected}")
        back = [uid for uid in arrived if uid in self.card_of]  # taken off and put back
        if len(back) > REFUSED_ONE_BY_ONE:
            self.say(f"     !  {len(back)} cards of this deck, registered already, are back on the antenna: leave "
                     f"them there, and place {self.expected}")
        for uid in back if len(back) <= REFUSED_ONE_BY_ONE else ():
            self.say(f"     !  tag {uid} is {self.card_of[uid]} of this deck already: leave it there, and "
                     f"place {self.expected}")
        refuse([uid for uid in arrived if uid in self.known], self.known, self.say, f"Place {self.expected}")
        new = {uid for uid in uids if self._new(uid)}
        if self.stack:
            # A stack is read in turns when it is larger than what the antenna reads per cycle: whatever new
            # shows up before the whole stack has gone may belong to it.
            for uid in sorted(new):
                self.stack.add(uid)
                self.ignored.add(uid)
                self.say(f"     !  tag {uid} is one more of the refused stack ({len(self.stack)} tags on the "
                         "antenna): take them all off")
            return
        if new and self._batch_start is None:
            self._batch_start = cycle
        self._batch |= new
        self._batch = {uid for uid in self._batch if uid in self.watch.seen}  # a stray read that went away
        if not self._batch:
            self._batch_start = None
            return
        if cycle - self._batch_start < self.watch.present_after_cycles - 1 + SETTLE_CYCLES:
            return  # give the others of a stack time to be read
        if len(self._batch) > 1:
            self.stack, self.ignored = set(self._batch), self.ignored | self._batch
            self.say(f"     !  refused: {len(self._batch)} new tags at once. Cards are registered one at a time, "
                     f"in order: take them all off the antenna, then place {self.expected} alone")
            self._batch, self._batch_start = set(), None
            return
        (uid,) = self._batch
        if self.watch.present(uid):
            self._batch, self._batch_start = set(), None
            self._take(uid)

    def _take(self, uid: str) -> None:
        card = self.expected
        self.uid_of[card] = uid
        self.card_of[uid] = card
        following = self.expected
        self.say(f"{len(self.uid_of):2d}/{DECK_SIZE}  {card} = {uid}   "
                 + (f"place {following}" if following else "the deck is complete"))

    def command(self, line: str) -> None:
        word = line.strip().lower()
        if not word:
            return
        if word in ("u", "undo"):
            if not self.uid_of:
                self.say("        nothing to undo")
                return
            card, uid = self.uid_of.popitem()
            del self.card_of[uid]
            if uid in self.watch.seen:
                self.ignored.add(uid)  # it lies on the antenna: not to be taken again until it has left
            self.say(f"{len(self.uid_of):2d}/{DECK_SIZE}  undone: {card} (tag {uid}); take that card off the "
                     f"antenna, then place {card}")
            return
        self.say(f"        '{line.strip()}'? Type 'undo' and Enter to take back the last card; Ctrl-C aborts")


class StackSession:
    """Registering a deck from its manufacturer's list (``--from-file``): the list says which tag is which card,
    so the deck may be placed as a stack, or in handfuls, in any order. Every listed tag read on the antenna counts
    (a big stack is read in turns, a few tags per cycle, so one read is enough); the deck is complete when all 52
    were read — the deck in hand is the deck on the list, every tag alive.

    A tag not on the list, or registered already, is pointed out once. When the count stops short for
    ``STALL_S``, the cards still unread are named: a card with a dead tag, or one the stack hides from the antenna.
    """

    def __init__(self, deck_id: str, listed: dict[str, str], list_name: str, known: Known, watch: AntennaWatch,
                 say: Callable[[str], None]):
        self.deck_id = deck_id
        self.listed = listed  # tag → card
        self.list_name = list_name
        self.known = known
        self.watch = watch
        self.say = say
        self.read: set[str] = set()
        self._pointed_out: set[str] = set()
        self._progress_t: float | None = None  # when the count last grew (or the first read)
        self._stall_said = False

    @property
    def done(self) -> bool:
        return len(self.read) == DECK_SIZE

    @property
    def uid_of(self) -> dict[str, str]:
        """card → tag, in the deck's order (what is written)."""
        by_card = {card: uid for uid, card in self.listed.items()}
        return {card: by_card[card] for card in FULL_DECK}

    def start(self) -> None:
        self.say(f"{0:2d}/{DECK_SIZE}  place the deck on the antenna (a stack, or a handful at a time)")

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> None:
        uids = set(uids)
        self.watch.feed(cycle, t, uids)
        new = sorted((uid for uid in uids if uid in self.listed and uid not in self.read),
                     key=lambda uid: FULL_DECK.index(self.listed[uid]))
        strangers = sorted(uid for uid in uids - self.listed.keys() if uid not in self._pointed_out)
        self._pointed_out.update(strangers)
        refuse([uid for uid in strangers if uid in self.known], self.known, self.say)
        for uid in (uid for uid in strangers if uid not in self.known):
            self.say(f"     !  tag {uid} is not on {self.list_name}: a card of another deck? Take it off")
        if new:
            self.read.update(new)
            self._progress_t, self._stall_said = t, False
            self.say(f"{len(self.read):2d}/{DECK_SIZE}  read " + " ".join(self.listed[uid] for uid in new)
                     + ("   the deck is complete" if self.done else ""))
        elif self._progress_t is None and uids:
            self._progress_t = t
        if (not self.done and self._progress_t is not None and not self._stall_said
                and t - self._progress_t >= STALL_S):
            self._stall_said = True
            unread = [card for card in FULL_DECK if card not in {self.listed[u] for u in self.read}]
            shown = " ".join(unread[:12]) + (" …" if len(unread) > 12 else "")
            self.say(f"     !  still unread ({len(unread)}): {shown} — spread the stack or place those cards alone; "
                     "a card never read has a dead tag")

    def command(self, line: str) -> None:
        if line.strip():
            self.say(f"        '{line.strip()}'? The list says which tag is which card: there is nothing to undo. "
                     "Ctrl-C aborts")


# ---- the chips ---------------------------------------------------------------------------------------------


class ChipSession:
    """Registering chips: every new tag read is registered with the batch's denomination.

    ``known``: tags that are refused (:func:`known_tags`). ``count``: finish after this many new chips
    (None: when the technician types ``done``).
    """

    def __init__(self, set_id: str, denomination: int, known: Known, watch: AntennaWatch,
                 say: Callable[[str], None], count: int | None = None):
        self.set_id = set_id
        self.denomination = denomination
        self.known = known
        self.watch = watch
        self.say = say
        self.count = count
        self.new: dict[str, int] = {}  # tag → denomination, in the order registered
        self.finished = False

    @property
    def done(self) -> bool:
        return self.finished or (self.count is not None and len(self.new) >= self.count)

    def start(self) -> None:
        self.say(f"place {self.denomination}-chips" + (f": {self.count} to register" if self.count else ""))

    def totals(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for value in self.new.values():
            counts[value] = counts.get(value, 0) + 1
        return dict(sorted(counts.items()))

    def feed(self, cycle: int, t: float, uids: Iterable[str]) -> None:
        arrived, _left = self.watch.feed(cycle, t, uids)
        refuse([uid for uid in arrived if uid in self.known and uid not in self.new], self.known, self.say)
        for uid in arrived:
            if self.done:
                return
            if uid in self.new or uid in self.known:
                continue  # taken off and put back, or refused
            self.new[uid] = self.denomination
            progress = f"{len(self.new)}/{self.count}" if self.count else f"{len(self.new)}"
            summary = " | ".join(f"{value:,} × {n} = {value * n:,}" for value, n in self.totals().items())
            total = sum(self.new.values())
            self.say(f"{progress:>7}  {uid} = {self.denomination:<6} {summary}"
                     + (f" | total {total:,}" if len(self.totals()) > 1 else ""))

    def command(self, line: str) -> None:
        word = line.strip().lower()
        if not word:
            return
        if word in ("done", "d", "w", "write"):
            self.finished = True
            return
        try:
            value = int(word.replace("_", "").replace(",", ""))
        except ValueError:
            value = 0
        if value > 0:
            self.denomination = value
            self.say(f"        now registering {value}-chips")
            return
        self.say(f"        '{line.strip()}'? Type a denomination and Enter to switch to it, 'done' and Enter to "
                 "write the registry; Ctrl-C aborts")


# ---- the configuration file ---------------------------------------------------------------------------------


def deck_section(deck_id: str, cards: dict[str, str], newline: str = "\n", note: str | None = None) -> str:
    """``[decks.ID]`` with ``UID = "card"`` lines in card order (``cards``: card → tag), ending with a newline."""
    lines = [f"[decks.{deck_id}]"]
    if note:
        lines.append(f"# {note}")
    lines += [f'{cards[card]} = "{card}"' for card in FULL_DECK if card in cards]
    return newline.join(lines) + newline


@dataclass(frozen=True)
class Placement:
    """Where a deck's section goes in the configuration's text."""

    text: str  # the new text
    first_line: int  # the line of the [decks.ID] header in it
    replaced: tuple[int, int] | None  # lines first..last of the old section, None when appended
    line_shift: int  # lines the text after the section moved by


def place_deck(text: str, deck_id: str, section: str, replace: bool) -> Placement:
    """Put ``section`` into the configuration's ``text``, everything else unchanged.

    Without ``replace`` it is appended (after a blank line). With it, the ``[decks.ID]`` table is replaced:
    from its header to its last key line — comments and blank lines just before the next table belong to that
    table and stay. Raises :class:`Abort` when the deck exists and ``replace`` is not given, or when it cannot
    be found as a ``[decks.ID]`` table (e.g. written as dotted keys): that is for an editor.
    """
    doc = tomllib.loads(text)
    decks = doc.get("decks")
    exists = isinstance(decks, dict) and deck_id in decks
    lines = text.split("\n")  # as TOML counts lines; "\r" stays with its line
    header = next((i for i, line in enumerate(lines)
                   if (m := TOML_HEADER.match(line)) and split_key(m.group(1)) == ("decks", deck_id)), None)
    if exists and not replace:
        where = f" (line {header + 1})" if header is not None else ""
        raise Abort(f"deck {deck_id!r} is registered already{where}: give --replace to register it again, "
                    "or choose another --deck")
    newline = "\r\n" if "\r\n" in text else "\n"  # the section is written with the file's line ends
    section_lines = section.replace("\r\n", "\n").removesuffix("\n").split("\n")
    section = newline.join(section_lines) + newline
    if exists:
        if header is None:
            raise Abort(f"deck {deck_id!r} is not written as a [decks.{deck_id}] table (dotted keys or an inline "
                        "table?): it cannot be replaced automatically; remove it by hand and register it again")
        end = next((i for i in range(header + 1, len(lines)) if TOML_HEADER.match(lines[i])), len(lines))
        while end - 1 > header and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        cr = "\r" if newline == "\r\n" else ""
        new_lines = lines[:header] + [line + cr for line in section_lines] + lines[end:]
        return Placement("\n".join(new_lines), header + 1, (header + 1, end), len(section_lines) - (end - header))
    prefix = text
    if prefix and not prefix.endswith("\n"):
        prefix += newline
    if prefix.strip() and not prefix.endswith(newline * 2):
        prefix += newline
    first_line = prefix.count("\n") + 1
    return Placement(prefix + section, first_line, None, 0)


def _validate_text(text: str, shown_as: str, placement: Placement | None = None) -> TableConfig:
    """Validate a configuration's text as ``load_config`` does; problems name ``shown_as`` and, when the text
    is a placement, the lines of the file as it is now.

    The text is checked from a temporary file beside the configuration, so that paths in it relative to the
    configuration's directory (TLS files) are found as the daemon will find them.
    """
    real = Path(os.path.realpath(shown_as))
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".check.toml", dir=real.parent)
    except OSError:  # a directory we may not write to: the check runs from the temporary directory
        fd, temporary = tempfile.mkstemp(prefix="rfid-table-register-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        return load_config(temporary)
    except ConfigError as exc:
        problems = exc.problems
        if placement is not None:
            problems = [_shift(p, placement) for p in problems]
        raise ConfigError(shown_as, problems) from None
    finally:
        os.unlink(temporary)


def _shift(problem: Problem, placement: Placement) -> Problem:
    """A problem in the placed text, with the line it has in the file before placing."""
    if problem.line is None:
        return problem
    first = placement.first_line
    length = placement.line_shift + ((placement.replaced[1] - placement.replaced[0] + 1) if placement.replaced else 0)
    last = first + length - 1 if placement.replaced else 10**9
    if problem.line < first:
        return problem
    if problem.line <= last:
        return Problem(problem.key, problem.message, None)
    return Problem(problem.key, problem.message, problem.line - placement.line_shift, problem.column)


def _read_config_text(path: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        load_config(path)  # raises the ConfigError saying why, worded as everywhere else
        raise


def _placeholder_deck(taken: set[str]) -> dict[str, str]:
    """52 tags that nothing else uses, standing in for the deck until it is read."""
    for prefix in ("00000000000000", "0000000000000F", "FFFFFFFFFFFFF0"):
        cards = {card: f"{prefix}{i:02X}" for i, card in enumerate(FULL_DECK)}
        if not taken & set(cards.values()):
            return cards
    raise AssertionError("no free placeholder tags")  # pragma: no cover


@dataclass
class DeckPlan:
    config: TableConfig  # the configuration with the deck in place (its own deck left out)
    known: Known  # tags registered elsewhere


def plan_deck(path: str, deck_id: str, replace: bool, registry: ChipRegistry | None = None) -> DeckPlan:
    """Check, before anything is read, that the deck can be written and that the result will be valid."""
    text = _read_config_text(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        load_config(path)  # the syntax error, with its line
        raise
    taken = {uid.upper() for deck in (doc.get("decks") or {}).values() if isinstance(deck, dict) for uid in deck}
    placeholder = _placeholder_deck(taken)
    placement = place_deck(text, deck_id, deck_section(deck_id, placeholder), replace)
    config = _validate_text(placement.text, path, placement)
    decks = {d: cards for d, cards in config.decks.items() if d != deck_id}
    known = known_tags(decks, registry)
    if not os.access(path, os.W_OK):
        raise Abort(f"cannot write {path}: permission denied (run as its owner, e.g. with sudo)", EX_CANTCREAT)
    return DeckPlan(config, known)


def write_deck(path: str, deck_id: str, cards: dict[str, str], replace: bool) -> tuple[Placement, TableConfig]:
    """Write the registered deck into the configuration, once the result has been validated."""
    text = _read_config_text(path)  # as it is now
    note = f"{len(cards)} cards registered with rfid-table register-deck on {date.today().isoformat()}: tag UID = card"
    placement = place_deck(text, deck_id, deck_section(deck_id, cards, note=note), replace)
    config = _validate_text(placement.text, path, placement)
    try:
        write_atomically(Path(path), placement.text.encode("utf-8"))
    except OSError as exc:
        raise Abort(f"cannot write {path}: {exc.strerror or exc}", EX_CANTCREAT) from None
    return placement, config


def config_summary(path: str, config: TableConfig) -> str:
    """The line ``rfid-table check-config`` prints for a good configuration."""
    chips = (f", chip set {config.chips.active_set!r} ({len(config.chips.chips)} chips)"
             if config.chips is not None else "")
    return (f"{path}: OK — table {config.table_id!r}, {config.seats} seats, {len(config.zones)} zones on "
            f"{len(config.readers)} reader(s), {len(config.decks)} deck(s), active deck {config.active_deck!r}"
            + chips)


# ---- the reader ------------------------------------------------------------------------------------------------


def registration_antenna(config: TableConfig, zone: str | None, reader: str | None,
                         antenna: int | None) -> tuple[str, int, str]:
    """(reader, antenna, description) from --zone or --reader/--antenna."""
    if zone is not None:
        if reader is not None or antenna is not None:
            raise Abort("give either --zone or --reader/--antenna, not both", 2)
        if zone not in config.zones:
            raise Abort(f"no zone {zone!r} in the configuration (zones: {', '.join(config.zones)})")
        name, number = config.zones[zone]
        return name, number, f"reader {name} antenna {number} (zone {zone})"
    if antenna is None:
        raise Abort("give the registration antenna: --zone NAME (an antenna of the table, e.g. muck) or "
                    "--reader NAME --antenna N", 2)
    if reader is None:
        if len(config.readers) != 1:
            raise Abort(f"the table has {len(config.readers)} readers: name one with --reader "
                        f"({', '.join(config.readers)})", 2)
        reader = next(iter(config.readers))
    if reader not in config.readers:
        raise Abort(f"no reader {reader!r} in the configuration (readers: {', '.join(config.readers)})")
    if not 1 <= antenna <= config.readers[reader].antennas:
        raise Abort(f"reader {reader!r} has antennas 1 to {config.readers[reader].antennas}, not {antenna}")
    zone_of = {where: name for name, where in config.zones.items()}
    used = f" (zone {zone_of[(reader, antenna)]})" if (reader, antenna) in zone_of else ""
    return reader, antenna, f"reader {reader} antenna {antenna}{used}"


class Console:
    """Lines the technician types, read without blocking (none when stdin is not a readable descriptor)."""

    def __init__(self, stream: TextIO | None = None):
        stream = sys.stdin if stream is None else stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self._buffer = b""

    def lines(self) -> list[str]:
        if self.fd is None:
            return []
        try:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return []
            data = os.read(self.fd, 4096)
        except (OSError, ValueError):
            data = b""
        if not data:
            self.fd = None  # end of input (or none to read): the typed commands are over, the tool is not
            return [self._buffer.decode(errors="replace")] if self._buffer else []
        self._buffer += data
        *complete, self._buffer = self._buffer.split(b"\n")
        return [line.decode(errors="replace") for line in complete]


def open_registration_reader(config: TableConfig, reader: str, antenna: int, simulation: Any = None):
    """The HAL reader for the registration antenna; with ``simulation`` (``--simulate``: the developer's tools'
    ``SimulatedRegistration`` class, given by the command line), also the simulated registration it reads: its
    field, and the virtual technicians that place tags on it."""
    settings = config.readers[reader]
    if settings.backend == "sim" and simulation is None:
        raise Abort(f"reader {reader!r} uses the simulated backend: add --simulate, and a virtual technician "
                    "places new tags on it", 2)
    if simulation is not None and settings.backend != "sim":
        raise Abort(f"--simulate needs a reader with backend \"sim\"; reader {reader!r} is {settings.backend!r} "
                    "(made-up tags have no place in a real table's files)", 2)
    simulated = simulation(reader, antenna) if simulation is not None else None
    field = simulated.field if simulated is not None else None
    return open_reader(settings.name, settings.backend, settings.antennas, settings.link, field=field), simulated


def run_session(session, reader: ReaderBackend, antenna: int, say: Callable[[str], None], *,
                console: Console | None = None, technician=None, cycle_s: float = 0.05,
                virtual_clock: bool = False) -> None:
    """Poll the reader and feed the session the registration antenna's reads until it is done.

    A firmware reader is polled whenever it has bytes (or every ``POLL_S``); a simulated one once per
    ``cycle_s``, on the wall clock or, with ``virtual_clock``, as fast as it goes.
    """
    simulated = isinstance(reader, SimulatedReader)
    link = reader.link
    started = now = time.monotonic() if not virtual_clock else 0.0
    cycle = 0
    hinted = False
    session.start()
    while not session.done:
        for inventory in reader.poll(now):
            cycle += 1
            session.feed(cycle, inventory.t, (read.uid for read in inventory.reads if read.antenna == antenna))
            if session.done:
                return
        for event in reader.device_events():
            detail = dict(event.detail)
            if event.kind == "reader_up" and detail:
                say(f"        reader {reader.name}: up — reader {detail['serial']}, firmware {detail['firmware']}, "
                    f"{detail['antennas']} antennas")
                if antenna > detail["antennas"]:
                    say(f"     !  the reader has {detail['antennas']} antennas: antenna {antenna} reads nothing")
            elif event.kind in ("reader_down", "reader_incompatible"):
                state = event.kind.removeprefix("reader_")
                say(f"     !  reader {reader.name}: {state}: {detail.get('reason')}; reconnecting")
        if link is not None and not link.is_up and not hinted and now - started >= WAITING_HINT_S:
            hinted = True
            say(f"     !  waiting for reader {reader.name}: {link.stats.last_error or 'no answer'} (plugged in? "
                "the table's service stopped? it holds the reader while it runs)")
        for line in console.lines() if console is not None else ():
            session.command(line)
        if technician is not None:
            technician.step(now, session)
        if session.done:
            return
        if virtual_clock:
            now += cycle_s
            continue
        if simulated:
            _wait_input(console, max(0.0, started + (cycle + 1) * cycle_s - time.monotonic()))
        else:
            transport = link.transport if link is not None else None
            fd = transport.fileno() if transport is not None else None
            _wait_input(console, POLL_S, fd)
        now = time.monotonic()


def _wait_input(console: Console | None, timeout_s: float, fd: int | None = None) -> None:
    fds = [f for f in (fd, console.fd if console is not None else None) if f is not None]
    try:
        if fds:
            select.select(fds, [], [], timeout_s)
        else:
            time.sleep(timeout_s)
    except (OSError, ValueError):  # the reader unplugged meanwhile: the link notices on its next poll
        time.sleep(min(timeout_s, POLL_S))


# ---- the commands --------------------------------------------------------------------------------------------


def _say(line: str) -> None:
    print(line, flush=True)


def _close(reader) -> None:
    """Release a reader (a firmware reader's port; a simulated one holds nothing)."""
    if reader is not None:
        reader.close()


def _report_problems(exc: ConfigError, what: str = "configuration") -> int:
    count = len(exc.problems)
    print(f"bad {what} ({count} problem{'s' if count != 1 else ''}):", file=sys.stderr)
    for problem in exc.problems:
        print("  " + problem.render(exc.path), file=sys.stderr)
    return EX_CONFIG


def _run_tool(tool: str, list_kind: str, args, body: Callable[[Any], int]) -> int:
    """Run a registration command: bad files, refusals and Ctrl-C become its messages and exit status."""
    try:
        return body(args)
    except ConfigError as exc:
        listed = getattr(args, "from_file", None)
        return _report_problems(exc, list_kind if listed and exc.path == listed else "configuration")
    except Abort as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(f"\n{tool}: aborted: nothing written", file=sys.stderr, flush=True)
        return EX_ABORTED


def register_deck_command(args, simulation: Any = None) -> int:
    """``rfid-table register-deck CONFIG --deck ID (--zone NAME | [--reader R] --antenna N) [--replace]``."""
    return _run_tool("rfid-table register-deck", "deck list", args, lambda a: _register_deck(a, simulation))


def _register_deck(args, simulation: Any) -> int:
    reader = None
    try:
        if not DECK_ID.fullmatch(args.deck):
            raise Abort(f"--deck {args.deck!r}: a deck id is letters, digits, '-' or '_'", 2)
        registry = None
        if args.registry:
            try:
                registry = load_chip_registry(args.registry)
            except ConfigError as exc:
                return _report_problems(exc, "chip registry")
        plan = plan_deck(args.config, args.deck, args.replace, registry)
        from_file = getattr(args, "from_file", None)
        listed = _deck_list(from_file, plan.known) if from_file else None  # a bad list stops before the reader
        name, antenna, where = registration_antenna(plan.config, args.zone, args.reader, args.antenna)
        reader, simulated = open_registration_reader(plan.config, name, antenna, simulation)
        debounce = plan.config.debounce["cards"]
        watch = AntennaWatch(debounce.present_after_cycles, debounce.absent_after_s)
        technician = None
        if listed is not None:
            session = StackSession(args.deck, listed, from_file, plan.known, watch, _say)
            if simulated is not None:
                technician = simulated.stack_technician(random.Random(args.seed), args.pace, list(listed))
            print(f"Registering deck {args.deck} from {from_file} into {args.config}, on {where}.", flush=True)
            print(f"Place the deck on the antenna: the {DECK_SIZE} tags of the list must all be read. Ctrl-C aborts "
                  "without writing anything.", flush=True)
        else:
            session = DeckSession(args.deck, plan.known, watch, _say)
            if simulated is not None:
                technician = simulated.deck_technician(random.Random(args.seed), args.pace, set(plan.known))
            print(f"Registering deck {args.deck} into {args.config}, on {where}.", flush=True)
            print(f"Place the {DECK_SIZE} cards one at a time, in this order: 2s 3s … Ks As, then the hearts, "
                  "diamonds and clubs the same way (2h … Ah, 2d … Ad, 2c … Ac).", flush=True)
            print("Type 'undo' and Enter to take back the last card. Ctrl-C aborts without writing anything."
                  + (" (Simulated: a virtual technician places new cards.)" if simulated is not None else ""),
                  flush=True)
        run_session(session, reader, antenna, _say, console=Console(), technician=technician,
                    cycle_s=plan.config.readers[name].cycle_s, virtual_clock=simulated is not None and args.pace <= 0)
        reader = _close(reader)
        try:
            placement, config = write_deck(args.config, args.deck, session.uid_of, args.replace)
        except (ConfigError, Abort):
            print(f"deck {args.deck} was not written; to add it by hand:\n"
                  + deck_section(args.deck, session.uid_of), end="", flush=True)
            raise
        how = (f"replacing lines {placement.replaced[0]}–{placement.replaced[1]}" if placement.replaced
               else f"appended at line {placement.first_line}")
        print(f"wrote deck {args.deck} ({DECK_SIZE} cards) to {args.config}: [decks.{args.deck}] {how}", flush=True)
        print(config_summary(args.config, config), flush=True)
        return 0
    finally:
        _close(reader)


def _deck_list(path: str, known: Known) -> dict[str, str]:
    """The manufacturer's list (``read_deck_list``), refused whole when a tag on it is registered already."""
    listed, lines = read_deck_list(path)
    taken = [Problem(uid, f"registered already, as {known[uid][0]}", lines[uid]) for uid in listed if uid in known]
    if taken:
        raise ConfigError(path, taken)
    return listed


def register_chips_command(args, simulation: Any = None) -> int:
    """``rfid-table register-chips REGISTRY --set ID (--denomination V --config TABLE ... | --from-file FILE)``."""
    return _run_tool("rfid-table register-chips", "chip list", args, lambda a: _register_chips(a, simulation))


def _register_chips(args, simulation: Any) -> int:
    reader = None
    try:
        if not DECK_ID.fullmatch(args.set):
            raise Abort(f"--set {args.set!r}: a set id is letters, digits, '-' or '_'", 2)
        if args.denomination is not None and args.denomination < 1:
            raise Abort(f"--denomination must be a positive whole number, not {args.denomination}", 2)
        if args.count is not None and args.count < 1:
            raise Abort(f"--count must be at least 1, not {args.count}", 2)
        path = args.registry
        config = None
        if args.config:
            try:
                config = load_config(args.config)
            except ConfigError as exc:
                return _report_problems(exc)
        decks = config.decks if config is not None else None
        try:
            registry = load_chip_registry(path, decks=decks) if Path(path).exists() else ChipRegistry()
        except ConfigError as exc:
            return _report_problems(exc, "chip registry")
        cards = {uid: (deck_id, card) for deck_id, deck in (config.decks if config else {}).items()
                 for uid, card in deck.items()}
        writable = os.access(path, os.W_OK) if Path(path).exists() else os.access(Path(path).parent, os.W_OK)
        if not writable:
            raise Abort(f"cannot write {path}: permission denied", EX_CANTCREAT)

        if args.from_file:
            new = _import_chips(args, registry, cards)
        else:
            if config is None:
                raise Abort("give --config TABLE.toml: the registration antenna is one of the table's readers "
                            "(or --from-file FILE to import a list)", 2)
            if args.denomination is None:
                raise Abort("give --denomination V: the value of the chips about to be placed", 2)
            name, antenna, where = registration_antenna(config, args.zone, args.reader, args.antenna)
            reader, simulated = open_registration_reader(config, name, antenna, simulation)
            known = known_tags(config.decks, registry)
            debounce = config.debounce["chips"]
            count = args.count if args.count or simulated is None else 20
            session = ChipSession(args.set, args.denomination, known, AntennaWatch(
                debounce.present_after_cycles, debounce.absent_after_s), _say, count)
            technician = None
            if simulated is not None:
                technician = simulated.chip_technician(random.Random(args.seed), args.pace, set(known), count)
            print(f"Registering chips of set {args.set} into {path}, on {where}.", flush=True)
            print("Place the chips, a stack at a time if you like: every new tag is registered with the "
                  "denomination in force." + (f" The tool stops after {count} chips." if count else ""), flush=True)
            print("Type a denomination and Enter to switch to it, 'done' and Enter to write the registry. "
                  "Ctrl-C aborts without writing anything."
                  + (" (Simulated: a virtual technician places new chips.)" if simulated is not None else ""),
                  flush=True)
            run_session(session, reader, antenna, _say, console=Console(), technician=technician,
                        cycle_s=config.readers[name].cycle_s, virtual_clock=simulated is not None and args.pace <= 0)
            reader = _close(reader)
            new = dict(session.new)
        if not new:
            print(f"no new chips: {path} is unchanged", flush=True)
            return 0
        # Read it again: it may have changed while the chips were being placed.
        try:
            current = load_chip_registry(path, decks=decks) if Path(path).exists() else ChipRegistry()
        except ConfigError as exc:
            return _report_problems(exc, "chip registry")
        try:
            current.add(args.set, new)
        except ValueError as exc:
            raise Abort(f"{path} changed meanwhile: {exc}; nothing written") from None
        try:
            write_chip_registry(path, current)
        except OSError as exc:
            raise Abort(f"cannot write {path}: {exc.strerror or exc}", EX_CANTCREAT) from None
        try:
            written = load_chip_registry(path, decks=decks)
        except ConfigError as exc:
            return _report_problems(exc, "chip registry")
        print(f"wrote {len(new)} new chip{'s' if len(new) != 1 else ''} to set {args.set} of {path}:", flush=True)
        for line in _totals_table(written, args.set, new):
            print(line, flush=True)
        print(f"{path}: OK — {len(written.sets)} set(s), {len(written)} chips", flush=True)
        return 0
    finally:
        _close(reader)


def _import_chips(args, registry: ChipRegistry, cards: dict[str, tuple[str, str]]) -> dict[str, int]:
    """A manufacturer's list, checked whole: any bad row, any tag registered already, and nothing is imported."""
    chips, lines, problems = chip_list(args.from_file, args.denomination)
    for uid, value in chips.items():
        held = registry.lookup(uid)
        if held is not None:
            problems.append(Problem(uid, f"registered already: a {held[1]} chip of set {held[0]!r} in "
                                         f"{args.registry}", lines[uid]))
        elif uid in cards:
            problems.append(Problem(uid, f"a card: {cards[uid][1]} of deck {cards[uid][0]!r} in {args.config}",
                                    lines[uid]))
    if problems:
        raise ConfigError(args.from_file, problems)
    print(f"importing {len(chips)} chips from {args.from_file} into set {args.set}", flush=True)
    return chips


def _totals_table(registry: ChipRegistry, set_id: str, new: dict[str, int]) -> list[str]:
    added: dict[int, int] = {}
    for value in new.values():
        added[value] = added.get(value, 0) + 1
    totals = registry.totals(set_id)
    rows = [f"  {'denomination':>12}  {'new':>5}  {'in set':>6}  {'value in set':>12}"]
    for value, count in totals.items():
        rows.append(f"  {value:>12,}  {added.get(value, 0):>5}  {count:>6}  {value * count:>12,}")
    rows.append(f"  {'total':>12}  {len(new):>5}  {sum(totals.values()):>6}  "
                f"{sum(v * n for v, n in totals.items()):>12,}")
    return rows
