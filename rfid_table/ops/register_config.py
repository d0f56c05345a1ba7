"""The deck written into the table configuration: a ``[decks.ID]`` table appended to the file (or replacing that
table, with ``--replace``), the rest of the file kept byte for byte; the result is validated before it replaces the
file, and checked once before anything is read (:func:`plan_deck`), so that a registration never ends in a deck that
cannot be written.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from controller.cards import FULL_DECK
from rfid_table.config.checker import TOML_HEADER, ConfigError, Problem, split_key
from rfid_table.config.table import EX_CONFIG, TableConfig, load_config
from rfid_table.config.registry import ChipRegistry, write_atomically
from rfid_table.ops.register_sessions import Known, known_tags

EX_CANTCREAT = 73  # sysexits.h: the file cannot be written


class Abort(Exception):
    """The registration cannot go on; the message says why. Nothing has been written."""

    def __init__(self, message: str, code: int = EX_CONFIG):
        super().__init__(message)
        self.code = code


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


def _placeholder_decks(taken: set[str]) -> list[dict[str, str]]:
    """52 tags that nothing else uses, standing in for the deck until it is read: ISO 15693 UIDs, then ISO 14443A
    ones (the deck's standard is known once it is read; the table's antennas may read either)."""
    decks = []
    for prefixes in (("E0000000000000", "E000000000000F", "E0FFFFFFFFFFF0"), ("000000000000", "FFFFFFFFFFF0")):
        for prefix in prefixes:
            cards = {card: f"{prefix}{i:02X}" for i, card in enumerate(FULL_DECK)}
            if not taken & set(cards.values()):
                decks.append(cards)
                break
    if not decks:
        raise AssertionError("no free placeholder tags")  # pragma: no cover
    return decks


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
    failed = None
    for placeholder in _placeholder_decks(taken):
        placement = place_deck(text, deck_id, deck_section(deck_id, placeholder), replace)
        try:
            config = _validate_text(placement.text, path, placement)
            break
        except ConfigError as exc:  # (an active deck on antennas of the other standard: the next placeholder)
            failed = failed or exc
    else:
        raise failed
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

