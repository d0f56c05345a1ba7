"""Commands to the table over MQTT: parsed and validated before anything is touched.

A command arrives on ``<prefix>/<table>/commands/<role>/<user>`` (the broker's ACL lets a user write only
under its own role and name, so the topic says who sent it) as a JSON object::

    {"id": "c-17", "command": "select_deck", "deck": "B"}

and is answered on ``<prefix>/<table>/replies/<role>/<user>`` with ``{"id": ..., "ok": true}`` or
``{"id": ..., "ok": false, "field": ..., "error": ...}``. A malformed or unauthorised command changes nothing.
"""

import json
from dataclasses import dataclass, field
from typing import Any

MAX_PAYLOAD = 4096
ROLES = ("floor", "dealer")
DECLARATIONS = ("bet", "call", "raise", "all_in")
MAX_CHIPS = 1_000_000_000

# command → (roles allowed, {field: (type, required, description)})
COMMANDS: dict[str, tuple[tuple[str, ...], dict[str, tuple[type, bool, str]]]] = {
    "ping": (ROLES, {}),
    "select_deck": (("floor",), {"deck": (str, True, "a registered deck id")}),
    "declare": (ROLES, {"seat": (int, True, "a seat number"),
                        "declaration": (str, True, f"one of {', '.join(DECLARATIONS)}"),
                        "amount": (int, False, f"chips from 1 to {MAX_CHIPS:,}")}),
}


@dataclass(frozen=True)
class Command:
    id: str
    role: str
    user: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def as_input(self) -> dict[str, Any]:
        """What the journal keeps and the controller is fed."""
        return {"id": self.id, "role": self.role, "user": self.user, "command": self.name, **self.args}


class CommandError(ValueError):
    def __init__(self, field: str, message: str, command_id: str | None = None):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.command_id = command_id


def sender(topic: str, base: str) -> tuple[str, str] | None:
    """(role, user) from a command topic, or None when it is not one."""
    parts = topic[len(base) + 1:].split("/") if topic.startswith(base + "/") else []
    if len(parts) >= 3 and parts[0] == "commands":
        return parts[1], parts[2]
    return None


def parse_command(topic: str, payload: bytes, base: str, seats: int, decks: tuple[str, ...]) -> Command:
    """The validated command, or :class:`CommandError` naming the field that is wrong."""
    who = sender(topic, base)
    if who is None:
        raise CommandError("topic", f"expected {base}/commands/<role>/<user>")
    role, user = who
    if len(payload) > MAX_PAYLOAD:
        raise CommandError("payload", f"{len(payload)} bytes, expected at most {MAX_PAYLOAD}")
    try:
        body = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError("payload", f"not a JSON object ({exc})") from None
    if not isinstance(body, dict):
        raise CommandError("payload", "expected a JSON object")
    command_id = body.get("id")
    if not isinstance(command_id, str) or not 1 <= len(command_id) <= 64:
        raise CommandError("id", "expected a string of 1 to 64 characters (it is echoed in the reply)")
    name = body.get("command")
    if name not in COMMANDS:
        raise CommandError("command", f"expected one of {', '.join(COMMANDS)}", command_id)
    roles, fields = COMMANDS[name]
    if role not in roles:
        raise CommandError("role", f"{role!r} may not send {name} (allowed: {', '.join(roles)})", command_id)
    args: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("id", "command"):
            continue
        if key not in fields:
            raise CommandError(key, f"unknown field for {name} (expected: {', '.join(fields) or 'none'})", command_id)
        kind, _required, what = fields[key]
        if type(value) is not kind:  # bool is not an int here
            raise CommandError(key, f"expected {what}, got {json.dumps(value)[:40]}", command_id)
        args[key] = value
    for key, (_kind, required, what) in fields.items():
        if required and key not in args:
            raise CommandError(key, f"missing (expected {what})", command_id)
    if "seat" in args and not 1 <= args["seat"] <= seats:
        raise CommandError("seat", f"no seat {args['seat']}: the table has seats 1 to {seats}", command_id)
    if "declaration" in args and args["declaration"] not in DECLARATIONS:
        raise CommandError("declaration", f"expected one of {', '.join(DECLARATIONS)}", command_id)
    if "amount" in args and not 1 <= args["amount"] <= MAX_CHIPS:
        raise CommandError("amount", f"expected chips from 1 to {MAX_CHIPS:,}", command_id)
    if "deck" in args and args["deck"] not in decks:
        raise CommandError("deck", f"no deck {args['deck']!r} (decks: {', '.join(decks)})", command_id)
    return Command(command_id, role, user, name, args)
