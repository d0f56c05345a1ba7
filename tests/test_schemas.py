"""The payload schemas of the MQTT contract (schemas/*.schema.json, see docs/schemas.md) against real messages.

Simulated sessions (in-process and over the firmware emulator with RF noise and link faults, one with a journal
and the delayed feed) and hand-made situations (every irregular card, unknown tags, a reader unplugged, rebooted,
reflashed to another protocol, antennas faulting, commands from the floor and the dealer) are published through the
real Mosquitto of the tests; every message a subscriber of ``rfid-table/#`` receives for them is validated against
the schema of its topic, and the test asserts that every branch of every schema was met by at least one real
message, so it proves coverage, not just the absence of errors. Then the schemas are shown to refuse what the
contract forbids (a hole card on the public branch, a secure event without its secret, an unknown event type, an
unannounced field), and the command schema to agree with the table's own validation.
"""

import copy
import dataclasses
import json
import re
import time
from collections import defaultdict
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from conftest import ROOT, TABLE_10, Recorder

TABLE_CHIPS = ROOT / "config" / "table-chips.toml"
from controller.floor import TABLE
from controller.levels import Level
from firmware_bridge.messages import PROTOCOL_MAJOR, FaultCode
from rfid_table.config.table import MqttSettings, load_config
from rfid_table.service.daemon import StopFlag
from rfid_table.service.journal import Journal
from rfid_table.mqtt import make_client
from rfid_table.service.publisher import MqttPublisher
from rfid_table.devtools.simulate import SimOptions, SimulatedTable

SCHEMA_DIR = ROOT / "schemas"
BASE_ID = "https://rfid-table.invalid/schemas/"
PREFIX = "rfid-table"

# Topic below <prefix>/<table>/ → (schema file, payload is JSON, retained by the table). Plain-text payloads
# (status) are validated as the decoded string. A topic missing here is a topic without a contract: the test
# fails on it.
TOPICS = {
    "status": ("status.schema.json", False, True),
    "public/snapshot": ("snapshot.public.schema.json", True, True),
    "secure/snapshot": ("snapshot.secure.schema.json", True, True),
    "public/events": ("event.public.schema.json", True, False),
    "secure/events": ("event.secure.schema.json", True, False),
    # The delayed feed for broadcast overlays: the secure payloads, once the broadcast delay is over.
    "delayed/events": ("event.secure.schema.json", True, False),
    "delayed/hand": ("hand.delayed.schema.json", True, True),  # retained on tables with the delayed feed only
    "live/events": ("event.live.schema.json", True, False),  # on tables with a reveal policy: every table here
    "public/diag": ("diag.schema.json", True, True),
    "commands/<role>/<user>": ("command.schema.json", True, False),  # sent by clients, not by the table
    "replies/<role>/<user>": ("reply.schema.json", True, False),
}
# what the secure branch may add to a public event
SECRET_FIELDS = {"card", "cards", "hole_cards", "hands", "phh_complete", "ohh_complete", "pokerstars_complete", "dead",
                 "exact", "runouts", "stderr", "no_low"}  # no_low: whether any live hand can make a low tells of them
ORIGINAL_CODES = {  # the codes of cards out of place, played by hand in irregular_situations()
    "card_outside_hand", "extra_hole_card", "card_to_folded_seat", "hole_card_after_board", "hole_card_moved",
    "played_card_to_seat", "hole_card_on_board", "hole_card_burned", "board_card_burned", "burn_card_on_board",
    "extra_board_card", "unseen_card_mucked", "card_in_chip_zone",
}
IRREGULAR_CODES = {  # every code of docs/mqtt.md (test_the_contract_and_the_schemas_name_the_same_types)
    "card_outside_hand", "extra_hole_card", "card_to_folded_seat", "hole_card_after_board", "hole_card_moved",
    "played_card_to_seat", "hole_card_on_board", "hole_card_burned", "board_card_burned", "burn_card_on_board",
    "extra_board_card", "unseen_card_mucked", "card_in_chip_zone",
    "first_cards_exposed", "cards_exposed", "hole_card_exposed", "wrong_card_count", "card_out_of_sequence",
    "first_card_wrong_seat", "button_misplaced", "card_to_ineligible_seat", "player_dealt_out", "boxed_card",
    "premature_board_card", "four_card_flop", "flop_without_burn", "missing_burn", "foreign_card", "duplicate_card",
    "card_missing", "stud_first_cards_up", "stud_up_card_down", "stud_down_card_up", "stud_card_wrong_seat",
    "stud_up_cards_mixed", "deck_short", "board_card_in_stud",
}
EVENT_TYPES = {"hand_started", "card_dealt", "bring_in", "first_to_act", "burn", "board_card", "fold", "hand_ended", "irregular_card",
               "unknown_tag", "reader_link", "antenna", "deck_selected", "declaration", "journal",
               "stacks_set", "betting_started", "action", "action_undone", "bet_ruling", "pots", "chip_count",
               "foreign_chip", "chips_returned",
               "showdown", "hand_history", "misdeal", "floor_ruling", "irregularity_resolved", "board_corrected",
               "button_set", "seats_set", "new_hand", "floor_call", "deck_audit", "hand_audit",
               "device_breach", "device_seen", "absent_at_deal", "seat_left", "seat_returned", "seat_presence",
               "clock_due", "clock_started", "clock_tick", "time_bank_used", "clock_stopped", "clock_expired", "equity",
               "player_seated", "seat_cleared", "level_set", "bomb_pot_agreed", "run_it_agreed", "game_set"}
UNKNOWN_UID = "E004015000FF0001"  # a tag of no registered deck


# ---- the schemas ------------------------------------------------------------------------------------------

def load_schemas() -> dict[str, dict]:
    return {path.name: json.loads(path.read_text()) for path in sorted(SCHEMA_DIR.glob("*.schema.json"))}


SCHEMAS = load_schemas()
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values())


def validator(target: str) -> Draft202012Validator:
    """A validator for a schema file, or for ``file#/$defs/name`` (references resolve through the registry)."""
    if "#" not in target:
        return Draft202012Validator(SCHEMAS[target], registry=REGISTRY)
    return Draft202012Validator({"$ref": BASE_ID + target}, registry=REGISTRY)


VALIDATORS = {name: validator(name) for name in SCHEMAS}


def leaves(name: str) -> list[str]:
    """The branches of a schema a message can end in: every closed object schema (``additionalProperties: false``)
    that its ``type`` / ``code`` / ``state`` / ``command`` / ``ok`` discrimination (if/then) leads to, as
    ``file#/$defs/name``; a schema without discrimination is its own single branch."""
    schema = SCHEMAS[name]
    found: list[str] = []

    def walk(node: dict, pointer: str | None) -> None:
        if "additionalProperties" in node or not ("allOf" in node or "then" in node):
            found.append(name if pointer is None else f"{name}#/$defs/{pointer}")
            return
        for branch in [*node.get("allOf", []), node]:
            for key in ("then", "else"):
                if key in branch:
                    target = branch[key]["$ref"].removeprefix("#/$defs/")
                    walk(schema["$defs"][target], target)

    walk(schema, None)
    return list(dict.fromkeys(found))


LEAF_VALIDATORS = {leaf: validator(leaf) for name in SCHEMAS for leaf in leaves(name)}


def problems(name: str, instance) -> list[str]:
    """Why ``instance`` does not match schema file ``name`` (the schemas discriminate with if/then, so the errors
    are those of the branch of the message's own type)."""
    return [f"{e.json_path}: {e.message}" for e in VALIDATORS[name].iter_errors(instance)]


