"""Reading and checking the project's TOML files: the table configuration, the chip registry, deck lists.

Every problem is reported, not just the first, each as ``FILE:LINE: key.path: what is wrong (what was
expected)``. :func:`read_config_text` reads a file (bounded, never blocking on a FIFO), :func:`parse_toml`
parses it (a syntax error names its key and line), and a :class:`Checker` collects the problems found while
walking the document, each with the line its key is written on, so a technician can go straight to it.
:class:`ConfigError` carries them all.
"""

import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


def describe_value(value: Any) -> str:
    """A configuration value of the wrong type as an error message names it: "a table", "a list", "str 'x'"."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


# What a configuration, a chip registry or a TLS file may be: the largest real one (a registry of tens of
# thousands of chips) is well under a megabyte, and a bound keeps /dev/zero or a runaway file from eating the RAM.
MAX_FILE_BYTES = 8 * 1024 * 1024
# Tables within tables: a real configuration goes four deep ([zones] seat1.cards = { ... }); a parsed document
# deeper than this is refused before anything walks it (a walk would run out of stack).
MAX_NESTING = 32
_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))


@dataclass(frozen=True)
class Problem:
    key: str
    message: str
    line: int | None = None
    column: int | None = None

    def render(self, path: str) -> str:
        where = path if self.line is None else f"{path}:{self.line}" + (f":{self.column}" if self.column else "")
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ConfigError(Exception):
    def __init__(self, path: str, problems: list[Problem]):
        self.path = path
        self.problems = problems
        super().__init__("\\n".join(p.render(path) for p in problems))


# ---- locating keys in the file --------------------------------------------------------------------------

TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")
_PART = re.compile(r"[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'")


def split_key(text: str) -> tuple[str, ...]:
    return tuple(p.strip("\"'") for p in _PART.findall(text))


def _written_keys(text: str):
    """Yield (line, key path) for every table header and key written in the file.

    Lines are counted as the TOML parser counts them: only "\n" ends one (``str.splitlines`` would also
    split at U+0085, U+2028 and U+2029, which TOML allows in comments and strings).
    """
    table: tuple[str, ...] = ()
    arrays: dict[tuple[str, ...], int] = {}  # [[x]] headers so far: each entry is x.1, x.2, … (the tournament levels)
    for number, line in enumerate(text.split("\n"), start=1):
        header = TOML_HEADER.match(line)
        if header:
            table = split_key(header.group(1))
            if line.lstrip().startswith("[["):
                arrays[table] = arrays.get(table, 0) + 1
                table = table + (str(arrays[table]),)
            yield number, table
            continue
        key = _KEY.match(line)
        if key:
            yield number, table + split_key(key.group(1))


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map every key path written in the file to the line it is on (first occurrence)."""
    lines: dict[tuple[str, ...], int] = {}
    for number, path in _written_keys(text):
        for i in range(1, len(path) + 1):
            lines.setdefault(path[:i], number)
    return lines


def _key_at(text: str, line: int | None) -> str:
    """The key path written on a line ('' if none), to name the key of a TOML syntax error."""
    return next((".".join(path) for number, path in _written_keys(text) if number == line), "")


# ---- validation ---------------------------------------------------------------------------------------


class Checker:
    """Collects problems while reading the parsed document."""

    def __init__(self, text: str):
        self.problems: list[Problem] = []
        self._lines = _key_lines(text)

    def line_of(self, path: tuple[str, ...]) -> int | None:
        for i in range(len(path), 0, -1):
            if path[:i] in self._lines:
                return self._lines[path[:i]]
        return None

    def problem(self, path: tuple[str, ...], message: str) -> None:
        self.problems.append(Problem(".".join(path), message, self.line_of(path)))

    def table(self, doc: dict, path: tuple[str, ...], allowed: dict[str, str], required: tuple[str, ...] = ()) -> dict:
        """Check a TOML table's keys: unknown ones and missing required ones are problems."""
        value = _get(doc, path)
        if value is None:
            if required:
                self.problem(path, f"missing table [{'.'.join(path)}] (expected keys: {', '.join(allowed)})")
            return {}
        if not isinstance(value, dict):
            self.problem(path, f"expected a table, got {describe_value(value)}")
            return {}
        for key in value:
            if key not in allowed:
                self.problem(path + (key,), f"unknown key (expected one of: {', '.join(allowed)})")
        for key in required:
            if key not in value:
                self.problem(path + (key,), f"missing (expected {allowed[key]})")
        return value

    def section(self, doc: dict, key: str, what: str) -> dict | None:
        """The top-level table ``key`` holding named tables; None (reported) when it is missing or not a table."""
        value = doc.get(key)
        if isinstance(value, dict) and value:
            return value
        if value is None or value == {}:
            self.problem((key,), f"missing: {what}")
        else:
            self.problem((key,), f"expected {what}, got {describe_value(value)}")
        return None

    def value(self, table: dict, path: tuple[str, ...], kind: type | tuple, what: str, default: Any = None, check=None):
        """Read ``table[path[-1]]``: its type must be ``kind`` and ``check(value)`` must hold."""
        key = path[-1]
        if key not in table:
            return default
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            self.problem(path, f"expected {what}, got {describe_value(value)}")
            return default
        if check is not None and not check(value):
            self.problem(path, f"expected {what}, got {value!r}")
            return default
        return value


