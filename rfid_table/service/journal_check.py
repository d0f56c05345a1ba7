"""The journal's self-check, on an open connection: SQLite's ``quick_check``, every row's checksum, contiguous
seqs and input ids, delivery marks not beyond the last seq, and the inputs a replay needs.

One pass per table; each problem names the table and the row. :meth:`rfid_table.service.journal.Journal.self_check`
runs it at every start and refuses to publish from a journal that fails it. The connection must read with
``text_factory=bytes``: a flipped byte may leave invalid UTF-8, which counts as a mismatch, not a crash.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from rfid_table.service.journal_codec import COLUMNS, KEYS, crc


def quick_check(db: sqlite3.Connection) -> list[str]:
    """SQLite's own check of its b-trees, each problem with the table it is in."""
    try:
        rows = [row[0] for row in db.execute("PRAGMA quick_check(50)")]
    except sqlite3.DatabaseError as exc:
        return [f"quick_check could not run: {exc}"]
    if rows == [b"ok"]:
        return []
    # quick_check names b-trees by page ("Tree 4 page 9", "On tree page 3"): say which table a root page is.
    roots = {str(root): name.decode() for name, root in
             db.execute("SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0")}

    def name_tree(match: re.Match) -> str:
        table = roots.get(match.group(1))
        return f"{match.group(0)} (table {table})" if table else match.group(0)

    lines = (line for row in rows for line in row.decode(errors="replace").splitlines())
    return ["quick_check: " + re.sub(r"(?:Tree|tree page) (\d+)", name_tree, line)
            for line in lines if not line.startswith("*** in database")]


def check_rows(db: sqlite3.Connection) -> tuple[int, list[str]]:
    """Every table's checksums and keys, then the links between tables: (rows checked, problems)."""
    rows = 0
    problems: list[str] = []
    bounds: dict[str, tuple[int, int, int]] = {}
    for table in COLUMNS:
        checked, found, bounds[table] = _verify_table(db, table)
        rows += checked
        problems += found
    try:
        problems += _check_links(db, bounds)
    except sqlite3.DatabaseError as exc:
        problems.append(f"journal unreadable: {exc}")
    return rows, problems


def _verify_table(db: sqlite3.Connection, table: str) -> tuple[int, list[str], tuple[int, int, int]]:
    """Checksums, and contiguous keys for ``inputs`` and ``events``.

    Returns (rows checked, problems, (first key, last key, row count)).
    """
    columns = COLUMNS[table]
    key = KEYS[table]
    contiguous = table in ("inputs", "events")
    problems: list[str] = []
    first: Any = None  # a table's key: a seq, or a text
    previous: Any = None
    count = 0
    try:
        for row in db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {key}"):
            count += 1
            row_key = row[0].decode(errors="replace") if isinstance(row[0], bytes) else row[0]
            if crc(*row[:-1]) != row[-1]:
                problems.append(f"{table} row {row_key}: checksum mismatch")
            if contiguous:
                if previous is not None and row_key != previous + 1:
                    problems.append(f"{table}: {key} jumps from {previous} to {row_key} (rows missing)")
                first = row_key if first is None else first
            previous = row_key
    except sqlite3.DatabaseError as exc:
        where = f"after row {previous}" if previous is not None else "at its first row"
        problems.append(f"{table}: unreadable {where}: {exc}")
    return count, problems, (first or 0, previous if contiguous and previous else 0, count)


def _check_links(db: sqlite3.Connection, bounds: dict[str, tuple[int, int, int]]) -> list[str]:
    problems = []
    last_seq = bounds["events"][1]
    for feed, seq in db.execute("SELECT feed, seq FROM delivery"):
        if isinstance(seq, int) and seq > last_seq:
            problems.append(f"delivery row {feed.decode(errors='replace')}: "
                            f"acknowledged seq {seq} beyond the last journaled {last_seq}")
    # Replay needs every input after the latest checkpoint (or every input at all, without one).
    cp = db.execute("SELECT id, input_id FROM checkpoints ORDER BY id DESC LIMIT 1").fetchone()
    first_input, last_input, n_inputs = bounds["inputs"]
    base = cp[1] if cp else 0
    if n_inputs and first_input > base + 1:
        where = f"checkpoint {cp[0]} covers up to input {base}" if cp else "there is no checkpoint"
        problems.append(f"inputs: first retained is {first_input} but {where} (inputs missing)")
    if cp and isinstance(cp[1], int) and cp[1] > max(last_input, base):
        problems.append(f"checkpoints row {cp[0]}: input {cp[1]} beyond the last input {last_input}")
    return problems