def kind_of(topic: str) -> str:
    """The TOPICS key of a topic below <prefix>/<table>/ (``replies/floor/ann`` → ``replies/<role>/<user>``)."""
    parts = topic.split("/")
    if parts[0] in ("commands", "replies") and len(parts) == 3:
        return f"{parts[0]}/<role>/<user>"
    return topic


def test_every_payload_kind_has_its_schema():
    assert set(SCHEMAS) == {"event.public.schema.json", "event.secure.schema.json", "snapshot.public.schema.json",
                            "snapshot.secure.schema.json", "diag.schema.json", "status.schema.json",
                            "command.schema.json", "reply.schema.json", "hand.delayed.schema.json",
                            "event.live.schema.json"}
    assert {file for file, _json, _retained in TOPICS.values()} == set(SCHEMAS)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_schema_is_a_valid_draft_2020_12_schema_with_its_own_id(name):
    schema = SCHEMAS[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == BASE_ID + name  # a neutral base: no real domain is ever fetched
    for leaf in leaves(name):  # every branch resolves
        LEAF_VALIDATORS[leaf].is_valid({})


SHARED_DEFINITIONS = {"card", "seq", "t", "hand", "hand_or_null", "epoch", "seat", "seat_zone", "chip_zone", "zone",
                      "uid", "reader", "antenna_number", "deck", "by", "declaration_kind", "amount", "command_id"}


def test_shared_definitions_are_the_same_in_every_schema():
    seen: dict[str, tuple[str, dict]] = {}
    for name, schema in SCHEMAS.items():
        for key, definition in schema.get("$defs", {}).items():
            if key not in SHARED_DEFINITIONS:
                continue
            if key in seen:
                first, earlier = seen[key]
                assert definition == earlier, f"$defs/{key} differs between {first} and {name}"
            seen.setdefault(key, (name, definition))
    assert seen["card"][1]["pattern"] == "^[2-9TJQKA][shdc]$"


def test_the_secure_event_schema_is_the_public_one_plus_the_secrets():
    public, secure = SCHEMAS["event.public.schema.json"], SCHEMAS["event.secure.schema.json"]
    assert public["$defs"].keys() == secure["$defs"].keys()
    assert [leaf.split("#")[1] for leaf in leaves("event.public.schema.json")] == \
        [leaf.split("#")[1] for leaf in leaves("event.secure.schema.json")]
    for leaf in leaves("event.public.schema.json"):
        key = leaf.rsplit("/", 1)[1]
        mine, theirs = public["$defs"][key], secure["$defs"][key]
        # Every branch is closed: a new field is a change of the contract.
        assert mine["additionalProperties"] is False and theirs["additionalProperties"] is False, key
        added = theirs["properties"].keys() - mine["properties"].keys()
        assert added <= SECRET_FIELDS, f"{key}: the secure branch adds {added}"
        assert mine["properties"].keys() <= theirs["properties"].keys(), key
        # Nothing public can carry a hole card: the secret fields are absent from the public branch, except a
        # card that lies face up for everyone (board cards, and the irregular cards found face up).
        leaked = mine["properties"].keys() & SECRET_FIELDS
        assert leaked <= {"card"}, key
        if leaked:
            assert key in {"board_card", "irregular_card.card_outside_hand.board", "irregular_card.board_card_burned",
                           "irregular_card.burn_card_on_board", "irregular_card.extra_board_card",
                           # stud: an up card lies face up at its seat
                           "card_dealt", "bring_in", "irregular_card.stud_first_cards_up",
                           "irregular_card.stud_down_card_up", "irregular_card.stud_up_cards_mixed",
                           "irregular_card.board_card_in_stud"}, key


# ---- playing real sessions through the broker -------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Message:
    table: str
    topic: str  # below <prefix>/<table>/
    payload: bytes
    retained: bool
    qos: int
    expiry: int | None  # MQTT 5 Message Expiry Interval, seconds

    @property
    def kind(self) -> str:
        return kind_of(self.topic)

    def body(self):
        return json.loads(self.payload) if TOPICS[self.kind][1] else self.payload.decode()


class FullRecorder(Recorder):
    """The tests' recorder, keeping the QoS and the message expiry interval of each message too."""

    def _on_message(self, client, userdata, message) -> None:
        expiry = getattr(message.properties, "MessageExpiryInterval", None) if message.properties else None
        with self.lock:
            self.messages.append((message.topic, message.payload, bool(message.retain), message.qos, expiry))


def table_config(settings: MqttSettings, table_id: str, extra_zones: dict | None = None, base: Path = TABLE_CHIPS,
                 **changes):
    config = load_config(base)  # default: ten seats, cards and chips
    changes = {"broadcast_delay_s": 0.0, "journal_path": None, "broadcast_reveal": "all_in", **changes}
    return dataclasses.replace(config, table_id=table_id, mqtt=settings, zones={**config.zones, **(extra_zones or {})},
                               **changes)


def play(config, hands: int, seed: int, journal_path: Path | None = None, **options) -> None:
    """Play ``hands`` hands at full speed, as ``rfid-table sim`` does (with a journal: as the daemon does)."""
    journal = None
    if journal_path is not None:
        journal = Journal(journal_path, feeds=("public", "secure", "delayed"))
        assert journal.open().ok
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch=journal.epoch if journal else f"schemas-{seed}")
    table = SimulatedTable(config, SimOptions(hands=hands, seed=seed, speed=0, pace_s=0.5, **options), publisher,
                           journal)
    if journal is not None:
        table.pipeline.restore(time.time())
    assert publisher.start(), "the publisher could not reach the test broker"
    try:
        table.run(StopFlag(), publisher)
    finally:
        publisher.stop()
        if journal is not None:
            journal.close()