def _get(doc: dict, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


class UnreadableFile(OSError):
    """A file that is not a regular file, or is larger than :data:`MAX_FILE_BYTES`."""


def read_bounded(path: str | Path) -> bytes:
    """A whole regular file of at most :data:`MAX_FILE_BYTES`. A FIFO, device or socket is refused without
    waiting for a writer (O_NONBLOCK) and without reading it: check-config must end, whatever the path names."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "it is a directory", str(path))
        kind = next((what for test, what in _NOT_REGULAR if test(mode)), None)
        if kind is not None or not stat.S_ISREG(mode):
            raise UnreadableFile(f"not a regular file ({kind or 'not a file'})")
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableFile(f"larger than {MAX_FILE_BYTES:,} bytes")
    return data


def read_config_text(path: str) -> str:
    """The UTF-8 text of a configuration or registry file; every reason it cannot be read is a ConfigError."""
    try:
        return read_bounded(path).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(path, [Problem("", "cannot read the file: it does not exist")]) from None
    except PermissionError:
        raise ConfigError(path, [Problem("", "cannot read the file: permission denied")]) from None
    except IsADirectoryError:
        raise ConfigError(path, [Problem("", "cannot read the file: it is a directory")]) from None
    except UnreadableFile as exc:
        raise ConfigError(path, [Problem("", f"cannot read the file: {exc}")]) from None
    except UnicodeDecodeError as exc:  # exc.object: the file's bytes
        line = exc.object.count(b"\n", 0, exc.start) + 1
        column = exc.start - exc.object.rfind(b"\n", 0, exc.start)
        message = f"cannot read the file: byte 0x{exc.object[exc.start]:02X} is not UTF-8 (expected UTF-8 text)"
        raise ConfigError(path, [Problem("", message, line, column)]) from None
    except OSError as exc:
        raise ConfigError(path, [Problem("", f"cannot read the file: {exc.strerror}")]) from None


def _nesting(doc: dict) -> int:
    """How deep tables and arrays go (iteratively: the document may be deeper than the stack)."""
    deepest, todo = 0, [(doc, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            break
        children = node.values() if isinstance(node, dict) else node
        todo.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _twice_in_config(key: str) -> str:
    return "a key written twice — a tag UID listed twice in a deck?" if key.startswith("decks.") \
        else "a key written twice?"


def parse_toml(path: str, text: str, twice: Callable[[str], str] = _twice_in_config) -> dict:
    """The parsed document; invalid TOML, or nesting deeper than :data:`MAX_NESTING`, is a ConfigError.
    ``twice(key)``: the likely cause of a key written twice, for the message."""
    too_deep = ConfigError(path, [Problem("", f"not valid TOML: nested too deeply (at most {MAX_NESTING} levels "
                                              f"of tables and arrays)")])
    try:
        doc = tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise too_deep from None
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        line, column = (int(match.group(1)), int(match.group(2))) if match else (None, None)
        key = _key_at(text, line)
        if "overwrite" in message:
            message += f" ({twice(key)})"
        raise ConfigError(path, [Problem(key, f"not valid TOML: {message}", line, column)]) from None
    if _nesting(doc) > MAX_NESTING:
        raise too_deep
    return doc
