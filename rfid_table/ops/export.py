"""``rfid-table export``: every hand of a journal as Open Hand History, PokerStars-style text or PHH, for trackers
and analysis tools.

The journal holds each finished hand's PHH record with every hole card (the ``hand_history`` event), the pots as
the table awarded them (``showdown``) and when the hand began (``hand_started``: the table clock, and the room's
clock in its wall stamp). From these the hand is rebuilt in the betting engine (``controller.phh.replay``) and
written by the same writers as the secure feed's copies (``controller.ohh``, ``controller.pokerstars``), now dated
and numbered as the feed numbered them. PHH is the table's own record, with the fields PHH has for the table, the
hand's number and its date.

Hole cards: by default a copy shows what the table showed — the hands tabled at the showdown
(``controller.histories.tabled``: all of them after an all-in; otherwise not a losing hand that went to the muck
unseen) and no folded hand, nor the cards of a winner nobody called.
``--all-cards`` adds every hole card the table read, as the secure feed carries them.

The journal is read from a copy taken with SQLite's online backup, so a table can go on writing it meanwhile, and
the copy is checked like a journal at start-up (every row's checksum). One file per journal and format, named after
the table and the first hand's start: ``main-2-20261201-092603.ohh`` (hands one a line, a blank line between them,
as the OHH storage format asks), ``.txt`` (hands two blank lines apart, as PokerStars writes them) or ``.phhs`` (PHH's
file of several hands: each a TOML table, ``[1]``, ``[2]`` ...). Files are written whole or not at all (temp file,
fsync, rename).

Exit status: 0 written (hands the journal holds no PHH record for are listed and skipped), 2 bad arguments,
65 a damaged journal or not a journal, 66 no journal at the path, 73 the output cannot be written.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, TextIO

EX_USAGE, EX_DATAERR, EX_NOINPUT, EX_CANTCREAT = 2, 65, 66, 73  # 2 as argparse; the others from sysexits
FORMATS = {"ohh": ".ohh", "pokerstars": ".txt", "phh": ".phhs"}
PROGRESS_MIN_EVENTS = 1000  # a journal this long reports its progress, every tenth of the way
READ_CHUNK = 1000


class ExportError(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclass
class Exported:
    path: Path | None
    hands: int
    skipped: list[str]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--journal", required=True, metavar="FILE", help="the table's journal (it may be in use)")
    parser.add_argument("--format", required=True, choices=sorted(FORMATS), help="ohh (Open Hand History JSON), "
                        "pokerstars (PokerStars-style text, for PokerTracker and Hold'em Manager) or phh (the Poker "
                        "Hand History format of pokerkit and poker research)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the file is written (made if missing)")
    parser.add_argument("--all-cards", action="store_true",
                        help="every hole card the table read, folded hands too (default: the showdown's hands only)")


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    started = time.monotonic()
    try:
        result = export(Path(args.journal), args.format, Path(args.out), args.all_cards, err)
    except ExportError as exc:
        print(f"rfid-table export: {exc}", file=err)
        return exc.status
    elapsed = time.monotonic() - started
    for line in result.skipped:
        print(f"skipped: {line}", file=out)
    where = f"written to {result.path}" if result.path else "nothing written"
    print(f"{result.hands} hands as {args.format}, {len(result.skipped)} skipped ({elapsed:.1f} s); {where}",
          file=out)
    return 0


def export(journal_path: Path, fmt: str, out_dir: Path, all_cards: bool = False,
           progress: TextIO | None = None) -> Exported:
    """Write the journal's hands as ``fmt`` into ``out_dir``; raises :class:`ExportError` with the exit status."""
    if fmt not in FORMATS:
        raise ExportError(f"--format must be one of {', '.join(sorted(FORMATS))}, not {fmt!r}", EX_USAGE)
    _check_journal_path(journal_path)
    _check_out_dir(out_dir)
    with tempfile.TemporaryDirectory(prefix="rfid-table-export-") as private:
        journal = _open_copy(journal_path, Path(private) / "journal")
        try:
            table_id = journal.meta("table_id") or journal_path.stem
            texts: list[str] = []
            skipped: list[str] = []
            first_start: datetime | None = None
            for hand in _hands(journal, progress):
                try:
                    if fmt == "phh":
                        fields, started = hand.phh(table_id, all_cards)
                    else:
                        record = hand.record(table_id, all_cards)
                        started = record.started
                except (ValueError, KeyError, TypeError) as exc:  # a record the engine cannot replay: say which
                    skipped.append(f"hand {hand.number}: {exc}")
                    continue
                first_start = first_start or started
                texts.append(_phh_section(len(texts) + 1, fields, started) if fmt == "phh" else _render(record, fmt))
        finally:
            journal.close()
    if not texts:
        return Exported(None, 0, skipped)
    stamp = f"{first_start:%Y%m%d-%H%M%S}" if first_start else "undated"
    path = out_dir / f"{table_id}-{stamp}{FORMATS[fmt]}"
    separator = "\n\n" if fmt == "pokerstars" else "\n"
    _write_whole(path, separator.join(texts))
    return Exported(path, len(texts), skipped)


