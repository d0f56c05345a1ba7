"""``rfid-table command``: one command to the table from a shell, its reply, and an exit status a script can act on.

    rfid-table command --config table.toml --username floor-1 seat_player seat=3 name="Anna Müller"

The values are typed from the published schema (``schemas/command.schema.json``, as the table reads it: see
:mod:`rfid_table.service.commands`): ``seat=3`` is an integer because a seat is one, ``seats=1,2,3`` an array,
``stacks.3=12000`` an entry of an object. A command the schema refuses, or one the role may not send, is refused
here and never sent (exit 2); what only the table knows (its seats, its decks, the state of the hand) is the
table's answer (exit 1).

The command goes to ``<prefix>/<table>/commands/<role>/<user>`` and its reply comes on ``replies/<role>/<user>``,
where the tool subscribed before publishing, matched by the command's ``id``. Exit statuses: 0 accepted, 1 refused
by the table, 2 refused here (a bad key or value, a role that may not send the command), 77 the broker refused the
login or the command, 69 no reply in time, 78 a bad configuration.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import getpass
import json
import re
import shlex
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

from rfid_table.config.table import EX_CONFIG, ConfigError, MqttSettings, load_config
from rfid_table.mqtt import make_client
from rfid_table.ops.broker_login import (EX_NOPERM, EX_UNAVAILABLE, PASSWORD_HELP, LinkState, LoginError,
                                         connect_viewer, refused_text, with_login)
from rfid_table.service.commands import (COMMANDS, ROLES, SCHEMA, CommandError, resolve_ref, schema_refusal,
                                         name_problem)
from rfid_table.service.contract import QOS, Topics, without_controls

PROG = "rfid-table command"
EX_USAGE = 2  # sysexits.h and argparse: the command line is wrong
ACCEPTED, REFUSED = 0, 1
DEFAULT_TIMEOUT_S = 10.0
_INTEGER = re.compile(r"-?[0-9]{1,20}")  # ASCII digits only: int() would take "٣", "1_000" and " 3"
_TOPIC_LEVEL = re.compile(r"[^/+#\x00]+")


class UsageError(ValueError):
    """The command as typed cannot be sent: it names the key and what the schema expects (exit 2)."""


# ---- typing key=value from the schema --------------------------------------------------------------------------

def _kind(prop: dict) -> str | None:
    """The JSON type a property holds: its ``type``, or the type its ``enum``/``const`` values share."""
    prop = resolve_ref(prop)
    declared = prop.get("type")
    if isinstance(declared, list):  # ["integer", "null"]: null cannot be typed on a command line
        declared = next((t for t in declared if t != "null"), None)
    if declared:
        return declared
    values = prop.get("enum", [prop["const"]] if "const" in prop else [])
    if values and all(type(v) is int for v in values):
        return "integer"
    if values and all(isinstance(v, str) for v in values):
        return "string"
    return None


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:40] + "…")


def _scalar(raw: str, prop: dict, where: str, expected: str) -> Any:
    kind = _kind(prop)
    if kind == "integer":
        if not _INTEGER.fullmatch(raw):
            what = expected if "integer" in expected else f"an integer ({expected})"
            raise UsageError(f"{where}: expected {what}, got {_shown(raw)}")
        return int(raw)
    if kind == "string":
        return raw
    raise UsageError(f"{where}: a {kind or 'value of this kind'} cannot be given as key=value")


def _member(prop: dict, key: str) -> dict | None:
    """The schema of an object's entry ``key``: its property, the pattern it matches, or the first pattern's (the
    schema then refuses the key, with its own words)."""
    prop = resolve_ref(prop)
    if key in prop.get("properties", {}):
        return prop["properties"][key]
    patterns = prop.get("patternProperties", {})
    for pattern, member in patterns.items():
        if re.search(pattern, key):
            return member
    if isinstance(prop.get("additionalProperties"), dict):
        return prop["additionalProperties"]
    return next(iter(patterns.values()), None)


def _fields_text(name: str) -> str:
    fields = COMMANDS[name][1]
    if not fields:
        return f"{name} takes no fields"
    return f"{name} takes " + ", ".join(key if required else f"{key} (optional)"
                                        for key, (_type, required, _what) in fields.items())


def build_command(name: str, pairs: Sequence[str], role: str = "floor") -> dict:
    """The command's body from ``NAME key=value ...``, typed from the schema and checked against it as the table
    will; :class:`UsageError` names the key at fault and what it must hold. ``id`` is made unless given."""
    if name not in COMMANDS:
        close = difflib.get_close_matches(name, COMMANDS, 1)
        raise UsageError(f"unknown command {name!r}" + (f": did you mean {close[0]}?" if close else "")
                         + f" (commands: {', '.join(COMMANDS)})")
    roles, fields = COMMANDS[name]
    if role not in roles:
        raise UsageError(f"{name}: the role {role} may not send it; the roles that may: {', '.join(roles)} "
                         f"(--role {roles[0]})")
    definition = SCHEMA["$defs"][name]["properties"]
    body: dict[str, Any] = {}
    for pair in pairs:
        key, equals, raw = pair.partition("=")
        if not equals or not key:
            raise UsageError(f"{pair!r}: expected key=value, like seat=3 ({_fields_text(name)})")
        top, dot, member = key.partition(".")
        if top == "command":
            raise UsageError(f"{key}: the command is the first argument ({name}), not a field")
        if top != "id" and top not in fields:
            raise UsageError(f"{top}: unknown field for {name} ({_fields_text(name)})")
        expected = fields[top][2] if top in fields else "the command's id, 1 to 64 characters"
        kind = _kind(definition[top])
        if kind == "object":
            if not dot or not member:
                raise UsageError(f"{key}: give each entry as {top}.KEY=VALUE ({expected})")
            entries = body.setdefault(top, {})
            if member in entries:
                raise UsageError(f"{key}: given twice")
            entries[member] = _scalar(raw, _member(definition[top], member) or {}, key, expected)
            continue
        if dot:
            raise UsageError(f"{key}: {top} has no entries; give {top}=VALUE ({expected})")
        if top in body:
            raise UsageError(f"{top}: given twice")
        if kind == "array":
            items = resolve_ref(definition[top]).get("items", {})
            body[top] = [_scalar(item, items, top, f"{expected}, given as {top}=1,2,3")
                         for item in raw.split(",")] if raw else []
        else:
            body[top] = _scalar(raw, definition[top], top, expected)
    command_id = body.pop("id", f"cli-{uuid.uuid4().hex[:12]}")
    if not 1 <= len(command_id) <= 64:
        raise UsageError(f"id: expected 1 to 64 characters (it is echoed in the reply), got {len(command_id)}")
    body = {"id": command_id, "command": name, **body}
    refusal: CommandError | None = schema_refusal(body, name, command_id)
    problem = name_problem(body["name"]) if isinstance(body.get("name"), str) else None
    if problem and (refusal is None or refusal.field == "name"):  # the table's own words for a display name
        refusal = CommandError("name", f"{problem} (expected {fields['name'][2]})")
    if refusal is not None:
        raise UsageError(f"{refusal.field}: {refusal.message}")
    return body


# ---- sending it ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    status: int  # the exit status
    reply: dict | None = None
    message: str | None = None  # for stderr


def topic_user(settings: MqttSettings) -> str:
    """The user of the command's topic: the login (the card room's ACL lets it write under its own name only), or,
    on a broker without logins, who runs the tool."""
    if settings.username:
        return settings.username
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container)
        name = ""
    return name if _TOPIC_LEVEL.fullmatch(name) else "console"


def send_command(settings: MqttSettings, table_id: str, role: str, body: dict, timeout_s: float) -> Outcome:
    """Publish ``body`` to the table and wait for its reply, at most ``timeout_s`` in all (connecting included)."""
    topics = Topics.for_table(settings.topic_prefix, table_id)
    user = topic_user(settings)
    if not _TOPIC_LEVEL.fullmatch(user):
        return Outcome(EX_USAGE, message=f"the user name {user!r} cannot be a topic level (no '/', '+' or '#')")
    command_topic = f"{topics.base}/commands/{role}/{user}"
    reply_topic = topics.reply(role, user)
    link = LinkState(settings.host, settings.port)
    done, changed, stop = threading.Event(), threading.Event(), threading.Event()
    state: dict[str, Any] = {"published": None, "status": None, "outcome": None}
    client = make_client(settings, f"rfid-table-command-{time.monotonic_ns() % 10**9}")

    def finish(outcome: Outcome) -> None:
        if state["outcome"] is None:
            state["outcome"] = outcome
        done.set()

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            link.refused = refused_text(reason_code)
            finish(Outcome(EX_NOPERM, message=f"{link.refused} (user {settings.username or '(none)'} at "
                                              f"{settings.host}:{settings.port})"))
            return
        link.connected = True
        # the reply topic before the command goes out, so the reply cannot come first; the status says why none
        # comes
        client.subscribe([(reply_topic, QOS), (topics.status, QOS)])

    def on_subscribe(client, userdata, mid, reason_codes, properties):
        if reason_codes[0].is_failure:
            finish(Outcome(EX_NOPERM, message=f"the broker refused the subscription to {reply_topic}: "
                                              f"{reason_codes[0]} (user {user})"))
        elif state["published"] is None:
            state["published"] = client.publish(command_topic, json.dumps(body).encode(), qos=QOS, retain=False)

    def on_publish(client, userdata, mid, reason_code, properties):
        if reason_code.is_failure:  # the ACL: this login may not write there
            finish(Outcome(EX_NOPERM, message=f"the broker refused the command: {reason_code}: its ACL does not "
                                              f"let {user} write {command_topic} (is {user} a {role} user of the "
                                              f"card room, for this table?)"))

    def on_message(client, userdata, message):
        if message.topic == topics.status:
            state["status"] = message.payload.decode(errors="replace")
            return
        try:
            reply = json.loads(message.payload)
        except ValueError:
            return
        if isinstance(reply, dict) and reply.get("id") == body["id"]:
            finish(Outcome(ACCEPTED if reply.get("ok") is True else REFUSED, reply))

    def on_disconnect(client, userdata, flags, reason_code, properties):
        link.connected = False
        if state["published"] is not None and not done.is_set():
            # paho would send it again after reconnecting: a second command, not the first one's reply
            finish(Outcome(EX_UNAVAILABLE, message=(
                f"lost the connection to the broker before the reply came ({reason_code}"
                + (f"; another connection logged in as {user}? the broker lets each user in once" if
                   settings.username else "") + "): the command may have been applied; look before sending it again")))

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_publish = on_publish
    client.on_message = on_message
    client.on_disconnect = on_disconnect
    connect_viewer(client, settings, link, changed, stop, retry_s=0.5)
    try:
        if not done.wait(timeout_s):
            finish(Outcome(EX_UNAVAILABLE, message=_no_reply(link, state, topics, command_topic, timeout_s)))
    finally:
        stop.set()
        client.disconnect()
        client.loop_stop()
    return state["outcome"]


def _no_reply(link: LinkState, state: dict, topics: Topics, command_topic: str, timeout_s: float) -> str:
    if not link.connected and state["published"] is None:
        why = f": {link.unreachable}" if link.unreachable else ""
        return (f"could not reach the broker at {link.host}:{link.port} in {timeout_s:g} s{why} (is Mosquitto "
                "running there, and are host and port right?)")
    if state["published"] is None:
        return f"connected to the broker, but could not send the command in {timeout_s:g} s"
    status = state["status"]
    if status == "offline":
        why = f"the table {topics.base} is offline (its daemon stopped or lost the broker)"
    elif status == "online":
        why = f"the table {topics.base} is online but did not answer (a daemon too old for commands, or too busy)"
    else:
        why = (f"nothing is known of the table {topics.base} on this broker: is its daemon running against this "
               "broker, with this table id and topic prefix?")
    return f"no reply in {timeout_s:g} s to the command sent on {command_topic}: {why}"


# ---- the command line ----------------------------------------------------------------------------------------

def _epilog() -> str:
    lines = ["commands [the roles that may send them]: their fields, as key=value"]
    for name, (roles, _fields) in COMMANDS.items():
        lines.append(f"  {name} [{', '.join(roles)}]: {_fields_text(name).split(' takes ', 1)[1]}")
    paragraphs = [
        "Values are typed from schemas/command.schema.json: seat=3 (an integer), name=\"Anna Müller\" (a string), "
        "seats=1,2,3 (an array), stacks.3=12000 (an entry of an object). id=... sets the command's id (made "
        "otherwise).",
        "Exit status: 0 accepted, 1 refused by the table (the field and the reason on stderr), 2 refused before "
        "sending (a bad key or value, a role that may not send the command), 77 the broker refused the login or "
        "the command, 69 no reply in time, 78 a bad configuration.",
        PASSWORD_HELP]
    return "\n".join(lines) + "".join("\n\n" + textwrap.fill(p, 79) for p in paragraphs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = textwrap.fill("Send the table one command, wait for its reply and print it (JSON, one line). "
                                       "For technicians, scripts and a card room's own systems.", 79)
    parser.epilog = _epilog()
    parser.add_argument("--config", metavar="FILE", help="the table's configuration (TOML): the broker, its TLS, the "
                                                         "topic prefix and the table id from it")
    parser.add_argument("--table", metavar="ID", help="the table id (default: from --config; without --config, a "
                                                      "table on the broker at --host and --port)")
    parser.add_argument("--host", help="broker host (overrides [mqtt] host)")
    parser.add_argument("--port", type=int, help="broker port (overrides [mqtt] port)")
    parser.add_argument("--role", choices=ROLES, default="floor",
                        help="send as this role of the card room (default floor)")
    parser.add_argument("--username", help="log in to the broker as this user (overrides [mqtt] username); the "
                                           "command goes out under this name")
    parser.add_argument("--password-file", metavar="FILE",
                        help="read the password from the first line of FILE (otherwise $RFID_TABLE_PASSWORD, or the "
                             "configuration's [mqtt] password)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"give up after this many seconds without a reply (default {DEFAULT_TIMEOUT_S:g}; "
                             "exit 69)")
    parser.add_argument("name", metavar="NAME", help="the command, e.g. confirm (the list below)")
    parser.add_argument("fields", nargs="*", metavar="key=value", help="the command's fields")


def _settings(args: argparse.Namespace, err) -> tuple[MqttSettings, str] | int:
    if args.config:
        try:
            config = load_config(args.config)
        except ConfigError as exc:
            print(f"{PROG}: bad configuration ({len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''}):",
                  file=err)
            for problem in exc.problems:
                print("  " + problem.render(exc.path), file=err)
            return EX_CONFIG
        settings, table_id = config.mqtt, args.table or config.table_id
    elif args.table:
        settings, table_id = MqttSettings(), args.table
    else:
        print(f"{PROG}: give --config FILE (the table's configuration) or --table ID", file=err)
        return EX_USAGE
    changes = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = dataclasses.replace(settings, **changes)
    try:
        return with_login(settings, args.username, args.password_file), table_id
    except LoginError as exc:
        print(f"{PROG}: {exc}", file=err)
        return EX_USAGE


def run(args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> int:
    """``rfid-table command`` with its parsed arguments: the exit status."""
    try:
        body = build_command(args.name, args.fields, args.role)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=err)
        return EX_USAGE
    if args.timeout <= 0:
        print(f"{PROG}: --timeout must be more than 0 seconds, not {args.timeout:g}", file=err)
        return EX_USAGE
    found = _settings(args, err)
    if isinstance(found, int):
        return found
    settings, table_id = found
    outcome = send_command(settings, table_id, args.role, body, args.timeout)
    if outcome.reply is not None:
        print(json.dumps(outcome.reply), file=out)  # ASCII: nothing from the network drives the terminal
    if outcome.status == REFUSED:
        reply = outcome.reply
        # what the network said, fit for a terminal
        print(f"{PROG}: {args.name} refused: {without_controls(str(reply.get('field')))}: "
              f"{without_controls(str(reply.get('error')))}", file=err)
    elif outcome.message:
        print(f"{PROG}: {outcome.message}", file=err)
    return outcome.status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG)
    add_arguments(parser)
    return run(parser.parse_args(argv))


# ---- the lines a viewer prints ------------------------------------------------------------------------------

def invocation(args: argparse.Namespace) -> list[str]:
    """The start of an ``rfid-table command`` line that reaches the table as a viewer (``watch``) was told to:
    its --config, --table, --host, --port, --username and --password-file, never a password."""
    argv = ["rfid-table", "command"]
    for option in ("config", "table", "host", "port", "username", "password_file"):
        value = getattr(args, option, None)
        if value is not None:
            argv += [f"--{option.replace('_', '-')}", str(value)]
    return argv


def command_line(start: Sequence[str], name: str, **fields: Any) -> str:
    """A line to copy and run: ``start`` (see :func:`invocation`), the command and its fields. Fields the command
    requires and that are not given end the line as ``key=``, for the reader to type the value."""
    required = SCHEMA["$defs"][name]["required"] if name in SCHEMA["$defs"] else []
    missing = [f"{key}=" for key in required if key not in ("id", "command") and key not in fields]
    return shlex.join([*start, name, *(f"{key}={value}" for key, value in fields.items()), *missing])


if __name__ == "__main__":
    sys.exit(main())
