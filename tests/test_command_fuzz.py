"""A structure-aware fuzzer for commands: hypothesis strategies built from the published command schema, and
mutations of the commands they make (hostile values and keys, deep nesting, bytes cut, flipped or not UTF-8),
through the real parser and the real controller. Nothing may raise but a refusal, and every refusal names a
field.

The strategies are read from ``schemas/command.schema.json`` itself (its ``$ref``, ``enum``, ``const``, integer
bounds, string lengths and patterns, arrays and ``patternProperties``), so a command added to the schema is
fuzzed without a line here.
"""

import json
import sys
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FUZZ_EXAMPLES, ROOT
from controller.game import GameController
from rfid_table.service.commands import COMMANDS, CommandError, parse_command
from rfid_table.config.table import load_config

BASE = "rfid-table/main-1"
SCHEMA = json.loads((ROOT / "schemas" / "command.schema.json").read_text())
SEATS = 10
DECKS = ("A", "B")
# The fields a refusal may name besides a command's own: see reply.schema.json.
ENVELOPE_FIELDS = {"payload", "id", "command", "role", "topic"}
# the thorough profile's examples when it is loaded, else FUZZ_EXAMPLES (tests/conftest.py)
FUZZ = settings(max_examples=max(FUZZ_EXAMPLES, settings.default.max_examples), deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        target = SCHEMA
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def from_schema(node: dict) -> st.SearchStrategy:
    """Instances of a (sub)schema of the command schema: the keywords it uses, nothing more."""
    node = _resolve(node)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "integer":
        low, high = node.get("minimum", -(2**63)), node.get("maximum", 2**63)
        # mostly the small numbers a table has (seats, seqs), sometimes anywhere in range
        return st.one_of(st.integers(low, min(high, low + 12)), st.integers(low, high))
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"].removesuffix("$") + r"\Z", fullmatch=True)
        return st.text(min_size=node.get("minLength", 0), max_size=node.get("maxLength", 80))
    if kind == "array":
        return st.lists(from_schema(node["items"]), min_size=node.get("minItems", 0),
                        max_size=node.get("minItems", 0) + 6, unique=node.get("uniqueItems", False))
    if kind == "object":
        if "patternProperties" in node:
            ((pattern, value),) = node["patternProperties"].items()
            keys = st.from_regex(pattern.removesuffix("$") + r"\Z", fullmatch=True)
            return st.dictionaries(keys, from_schema(value), min_size=node.get("minProperties", 0), max_size=6)
        required = set(node.get("required", ()))
        props = node.get("properties", {})
        return st.fixed_dictionaries({k: from_schema(v) for k, v in props.items() if k in required},
                                     optional={k: from_schema(v) for k, v in props.items() if k not in required})
    raise AssertionError(f"the fuzzer does not know this schema node: {node}")


valid_commands = st.one_of([from_schema(SCHEMA["$defs"][name]) for name in SCHEMA["properties"]["command"]["enum"]])

HOSTILE_VALUES = [
    None, True, False, 0, -1, 3.0, 2.5, 1e400, -1e400, float("nan"), 10**30, -(10**30), 10**4000, "", "3", "²", "٣",
    "3\n", "x" * 5000, "\ud800", [], {}, [[]], {"3": 1}, {"²": 100}, {"3\n": 100}, {"0": 1}, {"99": 1},
    {"3": 1e400}, [3.0, 4], [1, 1], [1, True],
]
HOSTILE_KEYS = ["²", "³", "①", "٣", "3\n", "x\nERROR journal corrupt", "", "\ud800", "id ", "COMMAND", "x" * 300]
DEEP = b"[" * 1500 + b"]" * 1500


@st.composite
def mutated(draw) -> bytes:
    """A valid command, then one to three of: a field's value made hostile, a hostile key added or swapped in,
    a required field dropped, nesting buried 1,500 deep, and the bytes cut, flipped or made invalid UTF-8."""
    body = draw(valid_commands)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["value", "key", "drop", "nest", "stacks"]))
        keys = list(body)
        if how == "value" and keys:
            body[draw(st.sampled_from(keys))] = draw(st.sampled_from(HOSTILE_VALUES))
        elif how == "key":
            body[draw(st.sampled_from(HOSTILE_KEYS))] = draw(st.sampled_from(HOSTILE_VALUES + [1, "As"]))
        elif how == "drop" and keys:
            body.pop(draw(st.sampled_from(keys)))
        elif how == "stacks":  # a count of the stacks with one seat made hostile
            stacks = draw(from_schema(SCHEMA["$defs"]["set_stacks"]["properties"]["stacks"]))
            stacks[draw(st.sampled_from(HOSTILE_KEYS + ["1", "10", "11"]))] = draw(st.sampled_from(HOSTILE_VALUES
                                                                                                  + [100]))
            body = {"id": body.get("id", "s"), "command": "set_stacks", "stacks": stacks}
            break  # the seat's key is the point: no later round spoils the command around it
        elif how == "nest":
            body[draw(st.sampled_from(keys or ["x"]))] = "NEST"
    raw = json.dumps(body, ensure_ascii=draw(st.booleans()))
    raw = raw.replace('"NEST"', DEEP.decode())
    data = raw.encode("utf-8", "surrogatepass")
    edit = draw(st.sampled_from(["none", "none", "cut", "flip", "latin1", "duplicate"]))
    if edit == "cut" and data:
        data = data[:draw(st.integers(0, len(data) - 1))]
    elif edit == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    elif edit == "latin1":
        data = data.replace(b"}", b',"note":"caf\xe9"}', 1)
    elif edit == "duplicate":
        data = data.replace(b"{", b'{"command":"floor_call",', 1)
    return data