# ---- the journal ----------------------------------------------------------------------------------------


def _check_journal_path(path: Path) -> None:
    """Before anything is made: is there a file at ``path`` that can be a journal?"""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ExportError(f"no journal at {path}", EX_NOINPUT) from None
    except OSError as exc:
        raise ExportError(f"cannot read the journal {path}: {exc.strerror}", EX_NOINPUT) from None
    if path.is_dir():
        raise ExportError(f"{path} is a directory: --journal names the journal file itself", EX_NOINPUT)
    if info.st_size == 0:
        raise ExportError(f"{path} is empty (0 bytes): not a journal", EX_DATAERR)


def _open_copy(path: Path, copy: Path):
    """A checked private copy of the journal at ``path`` (a :class:`rfid_table.service.journal.Journal`, open)."""
    from rfid_table.service.journal import Journal, JournalError  # noqa: PLC0415 (the CLI starts without SQLite work)

    try:
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            target = sqlite3.connect(copy)
            try:
                source.backup(target)
            finally:
                target.close()
        finally:
            source.close()
    except sqlite3.DatabaseError as exc:
        status = EX_NOINPUT if "unable to open" in str(exc) else EX_DATAERR
        raise ExportError(f"cannot read the journal {path}: {exc}", status) from None
    journal = Journal(copy)
    quiet = logging.getLogger("rfid_table.service.journal")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # its lines would name the private copy: the error below names the file
    try:
        check = journal.open()
    except JournalError as exc:
        raise ExportError(f"{path} is not a journal: {exc}".replace(str(copy), str(path)), EX_DATAERR) from None
    finally:
        quiet.setLevel(level)
    if not check.ok:
        journal.close()
        problems = "; ".join(check.problems).replace(str(copy), str(path))
        raise ExportError(f"the journal {path} is damaged: {problems}", EX_DATAERR)
    return journal


@dataclass
class _Hand:
    number: int
    history: dict[str, Any]  # the hand_history event's secure payload
    showdown: dict[str, Any]  # the showdown event's public payload: the pots and payouts
    folded: list[int]  # the hand_ended event's folded seats: a live hand mucked at the showdown is among them
    started_t: float | None
    started_wall: float | None

    def _replayed(self):
        """The journaled PHH record, the hand rebuilt from it, and the seats whose cards the table showed."""
        from controller import phh as phhlib  # noqa: PLC0415
        from controller.histories import tabled  # noqa: PLC0415

        text = self.history.get("phh_complete")
        if not text:
            raise ValueError(f"no PHH record to rebuild it from ({self.history.get('reason') or 'none journaled'})")
        phh = phhlib.loads(text)
        hand, hole, board, showdown = phhlib.replay(phh)
        payouts = {int(s): v for s, v in self.showdown.get("payouts", {}).items()}
        return phh, hand, hole, board, showdown, tabled(hand, showdown, self.folded, payouts)

    def _numbered(self, table_id: str) -> tuple[str, str, datetime | None]:
        """The table's name and the hand's number as the feed's copies have them, and the start of the hand."""
        from controller.histories import game_number  # noqa: PLC0415

        feed = self.history.get("ohh_complete", {}).get("ohh", {})
        started_t = self.started_t if self.started_t is not None else 0.0
        wall = self.started_wall if self.started_wall is not None else self.started_t
        return (feed.get("table_name") or table_id, feed.get("game_number") or game_number(table_id, started_t),
                datetime.fromtimestamp(wall, timezone.utc) if wall is not None else None)

    def phh(self, table_id: str, all_cards: bool) -> tuple[dict[str, Any], datetime | None]:
        """The hand's PHH fields, with the table's name and the hand's number (PHH's ``table``, ``hand``), and its
        start. Without ``all_cards``, the cards nobody showed are unknown (``????``) and a hand given up unseen at
        the showdown mucks (``sm`` without cards)."""
        phh, *_rebuilt, shown = self._replayed()
        fields = dict(phh)
        if not all_cards:
            seat_of = {f"p{k}": seat for k, seat in enumerate(phh["seats"], start=1)}
            actions = []
            for action in phh["actions"]:
                words = action.split()
                if words[:2] == ["d", "dh"] and seat_of[words[2]] not in shown:
                    action = f"d dh {words[2]} {'?' * len(words[3])}"
                elif words[1:2] == ["sm"] and seat_of[words[0]] not in shown:
                    action = f"{words[0]} sm"
                actions.append(action)
            fields["actions"] = actions
        table, number, started = self._numbered(table_id)
        return {**fields, "table": table, "hand": number}, started

    def record(self, table_id: str, all_cards: bool):
        from controller.histories import HandRecord  # noqa: PLC0415

        phh, hand, hole, board, showdown, shown = self._replayed()
        names = dict(zip(phh.get("seats", hand.order), phh.get("players", ())))  # PHH's optional player names
        if not all_cards:
            hole = {s: cards for s, cards in hole.items() if s in shown}
        table, number, started = self._numbered(table_id)
        size = self.history.get("ohh_complete", {}).get("ohh", {}).get("table_size") or max(10, max(hand.order))
        boards = [list(b) for b in self.showdown.get("boards", ())]  # a hand run twice, or a double board
        runs = self.showdown.get("runs", 1)
        pot_boards = [[(b["board"] - 1, {int(s): v for s, v in b["shares"].items()}) for b in p.get("boards", ())]
                      for p in self.showdown["pots"]]
        return HandRecord(
            hand, hole, boards[0] if boards else board, shown,
            [(p["amount"], {int(s): v for s, v in p["shares"].items()}) for p in self.showdown["pots"]],
            table, number, size, started, names,
            boards=boards, runs=runs, double_board=len(boards) > runs, pot_boards=pot_boards,
            pot_halves=[[{int(s): v for s, v in h["shares"].items()} for h in p.get("halves", ())]
                        or [{int(s): v for s, v in p["shares"].items()}] for p in self.showdown["pots"]]
            if any(p.get("halves") for p in self.showdown["pots"]) else (),
            board_halves=[[[{int(s): v for s, v in h["shares"].items()} for h in b.get("halves", ())]
                           for b in p.get("boards", ())] for p in self.showdown["pots"]])