class HandDriven:
    """A SimulatedTable stepped by hand on the table clock, publishing to the broker: the test places the cards."""

    def __init__(self, config, link: str, **options):
        self.publisher = MqttPublisher(config.mqtt, config.table_id, epoch="schemas-by-hand")
        self.table = SimulatedTable(config, SimOptions(link=link, hands=None, seed=1, **options), self.publisher)
        self.uid = {deck: {card: uid for uid, card in cards.items()} for deck, cards in config.decks.items()}
        self.t = time.time()
        self.events: list = []
        self._rack: dict[int, list[str]] = defaultdict(list)  # the chip set's tags by denomination, for chips()
        for uid, value in sorted(config.chips.chips.items() if config.chips else ()):
            self._rack[value].append(uid)
        assert self.publisher.start(), "the publisher could not reach the test broker"

    def run(self, seconds: float) -> list:
        produced = []
        end = self.t + seconds
        while self.t < end:
            produced += self.table.step(self.t)
            self.publisher.service(0)
            self.t += self.table.cycle_s
        self.events += produced
        return produced

    def run_until(self, condition, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            self.run(0.05)
            self.publisher.service(0.002)  # commands from the broker arrive in the publisher's client

    def place(self, card_or_uid: str, zone: str, settle_s: float = 0.3, deck: str = "A") -> list:
        self.table.field.place(self.uid[deck].get(card_or_uid, card_or_uid), zone)
        return self.run(settle_s)

    def chips(self, zone: str, *values: int, settle_s: float = 0.7) -> list:
        """Chips of the table's chip set, taken from the rack by denomination, placed on ``zone``."""
        for value in values:
            self.table.field.place(self._rack[value].pop(), zone)
        return self.run(settle_s)

    def close(self) -> None:
        self.table.close()
        self.publisher.stop()


def chip_situations(config) -> None:
    """What the chip layer says beyond plain actions, from chips placed by hand: the floor's stack count, a foreign
    chip, a short big blind, short antes, a call undone and read again, a string bet, a pot that does not hold what
    the bets made it, and the wagers going back after a misdeal."""
    config = dataclasses.replace(config, game=dataclasses.replace(config.game, ante=10))
    table = HandDriven(config, link="direct")
    chips = table.chips

    def types(produced) -> list[str]:
        return [e.type if e.type != "chip_count" else f"chip_count.{e.public['code']}" for e in produced]

    try:
        table.table.pipeline.submit({"command": "set_stacks", "stacks": {"1": 1000, "2": 1000, "3": 1000},
                                     "role": "floor", "user": "schemas"})
        assert "stacks_set" in types(table.run(0.2))
        assert "foreign_chip" in types(table.place("E0040150DF000001", "seat2.bets"))  # in no chip set
        chips("seat1.bets", 25, 25)  # the small blind
        chips("seat2.bets", 25, 25, 25)  # a big blind 25 short
        chips("pot", 5, 5, 5, 5, 5)  # antes: 25 of 30
        for card, seat in (("As", 1), ("Kd", 2), ("7h", 3), ("Ac", 1), ("Kc", 2), ("7c", 3)):
            table.place(card, f"seat{seat}.cards", 0.2)
        chips("seat3.bets", 100)  # seat 3 calls
        table.table.pipeline.submit({"command": "undo", "role": "dealer", "user": "schemas"})
        assert types(table.run(1.0)) == ["action_undone", "action"]  # taken back, and read again as it lies
        assert "bet_ruling" in types(chips("seat3.bets", 25))  # and pushes again: a string bet (CA Actions 2)
        chips("seat1.bets", 25, 25)  # the small blind calls
        for zone in ("seat1.bets", "seat2.bets", "seat3.bets"):  # the big blind checks; the dealer collects
            for uid in table.table.field.tags_in(zone):
                table.table.field.place(uid, "pot")
        table.run(3.0)  # the pot is counted once it has settled
        assert {"betting_started", "chip_count.forced_bet", "chip_count.antes", "pots", "chip_count.pot"} <= set(
            types(table.events)), types(table.events)
        table.table.field.clear()
        table.run(3.0)
        chips("seat2.bets", 25, 25)  # the next hand: blinds, a deal, a misdeal, and the wagers go back
        chips("seat3.bets", 100)
        for card, seat in (("Qs", 2), ("Jd", 3), ("9h", 1), ("Qc", 2), ("Jc", 3), ("9c", 1)):
            table.place(card, f"seat{seat}.cards", 0.2)
        table.table.pipeline.submit({"command": "misdeal", "role": "dealer", "user": "schemas"})
        assert "misdeal" in types(table.run(0.2))
        for zone in ("seat2.bets", "seat3.bets", "pot"):
            for uid in table.table.field.tags_in(zone):
                table.table.field.remove(uid)
        assert "chips_returned" in types(table.run(2.0))
        table.table.field.clear()
        table.run(3.0)
    finally:
        table.close()


def run_it_situations(config) -> None:
    """A hand run twice (CA Actions 8): seats 1 and 2 all-in before the flop, seat 3 folds; the floor records the
    agreement, the dealer deals two boards on the board antenna, and the pot is divided between them."""
    table = HandDriven(config, link="direct")
    chips = table.chips

    def command(name: str, **fields) -> list[str]:
        table.table.pipeline.submit({"id": name, "command": name, "role": "floor", "user": "schemas", **fields})
        return [e.type for e in table.run(0.2)]

    try:
        assert "stacks_set" in command("set_stacks", stacks={"1": 200, "2": 200, "3": 200})
        chips("seat1.bets", 25, 25)
        chips("seat2.bets", 100)
        for card, seat in (("As", 1), ("Kd", 2), ("7h", 3), ("Ac", 1), ("Kc", 2), ("7c", 3)):
            table.place(card, f"seat{seat}.cards", 0.2)
        for card in ("7h", "7c"):
            table.place(card, "muck", 0.2)
        assert "declaration" in command("declare", seat=1, declaration="all_in")
        chips("seat1.bets", 100, 25, 25)
        chips("seat2.bets", 100)
        assert "run_it_agreed" in command("run_it", times=2)
        for zone, card in (("burn", "2d"), ("board", "3d"), ("board", "4d"), ("board", "5d"), ("burn", "6d"),
                           ("board", "8d"), ("burn", "9d"), ("board", "Td"), ("burn", "2h"), ("board", "3h"),
                           ("board", "4h"), ("board", "5h"), ("burn", "6h"), ("board", "8h"), ("burn", "9h"),
                           ("board", "Th")):
            table.place(card, zone, 0.2)
        table.table.field.clear()
        produced = table.run(3.0)
        [showdown] = [e for e in produced if e.type == "showdown"]
        assert showdown.public["runs"] == 2 and len(showdown.public["boards"]) == 2
    finally:
        table.close()


def conduct_situations(config) -> None:
    """The seat sensors and the action clock (docs/conduct.md), on the simulated GPIO: players sitting down, a
    device between hands, a seat empty at the end of the deal, a phone at a live seat (the floor overrides the ruling),
    a player leaving a live seat
    and coming back, a device after a fold; the clock started by the floor, a time bank, the clock stopped by an
    action, due, and run out."""
    table = HandDriven(config, link="direct", gpio=True)
    sensors = table.table.gpio.backend
    controller = table.table.pipeline.controller
    rack: dict[int, list[str]] = defaultdict(list)
    for uid, value in sorted(config.chips.chips.items()):
        rack[value].append(uid)

    def sensor(name: str, active: bool, settle_s: float = 0.8) -> list[str]:
        sensors.set_active(name, active, table.t)
        return [e.type for e in table.run(settle_s)]

    def command(name: str, **fields) -> list[str]:
        table.table.pipeline.submit({"id": name, "command": name, "role": "floor", "user": "schemas", **fields})
        return [e.type for e in table.run(0.2)]

    try:
        assert [e.type for e in table.run(0.8)] == ["seat_presence"] * 10  # the simulated players sit down
        assert sensor("seat4.device", True) == ["device_seen"]  # no hand at seat 4
        assert sensor("seat4.device", False) == ["device_seen"]
        assert "stacks_set" in command("set_stacks", stacks={"1": 1000, "2": 1000, "3": 1000})
        for zone, value in (("seat1.bets", 25), ("seat1.bets", 25), ("seat2.bets", 100)):  # the blinds
            table.table.field.place(rack[value].pop(), zone)
        table.run(0.7)
        assert sensor("seat3.presence", False) == ["seat_presence"]  # seat 3 leaves before the deal
        for card, seat in (("As", 1), ("Kd", 2), ("7h", 3), ("Ac", 1), ("Kc", 2), ("7c", 3)):
            table.place(card, f"seat{seat}.cards", 0.2)
        assert "absent_at_deal" in [e.type for e in table.run(1.0)]
        assert sensor("seat3.presence", True) == ["seat_presence"]
        assert sensor("seat1.device", True) == ["device_breach"]  # a phone at a live seat
        assert sensor("seat1.device", False) == ["device_breach"]
        breach = max(controller.floor.of(TABLE))  # the breach waits for the floor, which lets play go on
        assert controller.floor.of(TABLE)[breach].code == "device_breach"
        assert command("override", irregularity=breach) == ["floor_ruling"]
        assert sensor("seat2.presence", False) == ["seat_left"]
        assert sensor("seat2.presence", True) == ["seat_returned"]
        to_act = controller.clock.seat
        assert to_act == 3, controller.snapshot(secure=False)["betting"]
        assert command("start_clock") == ["clock_started"]
        assert command("time_bank", seat=to_act) == ["time_bank_used"]
        for card in ("7h", "7c"):  # seat 3 folds: the clock stops
            table.table.field.place(table.uid["A"][card], "muck")
        assert "clock_stopped" in [e.type for e in table.run(1.0)]
        assert sensor("seat3.device", True) == ["device_seen"]  # after the fold: no rule broken
        assert "clock_due" in [e.type for e in table.run(30.0)]
        assert command("start_clock") == ["clock_started"]
        produced = [e.type for e in table.run(75.0)]
        assert "clock_tick" in produced and "clock_expired" in produced, produced
        table.table.field.clear()
        table.run(3.0)
    finally:
        table.close()


def journal_situations(config, path: Path) -> None:
    """The journal near its retention limit and back: a minute of play journaled with no broker (nothing is
    acknowledged), then the same journal restored by a table that reaches the broker."""
    journal = Journal(path, retention_events=40)  # warns above 36 undelivered events
    assert journal.open().ok
    offline = SimulatedTable(config, SimOptions(hands=None, seed=21, speed=0, pace_s=0.5, link="direct"), None,
                             journal)
    t = time.time()
    try:
        for _ in range(int(60 / offline.cycle_s)):
            offline.advance(t)
            offline.step(t)
            t += offline.cycle_s
    finally:
        offline.close()
        journal.close()
    journal = Journal(path, retention_events=40)
    assert journal.open().ok
    publisher = MqttPublisher(config.mqtt, config.table_id, epoch=journal.epoch)
    table = SimulatedTable(config, SimOptions(hands=None, seed=22, speed=0, pace_s=0.5, link="direct"), publisher,
                           journal)
    try:
        table.pipeline.restore(t)
        assert publisher.start(), "the publisher could not reach the test broker"
        deadline = time.monotonic() + 30
        states: list[str] = []
        while (states[-1:] != ["ok"] or table.pipeline.backlog) and time.monotonic() < deadline:
            states += [e.public["state"] for e in table.step(t) if e.type == "journal"]
            publisher.service(0.002)
            t += table.cycle_s
        assert states == ["ok"], states  # near_limit was journaled offline and goes out from the journal
        assert not table.pipeline.backlog, "the journal's backlog was not delivered in 30 s"
        for _ in range(40):
            publisher.service(0.01)
    finally:
        publisher.stop()
        table.close()
        journal.close()


def toured_situations(config, tour) -> None:
    """A tour of events played on the real controller (tests/test_dealing.py's every irregularity of the deal,
    every floor and console event; tests/test_stud_table.py's stud deal), numbered afresh and published by the real
    publisher of a table running by hand, then the table's snapshots."""
    events = [dataclasses.replace(e, seq=n) for n, e in enumerate(tour, start=1)]
    table = HandDriven(config, link="direct")
    try:
        table.run(0.3)
        for start in range(0, len(events), 50):
            table.publisher.publish_events(events[start:start + 50])
            table.run(0.1)
        controller = table.table.pipeline.controller
        table.publisher.publish_snapshots(controller.snapshot(secure=False), controller.snapshot(secure=True))
        table.run(1.5)
    finally:
        table.close()


def irregular_situations(config) -> None:
    """Every irregular card of docs/mqtt.md and unknown tags, placed by hand (in-process readers)."""
    table = HandDriven(config, link="direct")
    try:
        def expect(produced, code):
            assert code in [e.public.get("code") for e in produced], (code, [(e.type, e.public) for e in produced])

        # No hand yet: cards on the board (face up: public), the burn and the muck zone, and a foreign tag.
        expect(table.place("Ah", "board"), "card_outside_hand")
        expect(table.place("Ac", "burn"), "card_outside_hand")
        expect(table.place("Ad", "muck"), "card_outside_hand")
        assert [e.type for e in table.place(UNKNOWN_UID, "muck")] == ["unknown_tag"]
        table.table.field.clear()
        table.run(1.0)

        for card, seat in (("As", 1), ("7h", 2), ("2c", 3), ("Kd", 1), ("7c", 2), ("3c", 3)):
            table.place(card, f"seat{seat}.cards", 0.2)
        expect(table.place("Qs", "seat1.cards"), "extra_hole_card")
        expect(table.place("7h", "seat3.cards"), "hole_card_moved")
        expect(table.place("Jc", "pot"), "card_in_chip_zone")
        expect(table.place("Jd", "seat1.bets"), "card_in_chip_zone")
        assert [e.type for e in table.place("2c", "muck")] == ["fold"]
        expect(table.place("9d", "seat3.cards"), "card_to_folded_seat")
        expect(table.place("8d", "muck"), "unseen_card_mucked")
        assert [e.type for e in table.place("4d", "burn")] == ["burn"]
        for card in ("5s", "6s", "7s"):
            assert [e.type for e in table.place(card, "board")] == ["board_card"]
        expect(table.place("4d", "board"), "burn_card_on_board")  # and it is the turn
        expect(table.place("Td", "seat2.cards"), "hole_card_after_board")
        expect(table.place("5s", "seat1.cards"), "played_card_to_seat")
        expect(table.place("Kd", "board"), "hole_card_on_board")
        expect(table.place("As", "burn"), "hole_card_burned")
        expect(table.place("6s", "burn"), "board_card_burned")
        assert [e.type for e in table.place("8s", "board")] == ["board_card"]  # the river
        expect(table.place("9s", "board"), "extra_board_card")
        assert [e.type for e in table.place(UNKNOWN_UID, "seat4.cards")] == ["unknown_tag"]
        table.table.field.clear()
        assert "hand_ended" in [e.type for e in table.run(2.5)]
        codes = {e.public["code"] for e in table.events if e.type == "irregular_card"}
        assert codes >= ORIGINAL_CODES  # the deal's own codes: test_dealing.every_kind_of_event()
    finally:
        table.close()


def device_situations(config) -> None:
    """Reader and antenna events over the firmware emulator on a pty: faults, a reboot, an unplug, a reader
    reflashed to another protocol version, during a hand."""
    table = HandDriven(config, link="pty")
    try:
        def states(produced, type_):
            return [(e.public["state"], e.public.get("fault")) for e in produced if e.type == type_]

        assert states(table.run(1.0), "reader_link") == [("up", None)]
        for card, seat in (("As", 1), ("7h", 2), ("Kd", 1), ("7c", 2)):
            table.place(card, f"seat{seat}.cards", 0.2)
        emulator = table.table.emulators[0]
        emulator.antenna_fault(4, FaultCode.OPEN)
        assert states(table.run(0.5), "antenna") == [("fault", "open")]
        emulator.antenna_fault(4, FaultCode.CLEARED)
        assert states(table.run(0.5), "antenna") == [("ok", "cleared")]
        emulator.antenna_fault(6, 9)  # a fault code newer than this host: published by number
        assert states(table.run(0.5), "antenna") == [("fault", 9)]
        emulator.antenna_fault(6, FaultCode.CLEARED)
        table.run(0.5)
        emulator.reboot()  # published as reset then up: see test_a_reader_reboot_is_published_as_reader_link_reset
        assert states(table.run(2.0), "reader_link")[-1:] == [("up", None)]
        emulator.unplug()
        assert states(table.run(2.5), "reader_link") == [("down", None)]
        emulator.protocol_version = (PROTOCOL_MAJOR + 1, 0)  # reflashed to a protocol this host does not speak
        emulator.replug()
        assert ("incompatible", None) in states(table.run(2.0), "reader_link")
        emulator.protocol_version = (PROTOCOL_MAJOR, 0)
        assert ("up", None) in states(table.run(10.0), "reader_link")
        table.table.field.clear()
        table.run(2.5)
    finally:
        table.close()


# Commands sent in commands_and_replies(): (role, payload, valid by the command schema, accepted by the table).
# Valid but refused: what the table's state does not allow, and what no schema can know (its seats, its decks).
COMMANDS_BEFORE_THE_HAND = [
    ("floor", {"id": "c1", "command": "ping"}, True, True),
    ("dealer", {"id": "c2", "command": "ping"}, True, True),
    ("floor", {"id": "c3", "command": "select_deck", "deck": "B"}, True, True),
    ("dealer", {"id": "c4", "command": "select_deck", "deck": "A"}, True, False),  # floor only
    ("floor", {"id": "c5", "command": "declare", "seat": 1, "declaration": "call"}, True, False),  # no hand runs
    ("floor", {"id": "c6", "command": "declare", "seat": 11, "declaration": "call"}, True, False),  # 10 seats
    ("floor", {"id": "c7", "command": "select_deck", "deck": "Z"}, True, False),  # no such deck
    ("floor", b"not json", False, False),
    ("floor", {"command": "ping"}, False, False),
    ("floor", {"id": "x" * 65, "command": "ping"}, False, False),
    ("floor", {"id": "c8", "command": "reboot"}, False, False),
    ("floor", {"id": "c9", "command": "select_deck"}, False, False),
    ("floor", {"id": "c10", "command": "set_level", "level": 2}, True, True),  # a tournament's schedule of three
    ("dealer", {"id": "c11", "command": "set_level"}, True, False),  # floor only
    ("floor", {"id": "c12", "command": "set_level", "level": 4}, True, False),  # not in the schedule
    ("floor", {"id": "c13", "command": "set_level", "level": 0}, False, False),
    ("dealer", {"id": "c14", "command": "bomb_pot", "amount": 4}, True, True),
    ("dealer", {"id": "c15", "command": "bomb_pot", "amount": 4, "kind": "both"}, False, False),
    ("floor", {"id": "c10", "command": "declare", "seat": "3", "declaration": "raise"}, False, False),
    ("floor", {"id": "c11", "command": "declare", "seat": 3, "declaration": "raise", "amount": -5}, False, False),
    ("floor", {"id": "c12", "command": "declare", "seat": 3, "declaration": "shove"}, False, False),
    ("floor", {"id": "c13", "command": "ping", "please": True}, False, False),
    ("floor", {"id": "c14", "command": "seat_player", "seat": 1, "name": "Anna Müller", "player_id": "p-17"}, True, True),
    ("floor", {"id": "c15", "command": "seat_player", "seat": 2, "name": "Bob"}, True, True),
    ("floor", {"id": "c16", "command": "clear_seat", "seat": 2}, True, True),
    ("floor", {"id": "c17", "command": "clear_seat", "seat": 2}, True, False),  # nobody sits there now
    ("dealer", {"id": "c18", "command": "seat_player", "seat": 2, "name": "Bob"}, True, False),  # floor only
    ("floor", {"id": "c19", "command": "seat_player", "seat": 2, "name": "<b>Bob</b>"}, False, False),
    ("floor", {"id": "c20", "command": "seat_player", "seat": 2, "name": "B" * 33}, False, False),
]
COMMANDS_DURING_THE_HAND = [
    ("dealer", {"id": "h1", "command": "declare", "seat": 1, "declaration": "raise", "amount": 300}, True, True),
    ("floor", {"id": "h2", "command": "declare", "seat": 2, "declaration": "all_in"}, True, True),
    ("floor", {"id": "h3", "command": "select_deck", "deck": "A"}, True, False),  # between hands only
    ("floor", {"id": "h4", "command": "set_level"}, True, True),  # level 3, from the next hand
    ("floor", {"id": "h5", "command": "bomb_pot", "amount": 4, "kind": "flip"}, True, False),  # before the deal only
    ("floor", {"id": "h6", "command": "run_it", "times": 4}, False, False),  # twice or three times
    ("floor", {"id": "h7", "command": "set_game", "game": "plo4"}, True, True),  # a mixed game's, from the next hand
    ("floor", {"id": "h8", "command": "set_game", "game": "razz"}, True, False),  # not in the rotation
    ("dealer", {"id": "h9", "command": "set_game", "game": "nlhe"}, True, False),  # floor only
]
COMMANDS_AFTER_THE_HAND = [("floor", {"id": "a1", "command": "select_deck", "deck": "A"}, True, True)]


def commands_and_replies(config, recorder) -> None:
    """Commands from a floor tablet and a dealer console, before, during and after a hand dealt from deck B."""
    table = HandDriven(config, link="direct")
    console = make_client(MqttSettings(host=config.mqtt.host, port=config.mqtt.port),
                          f"schemas-console-{time.time_ns()}")
    console.connect(config.mqtt.host, config.mqtt.port)
    console.loop_start()
    base = f"{PREFIX}/{config.table_id}"
    sent = 0

    def send(commands) -> None:
        nonlocal sent
        for role, payload, _valid, _accepted in commands:
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            user = "ann" if role == "floor" else "bob"
            console.publish(f"{base}/commands/{role}/{user}", raw, qos=1).wait_for_publish(5)
        sent += len(commands)
        table.run_until(lambda: sum(1 for t, *_ in recorder.messages if t.startswith(f"{base}/replies/")) >= sent)

    try:
        table.run(0.5)
        send(COMMANDS_BEFORE_THE_HAND)
        for card, seat in (("As", 1), ("7h", 2), ("Kd", 1), ("7c", 2)):
            table.place(card, f"seat{seat}.cards", 0.2, deck="B")
        send(COMMANDS_DURING_THE_HAND)
        table.table.field.clear()
        assert "hand_ended" in [e.type for e in table.run(2.5)]
        send(COMMANDS_AFTER_THE_HAND)
        assert [e.type for e in table.events].count("deck_selected") == 2
        assert [e.type for e in table.events].count("declaration") == 2
    finally:
        console.disconnect()
        console.loop_stop()
        table.close()


@pytest.fixture(scope="module")
def session(broker, tmp_path_factory):
    """Every message received on ``rfid-table/#`` for the tables played here, and the retained ones a late
    subscriber gets."""
    from test_dealing import every_kind_of_event  # noqa: PLC0415
    from test_stud_table import every_stud_event  # noqa: PLC0415

    settings = MqttSettings(host=broker.host, port=broker.port)
    recorder = FullRecorder(settings, f"{PREFIX}/#")
    tables = []
    try:
        for seed in (3, 7, 11):  # one of them audits its deck after every hand: a hand never shows all 52
            config = table_config(settings, f"schemas-direct-{seed}", audit_hands=1 if seed == 3 else 50)
            tables.append(config.table_id)
            play(config, hands=5, seed=seed, link="direct")
        # As the daemon runs: with a journal, and the delayed feed released a second after each hand.
        config = table_config(settings, "schemas-delayed", broadcast_delay_s=1.0, broadcast_release="hand")
        tables.append(config.table_id)
        play(config, hands=4, seed=13, link="direct", journal_path=tmp_path_factory.mktemp("journal") / "j.db")
        config = table_config(settings, "schemas-pty-noise")
        tables.append(config.table_id)
        play(config, hands=3, seed=5, link="pty", noise=0.05, faults_per_minute=120)
        config = table_config(settings, "schemas-irregular", {"pot": ("main", 14), "seat1.bets": ("main", 15)},
                              base=TABLE_10)
        tables.append(config.table_id)
        irregular_situations(config)
        config = table_config(settings, "schemas-chips")
        tables.append(config.table_id)
        chip_situations(config)
        config = table_config(settings, "schemas-dealing")
        tables.append(config.table_id)
        toured_situations(config, every_kind_of_event())
        config = table_config(settings, "schemas-stud")
        tables.append(config.table_id)
        toured_situations(config, every_stud_event())
        config = table_config(settings, "schemas-stud-chips", base=ROOT / "config" / "table-stud-chips.toml")
        tables.append(config.table_id)
        play(config, hands=2, seed=7, link="direct")  # stud read from the chips: its actions, streets and stakes
        config = table_config(settings, "schemas-run-twice")
        tables.append(config.table_id)
        run_it_situations(config)
        config = table_config(settings, "schemas-conduct")
        tables.append(config.table_id)
        conduct_situations(config)
        config = table_config(settings, "schemas-journal")
        tables.append(config.table_id)
        journal_situations(config, tmp_path_factory.mktemp("journal-limit") / "j.db")
        config = table_config(settings, "schemas-devices", base=TABLE_10)
        tables.append(config.table_id)
        device_situations(config)
        config = table_config(settings, "schemas-commands", base=TABLE_10)
        config = dataclasses.replace(config, game=dataclasses.replace(config.game, levels=(
            Level(1, 2), Level(2, 4), Level(3, 6, big_blind_ante=6, minutes=20)),  # a tournament table
            rotation=("nlhe", "plo4"), hands_per_game=8))  # of a mixed game
        tables.append(config.table_id)
        commands_and_replies(config, recorder)

        def all_offline(messages):
            return {t.split("/")[1] for t, p, *_ in messages if t.endswith("/status") and p == b"offline"} \
                >= set(tables)

        assert recorder.wait_for(all_offline, 20), "not every table said offline"
        recorder.sync()  # MQTT orders messages per topic only: the last ones of other topics may follow
        live = [Message(topic.split("/")[1], topic.split("/", 2)[2], *rest) for topic, *rest in recorder.messages
                if topic.split("/")[1] in tables]
    finally:
        recorder.close()

    late = FullRecorder(settings, f"{PREFIX}/+/#")
    try:
        # one per topic (delayed/hand on the table with the delayed feed only)
        expected = len(tables) * sum(1 for _f, _j, retained in TOPICS.values() if retained) - (len(tables) - 1)
        late.wait_for(lambda m: len([x for x in m if x[0].split("/")[1] in tables]) >= expected, 10)
        late.sync()  # every retained message the subscription brought, more than expected too
        retained = [Message(topic.split("/")[1], topic.split("/", 2)[2], *rest)
                    for topic, *rest in late.messages if topic.split("/")[1] in tables]
    finally:
        late.close()
    return {"tables": tables, "live": live, "retained": retained}


# ---- every real message against its schema ----------------------------------------------------------------

def published(session) -> list[Message]:
    """What the tables published (the commands are the clients' messages: see the command tests)."""
    return [m for m in session["live"] if not m.topic.startswith("commands/")]


def test_every_real_message_matches_the_schema_of_its_topic(session):
    assert len(published(session)) > 1000
    failures = []
    for message in published(session):
        assert message.kind in TOPICS, f"{message.table}/{message.topic}: a topic without a schema"
        found = problems(TOPICS[message.kind][0], message.body())
        if found:
            failures.append(f"{message.table}/{message.topic}: {message.payload.decode()}\n    " + "\n    ".join(found))
    assert not failures, f"{len(failures)} message(s) break the contract:\n" + "\n".join(failures[:20])


def test_every_branch_of_every_schema_was_met_by_a_real_message(session):
    """Proves coverage: each event type, each irregular code, each reader_link and antenna variant, each reply
    and every other payload kind was published for real and matched exactly one branch of its schema."""
    met: dict[str, int] = defaultdict(int)
    for message in published(session):
        name = TOPICS[message.kind][0]
        body = message.body()
        candidates = leaves(name)
        # the branches of its own type (the other types' branches require theirs); live/events has one, its event
        # public/events' own
        if name.startswith("event.") and name != "event.live.schema.json":
            candidates = [leaf for leaf in candidates if re.search(rf"/{body['type']}(\.|$)", leaf)]
        matched = [leaf for leaf in candidates if LEAF_VALIDATORS[leaf].is_valid(body)]
        assert len(matched) == 1, f"{message.topic}: {body} matches {matched}"
        met[matched[0]] += 1
    missing = [leaf for name in SCHEMAS if name != "command.schema.json" for leaf in leaves(name) if not met[leaf]]
    assert not missing, f"never met by a real message: {missing}"

    def bodies(kind):
        return [m.body() for m in published(session) if m.kind == kind]

    events = bodies("secure/events")
    assert {e["type"] for e in events} == EVENT_TYPES
    # what waits for the floor, of every kind, in the snapshots, and what lapsed with its hand said so
    waiting = {(item["type"], item["lapses"]) for s in bodies("secure/snapshot") for item in s["irregularities"]}
    assert {("absent_at_deal", "hand_end"), ("device_breach", "never")} <= waiting, waiting
    assert ("absent_at_deal", "hand_ended") in {(e["code"], e["resolution"]) for e in events
                                                if e["type"] == "irregularity_resolved"}
    assert {e["code"] for e in events if e["type"] == "irregular_card"} == IRREGULAR_CODES
    assert {e["state"] for e in events if e["type"] == "reader_link"} >= {"up", "down", "incompatible"}
    assert {str(e["fault"]) for e in events if e["type"] == "antenna"} == {"open", "cleared", "9"}
    assert {e["hand"] is None for e in events} == {True, False}  # events before the first hand too
    snapshots = bodies("public/snapshot")
    assert {s["phase"] for s in snapshots} == {"waiting", "preflop", "flop", "turn", "river", "third", "fourth", "fifth",
                                               "sixth", "seventh"}  # (the stud table with chips)
    assert {r["link"] for s in snapshots for r in s["readers"].values()} >= {"up", "down"}
    assert {s["deck"] for s in snapshots} == {"A", "B"}
    reports = bodies("public/diag")
    assert {r["link"] for report in reports for r in report["readers"].values()} >= {"simulated (in-process)", "up"}
    assert any("frames" in r for report in reports for r in report["readers"].values())
    assert set(bodies("status")) == {"online", "offline"}
    replies = bodies("replies/<role>/<user>")
    assert {(r["ok"], r.get("seq") is None, r["id"] is None) for r in replies} == {
        (True, True, False), (True, False, False), (False, True, False), (False, True, True)}
    assert {m.kind for m in session["live"]} == set(TOPICS)


def test_a_reader_reboot_is_published_as_reader_link_reset(session):
    events = [m.body() for m in session["live"] if m.topic == "secure/events" and m.table == "schemas-devices"]
    assert "reset" in [e["state"] for e in events if e["type"] == "reader_link"]


def test_the_public_branch_carries_the_same_events_minus_the_secrets(session):
    by_table: dict[str, dict[str, dict[int, dict]]] = defaultdict(lambda: {"public": {}, "secure": {}})
    for message in session["live"]:
        if message.topic in ("public/events", "secure/events"):
            body = message.body()
            by_table[message.table][message.topic.split("/")[0]][body["seq"]] = body
    assert set(by_table) == set(session["tables"])
    for table, branches in by_table.items():
        public, secure = branches["public"], branches["secure"]
        assert public.keys() == secure.keys() == set(range(1, len(secure) + 1)), table
        for seq, secure_body in secure.items():
            shared = {k: v for k, v in secure_body.items() if k in public[seq]}
            assert shared == public[seq], (table, seq)
            assert secure_body.keys() - public[seq].keys() <= SECRET_FIELDS, (table, secure_body)


def test_the_delayed_feed_carries_the_secure_events_unchanged(session):
    delayed = [m.body() for m in session["live"] if m.topic == "delayed/events"]
    secure = {m.body()["seq"]: m.body() for m in session["live"]
              if m.topic == "secure/events" and m.table == "schemas-delayed"}
    assert {m.table for m in session["live"] if m.topic == "delayed/events"} == {"schemas-delayed"}
    assert [e["seq"] for e in delayed] == list(range(1, len(delayed) + 1))
    assert "hand_ended" in [e["type"] for e in delayed] and any("card" in e for e in delayed)
    assert all(e == secure[e["seq"]] for e in delayed)
    # delayed/hand: the same payloads, each valid as a secure event, the newest hands as released so far
    hands = [m.body() for m in session["live"] if m.topic == "delayed/hand"]
    assert {m.table for m in session["live"] if m.topic == "delayed/hand"} == {"schemas-delayed"}
    assert len({h["hand"] for h in hands}) >= 3 and all(h["released"] is not None for h in hands)
    for hand in hands:
        assert [e["seq"] for e in hand["events"]] == list(range(hand["events"][0]["seq"], hand["seq"] + 1))
        assert all(e == secure[e["seq"]] for e in hand["events"])
        assert not [p for e in hand["events"] for p in problems("event.secure.schema.json", e)]
        starts = [e["hand"] for e in hand["events"] if e["type"] == "hand_started"]
        assert hand["hand"] == (starts[-1] if starts else None)  # null before the first hand
    assert hands[-1]["seq"] == delayed[-1]["seq"]


def test_retained_qos_and_expiry_are_as_the_contract_says(session):
    # QoS 1 on every topic the table publishes (a subscriber asking for QoS 1 gets QoS 1 only if the table
    # published with it).
    assert {m.qos for m in published(session)} == {1}
    # No message expires: a retained snapshot stays until the next replaces it, and events queued for a
    # persistent session wait as long as the session does.
    assert {m.expiry for m in published(session) + session["retained"]} == {None}
    # A late subscriber gets exactly the retained topics of each table, and no event.
    retained_topics = {topic for topic, (_file, _json, retained) in TOPICS.items() if retained}
    for table in session["tables"]:
        got = [m for m in session["retained"] if m.table == table]
        assert all(m.retained for m in got)
        expected = retained_topics if table == "schemas-delayed" else retained_topics - {"delayed/hand"}
        assert sorted(m.topic for m in got) == sorted(expected), table
        for message in got:
            assert not problems(TOPICS[message.kind][0], message.body())
        assert next(m.body() for m in got if m.topic == "status") == "offline"
        assert next(m.body() for m in got if m.topic == "public/snapshot")["phase"] == "waiting"


def test_the_command_schema_agrees_with_the_table(session):
    """A command the schema refuses, the table refuses too (with the field at fault); a command the schema accepts
    is accepted unless the table's state, seats or decks say otherwise — which no schema can know."""
    commands = [m for m in session["live"] if m.topic.startswith("commands/")]
    replies = [m.body() for m in session["live"] if m.topic.startswith("replies/")]
    sent = COMMANDS_BEFORE_THE_HAND + COMMANDS_DURING_THE_HAND + COMMANDS_AFTER_THE_HAND
    assert len(commands) == len(replies) == len(sent)
    for message, reply, (role, payload, valid, accepted) in zip(commands, replies, sent):
        assert message.topic.split("/")[1] == role
        body = None if isinstance(payload, bytes) else payload
        assert VALIDATORS["command.schema.json"].is_valid(body) is valid, payload
        assert reply["ok"] is accepted, (payload, reply)
        if not valid:
            assert reply["field"] != "command" or body.get("command") not in ("ping", "select_deck", "declare")
        if isinstance(body, dict) and isinstance(body.get("id"), str) and len(body["id"]) <= 64:
            assert reply["id"] == body["id"]


# ---- what the schemas refuse ------------------------------------------------------------------------------

def real(session, topic: str, type_: str | None = None, **match) -> dict:
    """A deep copy of the first real message on ``topic`` (of event ``type_``, with the given field values)."""
    for message in session["live"]:
        if message.topic != topic:
            continue
        body = message.body()
        if type_ is not None and body.get("type") != type_:
            continue
        if all(body.get(k) == v for k, v in match.items()):
            return copy.deepcopy(body)
    raise AssertionError(f"no real {topic} message {type_} {match}")


def with_(body: dict, **fields) -> dict:
    return {**body, **fields}


def without(body: dict, *keys) -> dict:
    return {k: v for k, v in body.items() if k not in keys}


REFUSED = {
    # A hole card, a burn card or a misplaced card's identity on the public branch.
    "public card_dealt with its card": ("event.public.schema.json",
                                        lambda s: with_(real(s, "public/events", "card_dealt"), card="As")),
    "public burn with its card": ("event.public.schema.json",
                                  lambda s: with_(real(s, "public/events", "burn"), card="7h")),
    "public fold with its cards": ("event.public.schema.json",
                                   lambda s: with_(real(s, "public/events", "fold"), cards=["9c", "3s"])),
    "public hand_ended with hole_cards": ("event.public.schema.json", lambda s: with_(
        real(s, "public/events", "hand_ended"), hole_cards={"4": ["8s", "6s"]})),
    "public extra_hole_card with its card": ("event.public.schema.json", lambda s: with_(
        real(s, "public/events", "irregular_card", code="extra_hole_card"), card="Jd")),
    "public hole_card_on_board with its card": ("event.public.schema.json", lambda s: with_(
        real(s, "public/events", "irregular_card", code="hole_card_on_board"), card="Kd")),
    "public card_outside_hand on the burn zone with its card": ("event.public.schema.json", lambda s: with_(
        real(s, "public/events", "irregular_card", code="card_outside_hand", zone="burn"), card="Ac")),
    "public snapshot with a seat's hole_cards": ("snapshot.public.schema.json", lambda s: (lambda snap: with_(
        snap, seats=[with_(seat, hole_cards=["As", "Kd"]) for seat in snap["seats"]]))(
            real(s, "public/snapshot", phase="preflop"))),
    "public snapshot with burn_cards": ("snapshot.public.schema.json",
                                        lambda s: with_(real(s, "public/snapshot"), burn_cards=["4d"])),
    "public event with a secure event's payload": ("event.public.schema.json",
                                                   lambda s: real(s, "secure/events", "card_dealt")),
    # A secure event without the secret it exists for.
    "secure card_dealt without its card": ("event.secure.schema.json",
                                           lambda s: without(real(s, "secure/events", "card_dealt"), "card")),
    "secure burn without its card": ("event.secure.schema.json",
                                     lambda s: without(real(s, "secure/events", "burn"), "card")),
    "secure fold without its cards": ("event.secure.schema.json",
                                      lambda s: without(real(s, "secure/events", "fold"), "cards")),
    "secure hand_ended without hole_cards": ("event.secure.schema.json",
                                             lambda s: without(real(s, "secure/events", "hand_ended"), "hole_cards")),
    "secure irregular_card without its card": ("event.secure.schema.json", lambda s: without(
        real(s, "secure/events", "irregular_card", code="hole_card_moved"), "card")),
    "secure snapshot seat without hole_cards": ("snapshot.secure.schema.json", lambda s: (lambda snap: with_(
        snap, seats=[without(seat, "hole_cards") for seat in snap["seats"]]))(real(s, "secure/snapshot"))),
    # A face-up card that the public branch must carry.
    "public extra_board_card without its card": ("event.public.schema.json", lambda s: without(
        real(s, "public/events", "irregular_card", code="extra_board_card"), "card")),
    # Unknown types, codes and fields are changes of the contract.
    "public unknown event type": ("event.public.schema.json",
                                  lambda s: with_(real(s, "public/events", "hand_started"), type="chips_moved")),
    "secure unknown event type": ("event.secure.schema.json",
                                  lambda s: with_(real(s, "secure/events", "hand_started"), type="chips_moved")),
    "secure unknown irregular code": ("event.secure.schema.json", lambda s: with_(
        real(s, "secure/events", "irregular_card", code="unseen_card_mucked"), code="card_face_up")),
    "secure event with an unannounced field": ("event.secure.schema.json",
                                               lambda s: with_(real(s, "secure/events", "board_card"), player="Ann")),
    "public event without epoch": ("event.public.schema.json",
                                   lambda s: without(real(s, "public/events", "board_card"), "epoch")),
    "public event without seq": ("event.public.schema.json",
                                 lambda s: without(real(s, "public/events", "hand_started"), "seq")),
    "reader_link up without its serial": ("event.public.schema.json", lambda s: without(
        real(s, "public/events", "reader_link", state="up"), "serial")),
    "antenna fault by an unknown name": ("event.public.schema.json", lambda s: with_(
        real(s, "public/events", "antenna", state="fault"), fault="melted")),
    # Malformed values.
    "a card written 10h": ("event.public.schema.json",
                           lambda s: with_(real(s, "public/events", "board_card"), card="10h")),
    "a card in lower case": ("event.public.schema.json",
                             lambda s: with_(real(s, "public/events", "board_card"), card="as")),
    "the turn called the flop": ("event.public.schema.json",
                                 lambda s: with_(real(s, "public/events", "board_card", position=4), street="flop")),
    "a seat 0": ("event.public.schema.json", lambda s: with_(real(s, "public/events", "card_dealt"), seat=0)),
    "a snapshot in an unknown phase": ("snapshot.public.schema.json",
                                       lambda s: with_(real(s, "public/snapshot"), phase="showdown")),
    "diag naming tag identities": ("diag.schema.json",
                                   lambda s: with_(real(s, "public/diag"), tags={"board": [UNKNOWN_UID]})),
    "status in capitals": ("status.schema.json", lambda s: "ONLINE"),
    "status as JSON": ("status.schema.json", lambda s: {"status": "online"}),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_the_schemas_refuse_what_the_contract_forbids(session, case):
    name, make = REFUSED[case]
    instance = make(session)
    assert not VALIDATORS[name].is_valid(instance), f"{name} accepted {instance}"


def test_a_face_up_irregular_card_is_public(session):
    for code in ("extra_board_card", "burn_card_on_board", "board_card_burned"):
        body = real(session, "public/events", "irregular_card", code=code)
        assert "card" in body and VALIDATORS["event.public.schema.json"].is_valid(body)
    body = real(session, "public/events", "irregular_card", code="card_outside_hand", zone="board")
    assert "card" in body and VALIDATORS["event.public.schema.json"].is_valid(body)


# ---- the examples of docs/mqtt.md -------------------------------------------------------------------------

def doc_examples() -> list:
    """Every JSON example of docs/mqtt.md: an event pair (secure first, then public), a single event (the same on
    both branches), a snapshot, a diagnostics report, commands and replies. Abbreviated examples (with "…") are
    left out."""
    text = (ROOT / "docs" / "mqtt.md").read_text()
    found = []
    for number, block in enumerate(re.findall(r"```json\n(.*?)```", text, re.S), 1):
        if "…" in block:
            continue
        try:
            bodies = [json.loads(block)]
        except json.JSONDecodeError:
            bodies = [json.loads(line) for line in block.splitlines() if line.strip()]
        for index, body in enumerate(bodies):
            if "type" in body:
                branches = [["secure", "public"][index]] if len(bodies) == 2 else ["secure", "public"]
                for branch in branches:
                    found.append(pytest.param(f"event.{branch}.schema.json", body, id=f"{branch} {body['type']}"))
            elif "event" in body:  # live/events: the public event, and the hands the reveal policy shows
                found.append(pytest.param("event.live.schema.json", body, id=f"live {body['event']['type']}"))
                found.append(pytest.param("event.public.schema.json", body["event"],
                                          id=f"live's public {body['event']['type']}"))
            elif "command" in body:
                found.append(pytest.param("command.schema.json", body, id=f"command {body['command']}"))
            elif "ok" in body:
                found.append(pytest.param("reply.schema.json", body, id=f"reply {body['id']}"))
            elif "zones" in body:
                found.append(pytest.param("diag.schema.json", body, id=f"diag #{number}"))
            elif "seats" in body:
                branch = "secure" if "burn_cards" in body else "public"
                found.append(pytest.param(f"snapshot.{branch}.schema.json", body, id=f"{branch} snapshot #{number}"))
            else:
                found.append(pytest.param(None, body, id=f"example #{number}"))
    return found


@pytest.mark.parametrize("name, body", doc_examples())
def test_the_examples_of_the_contract_match_the_schemas(name, body):
    assert name is not None, f"an example of docs/mqtt.md of no known kind: {body}"
    assert not problems(name, body)


def test_the_contract_and_the_schemas_name_the_same_types_and_codes():
    """docs/mqtt.md's tables of event types and irregular codes against the schemas: a type or a code added to one
    and not the other is caught here."""
    text = (ROOT / "docs" / "mqtt.md").read_text()

    def first_column(header: str) -> set[str]:
        table = text.split(header, 1)[1].split("\n\n", 1)[0]
        return set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))

    documented_types = first_column("| type | when | fields |")
    documented_codes = first_column("| code | situation |")
    for name in ("event.public.schema.json", "event.secure.schema.json"):
        schema = SCHEMAS[name]
        types = set(schema["properties"]["type"]["enum"])
        codes = set(schema["$defs"]["irregular_card"]["properties"]["code"]["enum"])
        assert codes == documented_codes == IRREGULAR_CODES
        assert types == EVENT_TYPES and documented_types <= types
        # Types documented outside the table (the command events) are still named in the contract.
        assert all(f"`{t}`" in text for t in types - documented_types), types - documented_types
