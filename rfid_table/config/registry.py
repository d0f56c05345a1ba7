"""The chip registry: which chip tag is worth what, per chip set.

One TOML file, loaded by the daemon and written by ``rfid-table register-chips``::

    # Chip registry: tag UID = denomination, per chip set
    [sets.main]
    E0040150D1000001 = 25
    E0040150D1000002 = 100
    [sets.old-series]
    E0040150D2000001 = 25

A card room may own several chip sets (a new series, an old one kept for tournaments); the table
configuration names the one in play. A tag belongs to one set only.

Problems are reported like the table configuration's (``rfid_table.config.table``, with :mod:`rfid_table.config.checker`): every one of them at once,
each as ``FILE:LINE: key.path: what is wrong``, in a :class:`~rfid_table.config.checker.ConfigError`.

Writing regenerates the whole file in a canonical form (:func:`render_chip_registry`): a header comment,
the sets sorted by id, and in each set the chips grouped by denomination, each group under a comment
line with its count and value, UIDs sorted. Comments written by hand are not kept; the file is a list
kept by the tools, and anything worth noting about a set belongs in the card room's records.
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from rfid_table.config.checker import Checker, ConfigError, Problem, describe_value, parse_toml, read_config_text

SET_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a bare TOML key; the daemon may name it in MQTT payloads
MAX_DENOMINATION = 1_000_000_000
HEADER = (
    "# Chip registry: tag UID = denomination, per chip set\n"
    "# Written by 'rfid-table register-chips', which regenerates this file in this form (sets sorted by id,\n"
    "# chips grouped by denomination, UIDs sorted): comments added by hand are not kept.\n"
)
UID_SEPARATORS = re.compile(r"[\s:-]")  # E0:04:01:50:… and E0-04-… as manufacturers print them

# The tag UIDs the readers deliver, most significant byte first, as printed on the tag:
# * ISO/IEC 15693-3: 8 bytes, the first E0 (the allocation class of every ISO 15693 tag), then the maker's code;
# * ISO/IEC 14443-3 type A, double size: 7 bytes, the first the maker's code of ISO/IEC 7816-6 (04 for NXP: NTAG,
#   MIFARE Ultralight). 88 is the cascade tag: it is never the first byte (uid0), nor the fourth (uid3, Amendment 1).
# A single-size (4-byte) 14443A UID is refused: it is a random number on many tags (uid0 = 08) and not unique on the
# others (MIFARE Classic's NUID), so it cannot name a card for good.
HEX = re.compile(r"[0-9A-F]+")
UID_SHAPES = "16 hex digits starting E0 (ISO 15693) or 14 hex digits (ISO 14443A, 7 bytes)"
ISO15693, ISO14443A = "iso15693", "iso14443a"


def uid_problem(uid: str) -> str | None:
    """What is wrong with ``uid`` (upper-case) as a tag UID, as a phrase ("not a tag UID (...)"); None if nothing."""
    if not HEX.fullmatch(uid):
        return f"not a tag UID (expected {UID_SHAPES})"
    if len(uid) == 16:
        if uid.startswith("E0"):
            return None
        return f"not a tag UID: 16 hex digits, but an ISO 15693 UID starts E0 (expected {UID_SHAPES})"
    if len(uid) == 14:
        if uid[0:2] == "88" or uid[6:8] == "88":
            return ("not a tag UID: 88 is ISO 14443A's cascade tag, never the first or fourth byte of a 7-byte UID "
                    f"(expected {UID_SHAPES})")
        return None
    if len(uid) == 8:
        return ("a 4-byte ISO 14443A UID, which does not name one tag for good (a random number on many tags, not "
                "unique on MIFARE Classic): use tags with 7-byte UIDs (NTAG, MIFARE Ultralight) or ISO 15693 tags")
    return f"not a tag UID: {len(uid)} hex digits (expected {UID_SHAPES})"


def uid_standard(uid: str) -> str:
    """The air interface a well-formed tag UID is read over: ISO15693 or ISO14443A."""
    return ISO15693 if len(uid) == 16 else ISO14443A


def tag_entries(c: Checker, table: dict, path: tuple[str, ...]):
    """The entries of a TOML table of tag UID = something: (key path, UID in capitals, UID as written, value). A
    key that is not a tag UID is a problem; its entry is skipped."""
    for raw_uid, item in table.items():
        key_path = path + (raw_uid,)
        uid = raw_uid.upper()
        problem = uid_problem(uid)
        if problem:
            c.problem(key_path, problem)
            continue
        yield key_path, uid, raw_uid, item


@dataclass
class ChipRegistry:
    """Chip sets: set id → {tag UID → denomination}. UIDs are upper-case hex.

    Change ``sets`` through :meth:`add` only: it keeps the index :meth:`lookup` uses.
    """

    sets: dict[str, dict[str, int]] = field(default_factory=dict)
    _index: dict[str, tuple[str, int]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for set_id, chips in self.sets.items():
            for uid, value in chips.items():
                self._index[uid.upper()] = (set_id, value)

    def lookup(self, uid: str) -> tuple[str, int] | None:
        """The set and denomination of a chip tag, or None when the tag is not registered."""
        return self._index.get(uid.upper())

    def __len__(self) -> int:
        return len(self._index)

    def add(self, set_id: str, chips: Mapping[str, int]) -> None:
        """Register chips into a set (created if new). A tag registered already, in any set, is a ValueError."""
        taken = [uid.upper() for uid in chips if uid.upper() in self._index]
        if taken:
            raise ValueError(f"already registered: {', '.join(sorted(taken))}")
        target = self.sets.setdefault(set_id, {})
        for uid, value in chips.items():
            target[uid.upper()] = value
            self._index[uid.upper()] = (set_id, value)

    def totals(self, set_id: str) -> dict[int, int]:
        """Denomination → number of chips in the set, by increasing denomination."""
        counts: dict[int, int] = {}
        for value in self.sets.get(set_id, {}).values():
            counts[value] = counts.get(value, 0) + 1
        return dict(sorted(counts.items()))


# ---- reading ----------------------------------------------------------------------------------------------


def _parse_toml(path: str, text: str) -> dict:
    return parse_toml(path, text, lambda key: "a key written twice — a tag UID listed twice?")


def _denomination(value: object) -> str | None:
    """What is wrong with a denomination, or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected a denomination (a whole number of chips' worth, like 25), got {describe_value(value)}"
    if not 1 <= value <= MAX_DENOMINATION:
        return f"expected a positive denomination up to {MAX_DENOMINATION:,}, got {value!r}"
    return None


def _card_owners(decks: Mapping[str, Mapping[str, str]] | None) -> dict[str, tuple[str, str]]:
    return {uid.upper(): (deck_id, card) for deck_id, deck in (decks or {}).items() for uid, card in deck.items()}


def load_chip_registry(path: str | Path, *, decks: Mapping[str, Mapping[str, str]] | None = None) -> ChipRegistry:
    """Read and check a chip registry; raise :class:`ConfigError` listing every problem with its line.

    ``decks`` (the table configuration's ``TableConfig.decks``): a chip tag that is also a registered card
    is a problem too.
    """
    path = str(path)
    text = read_config_text(path)
    doc = _parse_toml(path, text)
    c = Checker(text)
    for key in doc:
        if key != "sets":
            c.problem((key,), "unknown key (expected: sets, as [sets.ID] tables of tag UID = denomination)")
    cards = _card_owners(decks)
    sets: dict[str, dict[str, int]] = {}
    owner: dict[str, tuple[str, str]] = {}  # upper-case UID → (set id, UID as written)
    for set_id, chips in (c.section(doc, "sets", "at least one [sets.ID] table of tag UID = denomination") or {}).items():
        p = ("sets", set_id)
        if not SET_ID.fullmatch(set_id):
            c.problem(p, "expected a set id of letters, digits, '-' or '_'")
            continue
        registered: dict[str, int] = {}
        if not isinstance(chips, dict):
            c.problem(p, f"expected a table of tag UID = denomination, got {describe_value(chips)}")
            continue
        for kp, uid, raw_uid, value in tag_entries(c, chips, p):
            wrong = _denomination(value)
            if wrong:
                c.problem(kp, wrong)
                continue
            if uid in owner:
                held_set, written = owner[uid]
                where = "this set" if held_set == set_id else f"set {held_set!r}"
                line = c.line_of(("sets", held_set, written))
                c.problem(kp, f"duplicate UID: tag {uid} is already registered in {where}"
                              + (f" (line {line})" if line else ""))
                continue
            if uid in cards:
                deck_id, card = cards[uid]
                c.problem(kp, f"tag {uid} is a card: {card} of deck {deck_id!r} in the table configuration")
                continue
            owner[uid] = (set_id, raw_uid)
            registered[uid] = value
        sets[set_id] = registered
    if c.problems:
        raise ConfigError(path, c.problems)
    return ChipRegistry(sets)


def read_chip_list(path: str | Path, default_denomination: int | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """A manufacturer's list of chips: UID and denomination per chip, as CSV or as TOML.

    CSV (``.csv``, or any file that is not TOML): one chip a row, ``UID,denomination``; ``;`` or a tab also
    separate; a header row naming the columns (``uid``/``tag``, ``denomination``/``value``) is optional, and
    so is the denomination column when ``default_denomination`` is given. Blank rows and rows starting with
    ``#`` are skipped; UIDs may be written with ``:``, ``-`` or spaces between the bytes. TOML (``.toml``):
    ``UID = denomination`` keys at the top level.

    Returns ({UID → denomination}, {UID → line}); raises :class:`ConfigError` listing every bad row.
    """
    chips, lines, problems = chip_list(path, default_denomination)
    if problems:
        raise ConfigError(str(path), problems)
    return chips, lines


def chip_list(path: str | Path, default_denomination: int | None = None
              ) -> tuple[dict[str, int], dict[str, int], list[Problem]]:
    """:func:`read_chip_list` that returns the good rows with the problems of the others (an unreadable file,
    or TOML that does not parse, is still a ConfigError)."""
    path = str(path)
    text = read_config_text(path)
    if path.lower().endswith(".toml"):
        return _toml_chip_list(path, text)
    return _csv_chip_list(path, text, default_denomination)


def _toml_chip_list(path: str, text: str) -> tuple[dict[str, int], dict[str, int], list[Problem]]:
    doc = _parse_toml(path, text)
    c = Checker(text)
    chips: dict[str, int] = {}
    lines: dict[str, int] = {}
    for (raw_uid,), uid, _, value in tag_entries(c, doc, ()):
        wrong = _denomination(value)
        if wrong:
            c.problem((raw_uid,), wrong)
            continue
        if uid in chips:
            c.problem((raw_uid,), f"duplicate UID: tag {uid} is listed already (line {lines[uid]})")
            continue
        chips[uid] = value
        lines[uid] = c.line_of((raw_uid,)) or 0
    if not chips and not c.problems:
        c.problem((), "no chips in the file (expected lines of UID = denomination)")
    return chips, lines, c.problems


_UID_COLUMNS = ("uid", "tag", "tag uid", "tag_uid", "tag-uid", "chip", "id", "serial")
_VALUE_COLUMNS = ("denomination", "value", "denom", "face value", "face_value", "amount")


def _csv_chip_list(path: str, text: str, default: int | None
                   ) -> tuple[dict[str, int], dict[str, int], list[Problem]]:
    problems: list[Problem] = []
    chips: dict[str, int] = {}
    lines: dict[str, int] = {}
    for number, raw, cell in _uid_rows(text, _VALUE_COLUMNS):
        uid = UID_SEPARATORS.sub("", raw).upper()
        problem = uid_problem(uid)
        if problem:
            problems.append(Problem("", f"{raw!r} is {problem}", number))
            continue
        if not cell:
            if default is None:
                problems.append(Problem(uid, "no denomination (add the column, or give --denomination)", number))
                continue
            value = default
        else:
            try:
                value = int(cell.replace("_", ""))
            except ValueError:
                problems.append(Problem(uid, f"expected a denomination (a whole number like 25), got {cell!r}",
                                        number))
                continue
            wrong = _denomination(value)
            if wrong:
                problems.append(Problem(uid, wrong, number))
                continue
        if uid in chips:
            problems.append(Problem(uid, f"duplicate UID: listed already (line {lines[uid]})", number))
            continue
        chips[uid] = value
        lines[uid] = number
    if not chips and not problems:
        problems.append(Problem("", "no chips in the file (expected rows of UID,denomination)"))
    return chips, lines, problems


# ---- a manufacturer's deck list ----------------------------------------------------------------------------

_CARD_COLUMNS = ("card", "cards", "rank and suit", "face")


def read_deck_list(path: str | Path) -> tuple[dict[str, str], dict[str, int]]:
    """A manufacturer's list of a deck's tags: UID and card per row, as CSV or as TOML.

    CSV (any file that is not ``.toml``): ``UID,card`` a row (``;`` or a tab also separate; an optional header row
    names the columns ``uid``/``tag`` and ``card``; blank rows and ``#`` rows are skipped; UIDs may have ``:``,
    ``-`` or spaces between the bytes). TOML: ``UID = "card"`` at the top level, as in a ``[decks.ID]`` table.
    The list must name each of the 52 cards once, with distinct tags.

    Returns ({UID → card}, {UID → line}); raises :class:`ConfigError` listing every bad row.
    """
    from controller.cards import FULL_DECK, parse_card  # noqa: PLC0415

    path = str(path)
    text = read_config_text(path)
    problems: list[Problem] = []
    rows: list[tuple[int, str, str]] = []  # (line, raw UID, raw card)
    if path.lower().endswith(".toml"):
        doc = _parse_toml(path, text)
        c = Checker(text)
        for raw_uid, raw_card in doc.items():
            card_text = raw_card if isinstance(raw_card, str) else repr(raw_card)
            rows.append((c.line_of((raw_uid,)) or 0, raw_uid, card_text))
    else:
        rows = list(_uid_rows(text, _CARD_COLUMNS))
    cards: dict[str, str] = {}
    lines: dict[str, int] = {}
    line_of_card: dict[str, int] = {}
    for number, raw_uid, raw_card in rows:
        uid = UID_SEPARATORS.sub("", raw_uid).upper()
        problem = uid_problem(uid)
        if problem:
            problems.append(Problem("", f"{raw_uid!r} is {problem}", number))
            continue
        try:
            card = parse_card(raw_card)
        except ValueError as exc:
            problems.append(Problem(uid, str(exc) if raw_card else "no card (expected UID,card like E004…,As)",
                                    number))
            continue
        if uid in cards:
            problems.append(Problem(uid, f"duplicate UID: listed already (line {lines[uid]})", number))
            continue
        if card in line_of_card:
            problems.append(Problem(uid, f"duplicate card: {card} is listed already (line {line_of_card[card]})",
                                    number))
            continue
        cards[uid], lines[uid], line_of_card[card] = card, number, number
    missing = [card for card in FULL_DECK if card not in line_of_card]
    if missing and not problems:
        problems.append(Problem("", f"the list has {len(cards)} cards, a deck has 52 (missing: {' '.join(missing)})"))
    if problems:
        raise ConfigError(path, problems)
    return cards, lines


def _uid_rows(text: str, value_columns: tuple[str, ...]):
    """(line, UID cell, value cell) per row of a manufacturer's CSV list: blank and ``#`` rows skipped; a header
    row naming the columns (``uid``/``tag``…, and one of ``value_columns``) is optional and picks them."""
    text = text.removeprefix("\ufeff")  # a spreadsheet's byte order mark
    rows = [(number, row) for number, row in _csv_rows(text) if any(cell.strip() for cell in row)
            and not row[0].lstrip().startswith("#")]
    uid_col, value_col = 0, 1
    if rows:
        names = [cell.strip().lower() for cell in rows[0][1]]
        if any(name in _UID_COLUMNS + value_columns for name in names):  # a header row
            rows = rows[1:]
            uid_col = next((i for i, n in enumerate(names) if n in _UID_COLUMNS), 0)
            value_col = next((i for i, n in enumerate(names) if n in value_columns), 1 if uid_col == 0 else 0)
    for number, row in rows:
        yield (number, row[uid_col].strip() if uid_col < len(row) else "",
               row[value_col].strip() if value_col < len(row) else "")


def _csv_rows(text: str):
    """(line number, cells) per CSV record; the delimiter is the first of , ; tab the file uses."""
    sample = "\n".join(line for line in text.splitlines()[:20] if not line.lstrip().startswith("#"))
    delimiter = next((d for d in (",", ";", "\t") if d in sample), ",")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    for row in reader:
        yield start, row
        start = reader.line_num + 1


# ---- writing ----------------------------------------------------------------------------------------------


def render_chip_registry(registry: ChipRegistry) -> str:
    """The registry in its canonical form (see the module's docstring); ``load_chip_registry`` reads it back."""
    out = [HEADER]
    for set_id in sorted(registry.sets):
        chips = registry.sets[set_id]
        totals = registry.totals(set_id)
        out.append(f"\n[sets.{set_id}]\n# {len(chips)} chip{'s' if len(chips) != 1 else ''}, total value "
                   f"{sum(v * n for v, n in totals.items()):,}\n")
        for value, count in totals.items():
            out.append(f"# {value:,}: {count} chip{'s' if count != 1 else ''}\n")
            out.extend(f"{uid} = {value}\n" for uid in sorted(u for u, v in chips.items() if v == value))
    return "".join(out)


def write_chip_registry(path: str | Path, registry: ChipRegistry) -> None:
    """Write the registry to ``path`` in its canonical form, atomically (a reader never sees half a file).

    An existing file keeps its permissions and, where the process may set them, its owner and group.
    """
    write_atomically(Path(path), render_chip_registry(registry).encode("utf-8"))


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` through a temporary file in the same directory.

    The file keeps its mode and, where allowed, its owner and group (a configuration in /etc/rfid-table is
    root:rfid-table 0640; a new file made by root must stay readable by the service). Where the directory is
    not writable but the file is, the file is rewritten in place instead.
    """
    path = Path(os.path.realpath(path))  # a symlinked file is written where it points
    try:
        stat = path.stat()
    except FileNotFoundError:
        stat = None
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except PermissionError:
        if stat is None:
            raise
        with open(path, "r+b") as file:  # the directory is not ours, the file is
            file.write(data)
            file.truncate()
            file.flush()
            os.fsync(file.fileno())
        return
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if stat is not None:
            os.chmod(temporary, stat.st_mode & 0o7777)
            try:
                os.chown(temporary, stat.st_uid, stat.st_gid)
            except PermissionError:
                pass  # not root: the file becomes ours, with the same mode
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
