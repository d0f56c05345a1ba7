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

The tools are made of the registration sessions (``rfid_table.ops.register_sessions``: the deck card by card,
the deck as a stack from its list, the chips), the reader loop that feeds them (``rfid_table.ops.register_reader``)
and the deck written into the configuration (``rfid_table.ops.register_config``); this module is their command
line: the order of the steps, the messages and the exit statuses.
"""

from __future__ import annotations

import os
import random
import re
import sys
from pathlib import Path
from typing import Any, Callable

from rfid_table.config.checker import ConfigError, Problem
from rfid_table.config.table import EX_CONFIG, load_config
from rfid_table.config.registry import (
    ChipRegistry,
    chip_list,
    load_chip_registry,
    read_deck_list,
    write_chip_registry,
)
from rfid_table.ops.register_config import EX_CANTCREAT, Abort, config_summary, deck_section, plan_deck, write_deck
from rfid_table.ops.register_reader import Console, open_registration_reader, registration_antenna, run_session
from rfid_table.ops.register_sessions import (
    DECK_SIZE,
    AntennaWatch,
    ChipSession,
    DeckSession,
    Known,
    StackSession,
    known_tags,
)

EX_ABORTED = 130  # the shell's code for a command ended by Ctrl-C
DECK_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


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
