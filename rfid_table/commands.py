"""Commands to the table over MQTT: parsed and validated before anything is touched.

A command arrives on ``<prefix>/<table>/commands/<role>/<user>`` (the broker's ACL lets a user write only
under its own role and name, so the topic says who sent it) as a JSON object::

    {"id": "c-17", "command": "select_deck", "deck": "B"}

and is answered on ``<prefix>/<table>/replies/<role>/<user>`` with ``{"id": ..., "ok": true}`` or
``{"id": ..., "ok": false, "field": ..., "error": ...}``. A malformed or unauthorised command changes nothing.

Which commands exist, who may send them and their fields: :data:`COMMANDS` (and ``schemas/command.schema.json``,
which says the same). Whether the table's state allows one is the controller's answer
(``TableController.handle_command``).
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_PAYLOAD = 4096
ROLES = ("floor", "dealer")
DECLARATIONS = ("bet", "call", "raise", "all_in")
MAX_CHIPS = 1_000_000_000
MAX_NOTE = 200  # characters of a free-text note
MAX_SEQ = 10**15  # an irregularity is named by the seq of its event
CARD = re.compile(r"^[2-9TJQKA][shdc]$")
MAX_NAME = 32  # characters of a player's display name (a broadcast overlay's name plate)
# letters and digits of any script (and _), single spaces between words, and . - ' & ( ): what the schema says
NAME = re.compile(r"^[\w.'&()-]+( [\w.'&()-]+)*$")
PLAYER_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")

_NOTE = (str, False, f"a note of 1 to {MAX_NOTE} characters")
_IRREGULARITY = (int, True, "the seq of the event waiting for the floor (an irregular_card or a needs_floor ruling)")

# command → (roles allowed, {field: (type, required, description)})
COMMANDS: dict[str, tuple[tuple[str, ...], dict[str, tuple[type, bool, str]]]] = {
    "ping": (ROLES, {}),
    "select_deck": (("floor",), {"deck": (str, True, "a registered deck id")}),
    "declare": (ROLES, {"seat": (int, True, "a seat number"),
                        "declaration": (str, True, f"one of {', '.join(DECLARATIONS)}"),
                        "amount": (int, False, f"chips from 1 to {MAX_CHIPS:,}")}),
    # The deal and its irregularities (controller.table, docs/events.md).
    "misdeal": (ROLES, {"note": _NOTE}),
    "exposed_card": (ROLES, {"seat": (int, False, "the seat whose card the dealer exposed (without: a card found "
                                                  "face up in the deck)")}),
    "confirm": (("floor",), {"irregularity": _IRREGULARITY, "note": _NOTE}),
    "override": (("floor",), {"irregularity": _IRREGULARITY, "note": _NOTE}),
    "floor_pick": (("floor",), {"irregularity": _IRREGULARITY,
                                "card": (str, True, "the card picked as the burn card, like 'As' or 'Td'")}),
    "set_button": (ROLES, {"seat": (int, True, "a seat number")}),
    "seats": (ROLES, {"seats": (list, True, "the seats dealt in: a list of 2 or more different seat numbers")}),
    # The chips (controller.chip_betting): the floor's count of each player's stack.
    "set_stacks": (("floor",), {"stacks": (dict, True, 'seat number → chips, like {"3": 1500}')}),
    # The dealer console (new_hand and floor_call are published; the others are not available yet).
    "new_hand": (ROLES, {}),
    "undo": (ROLES, {}),
    "floor_call": (ROLES, {"seat": (int, False, "a seat number"), "note": _NOTE}),
    "start_clock": (ROLES, {"seat": (int, False, "a seat number")}),
    "stop_clock": (ROLES, {"seat": (int, False, "a seat number")}),
    "time_bank": (ROLES, {"seat": (int, True, "a seat number")}),
    # Who sits where: the names a broadcast shows and the hand histories keep.
    "seat_player": (("floor",), {"seat": (int, True, "a seat number"),
                                 "name": (str, True, f"a display name of 1 to {MAX_NAME} characters: letters, "
                                                     "digits, single spaces and . - ' & ( )"),
                                 "player_id": (str, False, "the card room's id of the player: 1 to 64 of A-Z a-z "
                                                           "0-9 . _ : -")}),
    "clear_seat": (("floor",), {"seat": (int, True, "a seat number")}),
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
    if "note" in args and not 1 <= len(args["note"]) <= MAX_NOTE:
        raise CommandError("note", f"expected {_NOTE[2]}", command_id)
    if "irregularity" in args and not 1 <= args["irregularity"] <= MAX_SEQ:
        raise CommandError("irregularity", f"expected {_IRREGULARITY[2]} (an integer from 1)", command_id)
    if "card" in args and not CARD.match(args["card"]):
        raise CommandError("card", "expected a card like 'As' or 'Td': a rank of 23456789TJQKA, then a suit of shdc",
                           command_id)
    if "name" in args:
        problem = name_problem(args["name"])
        if problem:
            raise CommandError("name", f"{problem} (expected {fields['name'][2]})", command_id)
    if "player_id" in args and not PLAYER_ID.match(args["player_id"]):
        raise CommandError("player_id", f"expected {fields['player_id'][2]}, got {json.dumps(args['player_id'])[:40]}",
                           command_id)
    if "seats" in args:
        listed = args["seats"]
        if not all(type(s) is int for s in listed) or not 2 <= len(listed) <= seats or len(set(listed)) != len(listed):
            raise CommandError("seats", f"expected 2 to {seats} different seat numbers, got {json.dumps(listed)[:40]}",
                               command_id)
        wrong = [s for s in listed if not 1 <= s <= seats]
        if wrong:
            raise CommandError("seats", f"no seat {wrong[0]}: the table has seats 1 to {seats}", command_id)
    if "stacks" in args:
        stacks = args["stacks"]
        if not stacks:
            raise CommandError("stacks", "expected at least one seat", command_id)
        for key, value in stacks.items():
            if not key.isdigit() or not 1 <= int(key) <= seats:
                raise CommandError("stacks", f"no seat {key!r}: the table has seats 1 to {seats}", command_id)
            if type(value) is not int or not 0 <= value <= MAX_CHIPS:
                raise CommandError("stacks", f"seat {key}: expected chips from 0 to {MAX_CHIPS:,}, got "
                                   f"{json.dumps(value)[:40]}", command_id)
    return Command(command_id, role, user, name, args)


def name_problem(name: str) -> str | None:
    """What is wrong with a player's display name, or None: it goes on screen as it is, so no control characters,
    no markup, no leading, trailing or double spaces."""
    if not 1 <= len(name) <= MAX_NAME:
        return f"{len(name)} characters"
    if not NAME.fullmatch(name):
        bad = next((ch for ch in name if not NAME.fullmatch(ch) and ch != " "), None)
        return f"the character {bad!r} is not allowed" if bad else "leading, trailing or double spaces"
    return None
