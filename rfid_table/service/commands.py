"""Commands to the table over MQTT: parsed and validated before anything is touched.

A command arrives on ``<prefix>/<table>/commands/<role>/<user>`` (the broker's ACL lets a user write only
under its own role and name, so the topic says who sent it) as a JSON object::

    {"id": "c-17", "command": "select_deck", "deck": "B"}

and is answered on ``<prefix>/<table>/replies/<role>/<user>`` with ``{"id": ..., "ok": true}`` or
``{"id": ..., "ok": false, "field": ..., "error": ...}``. A malformed or unauthorised command changes nothing.

Which commands exist, who may send them and their fields: ``schemas/command.schema.json``, the published schema;
:data:`COMMANDS` is read from it, and every command is validated against it. Nothing a client sends makes the parser
raise anything but :class:`CommandError`: bad UTF-8, deep nesting, duplicate keys, floats or huge numbers where
integers belong, NaN and Infinity all become a refusal naming the field. Whether the table's state allows a command
is the controller's answer (``GameController.handle_command``).
"""

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator, validators

from rfid_table.package_data import SCHEMA_DIR

MAX_PAYLOAD = 4096
MAX_DEPTH = 8  # commands nest 2 deep (a command, its stacks); json.loads recurses once per level
MAX_USER = 128  # characters of the user in a command's topic
ROLES = ("floor", "dealer")
SCHEMA_FILE = "command.schema.json"
_PY_TYPES = {"string": str, "integer": int, "array": list, "object": dict}


SCHEMA: dict = json.loads((SCHEMA_DIR / SCHEMA_FILE).read_text())  # the published one, shipped in the package
# JSON Schema's "integer" takes 3.0; a seat or an amount must be written as an integer.
_StrictValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", lambda _checker, value: type(value) is int))
# Once the command is known, its own definition is all that applies (as the schema's if/then says): faster than
# the whole schema.
_BY_COMMAND = {name: _StrictValidator({**SCHEMA["$defs"][name], "$defs": SCHEMA["$defs"]})
               for name in SCHEMA["properties"]["command"]["enum"]}
_ID_VALIDATOR = _StrictValidator(SCHEMA["$defs"]["command_id"])