def _hands(journal, progress: TextIO | None) -> Iterator[_Hand]:
    """The journal's finished hands in order, each with its pots and its start."""
    total, _limit = journal.usage()
    last = journal.last_seq()
    first = last - total + 1
    report = progress is not None and total >= PROGRESS_MIN_EVENTS
    next_tenth = 1
    starts: dict[int, tuple[float, float | None]] = {}
    showdowns: dict[int, dict] = {}
    folded: dict[int, list] = {}
    hands = 0
    seq = first - 1
    while True:
        events = journal.events_after(seq, READ_CHUNK)
        if not events:
            break
        for event in events:
            while report and next_tenth <= 10 and event.seq - first + 1 >= total * next_tenth / 10:
                print(f"  {next_tenth * 10}% of the journal read ({event.seq - first + 1} of {total} events), "
                      f"{hands} {'hand' if hands == 1 else 'hands'}", file=progress, flush=True)
                next_tenth += 1
            if event.hand is None:
                continue
            if event.type == "hand_started":
                starts[event.hand] = (event.t, event.wall)
            elif event.type == "hand_ended":
                folded[event.hand] = event.public.get("folded_seats", [])
            elif event.type == "showdown":
                showdowns[event.hand] = event.public
            elif event.type == "hand_history" and event.hand in showdowns:
                start = starts.pop(event.hand, (None, event.wall))
                hands += 1
                yield _Hand(event.hand, event.secret, showdowns.pop(event.hand), folded.pop(event.hand, []), start[0],
                            start[1])
        seq = events[-1].seq


# ---- the output -----------------------------------------------------------------------------------------


def _render(record, fmt: str) -> str:
    if fmt == "ohh":
        from controller.ohh import to_ohh  # noqa: PLC0415

        return json.dumps(to_ohh(record, internal_version=_version()), separators=(",", ":")) + "\n"
    from controller.pokerstars import to_pokerstars  # noqa: PLC0415

    return to_pokerstars(record)


def _phh_section(number: int, fields: dict[str, Any], started: datetime | None) -> str:
    """One hand of a ``.phhs`` file: a TOML table ``[number]`` of its PHH fields, dated as PHH dates a hand (its
    ``time`` a TOML time, which the table's PHH writer has no need for otherwise)."""
    from controller import phh as phhlib  # noqa: PLC0415

    text = phhlib.dumps(fields)
    if started is not None:
        text += (f"year = {started.year}\nmonth = {started.month}\nday = {started.day}\n"
                 f"time = {started:%H:%M:%S}\ntime_zone = \"UTC\"\n")
    return f"[{number}]\n{text}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("rfid-table")
    except PackageNotFoundError:
        return "0.1.0"


def _check_out_dir(out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ExportError(f"--out {out_dir} is a file, not a directory", EX_CANTCREAT) from None
    except OSError as exc:
        raise ExportError(f"cannot create --out {out_dir}: {exc.strerror}", EX_CANTCREAT) from None
    if not out_dir.is_dir():
        raise ExportError(f"--out {out_dir} is not a directory", EX_CANTCREAT)
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ExportError(f"cannot write into --out {out_dir}: permission denied", EX_CANTCREAT)


def _write_whole(path: Path, text: str) -> None:
    """Temp file, fsync, rename, fsync the directory: the file is there whole or not at all."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {exc.strerror}", EX_CANTCREAT) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rfid-table export", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