# The two kinds of table: cards only, and cards and chips (where set_stacks and declare reach the chips).
TABLES = [load_config(ROOT / "config" / name) for name in ("table-10.toml", "table-chips.toml")]


@contextmanager
def daemon_stack():
    """Python's own recursion limit, as the daemon runs with it: hypothesis raises the limit while it runs a
    test, which would hide a parser that recurses once per level of nesting."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth + 50, 1000))  # the daemon calls the parser some 20 frames deep
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def through_parser_and_controller(payload: bytes, role: str) -> None:
    """What the daemon does with a command from the network, less the broker: no exception but a refusal may come
    out, a refusal names a field, and an accepted command is applied by a controller without raising."""
    topic = f"{BASE}/commands/{role}/fuzz"
    try:
        with daemon_stack():
            command = parse_command(topic, payload, BASE, SEATS, DECKS)
    except CommandError as refusal:
        assert refusal.field and refusal.message
        try:
            keys = set(json.loads(payload)) if payload.strip().startswith(b"{") else set()
        except (ValueError, RecursionError):
            keys = set()
        assert refusal.field in ENVELOPE_FIELDS | {"retain", "rate"} | keys | {
            f for _roles, fields in COMMANDS.values() for f in fields}, refusal.field
        return
    for config in TABLES:
        controller = GameController(config.table_setup(), config.betting_setup(), config.audit_hands)
        events, refusal = controller.handle_command(command.as_input(), 1000.0)
        assert refusal is None or (isinstance(refusal, str) and refusal), refusal
        json.dumps([e.payload(True) for e in events], allow_nan=False)  # what is published is JSON


@pytest.mark.slow
@FUZZ
@given(body=valid_commands, role=st.sampled_from(["floor", "dealer"]))
def test_commands_made_from_the_schema_are_accepted_or_refused_by_field(body, role):
    through_parser_and_controller(json.dumps(body).encode(), role)


@pytest.mark.slow
@FUZZ
@given(payload=mutated(), role=st.sampled_from(["floor", "floor", "floor", "dealer"]))
def test_mutated_commands_are_refused_by_field_and_never_raise(payload, role):
    through_parser_and_controller(payload, role)


@pytest.mark.slow
def test_the_strategies_make_every_command_of_the_schema():
    seen = set()

    @settings(max_examples=400, database=None, suppress_health_check=list(HealthCheck))
    @given(valid_commands)
    def collect(body):
        seen.add(body["command"])

    collect()
    assert seen == set(SCHEMA["properties"]["command"]["enum"])