def resolve_ref(prop: dict) -> dict:
    """A property's schema with its local $ref followed (the property's own keywords win)."""
    if "$ref" in prop:
        target = SCHEMA
        for part in prop["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return {**resolve_ref(target), **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


def _expected(prop: dict) -> str:
    """What a field must hold, for people, from its schema: "chips (an integer from 1 to 1,000,000,000)"."""
    prop = resolve_ref(prop)
    what = prop.get("description", "").rstrip(".")
    what = what[:1].lower() + what[1:]
    if "enum" in prop:
        limits = "one of " + ", ".join(map(str, prop["enum"]))
    elif prop.get("type") == "integer" and "maximum" in prop:
        limits = f"an integer from {prop.get('minimum', 0):,} to {prop['maximum']:,}"
    elif prop.get("type") == "string" and "maxLength" in prop:
        limits = f"{prop.get('minLength', 0)} to {prop['maxLength']} characters"
    else:
        limits = ""
    return f"{what} ({limits})" if what and limits else what or limits


def _type_of(prop: dict) -> type:
    prop = resolve_ref(prop)
    return _PY_TYPES[prop["type"]] if "type" in prop else type(prop["enum"][0])


def _commands_from_schema() -> dict[str, tuple[tuple[str, ...], dict[str, tuple[type, bool, str]]]]:
    commands = {}
    for name in SCHEMA["properties"]["command"]["enum"]:
        definition = SCHEMA["$defs"][name]
        fields = {key: (_type_of(prop), key in definition["required"], _expected(prop))
                  for key, prop in definition["properties"].items() if key not in ("id", "command")}
        if "x-roles" not in definition:
            raise KeyError(f"{SCHEMA_FILE}: $defs/{name} has no x-roles (the roles that may send {name})")
        commands[name] = (tuple(definition["x-roles"]), fields)
    return commands


# command → (roles allowed, {field: (type, required, what it must hold)}): read from the published schema, whose
# "x-roles" says who may send each command.
COMMANDS = _commands_from_schema()


def loggable(text: object) -> str:
    """A value from the network, fit for one log line: control characters and line breaks escaped."""
    return repr(str(text))[1:-1]


@dataclass(frozen=True)
class AdmittedCommand:
    """A command from the network that passed the gate (retain flag, rate limit, parser): who sent it and what it
    asks. :meth:`as_input` is the body the journal keeps and the controller turns into its own
    ``controller.commands.Command``."""

    id: str
    role: str
    user: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def as_input(self) -> dict[str, Any]:
        """What the journal keeps and the controller is fed."""
        return {"id": self.id, "role": self.role, "user": self.user, "command": self.name, **self.args}


class CommandError(ValueError):
    """A command the table refuses before it is applied. ``kind``: why, for the counters in diagnostics —
    ``malformed`` (the parser's or the schema's refusal), ``retained`` or ``rate_limited``."""

    def __init__(self, field: str, message: str, command_id: str | None = None, kind: str = "malformed"):
        field = field or "payload"  # a key "" names no field a client could find
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.command_id = command_id
        self.kind = kind


def sender(topic: str, base: str) -> tuple[str, str] | None:
    """(role, user) from a command topic, or None when it is not one."""
    parts = topic[len(base) + 1:].split("/") if topic.startswith(base + "/") else []
    if len(parts) >= 3 and parts[0] == "commands":
        return parts[1], parts[2]
    return None


class _Refused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    body = {}
    for key, value in pairs:
        if key in body:  # json.loads would keep the last: which one the sender meant is anybody's guess
            raise _Refused(key, "given twice")
        body[key] = value
    return body


def _depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest, without recursing (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _bad_string(value: Any, path: str) -> str | None:
    """The path of the first string (key or value) that is no text (a lone surrogate from a \\ud800 escape)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
    elif isinstance(value, list):
        for item in value:
            if (bad := _bad_string(item, path)) is not None:
                return bad
    elif isinstance(value, dict):
        for key, item in value.items():
            if (bad := _bad_string(key, path or key) or _bad_string(item, path or key)) is not None:
                return bad
    return None


def read_body(payload: bytes) -> dict:
    """The payload as a JSON object, or :class:`CommandError` (field ``payload``, or the key at fault)."""
    if len(payload) > MAX_PAYLOAD:
        raise CommandError("payload", f"{len(payload)} bytes, expected at most {MAX_PAYLOAD}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError("payload", f"not UTF-8 text (byte {exc.start})") from None
    if _depth(text) > MAX_DEPTH:  # before json.loads, which would recurse into it
        raise CommandError("payload", f"nested more than {MAX_DEPTH} deep")
    try:
        body = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Refused as exc:
        raise CommandError(exc.field, str(exc)) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or an integer past Python's digit limit
        raise CommandError("payload", f"not a JSON object ({exc})") from None
    if not isinstance(body, dict):
        raise CommandError("payload", "expected a JSON object")
    bad = _bad_string(body, "")
    if bad is not None:
        raise CommandError(bad or "payload", "not UTF-8 text (a lone surrogate escape)",
                           None if bad == "id" else command_id_of(body))
    return body


def command_id_of(body: dict) -> str | None:
    """The command's id when it is a valid one (to echo in a reply), else None."""
    command_id = body.get("id")
    return command_id if _ID_VALIDATOR.is_valid(command_id) else None


def _shown(value: Any) -> str:
    return json.dumps(value)[:40]


def schema_refusal(body: dict, name: str, command_id: str) -> CommandError | None:
    """The schema's first complaint, on the field it concerns (in the order of the body, missing fields last)."""
    fields = COMMANDS[name][1]
    order = list(body)
    found: list[tuple[int, CommandError]] = []
    for error in _BY_COMMAND[name].iter_errors(body):
        path = list(error.absolute_path)
        if path:
            key = str(path[0])
            what = fields[key][2] if key in fields else "?"
            found.append((order.index(key), CommandError(key, f"expected {what}, got {_shown(body[key])}",
                                                         command_id)))
        elif error.validator == "required":
            for key in error.validator_value:
                if key not in body:
                    found.append((len(order), CommandError(key, f"missing (expected {fields[key][2]})", command_id)))
        elif error.validator == "additionalProperties":
            for key in body:
                if key not in ("id", "command") and key not in fields:
                    found.append((order.index(key), CommandError(
                        key, f"unknown field for {name} (expected: {', '.join(fields) or 'none'})", command_id)))
        else:
            found.append((len(order), CommandError("payload", error.message[:200], command_id)))
    return min(found, key=lambda pair: pair[0])[1] if found else None


# A player's display name goes on screen as it is: the schema's rule, read whole (fullmatch: the pattern's "$"
# would let a final newline through), with a message that says which character is wrong.
_NAME_SCHEMA = SCHEMA["$defs"]["player_name"]
_NAME = re.compile(_NAME_SCHEMA["pattern"].removeprefix("^").removesuffix("$"))


def name_problem(name: str) -> str | None:
    """What is wrong with a player's display name, or None."""
    if not _NAME_SCHEMA["minLength"] <= len(name) <= _NAME_SCHEMA["maxLength"]:
        return f"{len(name)} characters"
    if not _NAME.fullmatch(name):
        bad = next((ch for ch in name if ch != " " and not _NAME.fullmatch(ch)), None)
        return f"the character {bad!r} is not allowed" if bad else "leading, trailing or double spaces"
    return None


def _name_refusal(body: dict, command_id: str) -> CommandError | None:
    name = body.get("name")
    problem = name_problem(name) if isinstance(name, str) else None
    if problem is None:
        return None
    return CommandError("name", f"{problem} (expected {COMMANDS['seat_player'][1]['name'][2]})", command_id)


def parse_command(topic: str, payload: bytes, base: str, seats: int, decks: tuple[str, ...]) -> AdmittedCommand:
    """The validated command, or :class:`CommandError` naming the field that is wrong.

    The payload is checked against the published schema (``schemas/command.schema.json``), then against what only
    the table knows: its seats and decks. Nothing the network sends raises anything else."""
    who = sender(topic, base)
    if who is None:
        raise CommandError("topic", f"expected {base}/commands/<role>/<user>")
    role, user = who
    if len(user) > MAX_USER:
        raise CommandError("topic", f"a user of {len(user)} characters, expected at most {MAX_USER}")
    body = read_body(payload)
    command_id = command_id_of(body)
    if command_id is None:
        raise CommandError("id", "expected a string of 1 to 64 characters (it is echoed in the reply)")
    name = body.get("command")
    if not isinstance(name, str) or name not in COMMANDS:
        raise CommandError("command", f"expected one of {', '.join(COMMANDS)}", command_id)
    roles, _fields = COMMANDS[name]
    if role not in roles:
        raise CommandError("role", f"{role!r} may not send {name} (allowed: {', '.join(roles)})", command_id)
    refusal = schema_refusal(body, name, command_id)
    if refusal is not None and refusal.field == "name":
        raise _name_refusal(body, command_id) or refusal
    if refusal is not None:
        raise refusal
    if "name" in body and (refusal := _name_refusal(body, command_id)) is not None:
        raise refusal
    args = {key: value for key, value in body.items() if key not in ("id", "command")}
    if "seat" in args and not 1 <= args["seat"] <= seats:
        raise CommandError("seat", f"no seat {args['seat']}: the table has seats 1 to {seats}", command_id)
    if "deck" in args and args["deck"] not in decks:
        raise CommandError("deck", f"no deck {args['deck']!r} (decks: {', '.join(decks)})", command_id)
    if "seats" in args:
        if len(args["seats"]) > seats:
            raise CommandError("seats", f"expected 2 to {seats} different seat numbers, got {_shown(args['seats'])}",
                               command_id)
        wrong = [s for s in args["seats"] if not 1 <= s <= seats]
        if wrong:
            raise CommandError("seats", f"no seat {wrong[0]}: the table has seats 1 to {seats}", command_id)
    for key in args.get("stacks", {}):
        # the schema's pattern, as Python's re reads it, lets a final newline through ("3\n")
        if not (key.isascii() and key.isdigit() and 1 <= int(key) <= seats):
            raise CommandError("stacks", f"no seat {key!r}: the table has seats 1 to {seats}", command_id)
    return AdmittedCommand(command_id, role, user, name, args)


class CommandRateLimit:
    """At most ``per_s`` commands a second from each sender (role and user), in bursts of up to ``burst``: a
    token bucket on the monotonic ``clock``. A login that sends thousands a second gets refusals, and the journal
    only what the limit lets through."""

    PER_S = 10.0
    BURST = 40
    MAX_SENDERS = 1024  # buckets kept; full ones are dropped past this (they are as good as new)

    def __init__(self, per_s: float = PER_S, burst: int = BURST, clock: Callable[[], float] = time.monotonic):
        self.per_s, self.burst, self.clock = per_s, burst, clock
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # sender → (tokens, at)

    def allow(self, who: tuple[str, str]) -> bool:
        now = self.clock()
        tokens, at = self._buckets.get(who, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, now - at) * self.per_s)
        allowed = tokens >= 1.0
        self._buckets[who] = (tokens - 1.0 if allowed else tokens, now)
        if len(self._buckets) > self.MAX_SENDERS:
            self._buckets = {s: (t, a) for s, (t, a) in self._buckets.items()
                             if t + (now - a) * self.per_s < self.burst}
            if len(self._buckets) > self.MAX_SENDERS:  # that many busy senders: keep the latest half
                latest = sorted(self._buckets.items(), key=lambda item: item[1][1])[-(self.MAX_SENDERS // 2):]
                self._buckets = dict(latest)
        return allowed

    @property
    def senders(self) -> int:
        """How many senders' buckets are kept (bounded by MAX_SENDERS, whatever the number of users)."""
        return len(self._buckets)


class CommandGate:
    """What every command from the network passes before the controller sees it: the retain flag, the rate limit
    and :func:`parse_command`. Raises :class:`CommandError` (with its ``kind``) for what it refuses."""

    def __init__(self, base: str, rate_limit: CommandRateLimit | None = None):
        self.base = base
        self.rate_limit = rate_limit or CommandRateLimit()

    def admit(self, topic: str, payload: bytes, retained: bool, seats: int, decks: tuple[str, ...]) -> AdmittedCommand:
        who = sender(topic, self.base)
        if who is not None and not self.rate_limit.allow(who):
            raise CommandError("rate", f"more than {self.rate_limit.per_s:g} commands a second from "
                               f"{'/'.join(who)}: refused, send again later", _id_or_none(payload), "rate_limited")
        if retained:
            # A retained command would be delivered again at every start and reconnection of the table.
            raise CommandError("retain", "a command must not be published retained (it would run again at every "
                               "restart of the table): not executed; clear the retained message and send it "
                               "without the retain flag", _id_or_none(payload), "retained")
        return parse_command(topic, payload, self.base, seats, decks)


def _id_or_none(payload: bytes) -> str | None:
    try:
        return command_id_of(read_body(payload))
    except CommandError:
        return None
